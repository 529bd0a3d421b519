// The OpenBLAS kernels the CPU plugin runs on (plugins/cpu/openblas.hpp,
// openblas_core_for_this_cpu). Usage: plexus-openblas-core auto | CORE.
// "auto" (OPENBLAS_CORETYPE unset first): on a CPU whose /proc/cpuinfo lists
// AVX-512 F, CD, BW, DQ and VL, the device's name must show OpenBLAS's
// AVX-512 kernels (Cooperlake with AVX-512 BF16, else SkylakeX), not the
// SSE3 ones a DYNAMIC_ARCH OpenBLAS falls back to for a model it does not
// know, and the environment must be as before. CORE (the test sets
// OPENBLAS_CORETYPE=CORE): the user's choice is kept. Exit 77: no AVX-512,
// nothing to check.
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <set>
#include <string>

#include "plexus/plexus.hpp"

namespace {

std::set<std::string> cpu_flags() {
    std::ifstream info("/proc/cpuinfo");
    for (std::string line; std::getline(info, line);)
        if (line.rfind("flags", 0) == 0) {
            std::istringstream words(line.substr(line.find(':') + 1));
            std::set<std::string> flags;
            for (std::string w; words >> w;) flags.insert(w);
            return flags;
        }
    return {};
}

std::string expected_core(const std::string& arg) {
    if (arg != "auto") return arg;
    const std::set<std::string> f = cpu_flags();
    for (const char* needed : {"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"})
        if (!f.count(needed)) return "";
    return f.count("avx512_bf16") ? "Cooperlake" : "SkylakeX";
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: plexus-openblas-core auto|CORE\n");
        return 2;
    }
    if (dlopen("libopenblas.so.0", RTLD_NOW | RTLD_NOLOAD)) {
        std::fprintf(stderr, "OpenBLAS was loaded before the plugin: this test proves nothing\n");
        return 2;
    }
    const std::string arg = argv[1], want = expected_core(arg);
    if (arg == "auto") unsetenv("OPENBLAS_CORETYPE");  // the plugin's own choice, whatever the caller's environment
    const char* before = std::getenv("OPENBLAS_CORETYPE");
    const std::string before_text = before ? before : "(unset)";
    const std::string name = plexus::device_info(plexus::cpu(0)).name;
    const char* after = std::getenv("OPENBLAS_CORETYPE");
    const std::string after_text = after ? after : "(unset)";
    std::printf("cpu(0): %s\nOPENBLAS_CORETYPE before: %s, after: %s\n", name.c_str(), before_text.c_str(),
                after_text.c_str());
    if (after_text != before_text) {
        std::printf("FAIL: the plugin left OPENBLAS_CORETYPE changed\n");
        return 1;
    }
    if (want.empty()) {
        std::printf("this CPU has no AVX-512: OpenBLAS's own choice stands, nothing to check\n");
        return 77;
    }
    if (name.find(" " + want + " ") == std::string::npos) {
        std::printf("FAIL: want OpenBLAS's %s kernels\n", want.c_str());
        return 1;
    }
    std::printf("ok: OpenBLAS runs its %s kernels\n", want.c_str());
    return 0;
}
