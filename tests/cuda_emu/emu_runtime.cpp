// The CUDA emulator's runtime: the CUDA runtime and cuBLAS functions the CUDA
// plugin calls, implemented on the host, so the plugin's own sources (its
// kernels translated by translate_launches.cmake) run and are tested on a
// machine without a GPU. It is a test double for the plugin's logic and
// arithmetic: it says nothing of speed, of real asynchrony (every stream is
// synchronous here) or of a real driver's behaviour.
//
// It checks what a GPU would only fault on: every copy, set and matrix
// product must lie inside one live allocation, leading dimensions must be
// what cuBLAS accepts, and launches must fit CUDA's limits. New memory is
// filled with 0xFF bytes (NaN, -1), so a kernel that reads what it never
// wrote shows. A kernel that faults (SIGSEGV, SIGBUS) loses its device, as
// an illegal address loses a GPU's context. PLEXUS_CUDA_EMU_DEVICES (1-8, default 2: the multi-GPU paths run) and
// PLEXUS_CUDA_EMU_MEMORY (bytes per device, default 1 GiB) shape it.
#include <cblas.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "emu_runtime.hpp"

struct CUstream_st {
    int device;
};
struct CUevent_st {
    int device;
};
struct CUmemPoolHandle_st {
    int device;
    uint64_t reserved = 0;
};
struct cublasContext {
    cudaStream_t stream = nullptr;
};

namespace {

struct Allocation {
    size_t bytes;
    int device;  // -1: pinned host memory
    CUmemPoolHandle_st* pool;
};

uint64_t env_number(const char* name, uint64_t fallback, uint64_t lo, uint64_t hi) {
    const char* text = std::getenv(name);
    if (!text || !*text) return fallback;
    char* end = nullptr;
    const unsigned long long v = std::strtoull(text, &end, 10);
    if (*end || v < lo || v > hi) {
        std::fprintf(stderr, "CUDA emulator: %s='%s' is not a whole number in [%llu, %llu]\n", name, text,
                     (unsigned long long)lo, (unsigned long long)hi);
        std::abort();
    }
    return v;
}

struct State {
    ~State();
    const int devices = int(env_number("PLEXUS_CUDA_EMU_DEVICES", 2, 1, 8));
    const uint64_t memory = env_number("PLEXUS_CUDA_EMU_MEMORY", uint64_t(1) << 30, 1 << 20, uint64_t(1) << 40);
    std::mutex mutex;
    std::map<const char*, Allocation> allocations;  // by start address
    std::vector<uint64_t> used = std::vector<uint64_t>(size_t(devices), 0);  // bytes per device
    std::set<const CUstream_st*> streams;
};

State& state() {
    static State s;
    return s;
}

// Per thread, as CUDA's; initial-exec: small and static, no dynamic TLS block.
__attribute__((tls_model("initial-exec"))) thread_local int current_device = 0;
__attribute__((tls_model("initial-exec"))) thread_local cudaError_t last_error = cudaSuccess;
std::atomic<uint32_t> lost_devices{0};  // a bit per device whose context a kernel fault lost

// A lost device's memory goes with its context when the process ends, as on
// a GPU (its plugin no longer frees it); any other block left is a leak that
// LeakSanitizer should see, so it stays.
State::~State() {
    for (auto& [start, a] : allocations)
        if (a.device >= 0 && (lost_devices.load() & (1u << a.device))) std::free(const_cast<char*>(start));
}

cudaError_t fail(cudaError_t e) {
    last_error = e;
    return e;
}

// The live allocation holding [p, p + bytes), or nullptr (the caller holds the lock).
const Allocation* holding(const void* p, size_t bytes, const char** base = nullptr) {
    auto& all = state().allocations;
    auto it = all.upper_bound(static_cast<const char*>(p));
    if (it == all.begin()) return nullptr;
    --it;
    const char* start = it->first;
    const char* q = static_cast<const char*>(p);
    if (q < start || uint64_t(q - start) + bytes > it->second.bytes) return nullptr;
    if (base) *base = start;
    return &it->second;
}

// Device memory the call touches must lie in one allocation; host memory may
// be anything (pageable or pinned).
bool device_range(const void* p, size_t bytes, const char* call) {
    if (bytes == 0) return true;
    std::lock_guard<std::mutex> lock(state().mutex);
    const Allocation* a = holding(p, bytes);
    if (a && a->device >= 0) return true;
    std::fprintf(stderr, "CUDA emulator: %s: %zu bytes at %p are not inside one device allocation\n", call, bytes, p);
    return false;
}

cudaError_t allocate(void** out, size_t bytes, int device, CUmemPoolHandle_st* pool) {
    if (!out) return fail(cudaErrorInvalidValue);
    if (device >= 0 && (lost_devices.load() & (1u << device))) return fail(cudaErrorIllegalAddress);
    *out = nullptr;
    if (bytes == 0) return cudaSuccess;
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (device >= 0 && s.used[size_t(device)] + bytes > s.memory) return fail(cudaErrorMemoryAllocation);
    // Aligned as cudaMalloc's, and of the exact size, so that a sanitizer
    // sees a kernel step one byte past the end.
    void* p = nullptr;
    if (posix_memalign(&p, 256, bytes) != 0) return fail(cudaErrorMemoryAllocation);
    std::memset(p, 0xFF, bytes);  // never zero: a kernel reading what it did not write shows
    s.allocations[static_cast<const char*>(p)] = Allocation{bytes, device, pool};
    if (device >= 0) s.used[size_t(device)] += bytes;
    if (pool) pool->reserved += bytes;
    *out = p;
    return cudaSuccess;
}

cudaError_t release(void* p, bool host) {
    if (!p) return cudaSuccess;
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    auto it = s.allocations.find(static_cast<const char*>(p));
    if (it == s.allocations.end() || (it->second.device < 0) != host) return fail(cudaErrorInvalidValue);
    if (it->second.device >= 0) s.used[size_t(it->second.device)] -= it->second.bytes;
    if (it->second.pool) it->second.pool->reserved -= it->second.bytes;
    s.allocations.erase(it);
    std::free(p);
    return cudaSuccess;
}

bool valid_device(int d) { return d >= 0 && d < state().devices; }

// `n` floats rounded to TF32 (the nearest value with 10 mantissa bits), in `keep`.
const float* rounded_to_tf32(const float* x, size_t n, std::vector<float>& keep) {
    keep.resize(n);
    for (size_t i = 0; i < n; ++i) {
        uint32_t bits;
        std::memcpy(&bits, &x[i], sizeof bits);
        if ((bits & 0x7f800000u) != 0x7f800000u) bits = (bits + 0xfffu + ((bits >> 13) & 1u)) & ~0x1fffu;
        std::memcpy(&keep[i], &bits, sizeof bits);
    }
    return keep.data();
}

}  // namespace

