// Dropout, forward and backward (the same mask both ways, recomputed from
// Philox and never stored): out[i] = keep(i) ? a[i] / (1 - p) : 0, where
// keep(i) is px_dropout_keeps(seed, offset, i, p), so every plugin drops the
// same elements.
//
// One Philox4x32-10 per element is most of the work. philox.h writes its
// rounds and the keep test without branches, so this loop vectorizes; it is
// compiled for AVX-512, AVX2 and the baseline (isa_copies.hpp; with
// AVX-512F alone the products vectorize poorly: 5.9 ms below, little
// better than AVX2). On 2^20 float32 elements with one
// thread: 16.2 ms per call when it did not vectorize, 11.0 ms (baseline),
// 6.4 ms (AVX2) and 3.5 ms (AVX-512) now.
#include "isa_copies.hpp"
#include "kernel_util.hpp"
#include "kernels.hpp"
#include "plexus/philox.h"
#include "pool_common.hpp"

namespace pxcpu {
namespace {

struct DropoutLoop {
    template <class T>
    __attribute__((always_inline)) static inline void run(const T* a, T* out, int64_t begin, int64_t end,
                                                         px_dropout_attrs d, T scale) {
#pragma omp simd
        for (int64_t i = begin; i < end; ++i)  // a select on the bits (pick): a dropped Inf or NaN gives 0 too
            out[i] = pick(px_dropout_keeps(d.seed, d.offset, i, d.p) != 0, a[i] * scale, T(0));
    }
};

template <class T>
void dropout_typed(const OpTask& t) {
    const px_dropout_attrs& d = t.attrs.dropout;
    const T scale = T(1.0 / (1.0 - d.p));
    const T* a = reinterpret_cast<const T*>(t.in[0].data);
    T* out = reinterpret_cast<T*>(t.out.data);
    const auto run = IsaCopies<DropoutLoop>::for_this_cpu<const T*, T*, int64_t, int64_t, px_dropout_attrs, T>();
    parallel_chunks(t.out.numel(), parallel_grain / 8,  // each element costs ~10 multiplies
                    [&](int64_t begin, int64_t end) { run(a, out, begin, end, d, scale); });
}

}  // namespace

void run_dropout(const OpTask& t) {
    if (t.in[0].dtype == PX_FLOAT32) return dropout_typed<float>(t);
    if (t.in[0].dtype == PX_FLOAT64) return dropout_typed<double>(t);
    throw KernelError("dropout needs float32 or float64");
}

Kernels dropout_kernels() {
    return {{PX_OP_DROPOUT, through_float32<run_dropout>, kFloatDtypes},
            {PX_OP_DROPOUT_BACKWARD, through_float32<run_dropout>, kFloatDtypes}};
}

}  // namespace pxcpu
