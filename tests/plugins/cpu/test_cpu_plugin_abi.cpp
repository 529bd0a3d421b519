// The CPU plugin called through its C table directly, as any host would:
// malformed calls are refused with a message, never run on garbage.
#include <algorithm>
#include <array>
#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>
#include <string>

#include "plexus/plugin.h"
#include "../../conformance/opened_plugin.hpp"
#include "../../loaded_plugin.hpp"

namespace {
struct Loaded : pxtest::LoadedPlugin {
    Loaded() : LoadedPlugin(PLEXUS_CPU_PLUGIN_FILE) {}
};

// A contiguous float32 vector of n elements at the start of `buf`.
px_tensor_desc float_vector(px_plugin_buffer* buf, int64_t n) { return pxconf::vector_desc(buf, PX_FLOAT32, n); }
}  // namespace

TEST_CASE("cpu plugin: ops without their attrs are refused", "[host][cpu-abi]") {
    Loaded p;
    px_plugin_buffer* buf = nullptr;
    REQUIRE(p.api->buffer_alloc(p.ctx, 0, 16, &buf, &p.err) == PX_OK);
    px_tensor_desc out = float_vector(buf, 4);
    px_op_call call{sizeof(px_op_call), PX_OP_FILL, 0, 0, nullptr, 1, &out, nullptr};
    CHECK(p.api->execute(p.ctx, &call, &p.err) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(p.err.message) == "fill: needs an attrs struct of 24 bytes, got none");
    px_reduce_attrs small{4, 0, 0};  // a struct_size from some older, smaller struct
    call.attrs = &small;
    CHECK(p.api->execute(p.ctx, &call, &p.err) == PX_ERROR_INVALID_ARGUMENT);
    px_fill_attrs fill{sizeof(px_fill_attrs), 2.5, 0};
    call.attrs = &fill;
    REQUIRE(p.api->execute(p.ctx, &call, &p.err) == PX_OK);
    float v[4];
    REQUIRE(p.api->copy_to_host(p.ctx, buf, 0, v, sizeof v, &p.err) == PX_OK);
    CHECK(v[3] == 2.5f);
    // Reads past a buffer are refused too.
    CHECK(p.api->copy_to_host(p.ctx, buf, 8, v, sizeof v, &p.err) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(p.err.message).find("runs past a buffer of 16 bytes") != std::string::npos);
    // The fused pool gradient writes two outputs (dx, db): one is refused
    // before anything reads a second desc that is not there.
    call.op = PX_OP_BIAS_RELU_MAX_POOL2D_BACKWARD;
    CHECK(p.api->execute(p.ctx, &call, &p.err) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(p.err.message) == "bias_relu_max_pool2d_backward: bad operand counts");
    call.op = PX_OP_FILL;
    call.num_outputs = 2;  // fill has one
    CHECK(p.api->execute(p.ctx, &call, &p.err) == PX_ERROR_INVALID_ARGUMENT);
    call.num_outputs = 1;
    call.outputs = nullptr;
    CHECK(p.api->execute(p.ctx, &call, &p.err) == PX_ERROR_INVALID_ARGUMENT);
    call.outputs = &out;
    call.num_inputs = 1;  // an input counted, but no array of them
    CHECK(p.api->execute(p.ctx, &call, &p.err) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(p.err.message) == "fill: bad operand counts");
    call.num_inputs = 0;
    call.op = 9999;
    CHECK(p.api->execute(p.ctx, &call, &p.err) == PX_ERROR_UNSUPPORTED);
    CHECK(p.api->supports(p.ctx, 0, PX_OP_MATMUL, PX_INT32) == 0);
    CHECK(p.api->supports(p.ctx, 5, PX_OP_ADD, PX_FLOAT32) == 0);
    REQUIRE(p.api->buffer_free(p.ctx, buf, &p.err) == PX_OK);
}

