// A tensor's reference count: 64 bits, and a retain at the limit is refused,
// so no number of retains can wrap it to where one release frees an object
// still in use (a 32-bit count wrapped after 2^32 retains).
#pragma once

#include <atomic>
#include <cstdint>

#include "error.hpp"

namespace px {

class RefCount {
public:
    static constexpr uint64_t limit = uint64_t(1) << 62;  // far below the wrap, so racing retains cannot reach it

    explicit RefCount(uint64_t start = 1) : n_(start) {}

    // One more reference, or PX_ERROR_OUT_OF_MEMORY at the limit.
    void retain() {
        const uint64_t before = n_.fetch_add(1, std::memory_order_relaxed);
        if (before >= limit) {
            n_.fetch_sub(1, std::memory_order_relaxed);
            fail(PX_ERROR_OUT_OF_MEMORY, "the tensor already has ", before, " references, the most one may hold");
        }
    }
    // Drops one reference; true when it was the last.
    bool release() { return n_.fetch_sub(1, std::memory_order_acq_rel) == 1; }
    uint64_t count() const { return n_.load(std::memory_order_relaxed); }

private:
    std::atomic<uint64_t> n_;
};

}  // namespace px
