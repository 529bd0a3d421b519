/* A library with three of the four cuBLAS entry points the CUDA plugin
   needs (no cublasGemmStridedBatchedEx), for test_blas_library.cpp. Never
   called: only looked up. */
int cublasCreate_v2(void** handle) { (void)handle; return 0; }
int cublasDestroy_v2(void* handle) { (void)handle; return 0; }
int cublasSetStream_v2(void* handle, void* stream) { (void)handle; (void)stream; return 0; }