TEST_CASE("cpu plugin: bad settings in the environment fail create() with the reason", "[host][cpu-abi]") {
    // Each setting alone: its value, and the message create() must give.
    const struct {
        const char *name, *value, *message;
    } bad[] = {
        {"PLEXUS_CPU_DEVICES", "zero", "PLEXUS_CPU_DEVICES='zero' is not a number of devices in 1..64"},
        {"PLEXUS_CPU_DEVICES", " 2", "PLEXUS_CPU_DEVICES=' 2' is not a number of devices in 1..64"},
        {"PLEXUS_CPU_DEVICES", "+2", "PLEXUS_CPU_DEVICES='+2' is not a number of devices in 1..64"},
        {"PLEXUS_CPU_DEVICES", "65", "PLEXUS_CPU_DEVICES='65' is not a number of devices in 1..64"},
        {"PLEXUS_CPU_MEMORY_LIMIT", "12Q", "PLEXUS_CPU_MEMORY_LIMIT='12Q' is not a size (e.g. 512M, 2G, 1048576)"},
        {"PLEXUS_CPU_MEMORY_LIMIT", "17179869184G", "PLEXUS_CPU_MEMORY_LIMIT='17179869184G' is not a size"},  // 2^64
        {"PLEXUS_CPU_MEMORY_LIMIT", "0", "PLEXUS_CPU_MEMORY_LIMIT='0' is not a size"},
        {"PLEXUS_CPU_MEMORY_LIMIT", "G", "PLEXUS_CPU_MEMORY_LIMIT='G' is not a size"},
        {"PLEXUS_CPU_MEMORY_LIMIT", "5KK", "PLEXUS_CPU_MEMORY_LIMIT='5KK' is not a size"},
        {"PLEXUS_CPU_MEMORY_LIMIT", "-1", "PLEXUS_CPU_MEMORY_LIMIT='-1' is not a size"},  // not 2^64 - 1
        {"PLEXUS_CPU_MEMORY_LIMIT", "99999999999999999999", "PLEXUS_CPU_MEMORY_LIMIT='99999999999999999999' is not a size"},
        {"PLEXUS_CPU_MEMORY_LIMIT", " 5M", "PLEXUS_CPU_MEMORY_LIMIT=' 5M' is not a size"},
        {"PLEXUS_CPU_ISA", "sse9", "PLEXUS_CPU_ISA='sse9' is not one of avx512, avx2, baseline"},
        {"PLEXUS_CPU_CONV", "winograd", "PLEXUS_CPU_CONV='winograd' is not one of auto, direct, im2col"},
        {"PLEXUS_CPU_FUSED", "yes", "PLEXUS_CPU_FUSED='yes' is not on or off"},
    };
    void* lib = dlopen(PLEXUS_CPU_PLUGIN_FILE, RTLD_NOW | RTLD_LOCAL);
    REQUIRE(lib);
    auto api = reinterpret_cast<px_plugin_get_api_fn>(dlsym(lib, PX_PLUGIN_ENTRY_SYMBOL))();
    for (const auto& b : bad) {
        INFO(b.name << "=" << b.value);
        setenv(b.name, b.value, 1);
        px_plugin_context* ctx = nullptr;
        px_plugin_error err{sizeof(px_plugin_error), {0}};
        CHECK(api->create(&ctx, &err) == PX_ERROR_INVALID_ARGUMENT);
        CHECK(ctx == nullptr);
        CHECK(std::string(err.message).rfind(b.message, 0) == 0);  // the whole message, or its start
        unsetenv(b.name);
    }
    dlclose(lib);
}

#include <utility>
#include <vector>

#include "plexus/plexus.h"

