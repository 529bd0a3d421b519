// Every function of the C API, found by reading api/plexus/plexus.h itself
// (so a new function cannot be forgotten), called with hostile arguments:
// NULL, released, wrong-kind and made-up handles in each handle position,
// and NULL out-pointers. Each must return an error status, the right one,
// with a message naming the function; none may crash.
#include <catch2/catch.hpp>

#include <cstdint>
#include <fstream>
#include <functional>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "plexus/dlpack.h"
#include "plexus/plexus.h"

namespace {

// The handles a call is made with: one runtime, up to five tensors, a
// group, and whether the out-pointer is NULL.
struct Args {
    px_runtime* rt = nullptr;
    px_tensor* t[5] = {};
    px_group* g = nullptr;
    bool null_out = false;
};

// Takes::group: the group is handle position 0, then `handles` tensors.
enum class Takes { nothing, runtime, tensors, group };

struct Entry {
    Takes takes = Takes::nothing;
    int handles = 0;          // tensors taken (Takes::tensors, Takes::group)
    bool out = true;          // has an out-pointer that may not be NULL
    int nullable = 0;         // bit k: tensor k may be NULL (an optional input)
    std::function<px_status(const Args&)> call;
};

std::set<std::string> declared_functions() {
    std::ifstream f(PLEXUS_C_API_HEADER);
    REQUIRE(f);
    std::stringstream text;
    text << f.rdbuf();
    std::set<std::string> names;
    const std::string s = text.str();
    std::regex decl(R"(PX_API\s+[^;(#]*?\b(px_\w+)\s*\()");
    for (auto it = std::sregex_iterator(s.begin(), s.end(), decl); it != std::sregex_iterator(); ++it)
        names.insert((*it)[1]);
    return names;
}

px_tensor* out_t;  // where calls write their result (released after each)
px_tensor** out(const Args& a) { return a.null_out ? nullptr : &out_t; }
px_tensor* out_t2;  // the second result of a call that makes two
px_tensor** out2(const Args& a) { return a.null_out ? nullptr : &out_t2; }
px_tensor* out_t3;  // the third result of a call that makes three
px_tensor** out3(const Args& a) { return a.null_out ? nullptr : &out_t3; }

std::map<std::string, Entry> entries() {
    const px_device cpu0{PX_DEVICE_CPU, 0};
    static int64_t shape2[2] = {2, 2};
    static float host[4];
    static int32_t i32;
    static int64_t i64[8];
    static uint64_t u64a, u64b;
    static const char* str;
    static px_device dev;
    static px_dtype dt;
    std::map<std::string, Entry> m;
    auto rt = [&](std::function<px_status(const Args&)> f, bool has_out = true) {
        return Entry{Takes::runtime, 0, has_out, 0, std::move(f)};
    };
    auto ts = [&](int n, std::function<px_status(const Args&)> f, bool has_out = true, int nullable = 0) {
        return Entry{Takes::tensors, n, has_out, nullable, std::move(f)};
    };
    m["px_last_error"] = Entry{Takes::nothing, 0, false, 0, nullptr};
    m["px_last_status"] = Entry{Takes::nothing, 0, false, 0, nullptr};
    m["px_status_name"] = Entry{Takes::nothing, 0, false, 0, nullptr};
    m["px_fork_generation"] = Entry{Takes::nothing, 0, false, 0, nullptr};
    m["px_version"] = Entry{Takes::nothing, 0, false, 0, nullptr};  // tests/host/test_capi_ffi.cpp
    // DLPack (tests/host/test_dlpack.cpp has the rest of their refusals).
    m["px_tensor_dlpack_device"] = ts(1, [](const Args& a) {
        static int32_t type, id;
        return px_tensor_dlpack_device(a.t[0], a.null_out ? nullptr : &type, &id);
    });
    m["px_tensor_to_dlpack"] = ts(1, [](const Args& a) {
        static DLManagedTensorVersioned* m;
        return px_tensor_to_dlpack(a.t[0], PX_DLPACK_COPY_IF_NEEDED, a.null_out ? nullptr : &m);
    });
    m["px_tensor_to_dlpack_unversioned"] = ts(1, [](const Args& a) {
        static DLManagedTensor* m;
        return px_tensor_to_dlpack_unversioned(a.t[0], PX_DLPACK_COPY_IF_NEEDED, a.null_out ? nullptr : &m);
    });
    m["px_tensor_from_dlpack"] = rt([cpu0](const Args& a) {
        return px_tensor_from_dlpack(a.rt, cpu0, nullptr, PX_DLPACK_COPY_IF_NEEDED, out(a));
    });
    m["px_tensor_from_dlpack_unversioned"] = rt([cpu0](const Args& a) {
        return px_tensor_from_dlpack_unversioned(a.rt, cpu0, nullptr, PX_DLPACK_COPY_IF_NEEDED, out(a));
    });
    m["px_runtime_create"] = Entry{Takes::nothing, 0, false, 0, nullptr};  // its own case below
    m["px_runtime_destroy"] = rt([](const Args& a) { return px_runtime_destroy(a.rt); }, false);
    m["px_runtime_plugin_count"] = rt([](const Args& a) { return px_runtime_plugin_count(a.rt, a.null_out ? nullptr : &i32); });
    m["px_runtime_plugin_info"] = rt([](const Args& a) {
        static px_plugin_info info{sizeof(px_plugin_info), 0, 0, 0, 0, 0, 0, 0, 0};
        return px_runtime_plugin_info(a.rt, 0, a.null_out ? nullptr : &info);
    });
    m["px_device_kind_label"] = Entry{Takes::nothing, 0, false, 0, nullptr};  // tests/host/test_named_devices.cpp
    m["px_runtime_parse_device"] = rt([](const Args& a) {
        static px_device d;
        return px_runtime_parse_device(a.rt, "cpu:0", a.null_out ? nullptr : &d);
    });
    m["px_runtime_resolve_device"] = rt([cpu0](const Args& a) {
        static px_device d;
        return px_runtime_resolve_device(a.rt, cpu0, a.null_out ? nullptr : &d);
    });
    m["px_runtime_device_count"] = rt([](const Args& a) { return px_runtime_device_count(a.rt, PX_DEVICE_CPU, a.null_out ? nullptr : &i32); });
    m["px_runtime_device_info"] = rt([cpu0](const Args& a) {
        static px_device_info info{};
        info.struct_size = sizeof info;
        return px_runtime_device_info(a.rt, cpu0, a.null_out ? nullptr : &info);
    });
    m["px_runtime_device_plugin"] = rt([cpu0](const Args& a) { return px_runtime_device_plugin(a.rt, cpu0, a.null_out ? nullptr : &str); });
    m["px_runtime_device_supports"] = rt([cpu0](const Args& a) {
        return px_runtime_device_supports(a.rt, cpu0, PX_OP_ADD, PX_FLOAT32, a.null_out ? nullptr : &i32);
    });
    m["px_runtime_synchronize"] = rt([cpu0](const Args& a) { return px_runtime_synchronize(a.rt, cpu0); }, false);
    m["px_runtime_synchronize_all"] = rt([](const Args& a) { return px_runtime_synchronize_all(a.rt); }, false);
    m["px_runtime_poll"] = rt([cpu0](const Args& a) { return px_runtime_poll(a.rt, cpu0, 0.0, a.null_out ? nullptr : &i32); });
    m["px_runtime_synchronize_timeout"] = rt([cpu0](const Args& a) { return px_runtime_synchronize_timeout(a.rt, cpu0, 5.0); },
                                             false);  // tests/host/test_plugin_timeouts.cpp has the rest
    m["px_runtime_seed"] = rt([](const Args& a) { return px_runtime_seed(a.rt, 1); }, false);
    m["px_runtime_random_state"] = rt([](const Args& a) {
        return px_runtime_random_state(a.rt, a.null_out ? nullptr : &u64a, a.null_out ? nullptr : &u64b);
    });
    m["px_runtime_set_random_state"] = rt([](const Args& a) { return px_runtime_set_random_state(a.rt, 1, 2); }, false);
    m["px_nag_update"] = ts(3, [](const Args& a) { return px_nag_update(a.t[0], a.t[1], a.t[2], 0.1, 0.9, 0, 1); }, false);
    m["px_adam_update"] = ts(3, [](const Args& a) {
        return px_adam_update(a.t[0], a.t[1], a.t[2], 0.1, 0.9, 0.999, 1e-8, 0, 1, 1, 0);
    }, false);
    m["px_runtime_allow_tf32"] = rt([](const Args& a) { return px_runtime_allow_tf32(a.rt, 0); }, false);
    // The trace (tests/host/test_trace.cpp has the rest).
    m["px_trace_begin"] = rt([](const Args& a) { return px_trace_begin(a.rt, "/nonexistent-folder/t.json"); }, false);
    m["px_trace_end"] = rt([](const Args& a) { return px_trace_end(a.rt); }, false);
    m["px_trace_region_begin"] = rt([](const Args& a) { return px_trace_region_begin(a.rt, "step"); }, false);
    m["px_trace_region_end"] = rt([](const Args& a) { return px_trace_region_end(a.rt); }, false);
    m["px_tensor_empty"] = rt([cpu0](const Args& a) { return px_tensor_empty(a.rt, cpu0, PX_FLOAT32, 2, shape2, out(a)); });
    m["px_tensor_from_host"] = rt([cpu0](const Args& a) {
        return px_tensor_from_host(a.rt, cpu0, PX_FLOAT32, 2, shape2, host, sizeof host, out(a));
    });
    m["px_tensor_full"] = rt([cpu0](const Args& a) { return px_tensor_full(a.rt, cpu0, PX_FLOAT32, 2, shape2, 1, out(a)); });
    m["px_tensor_arange"] = rt([cpu0](const Args& a) { return px_tensor_arange(a.rt, cpu0, PX_FLOAT32, 0, 4, 1, out(a)); });
    m["px_tensor_random_uniform"] = rt([cpu0](const Args& a) {
        return px_tensor_random_uniform(a.rt, cpu0, PX_FLOAT32, 2, shape2, 0, 1, out(a));
    });
    m["px_tensor_random_normal"] = rt([cpu0](const Args& a) {
        return px_tensor_random_normal(a.rt, cpu0, PX_FLOAT32, 2, shape2, 0, 1, out(a));
    });
    m["px_tensor_retain"] = ts(1, [](const Args& a) { return px_tensor_retain(a.t[0]); }, false);
    m["px_tensor_release"] = ts(1, [](const Args& a) { return px_tensor_release(a.t[0]); }, false);
    m["px_tensor_device"] = ts(1, [](const Args& a) { return px_tensor_device(a.t[0], a.null_out ? nullptr : &dev); });
    m["px_tensor_dtype"] = ts(1, [](const Args& a) { return px_tensor_dtype(a.t[0], a.null_out ? nullptr : &dt); });
    m["px_tensor_ndim"] = ts(1, [](const Args& a) { return px_tensor_ndim(a.t[0], a.null_out ? nullptr : &i32); });
    m["px_tensor_shape"] = ts(1, [](const Args& a) { return px_tensor_shape(a.t[0], a.null_out ? nullptr : i64, 8); });
    m["px_tensor_numel"] = ts(1, [](const Args& a) { return px_tensor_numel(a.t[0], a.null_out ? nullptr : i64); });
    m["px_tensor_version"] = ts(1, [](const Args& a) { return px_tensor_version(a.t[0], a.null_out ? nullptr : &u64a); });
    m["px_tensor_to_host"] = ts(1, [](const Args& a) { return px_tensor_to_host(a.t[0], a.null_out ? nullptr : host, sizeof host); });
    m["px_tensor_copy_to"] = ts(1, [cpu0](const Args& a) { return px_tensor_copy_to(a.t[0], cpu0, out(a)); });
    m["px_tensor_as_on"] = ts(1, [cpu0](const Args& a) { return px_tensor_as_on(a.t[0], cpu0, out(a)); });
    m["px_tensor_assign"] = ts(2, [](const Args& a) { return px_tensor_assign(a.t[0], a.t[1]); }, false);
    m["px_tensor_assign_region"] = ts(2, [](const Args& a) {
        static const int64_t start[2] = {0, 0}, step[2] = {1, 1}, count[2] = {1, 2};
        return px_tensor_assign_region(a.t[0], start, step, count, a.t[1]);
    }, false);
    m["px_tensor_reshape"] = ts(1, [](const Args& a) { return px_tensor_reshape(a.t[0], 2, shape2, out(a)); });
    m["px_tensor_slice"] = ts(1, [](const Args& a) { return px_tensor_slice(a.t[0], 0, 1, out(a)); });
    m["px_binary"] = ts(2, [](const Args& a) { return px_binary(PX_OP_ADD, a.t[0], a.t[1], out(a)); });
    m["px_binary_scalar"] = ts(1, [](const Args& a) { return px_binary_scalar(PX_OP_ADD, a.t[0], 1, 0, out(a)); });
    m["px_unary"] = ts(1, [](const Args& a) { return px_unary(PX_OP_EXP, a.t[0], out(a)); });
    m["px_where"] = ts(3, [](const Args& a) { return px_where(a.t[0], a.t[1], a.t[2], out(a)); });
    m["px_reduce"] = ts(1, [](const Args& a) { return px_reduce(PX_OP_SUM, a.t[0], 1, 0, 0, out(a)); });
    m["px_matmul"] = ts(2, [](const Args& a) { return px_matmul(a.t[0], a.t[1], out(a)); });
    m["px_transpose"] = ts(1, [](const Args& a) {
        static const int32_t perm[2] = {1, 0};
        return px_transpose(a.t[0], perm, 2, out(a));
    });
    m["px_slice_axis"] = ts(1, [](const Args& a) { return px_slice_axis(a.t[0], 0, 0, 1, 1, out(a)); });
    m["px_concat"] = ts(2, [](const Args& a) {
        px_tensor* parts[2] = {a.t[0], a.t[1]};
        return px_concat(parts, 2, 0, out(a));
    });
    m["px_all_reduce_sum"] = ts(2, [](const Args& a) {
        px_tensor* parts[2] = {a.t[0], a.t[1]};
        return px_all_reduce_sum(parts, 2);
    }, false);
    m["px_group_supported"] = rt([cpu0](const Args& a) { return px_group_supported(a.rt, cpu0, a.null_out ? nullptr : &i32); });
    m["px_group_make_id"] = rt([cpu0](const Args& a) {
        static px_group_id id{sizeof(px_group_id), {}, {}};
        return px_group_make_id(a.rt, cpu0, a.null_out ? nullptr : &id);
    });
    m["px_group_join"] = rt([cpu0](const Args& a) {
        static px_group_id id{sizeof(px_group_id), {}, {}};
        static px_group* g;
        return px_group_join(a.rt, cpu0, &id, 0, 1, 5, a.null_out ? nullptr : &g);
    });
    m["px_group_all_reduce_sum"] = Entry{Takes::group, 1, false, 0, [](const Args& a) {
        return px_group_all_reduce_sum(a.g, a.t, 1);
    }};
    m["px_group_release"] = Entry{Takes::group, 0, false, 0, [](const Args& a) { return px_group_release(a.g); }};
    m["px_cast"] = ts(1, [](const Args& a) { return px_cast(a.t[0], PX_FLOAT64, out(a)); });
    m["px_gemm"] = ts(2, [](const Args& a) { return px_gemm(a.t[0], a.t[1], 0, 0, out(a)); });
    m["px_conv2d"] = ts(2, [](const Args& a) { return px_conv2d(a.t[0], a.t[1], 1, 1, 0, 0, out(a)); });
    m["px_conv2d_backward_input"] = ts(2, [](const Args& a) {
        return px_conv2d_backward_input(a.t[0], a.t[1], 2, 2, 1, 1, 0, 0, out(a));
    });
    m["px_conv2d_backward_weight"] = ts(2, [](const Args& a) {
        return px_conv2d_backward_weight(a.t[0], a.t[1], 1, 1, 1, 1, 0, 0, out(a));
    });
    m["px_pool2d"] = ts(1, [](const Args& a) { return px_pool2d(PX_OP_MAX_POOL2D, a.t[0], 1, 1, 1, 1, 0, 0, out(a)); });
    m["px_pool2d_backward"] = ts(2, [](const Args& a) {
        return px_pool2d_backward(PX_OP_MAX_POOL2D, a.t[0], a.t[1], 1, 1, 1, 1, 0, 0, out(a));
    });
    m["px_bias_relu_max_pool2d"] = ts(2, [](const Args& a) {
        return px_bias_relu_max_pool2d(a.t[0], a.t[1], 1, 1, 1, 1, 0, 0, out(a));
    });
    m["px_bias_relu_max_pool2d_backward"] = ts(3, [](const Args& a) {
        return px_bias_relu_max_pool2d_backward(a.t[0], a.t[1], a.t[2], 1, 1, 1, 1, 0, 0, out(a), out2(a));
    });
    m["px_bias_add"] = ts(2, [](const Args& a) { return px_bias_add(a.t[0], a.t[1], out(a)); });
    m["px_bias_grad"] = ts(1, [](const Args& a) { return px_bias_grad(a.t[0], out(a)); });
    m["px_activation_backward"] = ts(2, [](const Args& a) { return px_activation_backward(PX_OP_RELU, a.t[0], a.t[1], out(a)); });
    m["px_unary_alpha"] = ts(1, [](const Args& a) { return px_unary_alpha(PX_OP_LEAKY_RELU, a.t[0], 0.1, out(a)); });
    m["px_activation_input_backward"] = ts(2, [](const Args& a) {
        return px_activation_input_backward(PX_OP_GELU, a.t[0], a.t[1], 0, out(a));
    });
    m["px_take"] = ts(2, [](const Args& a) { return px_take(a.t[0], a.t[1], out(a)); });
    m["px_take_backward"] = ts(2, [](const Args& a) { return px_take_backward(a.t[0], a.t[1], 2, out(a)); });
    m["px_log_softmax"] = ts(1, [](const Args& a) { return px_log_softmax(a.t[0], out(a)); });
    m["px_log_softmax_backward"] = ts(2, [](const Args& a) { return px_log_softmax_backward(a.t[0], a.t[1], out(a)); });
    m["px_softmax_cross_entropy"] = ts(2, [](const Args& a) { return px_softmax_cross_entropy(a.t[0], a.t[1], out(a)); });
    m["px_softmax_cross_entropy_backward"] = ts(3, [](const Args& a) {
        return px_softmax_cross_entropy_backward(a.t[0], a.t[1], a.t[2], out(a));
    });
    m["px_dropout"] = ts(1, [](const Args& a) { return px_dropout(a.t[0], 0.5, &u64a, &u64b, out(a)); });
    m["px_dropout_backward"] = ts(1, [](const Args& a) { return px_dropout_backward(a.t[0], 0.5, 1, 0, out(a)); });
    m["px_sgd_update"] = ts(3, [](const Args& a) { return px_sgd_update(a.t[0], a.t[1], a.t[2], 0.1, 0, 0, 1); },
                            false, /*momentum may be NULL*/ 1 << 2);
    m["px_batch_norm_stats"] = ts(1, [](const Args& a) { return px_batch_norm_stats(a.t[0], out(a), out2(a)); });
    m["px_batch_norm"] = ts(5, [](const Args& a) {
        return px_batch_norm(a.t[0], a.t[1], a.t[2], a.t[3], a.t[4], 1e-5, out(a));
    });
    m["px_batch_norm_backward"] = ts(5, [](const Args& a) {
        return px_batch_norm_backward(a.t[0], a.t[1], a.t[2], a.t[3], a.t[4], 1e-5, out(a), out2(a), out3(a));
    });
    return m;
}

bool names(const char* function) { return std::string(px_last_error()).find(function) != std::string::npos; }

}  // namespace

