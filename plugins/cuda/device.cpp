#include "device.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <thread>

#include <limits>

#include "cuda_check.hpp"
#include "shutdown.hpp"

namespace pxcuda {

DeviceScope::DeviceScope(int ordinal) {
    int current = -1;
    if (cudaGetDevice(&current) == cudaSuccess && current == ordinal) return;
    PX_CUDA(cudaSetDevice(ordinal));
    previous_ = current;  // restored after: the application may use CUDA itself
}

DeviceScope::~DeviceScope() {
    if (previous_ >= 0) cudaSetDevice(previous_);
}

Device::Device(int ord) : ordinal(ord) {
    failed_.reserve(256);  // room for on_error_without_memory's text
    DeviceScope scope(ordinal);
    try {
        cudaDeviceProp prop{};
        PX_CUDA(cudaGetDeviceProperties(&prop, ordinal));
        sm_count_ = prop.multiProcessorCount > 0 ? prop.multiProcessorCount : 1;
        name_ = std::string(prop.name) + " (sm_" + std::to_string(prop.major) + std::to_string(prop.minor) + ", " +
                std::to_string(sm_count_) + " SMs)";
        PX_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
        PX_CUDA(cudaEventCreateWithFlags(&marker_, cudaEventDisableTiming));
        // Our own pool, so two runtimes (or the application) never share
        // blocks; it keeps freed memory (release threshold: all) for reuse.
        cudaMemPoolProps props{};
        props.allocType = cudaMemAllocationTypePinned;
        props.location.type = cudaMemLocationTypeDevice;
        props.location.id = ordinal;
        PX_CUDA(cudaMemPoolCreate(&pool_, &props));
        uint64_t keep = std::numeric_limits<uint64_t>::max();
        PX_CUDA(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &keep));
        PX_CUDA(cudaMalloc(reinterpret_cast<void**>(&status_), sizeof(DeviceStatus)));
        // On our stream, so the kernels queued after it see it done (cudaMemset
        // would use the legacy default stream, not ordered with ours).
        PX_CUDA(cudaMemsetAsync(status_, 0, sizeof(DeviceStatus), stream_));
        blas_api_ = &blas_api();
        PX_BLAS(blas_api_->cublasCreate(&blas_));
        PX_BLAS(blas_api_->cublasSetStream(blas_, stream_));
        size_t free_b = 0, total_b = 0;
        PX_CUDA(cudaMemGetInfo(&free_b, &total_b));
        total_bytes_ = total_b;
    } catch (...) {
        teardown();  // a constructor that throws gets no destructor call
        throw;
    }
}

Device::~Device() {
    // The device stays current for the members' destructors (staging_).
    if (!cuda_unusable() && cudaSetDevice(ordinal) == cudaSuccess) teardown();
}

void Device::teardown() noexcept {
    // On a lost context these calls fail harmlessly.
    if (stream_) cudaStreamSynchronize(stream_);
    if (blas_) blas_api_->cublasDestroy(blas_);
    if (status_) cudaFree(status_);
    if (pool_) cudaMemPoolDestroy(pool_);  // blocks still in use go when they are freed
    if (marker_) cudaEventDestroy(marker_);
    if (stream_) cudaStreamDestroy(stream_);
    blas_ = nullptr, status_ = nullptr, pool_ = nullptr, marker_ = nullptr, stream_ = nullptr;
    cudaGetLastError();
}

void* Device::pool_malloc(uint64_t bytes, cudaError_t& e) {
    for (int attempt = 0; attempt < 2; ++attempt) {
        void* p = nullptr;
        e = cudaMallocFromPoolAsync(&p, bytes, pool_, stream_);
        if (e == cudaSuccess) return p;
        cudaGetLastError();  // out of memory does not poison the context
        if (e != cudaErrorMemoryAllocation || attempt > 0) break;
        // Give the cache back (after the frees queued so far) and try once
        // more; fence() gives up on a dead peer, where a plain sync could hang.
        fence();
        PX_CUDA(cudaMemPoolTrimTo(pool_, 0));
    }
    return nullptr;
}

