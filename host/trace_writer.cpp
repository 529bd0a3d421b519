// Writing a finished trace: Chrome's trace event format (the JSON object
// form, "X" complete events in microseconds, which ui.perfetto.dev and
// chrome://tracing open) and a per-op summary table beside it.
//
// Process 0 is the host: one track per thread, holding the application's
// regions and, inside them, each op call and copy from when it was queued
// to when the call returned. Process i + 1 is device i: one track of what
// ran there and when, from its plugin's spans (ABI 1.8), each linked to the
// call that queued it by a flow arrow.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <unordered_map>

#include "json_writer.hpp"
#include "objects.hpp"
#include "trace.hpp"

namespace px {
namespace {

const char* op_label(int32_t op) {
    const char* name = op ? px_op_name(op) : "copy";
    return name ? name : "op";
}

// The call each op span belongs to, by trace id.
std::unordered_map<uint64_t, const TraceCall*> calls_by_id(const TraceData& data) {
    std::unordered_map<uint64_t, const TraceCall*> by_id;
    for (const TraceCall& c : data.calls)
        if (c.id) by_id[c.id] = &c;
    return by_id;
}

// A device span's start, no earlier than its call queued it: a plugin whose
// device keeps a clock of its own maps it onto the host's, within a few
// microseconds, and the trace keeps the order that is certain.
int64_t span_start(const px_trace_span& s, const TraceCall* call) {
    return call ? std::max(s.start_ns, call->queued_ns) : s.start_ns;
}

class EventWriter {
public:
    explicit EventWriter(int64_t origin_ns) : origin_(origin_ns) {}

