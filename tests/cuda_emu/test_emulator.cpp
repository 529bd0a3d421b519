// The CUDA emulator's own checks, called directly: what it refuses as a GPU
// would (copies outside an allocation, too much memory, cuBLAS leading
// dimensions, launches past CUDA's limits), a block's barriers and a warp's
// shuffles, TF32 rounding, a faulting kernel losing its device, streams
// that run their work only when waited for, in order, and NCCL's collectives
// waiting on streams for every rank. Its fatal paths (threads of a block
// that wait at different barriers, a bad PLEXUS_CUDA_EMU_* value) abort the
// process: the hidden [.fatal] cases run them, one process each, from CTest.
#include <cublas_v2.h>
#include <nccl.h>

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

// Half a warp at a shuffle, the other half at the block's barrier: neither
// can be released, as on a GPU, where it would hang.
void split_barriers(int* p) {
    if (threadIdx.x < 16)
        p[threadIdx.x] = __shfl_xor_sync(0xffffffffu, 1, 1);
    else
        __syncthreads();
}

// Thread 0 never waits, so the emulator ran the others as plain calls; one
// of them then waits.
void late_barrier(int* p) {
    if (threadIdx.x == 1) __syncthreads();
    p[threadIdx.x] = 1;
}

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

namespace {

cudaStream_t make_stream() {
    cudaStream_t s = nullptr;
    REQUIRE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
    return s;
}

}  // namespace

TEST_CASE("a stream's work runs in order when something waits for it, and not before", "[emulator][streams]") {
    REQUIRE(cudaSetDevice(0) == cudaSuccess);
    cudaStream_t s = make_stream();
    int* d = device_array<int>(4);
    int host[4] = {1, 2, 3, 4}, out[4] = {0, 0, 0, 0};
    REQUIRE(cudaMemsetAsync(d, 0, sizeof host, s) == cudaSuccess);
    REQUIRE(cudaMemcpyAsync(d, host, sizeof host, cudaMemcpyHostToDevice, s) == cudaSuccess);
    host[0] = 9;  // too early: the copy reads the host's bytes when it runs, as CUDA allows
    REQUIRE(cudaMemcpyAsync(out, d, sizeof out, cudaMemcpyDeviceToHost, s) == cudaSuccess);
    CHECK(out[0] == 0);  // nothing has run yet
    CHECK(cudaStreamQuery(s) == cudaErrorNotReady);  // still going when asked; it runs on
    CHECK(cudaStreamQuery(s) == cudaSuccess);
    CHECK(out[0] == 9);
    CHECK(out[3] == 4);
    // An event marks a point: waiting for it runs what came before, not after.
    cudaEvent_t e = nullptr;
    REQUIRE(cudaEventCreateWithFlags(&e, cudaEventDisableTiming) == cudaSuccess);
    CHECK(cudaEventSynchronize(e) == cudaSuccess);  // never recorded: nothing to wait for
    REQUIRE(cudaMemsetAsync(d, 0, sizeof(int), s) == cudaSuccess);
    REQUIRE(cudaEventRecord(e, s) == cudaSuccess);
    REQUIRE(cudaMemsetAsync(d + 1, 0, sizeof(int), s) == cudaSuccess);
    REQUIRE(cudaEventSynchronize(e) == cudaSuccess);
    REQUIRE(cudaMemcpy(out, d, sizeof out, cudaMemcpyDeviceToHost) == cudaSuccess);  // the legacy stream: not ordered with s
    CHECK(out[0] == 0);
    CHECK(out[1] == 2);  // queued after the event: not yet run
    CHECK(cudaStreamSynchronize(s) == cudaSuccess);
    CHECK(cudaEventQuery(e) == cudaSuccess);
    cudaEventDestroy(e);
    cudaStreamDestroy(s);
    cudaFree(d);
}

