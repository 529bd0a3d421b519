// The CUDA plugin's division by multiplication (plugins/cuda/fast_divide.cuh),
// which its strided walks run on the GPU: checked here against the
// processor's division, divisor by divisor, at the edges where a wrong
// magic number or shift shows (around multiples of the divisor and 2^31)
// and at random.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "fast_divide.cuh"

namespace {

uint64_t next(uint64_t& state) {  // xorshift64
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    return state;
}

}  // namespace

TEST_CASE("The CUDA plugin's fast division equals integer division for every divisor and dividend tried",
          "[cuda-index]") {
    constexpr uint32_t limit = pxcuda::FastDivide::kLimit;  // 2^31
    std::vector<uint32_t> divisors;
    for (uint32_t d = 1; d <= 4096; ++d) divisors.push_back(d);
    for (int k = 12; k < 31; ++k)
        for (int64_t d : {(int64_t(1) << k) - 1, int64_t(1) << k, (int64_t(1) << k) + 1}) divisors.push_back(uint32_t(d));
    divisors.push_back(limit - 1);
    uint64_t state = 0x9E3779B97F4A7C15ull;
    for (int i = 0; i < 4000; ++i) divisors.push_back(uint32_t(next(state) % (limit - 1)) + 1);

    uint64_t checked = 0, wrong = 0;
    uint32_t first_d = 0, first_n = 0;
    for (uint32_t d : divisors) {
        const pxcuda::FastDivide f(d);
        REQUIRE(f.divisor == d);
        std::vector<uint64_t> dividends{0, 1, d - 1u, d, d + 1u, 2ull * d - 1, 2ull * d, limit - 1u, limit - 2u};
        const uint64_t top = (limit - 1u) / d * d;  // the largest multiple of d below 2^31
        for (uint64_t n : {top - 1, top, top + 1}) dividends.push_back(n);
        for (int i = 0; i < 300; ++i) dividends.push_back(next(state) % limit);
        for (int i = 0; i < 50; ++i) {  // near random multiples
            const uint64_t m = (next(state) % (limit / d)) * d;
            dividends.push_back(m), dividends.push_back(m + d - 1);
            if (m > 0) dividends.push_back(m - 1);
        }
        for (uint64_t n : dividends) {
            if (n >= limit) continue;
            ++checked;
            if (f.quotient(uint32_t(n)) != uint32_t(n / d) && wrong++ == 0) first_d = d, first_n = uint32_t(n);
        }
    }
    INFO(checked << " divisions checked; the first wrong one: " << first_n << " / " << first_d);
    CHECK(checked > 3000000);
    CHECK(wrong == 0);
}
