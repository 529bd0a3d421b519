// libFuzzer entry: the parameter-file decoder (tools/run-fuzz.sh).
#include "targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    return plexus::fuzz::param_file_input(data, size);
}
