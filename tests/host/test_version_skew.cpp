// Version skew, both ways (issue 41, item 5). Today's host with plugins of
// every earlier minor (tests/plugins/skew: the CPU plugin cut to the table of
// minors 1.0..1.5, each ending at an inaccessible page, so reading one byte
// past a plugin's struct_size kills this test); and today's CPU plugin used
// by a host of each earlier minor, which knows only the slots and structs
// of its own headers (here: reads the table only as far as that minor's
// size, and calls nothing past it).
#include <catch2/catch.hpp>

#include <dlfcn.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "plexus/dlpack.h"
#include "plexus/op_rows.h"
#include "plexus/plexus.h"
#include "plexus/plugin.h"
#include "../conformance/opened_plugin.hpp"
#include "plugin_runtime.hpp"

namespace {

// Where each minor's table ended: 1.0 and 1.1 at synchronize, 1.2 at
// all_reduce, 1.3 and 1.4 at group_leave, 1.5 at buffer_wrap (1.6 added
// dtypes, no slot).
size_t table_end(int minor) {
    if (minor <= 1) return offsetof(px_plugin_api, synchronize) + sizeof(void*);
    if (minor == 2) return offsetof(px_plugin_api, all_reduce) + sizeof(void*);
    if (minor <= 4) return offsetof(px_plugin_api, group_leave) + sizeof(void*);
    return offsetof(px_plugin_api, buffer_wrap) + sizeof(void*);
}

const char* const skew_plugins[] = {PLEXUS_SKEW_PLUGIN_FILES};

// Two CPU devices (PLEXUS_CPU_DEVICES, read as the CPU plugin loads).
px_runtime* runtime_of(const char* file) {
    ::setenv("PLEXUS_CPU_DEVICES", "2", 1);
    const char* paths[] = {file};
    const px_runtime_options o = pxtest::only_these(paths, 1);
    px_runtime* rt = nullptr;
    const px_status made = px_runtime_create(&o, &rt);
    ::unsetenv("PLEXUS_CPU_DEVICES");
    REQUIRE(made == PX_OK);
    return rt;
}

px_tensor* floats(px_runtime* rt, px_device d, std::vector<float> v, std::vector<int64_t> shape) {
    px_tensor* t = nullptr;
    REQUIRE(px_tensor_from_host(rt, d, PX_FLOAT32, int32_t(shape.size()), shape.data(), v.data(), v.size() * 4, &t) ==
            PX_OK);
    return t;
}

std::vector<float> values(px_tensor* t, size_t n) {
    std::vector<float> out(n);
    REQUIRE(px_tensor_to_host(t, out.data(), n * 4) == PX_OK);
    return out;
}

bool says(const std::string& needle) { return std::string(px_last_error()).find(needle) != std::string::npos; }

}  // namespace

