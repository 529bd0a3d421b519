// A runtime over exactly the plugin files given (or the default search),
// for the host tests of loading, faults and collectives.
#pragma once

#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include "plexus/plexus.h"

namespace pxtest {

// Options that load exactly `paths` (n of them), with a load time-out in
// seconds (0: the default; below 0: none).
inline px_runtime_options only_these(const char* const* paths, int32_t n, double timeout_s = 0) {
    px_runtime_options o{};
    o.struct_size = sizeof o;
    o.plugin_paths = paths;
    o.num_plugin_paths = n;
    o.only_given_paths = 1;
    o.plugin_timeout_s = timeout_s;
    return o;
}

struct Runtime {
    px_runtime* rt = nullptr;
    explicit Runtime(const std::vector<std::string>& paths, bool only = true) {
        std::vector<const char*> ps;
        for (auto& p : paths) ps.push_back(p.c_str());
        px_runtime_options o{sizeof o, ps.data(), int32_t(ps.size()), only ? 1 : 0, 0};
        REQUIRE(px_runtime_create(&o, &rt) == PX_OK);
    }
    ~Runtime() { px_runtime_destroy(rt); }
    std::map<std::string, px_plugin_info> by_file() const {
        std::map<std::string, px_plugin_info> out;
        int32_t n = 0;
        REQUIRE(px_runtime_plugin_count(rt, &n) == PX_OK);
        for (int i = 0; i < n; ++i) {
            px_plugin_info info{};
            info.struct_size = sizeof info;
            REQUIRE(px_runtime_plugin_info(rt, i, &info) == PX_OK);
            std::string f = info.file;
            out[f.substr(f.rfind('/') + 1)] = info;
        }
        return out;
    }
};

#ifdef PLEXUS_FAULT_PLUGIN_DIR
inline std::string fault(const char* variant) { return std::string(PLEXUS_FAULT_PLUGIN_DIR "/libfault-") + variant + ".so"; }
#endif
inline const std::string cpu_plugin = PLEXUS_CPU_PLUGIN_FILE;

}  // namespace pxtest
