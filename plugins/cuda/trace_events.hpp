// When each op and copy ran on one GPU, for the host's trace (plugin ABI
// 1.8): while recording, a pair of timing events brackets each piece of work
// on the device's stream, and once both have completed the pair becomes a
// span of the host's clock, measured from an anchor event recorded when
// recording began. Off, it costs a branch per op and holds no event.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include <cuda_runtime_api.h>

#include "plexus/plugin_kit_trace.hpp"

namespace pxcuda {

// Every member is used under the device's lock with the device current.
class EventTrace {
public:
    EventTrace() = default;
    ~EventTrace();  // destroys its events, unless CUDA has shut down
    EventTrace(const EventTrace&) = delete;
    EventTrace& operator=(const EventTrace&) = delete;

    bool recording() const { return log_.recording(); }
    // On: records and waits for the anchor; spans kept before are dropped.
    // Off: what has finished stays in the log for take(). Throws CudaError.
    void enable(bool on, cudaStream_t stream);
    // Records the start event of the work about to be queued on `stream`,
    // then its end event (`op` 0 and `bytes` for a copy). Neither throws: a
    // span whose event fails is lost, the work is not.
    void before(cudaStream_t stream) noexcept;
    void after(cudaStream_t stream, int32_t op, uint64_t trace_id, uint64_t bytes) noexcept;
    // trace_take: resolves the pairs that have completed, then hands over.
    px_status take(px_trace_span* spans, int32_t capacity, int32_t* count, px_plugin_error* err);

private:
    struct Pending {
        cudaEvent_t start, end;
        int32_t op;
        uint64_t trace_id, bytes;
    };
    cudaEvent_t fresh_event();  // a spare one, or a new one
    void recycle(cudaEvent_t e) noexcept;
    void resolve();

    plexus::kit::TraceLog log_;
    std::deque<Pending> pending_;
    std::vector<cudaEvent_t> spare_;
    cudaEvent_t anchor_ = nullptr;
    int64_t anchor_ns_ = 0;        // the host's clock when anchor_ completed
    cudaEvent_t started_ = nullptr;  // before()'s, until after()
};

// Brackets one piece of work with `trace`'s events while it records.
class TracedWork {
public:
    TracedWork(EventTrace& trace, cudaStream_t stream, int32_t op, uint64_t trace_id, uint64_t bytes)
        : trace_(trace.recording() ? &trace : nullptr), stream_(stream), op_(op), trace_id_(trace_id), bytes_(bytes) {
        if (trace_) trace_->before(stream_);
    }
    ~TracedWork() {
        if (trace_) trace_->after(stream_, op_, trace_id_, bytes_);
    }
    TracedWork(const TracedWork&) = delete;
    TracedWork& operator=(const TracedWork&) = delete;

private:
    EventTrace* trace_;
    cudaStream_t stream_;
    int32_t op_;
    uint64_t trace_id_, bytes_;
};

}  // namespace pxcuda
