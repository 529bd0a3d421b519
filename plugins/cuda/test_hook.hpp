// A test-only hook, off unless PLEXUS_CUDA_TEST_HOOKS=1 when the plugin's
// context is made: px_cuda_test_fault(ordinal, op) queues a kernel that
// writes through a bad address on that device's stream, blamed on `op`, so
// tests on a real GPU can show the lost-device path (tests/cuda/
// test_cuda_gpu.cpp). It is not part of the plugin ABI.
#pragma once

#include <cuda_runtime.h>

namespace pxcuda {

// Queues the faulting kernel on `stream`.
void launch_bad_write(cudaStream_t stream);

}  // namespace pxcuda
