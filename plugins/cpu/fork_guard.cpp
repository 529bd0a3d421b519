#include "fork_guard.hpp"

#include <pthread.h>

#include <atomic>
#include <mutex>

namespace pxcpu {
namespace {

// Trivially destructible, so readable in any handler at any time.
std::atomic<uint64_t> g_generation{0};

void in_child() { g_generation.fetch_add(1); }

}  // namespace

void watch_for_fork() noexcept {
    static std::once_flag once;
    std::call_once(once, [] { pthread_atfork(nullptr, nullptr, in_child); });
}

uint64_t fork_generation() noexcept { return g_generation.load(std::memory_order_relaxed); }

}  // namespace pxcpu
