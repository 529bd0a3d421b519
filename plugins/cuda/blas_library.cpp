#include "blas_library.hpp"

#include <atomic>
#include <mutex>
#include <string>

#include "cuda_check.hpp"
#include "shared_library.hpp"

// Where cuBLAS is looked for: the toolkit's soname (the plugin's RUNPATH
// names the toolkit's folder); the CUDA emulator's build names its own.
#ifndef PXCUDA_CUBLAS_LIBRARIES
#define PXCUDA_CUBLAS_LIBRARIES "libcublas.so"
#endif

namespace pxcuda {
namespace {

std::once_flag g_once;
std::atomic<bool> g_opened{false};
BlasApi g_api{};
std::string g_error;

void open_blas() {
    std::string tried;
    void* lib = open_first({PXCUDA_CUBLAS_LIBRARIES}, tried);
    if (!lib) {
        g_error = "cuBLAS could not be opened (" + tried + ")";
        return;
    }
    // Kept open for the life of the process: cuBLAS handles may outlive any one context.
    if (!find(lib, "cublasCreate_v2", g_api.cublasCreate) || !find(lib, "cublasDestroy_v2", g_api.cublasDestroy) ||
        !find(lib, "cublasSetStream_v2", g_api.cublasSetStream) ||
        !find(lib, "cublasGemmStridedBatchedEx", g_api.cublasGemmStridedBatchedEx)) {
        g_error = "the cuBLAS library found lacks a function the plugin needs";
        return;
    }
    g_opened.store(true);
}

}  // namespace

const BlasApi& blas_api() {
    std::call_once(g_once, open_blas);
    if (!g_opened.load()) throw Unsupported(g_error);
    return g_api;
}

bool blas_opened() { return g_opened.load(); }

}  // namespace pxcuda
