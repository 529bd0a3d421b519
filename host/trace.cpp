// Recording a trace: the host's side of each call as it is made, the
// plugins' spans collected when it ends (trace.hpp).
#include "trace.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <unordered_set>

#include "objects.hpp"

namespace px {
namespace {

// The calling thread's number in traces: 1, 2, ... in the order threads first call.
uint32_t this_thread_number() noexcept {
    static std::atomic<uint32_t> next{1};
    thread_local const uint32_t mine = next.fetch_add(1);
    return mine;
}

std::string shape_text(const px_tensor_desc& d) {
    std::string s = "(";
    for (int32_t i = 0; i < d.ndim; ++i) s += (i ? "," : "") + std::to_string(d.shape[i]);
    return s + (d.ndim == 1 ? ",)" : ")");
}

// Creates (empties) `path`, so a file that cannot be written fails now.
void check_writable(const std::string& path, const char* what) {
    std::FILE* f = std::fopen(path.c_str(), "w");
    if (!f) fail(PX_ERROR_INVALID_ARGUMENT, "cannot write the ", what, " to '", path, "': ", std::strerror(errno));
    std::fclose(f);
}

}  // namespace

int64_t trace_now_ns() noexcept {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

std::vector<std::shared_ptr<DeviceImpl>> every_device(const Runtime& rt) {
    std::vector<std::shared_ptr<DeviceImpl>> all;
    for (const auto& list : rt.devices) all.insert(all.end(), list.begin(), list.end());
    return all;
}

void Tracer::begin(const std::string& path, const std::vector<std::shared_ptr<DeviceImpl>>& devices,
                   bool from_environment) {
    std::lock_guard<ForkSafeMutex> control(control_);
    if (path.empty()) fail(PX_ERROR_INVALID_ARGUMENT, "the trace's path is empty");
    // Relative to the folder current now, not when the trace ends.
    std::error_code ec;
    const std::string where = std::filesystem::absolute(path, ec).string();
    if (ec) fail(PX_ERROR_INVALID_ARGUMENT, "cannot write the trace to '", path, "': ", ec.message());
    {
        std::lock_guard<ForkSafeMutex> lock(mu_);
        if (on())
            fail(PX_ERROR_INVALID_ARGUMENT, "a trace of this runtime is already running (into '", data_.path, "'); ",
                 data_.from_environment ? "PLEXUS_TRACE started it, and it runs until the runtime ends: unset "
                                          "PLEXUS_TRACE to trace a part"
                                        : "end it first (px_trace_end)");
    }
    check_writable(where, "trace");
    check_writable(trace_summary_path(where), "trace's summary");
    TraceData fresh;
    fresh.path = where;
    fresh.from_environment = from_environment;
    std::vector<std::weak_ptr<DeviceImpl>> traced;
    std::vector<const DeviceImpl*> ids;
    std::vector<bool> reports;
    for (const auto& d : devices) {
        TraceDevice td;
        td.label = d->label;
        td.plugin = d->plugin->name;
        const px_plugin_api& api = *d->plugin->api;
        td.reports = api.trace_enable && api.execute_traced && api.trace_take;
        reports.push_back(td.reports);
        fresh.devices.push_back(std::move(td));
        traced.push_back(d);
        ids.push_back(d.get());
    }
    {
        std::lock_guard<ForkSafeMutex> lock(mu_);
        data_ = std::move(fresh);
        traced_ = std::move(traced);
        ids_ = std::move(ids);
        open_regions_.clear();
        data_.begin_ns = trace_now_ns();
        on_.store(true, std::memory_order_relaxed);
    }
    // Calls are recorded from here; a plugin turning its spans on waits for
    // the work queued before (plugin.h), so every span is of a recorded call
    // (a call may have none: it ran before its device's spans were on).
    for (size_t i = 0; i < devices.size(); ++i) {
        const DeviceImpl& d = *devices[i];
        if (!reports[i]) continue;
        px_plugin_error err{sizeof(px_plugin_error), {0}};
        if (d.plugin->api->trace_enable(d.plugin->context, d.local, 1, &err) == PX_OK) continue;
        std::lock_guard<ForkSafeMutex> lock(mu_);
        data_.devices[i].reports = false;
    }
    // The trace starts once those waits are over (the work before it is left
    // out, and so is its time); end() moves it back to a call another thread
    // queued during them.
    std::lock_guard<ForkSafeMutex> lock(mu_);
    data_.begin_ns = trace_now_ns();
}

size_t Tracer::index_of(const DeviceImpl* dev) const {
    for (size_t i = 0; i < ids_.size(); ++i)
        if (ids_[i] == dev) return i;
    return SIZE_MAX;
}

uint64_t Tracer::op_id(const DeviceImpl& dev) noexcept {
    std::lock_guard<ForkSafeMutex> lock(mu_);
    const size_t i = index_of(&dev);
    return i != SIZE_MAX && data_.devices[i].reports ? next_id_.fetch_add(1) : 0;
}

void Tracer::op_called(const DeviceImpl& dev, int32_t op, int32_t dtype, const px_tensor_desc* in, int32_t nin,
                       const px_tensor_desc* out, int32_t nout, uint64_t id, int64_t queued_ns) {
    const int64_t returned = trace_now_ns();
    TraceCall c;
    c.op = op;
    c.id = id;
    c.dtype = px_dtype_name(dtype) ? px_dtype_name(dtype) : "";
    for (int32_t i = 0; i < nin; ++i) c.what += (i ? "," : "") + shape_text(in[i]);
    c.what += " ->";
    for (int32_t i = 0; i < nout; ++i) c.what += (i ? ", " : " ") + shape_text(out[i]);
    c.thread = this_thread_number();
    c.queued_ns = queued_ns;
    c.returned_ns = returned;
    std::lock_guard<ForkSafeMutex> lock(mu_);
    if (!on()) return;  // ended while the call ran
    c.device = index_of(&dev);
    if (c.device == SIZE_MAX) return;  // not a device of this runtime when the trace began
    data_.calls.push_back(std::move(c));
}

void Tracer::copied(const DeviceImpl* from, const DeviceImpl* to, uint64_t bytes, int64_t queued_ns) {
    const int64_t returned = trace_now_ns();
    TraceCall c;
    c.what = (from ? from->label : std::string("host")) + " -> " + (to ? to->label : std::string("host"));
    c.bytes = bytes;
    c.thread = this_thread_number();
    c.queued_ns = queued_ns;
    c.returned_ns = returned;
    std::lock_guard<ForkSafeMutex> lock(mu_);
    if (!on()) return;
    c.device = index_of(to ? to : from);  // where it lands, or a download's source
    if (c.device == SIZE_MAX) return;
    data_.calls.push_back(std::move(c));
}

void Tracer::region_begin(const std::string& name) {
    TraceRegion r;
    r.name = name;
    r.thread = this_thread_number();
    std::lock_guard<ForkSafeMutex> lock(mu_);
    if (!on()) return;
    r.begin_ns = trace_now_ns();
    open_regions_.push_back(std::move(r));
}

void Tracer::region_end() {
    const uint32_t thread = this_thread_number();
    std::lock_guard<ForkSafeMutex> lock(mu_);
    if (!on()) return;
    for (size_t i = open_regions_.size(); i-- > 0;) {
        if (open_regions_[i].thread != thread) continue;
        open_regions_[i].end_ns = trace_now_ns();
        data_.regions.push_back(std::move(open_regions_[i]));
        open_regions_.erase(open_regions_.begin() + std::ptrdiff_t(i));
        return;
    }
}

void Tracer::collect(TraceData& data, const std::vector<std::weak_ptr<DeviceImpl>>& traced,
                     std::optional<Failure>& failure) {
    std::vector<px_trace_span> batch(4096);
    for (size_t i = 0; i < traced.size(); ++i) {
        std::shared_ptr<DeviceImpl> d = traced[i].lock();
        if (!d) continue;
        d->drain();  // a failure it finds is kept: the application's next wait reports it, as without the trace
        TraceDevice& td = data.devices[i];
        if (!td.reports) continue;
        const PluginInstance& p = *d->plugin;
        try {
            for (int32_t n = int32_t(batch.size()); n == int32_t(batch.size());) {
                batch[0].struct_size = sizeof(px_trace_span);
                n = 0;
                p.call([&] { return cat("collecting the trace of ", d->label); }, [&](px_plugin_error* e) {
                    return p.api->trace_take(p.context, d->local, batch.data(), int32_t(batch.size()), &n, e);
                });
                n = std::max(0, std::min(n, int32_t(batch.size())));
                td.spans.insert(td.spans.end(), batch.begin(), batch.begin() + n);
            }
        } catch (const Failure& f) {
            if (!failure) failure = f;
        }
        px_plugin_error err{sizeof(px_plugin_error), {0}};
        p.api->trace_enable(p.context, d->local, 0, &err);
    }
}

namespace {

// Keeps the spans of the work this trace's calls queued: an op's by its id;
// copies, which carry none, as many on each device as the trace recorded
// copies there, the first that ran (a device runs its copies in the order
// they were queued: later ones were queued after the trace ended).
void keep_spans_of_traced_calls(TraceData& data) {
    std::unordered_set<uint64_t> ids;
    std::vector<size_t> copies(data.devices.size(), 0);
    for (const TraceCall& c : data.calls) {
        if (c.id) ids.insert(c.id);
        else if (!c.op) ++copies[c.device];
    }
    for (size_t d = 0; d < data.devices.size(); ++d) {
        std::vector<px_trace_span> kept;
        size_t copies_kept = 0;
        for (const px_trace_span& s : data.devices[d].spans) {
            if (s.op ? ids.count(s.trace_id) == 0 : copies_kept == copies[d]) continue;
            kept.push_back(s);
            copies_kept += s.op ? 0 : 1;
        }
        data.devices[d].spans = std::move(kept);
    }
}

}  // namespace

void Tracer::end() {
    std::lock_guard<ForkSafeMutex> control(control_);
    if (!on_.exchange(false)) fail(PX_ERROR_INVALID_ARGUMENT, "no trace of this runtime is running (px_trace_begin starts one)");
    // Calls still returning now find on() false and are not recorded; the
    // plugins' spans of the work queued so far are collected after the waits.
    TraceData data;
    std::vector<std::weak_ptr<DeviceImpl>> traced;
    {
        std::lock_guard<ForkSafeMutex> lock(mu_);
        data = std::move(data_);
        traced = std::move(traced_);
        data_ = TraceData();
        traced_.clear();
        ids_.clear();
        data.end_ns = trace_now_ns();
        for (TraceRegion& r : open_regions_) {  // regions never ended close with the trace
            r.end_ns = data.end_ns;
            data.regions.push_back(std::move(r));
        }
        open_regions_.clear();
    }
    // It began at its first call or region, if one (made while begin waited)
    // was queued before begin's own start.
    for (const TraceCall& c : data.calls) data.begin_ns = std::min(data.begin_ns, c.queued_ns);
    for (const TraceRegion& r : data.regions) data.begin_ns = std::min(data.begin_ns, r.begin_ns);
    std::optional<Failure> failure;  // of collecting the spans (the devices keep their own)
    std::string why;
    collect(data, traced, failure);
    keep_spans_of_traced_calls(data);
    for (const TraceDevice& d : data.devices)  // the trace lasts until the devices' last work ended
        for (const px_trace_span& sp : d.spans) data.end_ns = std::max(data.end_ns, sp.end_ns);
    if (!write_trace(data, why)) fail(PX_ERROR_INVALID_ARGUMENT, why);
    if (failure) throw *failure;
}

namespace {

// Traces PLEXUS_TRACE started that are still running at exit: written then.
struct ExitTraces {
    std::mutex mu;
    std::vector<std::weak_ptr<Tracer>> tracers;
    ~ExitTraces() {
        std::lock_guard<std::mutex> lock(mu);
        for (auto& w : tracers) {
            std::shared_ptr<Tracer> t = w.lock();
            if (!t || !t->on()) continue;
            try {
                t->end();
            } catch (const std::exception& e) {
                std::fprintf(stderr, "plexus: PLEXUS_TRACE: %s\n", e.what());
            }
        }
    }
};

ExitTraces& exit_traces() {
    static ExitTraces traces;
    return traces;
}

}  // namespace

void trace_from_environment(const std::shared_ptr<Tracer>& tracer,
                            const std::vector<std::shared_ptr<DeviceImpl>>& devices) {
    static std::atomic<bool> taken{false};
    const char* path = std::getenv("PLEXUS_TRACE");
    if (!path || !*path || taken.exchange(true)) return;
    try {
        tracer->begin(path, devices, true);
    } catch (const Failure& f) {
        taken = false;  // the next runtime tries (and says) again
        fail(f.status, "PLEXUS_TRACE: ", f.message);
    }
    ExitTraces& book = exit_traces();
    std::lock_guard<std::mutex> lock(book.mu);
    book.tracers.push_back(tracer);
}

}  // namespace px
