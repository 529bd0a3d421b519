#include "allocator.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <new>

#include <unistd.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "address_space.hpp"
#include "host_blocks.hpp"

namespace pxcpu {

namespace {
std::string figures_text(uint64_t in_use, uint64_t limit, uint64_t free) {
    std::string s = std::to_string(in_use) + " bytes in use";
    if (limit) s += ", limit " + std::to_string(limit) + " bytes (PLEXUS_CPU_MEMORY_LIMIT)";
    return s + ", " + std::to_string(free) + " bytes free";
}
uint64_t physical_bytes(int name) { return static_cast<uint64_t>(sysconf(name)) * static_cast<uint64_t>(sysconf(_SC_PAGESIZE)); }
}  // namespace

Allocator::Allocator(int32_t device, uint64_t limit, QueueProgress* progress, uint64_t cache_floor)
    : device_(device),
      limit_(limit),
      machine_bytes_(physical_bytes(_SC_PHYS_PAGES)),
      cache_floor_(cache_floor ? cache_floor : std::clamp(machine_bytes_ / 16, kCacheFloorLeast, kCacheFloorMost)),
      progress_(progress) {}

// The device's queue has run everything and is gone by now.
Allocator::~Allocator() { trim_locked(UINT64_MAX); }

uint64_t Allocator::size_class(uint64_t bytes) {
    if (bytes <= 64) return 64;
    constexpr uint64_t mib = 1ull << 20;
    if (bytes < mib) {
        uint64_t c = 128;
        while (c < bytes) c <<= 1;
        return c;
    }
    if (bytes > UINT64_MAX - mib) return 0;
    return (bytes + mib - 1) / mib * mib;
}

px_plugin_buffer* Allocator::allocate(uint64_t bytes, std::string& why) {
    uint64_t cls = size_class(bytes);
    std::unique_lock<std::mutex> lock(mutex_);
    px_plugin_buffer* b = nullptr;
    bool system_refused = false;
    if (cls && fits_locked(cls)) {
        auto& list = free_list(cls);
        if (!list.empty()) {
            b = list.back();
            list.pop_back();
            cached_ -= cls;
        } else {
            if (cached_ > cache_cap_locked()) trim_idle_locked(cache_cap_locked() / 2);  // sizes that vary: no endless cache
            make_room(lock, cls, true);  // the cache counts against the limit
            void* mem = allocate_host_block(cls);
            if (!mem) {
                make_room(lock, UINT64_MAX, true);  // free the whole cache, then try once more
                mem = allocate_host_block(cls);
            }
            if (mem) {
                b = new (std::nothrow) px_plugin_buffer{static_cast<char*>(mem), 0, cls, device_, 0};
                if (!b) {  // the block was there; its small record was not
                    std::free(mem);
                    why = "out of host memory for the record of a block on cpu(" + std::to_string(device_) + ")";
                    return nullptr;
                }
                reserved_ += cls;
            } else {
                system_refused = true;
            }
        }
    }
    if (!b) {
        why = refusal_locked(bytes, " bytes");
        if (system_refused) why += "; the system refused the block (" + address_space_text() + ")";
        return nullptr;
    }
    b->bytes = bytes;
    in_use_ += cls;
    if (in_use_ > peak_) peak_ = in_use_;
    return b;
}

// Without a limit, one request larger than the machine's memory is still
// refused: overcommit would grant it and the OOM killer end the process.
bool Allocator::fits_locked(uint64_t bytes) const {
    if (!limit_) return bytes <= machine_bytes_;
    return bytes <= limit_ && in_use_ <= limit_ - bytes;
}

void Allocator::return_pages(uint64_t freed) {
#ifdef __GLIBC__
    // Blocks under glibc's mmap threshold (which grows to 32 MiB as large
    // blocks are freed) stay in its heap once freed: give the pages back.
    if (freed >= kTrimReturnsPages) malloc_trim(0);
#else
    (void)freed;
#endif
}

uint64_t Allocator::cache_cap_locked() const { return std::max(cache_floor_, 2 * peak_); }

void Allocator::trim_idle_locked(uint64_t target) {
    const uint64_t done = progress_ ? progress_->completed() : UINT64_MAX;
    std::vector<px_plugin_buffer*> idle;
    try {
        for (auto& list : small_)
            for (auto* b : list)
                if (b->released_at <= done) idle.push_back(b);
        for (auto& [cls, list] : large_)
            for (auto* b : list)
                if (b->released_at <= done) idle.push_back(b);
    } catch (const std::bad_alloc&) {  // no room to sort them: all of them go
        trim_locked(done);
        return;
    }
    std::sort(idle.begin(), idle.end(), [](const px_plugin_buffer* a, const px_plugin_buffer* b) {
        return a->released_at < b->released_at;
    });
    uint64_t freed = 0;
    for (px_plugin_buffer* b : idle) {
        if (cached_ - freed <= target) break;
        b->evicted = true;
        freed += b->class_size;
    }
    auto drop = [&](std::vector<px_plugin_buffer*>& list) {
        // partition, not remove_if: the evicted blocks must be there, after the kept ones, to be freed
        const auto going = std::partition(list.begin(), list.end(), [](const px_plugin_buffer* b) { return !b->evicted; });
        for (auto it = going; it != list.end(); ++it) {
            std::free((*it)->data);
            delete *it;
        }
        list.erase(going, list.end());
    };
    for (auto& list : small_) drop(list);
    for (auto& [cls, list] : large_) drop(list);
    reserved_ -= freed;
    cached_ -= freed;
    return_pages(freed);
}

std::string Allocator::refusal_locked(uint64_t bytes, const char* what) const {
    const uint64_t free = limit_ ? (limit_ > in_use_ ? limit_ - in_use_ : 0) : physical_bytes(_SC_AVPHYS_PAGES);
    return "out of memory on cpu(" + std::to_string(device_) + "): asked for " + std::to_string(bytes) + what + "; " +
           figures_text(in_use_, limit_, free);
}

bool Allocator::charge(size_t bytes, std::string& why) {
    std::unique_lock<std::mutex> lock(mutex_);
    // On the worker (or in an op run inline): it cannot wait for its own queue.
    make_room(lock, bytes, false);
    if (!fits_locked(bytes)) {
        why = refusal_locked(bytes, " bytes of scratch space for the op");
        return false;
    }
    in_use_ += bytes;
    if (in_use_ > peak_) peak_ = in_use_;
    return true;
}

void Allocator::refund(size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    in_use_ -= bytes;
}

void Allocator::release(px_plugin_buffer* b) {
    b->released_at = progress_ ? progress_->queued() : 0;
    std::lock_guard<std::mutex> lock(mutex_);
    in_use_ -= b->class_size;
    try {
        free_list(b->class_size).push_back(b);
        cached_ += b->class_size;
    } catch (const std::bad_alloc&) {  // no room to cache it: give it back instead
        reserved_ -= b->class_size;
        std::free(b->data);
        delete b;
    }
}

MemoryFigures Allocator::figures() {
    std::lock_guard<std::mutex> lock(mutex_);
    uint64_t total = limit_ ? limit_ : machine_bytes_;
    uint64_t free = limit_ ? (limit_ > in_use_ ? limit_ - in_use_ : 0) : physical_bytes(_SC_AVPHYS_PAGES);
    return {total, free, in_use_, reserved_, peak_};
}

void Allocator::trim() {
    std::unique_lock<std::mutex> lock(mutex_);
    make_room(lock, UINT64_MAX, true);
}

void Allocator::make_room(std::unique_lock<std::mutex>& lock, uint64_t bytes, bool may_wait) {
    auto fits = [&] { return bytes != UINT64_MAX && (!limit_ || (reserved_ <= limit_ && bytes <= limit_ - reserved_)); };
    if (fits()) return;
    uint64_t wait_for = trim_locked();
    while (may_wait && wait_for && !fits()) {
        lock.unlock();  // the worker charges scratch here while it runs the ops waited for
        progress_->wait_until_completed(wait_for);
        lock.lock();
        wait_for = trim_locked();
    }
}

std::vector<px_plugin_buffer*>& Allocator::free_list(uint64_t cls) {
    if (cls < (1ull << 20)) return small_[__builtin_ctzll(cls) - 6];  // cls is a power of two here
    return large_[cls];
}

uint64_t Allocator::trim_locked() { return trim_locked(progress_ ? progress_->completed() : UINT64_MAX); }

uint64_t Allocator::trim_locked(uint64_t done) {
    uint64_t still_in_use_until = 0;
    auto drop = [&](std::vector<px_plugin_buffer*>& blocks) {
        size_t kept = 0;
        for (auto* b : blocks) {
            if (b->released_at > done) {  // an op queued before its release has not run yet
                blocks[kept++] = b;
                still_in_use_until = std::max(still_in_use_until, b->released_at);
                continue;
            }
            reserved_ -= b->class_size;
            cached_ -= b->class_size;
            std::free(b->data);
            delete b;
        }
        blocks.resize(kept);
    };
    const uint64_t before = reserved_;
    for (auto& list : small_) drop(list);
    for (auto& [cls, blocks] : large_) drop(blocks);
    return_pages(before - reserved_);
    return still_in_use_until;
}

uint64_t parse_bytes(const char* text, bool& ok) {
    ok = false;
    // strtoull would take "-1" (as 2^64 - 1) and leading spaces: digits first.
    if (!text || *text < '0' || *text > '9') return 0;
    char* end = nullptr;
    errno = 0;
    unsigned long long v = std::strtoull(text, &end, 10);
    if (end == text || errno == ERANGE) return 0;  // ERANGE: past 2^64 - 1, which strtoull gives instead
    uint64_t mult = 1;
    switch (*end) {
    case 'K': case 'k': mult = 1ull << 10, ++end; break;
    case 'M': case 'm': mult = 1ull << 20, ++end; break;
    case 'G': case 'g': mult = 1ull << 30, ++end; break;
    default: break;
    }
    if (*end == 'B' || *end == 'b') ++end;
    if (*end != '\0' || v == 0 || v > UINT64_MAX / mult) return 0;
    ok = true;
    return v * mult;
}

}  // namespace pxcpu
