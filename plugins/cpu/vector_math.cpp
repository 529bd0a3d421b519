#include "vector_math.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "conv_direct.hpp"
#include "vector_math_loops.hpp"

namespace pxcpu {
namespace {

// The copy for the instruction set the plugin uses (its "avx2" has FMA too).
const MathIsa& math_isa() {
    const char* name = direct_conv_isa().name;
    if (std::strcmp(name, "avx512") == 0) return math_avx512;
    if (std::strcmp(name, "avx2") == 0) return math_avx2;
    return math_sse2;
}

// 1 / (1 + exp(w)) in place, where w holds -x: the negation is left to the
// pass that fills w (with a pass of its own, sigmoid on 16M float32 took
// 19.5 ms against 16.6 ms, in consecutive bench runs).
void sigmoid_of_negated(const MathIsa& isa, double* w, int64_t n) {
    isa.map[static_cast<int>(MathFn::exp)](w, w, n);
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) w[i] = 1.0 / (1.0 + w[i]);
}

// f(w, m) on blocks of x widened to float64 (negated with Negate), each
// rounded into y once; a block's passes stay in the L1 cache.
template <bool Negate, class F>
void through_float64(const float* x, float* y, int64_t n, F f) {
    constexpr int64_t kBlock = 1024;
    double w[kBlock];
    for (int64_t s = 0; s < n; s += kBlock) {
        const int64_t m = std::min(kBlock, n - s);
#pragma omp simd
        for (int64_t i = 0; i < m; ++i) w[i] = Negate ? -double(x[s + i]) : double(x[s + i]);
        f(w, m);
#pragma omp simd
        for (int64_t i = 0; i < m; ++i) y[s + i] = float(w[i]);
    }
}

}  // namespace

void vector_math(MathFn fn, const double* x, double* y, int64_t n) {
    const MathIsa& isa = math_isa();
    if (fn != MathFn::sigmoid) return isa.map[static_cast<int>(fn)](x, y, n);
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] = -x[i];
    sigmoid_of_negated(isa, y, n);
    // Below -709.78 e^-x overflowed to a 0 where e^x (1 + e^x is 1 there)
    // is still a float64, down to -745.13 (px_sigmoid's rule).
    for (int64_t i = 0; i < n; ++i)
        if (y[i] == 0.0 && x[i] > -746.0) y[i] = std::exp(x[i]);
}

void vector_math(MathFn fn, const float* x, float* y, int64_t n) {
    const MathIsa& isa = math_isa();
    if (fn == MathFn::sigmoid)
        return through_float64<true>(x, y, n, [&isa](double* w, int64_t m) { sigmoid_of_negated(isa, w, m); });
    const auto map = isa.map[static_cast<int>(fn)];
    through_float64<false>(x, y, n, [map](double* w, int64_t m) { map(w, w, m); });
}

}  // namespace pxcpu
