// Dropout, forward and backward (the same mask both ways, recomputed from
// Philox and never stored): out[i] = keep(i) ? a[i] / (1 - p) : 0, where
// keep(i) is px_dropout_keeps(seed, offset, i, p), so every plugin drops the
// same elements.
//
// One Philox4x32-10 per element is most of the work. Calling
// px_dropout_keeps per element does not vectorize (its rounds branch on the
// round number, and it compares a double); here the round keys are computed
// once per call and the uniform's 53 bits are compared as an integer, so the
// loop vectorizes, and it is compiled for AVX-512, AVX2 and the baseline
// (the set the direct convolution uses, conv_direct.hpp). On 2^20 float32
// elements with one thread: 16.2 ms per call before, 11.3 ms (baseline),
// 6.4 ms (AVX2) and 3.6 ms (AVX-512) after, the same bits.
#include <algorithm>
#include <cmath>
#include <string>

#include "conv_direct.hpp"
#include "kernel_util.hpp"
#include "kernels.hpp"
#include "plexus/philox.h"
#include "pool_common.hpp"

namespace pxcpu {
namespace {

constexpr int kRounds = 10;

// What every element's draw shares: the round keys and the threshold.
struct Mask {
    uint32_t k0[kRounds], k1[kRounds];
    uint64_t offset;
    // u >= p, for u = bits * 2^-53 (px_uniform_double), exactly when the
    // integer bits >= ceil(p * 2^53); both sides are exact in a double.
    uint64_t threshold;

    explicit Mask(const px_dropout_attrs& d) : offset(d.offset) {
        k0[0] = uint32_t(d.seed), k1[0] = uint32_t(d.seed >> 32);
        for (int r = 1; r < kRounds; ++r) k0[r] = k0[r - 1] + 0x9E3779B9u, k1[r] = k1[r - 1] + 0xBB67AE85u;
        threshold = uint64_t(std::ceil(d.p * 9007199254740992.0));
    }
};

// px_philox4x32_10's rounds, with the keys from `m`.
template <class T>
__attribute__((always_inline)) inline void dropout_loop(const T* a, T* out, int64_t begin, int64_t end, const Mask& m,
                                                        T scale) {
#pragma omp simd
    for (int64_t i = begin; i < end; ++i) {
        const uint64_t counter = m.offset + uint64_t(i);
        uint32_t c0 = uint32_t(counter), c1 = uint32_t(counter >> 32), c2 = 0, c3 = 0;
#pragma GCC unroll 10
        for (int r = 0; r < kRounds; ++r) {
            const uint64_t p0 = uint64_t(0xD2511F53u) * c0, p1 = uint64_t(0xCD9E8D57u) * c2;
            const uint32_t n0 = uint32_t(p1 >> 32) ^ c1 ^ m.k0[r], n2 = uint32_t(p0 >> 32) ^ c3 ^ m.k1[r];
            c1 = uint32_t(p1), c3 = uint32_t(p0), c0 = n0, c2 = n2;
        }
        const uint64_t bits = (uint64_t(c0) << 21) | (c1 >> 11);
        // A select on the bits (pick): a dropped Inf or NaN gives 0 too, and
        // the AVX2 loop vectorizes (with ?: it did not).
        out[i] = pick(bits >= m.threshold, a[i] * scale, T(0));
    }
}

// The loop compiled for each instruction set. The 32x32->64-bit products
// vectorize well only with AVX-512DQ (3.4-3.6 ms in the measure above, 5.9 ms
// with AVX-512F alone, little better than AVX2).
template <class T>
__attribute__((target("avx512f,avx512dq"))) void dropout_avx512(const T* a, T* out, int64_t begin, int64_t end,
                                                                const Mask& m, T scale) {
    dropout_loop(a, out, begin, end, m, scale);
}
template <class T>
__attribute__((target("avx2"))) void dropout_avx2(const T* a, T* out, int64_t begin, int64_t end, const Mask& m,
                                                  T scale) {
    dropout_loop(a, out, begin, end, m, scale);
}
template <class T>
void dropout_baseline(const T* a, T* out, int64_t begin, int64_t end, const Mask& m, T scale) {
    dropout_loop(a, out, begin, end, m, scale);
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
    const Mask m(d);
    const T scale = T(1.0 / (1.0 - d.p));
    const T* a = reinterpret_cast<const T*>(t.in[0].data);
    T* out = reinterpret_cast<T*>(t.out.data);
    const auto run = dropout_for_this_cpu<T>();
    const int64_t n = t.out.numel(), chunk = parallel_grain / 8;  // each element costs ~10 multiplies
    const int64_t chunks = (n + chunk - 1) / chunk;
    if (chunks > 1) {
#pragma omp parallel for schedule(static)
        for (int64_t c = 0; c < chunks; ++c) run(a, out, c * chunk, std::min(n, (c + 1) * chunk), m, scale);
    } else {
        run(a, out, 0, n, m, scale);
    }
}

}  // namespace

void run_dropout(const OpTask& t) {
    if (t.in[0].dtype == PX_FLOAT32) return dropout_typed<float>(t);
    if (t.in[0].dtype == PX_FLOAT64) return dropout_typed<double>(t);
    throw KernelError("dropout needs float32 or float64");
}

}  // namespace pxcpu
