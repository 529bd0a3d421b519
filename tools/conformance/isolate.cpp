// plexus-conformance's checks, each in a forked child (isolate.hpp). The
// child runs one Catch test case and tells the parent, one line at a time
// over a pipe, which cell it enters and leaves ("open"/"close") and when it
// is in the plugin's teardown ("stage"), then its cells, its check (the
// requirements its failure is filed under, its cause, its outcome), a leak
// or a wait around the check that failed ("outside"), Catch's counts, and
// "done". A child that ends without "done", or is still running at its
// time-out, failed its check; the cell or stage it was in is the one that
// did it.
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
#include <optional>
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

// A wait on `dev` outside a check failed with `first`: "<requirement>
// <cause>\n<what happened>", the cause in words the same for every check
// that meets it, so that the parent files it once. A failure without a
// message breaks R2; one reported again at the next wait (sticky), or with
// nothing queued, R9 ("once"). After a check that failed, a failure
// reported once is that check's own work, already counted there: "".
std::string outside_wait(plexus::Device dev, const plexus::Error& first, bool after_the_check, bool check_failed) {
    const std::string what = first.what();
    if (what.find("(the plugin gave no message)") != std::string::npos)  // the host's words: host/objects.cpp
        return "R2 a failure with no message\n" + what;
    if (!after_the_check)
        return "R9 a wait with nothing queued failed\nthe wait on " + dev.str() + " before the check, with nothing run: " + what;
    try {
        plexus::synchronize(dev);  // nothing queued since: nothing to report
    } catch (const plexus::Error& again) {
        return "R9 a failure reported again at a later wait\nthe waits after the check reported it twice, with "
               "nothing queued between: " +
               std::string(again.what());
    }
    if (check_failed) return "";
    return "R9 a failure no check waited for\nthe wait after the check (which passed) reported: " + what;
}

}  // namespace

