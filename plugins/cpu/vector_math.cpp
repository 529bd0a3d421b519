#include "vector_math.hpp"

#include <algorithm>
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

constexpr int64_t kBlock = 1024;  // a block's passes stay in the L1 cache

// 1 / (1 + e) in place, where e = exp(-x) has been computed.
void finish_sigmoid(double* e, int64_t n) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) e[i] = 1.0 / (1.0 + e[i]);
}

}  // namespace

void vector_math(MathFn fn, const double* x, double* y, int64_t n) {
    math_isa().map[static_cast<int>(fn)](x, y, n);
}

void vector_math(MathFn fn, const float* x, float* y, int64_t n) {
    const auto map = math_isa().map[static_cast<int>(fn)];
    double w[kBlock];
    for (int64_t s = 0; s < n; s += kBlock) {
        const int64_t m = std::min(kBlock, n - s);
#pragma omp simd
        for (int64_t i = 0; i < m; ++i) w[i] = double(x[s + i]);
        map(w, w, m);
#pragma omp simd
        for (int64_t i = 0; i < m; ++i) y[s + i] = float(w[i]);
    }
}

void vector_sigmoid(const double* x, double* y, int64_t n) {
    const auto exp = math_isa().map[static_cast<int>(MathFn::exp)];
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) y[i] = -x[i];
    exp(y, y, n);
    finish_sigmoid(y, n);
}

void vector_sigmoid(const float* x, float* y, int64_t n) {
    const auto exp = math_isa().map[static_cast<int>(MathFn::exp)];
    double w[kBlock];
    for (int64_t s = 0; s < n; s += kBlock) {
        const int64_t m = std::min(kBlock, n - s);
#pragma omp simd
        for (int64_t i = 0; i < m; ++i) w[i] = -double(x[s + i]);
        exp(w, w, m);
        finish_sigmoid(w, m);
#pragma omp simd
        for (int64_t i = 0; i < m; ++i) y[s + i] = float(w[i]);
    }
}

}  // namespace pxcpu
