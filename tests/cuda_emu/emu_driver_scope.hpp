// The allocation-failure test (tests/host/test_allocation_failures.cpp) makes
// host allocations fail one at a time to test how the CUDA plugin handles
// running out of host memory. The emulator stands for the GPU and its driver,
// whose own allocations are not under test: CUDA reports its failures as
// error codes, which emu_faults.cpp injects. So every entry point of the
// emulator (runtime, cuBLAS, NCCL, a kernel launch) holds a DriverScope, and
// while one is held no allocation of the thread is failed. The hook is a weak
// symbol that only that test's executable defines; elsewhere this does nothing.
//
// A DriverScope is also where a call made after CUDA shut down at exit is
// caught: the CUDA runtime tears itself down in an exit handler registered
// when it is loaded, and a call after that fails or crashes (the real
// cudaDriverGetVersion crashes). The emulator does the same, strictly: such
// a call ends the process with a message naming it.
#pragma once

extern "C" void px_test_pause_allocation_failures(int delta) __attribute__((weak));

namespace px_emu {

// Whether the emulated CUDA runtime has shut down at exit (emu_runtime.cpp).
bool shut_down_at_exit();
[[noreturn]] void called_after_shut_down(const char* fn);

struct DriverScope {
    explicit DriverScope(const char* fn = __builtin_FUNCTION()) {
        if (shut_down_at_exit()) called_after_shut_down(fn);
        if (px_test_pause_allocation_failures) px_test_pause_allocation_failures(1);
    }
    ~DriverScope() {
        if (px_test_pause_allocation_failures) px_test_pause_allocation_failures(-1);
    }
    DriverScope(const DriverScope&) = delete;
    DriverScope& operator=(const DriverScope&) = delete;
};

}  // namespace px_emu
