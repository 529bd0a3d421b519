// plexus-bench's single-op figures for LeNet's layer ops: the memory-bound
// ones (relu and max-pool gradients on the first layer, the fused bias +
// relu + max-pool and its gradient on both), each beside a raw OpenMP loop
// that moves the same bytes; and both convolutions with their gradients,
// each beside one cblas_sgemm of the same multiply-adds.
#pragma once

#include "plexus/plexus.hpp"

namespace pxbench {

// CPU devices only: the raw loops run on the host.
void bench_layer_ops(plexus::Device dev, bool quick, bool json);

}  // namespace pxbench
