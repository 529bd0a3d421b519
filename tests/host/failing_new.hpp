// A replacement of the global operator new for the allocation-failure tests:
// it counts the calling thread's allocations and, once armed, makes the n-th
// of them (and with `stay`, every later one) throw std::bad_alloc, as a host
// out of memory would. Other threads (device workers, OpenMP) are not touched,
// so a run is repeatable; nor is the CUDA emulator, which stands for a driver
// (tests/cuda_emu/emu_driver_scope.hpp). Also counts the blocks alive in the
// whole process, which is how a test sees a leak without a sanitizer.
// PLEXUS_TEST_TRACE_FAILED_ALLOCATIONS=1 prints each failed allocation's stack
// to stderr (for c++filt), to find which one a failing run met.
#pragma once

#include <cstdint>

namespace failing_new {

// The calling thread's allocation number `n` from now (0: the next) fails;
// with `stay`, so does every later one until disarm().
void fail_from(uint64_t n, bool stay);
// The same, counting the allocations of every thread (the calling one, a
// loader's prefetch thread, a device's worker) together: which thread meets
// the n-th depends on timing, so a run is not repeatable, but every run must
// hold all the same.
void fail_any_thread_from(uint64_t n, bool stay);
// Disarms both.
void disarm();
// Whether an allocation failed since the last fail_from().
bool fired();
// operator new blocks alive in the process now.
int64_t live_blocks();

}  // namespace failing_new
