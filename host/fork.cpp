// fork() and libplexus. The handle tables' locks are held across a fork, so
// that a child's copy of each table is whole even when another thread was
// changing one; and forks are counted (px_fork_generation), so that the C++
// frontend makes a runtime of its own in a child (api/plexus/cpp/device.hpp):
// the parent's CPU devices cannot compute there (plugins/cpu/fork_guard.hpp).
#include <pthread.h>

#include <atomic>

#include "device_kinds.hpp"
#include "objects.hpp"

namespace px {
namespace {

std::atomic<uint64_t> g_generation{0};

void before_fork() {
    lock_kinds_for_fork();
    runtime_table().lock_for_fork();
    tensor_table().lock_for_fork();
    group_table().lock_for_fork();
}
void in_parent() {
    group_table().unlock_after_fork();
    tensor_table().unlock_after_fork();
    runtime_table().unlock_after_fork();
    unlock_kinds_after_fork();
}
void in_child() {
    in_parent();
    g_generation.fetch_add(1);
}

// Registered when libplexus is loaded.
const int g_registered = pthread_atfork(before_fork, in_parent, in_child);

}  // namespace
}  // namespace px

extern "C" uint64_t px_fork_generation(void) { return px::g_generation.load(std::memory_order_relaxed); }