TEST_CASE("today's host runs plugins of minors 1.0 to 1.5 through their own slots only", "[plugins][skew]") {
    const int minor = GENERATE(0, 1, 2, 3, 4, 5);
    INFO("a plugin of ABI 1." << minor);
    px_runtime* rt = runtime_of(skew_plugins[minor]);
    px_plugin_info info{};
    info.struct_size = sizeof info;
    REQUIRE(px_runtime_plugin_info(rt, 0, &info) == PX_OK);
    REQUIRE(info.loaded == 1);
    CHECK(info.abi_minor == uint32_t(minor));
    CHECK(std::string(info.name) == "cpu-abi-1." + std::to_string(minor));
    const px_device cpu0{PX_DEVICE_CPU, 0}, cpu1{PX_DEVICE_CPU, 1};
    // Ops of its minor compute; the host asks it about nothing newer.
    px_tensor* a = floats(rt, cpu0, {1, 2, 3, 4}, {2, 2});
    px_tensor* b = floats(rt, cpu0, {10, 20, 30, 40}, {2, 2});
    px_tensor *sum = nullptr, *product = nullptr;
    REQUIRE(px_binary(PX_OP_ADD, a, b, &sum) == PX_OK);
    REQUIRE(px_matmul(a, b, &product) == PX_OK);
    CHECK(values(sum, 4) == std::vector<float>{11, 22, 33, 44});
    CHECK(values(product, 4) == std::vector<float>{70, 100, 150, 220});
    for (int op = 0; op < PX_OP_NUMBER_LIMIT; ++op) {
        const px_op_row* row = px_op_row_of(op);
        if (!row || row->abi_minor <= minor) continue;
        int32_t yes = -1;
        REQUIRE(px_runtime_device_supports(rt, cpu0, op, PX_FLOAT32, &yes) == PX_OK);
        INFO(row->name << " came in 1." << row->abi_minor);
        CHECK(yes == 0);
    }
    // float16 and bfloat16 (1.6): the host asks it about neither (its
    // supports() would say yes: it passes them to today's CPU plugin), and a
    // cast to one is refused before the plugin sees a dtype it does not know.
    for (px_dtype newer : {PX_FLOAT16, PX_BFLOAT16}) {
        INFO(px_dtype_name(newer));
        for (px_op op : {PX_OP_COPY, PX_OP_CAST, PX_OP_FILL, PX_OP_ADD}) {
            int32_t yes = -1;
            REQUIRE(px_runtime_device_supports(rt, cpu0, op, newer, &yes) == PX_OK);
            CHECK(yes == 0);
        }
        px_tensor* cast = nullptr;
        CHECK(px_cast(a, newer, &cast) == PX_ERROR_UNSUPPORTED);
        CHECK(says(std::string("cast to ") + px_dtype_name(newer) + " is not supported on cpu(0) by plugin 'cpu-abi-1." +
                   std::to_string(minor) + "'"));
        CHECK(cast == nullptr);
    }
    // all_reduce (1.2): before it, the host sums through copies.
    px_tensor* on1 = floats(rt, cpu1, {1, 1, 1, 1}, {2, 2});
    px_tensor* pair[] = {sum, on1};
    REQUIRE(px_all_reduce_sum(pair, 2) == PX_OK);
    CHECK(values(on1, 4) == std::vector<float>{12, 23, 34, 45});
    // Process groups (1.3): the CPU plugin has none, and before 1.3 the slots
    // are not even read; either way refused, naming the minor.
    int32_t groups = -1;
    REQUIRE(px_group_supported(rt, cpu0, &groups) == PX_OK);
    CHECK(groups == 0);
    px_group_id id{};
    id.struct_size = sizeof id;
    CHECK(px_group_make_id(rt, cpu0, &id) == PX_ERROR_UNSUPPORTED);
    CHECK(says("offers no process groups (the group slots of plugin ABI 1.3)"));
    // Shared memory (1.5): a plugin before it copies, and says why when told not to.
    struct DLManagedTensor* dl = nullptr;
    if (minor < 5) {
        CHECK(px_tensor_to_dlpack_unversioned(a, PX_DLPACK_COPY_NEVER, &dl) == PX_ERROR_UNSUPPORTED);
        CHECK(says("lacks the slot buffer_memory (plugin ABI 1.5), which gives a buffer's address; the plugin was "
                   "built before 1.5"));
    } else {
        REQUIRE(px_tensor_to_dlpack_unversioned(a, PX_DLPACK_COPY_NEVER, &dl) == PX_OK);
        dl->deleter(dl);
    }
    REQUIRE(px_tensor_to_dlpack_unversioned(a, PX_DLPACK_COPY_IF_NEEDED, &dl) == PX_OK);
    dl->deleter(dl);
    for (px_tensor* t : {a, b, sum, product, on1}) px_tensor_release(t);
    REQUIRE(px_runtime_destroy(rt) == PX_OK);
}

