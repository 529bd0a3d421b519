// Loading: broken plugins are skipped with the reason and never stop the
// others; a plugin of a newer minor loads; failures inside a plugin come back
// as errors naming op, device and plugin.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "plexus/plexus.h"
#include "plexus/plugin.h"

#include "plugin_runtime.hpp"

namespace {

using pxtest::Runtime;
using pxtest::fault;
using pxtest::cpu_plugin;

bool contains(const char* hay, const std::string& needle) { return std::string(hay).find(needle) != std::string::npos; }

}  // namespace

TEST_CASE("a plugin out of memory in device_count or device_info fails the runtime instead of being skipped",
          "[host][loader][oom]") {
    for (const char* variant : {"count-oom", "info-oom"}) {
        INFO(variant);
        const std::string file = fault(variant);
        const char* paths[] = {pxtest::cpu_plugin.c_str(), file.c_str()};
        px_runtime_options o{sizeof o, paths, 2, 1, 0};
        px_runtime* rt = nullptr;
        CHECK(px_runtime_create(&o, &rt) == PX_ERROR_OUT_OF_MEMORY);
        CHECK(rt == nullptr);
        CHECK(contains(px_last_error(), "px_runtime_create: the plugin " + file + " ran out of memory in"));
        CHECK(contains(px_last_error(), std::string(variant) == std::string("count-oom")
                                            ? "device_count(): simulated: out of host memory counting devices"
                                            : "device_info(): simulated: out of host memory describing a device"));
    }
}

TEST_CASE("a plugin is asked about no op newer than its ABI minor", "[host][loader]") {
    // It claims every (op, dtype): built for ABI 1.7, it cannot mean gelu (1.8) by op 28.
    Runtime r({fault("older-minor")});
    const px_device accel{PX_DEVICE_ACCELERATOR, 0};
    auto supports = [&](int32_t op, px_dtype dt) {
        int32_t yes = -1;
        REQUIRE(px_runtime_device_supports(r.rt, accel, op, dt, &yes) == PX_OK);
        return yes;
    };
    CHECK(supports(PX_OP_ADD, PX_FLOAT32) == 1);
    CHECK(supports(PX_OP_BATCH_NORM, PX_FLOAT16) == 1);  // ABI 1.7 and 1.6: known to it
    CHECK(supports(PX_OP_GELU, PX_FLOAT32) == 0);
    CHECK(supports(PX_OP_TAKE, PX_FLOAT32) == 0);
}

TEST_CASE("broken plugins are skipped with the reason and the others load", "[host][loader]") {
    Runtime r({fault("no-symbol"), fault("null-table"), fault("other-major"), fault("small-table"), fault("null-slot"),
               fault("create-fails"), fault("missing-dep"), PLEXUS_FAULT_PLUGIN_DIR "/not-there.so",
               PLEXUS_FAULT_PLUGIN_DIR "/libfault_dependency.so", cpu_plugin, fault("newer-minor"),
               fault("tiny-table"), fault("no-name"), fault("count-fails"), fault("bad-info"), fault("null-context"),
               fault("part-group"), fault("part-trace"), fault("info-fails")});
    auto p = r.by_file();
    auto skipped = [&](const std::string& file, const std::string& why) {
        INFO(file << ": " << p.at(file).message);
        CHECK(!p.at(file).loaded);
        CHECK(contains(p.at(file).message, why));
    };
    skipped("libfault-no-symbol.so", "does not export px_plugin_get_api");
    skipped("libfault-null-table.so", "px_plugin_get_api returned NULL");
    const std::string minor = std::to_string(PX_PLUGIN_ABI_MINOR);
    skipped("libfault-other-major.so", "plugin ABI 2." + minor + ", runtime ABI 1." + minor);
    skipped("libfault-small-table.so", "smaller than the");
    skipped("libfault-null-slot.so", "'copy_device' is NULL");
    skipped("libfault-create-fails.so", "simulated init failure");
    skipped("libfault-missing-dep.so", "libfault_dependency.so");  // the loader's own words name the library
    CHECK(!contains(p.at("libfault-missing-dep.so").message, "boost::"));  // (and Boost.DLL's stale errno text had followed)
    CHECK(!contains(p.at("libfault-missing-dep.so").message, "):"));
    skipped("not-there.so", "no such file");
    skipped("libfault_dependency.so", "not a Plexus plugin");
    skipped("libfault-tiny-table.so", "its function table is 4 bytes, too small to hold the ABI header");
    skipped("libfault-no-name.so", "no name or no version string");
    skipped("libfault-count-fails.so", "device_count failed: simulated: the driver does not answer");
    skipped("libfault-bad-info.so", "device 0 has no valid info: kind 99 is not a device kind");
    skipped("libfault-null-context.so", "its create() returned PX_OK without a context");  // had segfaulted
    skipped("libfault-part-group.so", "it sets 1 of the 4 group_* slots (ABI 1.3), which are all set or none");
    skipped("libfault-part-trace.so", "it sets 1 of the 3 trace slots");
    skipped("libfault-info-fails.so", "device 0 has no valid info: simulated: the device does not answer");
    CHECK(p.at("libfault-other-major.so").abi_major == 2);
    CHECK(p.at("libplexus-cpu.so").loaded);
    CHECK(p.at("libfault-newer-minor.so").loaded);
    CHECK(p.at("libfault-newer-minor.so").abi_minor == PX_PLUGIN_ABI_MINOR + 1);
    int32_t cpus = 0, accels = 0;
    REQUIRE(px_runtime_device_count(r.rt, PX_DEVICE_CPU, &cpus) == PX_OK);
    REQUIRE(px_runtime_device_count(r.rt, PX_DEVICE_ACCELERATOR, &accels) == PX_OK);
    CHECK(cpus >= 1);
    CHECK(accels == 1);
}

