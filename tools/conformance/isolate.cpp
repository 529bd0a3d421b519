// plexus-conformance's checks, each in a forked child (isolate.hpp). The
// child runs one Catch test case and tells the parent, one line at a time
// over a pipe, which cell it enters and leaves ("open"/"close"), then its
// cells, its check and Catch's counts, and "done". A child that ends
// without "done", or is still running at its time-out, failed its check;
// the cell it was in is the one that did it.
#define CATCH_CONFIG_EXTERNAL_INTERFACES
#include "isolate.hpp"

#include <catch2/catch.hpp>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <sstream>

#include "../../tests/support.hpp"
#include "conformance.hpp"
#include "results.hpp"

namespace pxconformance {

double Clock::limit_for_next() const {
    const double used = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double reserve = std::min(1.0, timeout_s);
    const double spare = budget_s - used - reserve * (checks_left - 1);
    return std::min(timeout_s, std::max(reserve, spare));
}

std::vector<Check> selected_checks(const Catch::IConfig& config) {
    std::vector<Check> checks;
    for (const auto& t : Catch::filterTests(Catch::getAllTestCasesSorted(config), config.testSpec(), config)) {
        checks.emplace_back();
        checks.back().name = t.name;
        checks.back().requirements = requirement_ids(t.tags);
    }
    return checks;
}

namespace {

// Text with neither newline nor backslash, for one line of the pipe.
std::string escape(const std::string& s) {
    std::string out;
    for (char c : s) out += c == '\\' ? "\\\\" : c == '\n' ? "\\n" : std::string(1, c);
    return out;
}

std::string unescape(const std::string& s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
        if (s[i] == '\\' && i + 1 < s.size()) out += s[++i] == 'n' ? '\n' : s[i];
        else out += s[i];
    }
    return out;
}

void send(int fd, const std::string& line) {
    const std::string l = line + "\n";
    for (size_t done = 0; done < l.size();) {
        const ssize_t n = ::write(fd, l.data() + done, l.size() - done);
        if (n <= 0) return;  // the parent is gone: nobody to tell
        done += size_t(n);
    }
}

// A Catch test spec that names exactly `name`: quoted, so that brackets
// are plain characters, and commas (which separate specs even in quotes),
// quotes and backslashes escaped.
std::string spec_of(const std::string& name) {
    std::string s = "\"";
    for (char c : name) s += c == '"' || c == '\\' || c == ',' ? std::string("\\") + c : std::string(1, c);
    return s + "\"";
}

std::string cell_words(std::pair<int, int> cell) {
    return std::to_string(cell.first) + " " + std::to_string(cell.second);
}

}  // namespace

[[noreturn]] void run_one_check(const RunSpec& run, plexus::Device dev, const std::string& check, int fd) {
    DeviceResults r;
    current() = &r;
    on_crash() = nullptr;
    on_cell() = [fd](std::pair<int, int> cell, bool open, Outcome o) {
        send(fd, open ? "open " + cell_words(cell) : "close " + cell_words(cell) + " " + std::to_string(int(o)));
    };
    // Told at once, so that a check that dies still names what it used.
    pxconf::record().on_use = [fd](std::pair<int, int> cell) { send(fd, "use " + cell_words(cell)); };
    std::string leak;
    try {
        // R6: the device's memory in use is back to its baseline after the check.
        const uint64_t before = pxtest::bytes_in_use(dev);
        run(spec_of(check));
        const uint64_t after = pxtest::bytes_in_use(dev);
        if (after > before)
            leak = "R6: " + std::to_string(after - before) + " bytes of " + dev.str() +
                   " still in use after the check (" + std::to_string(before) + " before, " +
                   std::to_string(after) + " after): it did not free what the check freed";
    } catch (const std::exception& e) {
        leak = std::string("R6: the device failed outside the check: ") + e.what();
    }
    for (const auto& [cell, o] : r.cells) send(fd, "cell " + cell_words(cell) + " " + std::to_string(int(o)));
    for (const auto& c : r.checks) {
        for (const auto& id : c.requirements) send(fd, "requirement " + id);
        send(fd, "check " + std::to_string(int(c.outcome)) + " " + escape(c.why));
    }
    if (!leak.empty()) send(fd, "leak " + escape(leak));
    const CatchTotals& t = r.totals;
    send(fd, "totals " + std::to_string(t.assertions_passed) + " " + std::to_string(t.assertions_failed) + " " +
                 std::to_string(t.cases_passed) + " " + std::to_string(t.cases_failed));
    send(fd, "done");
    std::cout.flush();
    std::fflush(stdout);
    ::_exit(0);  // not the atexit work, nor the plugins' teardown: the check is over
}

