// plexus-op-call-agree REFERENCE_PLUGIN CANDIDATE_PLUGIN FOLDER...
// Runs every op-call input in the folders (tests/fuzz/corpus/op-call, the
// regressions, a fuzzer's grown corpus) on both plugins from the same
// buffer contents and reports every call on which they disagree
// (differential_target.hpp), with the figures. Exit status: 0 when they
// agree on every call, 1 when not, 2 for bad arguments. The GPU checks run
// it with the CPU plugin as the reference and the real CUDA plugin as the
// candidate (tools/device/run-gpu-checks.sh agree), also under
// compute-sanitizer.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "differential_target.hpp"

namespace fs = std::filesystem;

int main(int argc, char** argv) {
    if (argc < 4) {
        std::fprintf(stderr, "usage: %s REFERENCE_PLUGIN CANDIDATE_PLUGIN FOLDER...\n", argv[0]);
        return 2;
    }
    const px_plugin_api* tables[2] = {};
    for (int k = 0; k < 2; ++k) {
        std::string why;
        tables[k] = plexus::fuzz::open_plugin(argv[1 + k], why);
        if (!tables[k]) {
            std::fprintf(stderr, "plexus-op-call-agree: the %s plugin %s did not load: %s\n",
                         k == 0 ? "reference" : "candidate", argv[1 + k], why.c_str());
            return 2;
        }
    }
    std::vector<fs::path> inputs;
    for (int i = 3; i < argc; ++i) {
        std::error_code ec;
        if (!fs::is_directory(argv[i], ec)) {
            std::fprintf(stderr, "plexus-op-call-agree: %s is not a folder\n", argv[i]);
            return 2;
        }
        for (const auto& f : fs::directory_iterator(argv[i]))
            if (f.is_regular_file() && f.path().filename().string()[0] != '.') inputs.push_back(f.path());
    }
    plexus::fuzz::OpCallSession ref(tables[0]), dut(tables[1]);
    size_t calls_compared = 0, elements = 0, disagreements = 0;
    for (const fs::path& path : inputs) {
        std::ifstream in(path, std::ios::binary);
        const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        const plexus::fuzz::Comparison c = plexus::fuzz::differential(ref, dut, bytes.data(), bytes.size());
        if (!c.disagreement.empty()) {
            std::printf("DISAGREE %s: %s\n", path.c_str(), c.disagreement.c_str());
            ++disagreements;
        }
        calls_compared += c.compared > 0;
        elements += c.compared;
    }
    std::printf("plexus-op-call-agree: %zu inputs, %zu calls whose outputs were compared (%zu elements), "
                "%zu disagreements\n",
                inputs.size(), calls_compared, elements, disagreements);
    return disagreements ? 1 : 0;
}
