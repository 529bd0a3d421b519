#include "probe.hpp"

#include <cuda_runtime_api.h>

namespace pxcuda {

namespace {
std::string version(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }
}  // namespace

std::string no_device_reason(int error, int driver, int runtime, const char* error_text) {
    const std::string built = "this plugin uses the CUDA " + version(runtime) + " runtime";
    if (driver == 0)
        return "no CUDA driver: libcuda.so.1 is not installed or could not be loaded (" + built + ")";
    if (error == cudaErrorInsufficientDriver || driver < runtime)
        return "the CUDA driver is older than the runtime: the driver supports CUDA " + version(driver) + ", " + built +
               "; update the NVIDIA driver";
    if (error == cudaErrorNoDevice || error == cudaSuccess)
        return "no CUDA device (driver for CUDA " + version(driver) + "; check CUDA_VISIBLE_DEVICES and nvidia-smi)";
    return std::string("CUDA could not start: ") + (error_text ? error_text : "unknown error") + " (driver for CUDA " +
           version(driver) + ")";
}

}  // namespace pxcuda
