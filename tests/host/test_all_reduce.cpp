// px_all_reduce_sum through the C API: the CPU plugin's own collective, the
// host's fallback (across two plugins, and within a plugin whose collective
// says it cannot run), a plugin's failure passed on, and the checks made
// before anything runs.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>
#include <vector>

#include "plexus/plexus.h"
#include "plugin_runtime.hpp"

namespace {

using pxtest::cpu_plugin;
using pxtest::fault;
using pxtest::Runtime;

bool contains(const char* hay, const std::string& needle) { return std::string(hay).find(needle) != std::string::npos; }

// A float32 tensor of `values` on `d`.
px_tensor* tensor(px_runtime* rt, px_device d, const std::vector<float>& values) {
    int64_t shape[1] = {int64_t(values.size())};
    px_tensor* t = nullptr;
    REQUIRE(px_tensor_from_host(rt, d, PX_FLOAT32, 1, shape, values.data(), values.size() * sizeof(float), &t) ==
            PX_OK);
    return t;
}

std::vector<float> values(px_tensor* t, size_t n) {
    std::vector<float> v(n);
    REQUIRE(px_tensor_to_host(t, v.data(), n * sizeof(float)) == PX_OK);
    return v;
}

struct CpuDevices {
    CpuDevices() { setenv("PLEXUS_CPU_DEVICES", "3", 1); }
    ~CpuDevices() { unsetenv("PLEXUS_CPU_DEVICES"); }
};

}  // namespace

TEST_CASE("all_reduce_sum on CPU devices: every tensor ends with the sum, of every dtype", "[host][collective]") {
    CpuDevices three;
    Runtime r({cpu_plugin});
    const px_device d0{PX_DEVICE_CPU, 0}, d1{PX_DEVICE_CPU, 1}, d2{PX_DEVICE_CPU, 2};
    // 0.1 + 0.2 + 0.3 in float32, summed in the order given: the same bits everywhere.
    px_tensor* ts[3] = {tensor(r.rt, d0, {1, 0.1f, -4}), tensor(r.rt, d1, {2, 0.2f, 4}), tensor(r.rt, d2, {3, 0.3f, 0.5f})};
    REQUIRE(px_all_reduce_sum(ts, 3) == PX_OK);
    const float expected = (0.1f + 0.2f) + 0.3f;
    for (px_tensor* t : ts) {
        auto v = values(t, 3);
        CHECK(v[0] == 6.0f);
        CHECK(v[1] == expected);
        CHECK(v[2] == 0.5f);
        px_device where{};
        REQUIRE(px_tensor_device(t, &where) == PX_OK);  // each stays on its device
    }
    // int64 beyond 2^53 stays exact.
    int64_t shape[1] = {2};
    int64_t a[2] = {(int64_t(1) << 60) + 1, -5}, b[2] = {1, 7};
    px_tensor *x = nullptr, *y = nullptr;
    REQUIRE(px_tensor_from_host(r.rt, d0, PX_INT64, 1, shape, a, sizeof a, &x) == PX_OK);
    REQUIRE(px_tensor_from_host(r.rt, d2, PX_INT64, 1, shape, b, sizeof b, &y) == PX_OK);
    px_tensor* pair[2] = {x, y};
    REQUIRE(px_all_reduce_sum(pair, 2) == PX_OK);
    int64_t got[2];
    REQUIRE(px_tensor_to_host(y, got, sizeof got) == PX_OK);
    CHECK(got[0] == (int64_t(1) << 60) + 2);
    CHECK(got[1] == 2);
    // One tensor is its own sum; an empty one has nothing to sum.
    REQUIRE(px_all_reduce_sum(ts, 1) == PX_OK);
    CHECK(values(ts[0], 3)[0] == 6.0f);
    for (px_tensor* t : {ts[0], ts[1], ts[2], x, y}) px_tensor_release(t);
}

TEST_CASE("all_reduce_sum waits for the work queued on each device", "[host][collective]") {
    CpuDevices three;
    Runtime r({cpu_plugin});
    const px_device d0{PX_DEVICE_CPU, 0}, d1{PX_DEVICE_CPU, 1};
    int64_t shape[1] = {1 << 20};
    px_tensor *a = nullptr, *b = nullptr, *a2 = nullptr, *b2 = nullptr;
    REQUIRE(px_tensor_full(r.rt, d0, PX_FLOAT32, 1, shape, 1.5, &a) == PX_OK);
    REQUIRE(px_tensor_full(r.rt, d1, PX_FLOAT32, 1, shape, 2.0, &b) == PX_OK);
    // Queued products of the fills: the all-reduce must see their results.
    REQUIRE(px_binary(PX_OP_ADD, a, a, &a2) == PX_OK);  // 3
    REQUIRE(px_binary(PX_OP_MUL, b, b, &b2) == PX_OK);  // 4
    px_tensor* ts[2] = {a2, b2};
    REQUIRE(px_all_reduce_sum(ts, 2) == PX_OK);
    std::vector<float> v(size_t(1) << 20);
    REQUIRE(px_tensor_to_host(b2, v.data(), v.size() * 4) == PX_OK);
    CHECK(v.front() == 7.0f);
    CHECK(v.back() == 7.0f);
    for (px_tensor* t : {a, b, a2, b2}) px_tensor_release(t);
}

