// Matrix products through OpenBLAS: one gemm per batch entry; a batch stride
// of 0 reuses one operand for the whole batch.
#include <cblas.h>

#include <cstring>

#include "blas_guard.hpp"
#include "kernels.hpp"

namespace pxcpu {

void run_matmul(const OpTask& t) {
    const Operand &a = t.in[0], &b = t.in[1], &c = t.out;
    const int64_t batch = c.shape[0], m = c.shape[1], n = c.shape[2], k = a.shape[2];
    if (m > INT32_MAX || n > INT32_MAX || k > INT32_MAX) throw KernelError("matrix dimensions exceed the BLAS int range");
    if (k == 0) {  // an empty sum; BLAS would reject the leading dimension of 0
        std::memset(c.data, 0, static_cast<size_t>(c.numel()) * px_dtype_size(c.dtype));
        return;
    }
    const BlasWork blas(1);  // one gemm at a time, on this thread
    for (int64_t i = 0; i < batch; ++i) {
        if (a.dtype == PX_FLOAT32) {
            const float* pa = reinterpret_cast<const float*>(a.data) + i * a.strides[0];
            const float* pb = reinterpret_cast<const float*>(b.data) + i * b.strides[0];
            float* pc = reinterpret_cast<float*>(c.data) + i * c.strides[0];
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(m), int(n), int(k), 1.0f, pa,
                        int(a.strides[1]), pb, int(b.strides[1]), 0.0f, pc, int(c.strides[1]));
        } else if (a.dtype == PX_FLOAT64) {
            const double* pa = reinterpret_cast<const double*>(a.data) + i * a.strides[0];
            const double* pb = reinterpret_cast<const double*>(b.data) + i * b.strides[0];
            double* pc = reinterpret_cast<double*>(c.data) + i * c.strides[0];
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(m), int(n), int(k), 1.0, pa,
                        int(a.strides[1]), pb, int(b.strides[1]), 0.0, pc, int(c.strides[1]));
        } else {
            throw KernelError("matmul needs float32 or float64");
        }
    }
}

}  // namespace pxcpu

// GEMM: 2-D operands as stored (contiguous), each optionally transposed.
#include "blas_util.hpp"

namespace pxcpu {
namespace {

template <class T>
void gemm_typed(const OpTask& t) {
    const Operand &a = t.in[0], &b = t.in[1], &c = t.out;
    const bool ta = t.attrs.gemm.trans_a != 0, tb = t.attrs.gemm.trans_b != 0;
    const int64_t m = c.shape[0], n = c.shape[1], k = ta ? a.shape[0] : a.shape[1];
    if (m > INT32_MAX || n > INT32_MAX || k > INT32_MAX || a.shape[1] > INT32_MAX || b.shape[1] > INT32_MAX)
        throw KernelError("matrix dimensions exceed the BLAS int range");
    if (k == 0) {  // an empty sum; BLAS would reject the leading dimension of 0
        std::memset(c.data, 0, static_cast<size_t>(c.numel()) * sizeof(T));
        return;
    }
    const BlasWork blas(1);
    gemm(ta, tb, int(m), int(n), int(k), T(1), reinterpret_cast<const T*>(a.data), int(a.shape[1]),
         reinterpret_cast<const T*>(b.data), int(b.shape[1]), T(0), reinterpret_cast<T*>(c.data), int(n));
}

}  // namespace

void run_gemm(const OpTask& t) {
    if (t.in[0].dtype == PX_FLOAT32) return gemm_typed<float>(t);
    if (t.in[0].dtype == PX_FLOAT64) return gemm_typed<double>(t);
    throw KernelError("gemm needs float32 or float64");
}

Kernels matmul_kernels() {
    // Through OpenBLAS, which has no integer gemm.
    return {{PX_OP_MATMUL, run_matmul, PX_DTYPES_FLOAT}, {PX_OP_GEMM, run_gemm}};
}

}  // namespace pxcpu
