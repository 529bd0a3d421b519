// What the emulator's launches need from its runtime (emu_runtime.cpp).
#pragma once

#include <cuda_runtime_api.h>

namespace px_emu {

// A launch that CUDA would refuse: the error cudaGetLastError returns next.
void note_launch_error(cudaError_t e);
// The default stream (nullptr) or a stream the runtime made and has not destroyed.
bool stream_valid(cudaStream_t s);
// A kernel on the current device faulted (a wild address): as on a GPU, the
// device's context is lost and every later call on it fails with
// cudaErrorIllegalAddress.
void note_device_fault();
// cudaSuccess, or the error that lost the current device.
cudaError_t device_lost();

}  // namespace px_emu