TEST_CASE("a plugin of a newer minor works through the 1.0 slots", "[host][loader]") {
    Runtime r({fault("newer-minor")});
    px_device acc{PX_DEVICE_ACCELERATOR, 0};
    int64_t shape[1] = {3};
    px_tensor *a = nullptr, *b = nullptr, *c = nullptr;
    REQUIRE(px_tensor_full(r.rt, acc, PX_FLOAT32, 1, shape, 2.0, &a) == PX_OK);
    REQUIRE(px_tensor_full(r.rt, acc, PX_FLOAT32, 1, shape, 3.0, &b) == PX_OK);
    REQUIRE(px_binary(PX_OP_ADD, a, b, &c) == PX_OK);
    float out[3];
    REQUIRE(px_tensor_to_host(c, out, sizeof out) == PX_OK);
    CHECK(out[0] == 5.0f);
    CHECK(out[2] == 5.0f);
    // What the plugin does not support is an error naming op, dtype, device and plugin.
    px_tensor* d = nullptr;
    CHECK(px_binary(PX_OP_MUL, a, b, &d) == PX_ERROR_UNSUPPORTED);
    CHECK(contains(px_last_error(), "mul on float32 is not supported on fault-newer-minor(0) by plugin 'fault-newer-minor'"));
    for (px_tensor* t : {a, b, c}) px_tensor_release(t);
}

TEST_CASE("a table's slots newer than its minor are not read however large its struct_size", "[host][loader]") {
    // Its bytes past the 1.0 slots would crash a call through them (the
    // trace had called one as trace_enable).
    Runtime r({fault("old-table-junk")});
    auto p = r.by_file();
    REQUIRE(p.at("libfault-old-table-junk.so").loaded);
    CHECK(p.at("libfault-old-table-junk.so").abi_minor == 0);
    const std::string path = (std::filesystem::temp_directory_path() / "plexus-old-table-junk.json").string();
    REQUIRE(px_trace_begin(r.rt, path.c_str()) == PX_OK);
    px_device acc{PX_DEVICE_ACCELERATOR, 0};
    int64_t shape[1] = {2};
    px_tensor *a = nullptr, *c = nullptr;
    REQUIRE(px_tensor_full(r.rt, acc, PX_FLOAT32, 1, shape, 2.0, &a) == PX_OK);
    REQUIRE(px_binary(PX_OP_ADD, a, a, &c) == PX_OK);
    float out[2];
    REQUIRE(px_tensor_to_host(c, out, sizeof out) == PX_OK);
    CHECK(out[1] == 4.0f);
    REQUIRE(px_trace_end(r.rt) == PX_OK);
    std::filesystem::remove(path);
    std::filesystem::remove(path.substr(0, path.size() - 5) + ".summary.txt");
    for (px_tensor* t : {a, c}) px_tensor_release(t);
}

