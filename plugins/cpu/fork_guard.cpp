#include "fork_guard.hpp"

#include <pthread.h>

#include <atomic>
#include <mutex>

namespace pxcpu {
namespace {

// Trivially destructible, so readable in any handler at any time.
std::atomic<uint64_t> g_generation{0};
std::atomic<void (*)()> g_lock{nullptr}, g_unlock{nullptr};

void before_fork() {
    if (auto lock = g_lock.load()) lock();
}
void in_parent() {
    if (auto unlock = g_unlock.load()) unlock();
}
void in_child() {
    if (auto unlock = g_unlock.load()) unlock();
    g_generation.fetch_add(1);
}

}  // namespace

void watch_for_fork() noexcept {
    static std::once_flag once;
    std::call_once(once, [] { pthread_atfork(before_fork, in_parent, in_child); });
}

uint64_t fork_generation() noexcept { return g_generation.load(std::memory_order_relaxed); }

void hold_across_fork(void (*lock)(), void (*unlock)()) noexcept {
    g_unlock.store(unlock);
    g_lock.store(lock);
}

}  // namespace pxcpu
