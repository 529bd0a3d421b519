// Typed row-major gemm over OpenBLAS, so kernels are written once for float
// and double: C = alpha * op(A) op(B) + beta * C; and the 16-bit floats'.
#pragma once

#include <algorithm>
#include <vector>

#include "float16_convert.hpp"
#include "kernel_util.hpp"
#include "openblas.hpp"

namespace pxcpu {

inline void gemm(bool ta, bool tb, int m, int n, int k, float alpha, const float* a, int lda, const float* b, int ldb,
                 float beta, float* c, int ldc) {
    openblas().sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda,
                b, ldb, beta, c, ldc);
}

inline void gemm(bool ta, bool tb, int m, int n, int k, double alpha, const double* a, int lda, const double* b,
                 int ldb, double beta, double* c, int ldc) {
    openblas().dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, m, n, k, alpha, a, lda,
                b, ldb, beta, c, ldc);
}

// Rows of `cols` elements per parallel chunk: about parallel_grain elements.
inline int64_t rows_per_chunk(int64_t cols) { return std::max<int64_t>(1, parallel_grain / std::max<int64_t>(1, cols)); }

// float16 and bfloat16: C = op(A) op(B), the products of their exact
// float32 values summed in float32 and each result rounded once, through
// float32 copies of A and B and OpenBLAS's sgemm. (OpenBLAS's cblas_sbgemm is not
// in Debian's 0.3.21 library, and with AVX512-BF16 it flushes subnormal
// bfloat16 operands and results.)

template <class H>
void gemm_half(bool ta, bool tb, int m, int n, int k, const H* a, int lda, const H* b, int ldb, H* c, int ldc) {
    const CBLAS_TRANSPOSE op_a = ta ? CblasTrans : CblasNoTrans, op_b = tb ? CblasTrans : CblasNoTrans;
    std::vector<float> product(size_t(m) * size_t(n));
    // Each operand widened as stored: its rows (k or m of them, as transposed) of ld apart.
    auto widened = [](const H* p, int rows, int cols, int ld) {
        std::vector<float> w(size_t(rows) * size_t(cols));
        parallel_chunks(rows, rows_per_chunk(cols), [&](int64_t lo, int64_t hi) {
            for (int64_t r = lo; r < hi; ++r) widen_to_float(p + r * ld, w.data() + r * cols, cols);
        });
        return w;
    };
    const std::vector<float> wa = widened(a, ta ? k : m, ta ? m : k, lda), wb = widened(b, tb ? n : k, tb ? k : n, ldb);
    openblas().sgemm(CblasRowMajor, op_a, op_b, m, n, k, 1.0f, wa.data(), ta ? m : k, wb.data(), tb ? k : n, 0.0f,
                product.data(), n);
    parallel_chunks(m, rows_per_chunk(n), [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) narrow_from_float(product.data() + i * n, c + i * ldc, n);
    });
}

}  // namespace pxcpu
