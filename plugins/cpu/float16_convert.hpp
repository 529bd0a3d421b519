// float32 <-> float16 over contiguous arrays with F16C (8 elements an
// instruction): the bits of plexus/half.h, which the conformance suite's
// casts check on all 65,536 float16 patterns and on float32's edge cases.
#pragma once

#include <cstdint>
#include <type_traits>

#include "plexus/cpp/half.hpp"

namespace pxcpu {

// A conversion of n elements, or nullptr where the CPU lacks F16C and AVX2
// or the plugin was lowered to its baseline loops (PLEXUS_CPU_ISA).
using WidenFloat16 = void (*)(const uint16_t* in, float* out, int64_t n);
using NarrowToFloat16 = void (*)(const float* in, uint16_t* out, int64_t n);
WidenFloat16 float16_widen_f16c();
NarrowToFloat16 float16_narrow_f16c();

// n 16-bit floats as float32, and back rounded once: F16C for float16 where
// the plugin may use it; bfloat16's conversions vectorize as written.
template <class H>
void widen_to_float(const H* in, float* out, int64_t n) {
    if constexpr (std::is_same_v<H, plexus::float16>)
        if (auto widen = float16_widen_f16c()) return widen(reinterpret_cast<const uint16_t*>(in), out, n);
    for (int64_t i = 0; i < n; ++i) out[i] = float(in[i]);
}
template <class H>
void narrow_from_float(const float* in, H* out, int64_t n) {
    if constexpr (std::is_same_v<H, plexus::float16>)
        if (auto narrow = float16_narrow_f16c()) return narrow(in, reinterpret_cast<uint16_t*>(out), n);
    for (int64_t i = 0; i < n; ++i) out[i] = H(in[i]);
}

}  // namespace pxcpu