px_plugin_buffer* Device::allocate(uint64_t bytes, std::string& why) {
    // The record first: made after the device memory, a record the host had
    // no memory for left that memory behind.
    auto b = std::make_unique<px_plugin_buffer>(px_plugin_buffer{nullptr, bytes, ordinal});
    void* p = nullptr;
    if (bytes > total_bytes_) {  // never worth asking the driver (which may call it an invalid value)
        MemoryFigures f = figures();
        why = "CUDA device " + std::to_string(ordinal) + " is out of memory: asked for " + std::to_string(bytes) +
              " bytes, more than the " + std::to_string(f.total) + " it has (" + std::to_string(f.in_use) +
              " in use by this runtime)";
        return nullptr;
    }
    if (bytes) {
        cudaError_t e;
        p = pool_malloc(bytes, e);
        if (!p) {
            if (e != cudaErrorMemoryAllocation) throw CudaError(e, "cudaMallocFromPoolAsync");
            MemoryFigures f = figures();
            why = "CUDA device " + std::to_string(ordinal) + " is out of memory: asked for " + std::to_string(bytes) +
                  " bytes, " + std::to_string(f.in_use) + " in use by this runtime, " + std::to_string(f.free) +
                  " free of " + std::to_string(f.total);
            return nullptr;
        }
    }
    b->data = p;
    in_use_ += bytes;
    if (in_use_ > peak_) peak_ = in_use_;
    return b.release();
}

void Device::release(px_plugin_buffer* b) {
    if (b->data && failed_.empty() && !cuda_unusable()) cudaFreeAsync(b->data, stream_);
    in_use_ -= b->bytes;
    delete b;
}

px_plugin_buffer* Device::wrap(void* address, uint64_t bytes, std::string& why) {
    const std::string here = "CUDA device " + std::to_string(ordinal);
    if (bytes) {
        cudaPointerAttributes a{};
        if (cudaPointerGetAttributes(&a, address) != cudaSuccess) {
            cudaGetLastError();
            a.type = cudaMemoryTypeUnregistered;
        }
        if (a.type != cudaMemoryTypeDevice && a.type != cudaMemoryTypeManaged) {
            why = "the address is not CUDA device memory, which " + here + " needs to share it";
            return nullptr;
        }
        if (a.device != ordinal) {
            why = "the memory belongs to CUDA device " + std::to_string(a.device) + ", not " + here;
            return nullptr;
        }
    }
    // The producer's work: ordered before the legacy default stream's
    // current point (the array API's stream=1), which our own stream does
    // not wait for (it is non-blocking), so it is waited for here.
    PX_CUDA(cudaStreamSynchronize(nullptr));
    auto b = std::make_unique<px_plugin_buffer>(px_plugin_buffer{address, bytes, ordinal});
    b->foreign = true;
    return b.release();
}

void Device::settle() noexcept {
    if (!failed_.empty() || cuda_unusable()) return;
    try {
        fence();
    } catch (...) {  // a device failure is reported by its next wait; the memory is no longer ours to hold
        cudaGetLastError();
    }
}

void* Device::allocate(uint64_t bytes) {
    cudaError_t e;
    void* p = pool_malloc(bytes, e);
    if (p) return p;
    if (e != cudaErrorMemoryAllocation) throw CudaError(e, "cudaMallocFromPoolAsync");
    throw OutOfMemory("CUDA device " + std::to_string(ordinal) + " is out of memory: " + std::to_string(bytes) +
                      " bytes of scratch space were needed");
}

void Device::release(void* p) {
    if (!cuda_unusable()) cudaFreeAsync(p, stream_);
}

MemoryFigures Device::figures() {
    MemoryFigures f{0, 0, in_use_, 0, peak_};
    size_t free_b = 0, total_b = 0;
    if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess) f.free = free_b, f.total = total_b;
    uint64_t reserved = 0;
    if (cudaMemPoolGetAttribute(pool_, cudaMemPoolAttrReservedMemCurrent, &reserved) == cudaSuccess) f.reserved = reserved;
    if (f.reserved < f.in_use) f.reserved = f.in_use;  // sub-allocations are rounded; never report less than in use
    cudaGetLastError();
    return f;
}

Launch Device::launch() {
    Launch l;
    l.device = ordinal;
    l.stream = stream_;
    l.blas = blas_;
    l.status = status_;
    l.sm_count = sm_count_;
    l.scratch = this;
    return l;
}

void Device::queued(int32_t op, bool may_report) {
    last_op_ = op;
    status_armed_ |= may_report;
}

void Device::mark_failed(const std::string& error) {
    if (failed_.empty())
        failed_ = "CUDA device " + std::to_string(ordinal) + " (" + name_ + ") has failed and stays unusable: " + error +
                  ". Its CUDA context is lost; restart the process to use it again";
}

std::string Device::on_error(cudaError_t e, const std::string& what) {
    std::string message = what + ": " + cudaGetErrorString(e) + " (" + cudaGetErrorName(e) + ")";
    cudaGetLastError();  // cleared, or the next launch check (on any device) would take it for its own
    if (is_sticky(e)) {
        const char* op = px_op_name(last_op_);
        mark_failed(message + (op ? std::string(" (the last op queued was ") + op + ")" : std::string()));
        return failed_;
    }
    return message;
}

