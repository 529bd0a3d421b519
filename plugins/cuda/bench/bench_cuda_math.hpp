// Raw CUDA kernels: CUDA's float32 expf or tanhf, the baseline of the CUDA
// plugin's float32 exp and tanh (which go through float64), and a
// one-element add, the baseline of the per-op overhead.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace pxbench {

enum class RawMathFn { exp, tanh };

// y[i] = expf(x[i]) or tanhf(x[i]) on the current device's default stream;
// x and y are device pointers. Throws std::runtime_error if the launch fails.
void raw_float_math(const float* x, float* y, int64_t n, RawMathFn fn);

// c[0] = a[0] + b[0] on the default stream; the launch's status.
cudaError_t raw_add_one(const float* a, const float* b, float* c);

}  // namespace pxbench
