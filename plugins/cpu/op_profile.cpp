#include "op_profile.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace pxcpu {
namespace {

std::string shape_text(const Operand& o) {
    std::string s = "(";
    for (int i = 0; i < o.ndim; ++i) s += (i ? "," : "") + std::to_string(o.shape[i]);
    return s + ")";
}

// "conv2d float32 (256,1,28,28),(6,1,5,5) -> (256,6,28,28)"
std::string key_of(const Task& t) {
    if (t.kind == Task::copy) return "transfer of " + std::to_string(t.bytes) + " bytes";
    const OpTask& op = t.op_task;
    const char* name = px_op_name(op.op);
    const char* dtype = px_dtype_name(op.num_inputs ? op.in[0].dtype : op.out.dtype);
    std::string k = std::string(name ? name : "op") + " " + (dtype ? dtype : "?") + " ";
    for (int i = 0; i < op.num_inputs; ++i) k += (i ? "," : "") + shape_text(op.in[i]);
    return k + " -> " + shape_text(op.out);
}

}  // namespace

void OpProfile::add(const Task& t, double seconds) {
    std::string key = key_of(t);
    std::lock_guard<std::mutex> lock(mu_);
    Row& r = rows_[key];
    ++r.calls;
    r.seconds += seconds;
}

std::string OpProfile::table(int device) const {
    std::vector<std::pair<std::string, Row>> rows;
    {
        std::lock_guard<std::mutex> lock(mu_);
        rows.assign(rows_.begin(), rows_.end());
    }
    if (rows.empty()) return "";
    std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.seconds > b.second.seconds; });
    double total = 0;
    for (const auto& r : rows) total += r.second.seconds;
    char line[160];
    std::snprintf(line, sizeof line, "plexus-cpu profile of cpu(%d): %zu kinds of task, %.3f ms in all\n", device,
                  rows.size(), total * 1e3);
    std::string out = line;
    std::snprintf(line, sizeof line, "%12s %10s %12s %7s  %s\n", "total ms", "calls", "mean us", "share", "task");
    out += line;
    for (const auto& [key, r] : rows) {
        std::snprintf(line, sizeof line, "%12.3f %10lld %12.2f %6.1f%%  ", r.seconds * 1e3, r.calls,
                      r.seconds * 1e6 / double(r.calls), total > 0 ? 100.0 * r.seconds / total : 0.0);
        out += line + key + "\n";
    }
    return out;
}

bool ProfileSink::write(const std::string& text) const {
    if (path.empty() || text.empty()) return true;
    if (path == "-") return std::fputs(text.c_str(), stderr) >= 0;
    std::FILE* f = std::fopen(path.c_str(), "a");
    if (!f) return false;
    bool ok = std::fputs(text.c_str(), f) >= 0;
    return std::fclose(f) == 0 && ok;
}

ProfileReport::ProfileReport(ProfileSink sink, size_t devices) : sink_(std::move(sink)) {
    for (size_t i = 0; i < devices; ++i) profiles_.push_back(std::make_unique<OpProfile>());
}

void ProfileReport::write_once() {
    if (written_.exchange(true)) return;
    for (size_t i = 0; i < profiles_.size(); ++i)
        if (!sink_.write(profiles_[i]->table(int(i))))
            std::fprintf(stderr, "plexus-cpu: could not write the profile to %s: %s\n", sink_.path.c_str(),
                         std::strerror(errno));
}

namespace {
// Its destructor runs at exit, or when the plugin is unloaded (after every
// context of it is destroyed, so by then it holds nothing alive).
struct ExitReports {
    std::mutex mu;
    std::vector<std::weak_ptr<ProfileReport>> reports;
    ~ExitReports() {
        std::lock_guard<std::mutex> lock(mu);
        for (auto& w : reports)
            if (auto r = w.lock()) r->write_once();
    }
};
ExitReports& exit_reports() {
    static ExitReports book;
    return book;
}
}  // namespace

void write_at_exit(const std::shared_ptr<ProfileReport>& report) {
    ExitReports& book = exit_reports();
    std::lock_guard<std::mutex> lock(book.mu);
    book.reports.push_back(report);
}

bool profile_sink_from_env(ProfileSink& sink, std::string& why) {
    const char* env = std::getenv("PLEXUS_CPU_PROFILE");
    sink.path = env ? env : "";
    if (sink.path.empty() || sink.path == "-") return true;
    // Start the file now: a path that cannot be written fails at start-up.
    std::FILE* f = std::fopen(sink.path.c_str(), "w");
    if (!f) {
        why = "PLEXUS_CPU_PROFILE='" + sink.path + "' cannot be written: " + std::strerror(errno);
        return false;
    }
    std::fclose(f);
    return true;
}

}  // namespace pxcpu
