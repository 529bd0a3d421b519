// Each check (Catch test case) of plexus-conformance in a child process of
// its own, so that a plugin that crashes, aborts, calls exit or hangs in one
// op fails that check, naming the op, dtype and what happened, and the run
// goes on to the whole table and JSON. The child is this program started
// afresh (fork, then exec): a forked copy of a process whose plugins made a
// CUDA context cannot use CUDA.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "plexus/plexus.hpp"
#include "results.hpp"

namespace Catch {
struct IConfig;
}

namespace pxconformance {

// How long checks may take. Each check gets `timeout_s`, less when the
// run's `budget_s` would not otherwise leave a reserve (1 s, or timeout_s
// if shorter) for each check still to run: so a plugin that hangs in every
// call still gets its report in about budget_s.
struct Clock {
    double timeout_s = 60;
    double budget_s = 540;
    int checks_left = 0;
    std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
    double limit_for_next() const;
};

// The checks the session's filters select, in its order (named, with the
// requirements they check, but not yet run).
std::vector<Check> selected_checks(const Catch::IConfig& config);

// Runs the Catch session on the tests a test spec names (in the program
// that owns the session: Catch's Session is only visible there).
using RunSpec = std::function<void(const std::string& spec)>;

// Runs `checks` on `dev`, each in a child, into `r` (cells, checks, Catch's
// counts). A child runs `command` (this program's own arguments) with
// --isolated-fd, --isolated-device and --isolated-check added, which make
// its main call run_one_check. The children's Catch output goes to stdout
// when `echo`, without their per-child summary lines (print_catch_summary
// prints the sum).
void run_isolated(const std::vector<std::string>& command, plexus::Device dev, const std::vector<Check>& checks,
                  Clock& clock, bool echo, DeviceResults& r);

// The child's part: runs the check `check` on `dev` and reports to the
// parent on `fd`, one line at a time; never returns.
[[noreturn]] void run_one_check(const RunSpec& run, plexus::Device dev, const std::string& check, int fd);

// Catch's last lines, for the counts of every child.
void print_catch_summary(const CatchTotals& t);

}  // namespace pxconformance
