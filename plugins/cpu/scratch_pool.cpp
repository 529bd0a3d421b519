#include "scratch_pool.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <pthread.h>
#include <new>
#include <vector>

#include "host_blocks.hpp"

namespace pxcpu {
namespace {

struct Buffer {
    void* data;
    size_t capacity;
};

// A new buffer from the system ({nullptr, 0} when refused).
Buffer fresh_buffer(size_t bytes) {
    // A size within 63 bytes of SIZE_MAX would round to 0: refuse it.
    if (bytes > SIZE_MAX - 63) return Buffer{nullptr, 0};
    const size_t capacity = (std::max<size_t>(bytes, 1) + 63) / 64 * 64;
    return Buffer{allocate_host_block(capacity), capacity};
}

// Set when the pool below is destroyed (at exit or unload); leases made
// later (by a queue made after the exit drain) bypass it. Trivially
// destructible, so it can be read at any point of the exit.
std::atomic<bool> g_pool_gone{false};

// Given-back buffers, oldest first. Freed when the plugin is unloaded.
class Pool {
public:
    // Its lock is held across fork(), so a child's copy is whole (the queues,
    // held first, run no op meanwhile: exit_drain.cpp).
    Pool() { pthread_atfork(lock_for_fork, unlock_after_fork, unlock_after_fork); }
    ~Pool() {
        std::lock_guard<std::mutex> lock(mutex_);
        g_pool_gone.store(true);
        for (const Buffer& b : kept_) std::free(b.data);
    }
    Buffer take(size_t bytes) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            ++leased_;
            // The smallest kept buffer that is large enough.
            auto best = kept_.end();
            for (auto it = kept_.begin(); it != kept_.end(); ++it)
                if (it->capacity >= bytes && (best == kept_.end() || it->capacity < best->capacity)) best = it;
            if (best != kept_.end()) {
                const Buffer b = *best;
                kept_bytes_ -= b.capacity;
                kept_.erase(best);
                return b;
            }
        }
        const Buffer b = fresh_buffer(bytes);
        if (!b.data) {
            std::lock_guard<std::mutex> lock(mutex_);
            --leased_;
            throw std::bad_alloc();
        }
        return b;
    }
    void give_back(Buffer b) {
        std::vector<void*> to_free;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            --leased_;
            if (b.capacity > scratch_kept_bytes) {
                to_free.push_back(b.data);
            } else {
                try {
                    kept_.push_back(b);
                } catch (const std::bad_alloc&) {  // no room to keep it: free it instead
                    to_free.push_back(b.data);
                    b.capacity = 0;
                }
                kept_bytes_ += b.capacity;
                while (kept_bytes_ > scratch_kept_bytes) {  // the oldest go first
                    kept_bytes_ -= kept_.front().capacity;
                    to_free.push_back(kept_.front().data);
                    kept_.erase(kept_.begin());
                }
            }
        }
        for (void* p : to_free) std::free(p);
    }
    ScratchFigures figures() {
        std::lock_guard<std::mutex> lock(mutex_);
        return ScratchFigures{kept_bytes_, kept_.size(), leased_};
    }

private:
    static void lock_for_fork();
    static void unlock_after_fork();

    std::mutex mutex_;
    std::vector<Buffer> kept_;
    size_t kept_bytes_ = 0, leased_ = 0;
};

Pool& pool() {
    static Pool p;
    return p;
}

void Pool::lock_for_fork() {
    if (!g_pool_gone.load()) pool().mutex_.lock();
}
void Pool::unlock_after_fork() {
    if (!g_pool_gone.load()) pool().mutex_.unlock();
}

Buffer take_without_pool(size_t bytes) {
    const Buffer b = fresh_buffer(bytes);
    if (!b.data) throw std::bad_alloc();
    return b;
}

}  // namespace

void make_scratch_pool() { pool(); }

ScratchLease::ScratchLease(size_t bytes, ScratchBudget* budget) : budget_(budget), charged_(bytes) {
    if (budget_) {
        std::string why;
        if (!budget_->charge(charged_, why)) throw ScratchRefused(why);
    }
    try {
        const Buffer b = g_pool_gone.load() ? take_without_pool(bytes) : pool().take(bytes);
        data_ = b.data;
        capacity_ = b.capacity;
    } catch (const std::bad_alloc&) {
        if (budget_) budget_->refund(charged_);
        throw ScratchRefused("the system could not give " + std::to_string(bytes) + " bytes of scratch space");
    }
}

ScratchLease::~ScratchLease() {
    if (g_pool_gone.load())
        std::free(data_);
    else
        pool().give_back(Buffer{data_, capacity_});
    if (budget_) budget_->refund(charged_);
}

ScratchFigures scratch_figures() { return g_pool_gone.load() ? ScratchFigures{0, 0, 0} : pool().figures(); }

}  // namespace pxcpu
