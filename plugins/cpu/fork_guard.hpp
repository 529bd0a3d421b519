// fork() and the CPU plugin. A forked child has only the thread that called
// fork(): the devices' worker threads stay in the parent, and waiting for
// them in the child waits forever. So in a child, devices made before the
// fork refuse work with an error that says why, and releasing their buffers
// or destroying their context makes no call that would wait. Devices made
// in the child work: their workers are new threads, with OpenMP thread pools
// of their own. (GNU OpenMP keeps a pool per thread that starts parallel
// regions, and a child hangs at a region on the forking thread if that
// thread's pool had threads; the plugin's only region on a caller's thread,
// the sum across devices, runs where there are several devices, and then
// create() has set the caller's OpenMP threads to one through OpenBLAS.)
#pragma once

#include <cstdint>

namespace pxcpu {

constexpr const char* kForkedChild =
    "cpu plugin: this process is a forked child of the one that made these CPU devices; their worker threads "
    "stayed in the parent, so the child cannot compute on them. Make a new runtime in the child, or start "
    "worker processes with fork+exec (posix_spawn, Python multiprocessing's 'spawn')";

// Registers the fork handler, once per load of the plugin.
void watch_for_fork() noexcept;
// 0 in the process that loaded the plugin, one more in each forked child.
uint64_t fork_generation() noexcept;

}  // namespace pxcpu
