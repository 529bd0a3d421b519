// The CUDA plugin against raw CUDA in the same run: the per-op overhead
// against raw launches, sgemm (float32, TF32)
// against cublasSgemm/cublasGemmEx, a 256M-float add against a raw
// device-to-device copy's bandwidth, host<->device copies of 256 MiB from
// pinned memory against cudaMemcpy, and seed 003's large and small products
// on the CPU against the GPU; the plugin's float32 exp and tanh (through
// float64) against CUDA's float functions in a raw kernel, and a transpose
// and a broadcast add against a copy of the same bytes.
#include "bench_cuda.hpp"

#include <cuda_runtime.h>
#include <cublas_v2.h>

#include <cstdio>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_cuda_math.hpp"
#include "bench_util.hpp"

using namespace plexus;

namespace pxbench {
namespace {

void check(cudaError_t e, const char* what) {
    if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}
void check(cublasStatus_t s, const char* what) {
    if (s != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(std::string(what) + " failed: status " + std::to_string(s));
}

// Raw device memory for the baselines, on the GPU under test.
struct DeviceMemory {
    void* p = nullptr;
    explicit DeviceMemory(size_t bytes) { check(cudaMalloc(&p, bytes), "cudaMalloc"); }
    ~DeviceMemory() { cudaFree(p); }
};
struct PinnedMemory {
    void* p = nullptr;
    explicit PinnedMemory(size_t bytes) { check(cudaMallocHost(&p, bytes), "cudaMallocHost"); }
    ~PinnedMemory() { cudaFreeHost(p); }
};

}  // namespace

void bench_cuda_overhead(Device dev, bool quick, bool json) {
    Tensor a = ones({1}, dev), b = ones({1}, dev), c;
    DeviceMemory ra(sizeof(float)), rb(sizeof(float));
    const int n = quick ? 500 : 20000;
    auto [ours, raw] = interleaved(
        15,
        [&] {
            for (int i = 0; i < n; ++i) c = a + b;
            synchronize(dev);
        },
        [&] {
            // The least a runtime that makes a new tensor per op does: a
            // fresh output from CUDA's stream-ordered pool, the add, the free.
            for (int i = 0; i < n; ++i) {
                void* c = nullptr;
                check(cudaMallocAsync(&c, sizeof(float), 0), "cudaMallocAsync");
                const cudaError_t launched =
                    raw_add_one(static_cast<const float*>(ra.p), static_cast<const float*>(rb.p), static_cast<float*>(c));
                check(cudaFreeAsync(c, 0), "cudaFreeAsync");  // first, so a failed launch leaks nothing
                check(launched, "raw_add_one launch");
            }
            check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
        });
    report({"per-op overhead, 1-element add", "ns/op", ours / n * 1e9, raw / n * 1e9, "raw launch+pool alloc",
            "target <= 1.5x"},
           json);
}

namespace {

void sgemm(Device dev, int64_t n, bool tf32, bool json) {
    // The same values for both: how fast a GPU multiplies depends on the
    // data (its clock under load), so a product of other data (say the
    // zeros of fresh memory) is no baseline.
    seed(1);
    const std::vector<float> va = random_uniform({n, n}).to_vector<float>(), vb = random_uniform({n, n}).to_vector<float>();
    Tensor a = array(va, {n, n}, dev), b = array(vb, {n, n}, dev), c;
    DeviceMemory ra(size_t(n * n) * 4), rb(size_t(n * n) * 4), rc(size_t(n * n) * 4);
    check(cudaMemcpy(ra.p, va.data(), va.size() * 4, cudaMemcpyHostToDevice), "cudaMemcpy");
    check(cudaMemcpy(rb.p, vb.data(), vb.size() * 4, cudaMemcpyHostToDevice), "cudaMemcpy");
    cublasHandle_t h;
    check(cublasCreate(&h), "cublasCreate");
    const float one = 1, zero = 0;
    allow_tf32(tf32);
    auto [ours, raw] = interleaved(
        11,
        [&] {
            c = matmul(a, b);
            synchronize(dev);
        },
        [&] {
            check(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, int(n), int(n), int(n), &one, rb.p, CUDA_R_32F, int(n), ra.p,
                               CUDA_R_32F, int(n), &zero, rc.p, CUDA_R_32F, int(n),
                               tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                  "cublasGemmEx");
            check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
        });
    allow_tf32(false);
    cublasDestroy(h);
    const double flop = 2.0 * double(n) * double(n) * double(n);
    report({std::string(tf32 ? "tf32 gemm " : "sgemm ") + std::to_string(n), "GFLOP/s", flop / ours / 1e9,
            flop / raw / 1e9, tf32 ? "raw cuBLAS, TF32" : "raw cublasSgemm", "target >= 0.95x"},
           json);
}

// Seconds for `op` on dev (waited for) and for a raw device-to-device copy
// of `bytes`, timed interleaved: the baseline of the bandwidth-bound ops.
std::pair<double, double> beside_copy(Device dev, size_t bytes, const std::function<void()>& op) {
    DeviceMemory src(bytes), dst(bytes);
    return interleaved(
        11,
        [&] {
            op();
            synchronize(dev);
        },
        [&] {
            check(cudaMemcpy(dst.p, src.p, bytes, cudaMemcpyDeviceToDevice), "cudaMemcpy");
            check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
        });
}

// c = a + b reads 2 and writes 1 float per element; a raw copy reads 1 and
// writes 1. Both as bytes moved per second.
void add_bandwidth(Device dev, int64_t n, bool json) {
    Tensor a = full({n}, 1.0, dev), b = full({n}, 2.0, dev), c;
    auto [ours, raw] = beside_copy(dev, size_t(n) * 4, [&] { c = a + b; });
    report({"add " + std::to_string(n >> 20) + "M float32, c = a + b", "GB/s", 3.0 * n * 4 / ours / 1e9,
            2.0 * n * 4 / raw / 1e9, "raw D2D cudaMemcpy", "target >= 0.85x"},
           json);
}

void host_copies(Device dev, int64_t bytes, bool json) {
    const int64_t n = bytes / 4;
    PinnedMemory host{size_t(bytes)};
    DeviceMemory raw_dev{size_t(bytes)};
    Tensor on_gpu;
    auto [up, raw_up] = interleaved(
        9,
        [&] {
            on_gpu = Tensor::wrap([&](px_tensor** o) {
                return px_tensor_from_host(runtime(), dev.raw(), PX_FLOAT32, 1, &n, host.p, uint64_t(bytes), o);
            });
            synchronize(dev);
        },
        [&] { check(cudaMemcpy(raw_dev.p, host.p, size_t(bytes), cudaMemcpyHostToDevice), "cudaMemcpy"); });
    report({"host->device " + std::to_string(bytes >> 20) + " MiB, pinned", "GB/s", bytes / up / 1e9,
            bytes / raw_up / 1e9, "raw cudaMemcpy", "target >= 0.9x"},
           json);
    auto [down, raw_down] = interleaved(
        9, [&] { check(px_tensor_to_host(on_gpu.handle(), host.p, uint64_t(bytes)) == PX_OK ? cudaSuccess : cudaErrorUnknown, px_last_error()); },
        [&] { check(cudaMemcpy(host.p, raw_dev.p, size_t(bytes), cudaMemcpyDeviceToHost), "cudaMemcpy"); });
    report({"device->host " + std::to_string(bytes >> 20) + " MiB, pinned", "GB/s", bytes / down / 1e9,
            bytes / raw_down / 1e9, "raw cudaMemcpy", "target >= 0.9x"},
           json);
}

// Seed 003: a large and a small product, on the CPU and on the GPU.
void cpu_vs_gpu(Device dev, int64_t n, bool json) {
    seed(2);
    Tensor a = random_uniform({n, n}), b = random_uniform({n, n});
    Tensor ga = a.copyto(dev), gb = b.copyto(dev), c;
    const int burst = n <= 128 ? 100 : 1;
    auto [on_gpu, on_cpu] = interleaved(
        5,
        [&] {
            for (int i = 0; i < burst; ++i) c = matmul(ga, gb);
            synchronize(dev);
        },
        [&] {
            for (int i = 0; i < burst; ++i) c = matmul(a, b);
            synchronize(cpu());
        });
    report({"matmul " + std::to_string(n) + "x" + std::to_string(n) + " on the GPU", "ms", on_gpu / burst * 1e3,
            on_cpu / burst * 1e3, "the same on cpu(0)", "seed 003: GPU wins when large"},
           json);
}

// The plugin's float32 exp and tanh are CUDA's float64 functions rounded
// once (the CPU plugin's values); the baseline, CUDA's float functions, is
// what they cost. On GPUs with slow float64 this ratio is where it shows.
void float_math(Device dev, int64_t n, const char* name, RawMathFn fn, bool json) {
    std::vector<float> host(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) host[size_t(i)] = float(i % 4099) / 4099.0f * 16.0f - 8.0f;
    Tensor x = array(host, {}, dev), y;
    DeviceMemory raw_x(size_t(n) * 4), raw_y(size_t(n) * 4);
    check(cudaMemcpy(raw_x.p, host.data(), size_t(n) * 4, cudaMemcpyHostToDevice), "cudaMemcpy");
    auto [ours, raw] = interleaved(
        11,
        [&] {
            y = fn == RawMathFn::exp ? x.exp() : x.tanh();
            synchronize(dev);
        },
        [&] {
            raw_float_math(static_cast<const float*>(raw_x.p), static_cast<float*>(raw_y.p), n, fn);
            check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
        });
    report({std::string(name) + " " + std::to_string(n >> 20) + "M float32 (via float64)", "ms", ours * 1e3, raw * 1e3,
            std::string("raw ") + name + "f kernel", "the cost of correct rounding"},
           json);
}

// A transpose of an n x n float32 matrix reads and writes each element once,
// as a raw device-to-device copy of the same bytes does.
void transpose_bandwidth(Device dev, int64_t n, bool json) {
    Tensor a = arange(0, double(n * n), 1, dev).reshape({n, n}), t;
    auto [ours, raw] = beside_copy(dev, size_t(n * n) * 4, [&] { t = a.transpose(); });
    report({"transpose " + std::to_string(n) + "x" + std::to_string(n) + " float32", "GB/s", 2.0 * n * n * 4 / ours / 1e9,
            2.0 * n * n * 4 / raw / 1e9, "raw D2D cudaMemcpy", "tiled: near the copy"},
           json);
}

// A column broadcast, (n, n) + (n, 1): the strided walk (one index division
// per element, by multiplying in 32 bits), against a raw device-to-device
// copy of the matrix's bytes (it reads and writes as much, bar the column).
void broadcast_add_bandwidth(Device dev, int64_t n, bool json) {
    Tensor a = full({n, n}, 1.0, dev), b = full({n, 1}, 2.0, dev), c;
    auto [ours, raw] = beside_copy(dev, size_t(n * n) * 4, [&] { c = a + b; });
    const std::string size = std::to_string(n) + "x" + std::to_string(n);
    report({"broadcast add " + size + " + " + std::to_string(n) + "x1 float32", "GB/s", 2.0 * n * n * 4 / ours / 1e9,
            2.0 * n * n * 4 / raw / 1e9, "raw D2D cudaMemcpy", "strided walk: near the copy"},
           json);
}

// Makes the plugin's device `dev` CUDA's current device for the raw
// baselines; false, having said why, where this program's runtime cannot.
bool select(Device dev) {
    const int ordinal = dev.index;  // the CUDA plugin numbers its devices as CUDA does
    if (cudaError_t e = cudaSetDevice(ordinal); e != cudaSuccess) {
        // E.g. the CUDA emulator's devices, or a driver older than this program's runtime.
        std::fprintf(stderr,
                     "plexus-bench: the raw CUDA baselines are skipped: this program's CUDA runtime cannot "
                     "use CUDA device %d (%s)\n",
                     ordinal, cudaGetErrorString(e));
        return false;
    }
    return true;
}

}  // namespace

void bench_cuda(Device dev, bool quick, bool json) {
    if (!select(dev)) return;
    for (bool tf32 : {false, true}) sgemm(dev, quick ? 1024 : 4096, tf32, json);
    add_bandwidth(dev, quick ? (16 << 20) : (256 << 20), json);
    host_copies(dev, quick ? (32 << 20) : (256 << 20), json);
    cpu_vs_gpu(dev, quick ? 512 : 4096, json);
    cpu_vs_gpu(dev, 64, json);
}

void bench_cuda_tensor_ops(Device dev, bool quick, bool json) {
    if (!select(dev)) return;
    const int64_t n = quick ? (4 << 20) : (64 << 20);
    float_math(dev, n, "exp", RawMathFn::exp, json);
    float_math(dev, n, "tanh", RawMathFn::tanh, json);
    transpose_bandwidth(dev, quick ? 512 : 8192, json);
    broadcast_add_bandwidth(dev, quick ? 512 : 8192, json);
}

}  // namespace pxbench
