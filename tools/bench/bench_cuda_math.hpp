// A raw CUDA kernel applying CUDA's float32 expf or tanhf, the baseline of
// the CUDA plugin's float32 exp and tanh (which go through float64).
#pragma once

#include <cstdint>

namespace pxbench {

enum class RawMathFn { exp, tanh };

// y[i] = expf(x[i]) or tanhf(x[i]) on the current device's default stream;
// x and y are device pointers. Throws std::runtime_error if the launch fails.
void raw_float_math(const float* x, float* y, int64_t n, RawMathFn fn);

}  // namespace pxbench
