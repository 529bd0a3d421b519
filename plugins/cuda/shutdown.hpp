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

// Registers the exit handler, once per load of the plugin, and notes the
// process CUDA was used in. Called after the first CUDA call, so that CUDA's
// own handler is registered before it.
void watch_for_exit() noexcept;
// Whether CUDA must not be called: the process is exiting and CUDA is (about
// to be) shut down, or it is a forked child of the process that used CUDA.
bool cuda_unusable() noexcept;
// Whether this is a forked child of the process that used CUDA: a lock one
// of the parent's threads held stays held here, so nothing of the parent's
// contexts may be locked, waited for or freed (it goes with the process).
bool forked_since_cuda() noexcept;
// Why, for a refusal or a runtime without GPUs (while cuda_unusable()).
const char* cuda_unusable_reason() noexcept;
// Notes a call's error: cudaErrorCudartUnloading means CUDA has shut down
// (whatever the handler knows). Returns whether it did.
bool shut_down_by(cudaError_t e) noexcept;

}  // namespace pxcuda
