// The reference generator against the known-answer vectors of Random123
// (kat_vectors: philox4x32 10 rounds).
#include <catch2/catch.hpp>

#include <cmath>

#include "plexus/philox.h"

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
