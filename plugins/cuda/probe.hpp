// Why a machine offers no CUDA device, in words a user can act on.
#pragma once

#include <string>

namespace pxcuda {

// error: what cudaGetDeviceCount returned (a cudaError_t); driver and
// runtime: cudaDriverGetVersion / cudaRuntimeGetVersion (e.g. 13000), the
// driver's 0 when no driver is installed.
std::string no_device_reason(int error, int driver, int runtime, const char* error_text);

}  // namespace pxcuda
