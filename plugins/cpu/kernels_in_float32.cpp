// float16 and bfloat16 through the float32 kernels (kit::run_in_float32):
// the float32 copies are scratch charged to the op's device, and the
// conversions are the cast kernel's.
#include <deque>

#include "kernels.hpp"
#include "scratch_pool.hpp"

namespace pxcpu {

void run_in_float32(const OpTask& t, Runner float32_kernel) {
    std::deque<ScratchLease> copies;  // leases neither move nor copy
    auto allocate = [&](uint64_t bytes) { return copies.emplace_back(size_t(bytes), t.scratch).data(); };
    plexus::kit::run_in_float32(t, allocate, run_data, float32_kernel);
}

}  // namespace pxcpu
