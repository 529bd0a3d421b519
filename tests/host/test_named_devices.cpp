// Devices a plugin names (issue 41): an accelerator plugin called
// "fault-collective" gives fault-collective(0) and (1), which answer to
// accel(i) as well; tensors and messages use the plugin's name; device
// strings parse both ways; a name that cannot name devices leaves them
// accel(i), saying why.
#include <catch2/catch.hpp>

#include <string>

#include "plexus/plexus.h"
#include "plugin_runtime.hpp"

namespace {

using pxtest::cpu_plugin;
using pxtest::fault;
using pxtest::Runtime;

bool said(const std::string& needle) { return std::string(px_last_error()).find(needle) != std::string::npos; }

px_device parsed(px_runtime* rt, const char* text) {
    px_device d{-1, -1};
    REQUIRE(px_runtime_parse_device(rt, text, &d) == PX_OK);
    return d;
}

std::string label(px_device d) { return std::string(px_device_kind_label(d.kind)) + "(" + std::to_string(d.index) + ")"; }

}  // namespace

TEST_CASE("an accelerator plugin names its devices, and accel(i) names them too", "[host][names]") {
    Runtime r({cpu_plugin, fault("op-error"), fault("collective")});
    const px_device named0 = parsed(r.rt, "fault-collective:0");
    CHECK(named0.kind >= PX_DEVICE_KIND_NAMED_FIRST);
    CHECK(named0.index == 0);
    CHECK(std::string(px_device_kind_label(named0.kind)) == "fault-collective");
    const px_device named1 = parsed(r.rt, "fault-collective(1)");
    CHECK((named1.kind == named0.kind && named1.index == 1));
    const px_device bare = parsed(r.rt, "fault-collective");
    CHECK((bare.kind == named0.kind && bare.index == 0));
    int32_t n = 0;
    REQUIRE(px_runtime_device_count(r.rt, named0.kind, &n) == PX_OK);
    CHECK(n == 2);
    // In load order, accel(0) is fault-op-error's, accel(1) and accel(2) fault-collective's.
    REQUIRE(px_runtime_device_count(r.rt, PX_DEVICE_ACCELERATOR, &n) == PX_OK);
    CHECK(n == 3);
    px_device own{};
    REQUIRE(px_runtime_resolve_device(r.rt, px_device{PX_DEVICE_ACCELERATOR, 2}, &own) == PX_OK);
    CHECK(label(own) == "fault-collective(1)");
    REQUIRE(px_runtime_resolve_device(r.rt, px_device{PX_DEVICE_ACCELERATOR, 0}, &own) == PX_OK);
    CHECK(label(own) == "fault-op-error(0)");
    REQUIRE(px_runtime_resolve_device(r.rt, px_device{PX_DEVICE_CPU, 0}, &own) == PX_OK);
    CHECK((own.kind == PX_DEVICE_CPU && own.index == 0));
    CHECK(px_runtime_resolve_device(r.rt, px_device{named0.kind, 2}, &own) == PX_ERROR_NO_DEVICE);
    CHECK(said("fault-collective(2) does not exist: there are 2 fault-collective devices"));

    // A tensor made on accel(1) is on fault-collective(0), and says so.
    const int64_t shape[] = {2};
    px_tensor* t = nullptr;
    REQUIRE(px_tensor_full(r.rt, px_device{PX_DEVICE_ACCELERATOR, 1}, PX_FLOAT32, 1, shape, 1.0, &t) == PX_OK);
    px_device on{};
    REQUIRE(px_tensor_device(t, &on) == PX_OK);
    CHECK((on.kind == named0.kind && on.index == 0));
    px_tensor_release(t);
    // Work that fails there is reported under the plugin's name.
    REQUIRE(px_tensor_full(r.rt, parsed(r.rt, "fault-op-error:0"), PX_FLOAT32, 1, shape, 1.0, &t) != PX_OK);
    CHECK(said("fill on fault-op-error(0): simulated op failure"));
}

TEST_CASE("a kind's number is the process's: the same in another runtime", "[host][names]") {
    Runtime first({fault("collective")});
    // Another named plugin loads first here: a number per runtime would differ.
    Runtime second({cpu_plugin, fault("op-error"), fault("collective")});
    CHECK(parsed(second.rt, "fault-op-error").kind != parsed(second.rt, "fault-collective").kind);
    CHECK(parsed(first.rt, "fault-collective:1").kind == parsed(second.rt, "fault-collective:1").kind);
    // A runtime without that plugin knows the kind and has none of it.
    Runtime third({cpu_plugin});
    const px_device elsewhere = parsed(first.rt, "fault-collective");
    int32_t n = -1;
    REQUIRE(px_runtime_device_count(third.rt, elsewhere.kind, &n) == PX_OK);
    CHECK(n == 0);
    px_device d{};
    CHECK(px_runtime_parse_device(third.rt, "fault-collective:0", &d) == PX_ERROR_NO_DEVICE);
    CHECK(said("'fault-collective:0': no plugin of this runtime gives 'fault-collective' devices (it has cpu;"));
}

