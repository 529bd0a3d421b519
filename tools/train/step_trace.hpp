// plexus-train --trace FILE: a trace of steps 2 to 4 of the first epoch run
// (step 1 warms up: first allocations, the kernels' first calls), each step
// a region holding its op calls, written with its per-op summary
// (px_trace_end) and the summary printed. The devices are waited for before
// the trace begins, so it holds the traced steps' work and nothing earlier.
// An epoch of fewer than four steps is traced as far as it goes; one of a
// single step is not traced at all (and FILE, if the start made it empty to
// see that it can be written, is removed; a FILE that was there stays as it was).
#pragma once

#include <algorithm>
#include <cstdio>
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

    // An empty path traces nothing; `made`: this run made the file (empty).
    StepTrace(std::string path, std::vector<Device> devices, bool made)
        : path_(std::move(path)), devices_(std::move(devices)), made_(made) {}

    // Before the first epoch run: it has `steps` steps.
    void begin_epoch(int64_t steps) { last_ = std::min(kLastStep, steps); }

    // After step `done` (from 1) of the first epoch has been queued.
    void after_step(int64_t done) {
        if (path_.empty() || finished_) return;
        if (done >= kFirstStep) region_.reset();
        if (done >= last_) return finish();
        if (done == kFirstStep - 1) {
            for (Device d : devices_) synchronize(d);
            trace_ = std::make_unique<Trace>(path_);
        }
        if (trace_) region_ = std::make_unique<TraceRegion>("step " + std::to_string(done + 1));
    }

    // Ends the trace and prints the summary, or says that no step was
    // traced. Throws what px_trace_end reports.
    void finish() {
        if (path_.empty() || finished_) return;
        finished_ = true;
        if (!trace_) return say_none_traced();
        region_.reset();
        trace_->end();
        std::ifstream summary(summary_path());
        std::stringstream text;
        text << summary.rdbuf();
        std::cout << "Traced " << steps_traced() << " of the first epoch into " << path_
                  << " (open it in ui.perfetto.dev or chrome://tracing) and " << summary_path() << ":\n"
                  << text.str();
    }

private:
    std::string steps_traced() const {
        if (last_ == kFirstStep) return "step " + std::to_string(kFirstStep);
        return "steps " + std::to_string(kFirstStep) + (last_ == kFirstStep + 1 ? " and " : " to ") + std::to_string(last_);
    }

    void say_none_traced() const {
        if (made_) std::remove(path_.c_str());
        std::cout << "Traced no step: " << path_ << " not written ("
                  << (last_ > 0 ? "the first epoch run had 1 step, a warm-up; --trace traces steps 2 to 4"
                                : "this run trained no step")
                  << ")\n";
    }

    // px_trace_end's rule: trace.json -> trace.summary.txt.
    std::string summary_path() const {
        const std::string json = ".json";
        const bool ends_json = path_.size() > json.size() && path_.compare(path_.size() - json.size(), json.size(), json) == 0;
        return (ends_json ? path_.substr(0, path_.size() - json.size()) : path_) + ".summary.txt";
    }

    std::string path_;
    std::vector<Device> devices_;
    bool made_;
    int64_t last_ = 0;  // the last step to trace: kLastStep, or the epoch's last
    std::unique_ptr<Trace> trace_;
    std::unique_ptr<TraceRegion> region_;
    bool finished_ = false;
};

}  // namespace plexus::train