// A runtime of the CPU plugin alone, created with `env` set (and unset after:
// the plugin reads it in create()).
static px_runtime* runtime_with_env(const std::vector<std::pair<std::string, std::string>>& env) {
    for (const auto& [name, value] : env) setenv(name.c_str(), value.c_str(), 1);
    const char* paths[] = {PLEXUS_CPU_PLUGIN_FILE};
    px_runtime_options o{sizeof o, paths, 1, 1, 0};
    px_runtime* rt = nullptr;
    px_status s = px_runtime_create(&o, &rt);
    for (const auto& [name, value] : env) unsetenv(name.c_str());
    REQUIRE(s == PX_OK);
    return rt;
}

// The threads a device's name gives: "CPU (4 threads, ...".
static int threads_named(px_runtime* rt, int32_t index) {
    px_device_info info{};
    info.struct_size = sizeof info;
    REQUIRE(px_runtime_device_info(rt, px_device{PX_DEVICE_CPU, index}, &info) == PX_OK);
    INFO(info.name);
    REQUIRE(std::strncmp(info.name, "CPU (", 5) == 0);
    return std::atoi(info.name + 5);
}

TEST_CASE("a CPU device's name gives the threads it computes with", "[host][cpu-abi]") {
    px_runtime* one = runtime_with_env({{"PLEXUS_CPU_DEVICES", "1"}});
    const int all = threads_named(one, 0);
    px_runtime_destroy(one);
    CHECK(all >= 1);
    // Each of two devices gets its share of the cores (the name had said every core).
    px_runtime* two = runtime_with_env({{"PLEXUS_CPU_DEVICES", "2"}});
    CHECK(threads_named(two, 0) == std::max(1, all / 2));
    CHECK(threads_named(two, 1) == std::max(1, all / 2));
    px_runtime_destroy(two);
}

TEST_CASE("PLEXUS_CPU_MEMORY_LIMIT takes bytes or K, M, G with an optional B, either case", "[host][cpu-abi][oom]") {
    const std::pair<const char*, uint64_t> sizes[] = {{"4096", 4096},          {"4K", 4096},     {"4kB", 4096},
                                                      {"3M", 3ull << 20},      {"3mb", 3ull << 20}, {"2G", 2ull << 30},
                                                      {"1gB", 1ull << 30},     {"100b", 100}};
    for (const auto& [text, bytes] : sizes) {
        INFO(text);
        px_runtime* rt = runtime_with_env({{"PLEXUS_CPU_MEMORY_LIMIT", text}});
        px_device_info info{};
        info.struct_size = sizeof info;
        REQUIRE(px_runtime_device_info(rt, px_device{PX_DEVICE_CPU, 0}, &info) == PX_OK);
        CHECK(info.memory_total == bytes);
        px_runtime_destroy(rt);
    }
    // The refused sizes are in "bad settings in the environment" above.
}

TEST_CASE("PLEXUS_CPU_MEMORY_LIMIT: out of memory is an error with figures, and recoverable", "[host][cpu-abi][oom]") {
    px_runtime* rt = runtime_with_env({{"PLEXUS_CPU_MEMORY_LIMIT", "1M"}});
    px_device cpu0{PX_DEVICE_CPU, 0};
    auto in_use = [&] {
        px_device_info info{};
        info.struct_size = sizeof info;
        REQUIRE(px_runtime_device_info(rt, cpu0, &info) == PX_OK);
        CHECK(info.memory_total == (1u << 20));
        return info.memory_in_use;
    };
    uint64_t baseline = in_use();
    int64_t half[1] = {100000};  // 400 KB of float32
    px_tensor* keep = nullptr;
    REQUIRE(px_tensor_full(rt, cpu0, PX_FLOAT32, 1, half, 3.0, &keep) == PX_OK);
    for (int cycle = 0; cycle < 100; ++cycle) {
        px_tensor *a = nullptr, *b = nullptr;
        REQUIRE(px_tensor_full(rt, cpu0, PX_FLOAT32, 1, half, 1.0, &a) == PX_OK);
        REQUIRE(px_tensor_full(rt, cpu0, PX_FLOAT32, 1, half, 2.0, &b) == PX_ERROR_OUT_OF_MEMORY);
        if (cycle == 0) {
            std::string m = px_last_error();
            CHECK(m.find("out of memory on cpu(0): asked for 400000 bytes") != std::string::npos);
            CHECK(m.find("bytes in use, limit 1048576 bytes (PLEXUS_CPU_MEMORY_LIMIT)") != std::string::npos);
        }
        CHECK(b == nullptr);
        REQUIRE(px_tensor_release(a) == PX_OK);
    }
    float v[1];
    px_tensor* first = nullptr;
    REQUIRE(px_tensor_slice(keep, 0, 1, &first) == PX_OK);  // the tensor made before is intact
    REQUIRE(px_tensor_to_host(first, v, sizeof v) == PX_OK);
    CHECK(v[0] == 3.0f);
    px_tensor_release(first);
    px_tensor_release(keep);
    CHECK(in_use() == baseline);
    px_runtime_destroy(rt);
}

