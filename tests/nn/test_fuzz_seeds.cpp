// Replays the fuzz corpus and every crash the fuzzers ever found
// (tests/fuzz/corpus, tests/fuzz/regressions) through the fuzz targets' own
// bodies, in every build: a fixed bug stays fixed without clang.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "../fuzz/differential_target.hpp"
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

// The table of the plugin in `file`; fails the test where it does not load.
// The library stays loaded, as the runtime keeps its plugins until exit:
// unloading it would make what OpenMP keeps for the process unreachable.
const px_plugin_api* plugin_table(const char* file) {
    std::string why;
    const px_plugin_api* api = plexus::fuzz::open_plugin(file, why);
    INFO(why);
    REQUIRE(api);
    return api;
}

// The op-call seeds are whole calls (make_op_call_seeds.py): the plugin in
// `file` runs each. The grown corpus (what the fuzzers kept, merged) and a
// crash recorded on either plugin are refused with a message or run.
void replay_op_calls(const char* file) {
    plexus::fuzz::OpCallSession session(plugin_table(file));
    const size_t seeds = for_each_input("corpus", "op-call", [&](const std::vector<uint8_t>& b) {
        REQUIRE(plexus::fuzz::op_call_status(session, b.data(), b.size()) == PX_OK);
    });
    CHECK(seeds >= 128);
    auto refused_or_runs = [&](const std::vector<uint8_t>& b) { plexus::fuzz::op_call_status(session, b.data(), b.size()); };
    CHECK(for_each_input("corpus", "op-call-grown", refused_or_runs) >= 1000);
    for (const char* target : {"op-call", "op-call-gpu"}) for_each_input("regressions", target, refused_or_runs);
}

}  // namespace

TEST_CASE("the fuzz corpus and every recorded crash decode or fail cleanly", "[fuzz][errors]") {
    CHECK(replay("param-file", plexus::fuzz::param_file_input) >= 5);
    // The parameter-file seeds are valid files (after the mode byte): each must
    // decode, or the fuzzer starts from refusals and a decoder that refuses
    // good files passes.
    for_each_input("corpus", "param-file", [](const std::vector<uint8_t>& b) {
        REQUIRE(b.size() > 1);
        REQUIRE_NOTHROW(plexus::nn::param_file::decode(b.data() + 1, b.size() - 1, "a seed"));
    });
    CHECK(replay("idx", plexus::fuzz::idx_input) >= 8);
    CHECK(replay("npy", plexus::fuzz::npy_input) >= 7);
}

TEST_CASE("the op-call corpus runs on the CPU plugin and every recorded crash is refused or runs", "[fuzz][errors]") {
    replay_op_calls(PLEXUS_CPU_PLUGIN_FILE);
}

#ifdef PLEXUS_CUDA_EMU_PLUGIN_FILE
// The same calls through the CUDA plugin's kernels, on the CUDA emulator.
TEST_CASE("the op-call corpus runs on the emulated CUDA plugin and every recorded crash is refused or runs",
          "[fuzz][errors]") {
    replay_op_calls(PLEXUS_CUDA_EMU_PLUGIN_FILE);
}

// The differential target's inputs (differential_target.hpp): the CPU plugin
// and the CUDA plugin on the emulator agree on every seed, whose outputs are
// compared element by element, on the grown corpus, and on every
// disagreement ever recorded.
TEST_CASE("the CPU plugin and the emulated CUDA plugin agree on every op-call seed and recorded input",
          "[fuzz][errors]") {
    plexus::fuzz::OpCallSession cpu(plugin_table(PLEXUS_CPU_PLUGIN_FILE)), gpu(plugin_table(PLEXUS_CUDA_EMU_PLUGIN_FILE));
    size_t compared = 0, seeds_compared = 0;
    const size_t seeds = for_each_input("corpus", "op-call", [&](const std::vector<uint8_t>& b) {
        const plexus::fuzz::Comparison c = plexus::fuzz::differential(cpu, gpu, b.data(), b.size());
        CHECK(c.disagreement == "");
        compared += c.compared;
        seeds_compared += c.compared > 0;
    });
    auto agree = [&](const std::vector<uint8_t>& b) {
        const plexus::fuzz::Comparison c = plexus::fuzz::differential(cpu, gpu, b.data(), b.size());
        CHECK(c.disagreement == "");
        compared += c.compared;
    };
    for_each_input("corpus", "op-call-grown", agree);
    for_each_input("regressions", "op-call-diff", agree);
    // An at-the-end variant may put an output over another operand: not compared.
    CHECK(seeds >= 128);
    CHECK(seeds_compared >= 120);  // 127 of the 128 on 2026-11-22
    CHECK(compared >= 1000);
}
#endif
