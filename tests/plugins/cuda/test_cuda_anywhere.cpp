// The CUDA plugin on any machine: it loads, and either offers GPUs or says
// why it has none; gpu(0) then names that reason and try_gpu() falls back.
#include <catch2/catch.hpp>

#include <cstddef>
#include <string>

#include "plexus/plexus.hpp"
#include "plexus/plugin.h"
#include "../../loaded_plugin.hpp"
#include "probe.hpp"

using Catch::Matchers::Contains;
using namespace plexus;

TEST_CASE("the reason for zero devices names the cause and what to do", "[cuda]") {
    using pxcuda::no_device_reason;
    CHECK(no_device_reason(35, 0, 13000, "x") ==
          "no CUDA driver: libcuda.so.1 is not installed or could not be loaded (this plugin uses the CUDA 13.0 runtime)");
    CHECK(no_device_reason(35, 12040, 13000, "x") ==
          "the CUDA driver is older than the runtime: the driver supports CUDA 12.4, this plugin uses the CUDA 13.0 "
          "runtime; update the NVIDIA driver");
    CHECK(no_device_reason(100, 13000, 13000, "x") ==
          "no CUDA device (driver for CUDA 13.0; check CUDA_VISIBLE_DEVICES and nvidia-smi)");
    CHECK(no_device_reason(0, 13020, 13000, "x") ==
          "no CUDA device (driver for CUDA 13.2; check CUDA_VISIBLE_DEVICES and nvidia-smi)");
    CHECK(no_device_reason(3, 13000, 13000, "initialization error") ==
          "CUDA could not start: initialization error (driver for CUDA 13.0)");
}

namespace {
struct Loaded : pxtest::LoadedPlugin {
    explicit Loaded(const char* file = PLEXUS_CUDA_PLUGIN_FILE) : LoadedPlugin(file) {}
};
}  // namespace