TEST_CASE("every function in plexus.h has a hostile-argument case", "[capi][hostile]") {
    auto declared = declared_functions();
    auto table = entries();
    REQUIRE(declared.size() >= 60);
    for (const auto& name : declared) {
        INFO(name << " is declared in plexus.h but has no case in test_capi_every_function.cpp");
        CHECK(table.count(name) == 1);
    }
    for (const auto& [name, e] : table) {
        INFO(name << " has a case but is not declared in plexus.h");
        CHECK(declared.count(name) == 1);
    }
}

TEST_CASE("every C function refuses NULL, released, wrong-kind and made-up handles, naming itself", "[capi][hostile]") {
    px_runtime* rt = nullptr;
    REQUIRE(px_runtime_create(nullptr, &rt) == PX_OK);
    px_runtime* dead_rt = nullptr;
    REQUIRE(px_runtime_create(nullptr, &dead_rt) == PX_OK);
    REQUIRE(px_runtime_destroy(dead_rt) == PX_OK);
    const px_device cpu0{PX_DEVICE_CPU, 0};
    int64_t shape[2] = {2, 2};
    px_tensor *good = nullptr, *dead = nullptr;
    REQUIRE(px_tensor_full(rt, cpu0, PX_FLOAT32, 2, shape, 1, &good) == PX_OK);
    REQUIRE(px_tensor_full(rt, cpu0, PX_FLOAT32, 2, shape, 1, &dead) == PX_OK);
    REQUIRE(px_tensor_release(dead) == PX_OK);
    px_runtime* bad_rts[] = {nullptr, dead_rt, reinterpret_cast<px_runtime*>(good),
                             reinterpret_cast<px_runtime*>(uintptr_t(0xdeadbeef))};
    px_tensor* bad_ts[] = {nullptr, dead, reinterpret_cast<px_tensor*>(rt),
                           reinterpret_cast<px_tensor*>(uintptr_t(0x7fffffff12345678ull))};
    const char* what[] = {"NULL", "released", "wrong-kind", "made-up"};
    // A group needs a plugin with the group slots: the test plugin's, in a
    // group of one process.
    const std::string group_plugin = PLEXUS_FAULT_PLUGIN_DIR "/libfault-group.so";
    const char* group_paths[] = {group_plugin.c_str()};
    px_runtime_options with_groups{sizeof(px_runtime_options), group_paths, 1, 1, 0};
    px_runtime* group_rt = nullptr;
    REQUIRE(px_runtime_create(&with_groups, &group_rt) == PX_OK);
    const px_device accel0{PX_DEVICE_ACCELERATOR, 0};
    px_group_id id{};
    id.struct_size = sizeof id;
    REQUIRE(px_group_make_id(group_rt, accel0, &id) == PX_OK);
    px_group *group = nullptr, *dead_group = nullptr;
    REQUIRE(px_group_join(group_rt, accel0, &id, 0, 1, 5, &group) == PX_OK);
    REQUIRE(px_group_join(group_rt, accel0, &id, 0, 1, 5, &dead_group) == PX_OK);
    REQUIRE(px_group_release(dead_group) == PX_OK);
    px_group* bad_gs[] = {nullptr, dead_group, reinterpret_cast<px_group*>(good),
                          reinterpret_cast<px_group*>(uintptr_t(0x3fffffff00000042ull))};

    for (const auto& [name, e] : entries()) {
        if (e.takes == Takes::nothing) continue;
        const int positions = e.takes == Takes::runtime ? 1 : e.takes == Takes::group ? 1 + e.handles : e.handles;
        for (int pos = 0; pos < positions; ++pos)
            for (int b = 0; b < 4; ++b) {
                if (e.takes == Takes::tensors && b == 0 && (e.nullable >> pos & 1)) continue;
                Args a;
                a.rt = e.takes == Takes::runtime ? bad_rts[b] : rt;
                for (int k = 0; k < 5; ++k) a.t[k] = good;
                a.g = group;
                if (e.takes == Takes::tensors) a.t[pos] = bad_ts[b];
                if (e.takes == Takes::group && pos == 0) a.g = bad_gs[b];
                if (e.takes == Takes::group && pos > 0) a.t[pos - 1] = bad_ts[b];
                out_t = out_t2 = out_t3 = nullptr;
                px_status s = e.call(a);
                INFO(name << " with a " << what[b] << " handle in position " << pos << ": " << px_last_error());
                CHECK(s == PX_ERROR_INVALID_HANDLE);
                CHECK(px_last_status() == PX_ERROR_INVALID_HANDLE);
                CHECK(names(name.c_str()));
                CHECK(out_t == nullptr);  // nothing was made
                CHECK(out_t2 == nullptr);
                CHECK(out_t3 == nullptr);
            }
        if (!e.out) continue;
        Args a;
        a.rt = rt;
        for (int k = 0; k < 5; ++k) a.t[k] = good;
        a.null_out = true;
        px_status s = e.call(a);
        INFO(name << " with a NULL out-pointer: " << px_last_error());
        CHECK(s == PX_ERROR_INVALID_ARGUMENT);
        CHECK(names(name.c_str()));
    }
    // The good handles are untouched by all of that.
    float v[4] = {};
    CHECK(px_tensor_to_host(good, v, sizeof v) == PX_OK);
    CHECK(v[3] == 1.0f);
    CHECK(px_tensor_release(good) == PX_OK);
    CHECK(px_group_release(group) == PX_OK);
    CHECK(px_runtime_destroy(group_rt) == PX_OK);
    CHECK(px_runtime_destroy(rt) == PX_OK);
}

TEST_CASE("the functions without handles: runtime creation, status names, the last error", "[capi][hostile]") {
    CHECK(px_runtime_create(nullptr, nullptr) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(names("px_runtime_create"));
    CHECK(px_last_status() == PX_ERROR_INVALID_ARGUMENT);
    px_runtime_options small{3, nullptr, 0, 0, 0};  // a struct_size no version of the struct had
    px_runtime* rt = nullptr;
    CHECK(px_runtime_create(&small, &rt) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(rt == nullptr);
    CHECK(names("px_runtime_create"));
    px_runtime_options no_paths{sizeof(px_runtime_options), nullptr, 2, 0, 0};  // two paths, no array
    CHECK(px_runtime_create(&no_paths, &rt) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(rt == nullptr);
    CHECK(std::string(px_status_name(PX_ERROR_SHAPE)) == "PX_ERROR_SHAPE");
    CHECK(px_status_name(static_cast<px_status>(999)) != nullptr);
    CHECK(px_last_error() != nullptr);
}
