// Locks a forked child can take even when one of the parent's threads held
// them at the fork (that thread did not come along to release them): at
// their first use in a child, told by a new px_fork_generation(), they are
// made anew, as the CPU plugin does for its queues.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <new>
#include <thread>

#include "plexus/plexus.h"

namespace px {

// Runs `renew` once in a process forked since `generation` was set (its
// first caller there; the others wait for it), then marks it this process's.
template <class Renew>
void renew_once_in_child(std::atomic<uint64_t>& generation, Renew renew) {
    constexpr uint64_t renewing = UINT64_MAX;
    const uint64_t now = px_fork_generation();
    for (uint64_t seen = generation.load(std::memory_order_acquire); seen != now;
         seen = generation.load(std::memory_order_acquire)) {
        if (seen != renewing && generation.compare_exchange_strong(seen, renewing, std::memory_order_acq_rel)) {
            renew();
            generation.store(now, std::memory_order_release);
            return;
        }
        std::this_thread::yield();
    }
}

// A std::mutex made anew at its first lock in a forked child.
class ForkSafeMutex {
public:
    void lock() {
        renew_once_in_child(generation_, [this] { new (&m_) std::mutex; });  // (the parent's is dropped, not destroyed)
        m_.lock();
    }
    void unlock() { m_.unlock(); }

private:
    std::mutex m_;
    std::atomic<uint64_t> generation_{px_fork_generation()};
};

}  // namespace px
