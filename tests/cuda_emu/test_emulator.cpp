// The CUDA emulator's own checks, called directly: what it refuses as a GPU
// would (copies outside an allocation, too much memory, cuBLAS leading
// dimensions, launches past CUDA's limits), a block's barriers and a warp's
// shuffles, TF32 rounding, and a faulting kernel losing its device. (Its
// fatal paths, a deadlock or a bad PLEXUS_CUDA_EMU_* value, abort the
// process and are not run here.)
#include <cublas_v2.h>

#include "emu_kernel.hpp"

#include <catch2/catch.hpp>

#include <algorithm>
#include <vector>

namespace {

void block_and_warp_sums(const int* in, int* block_total, int* warp_totals) {
    __shared__ int part[256];
    part[threadIdx.x] = in[threadIdx.x];
    __syncthreads();
    for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) part[threadIdx.x] += part[threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x == 0) *block_total = part[0];
    int v = in[threadIdx.x];
    for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
    if (threadIdx.x % 32 == 0) warp_totals[threadIdx.x / 32] = v;
}

void write_one(int* p, int64_t n) {
    for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(blockDim.x) * gridDim.x) p[i] = 1;
}

void write_through(int* p) { *p = 1; }

template <class T>
T* device_array(size_t n) {
    void* p = nullptr;
    REQUIRE(cudaMalloc(&p, n * sizeof(T)) == cudaSuccess);
    return static_cast<T*>(p);
}

}  // namespace

TEST_CASE("the emulator refuses copies and sets outside one allocation", "[emulator]") {
    REQUIRE(cudaSetDevice(0) == cudaSuccess);
    float* d = device_array<float>(4);
    std::vector<float> host(8, 1.0f);
    CHECK(cudaMemcpy(d, host.data(), 4 * sizeof(float), cudaMemcpyHostToDevice) == cudaSuccess);
    CHECK(cudaMemcpy(d, host.data(), 5 * sizeof(float), cudaMemcpyHostToDevice) == cudaErrorInvalidValue);
    CHECK(cudaGetLastError() == cudaErrorInvalidValue);
    CHECK(cudaGetLastError() == cudaSuccess);  // not sticky
    CHECK(cudaMemcpy(host.data(), d + 1, 4 * sizeof(float), cudaMemcpyDeviceToHost) == cudaErrorInvalidValue);
    CHECK(cudaMemset(d + 2, 0, 3 * sizeof(float)) == cudaErrorInvalidValue);
    CHECK(cudaMemcpy(host.data(), host.data() + 4, 4, cudaMemcpyDeviceToHost) == cudaErrorInvalidValue);  // not device memory
    CHECK(cudaFree(d) == cudaSuccess);
    CHECK(cudaFree(d) == cudaErrorInvalidValue);  // twice
    cudaGetLastError();
}

