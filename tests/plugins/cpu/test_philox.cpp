// The reference generator against the known-answer vectors of Random123
// (kat_vectors: philox4x32 10 rounds).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <vector>

#include "plexus/plexus.hpp"

#include "plexus/philox.h"
#include "sleef_reference.hpp"

TEST_CASE("Philox4x32-10 matches the Random123 known answers", "[host][random]") {
    auto zero = px_philox4x32_10(0, 0);
    CHECK(zero.v[0] == 0x6627e8d5u);
    CHECK(zero.v[1] == 0xe169c58du);
    CHECK(zero.v[2] == 0xbc57ac4cu);
    CHECK(zero.v[3] == 0x9b00dbd8u);
}

TEST_CASE("uniform conversions stay below 1", "[host][random]") {
    CHECK(px_uniform_float(0) == 0.0f);
    CHECK(px_uniform_float(0xffffffffu) < 1.0f);
    CHECK(px_uniform_double(0xffffffffu, 0xffffffffu) < 1.0);
    CHECK(px_uniform_double(0, 0) == 0.0);
}

TEST_CASE("px_random_value: uniform draws from the Philox words, normal ones around the mean", "[host][random]") {
    // Counter 0, seed 0: the first word is 0x6627e8d5, so the float32 uniform is 0x6627e8 / 2^24.
    const double u = double(0x6627e8) / 16777216.0;
    CHECK(px_random_value(0, 0, 0, 0, 0, -1.0, 3.0) == -1.0 + 4.0 * u);
    double sum = 0, sq = 0;
    for (int64_t i = 0; i < 20000; ++i) {
        double uw = px_random_value(5, 100, i, 1, 0, 2.0, 2.5);
        REQUIRE(uw >= 2.0);
        REQUIRE(uw < 2.5);
        double z = px_random_value(5, 100, i, 1, 1, 1.0, 2.0);
        sum += z, sq += z * z;
    }
    const double mean = sum / 20000, var = sq / 20000 - mean * mean;
    CHECK(std::fabs(mean - 1.0) < 0.05);
    CHECK(std::fabs(var - 4.0) < 0.2);
}

namespace {
// Philox4x32-10 as the paper writes it (the key bumped after each round): the
// reference for the branch-free rounds in philox.h.
px_philox4x32 philox_as_written(uint64_t counter, uint64_t seed) {
    uint32_t c[4] = {uint32_t(counter), uint32_t(counter >> 32), 0, 0}, k0 = uint32_t(seed), k1 = uint32_t(seed >> 32);
    for (int round = 0; round < 10; ++round) {
        const uint64_t p0 = uint64_t(0xD2511F53u) * c[0], p1 = uint64_t(0xCD9E8D57u) * c[2];
        const uint32_t n[4] = {uint32_t(p1 >> 32) ^ c[1] ^ k0, uint32_t(p1), uint32_t(p0 >> 32) ^ c[3] ^ k1, uint32_t(p0)};
        for (int j = 0; j < 4; ++j) c[j] = n[j];
        k0 += 0x9E3779B9u, k1 += 0xBB67AE85u;
    }
    return {{c[0], c[1], c[2], c[3]}};
}
}  // namespace

TEST_CASE("the branch-free rounds and dropout's integer test agree with Philox as written", "[host][random]") {
    uint64_t counter = 0x0123456789ABCDEFull, seed = 0xFEDCBA9876543210ull;
    for (int k = 0; k < 2000; ++k) {
        counter = counter * 6364136223846793005ull + 1442695040888963407ull;  // spread over the 64 bits
        seed ^= counter >> 7;
        const px_philox4x32 got = px_philox4x32_10(counter, seed), want = philox_as_written(counter, seed);
        for (int j = 0; j < 4; ++j) REQUIRE(got.v[j] == want.v[j]);
        // keeps(i) == (u >= p) for the draw u, at p equal to u (kept), just
        // above it (dropped), and at a few fixed rates.
        const double u = px_uniform_double(want.v[0], want.v[1]);
        for (double p : {u, std::nextafter(u, 1.0), 0.0, 0.1, 0.5, 0.999999}) {
            INFO("draw " << k << ", u " << u << ", p " << p);
            REQUIRE(px_dropout_keeps(seed, counter, 0, p) == (u >= p ? 1 : 0));
        }
    }
}

// The CPU plugin draws in loops compiled per instruction set (AVX-512 here
// when the CPU has it); they must give this header's values, computed here
// by the baseline compiler. Bounds whose (b - a) * u rounds are the ones a
// fused multiply-add would change. A normal is px_normal_from's formula with
// SLEEF's log and cos (vectorized in the plugin, scalar here, of the kind the
// plugin's loops use: sleef_reference.hpp).
TEST_CASE("the CPU plugin's random tensors are px_random_value's uniforms and Box-Muller normals bit for bit",
          "[host][random]") {
    const double a = -0.7071067811865476, b = 0.3183098861837907;
    const pxtest::SleefReference& sleef = pxtest::sleef_reference();
    for (int wide : {0, 1})
        for (int normal : {0, 1}) {
            INFO((wide ? "float64 " : "float32 ") << (normal ? "normal" : "uniform"));
            const plexus::DType d = wide ? plexus::DType::float64 : plexus::DType::float32;
            plexus::seed(11);
            plexus::random_uniform({3}, 0, 1, plexus::cpu(), d);  // the next tensor starts at offset 3
            plexus::Tensor t = normal ? plexus::random_normal({70001}, a, b, plexus::cpu(), d)
                                      : plexus::random_uniform({70001}, a, b, plexus::cpu(), d);
            const std::vector<double> got = wide ? t.to_vector<double>() : [&] {
                const std::vector<float> f = t.to_vector<float>();
                return std::vector<double>(f.begin(), f.end());
            }();
            size_t differ = 0;
            for (int64_t i = 0; i < 70001; ++i) {
                const px_uniform_pair u = px_random_uniforms(11, 3, i, wide);
                const double v = normal ? px_add_rn(a, px_mul_rn(b, std::sqrt(-2.0 * sleef.log(1.0 - u.u1)) *
                                                                       sleef.cos(6.283185307179586 * u.u2)))
                                        : px_random_value(11, 3, i, wide, 0, a, b);
                // The formula is px_normal_from's: libm's log and cos give nearly the same.
                if (normal) REQUIRE(std::fabs(v - px_random_value(11, 3, i, wide, 1, a, b)) < 1e-14);
                const double want = wide ? v : double(float(v));
                uint64_t got_bits = 0, want_bits = 0;  // the bits, so -0.0 and 0.0 differ
                std::memcpy(&got_bits, &got[size_t(i)], sizeof got_bits);
                std::memcpy(&want_bits, &want, sizeof want_bits);
                differ += got_bits != want_bits;
            }
            CHECK(differ == 0);
        }
}