TEST_CASE("the plugin loads, and a device it lacks is refused at every entry point", "[cuda]") {
    Loaded p;
    CHECK(std::string(p.api->name) == "cuda");
    CHECK(p.api->abi_major == PX_PLUGIN_ABI_MAJOR);
    int32_t count = -1;
    REQUIRE(p.api->device_count(p.ctx, &count, &p.err) == PX_OK);
    REQUIRE(count >= 0);
    if (count == 0) CHECK_THAT(std::string(p.err.message), Contains("CUDA"));  // the reason
    const int32_t absent = count;  // the first index past the last device
    px_device_info info{};
    info.struct_size = sizeof info;
    CHECK(p.api->device_info(p.ctx, absent, &info, &p.err) == PX_ERROR_NO_DEVICE);
    CHECK_THAT(std::string(p.err.message), Contains("no device " + std::to_string(absent)));
    px_plugin_buffer* buf = nullptr;
    CHECK(p.api->buffer_alloc(p.ctx, absent, 16, &buf, &p.err) == PX_ERROR_NO_DEVICE);
    CHECK(buf == nullptr);
    CHECK(p.api->synchronize(p.ctx, absent, &p.err) == PX_ERROR_NO_DEVICE);
    CHECK(p.api->supports(p.ctx, absent, PX_OP_ADD, PX_FLOAT32) == 0);
    px_op_call call{sizeof(px_op_call), PX_OP_FILL, absent, 0, nullptr, 0, nullptr, nullptr};
    CHECK(p.api->execute(p.ctx, &call, &p.err) == PX_ERROR_NO_DEVICE);
    CHECK(p.api->execute(p.ctx, nullptr, &p.err) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(p.api->buffer_free(p.ctx, nullptr, &p.err) == PX_ERROR_INVALID_ARGUMENT);
    float v[2];
    CHECK(p.api->copy_to_host(p.ctx, nullptr, 0, v, sizeof v, &p.err) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(p.api->copy_from_host(p.ctx, nullptr, 0, v, sizeof v, &p.err) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(p.api->copy_device(p.ctx, nullptr, 0, nullptr, 0, 4, &p.err) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(p.api->device_count(p.ctx, nullptr, &p.err) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(p.api->create(nullptr, &p.err) == PX_ERROR_INVALID_ARGUMENT);
    // The process-group slots (ABI 1.3) are offered, and refuse the same way.
    REQUIRE(p.api->struct_size >= offsetof(px_plugin_api, group_leave) + sizeof(void*));
    REQUIRE((p.api->group_make_id && p.api->group_join && p.api->group_all_reduce && p.api->group_leave));
    px_group_id id{};
    id.struct_size = sizeof id;
    CHECK(p.api->group_make_id(p.ctx, absent, &id, &p.err) == PX_ERROR_NO_DEVICE);
    CHECK(p.api->group_make_id(p.ctx, 0, nullptr, &p.err) == PX_ERROR_INVALID_ARGUMENT);
    px_plugin_group* group = nullptr;
    CHECK(p.api->group_join(p.ctx, absent, &id, 0, 1, 5, &group, &p.err) == PX_ERROR_NO_DEVICE);
    CHECK(p.api->group_join(p.ctx, 0, &id, 1, 1, 5, &group, &p.err) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(p.api->group_join(p.ctx, 0, &id, 0, 1, 0, &group, &p.err) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(group == nullptr);
    CHECK(p.api->group_all_reduce(p.ctx, nullptr, nullptr, &p.err) == PX_ERROR_INVALID_ARGUMENT);
    p.api->group_leave(p.ctx, nullptr);  // nothing to leave: no crash
    for (int32_t i = 0; i < count; ++i) {
        REQUIRE(p.api->device_info(p.ctx, i, &info, &p.err) == PX_OK);
        CHECK(info.kind == PX_DEVICE_GPU);
        CHECK(info.memory_total > 0);
    }
}

TEST_CASE("without a GPU, gpu(0) names the reason and try_gpu() falls back to cpu()", "[cuda]") {
    bool listed = false;
    for (const auto& info : plugins()) {
        if (std::string(info.name) != "cuda") continue;
        listed = true;
        CHECK(info.loaded);
        CHECK(info.num_devices == num_gpus());
        if (info.num_devices == 0) CHECK_THAT(std::string(info.message), Contains("CUDA"));
    }
    REQUIRE(listed);
    if (num_gpus() > 0) {
        CHECK(try_gpu() == gpu(0));
        CHECK(plugin_of(gpu(0)) == "cuda");
        return;
    }
    CHECK_THROWS_WITH(device_info(gpu(0)), Contains("gpu(0) does not exist") && Contains("cuda (loaded, 0 devices: "));
    CHECK(try_gpu() == cpu());
    CHECK(try_all_gpus() == std::vector<Device>{cpu()});
    // The CPU keeps working beside the device-less plugin.
    CHECK((array({1, 2}) + 1).to_vector<float>() == std::vector<float>{2, 3});
}

TEST_CASE("the release plugin has no fault hook, and the test build's is inert unless PLEXUS_CUDA_TEST_HOOKS=1 "
          "made the context", "[cuda]") {
    {
        Loaded release;
        CHECK(dlsym(release.lib, "px_cuda_test_fault") == nullptr);
    }
    auto hook = [](Loaded& p) {
        auto f = reinterpret_cast<int (*)(int32_t, int32_t)>(dlsym(p.lib, "px_cuda_test_fault"));
        REQUIRE(f != nullptr);
        return f;
    };
    {
        Loaded p(PLEXUS_CUDA_TEST_PLUGIN_FILE);  // made without the variable: no context is hooked
        CHECK(hook(p)(0, PX_OP_ADD) == -1);
    }
    setenv("PLEXUS_CUDA_TEST_HOOKS", "1", 1);
    Loaded hooked(PLEXUS_CUDA_TEST_PLUGIN_FILE);
    unsetenv("PLEXUS_CUDA_TEST_HOOKS");
    int32_t count = 0;
    REQUIRE(hooked.api->device_count(hooked.ctx, &count, &hooked.err) == PX_OK);
    CHECK(hook(hooked)(count, PX_OP_ADD) == -1);  // past the last device
    CHECK(hook(hooked)(-1, PX_OP_ADD) == -1);
}
