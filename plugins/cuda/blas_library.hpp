// cuBLAS, opened when the first device is made rather than linked: a
// machine with the plugin installed but no GPU then never maps cuBLAS and
// cuBLASLt (about 150 MB), and px_runtime_create stays fast there (issue 37,
// item 16). The few entry points the plugin calls are looked up once.
#pragma once

#include <cublas_v2.h>

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

}  // namespace pxcuda
