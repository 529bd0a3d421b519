// What the emulator's launches need from its runtime (emu_runtime.cpp).
#pragma once

#include <cuda_runtime_api.h>

namespace px_emu {

// A launch that CUDA would refuse: the error cudaGetLastError returns next.
void note_launch_error(cudaError_t e);
// The default stream (nullptr) or a stream the runtime made and has not destroyed.
bool stream_valid(cudaStream_t s);

}  // namespace px_emu
