// The reference generator against the known-answer vectors of Random123
// (kat_vectors: philox4x32 10 rounds).
#include <catch2/catch.hpp>

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
