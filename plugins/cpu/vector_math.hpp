// exp, log, tanh, cos and sigmoid over arrays, through SLEEF's deterministic
// float64 functions (within 1 ulp), vectorized for the instruction set the
// plugin uses (direct_conv_isa()), with SLEEF's scalar copy of the same kind
// for the tail. The AVX-512 and AVX2 copies are SLEEF's "finz" kind, which
// uses fused multiply-adds and gives the same bits on every CPU that has
// them (x86 since 2013); the baseline copy (SSE2) is its "cinz" kind, the
// same bits on every CPU without them, which differs from "finz" in the last
// bit for a few inputs in a million. So results depend neither on where a
// thread's chunk ends nor, among CPUs with FMA, on the CPU. float32 goes
// through float64 and is rounded once, so it is as good as glibc's (seed
// 001 prints exp(4) + 2 as 56.59815; a 1-ulp float32 exp prints 56.598152).
//
// Measured on 16M float32, two threads, AVX-512: tanh 104-105 ms with
// glibc's scalar function, 30 ms here (bench/results/
// 2026-11-23-cpu-vector-math.txt).
#pragma once

#include <cstdint>

namespace pxcpu {

// SLEEF's functions (MathIsa's table follows this order), then sigmoid,
// 1 / (1 + exp(-x)), made from its exp.
enum class MathFn { exp, log, tanh, cos, sigmoid };

// y[i] = fn(x[i]) for i in [0, n), on the calling thread; y may be x.
void vector_math(MathFn fn, const float* x, float* y, int64_t n);
void vector_math(MathFn fn, const double* x, double* y, int64_t n);

}  // namespace pxcpu
