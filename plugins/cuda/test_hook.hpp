// A test-only hook, built into the test build of the plugin alone
// (libplexus-cuda-test.so, plugins/cuda/CMakeLists.txt; and the emulated
// plugin, tests/cuda_emu), never into the release plugin, which exports
// px_plugin_get_api and nothing else. Off unless PLEXUS_CUDA_TEST_HOOKS=1
// when the plugin's context is made: px_cuda_test_fault(ordinal, op)
// (test_hook_export.cpp) queues a kernel that writes through a bad address
// on that device's stream, blamed on `op`, so tests on a real GPU can show
// the lost-device path (tests/plugins/cuda/test_cuda_gpu.cpp). It is not part of
// the plugin ABI.
#pragma once

#include <cstdint>

#include <cuda_runtime.h>

namespace pxcuda {

// Queues the faulting kernel on `stream` (test_hook.cu).
void launch_bad_write(cudaStream_t stream);

// Runs launch() on device `ordinal`'s stream of the newest context made
// with the hooks on, and records `op` as the device's last op (plugin.cpp).
// 0 when it was queued; -1 when no context enabled the hooks or there is no
// such device.
int queue_on_hooked_device(int32_t ordinal, int32_t op, void (*launch)(cudaStream_t));

}  // namespace pxcuda
