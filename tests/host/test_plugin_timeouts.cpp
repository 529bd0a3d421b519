// A plugin that never returns (issue 41, item 4): loading bounds how long a
// plugin's entry point, create, device_count, device_info and supports may
// take, and px_runtime_synchronize_timeout bounds a wait. Shown on the
// misbehave plugin (tests/plugins/misbehave), whose MISBEHAVE=hang_create,
// hang_info and slow_sync do just that; a hung call's thread is left to it.
#include <catch2/catch.hpp>

#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <string>

#include "plexus/plexus.h"
#include "plugin_runtime.hpp"

namespace {

struct Env {
    Env(const char* name, const char* value) : name_(name) { ::setenv(name, value, 1); }
    ~Env() { ::unsetenv(name_); }
    const char* name_;
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

px_runtime* misbehave_runtime(double timeout_s) {
    const char* paths[] = {PLEXUS_MISBEHAVE_PLUGIN_FILE};
    const px_runtime_options o = pxtest::only_these(paths, 1, timeout_s);
    px_runtime* rt = nullptr;
    REQUIRE(px_runtime_create(&o, &rt) == PX_OK);
    return rt;
}

std::string record_of_first_plugin(px_runtime* rt) {
    px_plugin_info info{};
    info.struct_size = sizeof info;
    REQUIRE(px_runtime_plugin_info(rt, 0, &info) == PX_OK);
    CHECK(info.loaded == 0);
    return info.message;
}

bool says(const std::string& needle) { return std::string(px_last_error()).find(needle) != std::string::npos; }

}  // namespace

TEST_CASE("a plugin whose create or device_info never returns is skipped after the time-out, naming the call",
          "[plugins][timeout]") {
    const char* way = GENERATE("hang_create", "hang_info");
    Env misbehave("MISBEHAVE", way);
    const auto t0 = std::chrono::steady_clock::now();
    px_runtime* rt = misbehave_runtime(0.5);
    CHECK(seconds_since(t0) < 5);
    CHECK(record_of_first_plugin(rt) ==
          std::string("did not finish loading within 0.5 s: its ") +
              (std::string(way) == "hang_create" ? "create()" : "device_info()") +
              " has not returned (options->plugin_timeout_s)");
    int32_t n = -1;
    REQUIRE(px_runtime_device_count(rt, PX_DEVICE_ACCELERATOR, &n) == PX_OK);
    CHECK(n == 0);
    REQUIRE(px_runtime_destroy(rt) == PX_OK);
}

TEST_CASE("PLEXUS_PLUGIN_TIMEOUT sets the time-out, and a bad one is refused with the reason", "[plugins][timeout]") {
    Env misbehave("MISBEHAVE", "hang_create");
    {
        Env timeout("PLEXUS_PLUGIN_TIMEOUT", "0.25");
        px_runtime* rt = misbehave_runtime(0);  // 0: the environment's
        CHECK(record_of_first_plugin(rt) ==
              "did not finish loading within 0.25 s: its create() has not returned (PLEXUS_PLUGIN_TIMEOUT)");
        REQUIRE(px_runtime_destroy(rt) == PX_OK);
    }
    for (const char* bad : {"soon", "0", "-1", "1e10", "2s"}) {
        Env timeout("PLEXUS_PLUGIN_TIMEOUT", bad);
        px_runtime* rt = nullptr;
        CHECK(px_runtime_create(nullptr, &rt) == PX_ERROR_INVALID_ARGUMENT);
        CHECK(says(std::string("PLEXUS_PLUGIN_TIMEOUT='") + bad +
                   "' is not a number of seconds above 0 (up to 1e9) or none"));
        CHECK(rt == nullptr);
    }
    px_runtime_options o{};
    o.struct_size = sizeof o;
    o.plugin_timeout_s = 2e9;
    px_runtime* rt = nullptr;
    CHECK(px_runtime_create(&o, &rt) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(says("options->plugin_timeout_s 2e+09 is not a number of seconds up to 1e9 (0: the default; below 0: none)"));
    // A caller built before the field: its struct_size stops short, so the field is not read.
    o.struct_size = offsetof(px_runtime_options, plugin_timeout_s);
    REQUIRE(px_runtime_create(&o, &rt) == PX_OK);
    REQUIRE(px_runtime_destroy(rt) == PX_OK);
}

TEST_CASE("without a time-out (none) a plugin loads on the calling thread", "[plugins][timeout]") {
    // The misbehave plugin's create() refuses any thread but the main one.
    Env misbehave("MISBEHAVE", "main_thread");
    px_runtime* rt = misbehave_runtime(0);  // a thread of the loader's own
    CHECK(record_of_first_plugin(rt) ==
          "its create() failed: create() called off the main thread (MISBEHAVE=main_thread)");
    REQUIRE(px_runtime_destroy(rt) == PX_OK);
    rt = misbehave_runtime(-1);  // none: this thread
    int32_t n = 0;
    REQUIRE(px_runtime_device_count(rt, PX_DEVICE_ACCELERATOR, &n) == PX_OK);
    CHECK(n == 1);
    REQUIRE(px_runtime_destroy(rt) == PX_OK);
    Env none("PLEXUS_PLUGIN_TIMEOUT", "none");
    rt = misbehave_runtime(0);
    REQUIRE(px_runtime_device_count(rt, PX_DEVICE_ACCELERATOR, &n) == PX_OK);
    CHECK(n == 1);
    REQUIRE(px_runtime_destroy(rt) == PX_OK);
}

TEST_CASE("a synchronize that outlasts its time-out says so, and a later wait reports how it ended",
          "[plugins][timeout]") {
    Env misbehave("MISBEHAVE", "slow_sync");
    Env sleep_for("MISBEHAVE_SECONDS", "1.5");
    px_runtime* rt = misbehave_runtime(0);
    const px_device accel0{PX_DEVICE_ACCELERATOR, 0};
    px_tensor* queued = nullptr;  // work to wait for (a device with none queued is idle: no wait)
    const int64_t n = 4;
    REQUIRE(px_tensor_full(rt, accel0, PX_FLOAT32, 1, &n, 1.0, &queued) == PX_OK);
    auto t0 = std::chrono::steady_clock::now();
    CHECK(px_runtime_synchronize_timeout(rt, accel0, 0.2) == PX_ERROR_DEVICE);
    CHECK(seconds_since(t0) < 1.0);
    CHECK(std::string(px_last_error()) ==
          "px_runtime_synchronize_timeout: misbehave(0): its queued work did not finish within 0.2 s; the wait goes on, "
          "and a later wait of misbehave(0) reports how it ended");
    // A second timed call is served by the same background thread: it waits
    // again once its first wait ends (work may have been queued since).
    CHECK(px_runtime_synchronize_timeout(rt, accel0, 0.2) == PX_ERROR_DEVICE);
    // The untimed one waits beside it and for it, and reports the failure
    // the background wait took first (every wait of this plugin sleeps 1.5 s
    // and fails: the background's two waits end 3 s after the first call).
    t0 = std::chrono::steady_clock::now();
    CHECK(px_runtime_synchronize(rt, accel0) == PX_ERROR_DEVICE);
    CHECK(seconds_since(t0) < 3.5);
    CHECK(says("work queued on misbehave(0) failed: slow_sync: failed after its sleep (MISBEHAVE=slow_sync)"));
    // A wait within its time-out reports the plugin's answer itself.
    CHECK(px_runtime_synchronize_timeout(rt, accel0, 10) == PX_ERROR_DEVICE);
    CHECK(says("slow_sync: failed after its sleep"));
    for (double bad : {0.0, -1.0, 1e10}) {
        CHECK(px_runtime_synchronize_timeout(rt, accel0, bad) == PX_ERROR_INVALID_ARGUMENT);
        CHECK(says("is not above 0 (and at most 1e9)"));
    }
    ::unsetenv("MISBEHAVE");  // destroy's own wait
    px_tensor_release(queued);
    REQUIRE(px_runtime_destroy(rt) == PX_OK);
}

TEST_CASE("a dropout or random tensor the device lacks is refused before the random stream moves",
          "[plugins][errors]") {
    Env lacks("MISBEHAVE_UNSUPPORTED", "dropout,random_uniform");
    px_runtime* rt = misbehave_runtime(0);
    const px_device accel0{PX_DEVICE_ACCELERATOR, 0};
    const int64_t n = 100;
    px_tensor *x = nullptr, *out = nullptr;
    REQUIRE(px_tensor_full(rt, accel0, PX_FLOAT32, 1, &n, 1.0, &x) == PX_OK);
    uint64_t seed = 0, offset = 0, before = 0, after = 0;
    REQUIRE(px_runtime_random_state(rt, &seed, &before) == PX_OK);
    CHECK(px_dropout(x, 0.5, &seed, &offset, &out) == PX_ERROR_UNSUPPORTED);
    CHECK(says("dropout on float32 is not supported"));
    CHECK(px_tensor_random_uniform(rt, accel0, PX_FLOAT32, 1, &n, 0, 1, &out) == PX_ERROR_UNSUPPORTED);
    REQUIRE(px_runtime_random_state(rt, &seed, &after) == PX_OK);
    CHECK(after == before);  // each had taken 100 draws before the device refused
    CHECK(out == nullptr);
    px_tensor_release(x);
    REQUIRE(px_runtime_destroy(rt) == PX_OK);
}
