// A trace of where the time goes (px_trace_begin / PLEXUS_TRACE): the host's
// side of every op call and copy a runtime makes (what, on which device,
// when it was queued and when the call returned), the regions the
// application marks, and, from plugins with the ABI 1.8 trace slots, when
// each op and copy ran on its device. trace_writer.cpp turns it into a Chrome
// trace JSON and a per-op summary.
//
// Off, it costs the routing point one relaxed load and a predictable branch
// (Tracer::on); on, each call takes a lock to append its record.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "error.hpp"
#include "fork_safe_mutex.hpp"
#include "plexus/plugin.h"

namespace px {

struct DeviceImpl;

// Now, in the clock plugins report spans in (plugin.h: CLOCK_MONOTONIC ns).
int64_t trace_now_ns() noexcept;

// One op call or copy as the host made it.
struct TraceCall {
    int32_t op = 0;          // px_op; 0 for a copy between host and device or two devices
    uint64_t id = 0;         // the op's trace id (execute_traced); 0 for a copy
    size_t device = 0;       // index into TraceData::devices: where it runs
    const char* dtype = "";  // static
    std::string what;        // "(256,1,28,28),(6,1,5,5) -> (256,6,28,28)", or a copy's "host -> cpu(0)"
    uint64_t bytes = 0;      // a copy's size
    uint32_t thread = 0;     // the host thread that made the call (1, 2, ...)
    int64_t queued_ns = 0, returned_ns = 0;
};

// A stretch of one host thread's work the application named (a step).
struct TraceRegion {
    std::string name;
    uint32_t thread = 0;
    int64_t begin_ns = 0, end_ns = 0;
};

// One device as the trace shows it, with the spans its plugin reported.
struct TraceDevice {
    std::string label, plugin;
    bool reports = false;  // its plugin has the trace slots and recording started
    std::vector<px_trace_span> spans;
};

// What a finished trace holds, for the writer.
struct TraceData {
    std::string path;
    bool from_environment = false;  // PLEXUS_TRACE started it (it ends with the runtime)
    int64_t begin_ns = 0, end_ns = 0;
    std::vector<TraceDevice> devices;
    std::vector<TraceCall> calls;
    std::vector<TraceRegion> regions;
};

// One runtime's trace recorder, shared by the runtime and its devices.
class Tracer {
public:
    bool on() const noexcept { return on_.load(std::memory_order_relaxed); }

    // Starts recording `devices` (the runtime's, each once) into `path`
    // (relative to the folder current now), which is created now: Failure (PX_ERROR_INVALID_ARGUMENT) naming it when
    // it cannot be written, or when a trace is already running.
    void begin(const std::string& path, const std::vector<std::shared_ptr<DeviceImpl>>& devices,
               bool from_environment = false);
    // Stops recording, waits for the devices, collects the plugins' spans and
    // writes the trace and its summary. A failure to write, or to collect the
    // spans, is thrown after what could be written is; a device's failure the
    // wait finds is kept for the application's next wait.
    void end();

    // An id for an op call about to be queued on `dev` (0: its plugin does
    // not report spans, so call execute).
    uint64_t op_id(const DeviceImpl& dev) noexcept;
    // Records a call that returned; `in`/`out` are its operand descs.
    void op_called(const DeviceImpl& dev, int32_t op, int32_t dtype, const px_tensor_desc* in, int32_t nin,
                   const px_tensor_desc* out, int32_t nout, uint64_t id, int64_t queued_ns);
    // Records a copy of `bytes` from `from` to `to` (nullptr: the host).
    void copied(const DeviceImpl* from, const DeviceImpl* to, uint64_t bytes, int64_t queued_ns);
    void region_begin(const std::string& name);
    void region_end();

private:
    // The index of `dev` in data_.devices; SIZE_MAX when it was not traced. Under mu_.
    size_t index_of(const DeviceImpl* dev) const;
    // Waits for each traced device (keeping a failure the wait finds for the
    // device's next wait) and moves its plugin's spans into `data`; the first
    // failure to collect them is kept in `failure`.
    static void collect(TraceData& data, const std::vector<std::weak_ptr<DeviceImpl>>& traced,
                        std::optional<Failure>& failure);

    std::atomic<bool> on_{false};
    ForkSafeMutex control_;  // one begin or end at a time (a child forked during one can still trace)
    ForkSafeMutex mu_;       // the members below
    std::atomic<uint64_t> next_id_{1};
    TraceData data_;
    std::vector<std::weak_ptr<DeviceImpl>> traced_;  // parallel to data_.devices
    std::vector<const DeviceImpl*> ids_;            // the same, to find a call's device without a lock of its own
    std::vector<TraceRegion> open_regions_;         // begun, not yet ended, any thread
};

// Writes `data` as a Chrome trace JSON at data.path and its summary beside
// it (trace_writer.cpp); false with `why` set when a file cannot be written.
bool write_trace(const TraceData& data, std::string& why);
// The summary's path: trace.json -> trace.summary.txt, other -> other.summary.txt.
std::string trace_summary_path(const std::string& path);
// The per-op table (op, calls, time on the device and in the call, share).
std::string trace_summary(const TraceData& data);

// Times a copy for the trace when `tracer` runs: body() does it.
template <class Body>
void traced_copy(Tracer* tracer, const DeviceImpl* from, const DeviceImpl* to, uint64_t bytes, Body&& body) {
    if (!tracer || !tracer->on()) {
        body();
        return;
    }
    const int64_t queued = trace_now_ns();
    body();
    tracer->copied(from, to, bytes, queued);
}

struct Runtime;
// Every device of `rt` once, in the order the trace shows them.
std::vector<std::shared_ptr<DeviceImpl>> every_device(const Runtime& rt);

// PLEXUS_TRACE: starts `tracer` for the first runtime of the process made
// while it is set (Failure naming the path when it cannot be written), and
// ends it when the runtime is destroyed or, if it never is, at exit.
void trace_from_environment(const std::shared_ptr<Tracer>& tracer,
                            const std::vector<std::shared_ptr<DeviceImpl>>& devices);

}  // namespace px
