// What a plexus-conformance run found, per device: one cell per (op, dtype)
// and one entry per check (test case), filled by the Catch listener.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace pxconformance {

enum class Outcome { pass, fail, unsupported, skipped };
const char* outcome_name(Outcome o);

struct Check {
    std::string name;
    std::vector<std::string> requirements;  // "R7", ...
    Outcome outcome = Outcome::pass;
    std::string why;                        // the first failure, or why it was skipped
};

struct PerfRow {
    std::string op, dtype, shape;
    double microseconds = 0;  // median of the repetitions
    double rate = 0;          // in `unit`
    std::string unit;         // "GB/s" or "GFLOP/s"
};

struct DeviceResults {
    std::string device;  // "cpu(0)"
    std::string plugin, file;
    std::map<std::pair<int, int>, Outcome> cells;  // (op, dtype)
    std::vector<Check> checks;
    std::vector<PerfRow> perf;
    int failures() const;
};

// The results of the device being tested; the listener writes here.
DeviceResults*& current();

// Called by the listener when a check crashed (a signal Catch caught, just
// before it re-raises it and the process dies), with "<check>: <signal>", so
// what was found so far still reaches --json.
std::function<void(const std::string&)>& on_crash();

}  // namespace pxconformance
