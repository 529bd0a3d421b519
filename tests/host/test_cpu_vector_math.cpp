// The CPU plugin's exp, log, tanh and sigmoid: SLEEF's deterministic float64
// functions, vectorized for the plugin's instruction set (CTest runs this
// file once per set the CPU has: host.vector_math_and_random_with_*_loops).
// Checked twice: bit for bit against SLEEF's scalar copy of the same kind,
// and for accuracy against glibc's long double functions (float32 rounded
// once from float64 is correctly rounded on every input here; float64 within
// SLEEF's 1 ulp).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "plexus/plexus.hpp"
#include "sleef_reference.hpp"

namespace {

using plexus::Tensor;

// Zeros, infinities, NaN, denormals, the largest values, and the edges of
// exp's overflow and underflow in each dtype.
template <class T>
std::vector<T> specials() {
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
// then values where the functions bend: more than the plugin's grain of
// 32768, and not a whole number of vectors, so chunk ends and scalar tails
// are crossed.
template <class T>
std::vector<T> inputs() {
    std::vector<T> v = specials<T>();
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

enum class Fn { exp, log, tanh, sigmoid };
const char* name(Fn f) {
    switch (f) {
    case Fn::exp: return "exp";
    case Fn::log: return "log";
    case Fn::tanh: return "tanh";
    default: return "sigmoid";
    }
}

Tensor apply(Fn f, const Tensor& x) {
    switch (f) {
    case Fn::exp: return x.exp();
    case Fn::log: return x.log();
    case Fn::tanh: return x.tanh();
    default: return x.sigmoid();
    }
}

// What the plugin must compute: SLEEF's scalar float64 copy of the kind its
// loops use.
double sleef(Fn f, double x) {
    const pxtest::SleefReference& r = pxtest::sleef_reference();
    switch (f) {
    case Fn::exp: return r.exp(x);
    case Fn::log: return r.log(x);
    case Fn::tanh: return r.tanh(x);
    default: return 1.0 / (1.0 + r.exp(-x));
    }
}

// The independent reference: glibc's long double functions.
long double exact(Fn f, long double x) {
    switch (f) {
    case Fn::exp: return std::exp(x);
    case Fn::log: return std::log(x);
    case Fn::tanh: return std::tanh(x);
    default: return 1.0L / (1.0L + std::exp(-x));
    }
}

template <class T>
bool same_bits(T a, T b) {
    if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
    return std::memcmp(&a, &b, sizeof a) == 0;
}

// |got - want| in units of T's last place at want.
template <class T>
long double ulps(T got, long double want) {
    const T w = T(want);  // rounded: past the largest finite value it is infinite
    if (std::isnan(w) || std::isinf(w)) return same_bits(got, w) ? 0 : 1e30L;
    const long double ulp = std::nextafter(std::fabs(w), std::numeric_limits<T>::infinity()) - std::fabs(w);
    return std::fabs(static_cast<long double>(got) - want) / std::max<long double>(ulp, std::numeric_limits<T>::denorm_min());
}

// The plugin's f over inputs<T>(): SLEEF's bits (float32 rounded once from
// float64), and no further than max_ulps from glibc's long double value.
template <class T>
void check(Fn f, long double max_ulps) {
    const std::vector<T> x = inputs<T>();
    const std::vector<T> got = apply(f, plexus::array(x)).template to_vector<T>();
    REQUIRE(got.size() == x.size());
    size_t differ = 0, worst_at = 0;
    long double worst = 0;
    for (size_t i = 0; i < x.size(); ++i) {
        differ += !same_bits(got[i], T(sleef(f, double(x[i]))));
        const long double e = ulps(got[i], exact(f, x[i]));
        if (e > worst) worst = e, worst_at = i;
    }
    CHECK(differ == 0);
    INFO("worst at x = " << x[worst_at] << ": got " << got[worst_at]);
    CHECK(worst <= max_ulps);
}

}  // namespace

TEST_CASE("the CPU plugin's exp log tanh and sigmoid are SLEEF's float64 functions",
          "[host][vector-math]") {
    INFO("cpu(0): " << plexus::device_info(plexus::cpu()).name);  // names its instruction set
    for (Fn f : {Fn::exp, Fn::log, Fn::tanh, Fn::sigmoid}) {
        INFO(name(f));
        // float32: correctly rounded, as good as glibc's float functions.
        check<float>(f, 0.5L);
        // float64: SLEEF's bound is 1 ulp; sigmoid's 1 / (1 + e) adds two roundings.
        check<double>(f, f == Fn::sigmoid ? 2.0L : 1.0L);
    }
}

TEST_CASE("a CPU tensor's exp does not depend on where the plugin splits it", "[host][vector-math]") {
    // The same values at every position of a vector and of a thread's chunk:
    // a long tensor of one repeated block gives the block's results repeated.
    std::vector<float> block{-1.5f, 0.25f, 3.0f, 7.75f, -30.0f, 0.1f, 2.5f};
    std::vector<float> x;
    while (x.size() < 100000) x.insert(x.end(), block.begin(), block.end());
    const std::vector<float> one = plexus::array(block).exp().to_vector<float>();
    const std::vector<float> all = plexus::array(x).exp().to_vector<float>();
    size_t differ = 0;
    for (size_t i = 0; i < all.size(); ++i) differ += !same_bits(all[i], one[i % block.size()]);
    CHECK(differ == 0);
}

TEST_CASE("x ** 2 on a CPU tensor is x * x bit for bit and std::pow's value on the specials", "[host][vector-math]") {
    const std::vector<float> x = inputs<float>();
    const std::vector<float> got = plexus::array(x).pow(2.0).to_vector<float>();
    REQUIRE(got.size() == x.size());
    size_t differ = 0;
    for (size_t i = 0; i < x.size(); ++i) differ += !same_bits(got[i], x[i] * x[i]);
    CHECK(differ == 0);
    for (size_t i = 0; i < specials<float>().size(); ++i) {  // NaN, infinities, -0.0, denormals, overflow
        INFO("x = " << x[i]);
        CHECK(same_bits(got[i], std::pow(x[i], 2.0f)));
    }
    const std::vector<double> xd = inputs<double>();
    const std::vector<double> gd = plexus::array(xd).pow(2.0).to_vector<double>();
    differ = 0;
    for (size_t i = 0; i < xd.size(); ++i) differ += !same_bits(gd[i], xd[i] * xd[i]);
    CHECK(differ == 0);
    // Other exponents still go through pow: 3 is not x * x; and a scalar
    // base (2 ** x) is the left operand.
    CHECK(plexus::array({1.5f}).pow(3.0).to_vector<float>()[0] == 3.375f);
    CHECK(plexus::array({4.0f}).pow(0.5).to_vector<float>()[0] == 2.0f);
    CHECK(plexus::pow(2.0, plexus::array(std::vector<double>{0.5, 3.0, -2.0})).to_vector<double>() ==
          std::vector<double>{std::pow(2.0, 0.5), 8.0, 0.25});
}
