// Handle tables: the C API hands out 64-bit values, never raw pointers. A
// value encodes (kind, generation, slot); a lookup checks all three, so a
// NULL, released or wrong-kind handle is an error, not undefined behaviour.
// Lookups take no lock: slots live in chunks that never move.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "error.hpp"

namespace px {

enum class HandleKind : uint64_t { runtime = 1, tensor = 2, group = 3 };

template <class T, HandleKind Kind>
class HandleTable {
public:
    static constexpr uint32_t chunk_size = 4096;
    static constexpr uint32_t max_chunks = 4096;  // 16M live handles

    ~HandleTable() {
        for (auto& c : chunks_) delete[] c.load();
    }

    static constexpr uint32_t capacity = chunk_size * max_chunks;

    // At most `limit` live handles (1..capacity); `source` names where the
    // limit came from, for the error, or is nullptr for the capacity.
    void set_limit(uint32_t limit, const char* source) {
        std::lock_guard<std::mutex> lock(mutex_);
        limit_ = limit;
        limit_source_ = source;
    }

    uint64_t insert(T* object) {
        std::lock_guard<std::mutex> lock(mutex_);
        if (live_ >= limit_)
            fail(PX_ERROR_OUT_OF_MEMORY, "too many live handles: ", live_, " of at most ", limit_,
                 limit_source_ ? " (" : "", limit_source_ ? limit_source_ : "", limit_source_ ? ")" : "");
        uint32_t slot;
        if (!free_.empty()) {
            slot = free_.back();
            free_.pop_back();
        } else {
            // Reached only if a released slot could not be kept for reuse.
            if (next_ == capacity) fail(PX_ERROR_OUT_OF_MEMORY, "no handle slot left of ", capacity);
            slot = next_++;
            auto& chunk = chunks_[slot / chunk_size];
            if (!chunk.load()) chunk.store(new Entry[chunk_size]);
        }
        Entry& e = entry(slot);
        e.object.store(object, std::memory_order_relaxed);
        uint32_t gen = e.generation.load(std::memory_order_relaxed);
        e.live.store(1, std::memory_order_release);
        ++live_;
        return encode(slot, gen);
    }

    // The object, or nullptr when the handle is not a live handle of this kind.
    T* lookup(uint64_t handle) const noexcept {
        uint32_t slot, gen;
        if (!decode(handle, slot, gen)) return nullptr;
        Entry* chunk = chunks_[slot / chunk_size].load(std::memory_order_acquire);
        if (!chunk) return nullptr;
        const Entry& e = chunk[slot % chunk_size];
        if (!e.live.load(std::memory_order_acquire)) return nullptr;
        if (e.generation.load(std::memory_order_relaxed) != gen) return nullptr;
        return e.object.load(std::memory_order_relaxed);
    }

    // Retires the handle; later lookups of it fail.
    void remove(uint64_t handle) {
        uint32_t slot, gen;
        if (!decode(handle, slot, gen)) return;
        std::lock_guard<std::mutex> lock(mutex_);
        Entry& e = entry(slot);
        if (!e.live.load() || e.generation.load() != gen) return;
        e.live.store(0, std::memory_order_release);
        e.generation.store((gen + 1) & gen_mask, std::memory_order_release);
        e.object.store(nullptr);
        --live_;
        free_.push_back(slot);
    }

    // Held across fork() (host/fork.cpp), so that a child's copy is whole.
    void lock_for_fork() { mutex_.lock(); }
    void unlock_after_fork() { mutex_.unlock(); }

    // Why a handle is not valid, for messages.
    const char* diagnose(uint64_t handle) const noexcept {
        if (handle == 0) return "NULL";
        if ((handle >> 60) != static_cast<uint64_t>(Kind)) return "not a handle of this kind";
        return "released or never issued";
    }

private:
    static constexpr uint64_t gen_mask = (1u << 28) - 1;
    struct Entry {
        std::atomic<T*> object{nullptr};
        std::atomic<uint32_t> generation{0};
        std::atomic<uint32_t> live{0};
    };
    Entry& entry(uint32_t slot) const { return chunks_[slot / chunk_size].load()[slot % chunk_size]; }
    static uint64_t encode(uint32_t slot, uint32_t gen) {
        return (static_cast<uint64_t>(Kind) << 60) | (static_cast<uint64_t>(gen) << 32) |
               (static_cast<uint64_t>(slot) + 1);
    }
    static bool decode(uint64_t h, uint32_t& slot, uint32_t& gen) {
        if ((h >> 60) != static_cast<uint64_t>(Kind)) return false;
        uint64_t low = h & 0xffffffffu;
        if (low == 0 || low > uint64_t(chunk_size) * max_chunks) return false;
        slot = static_cast<uint32_t>(low - 1);
        gen = static_cast<uint32_t>((h >> 32) & gen_mask);
        return true;
    }

    mutable std::atomic<Entry*> chunks_[max_chunks] = {};
    std::mutex mutex_;
    std::vector<uint32_t> free_;
    uint32_t next_ = 0;
    uint32_t live_ = 0;
    uint32_t limit_ = capacity;
    const char* limit_source_ = nullptr;
};

}  // namespace px
