#include "trace_events.hpp"

#include "cuda_check.hpp"
#include "shutdown.hpp"

namespace pxcuda {

EventTrace::~EventTrace() {
    if (cuda_unusable()) return;  // the driver reclaims them with the process
    for (const Pending& p : pending_) cudaEventDestroy(p.start), cudaEventDestroy(p.end);
    for (cudaEvent_t e : spare_) cudaEventDestroy(e);
    if (anchor_) cudaEventDestroy(anchor_);
    if (started_) cudaEventDestroy(started_);
}

cudaEvent_t EventTrace::fresh_event() {
    if (!spare_.empty()) {
        cudaEvent_t e = spare_.back();
        spare_.pop_back();
        return e;
    }
    cudaEvent_t e = nullptr;
    PX_CUDA(cudaEventCreateWithFlags(&e, cudaEventDefault));  // with timing, unlike the plugin's other events
    return e;
}

void EventTrace::recycle(cudaEvent_t e) noexcept {
    if (!e) return;
    try {
        spare_.push_back(e);
    } catch (...) {  // no memory to keep it: give it back instead
        cudaEventDestroy(e);
    }
}

void EventTrace::enable(bool on, cudaStream_t stream) {
    if (!on) {
        resolve();
        log_.enable(false);
        for (const Pending& p : pending_) recycle(p.start), recycle(p.end);
        pending_.clear();
        return;
    }
    for (const Pending& p : pending_) recycle(p.start), recycle(p.end);
    pending_.clear();
    if (!anchor_) anchor_ = fresh_event();
    // The anchor completes once the stream has run what is queued; the host's
    // clock read right after the wait is its time, within the wait's wake-up.
    PX_CUDA(cudaEventRecord(anchor_, stream));
    PX_CUDA(cudaEventSynchronize(anchor_));
    anchor_ns_ = plexus::kit::trace_clock_ns();
    log_.enable(true);
}

void EventTrace::before(cudaStream_t stream) noexcept {
    recycle(started_);
    started_ = nullptr;
    try {
        cudaEvent_t e = fresh_event();
        if (cudaEventRecord(e, stream) != cudaSuccess) {
            cudaGetLastError();  // a lost context is the work's to find and report
            recycle(e);
            return;
        }
        started_ = e;
    } catch (...) {  // no event or no memory: this span is lost, the work is not
        cudaGetLastError();
    }
}

void EventTrace::after(cudaStream_t stream, int32_t op, uint64_t trace_id, uint64_t bytes) noexcept {
    cudaEvent_t start = started_;
    started_ = nullptr;
    if (!start) return;
    try {
        cudaEvent_t end = fresh_event();
        if (cudaEventRecord(end, stream) != cudaSuccess) {
            cudaGetLastError();  // the work's own error, if any, is the work's to report
            recycle(start), recycle(end);
            return;
        }
        pending_.push_back(Pending{start, end, op, trace_id, bytes});
    } catch (...) {  // no event or no memory: this span is lost
        cudaGetLastError();
        recycle(start);
    }
}

void EventTrace::resolve() {
    while (!pending_.empty()) {
        const Pending& p = pending_.front();
        if (cudaEventQuery(p.end) != cudaSuccess) {
            cudaGetLastError();  // not yet run (or lost with the device: the wait says so)
            return;
        }
        float from_anchor = 0, took = 0;
        if (cudaEventElapsedTime(&from_anchor, anchor_, p.start) == cudaSuccess &&
            cudaEventElapsedTime(&took, p.start, p.end) == cudaSuccess) {
            const int64_t start = anchor_ns_ + int64_t(double(from_anchor) * 1e6);
            log_.add(p.op, p.trace_id, p.bytes, start, start + int64_t(double(took) * 1e6));
        }
        cudaGetLastError();
        recycle(p.start), recycle(p.end);
        pending_.pop_front();
    }
}

px_status EventTrace::take(px_trace_span* spans, int32_t capacity, int32_t* count, px_plugin_error* err) {
    if (recording()) resolve();
    return log_.take(spans, capacity, count, err);
}

}  // namespace pxcuda
