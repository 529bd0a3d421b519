// Process groups through the C API, on one process: what the host checks
// before a plugin sees an id, a rank, a size, a time-out or a tensor, and
// what it passes on from the plugin. The test plugin (fault-group) joins
// groups of one process; tests/mpi runs the same slots across processes.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "plexus/plexus.h"
#include "plugin_runtime.hpp"

namespace {

using pxtest::cpu_plugin;
using pxtest::fault;
using pxtest::Runtime;

const px_device cpu0{PX_DEVICE_CPU, 0}, accel0{PX_DEVICE_ACCELERATOR, 0};

bool said(const std::string& needle) { return std::string(px_last_error()).find(needle) != std::string::npos; }

// A 1-D tensor of `values` in `dtype` on `d`, made from host bytes (the test
// plugin runs no casts).
px_tensor* tensor(px_runtime* rt, px_device d, px_dtype dtype, const std::vector<double>& values) {
    std::vector<unsigned char> bytes(values.size() * px_dtype_size(dtype));
    for (size_t i = 0; i < values.size(); ++i) {
        unsigned char* at = bytes.data() + i * px_dtype_size(dtype);
        if (dtype == PX_FLOAT32) {
            float f = float(values[i]);
            std::memcpy(at, &f, sizeof f);
        } else if (dtype == PX_FLOAT64) {
            std::memcpy(at, &values[i], sizeof(double));
        } else {
            *at = static_cast<unsigned char>(values[i]);  // uint8
        }
    }
    int64_t shape[1] = {int64_t(values.size())};
    px_tensor* made = nullptr;
    REQUIRE(px_tensor_from_host(rt, d, dtype, 1, shape, bytes.data(), bytes.size(), &made) == PX_OK);
    return made;
}

px_group_id make_id(px_runtime* rt) {
    px_group_id id{};
    id.struct_size = sizeof id;
    REQUIRE(px_group_make_id(rt, accel0, &id) == PX_OK);
    return id;
}

}  // namespace

TEST_CASE("a plugin without the group slots says so", "[host][group]") {
    Runtime r({cpu_plugin});
    int32_t yes = -1;
    REQUIRE(px_group_supported(r.rt, cpu0, &yes) == PX_OK);
    CHECK(yes == 0);
    px_group_id id{};
    id.struct_size = sizeof id;
    CHECK(px_group_make_id(r.rt, cpu0, &id) == PX_ERROR_UNSUPPORTED);
    CHECK(said("cpu(0)'s plugin (cpu) offers no process groups"));
    std::snprintf(id.plugin, sizeof id.plugin, "cpu");
    px_group* g = nullptr;
    CHECK(px_group_join(r.rt, cpu0, &id, 0, 1, 5, &g) == PX_ERROR_UNSUPPORTED);
    CHECK(g == nullptr);
    CHECK(px_group_supported(r.rt, px_device{PX_DEVICE_GPU, 7}, &yes) == PX_ERROR_NO_DEVICE);
}

