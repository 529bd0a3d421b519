// The plugin's own allocator: each device owns one arena, a single block of
// host memory carved first-fit into 64-byte-aligned ranges, with free
// neighbours merged. Its capacity is the device's memory, so asking for more
// than is free is a real out-of-memory, not a malloc that the OS overcommits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>

namespace threads_plugin {

class Arena {
public:
    explicit Arena(uint64_t capacity);
    ~Arena();
    Arena(const Arena&) = delete;
    Arena& operator=(const Arena&) = delete;

    // The start of a range of at least `bytes`, or nullptr when no free range
    // is large enough. A request of 0 bytes still gets a distinct range.
    char* allocate(uint64_t bytes);
    void release(char* p);

    uint64_t capacity() const { return capacity_; }
    uint64_t in_use();
    uint64_t peak();
    uint64_t largest_free();

private:
    static constexpr uint64_t kAlign = 64;
    const uint64_t capacity_;
    char* base_;
    std::mutex mutex_;
    std::map<uint64_t, uint64_t> free_;  // offset -> length, never adjacent
    std::map<uint64_t, uint64_t> used_;  // offset -> length
    uint64_t in_use_ = 0, peak_ = 0;
};

}  // namespace threads_plugin