TEST_CASE("PLEXUS_CPU_MEMORY_LIMIT counts an op's scratch: columns that do not fit are out of memory at the wait",
          "[host][cpu-abi][oom]") {
    // im2col of a 32x32 kernel over a 64x64 image: 1024 taps x 33x33 outputs,
    // 4,460,544 bytes of columns, past a 4 MiB limit that the tensors
    // (16 KiB, 4 KiB, 4 KiB) leave nearly free. A 16x16 kernel's columns
    // (2,458,624 bytes) fit.
    px_runtime* rt = runtime_with_env({{"PLEXUS_CPU_MEMORY_LIMIT", "4M"}, {"PLEXUS_CPU_CONV", "im2col"}});
    px_device cpu0{PX_DEVICE_CPU, 0};
    auto info = [&] {
        px_device_info i{};
        i.struct_size = sizeof i;
        REQUIRE(px_runtime_device_info(rt, cpu0, &i) == PX_OK);
        return i;
    };
    auto in_use = [&] { return info().memory_in_use; };
    const int64_t image[4] = {1, 1, 64, 64}, big[4] = {1, 1, 32, 32}, small[4] = {1, 1, 16, 16};
    px_tensor *x = nullptr, *wbig = nullptr, *wsmall = nullptr;
    REQUIRE(px_tensor_full(rt, cpu0, PX_FLOAT32, 4, image, 1.0, &x) == PX_OK);
    REQUIRE(px_tensor_full(rt, cpu0, PX_FLOAT32, 4, big, 1.0, &wbig) == PX_OK);
    REQUIRE(px_tensor_full(rt, cpu0, PX_FLOAT32, 4, small, 1.0, &wsmall) == PX_OK);
    REQUIRE(px_runtime_synchronize(rt, cpu0) == PX_OK);
    const uint64_t baseline = in_use();
    for (int cycle = 0; cycle < 3; ++cycle) {
        px_tensor* y = nullptr;
        REQUIRE(px_conv2d(x, wbig, 1, 1, 0, 0, &y) == PX_OK);  // queued: it fails when it runs
        std::vector<float> v(size_t(33) * 33);
        CHECK(px_tensor_to_host(y, v.data(), v.size() * sizeof(float)) == PX_ERROR_OUT_OF_MEMORY);
        const std::string m = px_last_error();
        INFO(m);
        CHECK(m.find("conv2d failed on cpu(0): out of memory on cpu(0): asked for 4460544 bytes of scratch space for "
                     "the op") != std::string::npos);
        CHECK(m.find("limit 4194304 bytes (PLEXUS_CPU_MEMORY_LIMIT)") != std::string::npos);
        px_tensor_release(y);
        CHECK(in_use() == baseline);  // nothing charged is left behind
        // The device goes on: the smaller kernel's columns fit, and its sums are right.
        px_tensor* z = nullptr;
        REQUIRE(px_conv2d(x, wsmall, 1, 1, 0, 0, &z) == PX_OK);
        std::vector<float> out(size_t(49) * 49);
        REQUIRE(px_tensor_to_host(z, out.data(), out.size() * sizeof(float)) == PX_OK);
        CHECK(out.front() == 256.0f);
        CHECK(out.back() == 256.0f);
        px_tensor_release(z);
        CHECK(in_use() == baseline);
        // The peak saw the columns beside the tensors (z's 9604 bytes too).
        CHECK(info().memory_peak >= baseline + 2458624 + 9604);
    }
    px_tensor_release(x);
    px_tensor_release(wbig);
    px_tensor_release(wsmall);
    px_runtime_destroy(rt);
}