TEST_CASE("group ids: made by the plugin, stamped with its name by the host", "[host][group]") {
    Runtime r({cpu_plugin, fault("group")});
    int32_t yes = 0;
    REQUIRE(px_group_supported(r.rt, accel0, &yes) == PX_OK);
    CHECK(yes == 1);
    px_group_id id = make_id(r.rt);
    CHECK(std::string(id.plugin) == "fault-group");
    CHECK(id.struct_size == sizeof id);
    CHECK(std::memcmp(id.bytes, "plexus test group", 17) == 0);
    px_group_id other = make_id(r.rt);
    CHECK(std::memcmp(id.bytes, other.bytes, sizeof id.bytes) != 0);  // a new group each time

    px_group_id small{};
    small.struct_size = sizeof small - 1;
    CHECK(px_group_make_id(r.rt, accel0, &small) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(said("smaller than px_group_id"));
    CHECK(px_group_make_id(r.rt, accel0, nullptr) == PX_ERROR_INVALID_ARGUMENT);
}

TEST_CASE("joining: the host refuses bad ranks, sizes, time-outs and ids before the plugin sees them", "[host][group]") {
    Runtime r({cpu_plugin, fault("group")});
    const px_group_id id = make_id(r.rt);
    px_group* g = nullptr;
    const double inf = std::numeric_limits<double>::infinity();
    struct Bad {
        int32_t rank, size;
        double timeout;
        const char* says;
    };
    for (const Bad& b : {Bad{0, 0, 5, "size is 0"}, Bad{-1, 2, 5, "rank -1 is outside 0..1"},
                         Bad{2, 2, 5, "rank 2 is outside 0..1"}, Bad{0, 1, 0, "timeout_seconds is 0"},
                         Bad{0, 1, -3, "timeout_seconds is -3"}, Bad{0, 1, std::nan(""), "give a finite number > 0"},
                         Bad{0, 1, inf, "give a finite number > 0"}}) {
        INFO(b.says);
        CHECK(px_group_join(r.rt, accel0, &id, b.rank, b.size, b.timeout, &g) == PX_ERROR_INVALID_ARGUMENT);
        CHECK(said(b.says));
    }
    CHECK(px_group_join(r.rt, accel0, nullptr, 0, 1, 5, &g) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(said("'id' is NULL"));
    CHECK(px_group_join(r.rt, accel0, &id, 0, 1, 5, nullptr) == PX_ERROR_INVALID_ARGUMENT);

    px_group_id changed = id;
    changed.struct_size = 8;
    CHECK(px_group_join(r.rt, accel0, &changed, 0, 1, 5, &g) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(said("id->struct_size 8"));
    changed = id;
    std::memset(changed.plugin, 'x', sizeof changed.plugin);  // no terminating NUL
    CHECK(px_group_join(r.rt, accel0, &changed, 0, 1, 5, &g) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(said("does not hold a plugin name"));
    changed = id;
    std::snprintf(changed.plugin, sizeof changed.plugin, "cuda");
    CHECK(px_group_join(r.rt, accel0, &changed, 0, 1, 5, &g) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(said("the id was made by plugin cuda, but fault-group(0) is from plugin fault-group"));
    // The bytes are the plugin's to check; its words come back.
    changed = id;
    std::memset(changed.bytes, 0, sizeof changed.bytes);
    CHECK(px_group_join(r.rt, accel0, &changed, 0, 1, 5, &g) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(said("not a group id of this plugin [plugin fault-group]"));
    // A plugin that says it joined but gives no group broke its contract.
    setenv("GROUP_TEST_NULL_GROUP", "1", 1);
    CHECK(px_group_join(r.rt, accel0, &id, 0, 1, 5, &g) == PX_ERROR_PLUGIN);
    CHECK(said("plugin fault-group joined a group but returned a NULL group"));
    unsetenv("GROUP_TEST_NULL_GROUP");
    // Several processes need MPI, which this test plugin was built without.
    CHECK(px_group_join(r.rt, accel0, &id, 0, 2, 5, &g) == PX_ERROR_UNSUPPORTED);
    CHECK(said("joining a group of 2 as rank 0 on fault-group(0)"));
    CHECK(g == nullptr);
}

TEST_CASE("a group's all-reduce: checked tensors, the plugin's result, and a released handle", "[host][group]") {
    Runtime r({cpu_plugin, fault("group")});
    const px_group_id id = make_id(r.rt);
    px_group* g = nullptr;
    REQUIRE(px_group_join(r.rt, accel0, &id, 0, 1, 5, &g) == PX_OK);

    // One process: the sum is the tensor itself, in every summed dtype.
    px_tensor* a = tensor(r.rt, accel0, PX_FLOAT32, {1, 2, 3, 4});
    px_tensor* b = tensor(r.rt, accel0, PX_FLOAT64, {0.5});
    px_tensor* both[2] = {a, b};
    REQUIRE(px_group_all_reduce_sum(g, both, 2) == PX_OK);
    float got[4];
    REQUIRE(px_tensor_to_host(a, got, sizeof got) == PX_OK);
    CHECK(got[3] == 4.0f);

    SECTION("arguments") {
        CHECK(px_group_all_reduce_sum(g, both, 0) == PX_ERROR_INVALID_ARGUMENT);
        CHECK(said("count is 0"));
        CHECK(px_group_all_reduce_sum(g, nullptr, 1) == PX_ERROR_INVALID_ARGUMENT);
        px_tensor* with_null[2] = {a, nullptr};
        CHECK(px_group_all_reduce_sum(g, with_null, 2) == PX_ERROR_INVALID_HANDLE);
        CHECK(said("'tensors[1]' is not a live tensor handle"));
    }
    SECTION("a tensor on another device, or of another runtime") {
        px_tensor* on_cpu = tensor(r.rt, cpu0, PX_FLOAT32, {1});
        px_tensor* mixed[2] = {a, on_cpu};
        CHECK(px_group_all_reduce_sum(g, mixed, 2) == PX_ERROR_DEVICE_MISMATCH);
        CHECK(said("tensors[1] is on cpu(0); this process's member of the group is fault-group(0)"));
        px_tensor_release(on_cpu);
        Runtime other({cpu_plugin, fault("group")});
        px_tensor* elsewhere = tensor(other.rt, accel0, PX_FLOAT32, {1});
        CHECK(px_group_all_reduce_sum(g, &elsewhere, 1) == PX_ERROR_DEVICE_MISMATCH);
        CHECK(said("is on fault-group(0) of another runtime"));
        px_tensor_release(elsewhere);
    }
    SECTION("a dtype that is not summed") {
        px_tensor* bytes = tensor(r.rt, accel0, PX_UINT8, {1, 0});
        CHECK(px_group_all_reduce_sum(g, &bytes, 1) == PX_ERROR_DTYPE);
        CHECK(said("tensors[0] is uint8, which is not summed"));
        px_tensor_release(bytes);
    }
    SECTION("tensors that share memory would be summed twice") {
        px_tensor* twice[2] = {a, a};
        CHECK(px_group_all_reduce_sum(g, twice, 2) == PX_ERROR_INVALID_ARGUMENT);
        CHECK(said("tensors[0] and tensors[1] share memory"));
        px_tensor *head = nullptr, *tail = nullptr, *middle = nullptr;
        REQUIRE(px_tensor_slice(a, 0, 2, &head) == PX_OK);
        REQUIRE(px_tensor_slice(a, 2, 4, &tail) == PX_OK);
        REQUIRE(px_tensor_slice(a, 1, 3, &middle) == PX_OK);
        px_tensor* apart[2] = {head, tail};
        CHECK(px_group_all_reduce_sum(g, apart, 2) == PX_OK);  // one buffer, no overlap
        px_tensor* overlapping[2] = {head, middle};
        CHECK(px_group_all_reduce_sum(g, overlapping, 2) == PX_ERROR_INVALID_ARGUMENT);
        for (px_tensor* t : {head, tail, middle}) px_tensor_release(t);
    }
    SECTION("empty tensors have nothing to sum") {
        px_tensor* empty = tensor(r.rt, accel0, PX_FLOAT32, {});
        CHECK(px_group_all_reduce_sum(g, &empty, 1) == PX_OK);
        px_tensor_release(empty);
    }
    px_tensor_release(a);
    px_tensor_release(b);
    REQUIRE(px_group_release(g) == PX_OK);
    CHECK(px_group_release(g) == PX_ERROR_INVALID_HANDLE);
    CHECK(said("'group' is not a live group handle (released or never issued)"));
    CHECK(px_group_all_reduce_sum(g, both, 1) == PX_ERROR_INVALID_HANDLE);
}
