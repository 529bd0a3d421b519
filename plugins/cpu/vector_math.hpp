// exp, log, tanh, cos and sigmoid over arrays, through SLEEF's deterministic
// float64 functions (Sleef_cinz_*: within 1 ulp, no fused multiply-adds),
// vectorized for the instruction set the plugin uses (direct_conv_isa():
// AVX-512, AVX or SSE2), with SLEEF's scalar copy for the tail. Every copy
// computes the same bits, so results depend neither on the CPU nor on where
// a thread's chunk ends. float32 goes through float64 and is rounded once,
// so it is as good as glibc's (seed 001 prints exp(4) + 2 as 56.59815; a
// 1-ulp float32 exp prints 56.598152).
//
// Measured on 16M float32, two threads: tanh 105 ms with glibc's scalar
// function, 23 ms here; PyTorch's vectorized one took 63 ms on one thread.
#pragma once

#include <cstdint>

namespace pxcpu {

enum class MathFn { exp, log, tanh, cos };

// y[i] = fn(x[i]) for i in [0, n), on the calling thread; y may be x.
void vector_math(MathFn fn, const float* x, float* y, int64_t n);
void vector_math(MathFn fn, const double* x, double* y, int64_t n);

// y[i] = 1 / (1 + exp(-x[i])) (in float64 for float32); y may be x.
void vector_sigmoid(const float* x, float* y, int64_t n);
void vector_sigmoid(const double* x, double* y, int64_t n);

}  // namespace pxcpu