TEST_CASE("with no limit, scratch larger than the machine's memory is out of memory at the wait", "[host][cpu-abi][oom]") {
    // im2col of a 1024x1024 kernel over a 2048x2048 image: 2^20 taps x
    // 1025^2 outputs, 4.4e12 bytes of columns, more than any machine here
    // has; refused before anything is allocated (overcommit would grant it).
    px_runtime* rt = runtime_with_env({{"PLEXUS_CPU_CONV", "im2col"}});
    px_device cpu0{PX_DEVICE_CPU, 0};
    const int64_t image[4] = {1, 1, 2048, 2048}, kernel[4] = {1, 1, 1024, 1024};
    px_tensor *x = nullptr, *w = nullptr, *y = nullptr;
    REQUIRE(px_tensor_full(rt, cpu0, PX_FLOAT32, 4, image, 1.0, &x) == PX_OK);
    REQUIRE(px_tensor_full(rt, cpu0, PX_FLOAT32, 4, kernel, 1.0, &w) == PX_OK);
    REQUIRE(px_conv2d(x, w, 1, 1, 0, 0, &y) == PX_OK);
    CHECK(px_runtime_synchronize(rt, cpu0) == PX_ERROR_OUT_OF_MEMORY);
    const std::string m = px_last_error();
    INFO(m);
    CHECK(m.find("conv2d failed on cpu(0): out of memory on cpu(0): asked for 4406640640000 bytes of scratch space") !=
          std::string::npos);
    CHECK(px_runtime_synchronize(rt, cpu0) == PX_OK);  // reported once; the device goes on
    px_tensor_release(y);
    px_tensor_release(x);
    px_tensor_release(w);
    px_runtime_destroy(rt);
}

