// cuBLAS for the CUDA emulator: the four functions the CUDA plugin calls
// (blas.cpp), and cublasGemmEx for plexus-bench's baseline; products in
// float32 (TF32 too), float64, and float16 and bfloat16 with float32 compute. A product is
// checked when it is called, as cuBLAS checks its arguments, and computed
// through OpenBLAS (column-major, as cuBLAS defines it) when its stream gets
// to it (emu_streams.hpp).
#include <cblas.h>
#include <cublas_v2.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "emu_driver_scope.hpp"
#include "plexus/half.h"
#include "emu_runtime.hpp"
#include "emu_streams.hpp"

struct cublasContext {
    cudaStream_t stream = nullptr;
};

namespace {

// `n` floats rounded to TF32 (the nearest value with 10 mantissa bits), in `keep`.
const float* rounded_to_tf32(const float* x, size_t n, std::vector<float>& keep) {
    keep.resize(n);
    for (size_t i = 0; i < n; ++i) {
        uint32_t bits;
        std::memcpy(&bits, &x[i], sizeof bits);
        if ((bits & 0x7f800000u) != 0x7f800000u) bits = (bits + 0xfffu + ((bits >> 13) & 1u)) & ~0x1fffu;
        std::memcpy(&keep[i], &bits, sizeof bits);
    }
    return keep.data();
}

// The element types a product takes: A, B and C all of one.
enum class Elem { f32, f64, f16, bf16 };

// `n` 16-bit values (float16 or bfloat16) as float32, exactly.
std::vector<float> widened(const void* p, size_t n, Elem e) {
    std::vector<float> out(n);
    const uint16_t* h = static_cast<const uint16_t*>(p);
    for (size_t i = 0; i < n; ++i) out[i] = e == Elem::f16 ? px_float16_to_float(h[i]) : px_bfloat16_to_float(h[i]);
    return out;
}

struct Product {
    CBLAS_TRANSPOSE ta, tb;
    int m, n, k, lda, ldb, ldc, batch;
    size_t a_elems, b_elems, c_elems;  // what one batch's A, B and C span
    long long stride_a, stride_b, stride_c;
    const void *a, *b;
    void* c;
    double alpha, beta;  // read when called, as cuBLAS reads host scalars
    Elem elem;
    bool tf32;

    // float16 and bfloat16 with float32 compute, as tensor cores do it: the
    // exact products summed in float32, each result rounded once (half.h).
    void run_half(int i) const {
        const size_t e = 2;
        const std::vector<float> wa = widened(static_cast<const char*>(a) + i * stride_a * e, a_elems, elem);
        const std::vector<float> wb = widened(static_cast<const char*>(b) + i * stride_b * e, b_elems, elem);
        uint16_t* ci = reinterpret_cast<uint16_t*>(static_cast<char*>(c) + i * stride_c * e);
        std::vector<float> wc = beta != 0 ? widened(ci, c_elems, elem) : std::vector<float>(c_elems);
        cblas_sgemm(CblasColMajor, ta, tb, m, n, k, float(alpha), wa.data(), lda, wb.data(), ldb, float(beta),
                    wc.data(), ldc);
        for (int col = 0; col < n; ++col)
            for (int row = 0; row < m; ++row) {
                const float v = wc[size_t(col) * size_t(ldc) + size_t(row)];
                ci[size_t(col) * size_t(ldc) + size_t(row)] =
                    elem == Elem::f16 ? px_float_to_float16(v) : px_float_to_bfloat16(v);
            }
    }

    void run() const {
        std::vector<float> a_tf32, b_tf32;
        for (int i = 0; i < batch; ++i) {
            if (elem == Elem::f16 || elem == Elem::bf16) {
                run_half(i);
            } else if (elem == Elem::f32) {
                const float* ai = static_cast<const float*>(a) + i * stride_a;
                const float* bi = static_cast<const float*>(b) + i * stride_b;
                if (tf32 && k > 0) {  // tensor cores read TF32: 10 mantissa bits
                    ai = rounded_to_tf32(ai, a_elems, a_tf32);
                    bi = rounded_to_tf32(bi, b_elems, b_tf32);
                }
                cblas_sgemm(CblasColMajor, ta, tb, m, n, k, float(alpha), ai, lda, bi, ldb, float(beta),
                            static_cast<float*>(c) + i * stride_c, ldc);
            } else {
                cblas_dgemm(CblasColMajor, ta, tb, m, n, k, alpha, static_cast<const double*>(a) + i * stride_a, lda,
                            static_cast<const double*>(b) + i * stride_b, ldb, beta,
                            static_cast<double*>(c) + i * stride_c, ldc);
            }
        }
    }
};

}  // namespace

