// The kernel behind px_cuda_test_fault (test_hook.hpp), in the test build only.
#include "test_hook.hpp"

#include <cstdint>

namespace pxcuda {
namespace {

__global__ void write_through_bad_pointer(int* p) { *p = 1; }

}  // namespace

void launch_bad_write(cudaStream_t stream) {
    // An address no allocation can have: the write is an illegal address,
    // a sticky error that leaves the context unusable.
    write_through_bad_pointer<<<1, 1, 0, stream>>>(reinterpret_cast<int*>(uintptr_t(8)));
}

}  // namespace pxcuda
