// Handle tables: the C API hands out 64-bit values, never raw pointers. A
// value encodes (kind, tag, generation, slot); a lookup checks all four, so a
// NULL, released, wrong-kind or foreign handle is an error, not undefined
// behaviour. The tag is per copy of libplexus in the process (two copies
// loaded side by side would otherwise accept each other's handles). A slot
// whose generations are used up is retired, never reused, so a released
// handle cannot come back to life. Lookups take no lock: slots live in
// chunks that never move.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "error.hpp"

namespace px {

enum class HandleKind : uint64_t { runtime = 1, tensor = 2, group = 3 };

// Bits of a handle, high to low: kind 4, tag 10, generation 26, slot 24.
struct HandleBits {
    static constexpr int slot = 24, generation = 26, tag = 10;
    static constexpr uint32_t tags = 1u << tag;
    static constexpr uint32_t generations = 1u << generation;  // uses of a slot before it retires
};

template <class T, HandleKind Kind>
class HandleTable {
public:
    static constexpr uint32_t chunk_size = 4096;
    static constexpr uint32_t max_chunks = 4096;  // 16M live handles
    static constexpr uint32_t capacity = chunk_size * max_chunks;
    static_assert(capacity == 1u << HandleBits::slot, "a slot number fills its bits");

    // `tag` (< HandleBits::tags) marks this table's handles. Tests may start
    // every slot at a later generation and use fewer slots.
    explicit HandleTable(uint32_t tag, uint32_t first_generation = 0, uint32_t slots = capacity)
        : tag_(tag % HandleBits::tags), first_generation_(first_generation), slots_(slots) {}
    ~HandleTable() {
        for (auto& c : chunks_) delete[] c.load();
    }
    HandleTable(const HandleTable&) = delete;
    HandleTable& operator=(const HandleTable&) = delete;

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
            // Reached when every slot was made and is live or retired.
            if (next_ == slots_)
                fail(PX_ERROR_OUT_OF_MEMORY, "no handle slot left of ", slots_, " (", retired_,
                     " retired after ", HandleBits::generations, " uses each)");
            slot = next_++;
            auto& chunk = chunks_[slot / chunk_size];
            if (!chunk.load()) {
                Entry* fresh = new Entry[chunk_size];
                for (uint32_t i = 0; i < chunk_size; ++i) fresh[i].generation.store(first_generation_);
                chunk.store(fresh);
            }
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
        if (slot >= next_) return;
        Entry& e = entry(slot);
        if (!e.live.load() || e.generation.load() != gen) return;
        e.live.store(0, std::memory_order_release);
        e.object.store(nullptr);
        --live_;
        if (gen + 1 == HandleBits::generations) {  // a next generation would wrap to a handle once given out
            ++retired_;
            return;
        }
        e.generation.store(gen + 1, std::memory_order_release);
        free_.push_back(slot);
    }

    // Held across fork() (host/fork.cpp), so that a child's copy is whole.
    void lock_for_fork() { mutex_.lock(); }
    void unlock_after_fork() { mutex_.unlock(); }

    // Why a handle is not valid, for messages.
    const char* diagnose(uint64_t handle) const noexcept {
        if (handle == 0) return "NULL";
        if ((handle >> 60) != static_cast<uint64_t>(Kind)) return "not a handle of this kind";
        if (tag_of(handle) != tag_) return "a handle of another copy of libplexus loaded in this process";
        return "released or never issued";
    }

private:
    static constexpr int gen_shift = HandleBits::slot, tag_shift = gen_shift + HandleBits::generation;
    static_assert(tag_shift + HandleBits::tag == 60, "kind, tag, generation and slot fill 64 bits");
    struct Entry {
        std::atomic<T*> object{nullptr};
        std::atomic<uint32_t> generation{0};
        std::atomic<uint32_t> live{0};
    };
    Entry& entry(uint32_t slot) const { return chunks_[slot / chunk_size].load()[slot % chunk_size]; }
    static uint32_t tag_of(uint64_t h) { return static_cast<uint32_t>(h >> tag_shift) & (HandleBits::tags - 1); }
    uint64_t encode(uint32_t slot, uint32_t gen) const {
        return (static_cast<uint64_t>(Kind) << 60) | (static_cast<uint64_t>(tag_) << tag_shift) |
               (static_cast<uint64_t>(gen) << gen_shift) | slot;
    }
    bool decode(uint64_t h, uint32_t& slot, uint32_t& gen) const {
        if ((h >> 60) != static_cast<uint64_t>(Kind) || tag_of(h) != tag_) return false;
        slot = static_cast<uint32_t>(h & (capacity - 1));
        gen = static_cast<uint32_t>(h >> gen_shift) & (HandleBits::generations - 1);
        return true;
    }
    mutable std::atomic<Entry*> chunks_[max_chunks] = {};
    std::mutex mutex_;
    std::vector<uint32_t> free_;
    const uint32_t tag_, first_generation_, slots_;
    uint32_t next_ = 0;
    uint32_t live_ = 0;
    uint32_t retired_ = 0;
    uint32_t limit_ = capacity;
    const char* limit_source_ = nullptr;
};

}  // namespace px
