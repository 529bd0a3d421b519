// Errors inside the CUDA plugin: C++ exceptions that plugin.cpp turns into a
// px_status and a message at the boundary.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include <cublas_v2.h>
#include <cuda_runtime.h>

namespace pxcuda {

// The function a call's source text names: "cudaMalloc(&p, n)" -> "cudaMalloc".
// "cublasCreate" of "blas_api_->cublasCreate(&blas_)" too.
inline std::string function_of(const char* call) {
    const std::string text(call);
    const std::string callee = text.substr(0, text.find('('));
    const size_t member = callee.find_last_of(">.");
    return member == std::string::npos ? callee : callee.substr(member + 1);
}

// A CUDA runtime call failed; `code` says whether the context survived.
struct CudaError : std::runtime_error {
    cudaError_t code;
    std::string function;  // the call that returned it
    CudaError(cudaError_t c, const char* call)
        : std::runtime_error(function_of(call) + ": " + cudaGetErrorString(c) + " (" + cudaGetErrorName(c) + ")"),
          code(c), function(function_of(call)) {}
};

struct OutOfMemory : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Work that failed on the device without losing it (e.g. a process group's
// collective that timed out): PX_ERROR_DEVICE with this message.
struct DeviceFailure : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// A request the kernels cannot run (sizes beyond cuBLAS's int range, ...).
struct Unsupported : std::runtime_error {
    using std::runtime_error::runtime_error;
};

inline void check_cuda(cudaError_t e, const char* call) {
    if (e != cudaSuccess) throw CudaError(e, call);
}

// Checks the launch just queued on this thread.
inline void check_launch(const char* kernel) { check_cuda(cudaGetLastError(), kernel); }

inline const char* blas_status_name(cublasStatus_t s) {
    switch (s) {
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    default: return "CUBLAS_STATUS_UNKNOWN";
    }
}

// A cuBLAS status as the error it is: out of memory, or the CUDA error
// behind a failure (a lost context marks the device failed); else internal.
inline void check_blas(cublasStatus_t s, const char* call) {
    if (s == CUBLAS_STATUS_SUCCESS) return;
    const std::string what = function_of(call) + ": " + blas_status_name(s);
    if (s == CUBLAS_STATUS_ALLOC_FAILED) throw OutOfMemory(what + " (out of memory)");
    const cudaError_t behind = cudaGetLastError();
    if (behind != cudaSuccess) throw CudaError(behind, call);
    throw std::runtime_error(what);
}

// Errors after which the CUDA context is unusable: every later call on it
// fails, so the device is marked failed rather than used again.
inline bool is_sticky(cudaError_t e) {
    switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
    case cudaErrorContextIsDestroyed:
    case cudaErrorDevicesUnavailable:
    case cudaErrorUnknown:
        return true;
    default:
        return false;
    }
}

#define PX_CUDA(call) ::pxcuda::check_cuda((call), #call)
#define PX_BLAS(call) ::pxcuda::check_blas((call), #call)

}  // namespace pxcuda
