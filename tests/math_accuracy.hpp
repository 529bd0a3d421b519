// What the tests of exp, log, tanh and sigmoid share, on any device: inputs
// that reach every binade and the functions' edges, the independent
// reference (glibc's long double functions), and the error in ulps.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "plexus/plexus.hpp"

namespace pxtest {

// Zeros, infinities, NaN, denormals, the largest values, and the edges of
// exp's overflow and underflow in each dtype.
template <class T>
std::vector<T> math_specials() {
    constexpr T inf = std::numeric_limits<T>::infinity();
    return {T(0),
            T(-0.0),
            inf,
            -inf,
            std::numeric_limits<T>::quiet_NaN(),
            T(1),
            T(-1),
            T(4),
            T(88.72),
            T(-103.9),
            T(709.78),
            T(-745.2),
            std::numeric_limits<T>::denorm_min(),
            -std::numeric_limits<T>::denorm_min(),
            std::numeric_limits<T>::max(),
            std::numeric_limits<T>::lowest(),
            T(1e-30),
            T(20),
            T(-20)};
}

// The specials, then values from every binade (random bits, NaNs included),
// then values where the functions bend: more than the CPU plugin's grain of
// 32768, and not a whole number of vectors, so chunk ends and scalar tails
// are crossed.
template <class T>
std::vector<T> math_inputs() {
    std::vector<T> v = math_specials<T>();
    uint64_t s = 0x9E3779B97F4A7C15ull;
    auto next = [&s] { return s = s * 6364136223846793005ull + 1442695040888963407ull; };
    while (v.size() < 40000) {
        T x;
        if constexpr (sizeof(T) == 4) {
            const uint32_t bits = uint32_t(next() >> 32);
            std::memcpy(&x, &bits, sizeof x);
        } else {
            const uint64_t bits = next();
            std::memcpy(&x, &bits, sizeof x);
        }
        v.push_back(x);
    }
    while (v.size() < 70001) v.push_back(T(double(next() >> 11) * 0x1p-53 * 60.0 - 30.0));
    return v;
}

enum class MathFn { exp, log, tanh, sigmoid };
constexpr MathFn kMathFns[] = {MathFn::exp, MathFn::log, MathFn::tanh, MathFn::sigmoid};

inline const char* name(MathFn f) {
    switch (f) {
    case MathFn::exp: return "exp";
    case MathFn::log: return "log";
    case MathFn::tanh: return "tanh";
    default: return "sigmoid";
    }
}

inline plexus::Tensor apply(MathFn f, const plexus::Tensor& x) {
    switch (f) {
    case MathFn::exp: return x.exp();
    case MathFn::log: return x.log();
    case MathFn::tanh: return x.tanh();
    default: return x.sigmoid();
    }
}

// The independent reference: glibc's long double functions.
inline long double exact(MathFn f, long double x) {
    switch (f) {
    case MathFn::exp: return std::exp(x);
    case MathFn::log: return std::log(x);
    case MathFn::tanh: return std::tanh(x);
    default: return 1.0L / (1.0L + std::exp(-x));
    }
}

template <class T>
bool same_bits(T a, T b) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
    using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
    Bits x, y;
    std::memcpy(&x, &a, sizeof x);
    std::memcpy(&y, &b, sizeof y);
    return x == y;  // tells -0.0 from 0.0
}

// |got - want| in units of T's last place at want.
template <class T>
long double ulps(T got, long double want) {
    const T w = T(want);  // rounded: past the largest finite value it is infinite
    if (std::isnan(w) || std::isinf(w)) return same_bits(got, w) ? 0 : 1e30L;
    const long double ulp = std::nextafter(std::fabs(w), std::numeric_limits<T>::infinity()) - std::fabs(w);
    return std::fabs(static_cast<long double>(got) - want) / std::max<long double>(ulp, std::numeric_limits<T>::denorm_min());
}

// The worst error in ulps of `got`, f's values at `x`, and where it is.
template <class T>
struct WorstError {
    long double ulps = 0;
    T at = 0, got = 0;
};
template <class T>
WorstError<T> worst_error(MathFn f, const std::vector<T>& x, const std::vector<T>& got) {
    WorstError<T> w;
    for (size_t i = 0; i < x.size() && i < got.size(); ++i) {
        const long double e = ulps(got[i], exact(f, x[i]));
        if (e > w.ulps) w = {e, x[i], got[i]};
    }
    return w;
}

}  // namespace pxtest
