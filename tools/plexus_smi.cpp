// plexus-smi: the plugins found (loaded or skipped, and why) and the devices
// with their memory, as a table or as JSON (--json).
#include <dlfcn.h>
#include <execinfo.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "plexus/plexus.h"
#include "json_writer.hpp"

namespace {

// ---- a teardown that does not return ----
// px_runtime_destroy calls each plugin's destroy(), which has no time-out
// (R3: it must return). One that never does would keep plexus-smi from
// exiting, its report unseen when piped (stdout is flushed at exit). So the
// report is flushed first, and a watchdog gives the teardown kTeardownSeconds:
// past them it names the plugin whose destroy() is still running, found in
// the stack of the thread tearing down, and ends the process with the status
// plexus-smi would have had.
constexpr int kTeardownSeconds = 5;

constexpr int kMostFrames = 128;
void* g_frames[kMostFrames];
std::atomic<int> g_frame_count{-1};  // -1 until the stuck thread has written its stack

// Runs on the thread stuck in the teardown (pthread_kill): its stack, for
// the watchdog to read. backtrace() was called once before, so that it has
// nothing left to load here.
void record_stack(int) {
    g_frame_count.store(backtrace(g_frames, kMostFrames));  // NOLINT(bugprone-signal-handler): warmed up first, see above
}

// The real path of a file, or the path itself.
std::string real_path(const char* path) {
    char* real = realpath(path, nullptr);
    std::string out = real ? real : path;
    std::free(real);
    return out;
}

// The loaded plugins as (name, real path of the file).
std::vector<std::pair<std::string, std::string>> loaded_plugins(px_runtime* rt) {
    std::vector<std::pair<std::string, std::string>> out;
    int32_t n = 0;
    if (px_runtime_plugin_count(rt, &n) != PX_OK) return out;
    for (int32_t i = 0; i < n; ++i) {
        px_plugin_info p{};
        p.struct_size = sizeof p;
        if (px_runtime_plugin_info(rt, i, &p) == PX_OK && p.loaded) out.emplace_back(p.name, real_path(p.file));
    }
    return out;
}

// Which of `plugins` the stuck thread is in: the innermost frame that lies
// in one of their files; empty when none does (then every plugin is named).
std::string stuck_in(pthread_t stuck, const std::vector<std::pair<std::string, std::string>>& plugins) {
    struct sigaction action {};
    action.sa_handler = record_stack;
    sigemptyset(&action.sa_mask);
    if (sigaction(SIGUSR2, &action, nullptr) != 0 || pthread_kill(stuck, SIGUSR2) != 0) return {};
    for (int i = 0; i < 100 && g_frame_count.load() < 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    for (int f = 0; f < g_frame_count.load(); ++f) {
        Dl_info where{};
        if (!dladdr(g_frames[f], &where) || !where.dli_fname) continue;
        const std::string file = real_path(where.dli_fname);
        for (const auto& [name, path] : plugins)
            if (file == path) return "the plugin " + name + " (" + path + ")";
    }
    return {};
}

// Destroys the runtime, or, past kTeardownSeconds, says which destroy() has
// not returned and _exits with `status`.
void destroy_within_limit(px_runtime* rt, int status) {
    std::fflush(stdout);  // the report is out, whatever the teardown does
    const auto plugins = loaded_plugins(rt);
    void* warm[1];
    backtrace(warm, 1);  // loads what backtrace needs now, not in record_stack
    std::mutex lock;
    std::condition_variable changed;
    bool done = false;
    const pthread_t tearing_down = pthread_self();
    std::thread watchdog([&] {
        std::unique_lock<std::mutex> hold(lock);
        if (changed.wait_for(hold, std::chrono::seconds(kTeardownSeconds), [&] { return done; })) return;
        std::string who = stuck_in(tearing_down, plugins);
        if (who.empty()) {
            who = "one of the plugins";
            for (const auto& [name, path] : plugins) who += " " + name;
        }
        std::fprintf(stderr, "plexus-smi: %s: its destroy() has not returned after %d s; exiting without waiting for it\n",
                     who.c_str(), kTeardownSeconds);
        std::fflush(stderr);
        _exit(status);
    });
    px_runtime_destroy(rt);
    {
        const std::lock_guard<std::mutex> hold(lock);
        done = true;
    }
    changed.notify_one();
    watchdog.join();
}

int fail(const char* what) {
    std::fprintf(stderr, "plexus-smi: %s: %s\n", what, px_last_error());
    return 1;
}

std::string mib(uint64_t bytes) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f MiB", double(bytes) / (1 << 20));
    return buf;
}

}  // namespace

