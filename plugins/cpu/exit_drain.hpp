// Device queues still busy when the process exits. exit() finalizes the
// shared libraries (OpenBLAS frees its buffers, libgomp its teams) while a
// worker may still be inside one of their calls: a program that returned from
// main with work queued crashed at exit about one run in seven. Every live
// queue is registered here, and at exit, before any library is finalized (C++
// static destructors run first), each finishes what was queued. Nothing is
// skipped: a static object's destructor that reads a result at exit gets it.
// Each queue is closed to other threads first: one still computing as main
// returned had its work run beside the libraries' finalizers (a crash inside
// OpenBLAS one run in ten). Now its next call waits 2 s, by which time the
// process has normally ended; one that has not is held in a static
// destructor (joining that thread, say), before any library is finalized,
// and the call goes on.
#pragma once

#include <cstdint>

namespace pxcpu {

class DeviceQueue;

// A queue's place in the list of live queues, kept inside the queue, so
// that registering allocates nothing and cannot fail.
struct ExitLink {
    DeviceQueue* queue = nullptr;
    uint64_t generation = 0;  // fork_guard.hpp: a forked child drains only its own queues
    ExitLink* prev = nullptr;
    ExitLink* next = nullptr;
};

void drain_at_exit(ExitLink& link, DeviceQueue* queue) noexcept;
void forget_at_exit(ExitLink& link) noexcept;  // the queue is being destroyed

}  // namespace pxcpu
