// plexus-bench's GPU figures, each beside a raw CUDA baseline (cuBLAS,
// cudaMemcpy, a kernel of CUDA's float functions) run in the same process on
// the same GPU.
#pragma once

#include "plexus/plexus.hpp"

namespace pxbench {

// The "overhead" group on a GPU: 1-element adds queued back to back,
// beside raw launches that allocate and free an output each.
void bench_cuda_overhead(plexus::Device gpu, bool quick, bool json);
// The "add" and "sgemm" groups: products, bandwidth, copies, seed 003.
void bench_cuda(plexus::Device gpu, bool quick, bool json);
// The "tensor-ops" group: float32 exp and tanh against CUDA's float
// functions, and a transpose against a copy of the same bytes.
void bench_cuda_tensor_ops(plexus::Device gpu, bool quick, bool json);

}  // namespace pxbench