int main(int argc, char** argv) {
    bool json = false;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--json")) json = true;
        else if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
            std::printf("usage: plexus-smi [--json]\n"
                        "Lists the Plexus plugins found (loaded or skipped, and why) and the devices with their memory.\n"
                        "Plugins are searched in PLEXUS_PLUGIN_PATH (files or folders, ':'-separated), then in the\n"
                        "folder plexus/plugins next to libplexus.\n");
            return 0;
        } else {
            std::fprintf(stderr, "plexus-smi: unknown argument '%s' (try --help)\n", argv[i]);
            return 2;
        }
    }
    px_runtime* rt = nullptr;
    if (px_runtime_create(nullptr, &rt) != PX_OK) return fail("creating the runtime");
    int32_t nplugins = 0;
    if (px_runtime_plugin_count(rt, &nplugins) != PX_OK) return fail("listing plugins");

    pxtools::Json out;
    out.begin_object();
    out.key("plugins").begin_array();
    if (!json) std::printf("Plugins\n  %-8s %-8s %-5s %-8s %s\n", "NAME", "VERSION", "ABI", "STATE", "FILE / MESSAGE");
    for (int i = 0; i < nplugins; ++i) {
        px_plugin_info p{};
        p.struct_size = sizeof p;
        if (px_runtime_plugin_info(rt, i, &p) != PX_OK) return fail("reading plugin info");
        std::string abi = p.abi_major ? std::to_string(p.abi_major) + "." + std::to_string(p.abi_minor) : "-";
        if (json) {
            out.begin_object().field("file", p.file).field("name", p.name).field("version", p.version);
            out.field("abi", abi).field("loaded", bool(p.loaded)).field("devices", p.num_devices);
            out.field("message", p.message).end_object();
        } else {
            std::printf("  %-8s %-8s %-5s %-8s %s\n", p.name[0] ? p.name : "-", p.version[0] ? p.version : "-",
                        abi.c_str(), p.loaded ? "loaded" : "skipped", p.file);
            if (p.message[0]) std::printf("  %35s %s\n", p.loaded ? "note:" : "why:", p.message);
        }
    }
    out.end_array();
    out.key("devices").begin_array();
    if (!json)
        std::printf("\nDevices\n  %-16s %-10s %-12s %-12s %-12s %-12s %s\n", "ID", "PLUGIN", "TOTAL", "IN USE", "PEAK",
                    "FREE", "NAME");
    int shown = 0;
    // Each device once, by its own name (an accelerator's plugin may name it: naive(0)).
    std::vector<int32_t> kinds = {PX_DEVICE_CPU, PX_DEVICE_GPU, PX_DEVICE_ACCELERATOR};
    for (int32_t k = PX_DEVICE_KIND_NAMED_FIRST; px_device_kind_label(k); ++k)
        kinds.push_back(k);
    for (int32_t kind : kinds) {
        int32_t n = 0;
        if (px_runtime_device_count(rt, kind, &n) != PX_OK) return fail("counting devices");
        for (int i = 0; i < n; ++i) {
            px_device d{kind, i}, own{};
            if (px_runtime_resolve_device(rt, d, &own) != PX_OK) return fail("naming a device");
            if (own.kind != kind) continue;  // listed under its own name
            px_device_info info{};
            info.struct_size = sizeof info;
            const char* plugin = "";
            if (px_runtime_device_info(rt, d, &info) != PX_OK || px_runtime_device_plugin(rt, d, &plugin) != PX_OK)
                return fail("reading device info");
            std::string id = std::string(px_device_kind_label(kind)) + "(" + std::to_string(i) + ")";
            if (json) {
                out.begin_object().field("id", id).field("plugin", plugin).field("name", info.name);
                out.field("memory_total", info.memory_total).field("memory_in_use", info.memory_in_use);
                out.field("memory_reserved", info.memory_reserved).field("memory_peak", info.memory_peak);
                out.field("memory_free", info.memory_free).end_object();
            } else {
                std::printf("  %-16s %-10s %-12s %-12s %-12s %-12s %s\n", id.c_str(), plugin, mib(info.memory_total).c_str(),
                            mib(info.memory_in_use).c_str(), mib(info.memory_peak).c_str(),
                            mib(info.memory_free).c_str(), info.name);
            }
            ++shown;
        }
    }
    out.end_array().end_object();
    if (json) std::printf("%s\n", out.str().c_str());
    else if (!shown) std::printf("  (no devices: see the plugins above)\n");
    destroy_within_limit(rt, 0);
    return 0;
}