namespace px_emu {

void note_launch_error(cudaError_t e) { last_error = e; }

void note_device_fault() {
    lost_devices |= 1u << current_device;
    last_error = cudaErrorIllegalAddress;
}

cudaError_t device_lost() {
    return lost_devices.load() & (1u << current_device) ? cudaErrorIllegalAddress : cudaSuccess;
}

bool stream_valid(cudaStream_t s) {
    if (!s) return true;
    std::lock_guard<std::mutex> lock(state().mutex);
    return state().streams.count(s) > 0;
}

}  // namespace px_emu

extern "C" {

cudaError_t cudaGetLastError(void) {
    const cudaError_t e = last_error;
    last_error = px_emu::device_lost();  // a lost context's error is sticky
    return e;
}

const char* cudaGetErrorName(cudaError_t e) {
    switch (e) {
    case cudaSuccess: return "cudaSuccess";
    case cudaErrorInvalidValue: return "cudaErrorInvalidValue";
    case cudaErrorMemoryAllocation: return "cudaErrorMemoryAllocation";
    case cudaErrorInvalidConfiguration: return "cudaErrorInvalidConfiguration";
    case cudaErrorInvalidDevice: return "cudaErrorInvalidDevice";
    case cudaErrorInvalidResourceHandle: return "cudaErrorInvalidResourceHandle";
    case cudaErrorNotReady: return "cudaErrorNotReady";
    case cudaErrorIllegalAddress: return "cudaErrorIllegalAddress";
    default: return "cudaErrorUnknown";
    }
}

const char* cudaGetErrorString(cudaError_t e) {
    switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorNotReady: return "device not ready";
    case cudaErrorIllegalAddress: return "an illegal memory access was encountered";
    default: return "unknown error";
    }
}