TEST_CASE("the emulator's memory is new-filled, limited and counted", "[emulator]") {
    REQUIRE(cudaSetDevice(0) == cudaSuccess);
    size_t free0 = 0, total = 0;
    REQUIRE(cudaMemGetInfo(&free0, &total) == cudaSuccess);
    int* d = device_array<int>(16);
    std::vector<int> back(16, 0);
    REQUIRE(cudaMemcpy(back.data(), d, sizeof(int) * 16, cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK(back[7] == -1);  // 0xFF bytes, never zero
    size_t free1 = 0;
    REQUIRE(cudaMemGetInfo(&free1, &total) == cudaSuccess);
    CHECK(free0 - free1 == 16 * sizeof(int));
    void* too_much = nullptr;
    CHECK(cudaMalloc(&too_much, total + 1) == cudaErrorMemoryAllocation);
    CHECK(too_much == nullptr);
    cudaGetLastError();
    CHECK(cudaFree(d) == cudaSuccess);
    CHECK(cudaSetDevice(8) == cudaErrorInvalidDevice);
    cudaGetLastError();
}

TEST_CASE("the emulator's cuBLAS multiplies column-major and checks what cuBLAS checks", "[emulator]") {
    REQUIRE(cudaSetDevice(0) == cudaSuccess);
    cublasHandle_t h = nullptr;
    REQUIRE(cublasCreate(&h) == CUBLAS_STATUS_SUCCESS);
    // Column-major A (2x3) = [1 3 5; 2 4 6], B (3x1) = [1 1 1]: C = [9; 12].
    float* a = device_array<float>(6);
    float* b = device_array<float>(3);
    float* c = device_array<float>(2);
    const float av[6] = {1, 2, 3, 4, 5, 6}, bv[3] = {1, 1, 1}, one = 1, zero = 0;
    REQUIRE(cudaMemcpy(a, av, sizeof av, cudaMemcpyHostToDevice) == cudaSuccess);
    REQUIRE(cudaMemcpy(b, bv, sizeof bv, cudaMemcpyHostToDevice) == cudaSuccess);
    auto gemm = [&](int lda, const float* bp, cublasComputeType_t compute) {
        return cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 2, 1, 3, &one, a, CUDA_R_32F, lda, 0, bp,
                                          CUDA_R_32F, 3, 0, &zero, c, CUDA_R_32F, 2, 0, 1, compute,
                                          CUBLAS_GEMM_DEFAULT);
    };
    REQUIRE(gemm(2, b, CUBLAS_COMPUTE_32F) == CUBLAS_STATUS_SUCCESS);
    float cv[2] = {0, 0};
    REQUIRE(cudaMemcpy(cv, c, sizeof cv, cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK(cv[0] == 9.0f);
    CHECK(cv[1] == 12.0f);
    CHECK(gemm(1, b, CUBLAS_COMPUTE_32F) == CUBLAS_STATUS_INVALID_VALUE);          // lda below A's rows
    CHECK(gemm(2, b + 1, CUBLAS_COMPUTE_32F) == CUBLAS_STATUS_EXECUTION_FAILED);   // B runs past its allocation
    // TF32 keeps 10 mantissa bits: 1 + 2^-12 becomes 1.
    const float fine[3] = {1.0f + 1.0f / 4096, 0, 0};
    REQUIRE(cudaMemcpy(b, fine, sizeof fine, cudaMemcpyHostToDevice) == cudaSuccess);
    REQUIRE(gemm(2, b, CUBLAS_COMPUTE_32F) == CUBLAS_STATUS_SUCCESS);
    REQUIRE(cudaMemcpy(cv, c, sizeof cv, cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK(cv[0] == 1.0f + 1.0f / 4096);
    REQUIRE(gemm(2, b, CUBLAS_COMPUTE_32F_FAST_TF32) == CUBLAS_STATUS_SUCCESS);
    REQUIRE(cudaMemcpy(cv, c, sizeof cv, cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK(cv[0] == 1.0f);
    for (void* p : {static_cast<void*>(a), static_cast<void*>(b), static_cast<void*>(c)}) cudaFree(p);
    cublasDestroy(h);
}

TEST_CASE("the emulator runs a block's barriers and a warp's shuffles, and refuses launches CUDA would",
          "[emulator]") {
    REQUIRE(cudaSetDevice(0) == cudaSuccess);
    std::vector<int> in(256);
    for (int i = 0; i < 256; ++i) in[size_t(i)] = i;
    int* din = device_array<int>(256);
    int* dblock = device_array<int>(1);
    int* dwarps = device_array<int>(8);
    REQUIRE(cudaMemcpy(din, in.data(), 256 * sizeof(int), cudaMemcpyHostToDevice) == cudaSuccess);
    px_emu::Launcher(1, 256).run(block_and_warp_sums, din, dblock, dwarps);
    REQUIRE(cudaGetLastError() == cudaSuccess);
    int block = 0, warps[8] = {};
    REQUIRE(cudaMemcpy(&block, dblock, sizeof block, cudaMemcpyDeviceToHost) == cudaSuccess);
    REQUIRE(cudaMemcpy(warps, dwarps, sizeof warps, cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK(block == 255 * 256 / 2);
    for (int w = 0; w < 8; ++w) CHECK(warps[w] == 32 * 32 * w + 31 * 32 / 2);
    // A grid-stride kernel (no barriers) covers every element once.
    int* ones = device_array<int>(1000);
    px_emu::Launcher(3, 64).run(write_one, ones, int64_t(1000));
    std::vector<int> got(1000);
    REQUIRE(cudaMemcpy(got.data(), ones, 1000 * sizeof(int), cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK(std::count(got.begin(), got.end(), 1) == 1000);
    // Past CUDA's limits: nothing runs, and the next cudaGetLastError says why.
    px_emu::Launcher(1, 2048).run(write_one, ones, int64_t(1));
    CHECK(cudaGetLastError() == cudaErrorInvalidConfiguration);
    px_emu::Launcher(dim3(1, 70000), 32).run(write_one, ones, int64_t(1));
    CHECK(cudaGetLastError() == cudaErrorInvalidConfiguration);
    px_emu::Launcher(1, 32, 64 * 1024).run(write_one, ones, int64_t(1));
    CHECK(cudaGetLastError() == cudaErrorInvalidConfiguration);
    for (void* p : {static_cast<void*>(din), static_cast<void*>(dblock), static_cast<void*>(dwarps),
                    static_cast<void*>(ones)})
        cudaFree(p);
}

TEST_CASE("a faulting kernel loses its emulated device for good, not the other", "[emulator]") {
    REQUIRE(cudaSetDevice(1) == cudaSuccess);
    int* other = device_array<int>(1);
    REQUIRE(cudaSetDevice(0) == cudaSuccess);
    px_emu::Launcher(1, 1).run(write_through, reinterpret_cast<int*>(uintptr_t(8)));
    CHECK(cudaGetLastError() == cudaErrorIllegalAddress);
    CHECK(cudaGetLastError() == cudaErrorIllegalAddress);  // sticky
    void* p = nullptr;
    CHECK(cudaMalloc(&p, 4) == cudaErrorIllegalAddress);
    CHECK(cudaStreamSynchronize(nullptr) == cudaErrorIllegalAddress);
    REQUIRE(cudaSetDevice(1) == cudaSuccess);
    int v = 5;
    CHECK(cudaMemcpy(other, &v, sizeof v, cudaMemcpyHostToDevice) == cudaSuccess);
    CHECK(cudaFree(other) == cudaSuccess);
}