namespace {

// What the parent heard from one child.
struct Heard {
    std::pair<int, int> open{-1, -1};  // the cell the child was in, if any
    bool done = false, reported = false;
    Check check;
    CatchTotals totals;
};

void add_requirement(Check& c, const std::string& id) {
    if (std::find(c.requirements.begin(), c.requirements.end(), id) == c.requirements.end()) c.requirements.push_back(id);
}

void hear(const std::string& line, Heard& h, DeviceResults& r) {
    std::istringstream in(line);
    std::string word;
    in >> word;
    int op = -1, dtype = -1, o = 0;
    if (word == "open" && in >> op >> dtype) {
        h.open = {op, dtype};
    } else if ((word == "close" || word == "cell") && in >> op >> dtype >> o) {
        r.merge_cell({op, dtype}, Outcome(o));
        if (word == "close") h.open = {-1, -1};
        if (word == "close" && Outcome(o) == Outcome::fail) h.check.failed_cells.insert({op, dtype});
    } else if (word == "use" && in >> op >> dtype) {
        h.check.uses.insert({op, dtype});
    } else if (word == "requirement" && in >> word) {
        add_requirement(h.check, word);
    } else if (word == "check" && in >> o) {
        h.reported = true;
        h.check.outcome = Outcome(o);
        std::string why;
        std::getline(in >> std::ws, why);
        h.check.why = unescape(why);
    } else if (word == "leak") {
        // After the check's own failure, if it had one: that is the first.
        std::string why;
        std::getline(in >> std::ws, why);
        add_requirement(h.check, "R6");
        if (h.check.outcome != Outcome::fail) h.check.why = unescape(why);
        h.check.outcome = Outcome::fail;
    } else if (word == "totals") {
        CatchTotals& t = h.totals;
        in >> t.assertions_passed >> t.assertions_failed >> t.cases_passed >> t.cases_failed;
    } else if (word == "done") {
        h.done = true;
    }
}

// Reads the child's lines until it has exited (and the pipe is drained) or
// `limit_s` has passed; then kills it. Returns the wait status, and whether
// it timed out.
int wait_for(pid_t pid, int fd, double limit_s, Heard& h, DeviceResults& r, bool& timed_out) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(limit_s);
    std::string pending;
    int status = 0;
    bool exited = false, eof = false;
    timed_out = false;
    while (!(exited && eof)) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0 && !exited) {
            ::kill(pid, SIGKILL);
            timed_out = true;
            ::waitpid(pid, &status, 0);
            break;
        }
        pollfd p{fd, POLLIN, 0};
        // Short waits: a grandchild may hold the pipe open after the child exits.
        if (!eof && ::poll(&p, 1, int(std::min<long>(left.count(), 100))) > 0) {
            char buf[4096];
            const ssize_t n = ::read(fd, buf, sizeof buf);
            if (n > 0) pending.append(buf, size_t(n));
            else eof = true;
            for (size_t nl; (nl = pending.find('\n')) != std::string::npos; pending.erase(0, nl + 1))
                hear(pending.substr(0, nl), h, r);
        } else if (eof) {
            ::usleep(10000);
        }
        if (!exited && ::waitpid(pid, &status, WNOHANG) == pid) exited = true;
        if (exited && !eof && ::poll(&p, 1, 0) == 0) eof = true;  // drained; the rest is a grandchild's
    }
    return status;
}

std::string signal_name(int sig) {
    const char* abbrev = sigabbrev_np(sig);
    return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

// Why a child that did not report "done" failed.
std::string what_happened(int status, bool timed_out, double limit_s) {
    char text[160];
    if (timed_out) std::snprintf(text, sizeof text, "timed out after %.1f s (--timeout, --budget)", limit_s);
    else if (WIFSIGNALED(status))
        std::snprintf(text, sizeof text, "crashed: %s (%s)", signal_name(WTERMSIG(status)).c_str(),
                      strsignal(WTERMSIG(status)));
    else std::snprintf(text, sizeof text, "the process exited with status %d in the middle of the check",
                       WEXITSTATUS(status));
    return text;
}

// Catch's output of one child, less the filter it was given, its summary
// (the divider of '=' and the counts) and, after the first, the banner of a
// run with failures: as if one run had printed it all.
std::string trim_catch_output(std::string s, bool& banner_shown) {
    if (s.rfind("Filters: ", 0) == 0) s.erase(0, s.find('\n') == std::string::npos ? s.size() : s.find('\n') + 1);
    const std::string divider = std::string(CATCH_CONFIG_CONSOLE_WIDTH - 1, '=') + "\n";
    const size_t d = s.rfind(divider);
    if (d != std::string::npos && (d == 0 || s[d - 1] == '\n')) s.erase(d);
    const std::string banner_end = "Run with -? for options\n\n";
    const size_t b = s.find(banner_end);
    if (b != std::string::npos) {
        if (banner_shown) {
            const size_t start = s.rfind("\n" + std::string(CATCH_CONFIG_CONSOLE_WIDTH - 1, '~'), b);
            s.erase(start == std::string::npos ? 0 : start, b + banner_end.size() - (start == std::string::npos ? 0 : start));
        }
        banner_shown = true;
    }
    return s;
}

std::string read_all(FILE* f) {
    std::string s;
    std::rewind(f);
    char buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) s.append(buf, n);
    return s;
}

}  // namespace

