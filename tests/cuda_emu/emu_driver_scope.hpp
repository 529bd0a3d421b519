// The allocation-failure test (tests/host/test_allocation_failures.cpp) makes
// host allocations fail one at a time to test how the CUDA plugin handles
// running out of host memory. The emulator stands for the GPU and its driver,
// whose own allocations are not under test: CUDA reports its failures as
// error codes, which emu_faults.cpp injects. So every entry point of the
// emulator (runtime, cuBLAS, NCCL, a kernel launch) holds a DriverScope, and
// while one is held no allocation of the thread is failed. The hook is a weak
// symbol that only that test's executable defines; elsewhere this does nothing.
#pragma once

extern "C" void px_test_pause_allocation_failures(int delta) __attribute__((weak));

namespace px_emu {

struct DriverScope {
    DriverScope() {
        if (px_test_pause_allocation_failures) px_test_pause_allocation_failures(1);
    }
    ~DriverScope() {
        if (px_test_pause_allocation_failures) px_test_pause_allocation_failures(-1);
    }
    DriverScope(const DriverScope&) = delete;
    DriverScope& operator=(const DriverScope&) = delete;
};

}  // namespace px_emu
