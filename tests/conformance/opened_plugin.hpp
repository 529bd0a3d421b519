// The plugin of the device under test, opened a second time with dlopen and
// called through its table as any host would, for the conformance cases at
// the plugin boundary.
#pragma once

#include <catch2/catch.hpp>

#include <dlfcn.h>

#include <algorithm>
#include <cstring>
#include <exception>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>

#include "../support.hpp"
#include "conformance.hpp"
#include "plexus/plugin.h"

namespace pxconf {

// A C++ exception the plugin let escape a slot called directly, which the
// ABI forbids (R2): conformance_translate.cpp gives Catch its words and
// files it under R2, as the host's PX_ERROR_PLUGIN is when a check meets it
// through the runtime.
struct Escaped : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// What escaped, in the host's words (host/objects.cpp); called in a catch.
inline std::string escaped_what() {
    try {
        throw;
    } catch (const std::exception& e) {
        return std::string("a C++ exception (") + e.what() + ")";
    } catch (...) {
        return "an exception that is not a std::exception";
    }
}

namespace detail {

// The table the plugin returned; one plugin file per check process.
inline const px_plugin_api*& real_api() {
    static const px_plugin_api* api = nullptr;
    return api;
}

// Notes a slot's failure without a message (R2) for the assertion that
// fails on it next (record().unsaid); a caller's error struct too small for
// a message, or none, excuses it.
template <class... A>
px_status noted(const char* slot, px_status status, A... args) {
    px_plugin_error* err = std::get<sizeof...(A) - 1>(std::tuple<A...>(args...));
    if (status != PX_OK && err && err->struct_size >= sizeof *err && err->message[0] == 0)
        record().unsaid = std::string(slot) + "() returned " + std::to_string(int(status)) + " with no message";
    return status;
}

[[noreturn]] inline void escaped(const char* slot) {
    throw Escaped(std::string("the plugin let ") + escaped_what() + " escape " + slot +
                  "() through the C ABI, which forbids it");
}

// The plugin's table with every slot it fills run inside a try block, so
// that an exception escaping a direct call fails the check under R2 naming
// the slot, not as Catch's "Unknown exception" under the check's own tags.
// Everything else (struct_size, versions, names, NULL slots) is the
// plugin's, read no further than its struct_size.
inline const px_plugin_api* guarded(const px_plugin_api* real) {
    static px_plugin_api table;
    real_api() = real;
    std::memset(&table, 0, sizeof table);
    std::memcpy(&table, real, std::min<size_t>(sizeof table, real->struct_size));
#define PXCONF_GUARD_SLOT(slot)                                                          \
    if (table.slot) table.slot = [](auto... args) {                                      \
        record().unsaid.clear();                                                         \
        try {                                                                            \
            if constexpr (std::is_same_v<decltype(real_api()->slot(args...)), px_status>) \
                return noted(#slot, real_api()->slot(args...), args...);                 \
            else                                                                         \
                return real_api()->slot(args...);                                        \
        } catch (...) {                                                                  \
            escaped(#slot);                                                              \
        }                                                                                \
    }
    PXCONF_GUARD_SLOT(create);
    PXCONF_GUARD_SLOT(destroy);
    PXCONF_GUARD_SLOT(device_count);
    PXCONF_GUARD_SLOT(device_info);
    PXCONF_GUARD_SLOT(supports);
    PXCONF_GUARD_SLOT(buffer_alloc);
    PXCONF_GUARD_SLOT(buffer_free);
    PXCONF_GUARD_SLOT(copy_from_host);
    PXCONF_GUARD_SLOT(copy_to_host);
    PXCONF_GUARD_SLOT(copy_device);
    PXCONF_GUARD_SLOT(execute);
    PXCONF_GUARD_SLOT(synchronize);
    PXCONF_GUARD_SLOT(all_reduce);
    PXCONF_GUARD_SLOT(group_make_id);
    PXCONF_GUARD_SLOT(group_join);
    PXCONF_GUARD_SLOT(group_all_reduce);
    PXCONF_GUARD_SLOT(group_leave);
    PXCONF_GUARD_SLOT(buffer_memory);
    PXCONF_GUARD_SLOT(buffer_wrap);
    PXCONF_GUARD_SLOT(trace_enable);
    PXCONF_GUARD_SLOT(execute_traced);
    PXCONF_GUARD_SLOT(trace_take);
#undef PXCONF_GUARD_SLOT
    return &table;
}

}  // namespace detail

// The cause (conformance.hpp) of a destroy() that throws, however many
// checks meet it.
inline const char* const kDestroyThrew = "destroy() let a C++ exception escape";

// The file of the plugin that provides `dev`.
inline std::string plugin_file_of(plexus::Device dev) {
    std::string name = plexus::plugin_of(dev);
    for (const px_plugin_info& info : plexus::plugins())
        if (info.loaded && name == info.name) return info.file;
    FAIL("no loaded plugin named " << name);
    return "";
}

// The plugin opened a second time, with a context of its own and the local
// index of the device under test.
struct Opened {
    void* lib = nullptr;
    const px_plugin_api* api = nullptr;
    px_plugin_context* ctx = nullptr;
    int32_t device = 0;
    px_plugin_error err{sizeof(px_plugin_error), {0}};

    Opened() {
        plexus::Device dev = pxtest::device_under_test();
        std::string file = plugin_file_of(dev);
        INFO("plugin file " << file);
        lib = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
        REQUIRE(lib);
        auto get = reinterpret_cast<px_plugin_get_api_fn>(dlsym(lib, PX_PLUGIN_ENTRY_SYMBOL));
        REQUIRE(get);
        const px_plugin_api* real = get();
        REQUIRE(real);
        REQUIRE(real->struct_size >= sizeof(uint32_t));
        api = detail::guarded(real);
        REQUIRE(api->create(&ctx, &err) == PX_OK);
        // The device's index inside its plugin: its rank among the runtime's
        // devices of that kind from the same plugin.
        std::string mine = plexus::plugin_of(dev);
        for (int i = 0; i < dev.index; ++i) device += plexus::plugin_of(plexus::Device{dev.kind, i}) == mine;
    }
    // destroy() is called here, at the end of every check at the boundary:
    // its failure is filed once, under the clause it breaks, and named, not
    // as a crash of each check that opened the plugin.
    ~Opened() {
        if (api && ctx) {
            const Stage in_destroy("destroy()");  // a crash or a hang in it is named so
            try {
                detail::real_api()->destroy(ctx);
            } catch (...) {  // a destructor must not throw: the check fails and goes on
                PX_FAIL_CHECK_UNDER("R2", kDestroyThrew,
                                    "destroy() let " << escaped_what() << " escape through the C ABI, which forbids it");
            }
        }
        if (lib) dlclose(lib);
    }
    Opened(const Opened&) = delete;
    Opened& operator=(const Opened&) = delete;
    // A failing call must leave a message, ended within the buffer.
    void require_message() {
        INFO("the plugin's message");
        REQUIRE(std::memchr(err.message, 0, sizeof err.message) != nullptr);
        REQUIRE(std::strlen(err.message) > 0);
        err.message[0] = 0;
    }
    // What the plugin wrote into err, read no further than the buffer (a
    // plugin may forget the terminating NUL).
    std::string said() const { return std::string(err.message, strnlen(err.message, sizeof err.message)); }
    // A well-formed call of `op` on `dtype`, which supports() offers, must
    // not be refused as unsupported (R5: supports() answers truthfully):
    // filed under R5 alone, once over the checks that meet it.
    void require_not_refused_as_offered(px_status got, int32_t op, int32_t dtype) const {
        if (got != PX_ERROR_UNSUPPORTED || !api->supports(ctx, device, op, dtype)) return;
        PX_FAIL_UNDER("R5", std::string("supports() said yes to ") + px_op_name(op) + ", execute refused it",
                      "supports() said yes to " << px_op_name(op) << " on " << px_dtype_name(dtype)
                                                << " and execute refused it as unsupported: " << said());
    }
};

// A contiguous 1-D desc of `n` elements of `dtype` in `buf`.
inline px_tensor_desc vector_desc(px_plugin_buffer* buf, int32_t dtype, int64_t n) {
    px_tensor_desc d{};
    d.struct_size = sizeof d;
    d.dtype = dtype;
    d.buffer = buf;
    d.ndim = 1;
    d.shape[0] = n;
    d.strides[0] = 1;
    return d;
}

// A contiguous desc of `dims` of `dtype` at the start of `buf` (NULL for a
// call that is only checked, never run).
inline px_tensor_desc contiguous_desc(px_plugin_buffer* buf, int32_t dtype, std::initializer_list<int64_t> dims) {
    px_tensor_desc d = vector_desc(buf, dtype, 0);
    d.ndim = static_cast<int32_t>(dims.size());
    int64_t stride = 1;
    for (int32_t k = d.ndim - 1; k >= 0; --k) {
        d.shape[k] = dims.begin()[k];
        d.strides[k] = stride;
        stride *= d.shape[k];
    }
    return d;
}

}  // namespace pxconf
