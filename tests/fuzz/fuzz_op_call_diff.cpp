// libFuzzer entry: each op call runs on the CPU plugin and on the CUDA plugin
// on the CUDA emulator, both built with ASan, UBSan and the fuzzer's
// coverage, and the two must agree (differential_target.hpp). Set up as
// fuzz_op_call.cpp is: the plugins load first, one thread per pool.
#include "differential_target.hpp"

namespace {

struct Pair {
    plexus::fuzz::OpCallSession cpu{plexus::fuzz::plugin_or_abort(PLEXUS_FUZZ_CPU_PLUGIN)};
    plexus::fuzz::OpCallSession gpu{plexus::fuzz::plugin_or_abort(PLEXUS_FUZZ_GPU_PLUGIN)};
};

Pair& plugins() {
    static Pair p;
    return p;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    plexus::fuzz::one_thread_per_pool();
    plugins();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const plexus::fuzz::Comparison c = plexus::fuzz::differential(plugins().cpu, plugins().gpu, data, size);
    if (!c.disagreement.empty()) plexus::fuzz::op_call_invariant_broken("the two plugins disagree", c.disagreement.c_str());
    return 0;
}