TEST_CASE("the trace slots (ABI 1.8): a span per op and copy, in the order run, with the op's id",
          "[host][cpu-abi][trace]") {
    Loaded p;
    const px_plugin_api* api = p.api;
    px_plugin_context* ctx = p.ctx;
    px_plugin_error& err = p.err;
    REQUIRE(api->trace_enable);
    REQUIRE(api->execute_traced);
    REQUIRE(api->trace_take);
    px_plugin_buffer* buf = nullptr;
    REQUIRE(api->buffer_alloc(ctx, 0, 64, &buf, &err) == PX_OK);
    px_tensor_desc out = float_vector(buf, 16);
    px_fill_attrs attrs{sizeof attrs, 2.0, 0};
    px_op_call call{sizeof(px_op_call), PX_OP_FILL, 0, 0, nullptr, 1, &out, &attrs};
    REQUIRE(api->execute_traced(ctx, &call, 7, &err) == PX_OK);  // not recording yet: no span
    REQUIRE(api->trace_enable(ctx, 0, 1, &err) == PX_OK);
    const float ones[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    REQUIRE(api->execute_traced(ctx, &call, 8, &err) == PX_OK);
    REQUIRE(api->copy_from_host(ctx, buf, 0, ones, sizeof ones, &err) == PX_OK);
    REQUIRE(api->execute(ctx, &call, &err) == PX_OK);  // untraced execute: a span with id 0
    REQUIRE(api->synchronize(ctx, 0, &err) == PX_OK);
    px_trace_span spans[2];
    spans[0].struct_size = sizeof(px_trace_span);
    int32_t n = -1;
    REQUIRE(api->trace_take(ctx, 0, spans, 2, &n, &err) == PX_OK);
    REQUIRE(n == 2);  // as many as fit; the host asks again
    CHECK(spans[0].op == PX_OP_FILL);
    CHECK(spans[0].trace_id == 8);
    CHECK(spans[1].op == 0);
    CHECK(spans[1].bytes == sizeof ones);
    CHECK(spans[0].start_ns <= spans[0].end_ns);
    CHECK(spans[0].end_ns <= spans[1].start_ns);
    REQUIRE(api->trace_take(ctx, 0, spans, 2, &n, &err) == PX_OK);
    REQUIRE(n == 1);
    CHECK(spans[0].trace_id == 0);
    CHECK(spans[0].op == PX_OP_FILL);
    REQUIRE(api->trace_enable(ctx, 0, 0, &err) == PX_OK);
    REQUIRE(api->execute_traced(ctx, &call, 9, &err) == PX_OK);  // off again: no span
    REQUIRE(api->synchronize(ctx, 0, &err) == PX_OK);
    REQUIRE(api->trace_take(ctx, 0, spans, 2, &n, &err) == PX_OK);
    CHECK(n == 0);
    spans[0].struct_size = 8;  // smaller than ABI 1.8's span
    CHECK(api->trace_take(ctx, 0, spans, 2, &n, &err) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(err.message).find("struct_size") != std::string::npos);
    CHECK(api->trace_enable(ctx, 5, 1, &err) == PX_ERROR_NO_DEVICE);
    REQUIRE(api->buffer_free(ctx, buf, &err) == PX_OK);
}

TEST_CASE("PLEXUS_CPU_FUSED=off hides the fused ops, which are then refused as unsupported", "[host][cpu-abi]") {
    const px_device cpu0{PX_DEVICE_CPU, 0};
    for (const char* setting : {"on", "off"}) {
        INFO("PLEXUS_CPU_FUSED=" << setting);
        const bool on = std::string(setting) == "on";
        px_runtime* rt = runtime_with_env({{"PLEXUS_CPU_FUSED", setting}});
        for (int32_t op : {PX_OP_BIAS_RELU_MAX_POOL2D, PX_OP_BIAS_RELU_MAX_POOL2D_BACKWARD}) {
            int32_t yes = -1;
            REQUIRE(px_runtime_device_supports(rt, cpu0, op, PX_FLOAT32, &yes) == PX_OK);
            CHECK(yes == (on ? 1 : 0));
        }
        const int64_t xs[4] = {1, 2, 4, 4}, bs[1] = {2};
        px_tensor *x = nullptr, *b = nullptr, *y = nullptr;
        REQUIRE(px_tensor_full(rt, cpu0, PX_FLOAT32, 4, xs, 1.0, &x) == PX_OK);
        REQUIRE(px_tensor_full(rt, cpu0, PX_FLOAT32, 1, bs, 0.5, &b) == PX_OK);
        const px_status s = px_bias_relu_max_pool2d(x, b, 2, 2, 2, 2, 0, 0, &y);
        CHECK(s == (on ? PX_OK : PX_ERROR_UNSUPPORTED));
        if (!on) CHECK(std::string(px_last_error()).find("bias_relu_max_pool2d") != std::string::npos);
        if (y) px_tensor_release(y);
        px_tensor_release(x);
        px_tensor_release(b);
        px_runtime_destroy(rt);
    }
}

// One long float64 sum and mean on cpu(0) with all the threads, and with
// half of them (two devices): the same bits, since the plugin adds fixed
// chunks in order. Before, each thread summed its share, and 1, 2 and 3
// threads gave three different last digits.
TEST_CASE("PLEXUS_CPU_DEVICES: a long sum has the same bits whatever the device's thread count", "[host][cpu-abi]") {
    std::vector<double> data(1000003);
    uint64_t state = 88172645463325252ull;
    for (double& v : data) {  // xorshift64: values in [-1, 1) of every magnitude's rounding
        state ^= state << 13, state ^= state >> 7, state ^= state << 17;
        v = double(state >> 11) / 4503599627370496.0 - 1.0;
    }
    auto reduce_on = [&](px_runtime* rt, px_op op) {
        const px_device cpu0{PX_DEVICE_CPU, 0};
        const int64_t n = int64_t(data.size());
        px_tensor *t = nullptr, *r = nullptr;
        REQUIRE(px_tensor_from_host(rt, cpu0, PX_FLOAT64, 1, &n, data.data(), data.size() * sizeof(double), &t) == PX_OK);
        REQUIRE(px_reduce(op, t, 1, 0, 0, &r) == PX_OK);
        uint64_t bits = 0;
        REQUIRE(px_tensor_to_host(r, &bits, sizeof bits) == PX_OK);
        px_tensor_release(r);
        px_tensor_release(t);
        return bits;
    };
    px_runtime* all = runtime_with_env({{"PLEXUS_CPU_DEVICES", "1"}});
    px_runtime* half = runtime_with_env({{"PLEXUS_CPU_DEVICES", "2"}});
    CHECK(reduce_on(all, PX_OP_SUM) == reduce_on(half, PX_OP_SUM));
    CHECK(reduce_on(all, PX_OP_MEAN) == reduce_on(half, PX_OP_MEAN));
    px_runtime_destroy(half);
    px_runtime_destroy(all);
}

// A sum over the first axis of 200x5000 and of 20000x40 float64: each
// column added in row order, as a plain loop on the host does, bit for bit,
// whether the device splits the columns into blocks for two threads or for
// one (the narrow one is one block either way).
TEST_CASE("PLEXUS_CPU_DEVICES: a sum over an outer axis adds each column in row order whatever the thread count",
          "[host][cpu-abi]") {
    px_runtime* all = runtime_with_env({{"PLEXUS_CPU_DEVICES", "1"}});
    px_runtime* half = runtime_with_env({{"PLEXUS_CPU_DEVICES", "2"}});
    for (const std::array<int64_t, 2> shape : {std::array<int64_t, 2>{200, 5000}, std::array<int64_t, 2>{20000, 40}}) {
        INFO(shape[0] << "x" << shape[1]);
        const size_t rows = size_t(shape[0]), cols = size_t(shape[1]);
        std::vector<double> data(rows * cols);
        uint64_t state = 2463534242ull;
        for (double& v : data) {
            state ^= state << 13, state ^= state >> 7, state ^= state << 17;
            v = double(state >> 11) / 4503599627370496.0 - 1.0;
        }
        std::vector<double> want(cols, 0.0);
        for (size_t k = 0; k < rows; ++k)
            for (size_t j = 0; j < cols; ++j) want[j] += data[k * cols + j];
        auto sum_on = [&](px_runtime* rt) {
            const px_device cpu0{PX_DEVICE_CPU, 0};
            px_tensor *t = nullptr, *r = nullptr;
            REQUIRE(px_tensor_from_host(rt, cpu0, PX_FLOAT64, 2, shape.data(), data.data(), data.size() * sizeof(double),
                                        &t) == PX_OK);
            REQUIRE(px_reduce(PX_OP_SUM, t, 0, 0, 0, &r) == PX_OK);
            std::vector<double> got(cols);
            REQUIRE(px_tensor_to_host(r, got.data(), got.size() * sizeof(double)) == PX_OK);
            px_tensor_release(r);
            px_tensor_release(t);
            return got;
        };
        CHECK(sum_on(all) == want);  // == on doubles: the same values, every one
        CHECK(sum_on(half) == want);
    }
    px_runtime_destroy(half);
    px_runtime_destroy(all);
}