cudaError_t cudaDriverGetVersion(int* v) {
    if (!v) return fail(cudaErrorInvalidValue);
    *v = CUDART_VERSION;
    return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int* v) { return cudaDriverGetVersion(v); }

cudaError_t cudaGetDeviceCount(int* count) {
    if (!count) return fail(cudaErrorInvalidValue);
    *count = state().devices;
    return cudaSuccess;
}

cudaError_t cudaGetDevice(int* d) {
    if (!d) return fail(cudaErrorInvalidValue);
    *d = current_device;
    return cudaSuccess;
}

cudaError_t cudaSetDevice(int d) {
    if (!valid_device(d)) return fail(cudaErrorInvalidDevice);
    current_device = d;
    return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int d) {
    if (!prop) return fail(cudaErrorInvalidValue);
    if (!valid_device(d)) return fail(cudaErrorInvalidDevice);
    *prop = cudaDeviceProp{};
    std::snprintf(prop->name, sizeof prop->name, "CUDA emulator on the host");
    prop->major = 9;
    prop->minor = 0;
    prop->multiProcessorCount = 2;  // small grids: every grid-stride loop goes round more than once
    prop->totalGlobalMem = state().memory;
    prop->warpSize = 32;
    prop->maxThreadsPerBlock = 1024;
    return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total) {
    if (!free_bytes || !total) return fail(cudaErrorInvalidValue);
    std::lock_guard<std::mutex> lock(state().mutex);
    *total = state().memory;
    *free_bytes = state().memory - state().used[size_t(current_device)];
    return cudaSuccess;
}

cudaError_t cudaDeviceCanAccessPeer(int* can, int d, int peer) {
    if (!can) return fail(cudaErrorInvalidValue);
    if (!valid_device(d) || !valid_device(peer)) return fail(cudaErrorInvalidDevice);
    *can = d != peer;
    return cudaSuccess;
}

cudaError_t cudaDeviceEnablePeerAccess(int peer, unsigned int) {
    return valid_device(peer) ? cudaSuccess : fail(cudaErrorInvalidDevice);
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned int) {
    if (!s) return fail(cudaErrorInvalidValue);
    *s = new CUstream_st{current_device};
    std::lock_guard<std::mutex> lock(state().mutex);
    state().streams.insert(*s);
    return cudaSuccess;
}

cudaError_t cudaStreamDestroy(cudaStream_t s) {
    std::lock_guard<std::mutex> lock(state().mutex);
    if (!state().streams.erase(s)) return fail(cudaErrorInvalidResourceHandle);
    delete s;
    return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t s) {
    if (!px_emu::stream_valid(s)) return fail(cudaErrorInvalidResourceHandle);
    if (const cudaError_t lost = s ? (lost_devices.load() & (1u << s->device) ? cudaErrorIllegalAddress : cudaSuccess)
                                   : px_emu::device_lost())
        return fail(lost);
    return cudaSuccess;
}
cudaError_t cudaStreamQuery(cudaStream_t s) { return cudaStreamSynchronize(s); }
cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned int) {
    return e ? cudaStreamSynchronize(s) : fail(cudaErrorInvalidResourceHandle);
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* e, unsigned int) {
    if (!e) return fail(cudaErrorInvalidValue);
    *e = new CUevent_st{current_device};
    return cudaSuccess;
}
cudaError_t cudaEventDestroy(cudaEvent_t e) {
    delete e;
    return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) {
    return e ? cudaStreamSynchronize(s) : fail(cudaErrorInvalidResourceHandle);
}
cudaError_t cudaEventSynchronize(cudaEvent_t e) {
    if (!e) return fail(cudaErrorInvalidResourceHandle);
    return lost_devices.load() & (1u << e->device) ? fail(cudaErrorIllegalAddress) : cudaSuccess;
}
cudaError_t cudaEventQuery(cudaEvent_t e) { return cudaEventSynchronize(e); }

cudaError_t cudaMalloc(void** p, size_t bytes) { return allocate(p, bytes, current_device, nullptr); }
cudaError_t cudaFree(void* p) { return release(p, false); }
cudaError_t cudaFreeAsync(void* p, cudaStream_t) { return release(p, false); }
cudaError_t cudaHostAlloc(void** p, size_t bytes, unsigned int) { return allocate(p, bytes, -1, nullptr); }
cudaError_t cudaFreeHost(void* p) { return release(p, true); }

