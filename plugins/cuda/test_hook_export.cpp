// The test build's second entry point (test_hook.hpp): linked into
// libplexus-cuda-test.so and the emulated plugin, never into the release
// plugin.
#include <cstdint>

#include "plexus/plugin.h"
#include "test_hook.hpp"

extern "C" PX_PLUGIN_EXPORT int px_cuda_test_fault(int32_t ordinal, int32_t op) {
    return pxcuda::queue_on_hooked_device(ordinal, op, pxcuda::launch_bad_write);
}
