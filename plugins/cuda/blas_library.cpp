#include "blas_library.hpp"

#include <dlfcn.h>
#include <link.h>

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
    g_error = open_blas_library({PXCUDA_CUBLAS_LIBRARIES}, g_api);
    if (g_error.empty()) g_opened.store(true);
}

// The file a handle of dlopen's came from, as the loader found it.
std::string path_of(void* lib) {
    link_map* map = nullptr;
    return dlinfo(lib, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name ? map->l_name : "?";
}

}  // namespace

std::string open_blas_library(std::initializer_list<const char*> names, BlasApi& api) {
    std::string tried;
    void* lib = open_first(names, tried);
    if (!lib) return "cuBLAS could not be opened (" + tried + ")";
    const char* missing = !find(lib, "cublasCreate_v2", api.cublasCreate)       ? "cublasCreate_v2"
                          : !find(lib, "cublasDestroy_v2", api.cublasDestroy)     ? "cublasDestroy_v2"
                          : !find(lib, "cublasSetStream_v2", api.cublasSetStream) ? "cublasSetStream_v2"
                          : !find(lib, "cublasGemmStridedBatchedEx", api.cublasGemmStridedBatchedEx)
                              ? "cublasGemmStridedBatchedEx"
                              : nullptr;
    if (!missing) return "";  // kept open for the life of the process: cuBLAS handles may outlive any one context
    std::string why = "the cuBLAS library found (" + path_of(lib) + ") lacks " + missing + ", which the plugin needs";
    api = BlasApi{};
    dlclose(lib);
    return why;
}

const BlasApi& blas_api() {
    std::call_once(g_once, open_blas);
    if (!g_opened.load()) throw Unsupported(g_error);
    return g_api;
}

bool blas_opened() { return g_opened.load(); }

}  // namespace pxcuda
