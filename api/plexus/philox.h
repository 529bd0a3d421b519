/* Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3",
 * SC'11), the reference generator of px_random_attrs and px_dropout_attrs.
 * Counter-based: element i of a random tensor depends only on (seed, offset +
 * i), never on how a plugin splits the work, so every plugin that uses these
 * functions produces the same numbers. Pure C99; usable in CUDA device code.
 * Not part of the plugin table: a plugin compiles it in. */
#ifndef PLEXUS_PHILOX_H
#define PLEXUS_PHILOX_H

#include <math.h>
#include <stdint.h>

#if defined(__CUDACC__)
#define PX_PHILOX_FN static inline __host__ __device__
#else
#define PX_PHILOX_FN static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

typedef struct px_philox4x32 {
    uint32_t v[4];
} px_philox4x32;

/* Counter (c0, c1) = the 64-bit counter, (c2, c3) = 0; key = the 64-bit seed.
 * Round r's key is the seed plus r times the Weyl constants, written without
 * a branch so that a loop calling this per element vectorizes (the CPU
 * plugin's dropout: 5x faster with AVX-512 than with the branch). */
PX_PHILOX_FN px_philox4x32 px_philox4x32_10(uint64_t counter, uint64_t seed) {
    uint32_t c0 = (uint32_t)counter, c1 = (uint32_t)(counter >> 32), c2 = 0, c3 = 0;
    const uint32_t k0 = (uint32_t)seed, k1 = (uint32_t)(seed >> 32);
    px_philox4x32 r;
    uint32_t round;
    for (round = 0; round < 10; ++round) {
        const uint64_t p0 = (uint64_t)0xD2511F53u * c0, p1 = (uint64_t)0xCD9E8D57u * c2;
        const uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ (k0 + round * 0x9E3779B9u);
        const uint32_t n2 = (uint32_t)(p0 >> 32) ^ c3 ^ (k1 + round * 0xBB67AE85u);
        c1 = (uint32_t)p1, c3 = (uint32_t)p0, c0 = n0, c2 = n2;
    }
    r.v[0] = c0, r.v[1] = c1, r.v[2] = c2, r.v[3] = c3;
    return r;
}

/* Uniform in [0, 1) with 24 (float) or 53 (double) random bits. */
PX_PHILOX_FN float px_uniform_float(uint32_t x) { return (float)(x >> 8) * (1.0f / 16777216.0f); }
PX_PHILOX_FN double px_uniform_double(uint32_t hi, uint32_t lo) {
    uint64_t bits = ((uint64_t)hi << 21) | (lo >> 11); /* 32 + 21 = 53 bits */
    return (double)bits * (1.0 / 9007199254740992.0);
}

/* x * y and x + y, each rounded on its own and never fused into one
 * multiply-add, so that every plugin computes the same bits: nvcc fuses by
 * default (__dmul_rn and __dadd_rn it never fuses), and host compilers fuse
 * where the instruction set has FMA, so host code that includes this header
 * must compile with -ffp-contract=off (the CPU plugin does). */
PX_PHILOX_FN double px_mul_rn(double x, double y) {
#if defined(__CUDA_ARCH__)
    return __dmul_rn(x, y);
#else
    return x * y;
#endif
}
PX_PHILOX_FN double px_add_rn(double x, double y) {
#if defined(__CUDA_ARCH__)
    return __dadd_rn(x, y);
#else
    return x + y;
#endif
}

/* The two uniforms in [0, 1) that element i draws: 53-bit ones when wide
 * (float64 tensors), otherwise (float32) 24-bit ones. */
typedef struct px_uniform_pair {
    double u1, u2;
} px_uniform_pair;
PX_PHILOX_FN px_uniform_pair px_random_uniforms(uint64_t seed, uint64_t offset, int64_t i, int wide) {
    px_philox4x32 x = px_philox4x32_10(offset + (uint64_t)i, seed);
    px_uniform_pair u;
    u.u1 = wide ? px_uniform_double(x.v[0], x.v[1]) : (double)px_uniform_float(x.v[0]);
    u.u2 = wide ? px_uniform_double(x.v[2], x.v[3]) : (double)px_uniform_float(x.v[1]);
    return u;
}

/* Uniform in [a, b) from u1 (before rounding to the tensor's dtype). */
PX_PHILOX_FN double px_uniform_in(double u1, double a, double b) { return px_add_rn(a, px_mul_rn(b - a, u1)); }

/* Normal with mean a and standard deviation b from (u1, u2), by Box-Muller.
 * 1 - u1 lies in (0, 1], so the log is finite. log and cos are the math
 * library's, whose last bits differ between libm and CUDA; the CPU plugin
 * uses this formula with SLEEF's, the same bits on every CPU. */
PX_PHILOX_FN double px_normal_from(double u1, double u2, double a, double b) {
    return px_add_rn(a, px_mul_rn(b, sqrt(-2.0 * log(1.0 - u1)) * cos(6.283185307179586 * u2)));
}

/* Element i of a random tensor before rounding to its dtype: uniform in
 * [a, b), or normal with mean a and standard deviation b. */
PX_PHILOX_FN double px_random_value(uint64_t seed, uint64_t offset, int64_t i, int wide, int normal, double a,
                                    double b) {
    const px_uniform_pair u = px_random_uniforms(seed, offset, i, wide);
    return normal ? px_normal_from(u.u1, u.u2, a, b) : px_uniform_in(u.u1, a, b);
}

/* Whether dropout keeps element i: its uniform draw
 * px_uniform_double(v0, v1) is >= p. That draw is bits * 2^-53 for the 53
 * bits below, so it is compared as an integer with ceil(p * 2^53), which is
 * exact and vectorizes where the double compare did not. */
PX_PHILOX_FN int px_dropout_keeps(uint64_t seed, uint64_t offset, int64_t i, double p) {
    px_philox4x32 r = px_philox4x32_10(offset + (uint64_t)i, seed);
    const uint64_t bits = ((uint64_t)r.v[0] << 21) | (r.v[1] >> 11);
    return bits >= (uint64_t)ceil(p * 9007199254740992.0);
}

#ifdef __cplusplus
}
#endif

#endif /* PLEXUS_PHILOX_H */
