// Replays the fuzz corpus and every crash the fuzzers ever found
// (tests/fuzz/corpus, tests/fuzz/regressions) through the fuzz targets' own
// bodies, in every build: a fixed bug stays fixed without clang.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "../fuzz/targets.hpp"

namespace fs = std::filesystem;

namespace {
size_t replay(const std::string& target, int (*run)(const uint8_t*, size_t)) {
    size_t n = 0;
    for (const char* kind : {"corpus", "regressions"}) {
        fs::path dir = fs::path(PLEXUS_FUZZ_DIR) / kind / target;
        if (!fs::exists(dir)) continue;
        for (const auto& f : fs::directory_iterator(dir)) {
            if (!f.is_regular_file() || f.path().filename().string()[0] == '.') continue;
            std::ifstream in(f.path(), std::ios::binary);
            std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
            INFO(f.path().string());
            run(bytes.data(), bytes.size());
            ++n;
        }
    }
    return n;
}

}  // namespace

TEST_CASE("the fuzz corpus and every recorded crash decode or fail cleanly", "[fuzz][errors]") {
    CHECK(replay("param-file", plexus::fuzz::param_file_input) >= 5);
    CHECK(replay("idx", plexus::fuzz::idx_input) >= 8);
}
