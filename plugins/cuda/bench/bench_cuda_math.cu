// The raw baselines of the GPU math rows (CUDA's own float32 functions over
// a flat array, one element per thread, as a user's first kernel would be)
// and of the per-op overhead.
#include "bench_cuda_math.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace pxbench {
namespace {

__global__ void raw_math(const float* __restrict__ x, float* __restrict__ y, int64_t n, RawMathFn fn) {
    for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
        y[i] = fn == RawMathFn::exp ? expf(x[i]) : tanhf(x[i]);
}

__global__ void add_one(const float* a, const float* b, float* c) { c[0] = a[0] + b[0]; }

}  // namespace

cudaError_t raw_add_one(const float* a, const float* b, float* c) {
    add_one<<<1, 1>>>(a, b, c);
    return cudaGetLastError();
}

void raw_float_math(const float* x, float* y, int64_t n, RawMathFn fn) {
    const int threads = 256;
    const int64_t blocks = std::min<int64_t>((n + threads - 1) / threads, int64_t(1) << 20);
    raw_math<<<unsigned(blocks), threads>>>(x, y, n, fn);
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess)
        throw std::runtime_error(std::string("raw_math launch: ") + cudaGetErrorString(e));
}

}  // namespace pxbench
