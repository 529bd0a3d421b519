// The CUDA emulator's runtime: the CUDA runtime functions the CUDA plugin
// calls, implemented on the host, so the plugin's own sources (its kernels
// translated by translate_launches.cmake) run and are tested on a machine
// without a GPU. It is a test double for the plugin's logic, arithmetic and
// ordering: it says nothing of speed or of a real driver's behaviour.
//
// Work queued on a stream runs as late as CUDA allows (emu_streams.hpp), so
// a missing wait shows. Every copy, set and matrix product must lie inside
// one live allocation, and launches must fit CUDA's limits. New memory is
// filled with 0xFF bytes (NaN, -1), so a kernel that reads what it never
// wrote shows. A kernel that faults (SIGSEGV, SIGBUS) loses its device, as
// an illegal address loses a GPU's context. PLEXUS_CUDA_EMU_DEVICES (1-8,
// default 2: the multi-GPU paths run) and PLEXUS_CUDA_EMU_MEMORY (bytes per
// device, default 1 GiB) shape it. cuBLAS is in emu_cublas.cpp, NCCL in
// emu_nccl.cpp, the errors' names in emu_errors.cpp.
#include <cuda_runtime_api.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "emu_driver_scope.hpp"
#include "emu_runtime.hpp"
#include "emu_streams.hpp"

struct CUstream_st {
    std::shared_ptr<px_emu::Queue> queue;
};
struct CUevent_st {
    px_emu::Position recorded;  // empty until the event is first recorded
    // Timing events (made without cudaEventDisableTiming): when the stream
    // reached the latest record, in steady-clock nanoseconds; -1 until then.
    bool timing = false;
    std::shared_ptr<std::atomic<int64_t>> reached;
};
struct CUmemPoolHandle_st {
    int device;
    uint64_t reserved = 0;
};

