// The CPU plugin's sums along contiguous runs (sum and mean over the last
// axis, and over all axes): the order of the additions is fixed by the
// plugin (kernels_reduce.cpp, SumRunLoop), not by the instruction set it was
// compiled for, so CTest runs this file once per set the CPU has
// (cpu_plugin.math_random_and_sums_with_*_loops) and each must give the bits of
// that order, written out again here. The values span 2^-20..2^20, so another
// order gives other bits. Accuracy is checked against a long double sum.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "plexus/plexus.hpp"
#include "task.hpp"  // parallel_grain: the chunks of a sum over all axes
#include "../../math_accuracy.hpp"

namespace {

using pxtest::same_bits;

// The plugin's order: 32 partial sums, lane l taking elements l, l + 32, ...
// of the whole groups of 32, met as a halving tree, then the tail in order.
template <class S, class T>
S sum_in_plugin_order(const T* p, int64_t n) {
    constexpr int64_t kLanes = 32;
    const int64_t full = n / kLanes * kLanes;
    S s = 0;
    if (full > 0) {
        S lane[kLanes] = {};
        for (int64_t i = 0; i < full; i += kLanes)
            for (int64_t l = 0; l < kLanes; ++l) lane[l] += static_cast<S>(p[i + l]);
        for (int64_t w = kLanes / 2; w >= 1; w /= 2)
            for (int64_t l = 0; l < w; ++l) lane[l] += lane[l + w];
        s = lane[0];
    }
    for (int64_t i = full; i < n; ++i) s += static_cast<S>(p[i]);
    return s;
}

// Values of both signs whose magnitudes span 2^-20..2^20.
template <class T>
std::vector<T> spread_values(size_t n, uint32_t seed) {
    std::mt19937 gen(seed);
    std::uniform_real_distribution<double> mantissa(-1.0, 1.0);
    std::uniform_int_distribution<int> exponent(-20, 20);
    std::vector<T> v(n);
    for (T& x : v) x = static_cast<T>(std::ldexp(mantissa(gen), exponent(gen)));
    return v;
}

// The row sums and means of a (rows, n) tensor, bit for bit in the plugin's
// order, and each within float64 rounding of the exact sum.
template <class T>
void check_rows(int64_t rows, int64_t n) {
    INFO("rows " << rows << " of " << n);
    const std::vector<T> x = spread_values<T>(size_t(rows * n), uint32_t(n));
    const plexus::Tensor t = plexus::array(x, {rows, n});
    const std::vector<T> sums = t.sum(1).template to_vector<T>();
    const std::vector<T> means = t.mean(1).template to_vector<T>();
    REQUIRE(sums.size() == size_t(rows));
    for (int64_t r = 0; r < rows; ++r) {
        const T* row = x.data() + r * n;
        const double s = sum_in_plugin_order<double>(row, n);
        CHECK(same_bits(sums[size_t(r)], static_cast<T>(s)));
        if (n > 0) CHECK(same_bits(means[size_t(r)], static_cast<T>(s / double(n))));
        long double exact = 0, magnitude = 0;
        for (int64_t i = 0; i < n; ++i) exact += row[i], magnitude += std::fabs(static_cast<long double>(row[i]));
        CHECK(std::fabs(static_cast<long double>(s) - exact) <=
              n * std::numeric_limits<double>::epsilon() * magnitude);
    }
}

}  // namespace

TEST_CASE("the CPU plugin sums float rows in its fixed order on every instruction set", "[host][sums]") {
    INFO("cpu(0): " << plexus::device_info(plexus::cpu()).name);  // names its instruction set
    for (int64_t n : {1, 5, 31, 32, 33, 63, 64, 65, 1000, 4096 + 17}) {
        check_rows<float>(3, n);
        check_rows<double>(3, n);
    }
}

TEST_CASE("the CPU plugin's sum over all axes adds its chunks' sums in order", "[host][sums]") {
    // Long enough to be split into chunks of parallel_grain over the threads.
    const int64_t grain = pxcpu::parallel_grain, n = 3 * grain + 77;
    // float64, whose sum shows the order in its last bits (float32 rounds them off).
    const std::vector<double> x = spread_values<double>(size_t(n), 7);
    double want = 0;
    for (int64_t c = 0; c < n; c += grain) want += sum_in_plugin_order<double>(x.data() + c, std::min(grain, n - c));
    const plexus::Tensor t = plexus::array(x);
    CHECK(same_bits(t.sum().item<double>(), want));
    CHECK(same_bits(t.mean().item<double>(), want / double(n)));
}

