// cuBLAS, opened when the first device is made rather than linked: a
// machine with the plugin installed but no GPU then never maps cuBLAS and
// cuBLASLt (about 150 MB), and px_runtime_create stays fast there (issue 37,
// item 16). The few entry points the plugin calls are looked up once.
#pragma once

#include <cublas_v2.h>

#include <initializer_list>
#include <string>

namespace pxcuda {

// Named as the functions are, so an error names the cuBLAS call
// (cuda_check.hpp's function_of; cublas_v2.h turns cublasCreate into cublasCreate_v2).
struct BlasApi {
    decltype(&::cublasCreate) cublasCreate;
    decltype(&::cublasDestroy) cublasDestroy;
    decltype(&::cublasSetStream) cublasSetStream;
    cublasStatus_t (*cublasGemmStridedBatchedEx)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                                 const void*, const void*, cudaDataType, int, long long, const void*,
                                                 cudaDataType, int, long long, const void*, void*, cudaDataType, int,
                                                 long long, int, cublasComputeType_t, cublasGemmAlgo_t);
};

// Opens cuBLAS on the first call (any thread). Throws Unsupported, naming
// the library and the loader's reason, when it cannot be opened or lacks
// an entry point; later calls give the same answer.
const BlasApi& blas_api();

// Whether cuBLAS has been opened in this process (for tests).
bool blas_opened();

// What blas_api() does once, for the names it is given (a test gives its own):
// opens the first of `names` that loads and fills `api` from it. Returns ""
// when every entry point is there; otherwise why not: each name tried with
// the loader's reason, or the library's path and the function it lacks
// (then `api` is left empty and the library closed).
std::string open_blas_library(std::initializer_list<const char*> names, BlasApi& api);

}  // namespace pxcuda
