// Bad input to the C API: every call returns an error status with a message
// naming the function and the problem; nothing crashes or leaks.
#include <catch2/catch.hpp>

#include <utility>

#include <cfloat>
#include <cstdlib>
#include <cmath>
#include <string>
#include <vector>

#include "plexus/plexus.h"

namespace {

struct Fixture {
    px_runtime* rt = nullptr;
    px_device cpu0{PX_DEVICE_CPU, 0};
    Fixture() { REQUIRE(px_runtime_create(nullptr, &rt) == PX_OK); }
    ~Fixture() { px_runtime_destroy(rt); }
    px_tensor* ones(int64_t n, px_dtype d = PX_FLOAT32) {
        px_tensor* t = nullptr;
        REQUIRE(px_tensor_full(rt, cpu0, d, 1, &n, 1.0, &t) == PX_OK);
        return t;
    }
    uint64_t in_use() {
        px_runtime_synchronize(rt, cpu0);
        px_device_info info{};
        info.struct_size = sizeof info;
        REQUIRE(px_runtime_device_info(rt, cpu0, &info) == PX_OK);
        return info.memory_in_use;
    }
};

bool says(const std::string& needle) { return std::string(px_last_error()).find(needle) != std::string::npos; }

}  // namespace

TEST_CASE_METHOD(Fixture, "NULL, released and wrong-kind handles are errors", "[capi][errors]") {
    px_tensor* t = ones(3);
    px_device dev{};
    REQUIRE(px_tensor_release(t) == PX_OK);
    CHECK(px_tensor_device(t, &dev) == PX_ERROR_INVALID_HANDLE);
    CHECK(says("px_tensor_device: 'tensor' is not a live tensor handle (released or never issued)"));
    CHECK(px_tensor_release(t) == PX_ERROR_INVALID_HANDLE);  // double release
    CHECK(px_tensor_retain(nullptr) == PX_ERROR_INVALID_HANDLE);
    CHECK(says("(NULL)"));
    CHECK(px_tensor_release(reinterpret_cast<px_tensor*>(rt)) == PX_ERROR_INVALID_HANDLE);
    CHECK(says("not a handle of this kind"));
    int32_t n = 0;
    CHECK(px_runtime_plugin_count(reinterpret_cast<px_runtime*>(ones(1)), &n) == PX_ERROR_INVALID_HANDLE);
    px_tensor* out = nullptr;
    CHECK(px_binary(PX_OP_ADD, t, t, &out) == PX_ERROR_INVALID_HANDLE);
    CHECK(says("'a'"));
    px_tensor* live = ones(2);
    CHECK(px_binary(PX_OP_ADD, live, t, &out) == PX_ERROR_INVALID_HANDLE);
    CHECK(says("'b'"));
    CHECK(out == nullptr);
    // A slot reused by a new tensor does not revive the old handle.
    px_tensor* fresh = ones(2);
    CHECK(px_tensor_device(t, &dev) == PX_ERROR_INVALID_HANDLE);
    px_tensor_release(fresh);
    px_tensor_release(live);
}

