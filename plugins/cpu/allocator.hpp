// A caching allocator per CPU device. Freed blocks go back to a cache at
// once and are reused by later allocations of the same size class: safe
// because a device runs its work in order, so anything that used a block was
// queued before its free and anything that reuses it is queued after (the
// rule CUDA's stream-ordered allocators follow). Reuse avoids page-faulting
// fresh memory on every op. PLEXUS_CPU_MEMORY_LIMIT caps the bytes in use.
//
// The cache is bounded without a limit too (a loop over ever-new sizes kept a
// block of each until the machine's memory was gone): on a miss, when the
// free blocks it holds pass the larger of a sixteenth of the machine's
// memory (256 MiB to 1 GiB) and twice the peak in use, it gives back the
// longest idle of those no queued op can still use, down to half that, so a
// loop that cycles through a set of sizes keeps them.
//
// Giving a cached block back to the system is another matter: ops queued
// before its release may still be about to use it. So each released block
// records how many ops its device had queued then, and goes back to the
// system only once the device has run that many (QueueProgress).
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "plexus/plugin.h"
#include "scratch_pool.hpp"

struct px_plugin_buffer {
    char* data;
    uint64_t bytes;       // what was asked for
    uint64_t class_size;  // what was reserved
    int32_t device;
    uint64_t released_at;  // while cached: ops the device had queued when it was released
    bool evicted = false;  // being given back by Allocator::trim_idle_locked
    // ABI 1.5, buffer_wrap: memory the plugin did not allocate, never cached;
    // release(release_context) runs once, when the buffer is freed.
    bool foreign = false;
    void (*release)(void*) = nullptr;
    void* release_context = nullptr;
};

namespace pxcpu {

struct MemoryFigures {
    uint64_t total, free, in_use, reserved, peak;
};

// How far a device's queue has got, in ops counted from its start.
class QueueProgress {
public:
    virtual uint64_t queued() const = 0;     // ops queued so far
    virtual uint64_t completed() const = 0;  // ops run so far (<= queued())
    // Returns once `count` ops have run. Never called on the queue's own worker.
    virtual void wait_until_completed(uint64_t count) = 0;

protected:
    ~QueueProgress() = default;
};

// Kernels' scratch (scratch_pool.hpp) is charged here too while an op holds it.
class Allocator final : public ScratchBudget {
public:
    // limit 0: no limit beyond the machine's memory. progress: the device's
    // queue (outliving the allocator's use of it); nullptr when no op can
    // use a released block any more (tests of the allocator alone).
    // cache_floor: the free bytes the cache may always hold (0: the default
    // above; tests give a small one).
    Allocator(int32_t device, uint64_t limit, QueueProgress* progress = nullptr, uint64_t cache_floor = 0);
    ~Allocator();
    Allocator(const Allocator&) = delete;
    Allocator& operator=(const Allocator&) = delete;

    // nullptr with a message in `why` when out of memory.
    px_plugin_buffer* allocate(uint64_t bytes, std::string& why);
    // Never throws: a block the cache has no room to hold is freed at once.
    void release(px_plugin_buffer* b);
    MemoryFigures figures();
    // Returns the cached blocks to the system, waiting for the ops queued
    // before their release. Not on the device's worker.
    void trim();
    bool charge(size_t bytes, std::string& why) override;
    void refund(size_t bytes) override;

private:
    static constexpr uint64_t kCacheFloorLeast = 256ull << 20, kCacheFloorMost = 1ull << 30;
    static constexpr uint64_t kTrimReturnsPages = 32ull << 20;  // freed at once: the C library gives the pages back
    static uint64_t size_class(uint64_t bytes);
    uint64_t cache_cap_locked() const;  // the free bytes the cache may hold
    // Gives back the idle blocks no queued op can still use, longest idle
    // first, until the cache holds at most `target` bytes.
    void trim_idle_locked(uint64_t target);
    // After `freed` bytes of blocks went back to the C library: its pages to the system.
    static void return_pages(uint64_t freed);
    bool fits_locked(uint64_t bytes) const;
    std::string refusal_locked(uint64_t bytes, const char* what) const;
    // Frees the cached blocks no queued op can still use; returns the
    // queue count the others wait for (0: none left).
    uint64_t trim_locked();
    uint64_t trim_locked(uint64_t done);  // `done`: ops the device has run
    // Makes room under the limit for `bytes` more reserved: frees what it
    // may, and when `may_wait`, waits for the queue (unlocking) to free the rest.
    void make_room(std::unique_lock<std::mutex>& lock, uint64_t bytes, bool may_wait);
    // The free list of a class: small (power-of-two) classes index an array,
    // larger ones (multiples of 1 MiB) a map.
    std::vector<px_plugin_buffer*>& free_list(uint64_t cls);

    const int32_t device_;
    const uint64_t limit_;
    const uint64_t machine_bytes_;  // physical memory, read once (sysconf is a syscall)
    const uint64_t cache_floor_;
    QueueProgress* const progress_;
    std::mutex mutex_;
    std::vector<px_plugin_buffer*> small_[21];  // classes 64 B .. 512 KiB (2^6 .. 2^19)
    std::unordered_map<uint64_t, std::vector<px_plugin_buffer*>> large_;
    uint64_t in_use_ = 0, reserved_ = 0, peak_ = 0;
    uint64_t cached_ = 0;  // the free lists' blocks (in reserved_, not in in_use_)
};

// Parses "512M", "2G", "1048576" (bytes); 0 with `ok` false when malformed.
uint64_t parse_bytes(const char* text, bool& ok);

}  // namespace pxcpu
