// CUDA at process exit. The CUDA runtime (linked statically) shuts itself
// down in an exit handler; a CUDA call after that fails with
// cudaErrorCudartUnloading or crashes (cudaDriverGetVersion does). A
// program's static destructors also run at exit, and may release GPU tensors
// or make and destroy a runtime then. So the plugin registers an exit handler
// of its own after CUDA's (exit runs the newest first: this one before CUDA
// shuts down) and from then on makes no CUDA call: work on a GPU is refused
// with an error that says why, a runtime made then has no GPUs, and the
// device memory, streams and handles left are reclaimed by the driver with
// the process.
#pragma once

#include <cuda_runtime_api.h>

namespace pxcuda {

constexpr const char* kCudaShutDown =
    "cuda plugin: CUDA has shut down because the process is exiting; GPU work cannot run from a static "
    "destructor (release GPU tensors and runtimes before main returns)";

// Registers the exit handler, once per load of the plugin. Called after the
// first CUDA call, so that CUDA's own handler is registered before it.
void watch_for_exit() noexcept;
// Whether the process is exiting and CUDA is (about to be) shut down.
bool cuda_shut_down() noexcept;
// Notes a call's error: cudaErrorCudartUnloading means CUDA has shut down
// (whatever the handler knows). Returns whether it did.
bool shut_down_by(cudaError_t e) noexcept;

}  // namespace pxcuda
