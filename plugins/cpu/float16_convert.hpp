// float32 <-> float16 over contiguous arrays with F16C (8 elements an
// instruction): the bits of plexus/half.h, which the conformance suite's
// casts check on all 65,536 patterns both ways.
#pragma once

#include <cstdint>

namespace pxcpu {

// A conversion of n elements, or nullptr where the CPU lacks F16C and AVX2
// or the plugin was lowered to its baseline loops (PLEXUS_CPU_ISA).
using WidenFloat16 = void (*)(const uint16_t* in, float* out, int64_t n);
using NarrowToFloat16 = void (*)(const float* in, uint16_t* out, int64_t n);
WidenFloat16 float16_widen_f16c();
NarrowToFloat16 float16_narrow_f16c();

}  // namespace pxcpu
