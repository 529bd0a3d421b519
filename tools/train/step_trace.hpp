// plexus-train --trace FILE: a trace of steps 2 to 4 of the first epoch run
// (step 1 warms up: first allocations, the kernels' first calls), each step
// a region holding its op calls, written with its per-op summary
// (px_trace_end) and the summary printed. The devices are waited for before
// the trace begins, so it holds the three steps' work and nothing earlier.
#pragma once

#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "plexus/plexus.hpp"

namespace plexus::train {

class StepTrace {
public:
    static constexpr int64_t kFirstStep = 2, kLastStep = 4;

    // An empty path traces nothing.
    StepTrace(std::string path, std::vector<Device> devices) : path_(std::move(path)), devices_(std::move(devices)) {}

    // After step `done` (from 1) of the first epoch has been queued.
    void after_step(int64_t done) {
        if (path_.empty() || finished_) return;
        if (done >= kFirstStep) region_.reset();
        if (done == kFirstStep - 1) {
            for (Device d : devices_) synchronize(d);
            trace_ = std::make_unique<Trace>(path_);
        }
        if (done >= kLastStep) return finish();
        if (trace_) region_ = std::make_unique<TraceRegion>("step " + std::to_string(done + 1));
    }

    // Ends the trace (an epoch shorter than four steps ends it early) and
    // prints the summary. Throws what px_trace_end reports.
    void finish() {
        if (finished_ || !trace_) return;
        finished_ = true;
        region_.reset();
        trace_->end();
        std::ifstream summary(summary_path());
        std::stringstream text;
        text << summary.rdbuf();
        std::cout << "Traced steps " << kFirstStep << " to " << kLastStep << " of the first epoch into " << path_
                  << " (open it in ui.perfetto.dev or chrome://tracing) and " << summary_path() << ":\n"
                  << text.str();
    }

private:
    // px_trace_end's rule: trace.json -> trace.summary.txt.
    std::string summary_path() const {
        const std::string json = ".json";
        const bool ends_json = path_.size() > json.size() && path_.compare(path_.size() - json.size(), json.size(), json) == 0;
        return (ends_json ? path_.substr(0, path_.size() - json.size()) : path_) + ".summary.txt";
    }

    std::string path_;
    std::vector<Device> devices_;
    std::unique_ptr<Trace> trace_;
    std::unique_ptr<TraceRegion> region_;
    bool finished_ = false;
};

}  // namespace plexus::train
