// Matrix products through OpenBLAS: one gemm per batch entry; a batch stride
// of 0 reuses one operand for the whole batch.
#include <cblas.h>

#include "kernels.hpp"

namespace pxcpu {

void run_matmul(const OpTask& t) {
    const Operand &a = t.in[0], &b = t.in[1], &c = t.out;
    const int64_t batch = c.shape[0], m = c.shape[1], n = c.shape[2], k = a.shape[2];
    if (m > INT32_MAX || n > INT32_MAX || k > INT32_MAX) throw KernelError("matrix dimensions exceed the BLAS int range");
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
