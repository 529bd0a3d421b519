// plexus C++ frontend: a trace of where the time goes (px_trace_begin).
//
//   {
//       plexus::Trace trace("step.json");     // records every op call and copy
//       plexus::TraceRegion step("step 3");   // a span holding the calls in it
//       ...
//   }                                         // written here: step.json, step.summary.txt
#pragma once

#include <string>

#include "plexus/cpp/device.hpp"

namespace plexus {

// Records the default runtime's calls while it lives, and writes the trace
// (Chrome trace JSON) and its per-op summary when it ends. A path that cannot
// be written throws InvalidArgumentError naming it, from the constructor.
// end() writes and throws what went wrong; the destructor writes and keeps
// quiet, as destructors must.
class Trace {
public:
    explicit Trace(const std::string& path) { check(px_trace_begin(runtime(), path.c_str())); }
    ~Trace() {
        if (open_) px_trace_end(runtime());
    }
    Trace(const Trace&) = delete;
    Trace& operator=(const Trace&) = delete;

    void end() {
        if (!open_) return;
        open_ = false;
        check(px_trace_end(runtime()));
    }

private:
    bool open_ = true;
};

// A named stretch of this thread's work in the trace (nothing while no trace runs).
class TraceRegion {
public:
    explicit TraceRegion(const std::string& name) { check(px_trace_region_begin(runtime(), name.c_str())); }
    ~TraceRegion() { px_trace_region_end(runtime()); }
    TraceRegion(const TraceRegion&) = delete;
    TraceRegion& operator=(const TraceRegion&) = delete;
};

}  // namespace plexus
