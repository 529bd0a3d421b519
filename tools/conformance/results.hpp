// What a plexus-conformance run found, per device: one cell per (op, dtype)
// and one entry per check (test case), filled by the Catch listener.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "plexus/plexus.hpp"

namespace pxconformance {

enum class Outcome { pass, fail, unsupported, skipped };
const char* outcome_name(Outcome o);

struct Check {
    std::string name;
    std::vector<std::string> requirements;  // "R7", ...: its tags; once failed, those its failure is filed under
    Outcome outcome = Outcome::pass;
    std::string why;                        // the first failure, or why it was skipped
    std::set<std::pair<int, int>> uses;          // helper (op, dtype) it used (PX_NEEDS, casts)
    std::set<std::pair<int, int>> failed_cells;  // its own (op, dtype) sections that failed
    // What its failure comes from when other checks may meet it the same way
    // (a destroy() that throws, a failure without a message): counted once.
    std::string cause;
};

struct PerfRow {
    std::string op, dtype, shape;
    double microseconds = 0;  // median of the repetitions
    double rate = 0;          // in `unit`
    std::string unit;         // "GB/s" or "GFLOP/s"
};

// Catch's counts, kept so that a run split over child processes still ends
// with Catch's one summary line.
struct CatchTotals {
    long assertions_passed = 0, assertions_failed = 0;
    int cases_passed = 0, cases_failed = 0;
};

struct DeviceResults {
    std::string device;  // "cpu(0)"
    std::string plugin, file;
    std::map<std::pair<int, int>, Outcome> cells;  // (op, dtype)
    std::vector<Check> checks;
    std::vector<PerfRow> perf;
    CatchTotals totals;
    int failures() const;
    // Adds a cell's outcome as the listener does: a failure stays, a pass
    // replaces "unsupported" and "untested" (skipped), which only fill a
    // cell not yet seen.
    void merge_cell(std::pair<int, int> cell, Outcome o);
};

// Gives every (op, dtype) the op table defines a cell: "unsupported" where
// the device's supports() says no, "untested" (skipped) where it says yes
// but no check tested the pair; a cell recorded as unsupported that
// supports() accepts becomes untested.
void complete_table(DeviceResults& r, plexus::Device d);

// Counts each failure where it happens: a failed check that used a helper
// (op, dtype) that fails in a check of its own (one not failing the same
// way) is marked skipped, naming the helper and that check, instead of
// failing a second time. Checks whose failures all depend on each other
// stay failed. Of the failed checks with one cause (Check::cause), the
// first stays failed and the others are marked skipped, naming it.
void attribute_failures(DeviceResults& r);

// The requirement ids ("R7") among a test case's tags.
std::vector<std::string> requirement_ids(const std::vector<std::string>& tags);

// The results of the device being tested; the listener writes here.
DeviceResults*& current();

// Called by the listener when a check crashed (a signal Catch caught, just
// before it re-raises it and the process dies), with "<check>: <signal>", so
// what was found so far still reaches --json.
std::function<void(const std::string&)>& on_crash();

// Called by the listener when a cell's section opens (`open`) and when it
// closes with its outcome, so that a parent learns which cell a child
// process was in when it died (isolate.cpp).
std::function<void(std::pair<int, int> cell, bool open, Outcome o)>& on_cell();

}  // namespace pxconformance
