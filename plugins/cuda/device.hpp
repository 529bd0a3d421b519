// One CUDA device as one plugin context sees it: its own stream (so ops
// return at once and run in order), cuBLAS handle, stream-ordered memory
// pool (a caching allocator: freed blocks are reused without cudaMalloc),
// pinned staging buffers, the slot kernels report failures into, and the
// device's failed state once its CUDA context is lost.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "blas_library.hpp"
#include "op_args.hpp"
#include "staging.hpp"

struct px_plugin_buffer {
    void* data;      // device memory from the pool; NULL for 0 bytes
    uint64_t bytes;
    int32_t device;  // the plugin's device index
    // ABI 1.5, buffer_wrap: device memory of another runtime, never pooled;
    // release(release_context) runs once, when the buffer is freed.
    bool foreign = false;
    void (*release)(void*) = nullptr;
    void* release_context = nullptr;
};

namespace pxcuda {

struct MemoryFigures {
    uint64_t total, free, in_use, reserved, peak;
};

// Makes `ordinal` the calling thread's current device for a scope.
class DeviceScope {
public:
    explicit DeviceScope(int ordinal);
    ~DeviceScope();
    DeviceScope(const DeviceScope&) = delete;
    DeviceScope& operator=(const DeviceScope&) = delete;

private:
    int previous_ = -1;
};

// Work on a device's stream that waits for other processes (a process
// group's collective, process_group.hpp). The device's waits poll it, so a
// peer that never arrives fails the wait instead of hanging it.
class StreamWatch {
public:
    virtual ~StreamWatch() = default;
    // Whether it has work queued since the stream last drained.
    virtual bool pending() const = 0;
    // "" while all is well; else why it gave up (it has already cancelled
    // its work, so the stream drains).
    virtual std::string check() = 0;
    // The stream drained: nothing of it is queued any more.
    virtual void drained() = 0;
};

class Device : public ScratchSource {
public:
    explicit Device(int ordinal);  // throws CudaError
    ~Device() override;
    Device(const Device&) = delete;
    Device& operator=(const Device&) = delete;

    const int ordinal;
    std::mutex mutex;  // held by every call that uses the members below

    // Memory: nullptr with `why` filled when the device is out of memory
    // (after emptying the cache and trying again).
    px_plugin_buffer* allocate(uint64_t bytes, std::string& why);
    void release(px_plugin_buffer* b);  // stream-ordered: after the work queued so far
    // ABI 1.5: `bytes` at `address`, memory of another runtime on this device
    // (checked: PX_ERROR_UNSUPPORTED's reason in `why` otherwise), once the
    // work the legacy default stream has queued so far is done. Not pooled.
    px_plugin_buffer* wrap(void* address, uint64_t bytes, std::string& why);
    // Waits for the work queued so far, never throwing: a wrapped buffer's
    // memory may then go back to its owner.
    void settle() noexcept;
    MemoryFigures figures();

    // ScratchSource, for kernels that need temporary memory.
    void* allocate(uint64_t bytes) override;
    void release(void* p) override;

    Launch launch();
    cudaStream_t stream() const { return stream_; }
    StagingRing& staging() { return staging_; }
    const std::string& name() const { return name_; }

    // Waits for every queued op; "" or the first failure among them.
    std::string wait();
    // The device is lost after `error` (a sticky CUDA error): every later
    // call returns this message.
    void mark_failed(const std::string& error);
    // on_error for a CUDA error met while host memory has run out: a sticky
    // one still marks the device failed, with a fixed text that fits the room
    // failed_ keeps from the start. Never throws.
    void on_error_without_memory(cudaError_t e) noexcept;
    const std::string& failed() const { return failed_; }
    // The op queued last, for messages about faults found later.
    void queued(int32_t op, bool may_report);
    // The message for CUDA error `e` met while doing `what`; marks the device
    // failed when the error leaves its context unusable.
    std::string on_error(cudaError_t e, const std::string& what);

    // Watches polled by wait() and fence() (the caller holds the lock).
    void add_watch(StreamWatch* w);
    void remove_watch(StreamWatch* w);

    // Makes this device's stream wait for everything queued so far on `other`.
    void wait_for(Device& other);
    // Blocks until everything queued so far on this device has run; throws
    // when a watch gives up.
    void fence();

private:
    void teardown() noexcept;
    // Memory from the pool; when it is out of memory, empties the cache and
    // tries again. nullptr with the last error in `e` when that fails too.
    void* pool_malloc(uint64_t bytes, cudaError_t& e);
    std::string read_status();
    // Waits for the stream, polling the watches while any has work queued;
    // `watch_failure` says why one gave up.
    cudaError_t drain(std::string& watch_failure);

    cudaStream_t stream_ = nullptr;
    const BlasApi* blas_api_ = nullptr;  // set before blas_
    cublasHandle_t blas_ = nullptr;
    cudaMemPool_t pool_ = nullptr;
    cudaEvent_t marker_ = nullptr;  // for wait_for
    DeviceStatus* status_ = nullptr;
    StagingRing staging_{[this] { fence(); }};
    int sm_count_ = 1;
    uint64_t total_bytes_ = 0;  // the device's memory
    std::string name_;
    std::string failed_;
    int32_t last_op_ = 0;
    bool status_armed_ = false;  // an op that can report a DeviceStatus ran since the last wait
    uint64_t in_use_ = 0, peak_ = 0;
    std::vector<StreamWatch*> watches_;
};

}  // namespace pxcuda