TEST_CASE_METHOD(Fixture, "NULL out-pointers are errors and make nothing", "[capi][errors]") {
    uint64_t before = in_use();
    px_tensor* a = ones(4);
    CHECK(px_binary(PX_OP_ADD, a, a, nullptr) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(says("px_binary: 'out' is NULL"));
    CHECK(px_unary(PX_OP_EXP, a, nullptr) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(px_tensor_copy_to(a, cpu0, nullptr) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(px_tensor_dtype(a, nullptr) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(px_runtime_create(nullptr, nullptr) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(px_tensor_to_host(a, nullptr, 16) == PX_ERROR_INVALID_ARGUMENT);
    px_tensor_release(a);
    CHECK(in_use() == before);
}

TEST_CASE_METHOD(Fixture, "negative, oversized and overflowing shapes are errors before allocating", "[capi][errors]") {
    uint64_t before = in_use();
    px_tensor* t = nullptr;
    int64_t neg[2] = {2, -1};
    CHECK(px_tensor_empty(rt, cpu0, PX_FLOAT32, 2, neg, &t) == PX_ERROR_SHAPE);
    CHECK(says("dimension 1 is negative (-1)"));
    int64_t huge[3] = {int64_t(1) << 40, int64_t(1) << 30, 1 << 10};
    CHECK(px_tensor_empty(rt, cpu0, PX_FLOAT32, 3, huge, &t) == PX_ERROR_SHAPE);
    CHECK(says("more elements than fit in 64 bits"));
    int64_t bytes_overflow[1] = {int64_t(1) << 62};
    CHECK(px_tensor_empty(rt, cpu0, PX_FLOAT64, 1, bytes_overflow, &t) == PX_ERROR_SHAPE);
    CHECK(says("needs more bytes than fit in 64 bits"));
    int64_t too_big[1] = {int64_t(1) << 55};
    CHECK(px_tensor_empty(rt, cpu0, PX_UINT8, 1, too_big, &t) == PX_ERROR_OUT_OF_MEMORY);
    CHECK(says("asked for"));
    int64_t dims[9] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    CHECK(px_tensor_empty(rt, cpu0, PX_FLOAT32, 9, dims, &t) == PX_ERROR_SHAPE);
    CHECK(px_tensor_empty(rt, cpu0, PX_FLOAT32, 2, nullptr, &t) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(px_tensor_empty(rt, cpu0, static_cast<px_dtype>(99), 1, dims, &t) == PX_ERROR_DTYPE);
    CHECK(says("dtype 99 is not a px_dtype"));
    CHECK(t == nullptr);
    CHECK(in_use() == before);
}

TEST_CASE_METHOD(Fixture, "unknown devices and bad values are errors naming them", "[capi][errors]") {
    px_tensor* t = nullptr;
    int64_t n = 2;
    CHECK(px_tensor_empty(rt, px_device{PX_DEVICE_CPU, 7}, PX_FLOAT32, 1, &n, &t) == PX_ERROR_NO_DEVICE);
    CHECK(says("cpu(7) does not exist"));
    CHECK(px_tensor_empty(rt, px_device{PX_DEVICE_GPU, 0}, PX_FLOAT32, 1, &n, &t) == PX_ERROR_NO_DEVICE);
    CHECK(says("no loaded plugin provides gpu devices"));
    CHECK(px_tensor_empty(rt, px_device{42, 0}, PX_FLOAT32, 1, &n, &t) == PX_ERROR_INVALID_ARGUMENT);
    px_tensor* a = ones(2);
    CHECK(px_binary(static_cast<px_op>(PX_OP_EXP), a, a, &t) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(says("not a binary elementwise op"));
    CHECK(px_unary(static_cast<px_op>(1000), a, &t) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(px_reduce(PX_OP_ADD, a, 1, 0, 0, &t) == PX_ERROR_INVALID_ARGUMENT);
    float wrong[3];
    CHECK(px_tensor_to_host(a, wrong, sizeof wrong) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(says("has 12 bytes; the tensor has 8"));
    CHECK(px_tensor_from_host(rt, cpu0, PX_FLOAT32, 1, &n, wrong, sizeof wrong, &t) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(px_concat(nullptr, 2, 0, &t) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(px_concat(&a, 0, 0, &t) == PX_ERROR_INVALID_ARGUMENT);
    int32_t perm[1] = {3};
    CHECK(px_transpose(a, perm, 1, &t) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(px_slice_axis(a, 0, 0, 1, 0, &t) == PX_ERROR_INVALID_ARGUMENT);
    int64_t shape[2];
    CHECK(px_tensor_shape(a, shape, 0) == PX_ERROR_INVALID_ARGUMENT);
    px_plugin_info info{};
    info.struct_size = 4;
    CHECK(px_runtime_plugin_info(rt, 0, &info) == PX_ERROR_INVALID_ARGUMENT);
    info.struct_size = sizeof info;
    CHECK(px_runtime_plugin_info(rt, 99, &info) == PX_ERROR_INVALID_ARGUMENT);
    px_runtime_options bad{sizeof bad, nullptr, 2, 0, 0};
    px_runtime* r2 = nullptr;
    CHECK(px_runtime_create(&bad, &r2) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(t == nullptr);
    px_tensor_release(a);
}

TEST_CASE_METHOD(Fixture, "errors set the thread's last error and a success clears it", "[capi][errors]") {
    px_tensor* t = nullptr;
    CHECK(px_tensor_retain(nullptr) == PX_ERROR_INVALID_HANDLE);
    CHECK(px_last_status() == PX_ERROR_INVALID_HANDLE);
    CHECK(std::string(px_status_name(px_last_status())) == "PX_ERROR_INVALID_HANDLE");
    CHECK(std::string(px_status_name(static_cast<px_status>(77))) == "unknown status");
    const std::pair<px_status, const char*> names[] = {
        {PX_OK, "PX_OK"}, {PX_ERROR_INVALID_ARGUMENT, "PX_ERROR_INVALID_ARGUMENT"},
        {PX_ERROR_INVALID_HANDLE, "PX_ERROR_INVALID_HANDLE"}, {PX_ERROR_DEVICE_MISMATCH, "PX_ERROR_DEVICE_MISMATCH"},
        {PX_ERROR_SHAPE, "PX_ERROR_SHAPE"}, {PX_ERROR_DTYPE, "PX_ERROR_DTYPE"},
        {PX_ERROR_OUT_OF_MEMORY, "PX_ERROR_OUT_OF_MEMORY"}, {PX_ERROR_UNSUPPORTED, "PX_ERROR_UNSUPPORTED"},
        {PX_ERROR_NO_DEVICE, "PX_ERROR_NO_DEVICE"}, {PX_ERROR_PLUGIN, "PX_ERROR_PLUGIN"},
        {PX_ERROR_DEVICE, "PX_ERROR_DEVICE"}, {PX_ERROR_INTERNAL, "PX_ERROR_INTERNAL"}};
    for (auto [status, name] : names) CHECK(std::string(px_status_name(status)) == name);
    CHECK(px_last_status() == PX_ERROR_INVALID_HANDLE);  // the functions without a status leave it
    t = ones(1);
    CHECK(px_last_status() == PX_OK);
    CHECK(std::string(px_last_error()).empty());
    px_tensor_release(t);
}

TEST_CASE_METHOD(Fixture, "a thousand ops with errors in between leak nothing", "[capi][errors]") {
    uint64_t before = in_use();
    px_tensor* a = ones(1000);
    px_tensor* b = ones(999);
    for (int i = 0; i < 1000; ++i) {
        px_tensor* c = nullptr;
        REQUIRE(px_binary(PX_OP_ADD, a, b, &c) == PX_ERROR_SHAPE);
        REQUIRE(px_binary(PX_OP_ADD, a, a, &c) == PX_OK);
        REQUIRE(px_tensor_release(c) == PX_OK);
    }
    px_tensor_release(a);
    px_tensor_release(b);
    CHECK(in_use() == before);
}

TEST_CASE("a runtime destroyed while tensors live keeps their plugin loaded", "[capi][lifetime]") {
    px_runtime* rt = nullptr;
    REQUIRE(px_runtime_create(nullptr, &rt) == PX_OK);
    int64_t n = 4;
    px_tensor* t = nullptr;
    REQUIRE(px_tensor_full(rt, px_device{PX_DEVICE_CPU, 0}, PX_FLOAT32, 1, &n, 2.5, &t) == PX_OK);
    REQUIRE(px_runtime_destroy(rt) == PX_OK);
    CHECK(px_runtime_destroy(rt) == PX_ERROR_INVALID_HANDLE);
    px_tensor* u = nullptr;
    REQUIRE(px_binary(PX_OP_MUL, t, t, &u) == PX_OK);  // the plugin is still there
    float v[4];
    REQUIRE(px_tensor_to_host(u, v, sizeof v) == PX_OK);
    CHECK(v[3] == 6.25f);
    px_tensor* moved = nullptr;
    CHECK(px_tensor_copy_to(u, px_device{PX_DEVICE_CPU, 1}, &moved) == PX_ERROR_NO_DEVICE);  // another device: looked up
    CHECK(says("was destroyed"));
    px_tensor_release(u);
    px_tensor_release(t);  // the last reference: the plugin unloads here
}

TEST_CASE_METHOD(Fixture, "tensors of two runtimes on devices of one name are not mixed, and the error says so",
                 "[capi][errors]") {
    px_runtime* other = nullptr;
    REQUIRE(px_runtime_create(nullptr, &other) == PX_OK);
    int64_t n = 4;
    px_tensor *mine = ones(4), *theirs = nullptr, *sum = nullptr;
    REQUIRE(px_tensor_full(other, cpu0, PX_FLOAT32, 1, &n, 1.0, &theirs) == PX_OK);
    CHECK(px_binary(PX_OP_ADD, mine, theirs, &sum) == PX_ERROR_DEVICE_MISMATCH);
    CHECK(sum == nullptr);
    CHECK(says("px_binary: add: inputs are on cpu(0) of two different runtimes"));
    px_tensor_release(theirs);
    px_tensor_release(mine);
    REQUIRE(px_runtime_destroy(other) == PX_OK);
}

TEST_CASE("a hint names the C function for C callers and the call in C++ and in Python", "[capi][errors]") {
    ::setenv("PLEXUS_CPU_DEVICES", "2", 1);  // read by the CPU plugin as each runtime loads it
    px_runtime *rt = nullptr, *other = nullptr;
    REQUIRE(px_runtime_create(nullptr, &rt) == PX_OK);
    REQUIRE(px_runtime_create(nullptr, &other) == PX_OK);
    ::unsetenv("PLEXUS_CPU_DEVICES");
    int64_t n = 4;
    const px_device cpu0{PX_DEVICE_CPU, 0}, cpu1{PX_DEVICE_CPU, 1};
    px_tensor *a = nullptr, *b = nullptr, *theirs = nullptr, *on1 = nullptr, *out = nullptr;
    REQUIRE(px_tensor_full(rt, cpu0, PX_FLOAT32, 1, &n, 1.0, &a) == PX_OK);
    REQUIRE(px_tensor_full(rt, cpu0, PX_INT32, 1, &n, 1.0, &b) == PX_OK);
    REQUIRE(px_tensor_full(other, cpu0, PX_FLOAT32, 1, &n, 1.0, &theirs) == PX_OK);
    REQUIRE(px_tensor_full(rt, cpu1, PX_FLOAT32, 1, &n, 1.0, &on1) == PX_OK);
    CHECK(px_binary(PX_OP_ADD, a, theirs, &out) == PX_ERROR_DEVICE_MISMATCH);
    CHECK(says("(copy one through the host: px_tensor_to_host and px_tensor_from_host in C, to_vector() and array() "
               "in C++, asnumpy() and array() in Python)"));
    CHECK(px_binary(PX_OP_ADD, a, on1, &out) == PX_ERROR_DEVICE_MISMATCH);
    CHECK(says("px_binary: add: inputs are on different devices, cpu(0) and cpu(1); move one explicitly: "
               "px_tensor_copy_to in C, x.copyto(cpu(0)) or x.as_in_context(cpu(0)) in C++ and Python (Plexus never "
               "copies between devices implicitly)"));
    // (Elementwise ops promote two dtypes; matmul, as PyTorch's, wants one.)
    CHECK(px_matmul(a, b, &out) == PX_ERROR_DTYPE);
    CHECK(says("px_matmul: matmul: dtypes differ, float32 and int32; cast one: px_cast in C, x.astype(DType::float32) "
               "in C++, x.astype('float32') in Python"));
    // The integer input first: the cast suggested is still to the float dtype.
    CHECK(px_matmul(b, a, &out) == PX_ERROR_DTYPE);
    CHECK(says("px_matmul: matmul: dtypes differ, int32 and float32; cast one: px_cast in C, x.astype(DType::float32) "
               "in C++, x.astype('float32') in Python"));
    CHECK(out == nullptr);
    for (px_tensor* t : {a, b, theirs, on1}) px_tensor_release(t);
    REQUIRE(px_runtime_destroy(other) == PX_OK);
    REQUIRE(px_runtime_destroy(rt) == PX_OK);
}

TEST_CASE_METHOD(Fixture, "every router check answers with its own error", "[capi][errors]") {
    px_tensor* t = nullptr;
    int64_t two = 2;
    CHECK(px_tensor_full(rt, cpu0, PX_INT32, 1, &two, NAN, &t) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(says("fill: NaN cannot be stored in int32"));
    CHECK(px_tensor_arange(rt, cpu0, PX_FLOAT32, 0, 1e19, 1, &t) == PX_ERROR_SHAPE);
    CHECK(px_tensor_arange(rt, cpu0, PX_FLOAT32, 0, INFINITY, 1, &t) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(px_tensor_random_normal(rt, cpu0, PX_FLOAT32, 1, &two, 0, -1, &t) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(says("standard deviation -1 is negative"));
    CHECK(px_tensor_random_uniform(rt, cpu0, PX_FLOAT32, 1, &two, 0, NAN, &t) == PX_ERROR_INVALID_ARGUMENT);
    // Issue 37: a span past the largest double gave values outside [low, high).
    CHECK(px_tensor_random_uniform(rt, cpu0, PX_FLOAT64, 1, &two, -DBL_MAX, DBL_MAX, &t) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(says("random_uniform: the span from"));
    CHECK(says("is larger than the largest double"));
    REQUIRE(px_tensor_random_uniform(rt, cpu0, PX_FLOAT64, 1, &two, -DBL_MAX / 2, DBL_MAX / 2, &t) == PX_OK);
    double got[2] = {};
    REQUIRE(px_tensor_to_host(t, got, sizeof got) == PX_OK);
    CHECK((std::isfinite(got[0]) && std::isfinite(got[1])));
    px_tensor_release(t);
    t = nullptr;
    px_tensor* a = ones(6);
    int64_t two_infer[2] = {-1, -1};
    CHECK(px_tensor_reshape(a, 2, two_infer, &t) == PX_ERROR_SHAPE);
    CHECK(says("only one dimension may be -1"));
    int64_t bad_infer[2] = {4, -1};
    CHECK(px_tensor_reshape(a, 2, bad_infer, &t) == PX_ERROR_SHAPE);
    int64_t neg[1] = {-3};
    CHECK(px_tensor_reshape(a, 1, neg, &t) == PX_ERROR_SHAPE);
    px_tensor *one = ones(1), *scalar = nullptr;
    REQUIRE(px_tensor_reshape(one, 0, nullptr, &scalar) == PX_OK);
    CHECK(px_tensor_slice(scalar, 0, 1, &t) == PX_ERROR_SHAPE);
    CHECK(px_reduce(PX_OP_SUM, scalar, 0, 0, 0, &t) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(px_slice_axis(scalar, 0, 0, 1, 1, &t) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(px_concat(&scalar, 1, 0, &t) == PX_ERROR_SHAPE);
    int64_t s3[3] = {2, 2, 2}, s3b[3] = {3, 2, 2};
    px_tensor *b1 = nullptr, *b2 = nullptr;
    REQUIRE(px_tensor_full(rt, cpu0, PX_FLOAT32, 3, s3, 1, &b1) == PX_OK);
    REQUIRE(px_tensor_full(rt, cpu0, PX_FLOAT32, 3, s3b, 1, &b2) == PX_OK);
    CHECK(px_matmul(b1, b2, &t) == PX_ERROR_SHAPE);
    CHECK(says("batch sizes differ"));
    CHECK(px_transpose(b1, nullptr, 0, &t) == PX_OK);  // NULL perm reverses the axes
    px_tensor_release(t);
    t = nullptr;
    int32_t perm2[2] = {0, 1};
    CHECK(px_transpose(b1, perm2, 2, &t) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(px_cast(a, static_cast<px_dtype>(0), &t) == PX_ERROR_DTYPE);
    px_device_info info{};
    info.struct_size = 2;
    CHECK(px_runtime_device_info(rt, cpu0, &info) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(px_runtime_device_count(rt, 9, nullptr) == PX_ERROR_INVALID_ARGUMENT);
    const char* plugin = nullptr;
    REQUIRE(px_runtime_device_plugin(rt, cpu0, &plugin) == PX_OK);
    CHECK(std::string(plugin) == "cpu");
    CHECK(t == nullptr);
    for (px_tensor* x : {a, one, scalar, b1, b2}) px_tensor_release(x);
}

TEST_CASE_METHOD(Fixture, "the runtime's settings refuse a bad handle and take effect on a good one", "[capi][errors]") {
    CHECK(px_runtime_seed(nullptr, 1) == PX_ERROR_INVALID_HANDLE);
    CHECK(says("px_runtime_seed"));
    CHECK(px_runtime_allow_tf32(nullptr, 1) == PX_ERROR_INVALID_HANDLE);
    CHECK(says("px_runtime_allow_tf32"));
    // TF32 is a request plugins may ignore: the CPU plugin's float32 product is unchanged.
    px_tensor* a = ones(4);
    px_tensor* before = nullptr;
    px_tensor* after = nullptr;
    int64_t shape[2] = {2, 2};
    px_tensor* m = nullptr;
    REQUIRE(px_tensor_reshape(a, 2, shape, &m) == PX_OK);
    REQUIRE(px_matmul(m, m, &before) == PX_OK);
    REQUIRE(px_runtime_allow_tf32(rt, 1) == PX_OK);
    REQUIRE(px_matmul(m, m, &after) == PX_OK);
    float x[4], y[4];
    REQUIRE(px_tensor_to_host(before, x, sizeof x) == PX_OK);
    REQUIRE(px_tensor_to_host(after, y, sizeof y) == PX_OK);
    CHECK(x[3] == 2.0f);
    CHECK(y[3] == 2.0f);
    for (px_tensor* t : {a, m, before, after}) px_tensor_release(t);
}

TEST_CASE_METHOD(Fixture, "a refused dropout or random tensor leaves the random stream where it was", "[capi][errors]") {
    auto offset_now = [&] {
        uint64_t seed = 0, offset = 0;
        REQUIRE(px_runtime_random_state(rt, &seed, &offset) == PX_OK);
        return offset;
    };
    px_tensor *x = ones(1000), *ints = ones(1000, PX_INT32), *out = nullptr;
    uint64_t seed = 0, offset = 0;
    const uint64_t start = offset_now();
    CHECK(px_dropout(x, 1.5, &seed, &offset, &out) == PX_ERROR_INVALID_ARGUMENT);  // p outside [0, 1)
    CHECK(px_dropout(x, -0.1, &seed, &offset, &out) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(px_dropout(ints, 0.5, &seed, &offset, &out) == PX_ERROR_DTYPE);
    const int64_t four = 4;
    CHECK(px_tensor_random_uniform(rt, cpu0, PX_INT32, 1, &four, 0, 1, &out) == PX_ERROR_DTYPE);
    CHECK(offset_now() == start);  // each refusal had taken 1000 draws from the stream
    CHECK(out == nullptr);
    REQUIRE(px_dropout(x, 0.5, &seed, &offset, &out) == PX_OK);
    CHECK(offset == start);
    CHECK(offset_now() == start + 1000);
    for (px_tensor* t : {x, ints, out}) px_tensor_release(t);
}

TEST_CASE("a tensor whose runtime was destroyed: a dropout or a copy elsewhere names the runtime and a copy to its own device works", "[capi][errors]") {
    px_runtime* rt = nullptr;
    REQUIRE(px_runtime_create(nullptr, &rt) == PX_OK);
    const int64_t n = 8;
    px_tensor *x = nullptr, *out = nullptr;
    REQUIRE(px_tensor_full(rt, px_device{PX_DEVICE_CPU, 0}, PX_FLOAT32, 1, &n, 1.0, &x) == PX_OK);
    REQUIRE(px_runtime_destroy(rt) == PX_OK);  // x lives on
    uint64_t seed = 0, offset = 0;
    CHECK(px_dropout(x, 0.5, &seed, &offset, &out) == PX_ERROR_NO_DEVICE);  // it had been INVALID_HANDLE
    CHECK(says("px_dropout: the runtime of this tensor (on cpu(0)) was destroyed; its random stream is gone"));
    CHECK(px_tensor_copy_to(x, px_device{PX_DEVICE_CPU, 1}, &out) == PX_ERROR_NO_DEVICE);
    CHECK(says("px_tensor_copy_to: the runtime of this tensor (on cpu(0)) was destroyed; other devices can no longer be "
               "looked up"));
    CHECK(out == nullptr);
    // Its own device needs no lookup (both had failed): a copy there, and as_on gives the tensor itself.
    REQUIRE(px_tensor_copy_to(x, px_device{PX_DEVICE_CPU, 0}, &out) == PX_OK);
    float got[8] = {};
    REQUIRE(px_tensor_to_host(out, got, sizeof got) == PX_OK);
    CHECK(got[0] == 1.0f);
    CHECK(got[7] == 1.0f);
    REQUIRE(px_tensor_release(out) == PX_OK);
    REQUIRE(px_tensor_as_on(x, px_device{PX_DEVICE_CPU, 0}, &out) == PX_OK);
    CHECK(out == x);
    REQUIRE(px_tensor_release(out) == PX_OK);
    REQUIRE(px_tensor_release(x) == PX_OK);
}

TEST_CASE_METHOD(Fixture, "the random stream refuses draws past 2^64 rather than wrapping to its start", "[capi][errors]") {
    REQUIRE(px_runtime_set_random_state(rt, 5, UINT64_MAX - 4) == PX_OK);
    const int64_t four = 4, two = 2;
    px_tensor* t = nullptr;
    REQUIRE(px_tensor_random_uniform(rt, cpu0, PX_FLOAT32, 1, &four, 0, 1, &t) == PX_OK);  // the last four
    px_tensor_release(t);
    t = nullptr;
    CHECK(px_tensor_random_uniform(rt, cpu0, PX_FLOAT32, 1, &two, 0, 1, &t) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(says("the random stream's offset 18446744073709551615 has no room for 2 more draws before 2^64"));
    CHECK(t == nullptr);
    uint64_t seed = 0, offset = 0;
    REQUIRE(px_runtime_random_state(rt, &seed, &offset) == PX_OK);
    CHECK(offset == UINT64_MAX);  // unchanged by the refusal (it had wrapped to 1, repeating the stream)
}

TEST_CASE_METHOD(Fixture, "px_tensor_assign writes in place where every holder and view sees it and refuses mismatches",
                 "[capi][assign]") {
    auto values = [](px_tensor* t, int n) {
        std::vector<float> v(size_t(n), -1.0f);
        REQUIRE(px_tensor_to_host(t, v.data(), uint64_t(n) * sizeof(float)) == PX_OK);
        return v;
    };
    const int64_t shape[2] = {2, 3};
    const float src_values[6] = {1, 2, 3, 4, 5, 6};
    px_tensor *dst = nullptr, *src = nullptr, *row = nullptr, *flat = nullptr, *copy = nullptr;
    REQUIRE(px_tensor_full(rt, cpu0, PX_FLOAT32, 2, shape, 0.0, &dst) == PX_OK);
    REQUIRE(px_tensor_from_host(rt, cpu0, PX_FLOAT32, 2, shape, src_values, sizeof src_values, &src) == PX_OK);
    REQUIRE(px_tensor_slice(dst, 1, 2, &row) == PX_OK);  // a view of dst's second row
    const int64_t six = 6;
    REQUIRE(px_tensor_reshape(dst, 1, &six, &flat) == PX_OK);
    REQUIRE(px_tensor_copy_to(dst, cpu0, &copy) == PX_OK);  // its own memory
    REQUIRE(px_tensor_retain(dst) == PX_OK);              // a second holder of the same handle
    REQUIRE(px_tensor_assign(dst, src) == PX_OK);
    CHECK(values(dst, 6) == std::vector<float>{1, 2, 3, 4, 5, 6});
    CHECK(values(flat, 6) == std::vector<float>{1, 2, 3, 4, 5, 6});
    CHECK(values(row, 3) == std::vector<float>{4, 5, 6});
    CHECK(values(copy, 6) == std::vector<float>{0, 0, 0, 0, 0, 0});
    // Into a view: the tensor it is a view of sees it.
    px_tensor* sevens = nullptr;
    const int64_t row_shape[2] = {1, 3};
    REQUIRE(px_tensor_full(rt, cpu0, PX_FLOAT32, 2, row_shape, 7.0, &sevens) == PX_OK);
    REQUIRE(px_tensor_assign(row, sevens) == PX_OK);
    CHECK(values(dst, 6) == std::vector<float>{1, 2, 3, 7, 7, 7});
    // Ordered after the ops queued before it: they read the old values.
    px_tensor* doubled = nullptr;
    REQUIRE(px_binary_scalar(PX_OP_MUL, dst, 2.0, 0, &doubled) == PX_OK);
    REQUIRE(px_tensor_assign(dst, copy) == PX_OK);
    CHECK(values(doubled, 6) == std::vector<float>{2, 4, 6, 14, 14, 14});
    CHECK(values(dst, 6) == std::vector<float>{0, 0, 0, 0, 0, 0});
    REQUIRE(px_tensor_assign(dst, dst) == PX_OK);  // the same memory: nothing to do
    // Refused, naming what differs; nothing written.
    px_tensor* three = ones(3);
    CHECK(px_tensor_assign(dst, three) == PX_ERROR_SHAPE);
    CHECK(says("px_tensor_assign: the values have shape (3,), the tensor (2, 3); they must be the same"));
    px_tensor* ints = nullptr;
    REQUIRE(px_tensor_full(rt, cpu0, PX_INT32, 2, shape, 1.0, &ints) == PX_OK);
    CHECK(px_tensor_assign(dst, ints) == PX_ERROR_DTYPE);
    CHECK(says("the values are int32, the tensor float32; cast them first"));
    px_tensor *first = nullptr, *second = nullptr;
    const int64_t eight = 8;
    px_tensor* long_one = nullptr;
    REQUIRE(px_tensor_full(rt, cpu0, PX_FLOAT32, 1, &eight, 1.0, &long_one) == PX_OK);
    REQUIRE(px_tensor_slice(long_one, 0, 5, &first) == PX_OK);
    REQUIRE(px_tensor_slice(long_one, 3, 8, &second) == PX_OK);
    CHECK(px_tensor_assign(first, second) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(says("overlapping parts of one tensor's memory"));
    CHECK(px_tensor_assign(nullptr, src) == PX_ERROR_INVALID_HANDLE);
    CHECK(says("px_tensor_assign: 'dst' is not a live tensor handle"));
    CHECK(px_tensor_assign(dst, nullptr) == PX_ERROR_INVALID_HANDLE);
    CHECK(says("px_tensor_assign: 'src' is not a live tensor handle"));
    CHECK(values(dst, 6) == std::vector<float>{0, 0, 0, 0, 0, 0});
    for (px_tensor* t : {dst, dst, src, row, flat, copy, sevens, doubled, three, ints, first, second, long_one})
        REQUIRE(px_tensor_release(t) == PX_OK);
}

TEST_CASE_METHOD(Fixture, "px_tensor_assign_region writes a stepped region from broadcast values and refuses what does "
                          "not fit",
                 "[capi][assign]") {
    auto values = [](px_tensor* t, int n) {
        std::vector<double> v(size_t(n), -1.0);
        REQUIRE(px_tensor_to_host(t, v.data(), uint64_t(n) * sizeof(double)) == PX_OK);
        return v;
    };
    const int64_t shape[2] = {4, 5}, twenty = 20, row_shape[1] = {2}, col_shape[2] = {2, 1};
    px_tensor *t = nullptr, *row = nullptr, *col = nullptr, *nine = nullptr, *flat = nullptr, *view = nullptr,
              *ints = nullptr;
    REQUIRE(px_tensor_full(rt, cpu0, PX_FLOAT64, 2, shape, 0.0, &t) == PX_OK);
    const double row_values[2] = {1, 2}, col_values[2] = {10, 20};
    REQUIRE(px_tensor_from_host(rt, cpu0, PX_FLOAT64, 1, row_shape, row_values, sizeof row_values, &row) == PX_OK);
    REQUIRE(px_tensor_from_host(rt, cpu0, PX_FLOAT64, 2, col_shape, col_values, sizeof col_values, &col) == PX_OK);
    REQUIRE(px_tensor_full(rt, cpu0, PX_FLOAT64, 0, nullptr, 9.0, &nine) == PX_OK);
    REQUIRE(px_tensor_reshape(t, 1, &twenty, &flat) == PX_OK);
    // t[1:4:2, 0:4:3] = [1, 2] (a row broadcast down the rows).
    const int64_t start[2] = {1, 0}, step[2] = {2, 3}, count[2] = {2, 2};
    REQUIRE(px_tensor_assign_region(t, start, step, count, row) == PX_OK);
    CHECK(values(t, 20) == std::vector<double>{0, 0, 0, 0, 0, 1, 0, 0, 2, 0, 0, 0, 0, 0, 0, 1, 0, 0, 2, 0});
    // t[0:2, 4] = [[10], [20]] (a column), then t[3, :] = 9 (a scalar).
    const int64_t start2[2] = {0, 4}, step2[2] = {1, 1}, count2[2] = {2, 1};
    REQUIRE(px_tensor_assign_region(t, start2, step2, count2, col) == PX_OK);
    const int64_t start3[2] = {3, 0}, count3[2] = {1, 5};
    REQUIRE(px_tensor_assign_region(t, start3, step2, count3, nine) == PX_OK);
    CHECK(values(flat, 20) == std::vector<double>{0, 0, 0, 0, 10, 1, 0, 0, 2, 20, 0, 0, 0, 0, 0, 9, 9, 9, 9, 9});
    // Values that share t's memory are read before they are overwritten: flat[1:20] = flat[0:19].
    REQUIRE(px_tensor_slice(flat, 0, 19, &view) == PX_OK);
    const int64_t one = 1, nineteen = 19;
    REQUIRE(px_tensor_assign_region(flat, &one, &one, &nineteen, view) == PX_OK);
    CHECK(values(flat, 20) == std::vector<double>{0, 0, 0, 0, 0, 10, 1, 0, 0, 2, 20, 0, 0, 0, 0, 0, 9, 9, 9, 9});
    // An empty region writes nothing.
    const int64_t none[2] = {0, 0};
    REQUIRE(px_tensor_assign_region(t, start, step, none, nine) == PX_OK);
    // Refused, naming what is wrong; nothing written.
    const std::vector<double> before = values(t, 20);
    const int64_t bad_step[2] = {2, 0};
    CHECK(px_tensor_assign_region(t, start, bad_step, count, row) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(says("px_tensor_assign_region: step[1] is 0; it must be at least 1"));
    const int64_t negative[2] = {-1, 2};
    CHECK(px_tensor_assign_region(t, start, step, negative, row) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(says("count[0] is -1; it must not be negative"));
    const int64_t far[2] = {5, 0};
    CHECK(px_tensor_assign_region(t, far, step, count, row) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(says("start[0] is 5, outside axis 0's [0, 4]"));
    const int64_t too_many[2] = {3, 2};  // rows 1 and 3, then 5: past 4
    CHECK(px_tensor_assign_region(t, start, step, too_many, row) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(says("count[0] places from 1 by 2 reach past axis 0's length 4"));
    const int64_t at_end[2] = {4, 0};
    CHECK(px_tensor_assign_region(t, at_end, step, count, row) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(says("count[0] places from 4 by 2 reach past axis 0's length 4"));
    CHECK(px_tensor_assign_region(t, start, step, count2, row) == PX_ERROR_SHAPE);  // (2,) into (2, 1)
    CHECK(says("the values have shape (2,), which does not broadcast to the region's (2, 1)"));
    CHECK(px_tensor_assign_region(t, nullptr, step, count, row) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(says("'start' is NULL; start, step and count each hold one value per axis of the tensor (2)"));
    REQUIRE(px_tensor_full(rt, cpu0, PX_INT32, 1, row_shape, 1.0, &ints) == PX_OK);
    CHECK(px_tensor_assign_region(t, start, step, count, ints) == PX_ERROR_DTYPE);
    CHECK(says("the values are int32, the tensor float64; cast them first"));
    CHECK(values(t, 20) == before);
    for (px_tensor* x : {t, row, col, nine, flat, view, ints}) REQUIRE(px_tensor_release(x) == PX_OK);
}

TEST_CASE_METHOD(Fixture, "px_tensor_version counts the writes in place to memory every view of it shares",
                 "[capi][assign]") {
    auto version = [](px_tensor* t) {
        uint64_t v = 99;
        REQUIRE(px_tensor_version(t, &v) == PX_OK);
        return v;
    };
    const int64_t shape[2] = {2, 3}, six = 6, row_shape[2] = {1, 3};
    px_tensor *t = nullptr, *row = nullptr, *flat = nullptr, *copy = nullptr, *sevens = nullptr, *grad = nullptr,
              *momentum = nullptr, *sum = nullptr;
    REQUIRE(px_tensor_full(rt, cpu0, PX_FLOAT32, 2, shape, 1.0, &t) == PX_OK);
    REQUIRE(px_tensor_slice(t, 1, 2, &row) == PX_OK);
    REQUIRE(px_tensor_reshape(t, 1, &six, &flat) == PX_OK);
    REQUIRE(px_tensor_copy_to(t, cpu0, &copy) == PX_OK);
    REQUIRE(px_tensor_full(rt, cpu0, PX_FLOAT32, 2, row_shape, 7.0, &sevens) == PX_OK);
    CHECK(version(t) == 0);     // made, not written in place
    CHECK(version(copy) == 0);  // a copy is made, not written in place
    REQUIRE(px_tensor_assign(row, sevens) == PX_OK);  // through a view: the whole memory counts it
    CHECK(version(t) == 1);
    CHECK(version(flat) == 1);
    CHECK(version(copy) == 0);  // its own memory
    REQUIRE(px_tensor_assign(t, t) == PX_OK);  // the same elements: nothing is written
    CHECK(version(t) == 1);
    REQUIRE(px_binary(PX_OP_ADD, t, t, &sum) == PX_OK);  // reads t, writes a new tensor
    CHECK(version(t) == 1);
    REQUIRE(px_tensor_full(rt, cpu0, PX_FLOAT32, 2, shape, 0.5, &grad) == PX_OK);
    REQUIRE(px_tensor_full(rt, cpu0, PX_FLOAT32, 2, shape, 0.0, &momentum) == PX_OK);
    REQUIRE(px_sgd_update(t, grad, momentum, 0.1, 0.9, 0.0, 1.0) == PX_OK);  // param and momentum in place
    CHECK(version(row) == 2);
    CHECK(version(momentum) == 1);
    CHECK(version(grad) == 0);
    CHECK(px_sgd_update(t, grad, momentum, -1.0, 0.9, 0.0, 1.0) == PX_ERROR_INVALID_ARGUMENT);  // refused: no write
    CHECK(version(t) == 2);
    CHECK(version(momentum) == 1);
    uint64_t* none = nullptr;
    CHECK(px_tensor_version(t, none) == PX_ERROR_INVALID_ARGUMENT);
    for (px_tensor* h : {t, row, flat, copy, sevens, grad, momentum, sum}) REQUIRE(px_tensor_release(h) == PX_OK);
}

TEST_CASE("px_tensor_assign copies between devices", "[capi][assign]") {
    setenv("PLEXUS_CPU_DEVICES", "2", 1);  // read when the runtime loads the plugin
    px_runtime* rt = nullptr;
    REQUIRE(px_runtime_create(nullptr, &rt) == PX_OK);
    px_device cpu1{PX_DEVICE_CPU, 1};
    px_tensor *a = nullptr, *b = nullptr;
    const int64_t n = 4;
    REQUIRE(px_tensor_full(rt, px_device{PX_DEVICE_CPU, 0}, PX_FLOAT64, 1, &n, 3.0, &a) == PX_OK);
    REQUIRE(px_tensor_full(rt, cpu1, PX_FLOAT64, 1, &n, 0.0, &b) == PX_OK);  // CTest sets PLEXUS_CPU_DEVICES=2
    REQUIRE(px_tensor_assign(b, a) == PX_OK);
    double v[4] = {};
    REQUIRE(px_tensor_to_host(b, v, sizeof v) == PX_OK);
    CHECK((v[0] == 3.0 && v[3] == 3.0));
    px_device where{};
    REQUIRE(px_tensor_device(b, &where) == PX_OK);
    CHECK(where.index == 1);
    px_tensor_release(a);
    px_tensor_release(b);
    px_runtime_destroy(rt);
    unsetenv("PLEXUS_CPU_DEVICES");
}

TEST_CASE("a copy between two devices reports its source's failure without copying and runs after its destination's",
          "[capi][assign]") {
    setenv("PLEXUS_CPU_DEVICES", "2", 1);
    px_runtime* rt = nullptr;
    REQUIRE(px_runtime_create(nullptr, &rt) == PX_OK);
    const px_device cpu0{PX_DEVICE_CPU, 0}, cpu1{PX_DEVICE_CPU, 1};
    const int64_t n = 4;
    auto full = [&](px_device d, px_dtype t, double v) {
        px_tensor* out = nullptr;
        REQUIRE(px_tensor_full(rt, d, t, 1, &n, v, &out) == PX_OK);
        return out;
    };
    auto fail_on = [&](px_device d) {  // an integer division by zero, found when it runs
        px_tensor *num = full(d, PX_INT32, 6.0), *zero = full(d, PX_INT32, 0.0), *q = nullptr;
        REQUIRE(px_binary(PX_OP_DIV, num, zero, &q) == PX_OK);
        for (px_tensor* t : {num, zero, q}) px_tensor_release(t);
    };
    auto values = [&](px_tensor* t) {
        double v[4] = {};
        REQUIRE(px_tensor_to_host(t, v, sizeof v) == PX_OK);
        return std::vector<double>(v, v + 4);
    };
    px_tensor *src = full(cpu1, PX_FLOAT64, 5.0), *dst = full(cpu0, PX_FLOAT64, 9.0);
    // The source's: the copy reads it, a waiting point (the values a failure
    // spoiled would otherwise reach a device whose waits cannot report it).
    fail_on(cpu1);
    CHECK(px_tensor_assign(dst, src) == PX_ERROR_DEVICE);
    CHECK(says("div"));
    CHECK(says("the copy was not made"));  // it had said only "div failed", the values left as they were
    CHECK(values(dst) == std::vector<double>(4, 9.0));
    CHECK(px_runtime_synchronize(rt, cpu1) == PX_OK);  // reported once
    // The destination's: the copy runs, and the failure waits for its device's next wait.
    fail_on(cpu0);
    REQUIRE(px_tensor_assign(dst, src) == PX_OK);  // it had reported cpu(0)'s failure and copied nothing
    CHECK(px_runtime_synchronize(rt, cpu0) == PX_ERROR_DEVICE);
    CHECK(says("div"));
    CHECK(values(dst) == std::vector<double>(4, 5.0));
    for (px_tensor* t : {src, dst}) px_tensor_release(t);
    px_runtime_destroy(rt);
    unsetenv("PLEXUS_CPU_DEVICES");
}