cudaError_t cudaMemPoolCreate(cudaMemPool_t* pool, const cudaMemPoolProps* props) {
    if (!pool || !props || !valid_device(props->location.id)) return fail(cudaErrorInvalidValue);
    *pool = new CUmemPoolHandle_st{props->location.id};
    return cudaSuccess;
}
cudaError_t cudaMemPoolDestroy(cudaMemPool_t pool) {
    std::lock_guard<std::mutex> lock(state().mutex);
    for (auto& [start, a] : state().allocations)
        if (a.pool == pool) a.pool = nullptr;  // blocks still in use outlive their pool
    delete pool;
    return cudaSuccess;
}
cudaError_t cudaMallocFromPoolAsync(void** p, size_t bytes, cudaMemPool_t pool, cudaStream_t) {
    if (!pool) return fail(cudaErrorInvalidValue);
    return allocate(p, bytes, pool->device, pool);
}
cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool, size_t) { return pool ? cudaSuccess : fail(cudaErrorInvalidValue); }
cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, cudaMemPoolAttr, void* value) {
    return pool && value ? cudaSuccess : fail(cudaErrorInvalidValue);
}
cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr, void* value) {
    if (!pool || !value) return fail(cudaErrorInvalidValue);
    if (attr != cudaMemPoolAttrReservedMemCurrent) return fail(cudaErrorInvalidValue);
    std::lock_guard<std::mutex> lock(state().mutex);
    *static_cast<uint64_t*>(value) = pool->reserved;
    return cudaSuccess;
}

cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* attributes, const void* p) {
    if (!attributes) return fail(cudaErrorInvalidValue);
    *attributes = cudaPointerAttributes{};
    std::lock_guard<std::mutex> lock(state().mutex);
    const Allocation* a = holding(p, 1);
    attributes->type = !a ? cudaMemoryTypeUnregistered : a->device < 0 ? cudaMemoryTypeHost : cudaMemoryTypeDevice;
    attributes->device = a && a->device >= 0 ? a->device : current_device;
    return cudaSuccess;
}

cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) {
    if (const cudaError_t lost = px_emu::device_lost()) return fail(lost);
    const bool dst_device = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
    const bool src_device = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
    if (kind != cudaMemcpyHostToDevice && kind != cudaMemcpyDeviceToHost && kind != cudaMemcpyDeviceToDevice)
        return fail(cudaErrorInvalidValue);
    if ((dst_device && !device_range(dst, bytes, "cudaMemcpy (destination)")) ||
        (src_device && !device_range(src, bytes, "cudaMemcpy (source)")))
        return fail(cudaErrorInvalidValue);
    if (bytes) std::memmove(dst, src, bytes);
    return cudaSuccess;
}
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, cudaStream_t s) {
    if (!px_emu::stream_valid(s)) return fail(cudaErrorInvalidResourceHandle);
    return cudaMemcpy(dst, src, bytes, kind);
}
cudaError_t cudaMemcpyPeerAsync(void* dst, int dst_device, const void* src, int src_device, size_t bytes,
                                cudaStream_t s) {
    if (!valid_device(dst_device) || !valid_device(src_device)) return fail(cudaErrorInvalidDevice);
    return cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s);
}
cudaError_t cudaMemset(void* p, int value, size_t bytes) {
    if (const cudaError_t lost = px_emu::device_lost()) return fail(lost);
    if (!device_range(p, bytes, "cudaMemset")) return fail(cudaErrorInvalidValue);
    if (bytes) std::memset(p, value, bytes);
    return cudaSuccess;
}
cudaError_t cudaMemsetAsync(void* p, int value, size_t bytes, cudaStream_t s) {
    if (!px_emu::stream_valid(s)) return fail(cudaErrorInvalidResourceHandle);
    return cudaMemset(p, value, bytes);
}

// ---- cuBLAS ----

