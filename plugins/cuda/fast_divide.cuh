// Division of a 32-bit index by a divisor fixed before a launch, as a
// multiply-high, an add and a shift (Granlund and Montgomery, "Division by
// invariant integers using multiplication", 1994; PyTorch's IntDivider does
// the same). A 64-bit division is a long software routine on NVIDIA GPUs,
// and a strided walk divides once per axis for every element it visits.
// Plain C++ as well, so the emulator and a host test run the same code.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define PX_HOST_DEVICE __host__ __device__
#else
#define PX_HOST_DEVICE
#endif

namespace pxcuda {

struct FastDivide {
    static constexpr uint32_t kLimit = 0x80000000u;  // divisors and dividends stay below 2^31

    uint32_t divisor = 1, magic = 1, shift = 0;

    FastDivide() = default;
    // For 1 <= d < 2^31: shift is the smallest s with 2^s >= d, and magic is
    // the low 32 bits of floor(2^(32+s) / d) + 1, so that
    // n / d == (mulhi(n, magic) + n) >> shift for every n < 2^31.
    explicit FastDivide(uint32_t d) : divisor(d) {
        while ((uint64_t(1) << shift) < d) ++shift;
        magic = uint32_t(((uint64_t(1) << 32) * ((uint64_t(1) << shift) - d)) / d + 1);
    }
    PX_HOST_DEVICE uint32_t quotient(uint32_t n) const {
        const uint32_t high = uint32_t((uint64_t(n) * magic) >> 32);  // mul.hi.u32 on the GPU
        return (high + n) >> shift;  // < 2^32: high <= n < 2^31
    }
};

}  // namespace pxcuda
