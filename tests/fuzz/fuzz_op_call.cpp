// libFuzzer entry: op calls sent straight to a plugin's execute, the plugin
// built for this target with ASan, UBSan and the fuzzer's coverage
// (tools/run-fuzz.sh): the CPU plugin (plexus-fuzz-op-call) or the CUDA
// plugin on the CUDA emulator (plexus-fuzz-op-call-gpu).
#include <dlfcn.h>

#include <cstdlib>

#include "op_call_target.hpp"

namespace {

plexus::fuzz::OpCallSession& session() {
    static plexus::fuzz::OpCallSession s([] {
        void* lib = dlopen(PLEXUS_FUZZ_PLUGIN, RTLD_NOW | RTLD_LOCAL);
        if (!lib) plexus::fuzz::op_call_invariant_broken("the plugin did not load", dlerror());
        auto get = reinterpret_cast<px_plugin_get_api_fn>(dlsym(lib, PX_PLUGIN_ENTRY_SYMBOL));
        if (!get || !get()) plexus::fuzz::op_call_invariant_broken("the plugin has no table", PLEXUS_FUZZ_PLUGIN);
        return get();
    }());
    return s;
}

}  // namespace

// The plugin is loaded before fuzzing starts, so its coverage counters count.
// One thread per pool: the inputs are tiny, and spinning OpenMP and OpenBLAS
// workers (the CPU plugin's, the emulated cuBLAS's) would cost more than they
// compute (unless the caller says else).
extern "C" int LLVMFuzzerInitialize(int*, char***) {
    setenv("OMP_NUM_THREADS", "1", 0);
    setenv("OPENBLAS_NUM_THREADS", "1", 0);
    session();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    return plexus::fuzz::op_call_input(session(), data, size);
}
