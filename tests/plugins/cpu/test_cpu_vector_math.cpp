// The CPU plugin's exp, log, tanh and sigmoid: SLEEF's deterministic float64
// functions, vectorized for the plugin's instruction set (CTest runs this
// file once per set the CPU has: cpu_plugin.math_random_and_sums_with_*_loops).
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
#include "../../math_accuracy.hpp"
#include "sleef_reference.hpp"

namespace {

using pxtest::same_bits;
using Fn = pxtest::MathFn;

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

// The plugin's f over the inputs: SLEEF's bits (float32 rounded once from
// float64), and no further than max_ulps from glibc's long double value.
template <class T>
void check(Fn f, long double max_ulps) {
    const std::vector<T> x = pxtest::math_inputs<T>();
    const std::vector<T> got = pxtest::apply(f, plexus::array(x)).template to_vector<T>();
    REQUIRE(got.size() == x.size());
    size_t differ = 0;
    for (size_t i = 0; i < x.size(); ++i) differ += !same_bits(got[i], T(sleef(f, double(x[i]))));
    CHECK(differ == 0);
    const pxtest::WorstError<T> worst = pxtest::worst_error(f, x, got);
    INFO("worst at x = " << worst.at << ": got " << worst.got);
    CHECK(worst.ulps <= max_ulps);
}

}  // namespace

TEST_CASE("the CPU plugin's exp log tanh and sigmoid are SLEEF's float64 functions",
          "[host][vector-math]") {
    INFO("cpu(0): " << plexus::device_info(plexus::cpu()).name);  // names its instruction set
    for (Fn f : pxtest::kMathFns) {
        INFO(pxtest::name(f));
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
    const std::vector<float> x = pxtest::math_inputs<float>();
    const std::vector<float> got = plexus::array(x).pow(2.0).to_vector<float>();
    REQUIRE(got.size() == x.size());
    size_t differ = 0;
    for (size_t i = 0; i < x.size(); ++i) differ += !same_bits(got[i], x[i] * x[i]);
    CHECK(differ == 0);
    for (size_t i = 0; i < pxtest::math_specials<float>().size(); ++i) {  // NaN, infinities, -0.0, denormals, overflow
        INFO("x = " << x[i]);
        CHECK(same_bits(got[i], std::pow(x[i], 2.0f)));
    }
    const std::vector<double> xd = pxtest::math_inputs<double>();
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