namespace {

struct Allocation {
    size_t bytes;
    int device;  // -1: pinned host memory
    CUmemPoolHandle_st* pool;
    bool freeing = false;  // a cudaFreeAsync of it is queued
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
    std::vector<std::shared_ptr<px_emu::Queue>> legacy = [this] {  // each device's default stream
        std::vector<std::shared_ptr<px_emu::Queue>> q;
        q.reserve(size_t(devices));
        for (int d = 0; d < devices; ++d) q.push_back(px_emu::make_queue(d));
        return q;
    }();
};

State& state() {
    if (px_emu::reclaim_at_exit()) {
        static State* kept = new State;  // never destroyed: what is left at exit stays reachable
        return *kept;
    }
    static State s;
    return s;
}

// Per thread, as CUDA's; initial-exec: small and static, no dynamic TLS block.
__attribute__((tls_model("initial-exec"))) thread_local int this_thread_device = 0;
__attribute__((tls_model("initial-exec"))) thread_local cudaError_t last_error = cudaSuccess;

// A lost device's memory goes with its context when the process ends, as on
// a GPU (its plugin no longer frees it); any other block left is a leak that
// LeakSanitizer should see, so it stays.
State::~State() {
    for (auto& [start, a] : allocations)
        if (a.device >= 0 && px_emu::lost_error(a.device)) std::free(const_cast<char*>(start));
}

cudaError_t fail(cudaError_t e) {
    last_error = e;
    return e;
}

// The live allocation holding [p, p + bytes), or nullptr (the caller holds the lock).
const Allocation* holding(const void* p, size_t bytes) {
    auto& all = state().allocations;
    auto it = all.upper_bound(static_cast<const char*>(p));
    if (it == all.begin()) return nullptr;
    --it;
    const char* start = it->first;
    const char* q = static_cast<const char*>(p);
    if (q < start || uint64_t(q - start) + bytes > it->second.bytes) return nullptr;
    return &it->second;
}

cudaError_t allocate(void** out, size_t bytes, int device, CUmemPoolHandle_st* pool) {
    if (!out) return fail(cudaErrorInvalidValue);
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

// Frees p now: cudaFree and cudaFreeHost (after the device's work), and a
// queued cudaFreeAsync when its stream gets to it.
cudaError_t release_now(void* p) {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    auto it = s.allocations.find(static_cast<const char*>(p));
    if (it == s.allocations.end()) return cudaErrorInvalidValue;
    if (it->second.device >= 0) s.used[size_t(it->second.device)] -= it->second.bytes;
    if (it->second.pool) it->second.pool->reserved -= it->second.bytes;
    s.allocations.erase(it);
    std::free(p);
    return cudaSuccess;
}

// The device of allocation p (-1: pinned host memory), or -2 when p is not
// the start of a live allocation of that kind or a free of it is queued.
int freeable(void* p, bool host) {
    std::lock_guard<std::mutex> lock(state().mutex);
    auto it = state().allocations.find(static_cast<const char*>(p));
    if (it == state().allocations.end() || (it->second.device < 0) != host || it->second.freeing) return -2;
    return it->second.device;
}

bool valid_device(int d) { return d >= 0 && d < state().devices; }

// Waits for every queue of `device`: what CUDA's implicitly synchronizing
// calls do.
void synchronize(int device) {
    std::vector<px_emu::Position> ends;
    {
        std::lock_guard<std::mutex> lock(state().mutex);
        for (const CUstream_st* st : state().streams)
            if (px_emu::device_of(*st->queue) == device) ends.push_back(px_emu::end_of(st->queue));
        ends.push_back(px_emu::end_of(state().legacy[size_t(device)]));
    }
    for (const px_emu::Position& p : ends) px_emu::wait_until(p);
}

// Queues dst <- src (bytes) on q; the bytes are read when the queue gets there.
px_emu::Position queue_copy(const std::shared_ptr<px_emu::Queue>& q, void* dst, const void* src, size_t bytes) {
    return px_emu::enqueue(q, [=] {
        std::memmove(dst, src, bytes);
        return true;
    });
}

// Whether a copy of `kind` between dst and src (bytes) is one CUDA accepts here.
bool copy_valid(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, const char* call) {
    const bool dst_device = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
    const bool src_device = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
    if (kind != cudaMemcpyHostToDevice && kind != cudaMemcpyDeviceToHost && kind != cudaMemcpyDeviceToDevice) return false;
    const std::string what(call);
    return (!dst_device || px_emu::device_range(dst, bytes, (what + " (destination)").c_str())) &&
           (!src_device || px_emu::device_range(src, bytes, (what + " (source)").c_str()));
}

// What stops `fn` on `device` (px_emu::refused), noted as the last error.
cudaError_t refuse(const char* fn, int device, bool allocates = false) {
    const cudaError_t e = px_emu::refused(fn, device, allocates);
    return e ? fail(e) : cudaSuccess;
}

// cudaMemcpyAsync and cudaMemcpyPeerAsync as `fn`.
cudaError_t copy_async(const char* fn, void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, cudaStream_t s) {
    const std::shared_ptr<px_emu::Queue> q = px_emu::queue_of(s);
    if (!q) return fail(cudaErrorInvalidResourceHandle);
    if (const cudaError_t e = refuse(fn, px_emu::device_of(*q))) return e;
    if (!copy_valid(dst, src, bytes, kind, fn)) return fail(cudaErrorInvalidValue);
    if (bytes) queue_copy(q, dst, src, bytes);
    return cudaSuccess;
}

// cudaMemsetAsync and cudaMemset as `fn`.
cudaError_t set_async(const char* fn, void* p, int value, size_t bytes, cudaStream_t s) {
    const std::shared_ptr<px_emu::Queue> q = px_emu::queue_of(s);
    if (!q) return fail(cudaErrorInvalidResourceHandle);
    if (const cudaError_t e = refuse(fn, px_emu::device_of(*q))) return e;
    if (!px_emu::device_range(p, bytes, fn)) return fail(cudaErrorInvalidValue);
    if (bytes)
        px_emu::enqueue(q, [=] {
            std::memset(p, value, bytes);
            return true;
        });
    return cudaSuccess;
}

// The device an event was last recorded on (the current one if never).
int event_device(const CUevent_st* e) {
    return e->recorded.queue ? px_emu::device_of(*e->recorded.queue) : this_thread_device;
}

// The error of a wait for work of `device` that has run.
cudaError_t after_wait(int device) {
    const cudaError_t lost = px_emu::lost_error(device);
    return lost ? fail(lost) : cudaSuccess;
}

// Whether the work up to p has run; if not, runs it (a query sees work that
// was still going, as a GPU's would) and says cudaErrorNotReady.
cudaError_t query(const px_emu::Position& p) {
    if (!p.queue) return cudaSuccess;
    if (const cudaError_t lost = px_emu::lost_error(px_emu::device_of(*p.queue))) return fail(lost);
    if (px_emu::finished(p)) return cudaSuccess;
    px_emu::run_until(p);
    return cudaErrorNotReady;
}

}  // namespace

namespace px_emu {

namespace {
// Made when the library is loaded, so destroyed at exit after what was
// made later: the exit handlers the plugin registers at its first call run
// before it, as they run before the real CUDA runtime's teardown.
std::atomic<bool> g_shut_down{false};
struct ShutDownAtExit {
    ShutDownAtExit() = default;
    ShutDownAtExit(const ShutDownAtExit&) = delete;
    ShutDownAtExit& operator=(const ShutDownAtExit&) = delete;
    ~ShutDownAtExit() { g_shut_down.store(true); }
} g_shut_down_at_exit;
}  // namespace

bool shut_down_at_exit() { return g_shut_down.load(); }

void called_after_shut_down(const char* fn) {
    std::fprintf(stderr,
                 "cuda emulator: %s was called after the CUDA runtime shut down at process exit (CUDA fails "
                 "such a call with cudaErrorCudartUnloading, or crashes)\n",
                 fn);
    std::abort();
}

void note_launch_error(cudaError_t e) { last_error = e; }

void note_device_fault() { lose_device(this_thread_device, cudaErrorIllegalAddress); }

cudaError_t device_lost() { return lost_error(this_thread_device); }

bool device_is_lost(int device) { return lost_error(device) != cudaSuccess; }

int current_device() { return this_thread_device; }

void count_memory(long& device_blocks, long& host_blocks, long& streams) {
    std::lock_guard<std::mutex> lock(state().mutex);
    device_blocks = host_blocks = 0;
    for (const auto& [start, a] : state().allocations) ++(a.device >= 0 ? device_blocks : host_blocks);
    streams = long(state().streams.size());
}

bool reclaim_lost_memory() {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    if (!s.streams.empty()) return false;
    for (auto it = s.allocations.begin(); it != s.allocations.end();) {
        const int d = it->second.device;
        if (d < 0 || !lost_error(d)) {
            ++it;
            continue;
        }
        s.used[size_t(d)] -= it->second.bytes;
        if (it->second.pool) it->second.pool->reserved -= it->second.bytes;
        std::free(const_cast<char*>(it->first));
        it = s.allocations.erase(it);
    }
    return true;
}

int exchange_current_device(int device) {
    const int before = this_thread_device;
    this_thread_device = device;
    return before;
}

std::shared_ptr<Queue> queue_of(cudaStream_t s) {
    std::lock_guard<std::mutex> lock(state().mutex);
    if (!s) return state().legacy[size_t(this_thread_device)];
    return state().streams.count(s) ? s->queue : nullptr;
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

}  // namespace px_emu

extern "C" {

cudaError_t cudaGetLastError(void) {
    px_emu::DriverScope driver;
    const cudaError_t e = last_error != cudaSuccess ? last_error : px_emu::device_lost();
    // A lost context's error is sticky to that device's context: returned
    // again while it is current, not after a switch to a device still working.
    last_error = cudaSuccess;
    return e;
}

cudaError_t cudaDriverGetVersion(int* v) {
    px_emu::DriverScope driver;
    if (!v) return fail(cudaErrorInvalidValue);
    *v = CUDART_VERSION;
    return cudaSuccess;
}

cudaError_t cudaRuntimeGetVersion(int* v) {
    px_emu::DriverScope driver;
    return cudaDriverGetVersion(v);
}

cudaError_t cudaGetDeviceCount(int* count) {
    px_emu::DriverScope driver;
    if (!count) return fail(cudaErrorInvalidValue);
    *count = state().devices;
    return cudaSuccess;
}

cudaError_t cudaGetDevice(int* d) {
    px_emu::DriverScope driver;
    if (!d) return fail(cudaErrorInvalidValue);
    *d = this_thread_device;
    return cudaSuccess;
}

cudaError_t cudaSetDevice(int d) {
    px_emu::DriverScope driver;
    if (!valid_device(d)) return fail(cudaErrorInvalidDevice);
    this_thread_device = d;
    return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int d) {
    px_emu::DriverScope driver;
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
    px_emu::DriverScope driver;
    if (!free_bytes || !total) return fail(cudaErrorInvalidValue);
    if (const cudaError_t e = refuse(__func__, this_thread_device)) return e;
    std::lock_guard<std::mutex> lock(state().mutex);
    *total = state().memory;
    *free_bytes = state().memory - state().used[size_t(this_thread_device)];
    return cudaSuccess;
}

cudaError_t cudaDeviceCanAccessPeer(int* can, int d, int peer) {
    px_emu::DriverScope driver;
    if (!can) return fail(cudaErrorInvalidValue);
    if (!valid_device(d) || !valid_device(peer)) return fail(cudaErrorInvalidDevice);
    *can = d != peer;
    return cudaSuccess;
}

cudaError_t cudaDeviceEnablePeerAccess(int peer, unsigned int) {
    px_emu::DriverScope driver;
    if (!valid_device(peer)) return fail(cudaErrorInvalidDevice);
    return refuse(__func__, this_thread_device);
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned int flags) {
    px_emu::DriverScope driver;
    if (!s) return fail(cudaErrorInvalidValue);
    if (!(flags & cudaStreamNonBlocking)) {
        // A blocking stream is ordered with the legacy default stream, which the emulator does not model.
        std::fprintf(stderr, "CUDA emulator: only non-blocking streams (cudaStreamNonBlocking) are emulated\n");
        return fail(cudaErrorNotSupported);
    }
    if (const cudaError_t e = refuse(__func__, this_thread_device, true)) return e;
    *s = new CUstream_st{px_emu::make_queue(this_thread_device)};
    std::lock_guard<std::mutex> lock(state().mutex);
    state().streams.insert(*s);
    return cudaSuccess;
}

// Its queued work still runs, as CUDA's does after the stream is destroyed.
cudaError_t cudaStreamDestroy(cudaStream_t s) {
    px_emu::DriverScope driver;
    {
        std::lock_guard<std::mutex> lock(state().mutex);
        if (!state().streams.erase(s)) return fail(cudaErrorInvalidResourceHandle);
    }
    px_emu::wait_until(px_emu::end_of(s->queue));
    delete s;
    return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t s) {
    px_emu::DriverScope driver;
    const std::shared_ptr<px_emu::Queue> q = px_emu::queue_of(s);
    if (!q) return fail(cudaErrorInvalidResourceHandle);
    if (const cudaError_t e = refuse(__func__, px_emu::device_of(*q))) return e;
    px_emu::wait_until(px_emu::end_of(q));
    return after_wait(px_emu::device_of(*q));
}
cudaError_t cudaStreamQuery(cudaStream_t s) {
    px_emu::DriverScope driver;
    const std::shared_ptr<px_emu::Queue> q = px_emu::queue_of(s);
    if (!q) return fail(cudaErrorInvalidResourceHandle);
    if (const cudaError_t e = refuse(__func__, px_emu::device_of(*q))) return e;
    return query(px_emu::end_of(q));
}
// Work queued on s after this waits for what was queued before e's latest record.
cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned int) {
    px_emu::DriverScope driver;
    const std::shared_ptr<px_emu::Queue> q = px_emu::queue_of(s);
    if (!q || !e) return fail(cudaErrorInvalidResourceHandle);
    if (const cudaError_t lost = refuse(__func__, px_emu::device_of(*q))) return lost;
    const px_emu::Position before = e->recorded;
    if (before.queue) px_emu::enqueue(q, [before] { return px_emu::run_until(before); });
    return cudaSuccess;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* e, unsigned int flags) {
    px_emu::DriverScope driver;
    if (!e) return fail(cudaErrorInvalidValue);
    if (const cudaError_t refused = refuse(__func__, this_thread_device, true)) return refused;
    *e = new CUevent_st{};
    (*e)->timing = !(flags & cudaEventDisableTiming);
    px_emu::note_object(px_emu::Object::event, *e, +1);
    return cudaSuccess;
}
cudaError_t cudaEventDestroy(cudaEvent_t e) {
    px_emu::DriverScope driver;
    if (e) px_emu::note_object(px_emu::Object::event, e, -1);
    delete e;
    return cudaSuccess;
}
cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) {
    px_emu::DriverScope driver;
    const std::shared_ptr<px_emu::Queue> q = px_emu::queue_of(s);
    if (!q || !e) return fail(cudaErrorInvalidResourceHandle);
    if (const cudaError_t lost = refuse(__func__, px_emu::device_of(*q))) return lost;
    if (!e->timing) {
        e->recorded = px_emu::end_of(q);
        return cudaSuccess;
    }
    // A timing event is a piece of work that notes when the stream ran it.
    auto reached = std::make_shared<std::atomic<int64_t>>(-1);
    e->reached = reached;
    e->recorded = px_emu::enqueue(q, [reached] {
        reached->store(std::chrono::duration_cast<std::chrono::nanoseconds>(
                           std::chrono::steady_clock::now().time_since_epoch())
                           .count());
        return true;
    });
    return cudaSuccess;
}
// The time between two timing events' latest records, once both have run.
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
    px_emu::DriverScope driver;
    if (!ms) return fail(cudaErrorInvalidValue);
    if (!start || !end) return fail(cudaErrorInvalidResourceHandle);
    if (const cudaError_t lost = refuse(__func__, event_device(end))) return lost;
    if (!start->timing || !end->timing || !start->reached || !end->reached) return fail(cudaErrorInvalidResourceHandle);
    const int64_t from = start->reached->load(), to = end->reached->load();
    if (from < 0 || to < 0) return cudaErrorNotReady;  // as a query says it: not an error kept
    *ms = float(double(to - from) / 1e6);
    return cudaSuccess;
}
cudaError_t cudaEventSynchronize(cudaEvent_t e) {
    px_emu::DriverScope driver;
    if (!e) return fail(cudaErrorInvalidResourceHandle);
    if (const cudaError_t lost = refuse(__func__, event_device(e))) return lost;
    if (!e->recorded.queue) return cudaSuccess;  // never recorded: nothing to wait for
    px_emu::wait_until(e->recorded);
    return after_wait(px_emu::device_of(*e->recorded.queue));
}
cudaError_t cudaEventQuery(cudaEvent_t e) {
    px_emu::DriverScope driver;
    if (!e) return fail(cudaErrorInvalidResourceHandle);
    if (const cudaError_t lost = refuse(__func__, event_device(e))) return lost;
    return query(e->recorded);
}