TEST_CASE("all_reduce_sum checks its arguments before anything runs", "[host][collective][errors]") {
    CpuDevices three;
    Runtime r({cpu_plugin});
    const px_device d0{PX_DEVICE_CPU, 0}, d1{PX_DEVICE_CPU, 1};
    px_tensor* a = tensor(r.rt, d0, {1, 2});
    px_tensor* b = tensor(r.rt, d1, {3, 4});
    px_tensor* same = tensor(r.rt, d0, {5, 6});
    px_tensor* longer = tensor(r.rt, d1, {1, 2, 3});
    int64_t shape[1] = {2};
    px_tensor *f64 = nullptr, *u8 = nullptr, *u8b = nullptr;
    REQUIRE(px_tensor_full(r.rt, d1, PX_FLOAT64, 1, shape, 1, &f64) == PX_OK);
    REQUIRE(px_tensor_full(r.rt, d0, PX_UINT8, 1, shape, 1, &u8) == PX_OK);
    REQUIRE(px_tensor_full(r.rt, d1, PX_UINT8, 1, shape, 1, &u8b) == PX_OK);

    CHECK(px_all_reduce_sum(nullptr, 2) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(contains(px_last_error(), "'tensors' is NULL"));
    px_tensor* none[1] = {a};
    CHECK(px_all_reduce_sum(none, 0) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(contains(px_last_error(), "at least one tensor"));
    px_tensor* twice[2] = {a, same};
    CHECK(px_all_reduce_sum(twice, 2) == PX_ERROR_DEVICE_MISMATCH);
    CHECK(contains(px_last_error(), "tensors[0] and tensors[1] are both on cpu(0)"));
    px_tensor* shapes[2] = {a, longer};
    CHECK(px_all_reduce_sum(shapes, 2) == PX_ERROR_SHAPE);
    CHECK(contains(px_last_error(), "tensors[1] has shape"));
    px_tensor* dtypes[2] = {a, f64};
    CHECK(px_all_reduce_sum(dtypes, 2) == PX_ERROR_DTYPE);
    CHECK(contains(px_last_error(), "tensors[1] is float64"));
    px_tensor* bytes[2] = {u8, u8b};
    CHECK(px_all_reduce_sum(bytes, 2) == PX_ERROR_DTYPE);
    CHECK(contains(px_last_error(), "tensors[0] is uint8, which is not summed"));
    // Nothing was written by the refused calls.
    CHECK(values(a, 2) == std::vector<float>{1, 2});
    CHECK(values(b, 2) == std::vector<float>{3, 4});

    // Tensors of two runtimes never mix.
    Runtime other({cpu_plugin});
    px_tensor* foreign = tensor(other.rt, d1, {0, 0});
    px_tensor* mixed[2] = {a, foreign};
    CHECK(px_all_reduce_sum(mixed, 2) == PX_ERROR_DEVICE_MISMATCH);
    CHECK(contains(px_last_error(), "another runtime"));
    for (px_tensor* t : {a, b, same, longer, f64, u8, u8b, foreign}) px_tensor_release(t);
}

TEST_CASE("all_reduce_sum across two plugins falls back to copies and adds", "[host][collective]") {
    // The fault plugin's accelerator has no all_reduce slot and is another plugin.
    Runtime r({cpu_plugin, fault("newer-minor")});
    const px_device cpu0{PX_DEVICE_CPU, 0}, acc{PX_DEVICE_ACCELERATOR, 0};
    px_tensor* ts[2] = {tensor(r.rt, acc, {1, 2, 3}), tensor(r.rt, cpu0, {10, 20, 30})};
    REQUIRE(px_all_reduce_sum(ts, 2) == PX_OK);
    CHECK(values(ts[0], 3) == std::vector<float>{11, 22, 33});
    CHECK(values(ts[1], 3) == std::vector<float>{11, 22, 33});
    for (px_tensor* t : ts) px_tensor_release(t);
}

TEST_CASE("a plugin's collective that cannot run falls back, one that fails is reported", "[host][collective][faults]") {
    Runtime r({fault("collective")});
    const px_device a0{PX_DEVICE_ACCELERATOR, 0}, a1{PX_DEVICE_ACCELERATOR, 1};
    px_tensor* ts[2] = {tensor(r.rt, a0, {1, 2}), tensor(r.rt, a1, {0.5f, 0.25f})};
    REQUIRE(px_all_reduce_sum(ts, 2) == PX_OK);  // PX_ERROR_UNSUPPORTED from the plugin: copies between its devices
    CHECK(values(ts[0], 2) == std::vector<float>{1.5f, 2.25f});
    CHECK(values(ts[1], 2) == std::vector<float>{1.5f, 2.25f});
    px_tensor* three[2] = {tensor(r.rt, a0, {1, 1, 1}), tensor(r.rt, a1, {2, 2, 2})};
    CHECK(px_all_reduce_sum(three, 2) == PX_ERROR_DEVICE);
    CHECK(contains(px_last_error(), "all_reduce over 2 devices of plugin fault-collective"));
    CHECK(contains(px_last_error(), "simulated collective failure"));
    for (px_tensor* t : {ts[0], ts[1], three[0], three[1]}) px_tensor_release(t);
}

namespace {
// An integer division by zero queued on `d`: it fails when it runs.
void failing_div(px_runtime* rt, px_device d) {
    const int64_t n = 2;
    px_tensor *x = nullptr, *zero = nullptr, *q = nullptr;
    REQUIRE(px_tensor_full(rt, d, PX_INT32, 1, &n, 7, &x) == PX_OK);
    REQUIRE(px_tensor_full(rt, d, PX_INT32, 1, &n, 0, &zero) == PX_OK);
    REQUIRE(px_binary(PX_OP_DIV, x, zero, &q) == PX_OK);
    for (px_tensor* t : {x, zero, q}) px_tensor_release(t);
}
uint64_t version(px_tensor* t) {
    uint64_t v = 0;
    REQUIRE(px_tensor_version(t, &v) == PX_OK);
    return v;
}
// A sum of {1, 2} and {10, 20} after failing_div on one of their devices:
// refused naming the division and `said`, nothing written or counted as a
// write; then, the failure reported once, a sum that runs.
void refused_then_summed(px_tensor* (&ts)[2], const std::string& said) {
    CHECK(px_all_reduce_sum(ts, 2) == PX_ERROR_DEVICE);
    CHECK(contains(px_last_error(), "div"));
    CHECK(contains(px_last_error(), said));
    CHECK(values(ts[0], 2) == std::vector<float>{1, 2});
    CHECK(values(ts[1], 2) == std::vector<float>{10, 20});
    CHECK(version(ts[0]) == 0);
    CHECK(version(ts[1]) == 0);
    REQUIRE(px_all_reduce_sum(ts, 2) == PX_OK);
    CHECK(values(ts[0], 2) == std::vector<float>{11, 22});
    CHECK(values(ts[1], 2) == std::vector<float>{11, 22});
    CHECK(version(ts[0]) == 1);
}
}  // namespace

TEST_CASE("all_reduce_sum on the CPU plugin reports an earlier failure of a device and sums nothing",
          "[host][collective][errors]") {
    CpuDevices three;
    Runtime r({cpu_plugin});
    const px_device d0{PX_DEVICE_CPU, 0}, d1{PX_DEVICE_CPU, 1};
    for (const px_device failed : {d0, d1}) {
        px_tensor* ts[2] = {tensor(r.rt, d0, {1, 2}), tensor(r.rt, d1, {10, 20})};
        failing_div(r.rt, failed);
        // Every tensor is a source: a value the failure spoiled would reach every device.
        refused_then_summed(ts, "the sum was not made");
        for (px_tensor* t : ts) px_tensor_release(t);
    }
}

TEST_CASE("all_reduce_sum across two plugins after a failure is refused whole, no tensor written",
          "[host][collective][errors]") {
    Runtime r({cpu_plugin, fault("newer-minor")});
    const px_device cpu0{PX_DEVICE_CPU, 0}, acc{PX_DEVICE_ACCELERATOR, 0};
    px_tensor* ts[2] = {tensor(r.rt, cpu0, {1, 2}), tensor(r.rt, acc, {10, 20})};
    failing_div(r.rt, cpu0);
    // Its copies through the host are waiting points: the first had summed into
    // tensors[0] and the second then failed, leaving the two apart.
    refused_then_summed(ts, "the sum was not made (no tensor was written)");
    for (px_tensor* t : ts) px_tensor_release(t);
}