cublasStatus_t cublasCreate_v2(cublasHandle_t* h) {
    if (!h) return CUBLAS_STATUS_INVALID_VALUE;
    *h = new cublasContext;
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasDestroy_v2(cublasHandle_t h) {
    delete h;
    return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasSetStream_v2(cublasHandle_t h, cudaStream_t s) {
    if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
    h->stream = s;
    return CUBLAS_STATUS_SUCCESS;
}

// Column-major C = alpha op(A) op(B) + beta C per batch, as cuBLAS defines it,
// through OpenBLAS; with cuBLAS's own checks of the sizes and leading dimensions.
cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                          int k, const void* alpha, const void* a, cudaDataType at, int lda,
                                          long long stride_a, const void* b, cudaDataType bt, int ldb,
                                          long long stride_b, const void* beta, void* c, cudaDataType ct, int ldc,
                                          long long stride_c, int batch, cublasComputeType_t compute,
                                          cublasGemmAlgo_t) {
    if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
    const bool trans_a = ta != CUBLAS_OP_N, trans_b = tb != CUBLAS_OP_N;
    const int a_rows = trans_a ? k : m, a_cols = trans_a ? m : k;
    const int b_rows = trans_b ? n : k, b_cols = trans_b ? k : n;
    if (m < 0 || n < 0 || k < 0 || batch < 0 || lda < std::max(1, a_rows) || ldb < std::max(1, b_rows) ||
        ldc < std::max(1, m) || !alpha || !beta)
        return CUBLAS_STATUS_INVALID_VALUE;
    const bool f32 = at == CUDA_R_32F && bt == CUDA_R_32F && ct == CUDA_R_32F &&
                     (compute == CUBLAS_COMPUTE_32F || compute == CUBLAS_COMPUTE_32F_FAST_TF32);
    const bool f64 = at == CUDA_R_64F && bt == CUDA_R_64F && ct == CUDA_R_64F && compute == CUBLAS_COMPUTE_64F;
    if (!f32 && !f64) return CUBLAS_STATUS_NOT_SUPPORTED;
    if (m == 0 || n == 0 || batch == 0) return CUBLAS_STATUS_SUCCESS;
    const size_t e = f32 ? 4 : 8;
    // Every matrix read or written must lie inside one allocation.
    auto extent = [&](int ld, int cols) { return (size_t(ld) * size_t(cols - 1) + size_t(ld)) * e; };
    for (int i = 0; i < batch; ++i) {
        const bool ok = (k == 0 || (device_range(static_cast<const char*>(a) + i * stride_a * e, extent(lda, a_cols), "cublasGemmStridedBatchedEx (A)") &&
                                    device_range(static_cast<const char*>(b) + i * stride_b * e, extent(ldb, b_cols), "cublasGemmStridedBatchedEx (B)"))) &&
                        device_range(static_cast<char*>(c) + i * stride_c * e, extent(ldc, n), "cublasGemmStridedBatchedEx (C)");
        if (!ok) return CUBLAS_STATUS_EXECUTION_FAILED;
    }
    const CBLAS_TRANSPOSE oa = trans_a ? CblasTrans : CblasNoTrans, ob = trans_b ? CblasTrans : CblasNoTrans;
    const bool tf32 = compute == CUBLAS_COMPUTE_32F_FAST_TF32;
    std::vector<float> a_tf32, b_tf32;
    for (int i = 0; i < batch; ++i) {
        const float* ai = static_cast<const float*>(a) + i * stride_a;
        const float* bi = static_cast<const float*>(b) + i * stride_b;
        if (f32 && tf32 && k > 0) {  // tensor cores read TF32: 10 mantissa bits
            ai = rounded_to_tf32(ai, size_t(lda) * size_t(a_cols), a_tf32);
            bi = rounded_to_tf32(bi, size_t(ldb) * size_t(b_cols), b_tf32);
        }
        if (f32)
            cblas_sgemm(CblasColMajor, oa, ob, m, n, k, *static_cast<const float*>(alpha), ai, lda, bi, ldb,
                        *static_cast<const float*>(beta), static_cast<float*>(c) + i * stride_c, ldc);
        else
            cblas_dgemm(CblasColMajor, oa, ob, m, n, k, *static_cast<const double*>(alpha),
                        static_cast<const double*>(a) + i * stride_a, lda, static_cast<const double*>(b) + i * stride_b,
                        ldb, *static_cast<const double*>(beta), static_cast<double*>(c) + i * stride_c, ldc);
    }
    return CUBLAS_STATUS_SUCCESS;
}

}  // extern "C"
