// The C API as an FFI caller (ctypes, cffi) sees it: the version, the name
// and size helpers as exported symbols, and when the last error is cleared.
#include <catch2/catch.hpp>

#include <dlfcn.h>

#include <cstdint>
#include <string>

#include "plexus/plexus.h"
#include "plexus/plugin.h"  // PX_PLUGIN_ABI_MAJOR/MINOR

namespace {

// libplexus opened by file, as an FFI caller opens it (RTLD_NOLOAD is not
// used: the test links it, so this gives the same copy).
void* library() {
    static void* h = dlopen(PLEXUS_LIBRARY_FILE, RTLD_NOW | RTLD_LOCAL);
    REQUIRE(h != nullptr);
    return h;
}

template <class F>
F symbol(const char* name) {
    void* p = dlsym(library(), name);
    INFO(name << " is not exported by " << PLEXUS_LIBRARY_FILE);
    REQUIRE(p != nullptr);
    return reinterpret_cast<F>(p);
}

std::string str(const char* s) { return s ? s : "(null)"; }

}  // namespace

TEST_CASE("px_version gives the library's version, its C ABI and the plugin ABI it loads", "[capi][ffi]") {
    const px_version_info* v = px_version();
    REQUIRE(v != nullptr);
    CHECK(v->struct_size == sizeof(px_version_info));
    CHECK(v->major == PLEXUS_VERSION_MAJOR);
    CHECK(v->minor == PLEXUS_VERSION_MINOR);
    CHECK(v->patch == PLEXUS_VERSION_PATCH);
    CHECK(v->plugin_abi_major == PX_PLUGIN_ABI_MAJOR);
    CHECK(v->plugin_abi_minor == PX_PLUGIN_ABI_MINOR);
    // The CMake project's version, passed to this test independently of plexus.h.
    CHECK(std::string(v->text) == PLEXUS_PROJECT_VERSION);
    // The soname ends in the ABI number: libplexus.so.<abi>.
    CHECK(std::string(PLEXUS_LIBRARY_SONAME) == "libplexus.so." + std::to_string(v->abi));
    // The same struct through dlsym, and it leaves the last error alone.
    CHECK(px_tensor_retain(nullptr) == PX_ERROR_INVALID_HANDLE);
    auto by_name = symbol<const px_version_info* (*)()>("px_version");
    CHECK(by_name() == v);
    CHECK(px_last_status() == PX_ERROR_INVALID_HANDLE);
}

TEST_CASE("the name and size helpers are exported under their own names, with the inline functions' answers",
          "[capi][ffi]") {
    auto dtype_name = symbol<const char* (*)(int32_t)>("px_dtype_name");
    auto dtype_size = symbol<size_t (*)(int32_t)>("px_dtype_size");
    auto dtype_promote = symbol<int32_t (*)(int32_t, int32_t)>("px_dtype_promote");
    auto op_name = symbol<const char* (*)(int32_t)>("px_op_name");
    auto kind_name = symbol<const char* (*)(int32_t)>("px_device_kind_name");
    int names = 0;
    for (int32_t i = -3; i < PX_OP_NUMBER_LIMIT + 3; ++i) {
        INFO("number " << i);
        CHECK(str(dtype_name(i)) == str(::px_dtype_name(i)));
        CHECK(dtype_size(i) == ::px_dtype_size(i));
        for (int32_t j = -1; j < 10; ++j) CHECK(dtype_promote(i, j) == ::px_dtype_promote(i, j));
        CHECK(str(op_name(i)) == str(::px_op_name(i)));
        CHECK(str(kind_name(i)) == str(::px_device_kind_name(i)));
        names += op_name(i) != nullptr;
    }
    // Independent spot checks (not through the inline functions).
    CHECK(str(dtype_name(PX_FLOAT64)) == "float64");
    CHECK(dtype_size(PX_INT64) == 8);
    CHECK(dtype_size(99) == 0);
    CHECK(dtype_name(0) == nullptr);
    CHECK(dtype_promote(PX_UINT8, PX_FLOAT16) == PX_FLOAT16);
    CHECK(dtype_promote(PX_INT32, 99) == 0);
    CHECK(str(op_name(PX_OP_MATMUL)) == "matmul");
    CHECK(op_name(999) == nullptr);
    CHECK(str(kind_name(PX_DEVICE_GPU)) == "gpu");
    CHECK(names >= 40);
}

TEST_CASE("a call that succeeds clears the last error, and the functions without a status leave it", "[capi][ffi]") {
    px_runtime* rt = nullptr;
    REQUIRE(px_runtime_create(nullptr, &rt) == PX_OK);
    CHECK(px_last_status() == PX_OK);
    const px_device cpu0{PX_DEVICE_CPU, 0};
    int64_t n = 3;
    px_tensor* t = nullptr;
    CHECK(px_tensor_full(rt, cpu0, static_cast<px_dtype>(42), 1, &n, 1.0, &t) == PX_ERROR_DTYPE);
    CHECK(px_last_status() == PX_ERROR_DTYPE);
    const std::string message = px_last_error();
    CHECK(message.find("px_tensor_full") == 0);
    // None of these returns a status: the error stays.
    (void)px_status_name(PX_ERROR_SHAPE);
    (void)px_version();
    (void)px_fork_generation();
    (void)px_last_error();
    CHECK(px_last_status() == PX_ERROR_DTYPE);
    CHECK(px_last_error() == message);
    // A success of any function with a status clears it.
    int32_t count = 0;
    CHECK(px_runtime_device_count(rt, PX_DEVICE_CPU, &count) == PX_OK);
    CHECK(px_last_status() == PX_OK);
    CHECK(std::string(px_last_error()).empty());
    // And a new failure replaces it whole.
    CHECK(px_tensor_full(rt, cpu0, PX_FLOAT32, -1, &n, 1.0, &t) == PX_ERROR_SHAPE);  // a rank of -1
    CHECK(px_last_status() == PX_ERROR_SHAPE);
    CHECK(std::string(px_last_error()).find("px_tensor_full") == 0);
    CHECK(std::string(px_last_error()) != message);
    CHECK(t == nullptr);
    CHECK(px_runtime_destroy(rt) == PX_OK);
    CHECK(std::string(px_last_error()).empty());
}
