// libFuzzer entry: op calls sent straight to a plugin's execute, the plugin
// built for this target with ASan, UBSan and the fuzzer's coverage
// (tools/run-fuzz.sh): the CPU plugin (plexus-fuzz-op-call) or the CUDA
// plugin on the CUDA emulator (plexus-fuzz-op-call-gpu).
#include "op_call_target.hpp"

namespace {

plexus::fuzz::OpCallSession& session() {
    static plexus::fuzz::OpCallSession s(plexus::fuzz::plugin_or_abort(PLEXUS_FUZZ_PLUGIN));
    return s;
}

}  // namespace

// The plugin is loaded before fuzzing starts, so its coverage counters count.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
    plexus::fuzz::one_thread_per_pool();
    session();
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    return plexus::fuzz::op_call_input(session(), data, size);
}
