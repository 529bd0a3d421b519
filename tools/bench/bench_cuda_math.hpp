// Raw CUDA kernels: CUDA's float32 expf or tanhf, the baseline of the CUDA
// plugin's float32 exp and tanh (which go through float64), and a
// one-element add, the baseline of the per-op overhead.
#pragma once

#include <cstdint>

namespace pxbench {

enum class RawMathFn { exp, tanh };

// y[i] = expf(x[i]) or tanhf(x[i]) on the current device's default stream;
// x and y are device pointers. Throws std::runtime_error if the launch fails.
void raw_float_math(const float* x, float* y, int64_t n, RawMathFn fn);

// `ops` times, on the default stream: a fresh 4-byte output from CUDA's
// stream-ordered pool, c = a + b on one element, the output freed. The least
// a runtime that makes a new tensor per op launches; waits for all of it.
void raw_one_element_adds(const float* a, const float* b, int ops);

}  // namespace pxbench