TEST_CASE("the CPU plugin's integer row sums are exact and wrap as int64", "[host][sums]") {
    const int64_t n = 100;
    std::vector<int32_t> small(size_t(2 * n));
    for (int64_t i = 0; i < 2 * n; ++i) small[size_t(i)] = std::numeric_limits<int32_t>::max() - int32_t(i);
    const std::vector<int64_t> sums = plexus::array(small, {2, n}).sum(1).to_vector<int64_t>();
    // Row r holds max - r*n - i for i < n: no int32 wrap, the whole int64 sum.
    for (int64_t r = 0; r < 2; ++r)
        CHECK(sums[size_t(r)] == n * int64_t(std::numeric_limits<int32_t>::max()) - (r * n * n + n * (n - 1) / 2));
    std::vector<int64_t> big(40, 1);
    big[0] = std::numeric_limits<int64_t>::max();  // + 39 ones wraps, as NumPy's int64 sum does
    CHECK(plexus::array(big, {1, 40}).sum(1).to_vector<int64_t>()[0] == std::numeric_limits<int64_t>::min() + 38);
}

namespace {

// Batch normalisation's channel sums in the plugin's order
// (kernels_batch_norm.cpp, ChannelSumsLoop): 32 partial sums, lane l taking
// the elements at l, l + 32, ... of each sample's row of the channel, the
// rows in order, met as a halving tree.
template <class F>
double channel_sum_in_plugin_order(int64_t rows, int64_t inner, F term) {
    constexpr int64_t kLanes = 32;
    double lane[kLanes] = {};
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t i = 0; i < inner; ++i) lane[i % kLanes] += term(r, i);
    for (int64_t w = kLanes / 2; w >= 1; w /= 2)
        for (int64_t l = 0; l < w; ++l) lane[l] += lane[l + w];
    return lane[0];
}

}  // namespace

TEST_CASE("the CPU plugin's batch normalisation and bias gradient sums are in its fixed order on every instruction set",
          "[host][sums]") {
    // float64, whose sums show the order in their last bits; planes from 4x4
    // (fewer values than lanes) to 28x28, and one of 33 (a partial block).
    for (int64_t inner : {1, 16, 33, 49, 784}) {
        INFO("3 samples, 2 channels of " << inner);
        const int64_t n = 3, c = 2;
        const std::vector<double> x = spread_values<double>(size_t(n * c * inner), uint32_t(inner)),
                                  dy = spread_values<double>(size_t(n * c * inner), uint32_t(inner + 1));
        const plexus::Tensor tx = plexus::array(x, {n, c, inner}), tdy = plexus::array(dy, {n, c, inner});
        px_tensor *mean = nullptr, *var = nullptr, *dgamma = nullptr, *dbeta = nullptr;
        plexus::check(px_batch_norm_stats(tx.handle(), &mean, &var));
        const plexus::Tensor tmean(mean), tvar(var), gamma = plexus::ones({c}, plexus::cpu(), plexus::DType::float64);
        plexus::check(
            px_batch_norm_backward(tx.handle(), tdy.handle(), mean, var, gamma.handle(), 1e-5, nullptr, &dgamma, &dbeta));
        px_tensor* dbias = nullptr;
        plexus::check(px_bias_grad(tdy.handle(), &dbias));
        const plexus::Tensor tdgamma(dgamma), tdbeta(dbeta), tdbias(dbias);
        const std::vector<double> means = tmean.to_vector<double>(), vars = tvar.to_vector<double>(),
                                  dgammas = tdgamma.to_vector<double>(), dbetas = tdbeta.to_vector<double>(),
                                  dbiases = tdbias.to_vector<double>();
        const double m = double(n * inner);
        for (int64_t ch = 0; ch < c; ++ch) {
            auto at = [&](const std::vector<double>& v, int64_t r, int64_t i) { return v[size_t((r * c + ch) * inner + i)]; };
            const double mu = channel_sum_in_plugin_order(n, inner, [&](int64_t r, int64_t i) { return at(x, r, i); }) / m;
            const double sq = channel_sum_in_plugin_order(n, inner, [&](int64_t r, int64_t i) {
                const double d = at(x, r, i) - mu;
                return d * d;
            });
            const double sdy = channel_sum_in_plugin_order(n, inner, [&](int64_t r, int64_t i) { return at(dy, r, i); });
            const double sdev = channel_sum_in_plugin_order(
                n, inner, [&](int64_t r, int64_t i) { return at(dy, r, i) * (at(x, r, i) - mu); });
            CHECK(same_bits(means[size_t(ch)], mu));
            CHECK(same_bits(vars[size_t(ch)], sq / m));
            CHECK(same_bits(dbetas[size_t(ch)], sdy));
            if (inner > 1) CHECK(same_bits(dbiases[size_t(ch)], sdy));  // (N, C) is a dense layer's: sum_columns
            CHECK(same_bits(dgammas[size_t(ch)], 1.0 / std::sqrt(vars[size_t(ch)] + 1e-5) * sdev));
        }
    }
}
