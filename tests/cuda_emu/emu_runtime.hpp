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
int current_device();

// Failures (emu_faults.cpp). Loses `device`'s context with the sticky error
// `e`; the first loss stays.
void lose_device(int device, cudaError_t e);
// cudaSuccess, or the error that lost `device`.
cudaError_t lost_error(int device);
// What stops the call `fn` on `device` before it does anything: a fault a
// test injected (emu_faults.h; `allocates`: the call can run out of memory)
// or the device's loss. cudaSuccess when nothing does. Calls that release
// (frees, destroys) never fail, so nothing of the emulator's leaks.
cudaError_t refused(const char* fn, int device, bool allocates = false);
// Whether the collective `fn` queued on `device` now is to lose its link to
// the other ranks when it runs (PLEXUS_EMU_NCCL_REMOTE_ERROR).
bool link_fails(const char* fn, int device);
// What the emulator holds, counted where it is made and released.
enum class Object { event, pool, blas_handle, nccl_comm, count };
void note_object(Object o, const void* handle, int delta);
// PLEXUS_CUDA_EMU_EXIT=reclaim: what a process leaves at exit is the
// driver's, reclaimed with the process as CUDA does, and so kept reachable
// (LeakSanitizer does not report it). For the tests that exit with runtimes
// alive on purpose (the plugin makes no CUDA call once CUDA has shut down).
// By default it is freed or reported: a plugin that forgets a free leaks.
bool reclaim_at_exit();
// Live allocations and streams (emu_runtime.cpp).
void count_memory(long& device_blocks, long& host_blocks, long& streams);
// Frees the memory of lost devices, as the driver does when their contexts
// go; false (nothing done) while a stream lives.
bool reclaim_lost_memory();

// Makes `device` the calling thread's current device; returns the one before.
int exchange_current_device(int device);
// Whether [p, p + bytes) lies inside one live device allocation; if not, says
// so on stderr, naming `call`.
bool device_range(const void* p, size_t bytes, const char* call);

}  // namespace px_emu