TEST_CASE("streams are ordered only by events, and not with the legacy default stream", "[emulator][streams]") {
    REQUIRE(cudaSetDevice(0) == cudaSuccess);
    cudaStream_t a = make_stream(), b = make_stream();
    int* d = device_array<int>(1);
    int out = 0;
    cudaEvent_t e = nullptr;
    REQUIRE(cudaEventCreateWithFlags(&e, cudaEventDisableTiming) == cudaSuccess);
    // b waits for a's work before the event: syncing b runs a's first.
    REQUIRE(cudaMemsetAsync(d, 0x01, sizeof(int), a) == cudaSuccess);
    REQUIRE(cudaEventRecord(e, a) == cudaSuccess);
    REQUIRE(cudaStreamWaitEvent(b, e, 0) == cudaSuccess);
    REQUIRE(cudaMemcpyAsync(&out, d, sizeof out, cudaMemcpyDeviceToHost, b) == cudaSuccess);
    REQUIRE(cudaStreamSynchronize(b) == cudaSuccess);
    CHECK(out == 0x01010101);
    // Without the wait, b reads d before a's later set has run.
    REQUIRE(cudaMemsetAsync(d, 0x02, sizeof(int), a) == cudaSuccess);
    REQUIRE(cudaMemcpyAsync(&out, d, sizeof out, cudaMemcpyDeviceToHost, b) == cudaSuccess);
    REQUIRE(cudaStreamSynchronize(b) == cudaSuccess);
    CHECK(out == 0x01010101);
    REQUIRE(cudaStreamSynchronize(a) == cudaSuccess);
    // A cudaMemset is queued on the legacy stream: a later set on a
    // non-blocking stream can land before it (the plugin once cleared its
    // failure slot so, and lost reports).
    REQUIRE(cudaMemset(d, 0, sizeof(int)) == cudaSuccess);
    REQUIRE(cudaMemsetAsync(d, 0x03, sizeof(int), a) == cudaSuccess);
    REQUIRE(cudaStreamSynchronize(a) == cudaSuccess);
    REQUIRE(cudaMemcpy(&out, d, sizeof out, cudaMemcpyDeviceToHost) == cudaSuccess);
    CHECK(out == 0);
    cudaStream_t blocking = nullptr;
    CHECK(cudaStreamCreateWithFlags(&blocking, cudaStreamDefault) == cudaErrorNotSupported);
    cudaGetLastError();
    cudaEventDestroy(e);
    cudaStreamDestroy(a);
    cudaStreamDestroy(b);
    cudaFree(d);
}

TEST_CASE("a free queued on a stream happens when the stream gets there, once", "[emulator][streams]") {
    REQUIRE(cudaSetDevice(0) == cudaSuccess);
    cudaStream_t s = make_stream();
    size_t before = 0, total = 0, now = 0;
    REQUIRE(cudaMemGetInfo(&before, &total) == cudaSuccess);
    int* d = device_array<int>(1024);
    REQUIRE(cudaFreeAsync(d, s) == cudaSuccess);
    REQUIRE(cudaMemGetInfo(&now, &total) == cudaSuccess);
    CHECK(before - now == 1024 * sizeof(int));  // still held
    CHECK(cudaFreeAsync(d, s) == cudaErrorInvalidValue);  // a second free of it
    CHECK(cudaFree(d) == cudaErrorInvalidValue);
    cudaGetLastError();
    REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
    REQUIRE(cudaMemGetInfo(&now, &total) == cudaSuccess);
    CHECK(now == before);
    // A product is checked when called and computed when its stream runs it.
    cublasHandle_t h = nullptr;
    REQUIRE(cublasCreate(&h) == CUBLAS_STATUS_SUCCESS);
    REQUIRE(cublasSetStream(h, s) == CUBLAS_STATUS_SUCCESS);
    float* m = device_array<float>(1);
    float* c = device_array<float>(1);  // not m: BLAS leaves an output that overlaps an input undefined
    const float two = 2, zero = 0;
    float out = 0;
    REQUIRE(cudaMemcpy(m, &two, sizeof two, cudaMemcpyHostToDevice) == cudaSuccess);
    REQUIRE(cudaStreamSynchronize(nullptr) == cudaSuccess);  // the legacy stream's copy, before s reads m
    REQUIRE(cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 1, 1, 1, &two, m, CUDA_R_32F, 1, 0, m,
                                       CUDA_R_32F, 1, 0, &zero, c, CUDA_R_32F, 1, 0, 1, CUBLAS_COMPUTE_32F,
                                       CUBLAS_GEMM_DEFAULT) == CUBLAS_STATUS_SUCCESS);
    REQUIRE(cudaMemcpyAsync(&out, c, sizeof out, cudaMemcpyDeviceToHost, s) == cudaSuccess);
    CHECK(out == 0.0f);
    REQUIRE(cudaStreamSynchronize(s) == cudaSuccess);
    CHECK(out == 8.0f);  // 2 * 2 * 2
    cublasDestroy(h);
    cudaFree(c);
    cudaFree(m);
    cudaStreamDestroy(s);
}

