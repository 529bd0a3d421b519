// What every plexus-bench figure shares: timing, interleaving with the
// baseline, medians, and the table (or JSON) of results.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "plexus/data.hpp"

namespace pxbench {

using Clock = std::chrono::steady_clock;

inline double seconds(const std::function<void()>& f) {
    // Let OpenMP threads of the previous run stop spinning (libgomp spins
    // after a parallel region), so neither side is measured against the
    // other's idle threads.
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
    auto t0 = Clock::now();
    f();
    return std::chrono::duration<double>(Clock::now() - t0).count();
}

inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// Runs `ours` and `raw` alternately `reps` times; returns their median seconds.
inline std::pair<double, double> interleaved(int reps, const std::function<void()>& ours, const std::function<void()>& raw) {
    ours();  // warm up: caches, thread pools, first-touch of memory
    if (raw) raw();
    std::vector<double> a, b;
    for (int i = 0; i < reps; ++i) {
        a.push_back(seconds(ours));
        if (raw) b.push_back(seconds(raw));
    }
    return {median(a), raw ? median(b) : 0.0};
}

struct Row {
    std::string name, unit;
    double ours, baseline;
    std::string baseline_name, target;
};

// Every figure reported, in order (for --json).
inline std::vector<Row>& rows() {
    static std::vector<Row> all;
    return all;
}

inline void report(const Row& r, bool json) {
    rows().push_back(r);
    if (json) return;
    if (r.baseline > 0)
        std::printf("%-40s %10.2f %-7s %-22s %10.2f   ratio %.2fx   %s\n", r.name.c_str(), r.ours, r.unit.c_str(),
                    r.baseline_name.c_str(), r.baseline, r.ours / r.baseline, r.target.c_str());
    else
        std::printf("%-40s %10.2f %-7s %-22s %10s   %-12s %s\n", r.name.c_str(), r.ours, r.unit.c_str(), "", "", "",
                    r.target.c_str());
    std::fflush(stdout);
}

// The number after "key": in a one-line JSON object, or -1 when the key is
// missing or no number follows it.
inline double json_number(const std::string& text, const std::string& key) {
    auto at = text.find("\"" + key + "\":");
    if (at == std::string::npos) return -1;
    const char* start = text.c_str() + at + key.size() + 3;
    char* end = nullptr;
    const double v = std::strtod(start, &end);
    return end == start ? -1 : v;
}

// The JSON line a PyTorch baseline script (tools/bench/torch_*.py) prints,
// or "" when it cannot run (no python3 with torch) or its line lacks
// `expected_key`. Tries the python3 on PATH, then Debian's (python3-torch
// installs there).
inline std::string torch_baseline(const std::string& script, const std::string& args, const std::string& expected_key) {
    for (const char* python : {"python3", "/usr/bin/python3"}) {
        std::string cmd = std::string(python) + " " + script + " " + args + " 2>/dev/null";
        std::FILE* p = popen(cmd.c_str(), "r");
        if (!p) continue;
        std::string out;
        char buf[512];
        while (std::fgets(buf, sizeof buf, p)) out += buf;
        pclose(p);
        if (out.find("\"" + expected_key + "\"") != std::string::npos) return out;
    }
    return "";
}

// Fashion-MNIST's training set, or nothing when it cannot be read: then the
// `figures` are skipped, with the reason printed (not in JSON).
inline std::optional<plexus::data::ImageDataset> training_set_or_skip(const char* figures, bool json) {
    try {
        return plexus::data::fashion_mnist(true);
    } catch (const plexus::Error& e) {
        if (!json) std::printf("%-40s skipped: %s\n", figures, e.what());
        return std::nullopt;
    }
}

}  // namespace pxbench