void run_isolated(const std::vector<std::string>& command, plexus::Device dev, const std::vector<Check>& checks,
                  Clock& clock, bool echo, DeviceResults& r) {
    static bool banner_shown = false;
    for (const auto& check : checks) {
        const std::string& name = check.name;
        Heard h;
        h.check = check;
        const double limit = clock.limit_for_next();
        --clock.checks_left;
        int pipe_fds[2];
        FILE* out = std::tmpfile();
        if (!out || ::pipe(pipe_fds) != 0) throw std::runtime_error("cannot make a pipe or a temporary file");
        // Made before the fork: the child may only exec.
        std::vector<std::string> args = command;
        args.insert(args.end(), {"--isolated-fd", std::to_string(pipe_fds[1]), "--isolated-device", dev.str(),
                                 "--isolated-check", name});
        std::vector<char*> argv;
        argv.reserve(args.size() + 1);
        for (auto& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        const std::string cannot_start = "check " + std::to_string(int(Outcome::fail)) + " cannot start the child\n";
        std::cout.flush();
        std::fflush(nullptr);
        const pid_t pid = ::fork();
        if (pid < 0) throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
        if (pid == 0) {
            ::close(pipe_fds[0]);
            ::dup2(::fileno(out), STDOUT_FILENO);
            ::execv("/proc/self/exe", argv.data());
            (void)!::write(pipe_fds[1], cannot_start.data(), cannot_start.size());
            ::_exit(127);
        }
        ::close(pipe_fds[1]);
        bool timed_out = false;
        const int status = wait_for(pid, pipe_fds[0], limit, h, r, timed_out);
        ::close(pipe_fds[0]);
        const std::string caught = read_all(out);
        std::fclose(out);
        if (echo) std::fputs(trim_catch_output(caught, banner_shown).c_str(), stdout);
        if (!h.done) {
            std::string why = what_happened(status, timed_out, limit);
            if (h.open.first >= 0) {
                r.merge_cell(h.open, Outcome::fail);
                h.check.failed_cells.insert(h.open);
                why += std::string(" in ") + px_op_name(h.open.first) + " " + px_dtype_name(h.open.second);
            }
            if (!timed_out) add_requirement(h.check, "R2");  // "never throws or aborts"
            h.check.outcome = Outcome::fail;
            h.check.why = why;
            h.totals = CatchTotals{0, 1, 0, 1};
            std::fprintf(stderr, "plexus-conformance: %s: %s: %s\n", dev.str().c_str(), name.c_str(), why.c_str());
        }
        r.checks.push_back(h.check);
        r.totals.assertions_passed += h.totals.assertions_passed;
        r.totals.assertions_failed += h.totals.assertions_failed;
        r.totals.cases_passed += h.totals.cases_passed;
        r.totals.cases_failed += h.totals.cases_failed;
    }
}

void print_catch_summary(const CatchTotals& t) {
    std::printf("%s\n", std::string(CATCH_CONFIG_CONSOLE_WIDTH - 1, '=').c_str());
    const auto plural = [](long n, const char* what) { return std::to_string(n) + " " + what + (n == 1 ? "" : "s"); };
    if (t.cases_failed == 0 && t.assertions_failed == 0 && t.assertions_passed > 0)
        std::printf("All tests passed (%s in %s)\n\n", plural(t.assertions_passed, "assertion").c_str(),
                    plural(t.cases_passed, "test case").c_str());
    else
        std::printf("test cases: %d | %d passed | %d failed\nassertions: %ld | %ld passed | %ld failed\n\n",
                    t.cases_passed + t.cases_failed, t.cases_passed, t.cases_failed,
                    t.assertions_passed + t.assertions_failed, t.assertions_passed, t.assertions_failed);
}

}  // namespace pxconformance