TEST_CASE("an emulated NCCL sum waits on each stream for every rank, and an abort releases it", "[emulator][nccl]") {
    REQUIRE(cudaSetDevice(0) == cudaSuccess);
    cudaStream_t s0 = make_stream();
    double* x0 = device_array<double>(2);
    REQUIRE(cudaSetDevice(1) == cudaSuccess);
    cudaStream_t s1 = make_stream();
    double* x1 = device_array<double>(2);
    const double v0[2] = {1, 2}, v1[2] = {10, 20};
    REQUIRE(cudaMemcpyAsync(x0, v0, sizeof v0, cudaMemcpyHostToDevice, s0) == cudaSuccess);
    REQUIRE(cudaMemcpyAsync(x1, v1, sizeof v1, cudaMemcpyHostToDevice, s1) == cudaSuccess);
    ncclComm_t comms[2] = {nullptr, nullptr};
    const int devices[2] = {0, 1};
    REQUIRE(ncclCommInitAll(comms, 2, devices) == ncclSuccess);
    REQUIRE(ncclAllReduce(x0, x0, 2, ncclFloat64, ncclSum, comms[0], s0) == ncclSuccess);
    for (int i = 0; i < 3; ++i) CHECK(cudaStreamQuery(s0) == cudaErrorNotReady);  // rank 1 has not arrived
    REQUIRE(ncclAllReduce(x1, x1, 2, ncclFloat64, ncclSum, comms[1], s1) == ncclSuccess);
    REQUIRE(cudaStreamSynchronize(s0) == cudaSuccess);  // runs rank 1's part too
    double out[2] = {0, 0};
    REQUIRE(cudaMemcpyAsync(out, x1, sizeof out, cudaMemcpyDeviceToHost, s1) == cudaSuccess);
    REQUIRE(cudaStreamSynchronize(s1) == cudaSuccess);
    CHECK(out[0] == 11.0);
    CHECK(out[1] == 22.0);
    CHECK(ncclAllReduce(x0, x0, 2, ncclFloat16, ncclSum, comms[0], s0) == ncclInvalidArgument);
    // Rank 1 never comes: rank 0's stream waits until its communicator is aborted.
    REQUIRE(ncclAllReduce(x0, x0, 2, ncclFloat64, ncclSum, comms[0], s0) == ncclSuccess);
    CHECK(cudaStreamQuery(s0) == cudaErrorNotReady);
    REQUIRE(ncclCommAbort(comms[0]) == ncclSuccess);
    REQUIRE(cudaStreamSynchronize(s0) == cudaSuccess);
    REQUIRE(cudaMemcpyAsync(out, x0, sizeof out, cudaMemcpyDeviceToHost, s0) == cudaSuccess);
    REQUIRE(cudaStreamSynchronize(s0) == cudaSuccess);
    CHECK(out[0] == 11.0);  // not summed
    ncclCommDestroy(comms[1]);
    cudaStreamDestroy(s0);
    cudaStreamDestroy(s1);
    cudaFree(x0);
    cudaFree(x1);
}

// Last: device 0 stays lost for the rest of the process.
TEST_CASE("a faulting kernel loses its emulated device for good, not the other", "[emulator]") {
    REQUIRE(cudaSetDevice(1) == cudaSuccess);
    int* other = device_array<int>(1);
    REQUIRE(cudaSetDevice(0) == cudaSuccess);
    px_emu::Launcher(1, 1).run(write_through, reinterpret_cast<int*>(uintptr_t(8)));
    CHECK(cudaGetLastError() == cudaSuccess);  // queued: it faults when it runs
    CHECK(cudaStreamSynchronize(nullptr) == cudaErrorIllegalAddress);
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

// ---- fatal paths: hidden, each run alone by CTest, which expects the abort and its message ----

TEST_CASE("fatal: threads of a block waiting at different barriers", "[.fatal]") {
    int* d = device_array<int>(32);
    px_emu::Launcher(1, 32).run(split_barriers, d);
    cudaStreamSynchronize(nullptr);
    FAIL("the kernel should have stopped the process");
}

TEST_CASE("fatal: a barrier that the first thread does not meet", "[.fatal]") {
    int* d = device_array<int>(32);
    px_emu::Launcher(1, 32).run(late_barrier, d);
    cudaStreamSynchronize(nullptr);
    FAIL("the kernel should have stopped the process");
}

TEST_CASE("fatal: a bad PLEXUS_CUDA_EMU_* value", "[.fatal]") {
    int* d = device_array<int>(1);  // the environment is read on first use
    cudaMemset(d, 0, sizeof(int));
    cudaStreamSynchronize(nullptr);
    FAIL("the emulator should have refused the environment");
}
