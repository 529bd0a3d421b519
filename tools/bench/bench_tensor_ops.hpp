// plexus-bench's tensor-ops group: reductions over each axis, a transposing
// copy, where on a random mask, a comparison and random tensors on an n x n
// float32 matrix, each beside a raw OpenMP loop doing the same work in the
// same run, and beside PyTorch's same ops where it is installed
// (tools/bench/torch_tensor_ops.py).
#pragma once

#include <string>

#include "plexus/plexus.hpp"

namespace pxbench {

// CPU devices only: the raw loops run on the host.
void bench_tensor_ops(plexus::Device dev, bool quick, bool json, const std::string& torch_script);

}  // namespace pxbench
