// Matrix products through OpenBLAS: MATMUL one gemm per batch entry (a batch
// stride of 0 reuses one operand for the whole batch); GEMM 2-D operands as
// stored (contiguous), each optionally transposed. float16 and bfloat16 go
// through gemm_half (blas_util.hpp).
#include <cstring>

#include "blas_guard.hpp"
#include "blas_util.hpp"
#include "kernels.hpp"

namespace pxcpu {
namespace {

// C = op(A) op(B) in T, op transposing where asked; ld: each operand's row stride.
template <class T>
void product(bool ta, bool tb, int m, int n, int k, const T* a, int lda, const T* b, int ldb, T* c, int ldc) {
    if constexpr (is_half_v<T>) gemm_half(ta, tb, m, n, k, a, lda, b, ldb, c, ldc);
    else gemm(ta, tb, m, n, k, T(1), a, lda, b, ldb, T(0), c, ldc);
}

// Calls f(T{}) for a floating dtype; the table offers these ops on no other.
template <class F>
void with_float_dtype(int32_t dtype, const char* op, F&& f) {
    with_any_dtype(dtype, [&](auto v) {
        if constexpr (is_float_v<decltype(v)>) f(v);
        else throw KernelError(std::string(op) + " needs a floating dtype");
    });
}

}  // namespace

void run_matmul(const OpTask& t) {
    const Operand &a = t.in[0], &b = t.in[1], &c = t.out;
    const int64_t batch = c.shape[0], m = c.shape[1], n = c.shape[2], k = a.shape[2];
    if (m > INT32_MAX || n > INT32_MAX || k > INT32_MAX) throw KernelError("matrix dimensions exceed the BLAS int range");
    if (k == 0) {  // an empty sum; BLAS would reject the leading dimension of 0
        std::memset(c.data, 0, static_cast<size_t>(c.numel()) * px_dtype_size(c.dtype));
        return;
    }
    const BlasWork blas(1);  // one gemm at a time, on this thread
    with_float_dtype(a.dtype, "matmul", [&](auto v) {
        using T = decltype(v);
        for (int64_t i = 0; i < batch; ++i)
            product(false, false, int(m), int(n), int(k), reinterpret_cast<const T*>(a.data) + i * a.strides[0],
                    int(a.strides[1]), reinterpret_cast<const T*>(b.data) + i * b.strides[0], int(b.strides[1]),
                    reinterpret_cast<T*>(c.data) + i * c.strides[0], int(c.strides[1]));
    });
}

void run_gemm(const OpTask& t) {
    const Operand &a = t.in[0], &b = t.in[1], &c = t.out;
    const bool ta = t.attrs.gemm.trans_a != 0, tb = t.attrs.gemm.trans_b != 0;
    const int64_t m = c.shape[0], n = c.shape[1], k = ta ? a.shape[0] : a.shape[1];
    if (m > INT32_MAX || n > INT32_MAX || k > INT32_MAX || a.shape[1] > INT32_MAX || b.shape[1] > INT32_MAX)
        throw KernelError("matrix dimensions exceed the BLAS int range");
    if (k == 0) {  // an empty sum; BLAS would reject the leading dimension of 0
        std::memset(c.data, 0, static_cast<size_t>(c.numel()) * px_dtype_size(c.dtype));
        return;
    }
    const BlasWork blas(1);
    with_float_dtype(a.dtype, "gemm", [&](auto v) {
        using T = decltype(v);
        product(ta, tb, int(m), int(n), int(k), reinterpret_cast<const T*>(a.data), int(a.shape[1]),
                reinterpret_cast<const T*>(b.data), int(b.shape[1]), reinterpret_cast<T*>(c.data), int(n));
    });
}

Kernels matmul_kernels() {
    // Through OpenBLAS, which has no integer gemm.
    return {{PX_OP_MATMUL, run_matmul, kFloatDtypes}, {PX_OP_GEMM, run_gemm, kFloatDtypes}};
}

}  // namespace pxcpu