TEST_CASE("an op that returns an error is reported with op, device and plugin", "[host][faults]") {
    Runtime r({fault("op-error"), cpu_plugin});
    px_device acc{PX_DEVICE_ACCELERATOR, 0};
    int64_t shape[1] = {2};
    px_tensor* a = nullptr;
    CHECK(px_tensor_full(r.rt, acc, PX_FLOAT32, 1, shape, 1.0, &a) == PX_ERROR_DEVICE);
    CHECK(contains(px_last_error(), "fill on fault-op-error(0): simulated op failure [plugin fault-op-error]"));
    float v[2] = {1, 2};
    REQUIRE(px_tensor_from_host(r.rt, acc, PX_FLOAT32, 1, shape, v, sizeof v, &a) == PX_OK);
    px_tensor* c = nullptr;
    CHECK(px_binary(PX_OP_ADD, a, a, &c) == PX_ERROR_DEVICE);
    CHECK(c == nullptr);
    px_tensor_release(a);
    // The CPU keeps working beside it.
    px_tensor* ok = nullptr;
    REQUIRE(px_tensor_full(r.rt, px_device{PX_DEVICE_CPU, 0}, PX_FLOAT32, 1, shape, 1.0, &ok) == PX_OK);
    px_tensor_release(ok);
}

TEST_CASE("a status outside the ABI from a plugin is reported as a plugin error with the number", "[host][faults]") {
    Runtime r({fault("odd-status")});
    int64_t shape[1] = {2};
    px_tensor* a = nullptr;
    CHECK(px_tensor_full(r.rt, px_device{PX_DEVICE_ACCELERATOR, 0}, PX_FLOAT32, 1, shape, 1.0, &a) == PX_ERROR_PLUGIN);
    CHECK(a == nullptr);
    CHECK(contains(px_last_error(), "returned the unknown status 77: simulated status outside the ABI [plugin fault-odd-status]"));
}

TEST_CASE("a C++ exception thrown out of a plugin's op is an error, and everything keeps serving", "[host][faults]") {
    Runtime r({fault("throws"), cpu_plugin});
    px_device acc{PX_DEVICE_ACCELERATOR, 0};
    int64_t shape[1] = {2};
    px_tensor* a = nullptr;
    CHECK(px_tensor_full(r.rt, acc, PX_FLOAT32, 1, shape, 1.0, &a) == PX_ERROR_PLUGIN);
    CHECK(contains(px_last_error(), "fill on fault-throws(0): the plugin let a C++ exception (simulated C++ exception in "
                                    "execute) escape through the C ABI, which forbids it [plugin fault-throws]"));
    CHECK(a == nullptr);
    // The device's other slots still work, and so does the CPU.
    float v[2] = {1, 2}, back[2] = {0, 0};
    REQUIRE(px_tensor_from_host(r.rt, acc, PX_FLOAT32, 1, shape, v, sizeof v, &a) == PX_OK);
    REQUIRE(px_tensor_to_host(a, back, sizeof back) == PX_OK);
    CHECK(back[1] == 2.0f);
    px_tensor_release(a);
    px_tensor* ok = nullptr;
    REQUIRE(px_tensor_full(r.rt, px_device{PX_DEVICE_CPU, 0}, PX_FLOAT32, 1, shape, 1.0, &ok) == PX_OK);
    px_tensor_release(ok);
}

TEST_CASE("a C++ exception from any other slot is caught: the plugin is skipped or the error reported", "[host][faults]") {
    const std::pair<const char*, const char*> cases[] = {
        {"entry", "px_plugin_get_api threw a C++ exception"},
        {"create", "its create() failed: a C++ exception escaped it"},
        {"device_count", "a C++ exception escaped device_count, device_info or supports"},
        {"supports", "a C++ exception escaped device_count, device_info or supports"},
    };
    for (auto [slot, why] : cases) {
        INFO(slot);
        setenv("FAULT_THROW_IN", slot, 1);
        Runtime r({fault("throws"), cpu_plugin});
        unsetenv("FAULT_THROW_IN");
        auto p = r.by_file();
        CHECK(!p.at("libfault-throws.so").loaded);
        CHECK(contains(p.at("libfault-throws.so").message, why));
        CHECK(p.at("libplexus-cpu.so").loaded);
    }
    // From buffer_free and destroy, which cannot fail: reported on stderr, and the process goes on.
    setenv("FAULT_THROW_IN", "buffer_free", 1);
    {
        Runtime r({fault("throws")});
        int64_t shape[1] = {2};
        float v[2] = {1, 2};
        px_tensor* a = nullptr;
        REQUIRE(px_tensor_from_host(r.rt, px_device{PX_DEVICE_ACCELERATOR, 0}, PX_FLOAT32, 1, shape, v, sizeof v, &a) ==
                PX_OK);
        CHECK(px_tensor_release(a) == PX_OK);
        setenv("FAULT_THROW_IN", "destroy", 1);
    }
    unsetenv("FAULT_THROW_IN");
}