    void metadata(int pid, int tid, const char* what, const std::string& name) {
        json_.begin_object().field("ph", "M").field("pid", pid);
        if (tid >= 0) json_.field("tid", tid);
        json_.field("name", what).key("args").begin_object().field("name", name).end_object().end_object();
    }
    // Opens an "X" event's object up to its args (the caller adds them and closes both).
    void complete(const char* cat, const std::string& name, int pid, uint32_t tid, int64_t begin_ns, int64_t end_ns) {
        json_.begin_object().field("ph", "X").field("cat", cat).field("name", name).field("pid", pid);
        json_.field("tid", int64_t(tid)).key("ts").value(micros(begin_ns), 3);
        json_.key("dur").value(double(std::max<int64_t>(0, end_ns - begin_ns)) / 1e3, 3);
        json_.key("args").begin_object();
    }
    void close_complete() { json_.end_object().end_object(); }
    // A flow arrow from a host call (start) to the device span it queued (end).
    void flow(const char* ph, uint64_t id, int pid, uint32_t tid, int64_t at_ns) {
        json_.begin_object().field("ph", ph).field("cat", "queued").field("name", "queued").field("id", id);
        json_.field("pid", pid).field("tid", int64_t(tid)).key("ts").value(micros(at_ns), 3);
        if (ph[0] == 'f') json_.field("bp", "e");
        json_.end_object();
    }
    double micros(int64_t ns) const { return double(ns - origin_) / 1e3; }
    pxtools::Json& json() { return json_; }

private:
    int64_t origin_;
    pxtools::Json json_;
};

std::string trace_json(const TraceData& data) {
    const auto by_id = calls_by_id(data);
    EventWriter w(data.begin_ns);
    pxtools::Json& j = w.json();
    j.begin_object().field("displayTimeUnit", "ms").key("traceEvents").begin_array();
    w.metadata(0, -1, "process_name", "host");
    std::set<uint32_t> threads;
    for (const TraceCall& c : data.calls) threads.insert(c.thread);
    for (const TraceRegion& r : data.regions) threads.insert(r.thread);
    for (uint32_t t : threads) w.metadata(0, int(t), "thread_name", "thread " + std::to_string(t));
    for (size_t i = 0; i < data.devices.size(); ++i) {
        const TraceDevice& d = data.devices[i];
        w.metadata(int(i + 1), -1, "process_name", d.label + " [plugin " + d.plugin + "]");
        w.metadata(int(i + 1), 1, "thread_name", d.reports ? "ran" : "ran (not reported by its plugin)");
    }
    for (const TraceRegion& r : data.regions) {
        w.complete("region", r.name, 0, r.thread, r.begin_ns, r.end_ns);
        w.close_complete();
    }
    for (const TraceCall& c : data.calls) {
        w.complete(c.op ? "op" : "copy", op_label(c.op), 0, c.thread, c.queued_ns, c.returned_ns);
        j.field("device", data.devices[c.device].label);
        if (c.op) j.field("id", c.id).field("dtype", c.dtype).field("shapes", c.what);
        else j.field("route", c.what).field("bytes", c.bytes);
        w.close_complete();
        if (c.id) w.flow("s", c.id, 0, c.thread, c.queued_ns);
    }
    for (size_t i = 0; i < data.devices.size(); ++i)
        for (const px_trace_span& s : data.devices[i].spans) {
            const auto it = s.trace_id ? by_id.find(s.trace_id) : by_id.end();
            const TraceCall* call = it == by_id.end() ? nullptr : it->second;
            const int64_t start = span_start(s, call);
            w.complete("run", op_label(s.op), int(i + 1), 1, start, std::max(start, s.end_ns));
            if (s.op) j.field("id", s.trace_id);
            else j.field("bytes", s.bytes);
            if (call) j.key("queued_us").value(w.micros(call->queued_ns), 3).field("dtype", call->dtype).field("shapes", call->what);
            w.close_complete();
            if (call) w.flow("f", s.trace_id, int(i + 1), 1, start);
        }
    j.end_array().end_object();
    return j.str() + "\n";
}

bool write_file(const std::string& path, const std::string& text, std::string& why) {
    std::FILE* f = std::fopen(path.c_str(), "w");
    if (!f) {
        why = "cannot write the trace to '" + path + "': " + std::strerror(errno);
        return false;
    }
    const bool wrote = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    const int saved = errno;
    if (std::fclose(f) != 0 || !wrote) {
        why = "cannot write the trace to '" + path + "': " + std::strerror(wrote ? errno : saved);
        return false;
    }
    return true;
}

struct Row {
    long long calls = 0, ran = 0;
    int64_t device_ns = 0, call_ns = 0;
};

std::string format(const char* fmt, double a, double b) {
    char line[160];
    std::snprintf(line, sizeof line, fmt, a, b);
    return line;
}

}  // namespace

std::string trace_summary_path(const std::string& path) {
    const std::string json = ".json";
    if (path.size() > json.size() && path.compare(path.size() - json.size(), json.size(), json) == 0)
        return path.substr(0, path.size() - json.size()) + ".summary.txt";
    return path + ".summary.txt";
}

// A summary row's name: the op's, or "transfer" for a copy between the host
// and a device or two devices (the copy op, on one device, is "copy").
const char* row_label(int32_t op) { return op ? op_label(op) : "transfer"; }

std::string trace_summary(const TraceData& data) {
    std::map<std::string, Row> rows;
    long long ops = 0, copies = 0;
    for (const TraceCall& c : data.calls) {
        Row& r = rows[row_label(c.op)];
        ++r.calls;
        r.call_ns += c.returned_ns - c.queued_ns;
        ++(c.op ? ops : copies);
    }
    const auto by_id = calls_by_id(data);
    int64_t device_total = 0;
    std::string out = format("Plexus trace: %.3f ms, ", double(data.end_ns - data.begin_ns) / 1e6, 0) +
                      std::to_string(ops) + " op calls and " + std::to_string(copies) + " transfers\n";
    for (const TraceDevice& d : data.devices) {
        int64_t busy = 0;
        for (const px_trace_span& s : d.spans) {
            const auto it = s.trace_id ? by_id.find(s.trace_id) : by_id.end();
            const int64_t start = span_start(s, it == by_id.end() ? nullptr : it->second);
            const int64_t ns = std::max<int64_t>(0, s.end_ns - start);
            Row& r = rows[row_label(s.op)];
            ++r.ran;
            r.device_ns += ns;
            busy += ns;
        }
        device_total += busy;
        out += d.label + " [plugin " + d.plugin + "]: ";
        if (!d.reports) out += "its plugin does not report when work ran (no ABI 1.8 trace slots)\n";
        else
            out += format("%.3f ms busy (%.1f%% of the trace), ", double(busy) / 1e6,
                          data.end_ns > data.begin_ns ? 100.0 * double(busy) / double(data.end_ns - data.begin_ns) : 0.0) +
                   std::to_string(d.spans.size()) + " ops and copies ran\n";
    }
    // Longest first, by time on the devices where plugins report it, else by time in the call.
    std::vector<std::pair<std::string, Row>> sorted(rows.begin(), rows.end());
    const bool by_device = device_total > 0;
    std::sort(sorted.begin(), sorted.end(), [&](const auto& a, const auto& b) {
        return by_device ? a.second.device_ns > b.second.device_ns : a.second.call_ns > b.second.call_ns;
    });
    char line[200];
    std::snprintf(line, sizeof line, "%12s %7s %8s %8s %12s %12s  %s\n", "device ms", "share", "calls", "ran",
                  "mean us", "in call ms", "op");
    out += line;
    int64_t call_total = 0;
    for (const auto& [name, r] : sorted) call_total += r.call_ns;
    for (const auto& [name, r] : sorted) {
        const double share = by_device ? double(r.device_ns) / double(device_total)
                                        : call_total > 0 ? double(r.call_ns) / double(call_total) : 0.0;
        const double mean_us = r.ran ? double(r.device_ns) / 1e3 / double(r.ran) : 0.0;
        std::snprintf(line, sizeof line, "%12.3f %6.1f%% %8lld %8lld %12.2f %12.3f  %s\n", double(r.device_ns) / 1e6,
                      100.0 * share, r.calls, r.ran, mean_us, double(r.call_ns) / 1e6, name.c_str());
        out += line;
    }
    return out;
}

bool write_trace(const TraceData& data, std::string& why) {
    return write_file(data.path, trace_json(data), why) && write_file(trace_summary_path(data.path), trace_summary(data), why);
}

}  // namespace px
