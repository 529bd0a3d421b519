// Matrix products through cuBLAS. Plexus tensors are row-major and cuBLAS is
// column-major: a row-major X is the column-major X^T, so C = op(A) op(B) is
// computed as C^T = op(B)^T op(A)^T with the operands swapped.
#include <cstdint>
#include <string>

#include "blas_library.hpp"
#include "cuda_check.hpp"
#include "op_args.hpp"

namespace pxcuda {

namespace {

void check_int_range(std::initializer_list<int64_t> dims, const char* what) {
    for (int64_t d : dims)
        if (d > INT32_MAX || d < 0) throw Unsupported(std::string(what) + ": a dimension exceeds cuBLAS's int range");
}

// C (contiguous, `elems` elements) = 0: an empty sum, which cuBLAS rejects.
void zero(const Launch& l, void* c, int64_t elems, int32_t dtype) {
    PX_CUDA(cudaMemsetAsync(c, 0, size_t(elems) * px_dtype_size(dtype), l.stream));
}

}  // namespace

void gemm_row_major(const Launch& l, int32_t dtype, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                    const void* a, int64_t lda, int64_t stride_a, const void* b, int64_t ldb, int64_t stride_b,
                    void* c, int64_t ldc, int64_t stride_c, int64_t batch, double beta, bool allow_tf32) {
    check_int_range({m, n, k, lda, ldb, ldc, batch}, "matrix product");
    if (m == 0 || n == 0 || batch == 0) return;
    const cublasOperation_t op_a = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N, op_b = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;
    const BlasApi& blas = blas_api();
    if (dtype == PX_FLOAT32) {
        const float alpha = 1.0f, beta_f = float(beta);
        PX_BLAS(blas.cublasGemmStridedBatchedEx(l.blas, op_b, op_a, int(n), int(m), int(k), &alpha, b, CUDA_R_32F,
                                                    int(ldb), stride_b, a, CUDA_R_32F, int(lda), stride_a, &beta_f, c,
                                                    CUDA_R_32F, int(ldc), stride_c, int(batch),
                                                    allow_tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F,
                                                    CUBLAS_GEMM_DEFAULT));
    } else if (dtype == PX_FLOAT64) {
        const double alpha = 1.0;
        PX_BLAS(blas.cublasGemmStridedBatchedEx(l.blas, op_b, op_a, int(n), int(m), int(k), &alpha, b, CUDA_R_64F,
                                                    int(ldb), stride_b, a, CUDA_R_64F, int(lda), stride_a, &beta, c,
                                                    CUDA_R_64F, int(ldc), stride_c, int(batch), CUBLAS_COMPUTE_64F,
                                                    CUBLAS_GEMM_DEFAULT));
    } else if (dtype == PX_FLOAT16 || dtype == PX_BFLOAT16) {
        // float32 compute: the products summed in float32 (on tensor cores), each result rounded once.
        const cudaDataType type = dtype == PX_FLOAT16 ? CUDA_R_16F : CUDA_R_16BF;
        const float alpha = 1.0f, beta_f = float(beta);
        PX_BLAS(blas.cublasGemmStridedBatchedEx(l.blas, op_b, op_a, int(n), int(m), int(k), &alpha, b, type, int(ldb),
                                                    stride_b, a, type, int(lda), stride_a, &beta_f, c, type, int(ldc),
                                                    stride_c, int(batch), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    } else {
        throw Unsupported("matrix products need a floating dtype");
    }
}

// MATMUL: 3-D (batch, rows, cols) operands; the last axis is contiguous and
// an input's batch stride may be 0 (one matrix for the whole batch).
void run_matmul(const OpArgs& t, const Launch& l) {
    const Operand &a = t.in[0], &b = t.in[1], &c = t.out;
    const int64_t batch = c.shape[0], m = c.shape[1], n = c.shape[2], k = a.shape[2];
    if (k == 0) return zero(l, c.data, c.numel(), c.dtype);
    const bool tf32 = t.has_attrs && t.attrs.matmul.struct_size >= sizeof(px_matmul_attrs) && t.attrs.matmul.allow_tf32;
    gemm_row_major(l, a.dtype, false, false, m, n, k, a.data, a.strides[1], a.strides[0], b.data, b.strides[1],
                   b.strides[0], c.data, c.strides[1], c.strides[0], batch, 0.0, tf32);
}

// GEMM: 2-D contiguous operands as stored, each optionally transposed.
void run_gemm(const OpArgs& t, const Launch& l) {
    const Operand &a = t.in[0], &b = t.in[1], &c = t.out;
    const px_gemm_attrs& g = t.attrs.gemm;
    const int64_t m = c.shape[0], n = c.shape[1], k = g.trans_a ? a.shape[0] : a.shape[1];
    if (k == 0) return zero(l, c.data, c.numel(), c.dtype);
    gemm_row_major(l, a.dtype, g.trans_a != 0, g.trans_b != 0, m, n, k, a.data, a.shape[1], 0, b.data, b.shape[1], 0,
                   c.data, n, 0, 1, 0.0, g.allow_tf32 != 0);
}

Kernels blas_kernels() {
    // cuBLAS has no integer gemm with these semantics.
    return {{PX_OP_MATMUL, run_matmul, kFloatDtypes}, {PX_OP_GEMM, run_gemm, kFloatDtypes}};
}

}  // namespace pxcuda
