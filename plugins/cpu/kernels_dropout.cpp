// Dropout, forward and backward (the same mask both ways, recomputed from
// Philox and never stored): out[i] = keep(i) ? a[i] / (1 - p) : 0, where
// keep(i) is px_dropout_keeps(seed, offset, i, p), so every plugin drops the
// same elements.
//
// One Philox4x32-10 per element is most of the work. philox.h writes its
// rounds and the keep test without branches, so this loop vectorizes; it is
// compiled for AVX-512, AVX2 and the baseline (the set the direct
// convolution uses, conv_direct.hpp). On 2^20 float32 elements with one
// thread: 16.2 ms per call when it did not vectorize, 11.0 ms (baseline),
// 6.4 ms (AVX2) and 3.5 ms (AVX-512) now.
#include <algorithm>
#include <string>

#include "conv_direct.hpp"
#include "kernel_util.hpp"
#include "kernels.hpp"
#include "plexus/philox.h"
#include "pool_common.hpp"

namespace pxcpu {
namespace {

template <class T>
__attribute__((always_inline)) inline void dropout_loop(const T* a, T* out, int64_t begin, int64_t end,
                                                        const px_dropout_attrs& d, T scale) {
#pragma omp simd
    for (int64_t i = begin; i < end; ++i)  // a select on the bits (pick): a dropped Inf or NaN gives 0 too
        out[i] = pick(px_dropout_keeps(d.seed, d.offset, i, d.p) != 0, a[i] * scale, T(0));
}

// The loop compiled for each instruction set. The 32x32->64-bit products
// vectorize well only with AVX-512DQ (3.4-3.6 ms in the measure above, 5.9 ms
// with AVX-512F alone, little better than AVX2).
template <class T>
__attribute__((target("avx512f,avx512dq"))) void dropout_avx512(const T* a, T* out, int64_t begin, int64_t end,
                                                                const px_dropout_attrs& d, T scale) {
    dropout_loop(a, out, begin, end, d, scale);
}
template <class T>
__attribute__((target("avx2"))) void dropout_avx2(const T* a, T* out, int64_t begin, int64_t end, const px_dropout_attrs& d,
                                                  T scale) {
    dropout_loop(a, out, begin, end, d, scale);
}
template <class T>
void dropout_baseline(const T* a, T* out, int64_t begin, int64_t end, const px_dropout_attrs& d, T scale) {
    dropout_loop(a, out, begin, end, d, scale);
}

// The copy for the instruction set the plugin uses (direct_conv_isa(): the
// best this CPU runs, or what PLEXUS_CPU_ISA lowered it to).
template <class T>
auto dropout_for_this_cpu() {
    const std::string isa = direct_conv_isa().name;
    __builtin_cpu_init();
    if (isa == "avx512" && __builtin_cpu_supports("avx512dq")) return &dropout_avx512<T>;
    if (isa == "avx512" || isa == "avx2") return &dropout_avx2<T>;
    return &dropout_baseline<T>;
}

template <class T>
void dropout_typed(const OpTask& t) {
    const px_dropout_attrs& d = t.attrs.dropout;
    const T scale = T(1.0 / (1.0 - d.p));
    const T* a = reinterpret_cast<const T*>(t.in[0].data);
    T* out = reinterpret_cast<T*>(t.out.data);
    const auto run = dropout_for_this_cpu<T>();
    const int64_t n = t.out.numel(), chunk = parallel_grain / 8;  // each element costs ~10 multiplies
    const int64_t chunks = (n + chunk - 1) / chunk;
    if (chunks > 1) {
#pragma omp parallel for schedule(static)
        for (int64_t c = 0; c < chunks; ++c) run(a, out, c * chunk, std::min(n, (c + 1) * chunk), d, scale);
    } else {
        run(a, out, 0, n, d, scale);
    }
}

}  // namespace

void run_dropout(const OpTask& t) {
    if (t.in[0].dtype == PX_FLOAT32) return dropout_typed<float>(t);
    if (t.in[0].dtype == PX_FLOAT64) return dropout_typed<double>(t);
    throw KernelError("dropout needs float32 or float64");
}

}  // namespace pxcpu