TEST_CASE("tensors outlive the runtime that loaded their plugin, which stays loaded until the last one goes",
          "[host][faults]") {
    const std::string file = fault("newer-minor");
    const char* paths[] = {file.c_str()};
    px_runtime_options o{sizeof o, paths, 1, 1, 0};
    px_runtime* rt = nullptr;
    REQUIRE(px_runtime_create(&o, &rt) == PX_OK);
    int64_t shape[1] = {3};
    px_tensor *a = nullptr, *b = nullptr;
    REQUIRE(px_tensor_full(rt, px_device{PX_DEVICE_ACCELERATOR, 0}, PX_FLOAT32, 1, shape, 2.0, &a) == PX_OK);
    REQUIRE(px_runtime_destroy(rt) == PX_OK);
    // The plugin's code and buffers are still there: ops and reads work.
    REQUIRE(px_binary(PX_OP_ADD, a, a, &b) == PX_OK);
    float out[3];
    REQUIRE(px_tensor_to_host(b, out, sizeof out) == PX_OK);
    CHECK(out[2] == 4.0f);
    // Looking another device up needs the runtime: a clear error, not a crash.
    px_tensor* c = nullptr;
    CHECK(px_tensor_copy_to(a, px_device{PX_DEVICE_CPU, 0}, &c) == PX_ERROR_NO_DEVICE);
    CHECK(contains(px_last_error(), "was destroyed"));
    // Its own device, by accel(0) too, needs none: a copy.
    REQUIRE(px_tensor_copy_to(a, px_device{PX_DEVICE_ACCELERATOR, 0}, &c) == PX_OK);
    REQUIRE(px_tensor_to_host(c, out, sizeof out) == PX_OK);
    CHECK(out[0] == 2.0f);
    CHECK(px_tensor_release(c) == PX_OK);
    CHECK(px_tensor_release(a) == PX_OK);
    CHECK(px_tensor_release(b) == PX_OK);  // the last one: the plugin is destroyed and unloaded here
}

TEST_CASE("work that fails asynchronously is reported at the next wait", "[host][faults]") {
    Runtime r({fault("async")});
    px_device acc{PX_DEVICE_ACCELERATOR, 0};
    int64_t shape[1] = {2};
    px_tensor* a = nullptr;
    REQUIRE(px_tensor_full(r.rt, acc, PX_FLOAT32, 1, shape, 1.0, &a) == PX_OK);  // queued: no error yet
    float out[2];
    CHECK(px_tensor_to_host(a, out, sizeof out) == PX_ERROR_DEVICE);
    CHECK(contains(px_last_error(), "fill failed on the device: simulated asynchronous failure"));
    CHECK(contains(px_last_error(), "fault-async(0)"));
    CHECK(px_runtime_synchronize(r.rt, acc) == PX_OK);  // reported once
    px_tensor_release(a);
    // Every wait reports it: synchronizing all devices, and reading an empty
    // tensor (no bytes to copy, still a waiting point).
    int64_t none[1] = {0};
    px_tensor *b = nullptr, *empty = nullptr;
    REQUIRE(px_tensor_full(r.rt, acc, PX_FLOAT32, 1, shape, 1.0, &b) == PX_OK);
    CHECK(px_runtime_synchronize_all(r.rt) == PX_ERROR_DEVICE);
    CHECK(contains(px_last_error(), "simulated asynchronous failure"));
    CHECK(px_runtime_synchronize_all(r.rt) == PX_OK);
    REQUIRE(px_tensor_full(r.rt, acc, PX_FLOAT32, 1, none, 1.0, &empty) == PX_OK);  // nothing to run
    px_tensor_release(b);
    REQUIRE(px_tensor_full(r.rt, acc, PX_FLOAT32, 1, shape, 1.0, &b) == PX_OK);
    CHECK(px_tensor_to_host(empty, nullptr, 0) == PX_ERROR_DEVICE);
    CHECK(contains(px_last_error(), "fill failed on the device"));
    CHECK(px_tensor_to_host(empty, nullptr, 0) == PX_OK);
    px_tensor_release(b);
    px_tensor_release(empty);
}