void Device::on_error_without_memory(cudaError_t e) noexcept {
    cudaGetLastError();
    if (!is_sticky(e) || !failed_.empty()) return;
    // Within the capacity reserved in the constructor: no allocation.
    failed_.assign("CUDA device has failed and stays unusable: ");
    failed_.append(cudaGetErrorName(e));
    failed_.append(" (met while out of host memory)");
}

std::string Device::read_status() {
    if (!status_armed_) return "";
    status_armed_ = false;
    DeviceStatus s{};
    PX_CUDA(cudaMemcpyAsync(&s, status_, sizeof s, cudaMemcpyDeviceToHost, stream_));
    PX_CUDA(cudaStreamSynchronize(stream_));
    if (s.code == status_ok) return "";
    // Cleared on our stream, before any kernel queued later can report into it.
    PX_CUDA(cudaMemsetAsync(status_, 0, sizeof(DeviceStatus), stream_));
    const char* op = px_op_name(s.op);
    std::string where = std::string(op ? op : "an op") + " failed on CUDA device " + std::to_string(ordinal) + ": ";
    switch (s.code) {
    case status_integer_division_by_zero: where += "integer division by zero"; break;
    case status_label_out_of_range:
        where += "label " + std::to_string(s.b) + " in row " + std::to_string(s.a) + " is outside [0, " +
                 std::to_string(s.c) + ") (the number of classes)";
        break;
    case status_index_out_of_range:
        where += "index " + std::to_string(s.b) + " at position " + std::to_string(s.a) + " is outside [0, " +
                 std::to_string(s.c) + ") (the table's rows)";
        break;
    default: where += "unknown failure code " + std::to_string(s.code);
    }
    // Other ops that failed since the last wait (the kernels keep one mark per op).
    std::string others;
    for (int32_t o = 0; o < 256; ++o) {
        if (o == s.op || !(s.failed_ops[o / 32] & (1u << (o % 32)))) continue;
        const char* name = px_op_name(o);
        others += std::string(others.empty() ? "" : ", ") + (name ? name : "op " + std::to_string(o));
    }
    if (!others.empty()) where += " (" + others + " also failed since the last wait)";
    return where;
}

void Device::add_watch(StreamWatch* w) { watches_.push_back(w); }

void Device::remove_watch(StreamWatch* w) { watches_.erase(std::remove(watches_.begin(), watches_.end(), w), watches_.end()); }

cudaError_t Device::drain(std::string& watch_failure) {
    auto pending = [&] { return std::any_of(watches_.begin(), watches_.end(), [](StreamWatch* w) { return w->pending(); }); };
    if (!pending()) return cudaStreamSynchronize(stream_);
    for (;;) {
        cudaError_t e = cudaStreamQuery(stream_);
        if (e != cudaErrorNotReady) {
            for (StreamWatch* w : watches_) w->drained();
            return e;
        }
        for (StreamWatch* w : watches_) {
            if (!w->pending()) continue;
            std::string why = w->check();
            if (why.empty()) continue;
            watch_failure = why;  // its work is cancelled: the rest of the stream runs out
            e = cudaStreamSynchronize(stream_);
            for (StreamWatch* other : watches_) other->drained();
            return e;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
}

std::string Device::wait() {
    if (!failed_.empty()) return failed_;
    std::string watch_failure;
    cudaError_t e = drain(watch_failure);
    if (!watch_failure.empty()) {
        if (e != cudaSuccess) on_error(e, "after " + watch_failure);
        return watch_failure;
    }
    if (e != cudaSuccess) {
        const char* op = px_op_name(last_op_);
        return on_error(e, std::string("work queued on CUDA device ") + std::to_string(ordinal) + " failed" +
                               (op ? std::string(" (last op queued: ") + op + ")" : std::string()));
    }
    return read_status();
}

void Device::wait_for(Device& other) {
    {
        DeviceScope scope(other.ordinal);
        PX_CUDA(cudaEventRecord(other.marker_, other.stream_));
    }
    PX_CUDA(cudaStreamWaitEvent(stream_, other.marker_, 0));
}

}  // namespace pxcuda

namespace pxcuda {

void Device::fence() {
    if (watches_.empty()) {
        PX_CUDA(cudaEventRecord(marker_, stream_));
        PX_CUDA(cudaEventSynchronize(marker_));
        return;
    }
    std::string watch_failure;
    cudaError_t e = drain(watch_failure);
    if (!watch_failure.empty()) throw DeviceFailure(watch_failure);
    check_cuda(e, "cudaStreamSynchronize");  // drain()'s last wait
}

}  // namespace pxcuda
