// libFuzzer entry: the .npy and .npz readers (tools/run-fuzz.sh).
#include "targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    return plexus::fuzz::npy_input(data, size);
}