TEST_CASE("today's CPU plugin serves a host of minors 1.0 to 1.5 that knows only its own slots and structs",
          "[plugins][skew]") {
    const int minor = GENERATE(0, 1, 2, 3, 4, 5);
    INFO("a host of ABI 1." << minor);
    void* lib = dlopen(PLEXUS_CPU_PLUGIN_FILE, RTLD_NOW | RTLD_LOCAL);
    REQUIRE(lib);
    auto get = reinterpret_cast<px_plugin_get_api_fn>(dlsym(lib, PX_PLUGIN_ENTRY_SYMBOL));
    REQUIRE(get);
    const px_plugin_api* theirs = get();
    REQUIRE(theirs);
    REQUIRE(theirs->abi_major == 1);
    REQUIRE(theirs->struct_size >= table_end(minor));
    // The older host's copy: as far as its own table reaches, the rest unknown to it.
    px_plugin_api t;
    std::memset(&t, 0, sizeof t);
    std::memcpy(&t, theirs, table_end(minor));
    px_plugin_error err{sizeof err, {0}};
    px_plugin_context* ctx = nullptr;
    REQUIRE(t.create(&ctx, &err) == PX_OK);
    int32_t count = 0;
    REQUIRE(t.device_count(ctx, &count, &err) == PX_OK);
    REQUIRE(count >= 1);
    px_device_info info{};
    info.struct_size = sizeof info;  // px_device_info has not grown since 1.0
    REQUIRE(t.device_info(ctx, 0, &info, &err) == PX_OK);
    CHECK(info.kind == PX_DEVICE_CPU);
    REQUIRE(t.supports(ctx, 0, PX_OP_ADD, PX_FLOAT32) == 1);
    // c = a + b through the 1.0 structs.
    const float a[4] = {1, 2, 3, 4}, b[4] = {10, 20, 30, 40};
    px_plugin_buffer *ba = nullptr, *bb = nullptr, *bc = nullptr;
    REQUIRE(t.buffer_alloc(ctx, 0, 16, &ba, &err) == PX_OK);
    REQUIRE(t.buffer_alloc(ctx, 0, 16, &bb, &err) == PX_OK);
    REQUIRE(t.buffer_alloc(ctx, 0, 16, &bc, &err) == PX_OK);
    REQUIRE(t.copy_from_host(ctx, ba, 0, a, 16, &err) == PX_OK);
    REQUIRE(t.copy_from_host(ctx, bb, 0, b, 16, &err) == PX_OK);
    const px_tensor_desc in[2] = {pxconf::vector_desc(ba, PX_FLOAT32, 4), pxconf::vector_desc(bb, PX_FLOAT32, 4)},
                         out = pxconf::vector_desc(bc, PX_FLOAT32, 4);
    px_binary_attrs attrs{sizeof attrs, 0, 0.0};
    px_op_call call{sizeof call, PX_OP_ADD, 0, 2, in, 1, &out, &attrs};
    REQUIRE(t.execute(ctx, &call, &err) == PX_OK);
    REQUIRE(t.synchronize(ctx, 0, &err) == PX_OK);
    float c[4] = {};
    REQUIRE(t.copy_to_host(ctx, bc, 0, c, 16, &err) == PX_OK);
    CHECK(std::vector<float>(c, c + 4) == std::vector<float>{11, 22, 33, 44});
    // 1.2's all_reduce, where the host knows it: with one device, a sum of one.
    if (minor >= 2 && t.all_reduce) {
        const int32_t devices[1] = {0};
        px_collective_call sum{sizeof sum, PX_COLLECTIVE_SUM, 1, devices, &out};
        REQUIRE(t.all_reduce(ctx, &sum, &err) == PX_OK);
        REQUIRE(t.synchronize(ctx, 0, &err) == PX_OK);
        REQUIRE(t.copy_to_host(ctx, bc, 0, c, 16, &err) == PX_OK);
        CHECK(std::vector<float>(c, c + 4) == std::vector<float>{11, 22, 33, 44});
    }
    for (px_plugin_buffer* buf : {ba, bb, bc}) REQUIRE(t.buffer_free(ctx, buf, &err) == PX_OK);
    t.destroy(ctx);
    dlclose(lib);
}
