// libFuzzer entry: the IDX reader, plain and gzipped (tools/run-fuzz.sh).
#include "targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    return plexus::fuzz::idx_input(data, size);
}