cudaError_t cudaMalloc(void** p, size_t bytes) {
    px_emu::DriverScope driver;
    if (const cudaError_t e = refuse(__func__, this_thread_device, true)) return e;
    return allocate(p, bytes, this_thread_device, nullptr);
}
cudaError_t cudaHostAlloc(void** p, size_t bytes, unsigned int) {
    px_emu::DriverScope driver;
    if (const cudaError_t e = refuse(__func__, this_thread_device, true)) return e;
    return allocate(p, bytes, -1, nullptr);
}
// cudaFree and cudaFreeHost wait for the device's work first (CUDA's implicit synchronization).
cudaError_t cudaFree(void* p) {
    px_emu::DriverScope driver;
    if (!p) return cudaSuccess;
    const int device = freeable(p, false);
    if (device < -1) return fail(cudaErrorInvalidValue);
    synchronize(device);
    return release_now(p);
}
cudaError_t cudaFreeHost(void* p) {
    px_emu::DriverScope driver;
    if (!p) return cudaSuccess;
    if (freeable(p, true) < -1) return fail(cudaErrorInvalidValue);
    synchronize(this_thread_device);
    return release_now(p);
}
// Freed when the stream gets there; a second free of it before then is refused.
cudaError_t cudaFreeAsync(void* p, cudaStream_t s) {
    px_emu::DriverScope driver;
    if (!p) return cudaSuccess;
    const std::shared_ptr<px_emu::Queue> q = px_emu::queue_of(s);
    if (!q) return fail(cudaErrorInvalidResourceHandle);
    {
        std::lock_guard<std::mutex> lock(state().mutex);
        auto it = state().allocations.find(static_cast<const char*>(p));
        if (it == state().allocations.end() || it->second.device < 0 || it->second.freeing)
            return fail(cudaErrorInvalidValue);
        it->second.freeing = true;
    }
    px_emu::enqueue(q, [p] {
        release_now(p);
        return true;
    });
    return cudaSuccess;
}