TEST_CASE("device strings are checked in full, and a bad one says what is wrong", "[host][names][errors]") {
    Runtime r({cpu_plugin, fault("collective")});
    const px_device cpu1 = parsed(r.rt, "cpu:1");
    CHECK((cpu1.kind == PX_DEVICE_CPU && cpu1.index == 1));
    CHECK(parsed(r.rt, "gpu(3)").kind == PX_DEVICE_GPU);  // whether gpu(3) exists is for its use to say
    CHECK(parsed(r.rt, "accel:1").kind == PX_DEVICE_ACCELERATOR);
    CHECK(parsed(r.rt, "cpu:0000000000001").index == 1);  // leading zeros are no overflow
    px_device d{};
    const struct {
        const char* text;
        px_status status;
        const char* why;
    } bad[] = {
        {"tpu:0", PX_ERROR_NO_DEVICE, "'tpu:0': no plugin of this runtime gives 'tpu' devices (it has cpu, accel, fault-collective;"},
        {"cpu:x", PX_ERROR_INVALID_ARGUMENT, "'cpu:x' does not name a device: the index 'x' is not a whole number of 0 or more"},
        {"cpu:-1", PX_ERROR_INVALID_ARGUMENT, "the index '-1' is not a whole number of 0 or more"},
        {"cpu: 1", PX_ERROR_INVALID_ARGUMENT, "the index ' 1' is not a whole number"},
        {"cpu:", PX_ERROR_INVALID_ARGUMENT, "the index '' is not a whole number"},
        {"cpu(1", PX_ERROR_INVALID_ARGUMENT, "'(' without a closing ')' at the end"},
        {"cpu:1)", PX_ERROR_INVALID_ARGUMENT, "the index '1)' is not a whole number"},
        {"cpu:99999999999", PX_ERROR_INVALID_ARGUMENT, "the index 99999999999 is above 2147483647"},
        {"cpu:2147483648", PX_ERROR_INVALID_ARGUMENT, "the index 2147483648 is above 2147483647"},
        {"cpu:000000000002147483648", PX_ERROR_INVALID_ARGUMENT, "the index 000000000002147483648 is above 2147483647"},
        {"cpu()", PX_ERROR_INVALID_ARGUMENT, "the index '' is not a whole number"},
        {"cpu(1)x", PX_ERROR_INVALID_ARGUMENT, "'(' without a closing ')' at the end"},
        {"cpu::1", PX_ERROR_INVALID_ARGUMENT, "the index ':1' is not a whole number"},
        {"CPU:0", PX_ERROR_INVALID_ARGUMENT, "the kind 'CPU' is not a device kind's name (a lower-case letter, then up to 30"},
        {"1x:0", PX_ERROR_INVALID_ARGUMENT, "the kind '1x' is not a device kind's name"},
        {"abcdefghijklmnopqrstuvwxyz012345:0", PX_ERROR_INVALID_ARGUMENT,
         "the kind 'abcdefghijklmnopqrstuvwxyz012345' is not a device kind's name"},  // 32 characters
        {"", PX_ERROR_INVALID_ARGUMENT, "the kind '' is not a device kind's name"},
        {":0", PX_ERROR_INVALID_ARGUMENT, "the kind '' is not a device kind's name"},
    };
    for (const auto& b : bad) {
        INFO(b.text);
        CHECK(px_runtime_parse_device(r.rt, b.text, &d) == b.status);
        CHECK(said(b.why));
    }
    CHECK(px_runtime_parse_device(r.rt, nullptr, &d) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(said("text is NULL"));
    // Kind numbers no kind has.
    int32_t n = 0;
    for (int32_t k : {0, 4, 63, PX_DEVICE_KIND_NAMED_FIRST + 100000, -1}) {
        INFO(k);
        CHECK(px_device_kind_label(k) == nullptr);
        CHECK(px_runtime_device_count(r.rt, k, &n) == PX_ERROR_INVALID_ARGUMENT);
        CHECK(said("is not a px_device_kind, nor one a plugin named"));
    }
}

TEST_CASE("a plugin whose name cannot name devices keeps them accel(i), and says why", "[host][names]") {
    Runtime r({cpu_plugin, fault("reserved-name"), fault("odd-name")});
    auto p = r.by_file();
    CHECK(p.at("libfault-reserved-name.so").loaded);
    CHECK(std::string(p.at("libfault-reserved-name.so").message) ==
          "its devices are accel(i) only: 'gpu' is a built-in device kind");
    CHECK(p.at("libfault-odd-name.so").loaded);
    CHECK(std::string(p.at("libfault-odd-name.so").message) ==
          "its devices are accel(i) only: 'Odd Name 1.0' is not a device name (a lower-case letter, then up to 30 of "
          "a-z, 0-9, '_' and '-')");
    for (int i = 0; i < 2; ++i) {
        px_device own{};
        REQUIRE(px_runtime_resolve_device(r.rt, px_device{PX_DEVICE_ACCELERATOR, i}, &own) == PX_OK);
        CHECK((own.kind == PX_DEVICE_ACCELERATOR && own.index == i));
    }
    int32_t gpus = -1;
    REQUIRE(px_runtime_device_count(r.rt, PX_DEVICE_GPU, &gpus) == PX_OK);
    CHECK(gpus == 0);  // not gpu(0)
}

TEST_CASE("a plugin without accelerators names no kind", "[host][names]") {
    // The default search: the CPU plugin, and the CUDA plugin where it was built (no GPU here, or gpu(i)).
    px_runtime* rt = nullptr;
    REQUIRE(px_runtime_create(nullptr, &rt) == PX_OK);
    for (int32_t k = PX_DEVICE_KIND_NAMED_FIRST; px_device_kind_label(k); ++k) {
        INFO(px_device_kind_label(k));
        CHECK(std::string(px_device_kind_label(k)) != "cuda");
    }
    px_device d{};
    CHECK(px_runtime_parse_device(rt, "cuda:0", &d) == PX_ERROR_NO_DEVICE);
    CHECK(px_runtime_destroy(rt) == PX_OK);
}