[[noreturn]] void run_one_check(const RunSpec& run, plexus::Device dev, const std::string& check, int fd) {
    DeviceResults r;
    current() = &r;
    on_crash() = nullptr;
    on_cell() = [fd](std::pair<int, int> cell, bool open, Outcome o) {
        send(fd, open ? "open " + cell_words(cell) : "close " + cell_words(cell) + " " + std::to_string(int(o)));
    };
    // Told at once, so that a check that dies still names what it used and
    // where it was (destroy()).
    pxconf::record().on_use = [fd](std::pair<int, int> cell) { send(fd, "use " + cell_words(cell)); };
    pxconf::record().on_stage = [fd](const std::string& where) { send(fd, "stage " + escape(where)); };
    // R6: the device's memory in use is back to its baseline after the check,
    // measured after a wait on each side. A wait that fails there failed
    // outside the check: told apart (outside_wait) and filed once by the
    // parent under the clause it breaks, not against this check.
    std::string leak, outside;
    const auto in_use = [&](bool after_the_check, bool check_failed) -> std::optional<uint64_t> {
        try {
            plexus::synchronize(dev);
        } catch (const plexus::Error& first) {
            outside = outside_wait(dev, first, after_the_check, check_failed);
            return std::nullopt;
        }
        try {
            return plexus::device_info(dev).memory_in_use;
        } catch (const plexus::Error& e) {
            outside = "R4 device_info failed on " + dev.str() + " outside any check\n" + e.what();
            return std::nullopt;
        }
    };
    const std::optional<uint64_t> before = in_use(false, false);
    run(spec_of(check));
    bool failed = false;
    for (const auto& c : r.checks) failed |= c.outcome == Outcome::fail;
    if (before && outside.empty()) {
        const std::optional<uint64_t> after = in_use(true, failed);
        if (after && *after > *before)
            leak = "R6: " + std::to_string(*after - *before) + " bytes of " + dev.str() +
                   " still in use after the check (" + std::to_string(*before) + " before, " +
                   std::to_string(*after) + " after): it did not free what the check freed";
    }
    for (const auto& [cell, o] : r.cells) send(fd, "cell " + cell_words(cell) + " " + std::to_string(int(o)));
    for (const auto& c : r.checks) {
        std::string ids;
        for (const auto& id : c.requirements) ids += " " + id;
        send(fd, "requirements" + ids);
        if (!c.cause.empty()) send(fd, "cause " + escape(c.cause));
        send(fd, "check " + std::to_string(int(c.outcome)) + " " + escape(c.why));
    }
    if (!leak.empty()) send(fd, "leak " + escape(leak));
    if (!outside.empty()) send(fd, "outside " + escape(outside));
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
    std::string stage;                 // where outside its own code ("destroy()"), if anywhere
    bool done = false, reported = false;
    Check check;
    CatchTotals totals;
    std::string outside_requirement, outside_cause, outside_what;  // a wait outside the check that failed
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
    } else if (word == "requirements") {  // replace the tags: the child knows which clause failed
        h.check.requirements.clear();
        while (in >> word) h.check.requirements.push_back(word);
    } else if (word == "cause" || word == "stage") {
        std::string text;
        std::getline(in >> std::ws, text);
        (word == "cause" ? h.check.cause : h.stage) = unescape(text);
    } else if (word == "outside") {
        std::string text;
        std::getline(in >> std::ws, text);
        text = unescape(text);
        const size_t space = text.find(' '), nl = text.find('\n');
        if (space != std::string::npos && nl != std::string::npos && space < nl) {
            h.outside_requirement = text.substr(0, space);
            h.outside_cause = text.substr(space + 1, nl - space - 1);
            h.outside_what = text.substr(nl + 1);
        }
    } else if (word == "check" && in >> o) {
        h.reported = true;
        h.check.outcome = Outcome(o);
        std::string why;
        std::getline(in >> std::ws, why);
        h.check.why = unescape(why);
    } else if (word == "leak") {
        // After the check's own failure, if it had one: that is the one
        // filed (the bytes may be its own work's, left by the failure), the
        // leak only told.
        std::string why;
        std::getline(in >> std::ws, why);
        if (h.check.outcome == Outcome::fail) {
            h.check.why += " (and then " + unescape(why) + ")";
        } else {
            h.check.requirements = {"R6"};
            h.check.why = unescape(why);
            h.check.outcome = Outcome::fail;
        }
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

// A wait outside the checks that failed, filed once per cause.
struct Outside {
    std::string requirement, what, first;  // first: the check it was met after (or before)
    int checks = 0;
};

// Each cause of failing waits outside the checks as one failed entry, at the
// top of the device's checks (so that a check meeting the same cause inside,
// a failure without a message, counts here: attribute_failures).
void file_outside(const std::vector<std::pair<std::string, Outside>>& met, DeviceResults& r) {
    std::vector<Check> entries;
    for (const auto& [cause, o] : met) {
        Check c;
        c.name = "waits outside the checks";
        c.requirements = {o.requirement};
        c.outcome = Outcome::fail;
        c.cause = cause;
        c.why = cause + ", met at the waits around " + std::to_string(o.checks) +
                (o.checks == 1 ? " check" : " checks") + ", first at '" + o.first + "': " + o.what;
        entries.push_back(std::move(c));
    }
    r.checks.insert(r.checks.begin(), entries.begin(), entries.end());
}

}  // namespace

void run_isolated(const std::vector<std::string>& command, plexus::Device dev, const std::vector<Check>& checks,
                  Clock& clock, bool echo, DeviceResults& r) {
    static bool banner_shown = false;
    std::vector<std::pair<std::string, Outside>> outside;  // in the order met
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
            if (!h.stage.empty()) {
                // Not in the check's own code but in the plugin's teardown:
                // said so, under the clause it breaks (R2 "never aborts", R3
                // "destroy must return"), and counted once.
                why += " in " + h.stage;
                h.check.requirements = {timed_out ? "R3" : "R2"};
                h.check.cause = timed_out ? h.stage + " did not return" : h.stage + " " + why.substr(0, why.find(" ("));
            } else if (h.open.first >= 0) {
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
        if (!h.outside_cause.empty()) {
            auto it = std::find_if(outside.begin(), outside.end(), [&](const auto& o) { return o.first == h.outside_cause; });
            if (it == outside.end())
                it = outside.insert(outside.end(), {h.outside_cause, Outside{h.outside_requirement, h.outside_what, name}});
            ++it->second.checks;
        }
        r.checks.push_back(h.check);
        r.totals.assertions_passed += h.totals.assertions_passed;
        r.totals.assertions_failed += h.totals.assertions_failed;
        r.totals.cases_passed += h.totals.cases_passed;
        r.totals.cases_failed += h.totals.cases_failed;
    }
    file_outside(outside, r);
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
