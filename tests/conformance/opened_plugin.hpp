// The plugin of the device under test, opened a second time with dlopen and
// called through its table as any host would, for the conformance cases at
// the plugin boundary.
#pragma once

#include <catch2/catch.hpp>

#include <dlfcn.h>

#include <cstring>
#include <initializer_list>
#include <string>

#include "../support.hpp"
#include "plexus/plugin.h"

namespace pxconf {

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
        api = get();
        REQUIRE(api);
        REQUIRE(api->create(&ctx, &err) == PX_OK);
        // The device's index inside its plugin: its rank among the runtime's
        // devices of that kind from the same plugin.
        std::string mine = plexus::plugin_of(dev);
        for (int i = 0; i < dev.index; ++i) device += plexus::plugin_of(plexus::Device{dev.kind, i}) == mine;
    }
    ~Opened() {
        if (api && ctx) api->destroy(ctx);
        if (lib) dlclose(lib);
    }
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
