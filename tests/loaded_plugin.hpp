// A plugin opened with dlopen and called through its C table directly, as any
// host would, for the tests of one plugin's boundary.
#pragma once

#include <catch2/catch.hpp>

#include <dlfcn.h>

#include "plexus/plugin.h"

namespace pxtest {

struct LoadedPlugin {
    void* lib = nullptr;
    const px_plugin_api* api = nullptr;
    px_plugin_context* ctx = nullptr;
    px_plugin_error err{sizeof(px_plugin_error), {0}};

    explicit LoadedPlugin(const char* file) : lib(dlopen(file, RTLD_NOW | RTLD_LOCAL)) {
        INFO((lib ? "" : dlerror()));
        REQUIRE(lib);
        auto get = reinterpret_cast<px_plugin_get_api_fn>(dlsym(lib, PX_PLUGIN_ENTRY_SYMBOL));
        REQUIRE(get);
        api = get();
        REQUIRE(api->create(&ctx, &err) == PX_OK);
    }
    ~LoadedPlugin() {
        api->destroy(ctx);
        dlclose(lib);
    }
    LoadedPlugin(const LoadedPlugin&) = delete;
    LoadedPlugin& operator=(const LoadedPlugin&) = delete;
};

}  // namespace pxtest
