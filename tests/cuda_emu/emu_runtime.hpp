// What the emulator's launches, streams, cuBLAS and NCCL need from its
// runtime (emu_runtime.cpp).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>

namespace px_emu {

struct Queue;

// A launch or call that CUDA would refuse: the error cudaGetLastError returns next.
void note_launch_error(cudaError_t e);
// The queue of the default stream (nullptr: the current device's legacy
// stream) or of a stream the runtime made and has not destroyed; else nullptr.
std::shared_ptr<Queue> queue_of(cudaStream_t s);
// A kernel on the current device faulted (a wild address): as on a GPU, the
// device's context is lost and every later call on it fails with
// cudaErrorIllegalAddress.
void note_device_fault();
// cudaSuccess, or the error that lost the current device.
cudaError_t device_lost();
bool device_is_lost(int device);
// Makes `device` the calling thread's current device; returns the one before.
int exchange_current_device(int device);
// Whether [p, p + bytes) lies inside one live device allocation; if not, says
// so on stderr, naming `call`.
bool device_range(const void* p, size_t bytes, const char* call);

}  // namespace px_emu
