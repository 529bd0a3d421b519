#include "arena.hpp"

#include <cstdlib>
#include <new>

namespace threads_plugin {

Arena::Arena(uint64_t capacity) : capacity_(capacity / kAlign * kAlign) {
    base_ = static_cast<char*>(std::aligned_alloc(kAlign, capacity_));
    if (!base_) throw std::bad_alloc();
    free_[0] = capacity_;
}

Arena::~Arena() { std::free(base_); }

char* Arena::allocate(uint64_t bytes) {
    if (bytes > capacity_) return nullptr;
    uint64_t length = bytes == 0 ? kAlign : (bytes + kAlign - 1) / kAlign * kAlign;
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = free_.begin(); it != free_.end(); ++it) {
        if (it->second < length) continue;
        uint64_t offset = it->first, rest = it->second - length;
        free_.erase(it);
        if (rest) free_[offset + length] = rest;
        used_[offset] = length;
        in_use_ += length;
        if (in_use_ > peak_) peak_ = in_use_;
        return base_ + offset;
    }
    return nullptr;
}

void Arena::release(char* p) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto used = used_.find(static_cast<uint64_t>(p - base_));
    if (used == used_.end()) return;  // not ours: the plugin never passes such a pointer
    uint64_t offset = used->first, length = used->second;
    used_.erase(used);
    in_use_ -= length;
    auto next = free_.lower_bound(offset);
    if (next != free_.end() && offset + length == next->first) {  // merge with the range after
        length += next->second;
        next = free_.erase(next);
    }
    if (next != free_.begin()) {  // merge with the range before
        auto prev = std::prev(next);
        if (prev->first + prev->second == offset) {
            prev->second += length;
            return;
        }
    }
    free_[offset] = length;
}

uint64_t Arena::in_use() {
    std::lock_guard<std::mutex> lock(mutex_);
    return in_use_;
}

uint64_t Arena::peak() {
    std::lock_guard<std::mutex> lock(mutex_);
    return peak_;
}

uint64_t Arena::largest_free() {
    std::lock_guard<std::mutex> lock(mutex_);
    uint64_t best = 0;
    for (auto& r : free_) best = r.second > best ? r.second : best;
    return best;
}

}  // namespace threads_plugin
