/* The 16-bit floating-point formats of PX_FLOAT16 (IEEE 754 binary16: 1 sign,
 * 5 exponent, 10 fraction bits) and PX_BFLOAT16 (1, 8, 7: float32's top half),
 * and their conversions, the reference every plugin's astype must match bit
 * for bit. Values are stored as their bit patterns (uint16_t).
 *
 * To a 16-bit format: rounded to nearest, ties to even, once (a float64 goes
 * there directly, not through float32); overflow gives infinity, as IEEE
 * says; subnormals are kept, not flushed; infinities and signed zeros are
 * kept; a NaN becomes the quiet NaN of its sign (0x7E00 / 0x7FC0, the sign
 * bit added), its payload not kept. From a 16-bit format to float32 or
 * float64 every value is exact; a NaN stays NaN, made quiet, its payload kept.
 *
 * Pure C99 on bits (no rounding mode or flush-to-zero setting can change a
 * result); usable in CUDA device code. Not part of the plugin table: a
 * plugin compiles it in. */
#ifndef PLEXUS_HALF_H
#define PLEXUS_HALF_H

#include <stdint.h>
#include <string.h>

#if defined(__CUDACC__)
#define PX_HALF_FN static inline __host__ __device__
#else
#define PX_HALF_FN static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

PX_HALF_FN uint64_t px_half_double_bits_(double x) {
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
}

/* A float32's bits as the float64 of the same value, by bits alone (a GPU's
 * conversion would turn every NaN into one canonical NaN, its sign lost). */
PX_HALF_FN uint64_t px_half_float_as_double_bits_(float x) {
    uint32_t f;
    uint64_t frac;
    int e;
    memcpy(&f, &x, sizeof f);
    frac = f & 0x7FFFFFu;
    e = (int)((f >> 23) & 0xFF);
    if (e == 0xFF) return ((uint64_t)(f >> 31) << 63) | 0x7FF0000000000000ull | (frac << 29);
    if (e == 0) {
        if (!frac) return (uint64_t)(f >> 31) << 63;
        e = 1; /* subnormal: normalize */
        while (!(frac & 0x800000u)) {
            frac <<= 1;
            --e;
        }
        frac &= 0x7FFFFFu;
    }
    return ((uint64_t)(f >> 31) << 63) | ((uint64_t)(e - 127 + 1023) << 52) | (frac << 29);
}

/* A float64 (as bits) rounded to the 16-bit format of `exp_bits` exponent and
 * `frac_bits` fraction bits. */
PX_HALF_FN uint16_t px_half_round_(uint64_t u, int exp_bits, int frac_bits) {
    const uint16_t sign = (uint16_t)((u >> 48) & 0x8000u);
    const uint64_t a = u & 0x7FFFFFFFFFFFFFFFull;
    const int bias = (1 << (exp_bits - 1)) - 1, top = (1 << exp_bits) - 1;
    const uint16_t inf = (uint16_t)(sign | (top << frac_bits));
    int e;
    int shift;
    uint64_t sig, r, rem, half;
    if (a > 0x7FF0000000000000ull) return (uint16_t)(inf | (1u << (frac_bits - 1))); /* NaN: quiet */
    if (a == 0x7FF0000000000000ull) return inf;
    if ((a >> 52) == 0) return sign; /* float64 zeros and subnormals are far below half the least subnormal */
    e = (int)(a >> 52) - 1023 + bias;  /* the biased exponent in the target format */
    sig = (a & 0x000FFFFFFFFFFFFFull) | 0x0010000000000000ull; /* 53 bits */
    shift = 52 - frac_bits + (e < 1 ? 1 - e : 0);
    if (shift > 54) return sign; /* below half the least subnormal */
    r = sig >> shift;
    rem = sig & ((1ull << shift) - 1);
    half = 1ull << (shift - 1);
    if (rem > half || (rem == half && (r & 1))) ++r;
    if (e < 1) return (uint16_t)(sign | r); /* subnormal, or rounded up to the least normal */
    if (r >> (frac_bits + 1)) {           /* rounded up to the next power of two */
        r >>= 1;
        ++e;
    }
    if (e >= top) return inf;
    return (uint16_t)(sign | ((uint64_t)e << frac_bits) | (r & ((1ull << frac_bits) - 1)));
}

/* A 16-bit value's bits in the wider format of `to_exp` exponent and
 * `to_frac` fraction bits (float32 or float64): exact; a NaN made quiet, its
 * payload in the fraction's top bits. */
