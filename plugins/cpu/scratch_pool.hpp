// Scratch memory for kernels (im2col columns, padded planes, per-thread
// partial sums), kept between ops. A fresh std::vector per op sat above
// glibc's mmap threshold, so every op faulted its pages in anew, one by one
// on the thread that zeroed them: LeNet's second-layer weight gradient took
// 790 us in a program that did little else, 400 us inside plexus-train,
// whose other allocations happened to keep the heap grown.
//
// Buffers are leased and given back; a device runs its ops one at a time, so
// devices computing at once lease different buffers. Up to kept_bytes of
// given-back buffers are kept for the next lease; larger ones go back to the
// system at once.
//
// A lease is charged to a budget while it lasts: the device whose op makes
// it (OpTask::scratch), so an op's scratch counts against that device's
// memory (PLEXUS_CPU_MEMORY_LIMIT) as its tensors do. The budget is passed
// along, not kept per thread: a thread_local in this dlopen'ed plugin would
// be dynamic TLS, which crashed LeakSanitizer's tracer at exit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>
#include <string>
#include <utility>

namespace pxcpu {

constexpr size_t scratch_kept_bytes = size_t(64) << 20;

class ScratchBudget {
public:
    // False, with the reason and the figures in `why`, when `bytes` more do not fit.
    virtual bool charge(size_t bytes, std::string& why) = 0;
    virtual void refund(size_t bytes) = 0;

protected:
    ~ScratchBudget() = default;
};

// A lease the budget refused: out of memory, with the budget's reason.
class ScratchRefused : public std::bad_alloc {
public:
    explicit ScratchRefused(std::string why) : why_(std::move(why)) {}
    const char* what() const noexcept override { return why_.c_str(); }

private:
    std::string why_;
};

class ScratchLease {
public:
    // At least `bytes`, 64-byte aligned, not zeroed, charged to `budget`
    // (none: not charged). Throws ScratchRefused, saying why, when the budget
    // or the system refuses it.
    explicit ScratchLease(size_t bytes, ScratchBudget* budget = nullptr);
    ~ScratchLease();
    ScratchLease(const ScratchLease&) = delete;
    ScratchLease& operator=(const ScratchLease&) = delete;
    void* data() const { return data_; }

private:
    void* data_;
    size_t capacity_;
    ScratchBudget* budget_;  // what was charged, or nullptr
    size_t charged_;
};

// Bytes kept for later leases and buffers leased now (for tests).
struct ScratchFigures {
    size_t kept_bytes, kept_buffers, leased_buffers;
};
ScratchFigures scratch_figures();

// Makes the pool now. A device queue calls it before it registers for the
// exit drain: static objects die in the reverse order of their making, so
// the pool outlives the drain, whose ops still lease scratch.
void make_scratch_pool();

// One zeroed part per thread of an op's OpenMP team, from one lease; each
// part starts on a 64-byte boundary. zero_part(k) is called by thread k, so
// the pages a thread works in are the ones it touched first.
template <class T>
class ThreadScratch {
public:
    // Throws std::bad_alloc when the parts' total does not fit a size_t.
    ThreadScratch(ScratchBudget* budget, int threads, size_t elems_per_thread)
        : threads_(threads),
          stride_(part_stride(elems_per_thread)),
          elems_(elems_per_thread),
          lease_(total_bytes(stride_, threads), budget) {}
    int threads() const { return threads_; }
    T* part(int k) const { return reinterpret_cast<T*>(static_cast<char*>(lease_.data()) + stride_ * size_t(k)); }
    void zero_part(int k) const { std::memset(static_cast<void*>(part(k)), 0, elems_ * sizeof(T)); }

private:
    static size_t part_stride(size_t elems) {
        if (elems > (SIZE_MAX - 63) / sizeof(T)) throw std::bad_alloc();
        return (elems * sizeof(T) + 63) / 64 * 64;
    }
    static size_t total_bytes(size_t stride, int threads) {
        if (threads < 1 || (stride != 0 && size_t(threads) > SIZE_MAX / stride)) throw std::bad_alloc();
        return stride * size_t(threads);
    }

    int threads_;
    size_t stride_, elems_;
    ScratchLease lease_;
};

}  // namespace pxcpu