cudaError_t cudaMemPoolCreate(cudaMemPool_t* pool, const cudaMemPoolProps* props) {
    px_emu::DriverScope driver;
    if (!pool || !props || !valid_device(props->location.id)) return fail(cudaErrorInvalidValue);
    if (const cudaError_t e = refuse(__func__, props->location.id, true)) return e;
    *pool = new CUmemPoolHandle_st{props->location.id};
    px_emu::note_object(px_emu::Object::pool, *pool, +1);
    return cudaSuccess;
}
cudaError_t cudaMemPoolDestroy(cudaMemPool_t pool) {
    px_emu::DriverScope driver;
    if (pool) px_emu::note_object(px_emu::Object::pool, pool, -1);
    std::lock_guard<std::mutex> lock(state().mutex);
    for (auto& [start, a] : state().allocations)
        if (a.pool == pool) a.pool = nullptr;  // blocks still in use outlive their pool
    delete pool;
    return cudaSuccess;
}
// The current device's default pool (plexus-bench's raw per-op baseline):
// memory of that device, freed by cudaFreeAsync.
cudaError_t cudaMallocAsync(void** p, size_t bytes, cudaStream_t) {
    px_emu::DriverScope driver;
    if (const cudaError_t e = refuse(__func__, this_thread_device, true)) return e;
    return allocate(p, bytes, this_thread_device, nullptr);
}
cudaError_t cudaMallocFromPoolAsync(void** p, size_t bytes, cudaMemPool_t pool, cudaStream_t) {
    px_emu::DriverScope driver;
    if (!pool) return fail(cudaErrorInvalidValue);
    if (const cudaError_t e = refuse(__func__, pool->device, true)) return e;
    return allocate(p, bytes, pool->device, pool);
}
cudaError_t cudaMemPoolTrimTo(cudaMemPool_t pool, size_t) {
    px_emu::DriverScope driver;
    return pool ? refuse(__func__, pool->device) : fail(cudaErrorInvalidValue);
}
cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t pool, cudaMemPoolAttr, void* value) {
    px_emu::DriverScope driver;
    return pool && value ? refuse(__func__, pool->device) : fail(cudaErrorInvalidValue);
}
cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t pool, cudaMemPoolAttr attr, void* value) {
    px_emu::DriverScope driver;
    if (!pool || !value) return fail(cudaErrorInvalidValue);
    if (attr != cudaMemPoolAttrReservedMemCurrent) return fail(cudaErrorInvalidValue);
    if (const cudaError_t e = refuse(__func__, pool->device)) return e;
    std::lock_guard<std::mutex> lock(state().mutex);
    *static_cast<uint64_t*>(value) = pool->reserved;
    return cudaSuccess;
}

cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* attributes, const void* p) {
    px_emu::DriverScope driver;
    if (!attributes) return fail(cudaErrorInvalidValue);
    *attributes = cudaPointerAttributes{};
    std::lock_guard<std::mutex> lock(state().mutex);
    const Allocation* a = holding(p, 1);
    attributes->type = !a ? cudaMemoryTypeUnregistered : a->device < 0 ? cudaMemoryTypeHost : cudaMemoryTypeDevice;
    attributes->device = a && a->device >= 0 ? a->device : this_thread_device;
    return cudaSuccess;
}

// Synchronous as CUDA's: a copy to the host returns once it is done, one
// from the host once the bytes are taken (copied aside here); a copy
// between device memory is only queued. On the legacy default stream.
cudaError_t cudaMemcpy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind) {
    px_emu::DriverScope driver;
    if (const cudaError_t e = refuse(__func__, this_thread_device)) return e;
    if (!copy_valid(dst, src, bytes, kind, "cudaMemcpy")) return fail(cudaErrorInvalidValue);
    if (!bytes) return cudaSuccess;
    const std::shared_ptr<px_emu::Queue> q = px_emu::queue_of(nullptr);
    if (kind == cudaMemcpyHostToDevice) {
        auto taken = std::make_shared<std::vector<char>>(static_cast<const char*>(src), static_cast<const char*>(src) + bytes);
        px_emu::enqueue(q, [dst, taken] {
            std::memcpy(dst, taken->data(), taken->size());
            return true;
        });
        return cudaSuccess;
    }
    const px_emu::Position done = queue_copy(q, dst, src, bytes);
    if (kind == cudaMemcpyDeviceToHost) {
        px_emu::wait_until(done);
        return after_wait(px_emu::device_of(*q));
    }
    return cudaSuccess;
}
// Asynchronous even with ordinary (pageable) host memory: CUDA allows that,
// so the host's bytes must stay put until the stream has run the copy.
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind, cudaStream_t s) {
    px_emu::DriverScope driver;
    return copy_async(__func__, dst, src, bytes, kind, s);
}
cudaError_t cudaMemcpyPeerAsync(void* dst, int dst_device, const void* src, int src_device, size_t bytes,
                                cudaStream_t s) {
    px_emu::DriverScope driver;
    if (!valid_device(dst_device) || !valid_device(src_device)) return fail(cudaErrorInvalidDevice);
    if (const cudaError_t lost = px_emu::lost_error(src_device)) return fail(lost);
    return copy_async(__func__, dst, src, bytes, cudaMemcpyDeviceToDevice, s);
}
cudaError_t cudaMemsetAsync(void* p, int value, size_t bytes, cudaStream_t s) {
    px_emu::DriverScope driver;
    return set_async(__func__, p, value, bytes, s);
}
// Asynchronous to the host for device memory, as CUDA's, on the legacy
// default stream: not ordered with work on non-blocking streams.
cudaError_t cudaMemset(void* p, int value, size_t bytes) {
    px_emu::DriverScope driver;
    return set_async(__func__, p, value, bytes, nullptr);
}

// What only plexus-bench's raw baselines call (tools/bench/bench_cuda.cpp).
cudaError_t cudaMallocHost(void** p, size_t bytes) {
    px_emu::DriverScope driver;
    return cudaHostAlloc(p, bytes, cudaHostAllocDefault);
}
cudaError_t cudaDeviceSynchronize(void) {
    px_emu::DriverScope driver;
    if (const cudaError_t e = refuse(__func__, this_thread_device)) return e;
    synchronize(this_thread_device);
    return after_wait(this_thread_device);
}

}  // extern "C"