PX_HALF_FN uint64_t px_half_widen_(uint16_t h, int exp_bits, int frac_bits, int to_exp, int to_frac) {
    const uint64_t sign = (uint64_t)(h >> 15) << (to_exp + to_frac);
    const int bias = (1 << (exp_bits - 1)) - 1, top = (1 << exp_bits) - 1;
    const int to_bias = (1 << (to_exp - 1)) - 1;
    const uint64_t to_top = ((uint64_t)1 << to_exp) - 1;
    const int e = (h & 0x7FFF) >> frac_bits;
    uint64_t frac = h & ((1u << frac_bits) - 1);
    int exp = e - bias + to_bias;
    if (e == top) /* infinity, or NaN made quiet with its payload */
        return sign | (to_top << to_frac) | (frac ? ((uint64_t)1 << (to_frac - 1)) | (frac << (to_frac - frac_bits)) : 0);
    if (e == 0) {
        if (!frac) return sign;
        /* A subnormal stays one where the exponents are as wide (bfloat16 to float32) */
        if (to_bias == bias) return sign | (frac << (to_frac - frac_bits));
        exp = 1 - bias + to_bias; /* else normalized */
        while (!(frac & (1u << frac_bits))) {
            frac <<= 1;
            --exp;
        }
        frac &= (1u << frac_bits) - 1;
    }
    return sign | ((uint64_t)exp << to_frac) | (frac << (to_frac - frac_bits));
}

PX_HALF_FN float px_half_widen_float_(uint16_t h, int exp_bits, int frac_bits) {
    const uint32_t bits = (uint32_t)px_half_widen_(h, exp_bits, frac_bits, 8, 23);
    float x;
    memcpy(&x, &bits, sizeof x);
    return x;
}

PX_HALF_FN double px_half_widen_double_(uint16_t h, int exp_bits, int frac_bits) {
    const uint64_t bits = px_half_widen_(h, exp_bits, frac_bits, 11, 52);
    double x;
    memcpy(&x, &bits, sizeof x);
    return x;
}

PX_HALF_FN uint16_t px_double_to_float16(double x) { return px_half_round_(px_half_double_bits_(x), 5, 10); }
PX_HALF_FN uint16_t px_double_to_bfloat16(double x) { return px_half_round_(px_half_double_bits_(x), 8, 7); }
/* A float32 is a float64 exactly, then rounded once. */
PX_HALF_FN uint16_t px_float_to_float16(float x) { return px_half_round_(px_half_float_as_double_bits_(x), 5, 10); }
/* bfloat16 is float32's top half: rounding is an integer add on the bits,
 * the same result as px_half_round_ for each of the 2^32 floats, without a
 * branch, so a loop of it vectorizes. */
PX_HALF_FN uint16_t px_float_to_bfloat16(float x) {
    uint32_t u;
    uint32_t rounded, quiet_nan;
    memcpy(&u, &x, sizeof u);
    rounded = (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
    quiet_nan = ((u >> 16) & 0x8000u) | 0x7FC0u;
    return (uint16_t)((u & 0x7FFFFFFFu) > 0x7F800000u ? quiet_nan : rounded);
}
PX_HALF_FN float px_float16_to_float(uint16_t h) { return px_half_widen_float_(h, 5, 10); }
/* A shift, a NaN made quiet: px_half_widen_'s result for each pattern. */
PX_HALF_FN float px_bfloat16_to_float(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float x;
    if ((h & 0x7FFFu) > 0x7F80u) u |= 0x00400000u;
    memcpy(&x, &u, sizeof x);
    return x;
}
PX_HALF_FN double px_float16_to_double(uint16_t h) { return px_half_widen_double_(h, 5, 10); }
PX_HALF_FN double px_bfloat16_to_double(uint16_t h) { return px_half_widen_double_(h, 8, 7); }

/* A uint64 as a float64 rounded to odd (the last kept bit set when any bit
 * below it is lost), so that rounding it again to 16 bits gives the
 * integer's own nearest-even value: one rounding, as from a float64. */
PX_HALF_FN double px_half_uint64_to_odd_double_(uint64_t m) {
    uint64_t kept = m;
    int bits = 0;
    while (bits < 64 && (m >> bits) >> 53) ++bits; /* the low bits float64 cannot hold */
    if (bits) {
        kept = (m >> bits) << bits;
        if (kept != m) kept |= 1ull << bits;
    }
    return (double)kept; /* at most 53 significant bits: exact */
}
PX_HALF_FN double px_half_int64_to_odd_double_(int64_t v) {
    const double magnitude = px_half_uint64_to_odd_double_(v < 0 ? 0ull - (uint64_t)v : (uint64_t)v);
    return v < 0 ? -magnitude : magnitude;
}
PX_HALF_FN uint16_t px_int64_to_float16(int64_t v) { return px_double_to_float16(px_half_int64_to_odd_double_(v)); }
PX_HALF_FN uint16_t px_int64_to_bfloat16(int64_t v) { return px_double_to_bfloat16(px_half_int64_to_odd_double_(v)); }

#ifdef __cplusplus
}
#endif

#endif /* PLEXUS_HALF_H */
