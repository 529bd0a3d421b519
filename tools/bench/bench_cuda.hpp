// plexus-bench's GPU figures, each beside a raw CUDA baseline (cuBLAS,
// cudaMemcpy) run in the same process on the same GPU.
#pragma once

#include "plexus/plexus.hpp"

namespace pxbench {

void bench_cuda(plexus::Device gpu, bool quick, bool json);

}  // namespace pxbench
