// Replays the fuzz corpus and every crash the fuzzers ever found
// (tests/fuzz/corpus, tests/fuzz/regressions) through the fuzz targets' own
// bodies, in every build: a fixed bug stays fixed without clang.
#include <catch2/catch.hpp>

#include <dlfcn.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "../fuzz/op_call_target.hpp"
#include "../fuzz/targets.hpp"

namespace fs = std::filesystem;

namespace {

// Calls run(bytes, path) for every file of tests/fuzz/<kind>/<target>/; returns how many.
template <class Run>
size_t for_each_input(const std::string& kind, const std::string& target, Run run) {
    size_t n = 0;
    fs::path dir = fs::path(PLEXUS_FUZZ_DIR) / kind / target;
    if (!fs::exists(dir)) return 0;
    for (const auto& f : fs::directory_iterator(dir)) {
        if (!f.is_regular_file() || f.path().filename().string()[0] == '.') continue;
        std::ifstream in(f.path(), std::ios::binary);
        std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        INFO(f.path().string());
        run(bytes);
        ++n;
    }
    return n;
}

size_t replay(const std::string& target, int (*run)(const uint8_t*, size_t)) {
    size_t n = 0;
    for (const char* kind : {"corpus", "regressions"})
        n += for_each_input(kind, target, [&](const std::vector<uint8_t>& b) { run(b.data(), b.size()); });
    return n;
}

}  // namespace

TEST_CASE("the fuzz corpus and every recorded crash decode or fail cleanly", "[fuzz][errors]") {
    CHECK(replay("param-file", plexus::fuzz::param_file_input) >= 5);
    CHECK(replay("idx", plexus::fuzz::idx_input) >= 8);
}

// The op-call seeds are whole calls (make_op_call_seeds.py): the CPU plugin
// runs each. A recorded crash is refused with a message or runs.
TEST_CASE("the op-call corpus runs on the CPU plugin and every recorded crash is refused or runs", "[fuzz][errors]") {
    void* lib = dlopen(PLEXUS_CPU_PLUGIN_FILE, RTLD_NOW | RTLD_LOCAL);
    INFO(dlerror());
    REQUIRE(lib);
    auto get = reinterpret_cast<px_plugin_get_api_fn>(dlsym(lib, PX_PLUGIN_ENTRY_SYMBOL));
    REQUIRE(get);
    size_t seeds = 0;
    {
        plexus::fuzz::OpCallSession session(get());
        seeds = for_each_input("corpus", "op-call", [&](const std::vector<uint8_t>& b) {
            REQUIRE(plexus::fuzz::op_call_status(session, b.data(), b.size()) == PX_OK);
        });
        for_each_input("regressions", "op-call", [&](const std::vector<uint8_t>& b) {
            plexus::fuzz::op_call_status(session, b.data(), b.size());
        });
    }
    // The library stays loaded, as the runtime keeps its plugins until exit:
    // unloading it would make what OpenMP keeps for the process unreachable.
    CHECK(seeds >= 30);
}
