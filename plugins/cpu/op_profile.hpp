// PLEXUS_CPU_PROFILE=<file> ('-' for stderr): every CPU device times each op
// and transfer its queue runs, grouped by op, dtype and shapes, and one table per
// device is written when the plugin context is destroyed or, if it never is,
// at exit (the C++ frontend's default runtime lives until then). It answers
// "where does my training step go?" with the time each kernel really ran,
// which a timer in the caller cannot see because ops return before they run.
// Unset, it costs one pointer test per task.
#pragma once

#include <atomic>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "task.hpp"

namespace pxcpu {

class OpProfile {
public:
    // Adds one run of `t` that took `seconds`.
    void add(const Task& t, double seconds);
    // Rows sorted by total time, longest first; an empty string when nothing ran.
    std::string table(int device) const;

private:
    struct Row {
        long long calls = 0;
        double seconds = 0;
    };
    mutable std::mutex mu_;  // ops run on the worker and, when small, on the caller
    std::map<std::string, Row> rows_;
};

// The destination PLEXUS_CPU_PROFILE names, checked when the plugin is created
// so a bad path is an error then rather than a lost profile at exit.
struct ProfileSink {
    std::string path;  // "" when profiling is off; "-" for stderr
    // Writes `text` to the sink; false (with errno set) when it could not.
    bool write(const std::string& text) const;
};

// Reads PLEXUS_CPU_PROFILE; false with `why` set when the file cannot be opened.
bool profile_sink_from_env(ProfileSink& sink, std::string& why);

// One plugin context's profiles, written once: by destroy(), or at exit for
// a context that is never destroyed.
class ProfileReport {
public:
    ProfileReport(ProfileSink sink, size_t devices);
    OpProfile* device(size_t i) { return profiles_[i].get(); }
    void write_once();

private:
    ProfileSink sink_;
    std::vector<std::unique_ptr<OpProfile>> profiles_;
    std::atomic<bool> written_{false};
};

// Registers `report` to be written at exit if it is still alive then.
void write_at_exit(const std::shared_ptr<ProfileReport>& report);

}  // namespace pxcpu
