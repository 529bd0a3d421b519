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

#include "plexus/plugin_kit.hpp"

namespace pxcpu {

// The kit's count of forks (plugin_kit.hpp): a context, a queue and an exit
// link note it when made, and act only in the process that made them.
using plexus::kit::fork_generation;

}  // namespace pxcpu