extern "C" {

cublasStatus_t cublasCreate_v2(cublasHandle_t* h) {
    px_emu::DriverScope driver;
    if (!h) return CUBLAS_STATUS_INVALID_VALUE;
    if (const cudaError_t e = px_emu::refused("cublasCreate_v2", px_emu::current_device(), true))
        return e == cudaErrorMemoryAllocation ? CUBLAS_STATUS_ALLOC_FAILED : CUBLAS_STATUS_NOT_INITIALIZED;
    *h = new cublasContext;
    px_emu::note_object(px_emu::Object::blas_handle, *h, +1);
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasDestroy_v2(cublasHandle_t h) {
    px_emu::DriverScope driver;
    if (h) px_emu::note_object(px_emu::Object::blas_handle, h, -1);
    delete h;
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetStream_v2(cublasHandle_t h, cudaStream_t s) {
    px_emu::DriverScope driver;
    if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
    h->stream = s;
    return CUBLAS_STATUS_SUCCESS;
}

// Column-major C = alpha op(A) op(B) + beta C per batch, with cuBLAS's own
// checks of the sizes and leading dimensions, and every matrix inside one allocation.
cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                          int k, const void* alpha, const void* a, cudaDataType at, int lda,
                                          long long stride_a, const void* b, cudaDataType bt, int ldb,
                                          long long stride_b, const void* beta, void* c, cudaDataType ct, int ldc,
                                          long long stride_c, int batch, cublasComputeType_t compute,
                                          cublasGemmAlgo_t) {
    px_emu::DriverScope driver;
    if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
    const std::shared_ptr<px_emu::Queue> q = px_emu::queue_of(h->stream);
    if (!q) return CUBLAS_STATUS_INVALID_VALUE;
    const bool trans_a = ta != CUBLAS_OP_N, trans_b = tb != CUBLAS_OP_N;
    const int a_rows = trans_a ? k : m, a_cols = trans_a ? m : k;
    const int b_rows = trans_b ? n : k, b_cols = trans_b ? k : n;
    if (m < 0 || n < 0 || k < 0 || batch < 0 || lda < std::max(1, a_rows) || ldb < std::max(1, b_rows) ||
        ldc < std::max(1, m) || !alpha || !beta)
        return CUBLAS_STATUS_INVALID_VALUE;
    const bool f32 = at == CUDA_R_32F && bt == CUDA_R_32F && ct == CUDA_R_32F &&
                     (compute == CUBLAS_COMPUTE_32F || compute == CUBLAS_COMPUTE_32F_FAST_TF32);
    const bool f64 = at == CUDA_R_64F && bt == CUDA_R_64F && ct == CUDA_R_64F && compute == CUBLAS_COMPUTE_64F;
    const bool f16 = at == CUDA_R_16F && bt == CUDA_R_16F && ct == CUDA_R_16F && compute == CUBLAS_COMPUTE_32F;
    const bool bf16 = at == CUDA_R_16BF && bt == CUDA_R_16BF && ct == CUDA_R_16BF && compute == CUBLAS_COMPUTE_32F;
    if (!f32 && !f64 && !f16 && !bf16) return CUBLAS_STATUS_NOT_SUPPORTED;
    const Elem elem = f32 ? Elem::f32 : f64 ? Elem::f64 : f16 ? Elem::f16 : Elem::bf16;
    if (px_emu::refused("cublasGemmStridedBatchedEx", px_emu::device_of(*q))) return CUBLAS_STATUS_EXECUTION_FAILED;
    if (m == 0 || n == 0 || batch == 0) return CUBLAS_STATUS_SUCCESS;
    const size_t e = f32 ? 4 : f64 ? 8 : 2;
    // What cuBLAS touches of a column-major matrix: ld apart for each column
    // but the last, which ends after its rows (not after ld of them).
    auto extent = [&](int ld, int rows, int cols) { return (size_t(ld) * size_t(cols - 1) + size_t(rows)) * e; };
    for (int i = 0; i < batch; ++i) {
        const bool ok = (k == 0 || (px_emu::device_range(static_cast<const char*>(a) + i * stride_a * e, extent(lda, a_rows, a_cols), "cublasGemmStridedBatchedEx (A)") &&
                                    px_emu::device_range(static_cast<const char*>(b) + i * stride_b * e, extent(ldb, b_rows, b_cols), "cublasGemmStridedBatchedEx (B)"))) &&
                        px_emu::device_range(static_cast<char*>(c) + i * stride_c * e, extent(ldc, m, n), "cublasGemmStridedBatchedEx (C)");
        if (!ok) return CUBLAS_STATUS_EXECUTION_FAILED;
    }
    // Host scalars: float for every compute type but 64F.
    Product p{trans_a ? CblasTrans : CblasNoTrans, trans_b ? CblasTrans : CblasNoTrans, m, n, k, lda, ldb, ldc, batch,
              extent(lda, a_rows, a_cols) / e, extent(ldb, b_rows, b_cols) / e, extent(ldc, m, n) / e, stride_a, stride_b,
              stride_c, a, b, c,
              f64 ? *static_cast<const double*>(alpha) : double(*static_cast<const float*>(alpha)),
              f64 ? *static_cast<const double*>(beta) : double(*static_cast<const float*>(beta)), elem,
              compute == CUBLAS_COMPUTE_32F_FAST_TF32};
    px_emu::enqueue(q, [p] {
        p.run();
        return true;
    });
    return CUBLAS_STATUS_SUCCESS;
}

// One product, as a batch of one: plexus-bench's raw baseline calls it.
cublasStatus_t cublasGemmEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                            const void* alpha, const void* a, cudaDataType at, int lda, const void* b, cudaDataType bt,
                            int ldb, const void* beta, void* c, cudaDataType ct, int ldc, cublasComputeType_t compute,
                            cublasGemmAlgo_t algo) {
    px_emu::DriverScope driver;
    return cublasGemmStridedBatchedEx(h, ta, tb, m, n, k, alpha, a, at, lda, 0, b, bt, ldb, 0, beta, c, ct, ldc, 0, 1,
                                      compute, algo);
}

}  // extern "C"
