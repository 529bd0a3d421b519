// The plugin kit's part for the trace slots of plugin ABI 1.8 (trace_enable,
// execute_traced, trace_take): optional, header-only C++17, like
// plugin_kit.hpp. A device keeps one TraceLog; its queue adds a span per op
// and copy it runs while recording is on, and trace_take hands them over.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <deque>
#include <mutex>

#include "plexus/plugin_kit.hpp"

namespace plexus::kit {

// Now, in the clock px_trace_span speaks (CLOCK_MONOTONIC nanoseconds).
inline int64_t trace_clock_ns() noexcept {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// One device's spans, oldest first. add() may be called from any thread (a
// queue's worker, or a caller running a small op inline); it takes a lock
// only while recording, so a device that is not traced pays one relaxed load.
class TraceLog {
public:
    // Spans kept at most between two takes; past that, spans are dropped
    // (and counted) rather than grow without bound.
    static constexpr size_t kMostKept = size_t(1) << 22;

    bool recording() const noexcept { return on_.load(std::memory_order_relaxed); }

    // trace_enable: on drops what was kept; off keeps it for take(). Before
    // turning it on, a plugin waits for the work its device has queued, so
    // that work gets no span (plugin.h; the host matches copies in order).
    void enable(bool on) {
        std::lock_guard<std::mutex> lock(mu_);
        if (on) {
            spans_.clear();
            dropped_ = 0;
        }
        on_.store(on, std::memory_order_relaxed);
    }

    // Keeps a span of an op (trace_id, op) or a copy (bytes) that ran from
    // start_ns to end_ns. Never throws: a span that finds no memory is dropped.
    void add(int32_t op, uint64_t trace_id, uint64_t bytes, int64_t start_ns, int64_t end_ns) noexcept {
        if (!recording()) return;
        px_trace_span s;
        s.struct_size = sizeof s;
        s.op = op;
        s.trace_id = trace_id;
        s.bytes = bytes;
        s.start_ns = start_ns;
        s.end_ns = end_ns < start_ns ? start_ns : end_ns;
        std::lock_guard<std::mutex> lock(mu_);
        if (spans_.size() >= kMostKept) {
            ++dropped_;
            return;
        }
        try {
            spans_.push_back(s);
        } catch (...) {  // out of memory: the trace loses a span, the work goes on
            ++dropped_;
        }
    }

    // trace_take's body: moves up to `capacity` spans into the caller's
    // array of spans[0].struct_size-byte elements.
    px_status take(px_trace_span* spans, int32_t capacity, int32_t* count, px_plugin_error* err) noexcept {
        if (!count || capacity < 0 || (capacity > 0 && !spans)) return fail(err, "trace_take: spans or count is NULL, or capacity < 0");
        const uint32_t size = capacity > 0 ? spans[0].struct_size : uint32_t(sizeof(px_trace_span));
        if (size < sizeof(px_trace_span)) return fail(err, "trace_take: spans[0].struct_size is smaller than ABI 1.8's px_trace_span");
        std::lock_guard<std::mutex> lock(mu_);
        int32_t n = 0;
        for (; n < capacity && !spans_.empty(); ++n) {
            auto* at = reinterpret_cast<px_trace_span*>(reinterpret_cast<char*>(spans) + size_t(n) * size);
            std::memcpy(at, &spans_.front(), sizeof(px_trace_span));
            at->struct_size = size;
            spans_.pop_front();
        }
        *count = n;
        return PX_OK;
    }

    // Spans dropped since recording began (the cap, or no memory).
    uint64_t dropped() const {
        std::lock_guard<std::mutex> lock(mu_);
        return dropped_;
    }

private:
    static px_status fail(px_plugin_error* err, const char* why) noexcept {
        return report(err, PX_ERROR_INVALID_ARGUMENT, why);
    }

    std::atomic<bool> on_{false};
    mutable std::mutex mu_;
    std::deque<px_trace_span> spans_;
    uint64_t dropped_ = 0;
};

// Stamps a span around a piece of work on the calling thread (a CPU queue's
// task): start at construction, added to the log at destruction, when the
// log is recording.
class TraceStamp {
public:
    TraceStamp(TraceLog& log, int32_t op, uint64_t trace_id, uint64_t bytes) noexcept
        : log_(log.recording() ? &log : nullptr), op_(op), trace_id_(trace_id), bytes_(bytes),
          start_(log_ ? trace_clock_ns() : 0) {}
    ~TraceStamp() {
        if (log_) log_->add(op_, trace_id_, bytes_, start_, trace_clock_ns());
    }
    TraceStamp(const TraceStamp&) = delete;
    TraceStamp& operator=(const TraceStamp&) = delete;

private:
    TraceLog* log_;
    int32_t op_;
    uint64_t trace_id_, bytes_;
    int64_t start_;
};

}  // namespace plexus::kit
