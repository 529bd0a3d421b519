// float32 <-> float16 with F16C. Rounding is the instruction's, to nearest
// even, subnormals kept; a NaN, which it quiets keeping payload bits, becomes
// the quiet NaN of its sign, as half.h rounds it.
#include "float16_convert.hpp"

#include <cpuid.h>
#include <immintrin.h>

#include <cstring>

#include "conv_direct.hpp"
#include "plexus/half.h"

namespace pxcpu {
namespace {

__attribute__((target("avx2,f16c"))) void widen(const uint16_t* in, float* out, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i))));
    for (; i < n; ++i) out[i] = px_float16_to_float(in[i]);
}

__attribute__((target("avx2,f16c"))) void narrow(const float* in, uint16_t* out, int64_t n) {
    const __m128i magnitude = _mm_set1_epi16(0x7FFF), infinity = _mm_set1_epi16(0x7C00);
    const __m128i sign = _mm_set1_epi16(static_cast<int16_t>(0x8000)), quiet_nan = _mm_set1_epi16(0x7E00);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT);
        const __m128i nan = _mm_cmpgt_epi16(_mm_and_si128(h, magnitude), infinity);
        h = _mm_blendv_epi8(h, _mm_or_si128(_mm_and_si128(h, sign), quiet_nan), nan);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), h);
    }
    for (; i < n; ++i) out[i] = px_float_to_float16(in[i]);
}

bool usable() {
    static const bool cpu_has = [] {
        __builtin_cpu_init();
        unsigned a = 0, b = 0, c = 0, d = 0;  // F16C is CPUID leaf 1's ECX bit 29 (clang's builtin lacks the name)
        return __builtin_cpu_supports("avx2") && __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) != 0;
    }();
    return cpu_has && std::strcmp(direct_conv_isa().name, "baseline") != 0;
}

}  // namespace

WidenFloat16 float16_widen_f16c() { return usable() ? &widen : nullptr; }
NarrowToFloat16 float16_narrow_f16c() { return usable() ? &narrow : nullptr; }

}  // namespace pxcpu