TEST_CASE("PLEXUS_PLUGIN_PATH adds files and folders and the default folder is found without it", "[host][loader]") {
    {
        Runtime r({}, false);  // default search: the folder next to libplexus
        auto p = r.by_file();
        REQUIRE(p.count("libplexus-cpu.so"));
        CHECK(p.at("libplexus-cpu.so").loaded);
    }
    setenv("PLEXUS_PLUGIN_PATH", (fault("newer-minor") + ":" + PLEXUS_FAULT_PLUGIN_DIR "/nowhere").c_str(), 1);
    {
        Runtime r({}, false);
        auto p = r.by_file();
        CHECK(p.at("libfault-newer-minor.so").loaded);
        CHECK(contains(p.at("nowhere").message, "PLEXUS_PLUGIN_PATH"));
        CHECK(p.at("libplexus-cpu.so").loaded);
    }
    unsetenv("PLEXUS_PLUGIN_PATH");
}

TEST_CASE("the same plugin name twice loads once", "[host][loader]") {
    Runtime r({cpu_plugin, PLEXUS_FAULT_PLUGIN_DIR "/copy/libplexus-cpu.so"});
    int32_t n = 0, loaded = 0;
    REQUIRE(px_runtime_plugin_count(r.rt, &n) == PX_OK);
    REQUIRE(n == 2);
    px_plugin_info second{};
    for (int i = 0; i < n; ++i) {
        px_plugin_info info{};
        info.struct_size = sizeof info;
        REQUIRE(px_runtime_plugin_info(r.rt, i, &info) == PX_OK);
        loaded += info.loaded;
        if (i == 1) second = info;
    }
    CHECK(loaded == 1);
    CHECK(contains(second.message, "a plugin named 'cpu' is already loaded from"));
}

TEST_CASE("destroying a runtime whose queued work failed destroys it and says PX_OK, and a wait before it reports the failure",
          "[host][faults]") {
    std::string file = fault("async");
    const char* paths[] = {file.c_str()};
    px_runtime_options o{sizeof o, paths, 1, 1, 0};
    px_runtime* rt = nullptr;
    REQUIRE(px_runtime_create(&o, &rt) == PX_OK);
    int64_t shape[1] = {2};
    px_tensor* a = nullptr;
    REQUIRE(px_tensor_full(rt, px_device{PX_DEVICE_ACCELERATOR, 0}, PX_FLOAT32, 1, shape, 1.0, &a) == PX_OK);
    CHECK(px_runtime_synchronize_all(rt) == PX_ERROR_DEVICE);
    CHECK(contains(px_last_error(), "px_runtime_synchronize_all: work queued on fault-async(0) failed"));
    px_tensor* b = nullptr;
    REQUIRE(px_tensor_full(rt, px_device{PX_DEVICE_ACCELERATOR, 0}, PX_FLOAT32, 1, shape, 1.0, &b) == PX_OK);
    // The runtime goes whatever its last wait finds, and the status says so.
    CHECK(px_runtime_destroy(rt) == PX_OK);
    CHECK(px_last_status() == PX_OK);
    int32_t n = 0;
    CHECK(px_runtime_plugin_count(rt, &n) == PX_ERROR_INVALID_HANDLE);  // gone
    CHECK(px_runtime_destroy(rt) == PX_ERROR_INVALID_HANDLE);  // and a second destroy changes nothing
    CHECK(px_tensor_release(a) == PX_OK);
    CHECK(px_tensor_release(b) == PX_OK);
}

TEST_CASE("a plugin reporting an absurd or negative device count is skipped with the figure, and the others load",
          "[host][loader]") {
    Runtime r({fault("count-huge"), fault("count-negative"), cpu_plugin});
    auto p = r.by_file();
    CHECK(!p.at("libfault-count-huge.so").loaded);
    CHECK(std::string(p.at("libfault-count-huge.so").message) ==
          "device_count reported 2147483647 devices, outside 0..4096");
    CHECK(!p.at("libfault-count-negative.so").loaded);
    CHECK(std::string(p.at("libfault-count-negative.so").message) == "device_count reported -5 devices, outside 0..4096");
    CHECK(p.at("libplexus-cpu.so").loaded);
    int32_t accels = -1;
    REQUIRE(px_runtime_device_count(r.rt, PX_DEVICE_ACCELERATOR, &accels) == PX_OK);
    CHECK(accels == 0);
}
