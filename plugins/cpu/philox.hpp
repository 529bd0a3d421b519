// Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3",
// SC'11): a counter-based generator, so element i of a random tensor depends
// only on (seed, counter) and not on how the work is split. The reference
// generator of px_random_attrs; a GPU plugin can reproduce it exactly.
#pragma once

#include <cstdint>

namespace pxcpu {

struct Philox4x32 {
    uint32_t v[4];
};

// Counter (c0, c1) = the 64-bit counter, (c2, c3) = 0; key = the 64-bit seed.
inline Philox4x32 philox4x32_10(uint64_t counter, uint64_t seed) {
    uint32_t c[4] = {static_cast<uint32_t>(counter), static_cast<uint32_t>(counter >> 32), 0, 0};
    uint32_t k0 = static_cast<uint32_t>(seed), k1 = static_cast<uint32_t>(seed >> 32);
    for (int round = 0; round < 10; ++round) {
        if (round > 0) k0 += 0x9E3779B9u, k1 += 0xBB67AE85u;
        uint64_t p0 = uint64_t(0xD2511F53u) * c[0];
        uint64_t p1 = uint64_t(0xCD9E8D57u) * c[2];
        uint32_t out[4] = {static_cast<uint32_t>(p1 >> 32) ^ c[1] ^ k0, static_cast<uint32_t>(p1),
                           static_cast<uint32_t>(p0 >> 32) ^ c[3] ^ k1, static_cast<uint32_t>(p0)};
        for (int i = 0; i < 4; ++i) c[i] = out[i];
    }
    return {{c[0], c[1], c[2], c[3]}};
}

// Uniform in [0, 1) with 24 (float) or 53 (double) random bits.
inline float uniform_float(uint32_t x) { return static_cast<float>(x >> 8) * (1.0f / 16777216.0f); }
inline double uniform_double(uint32_t hi, uint32_t lo) {
    uint64_t bits = (uint64_t(hi) << 21) | (lo >> 11);  // 32 + 21 = 53 bits
    return static_cast<double>(bits) * (1.0 / 9007199254740992.0);
}

}  // namespace pxcpu
