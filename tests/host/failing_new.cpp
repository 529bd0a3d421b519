// The global operator new and delete, every form, over malloc and free (see
// failing_new.hpp). The test executable's definitions take the place of the
// C++ library's for libplexus and the plugins it loads too (ELF symbol
// interposition), so the host and the CPU plugin see the injected failures.
#include "failing_new.hpp"

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

#include <execinfo.h>

namespace failing_new {
namespace {

std::atomic<int64_t> g_live{0};
const bool g_trace = std::getenv("PLEXUS_TEST_TRACE_FAILED_ALLOCATIONS") != nullptr;

struct ThreadState {
    bool armed = false;
    bool stay = false;
    bool fired = false;
    uint64_t countdown = 0;
    int paused = 0;  // inside the CUDA emulator (px_test_pause_allocation_failures)
};
thread_local ThreadState t_state;  // trivially constructed: safe inside operator new

// fail_any_thread_from's count, shared by every thread.
struct AnyThread {
    std::atomic<bool> armed{false}, stay{false}, fired{false};
    std::atomic<int64_t> countdown{0};
} g_any;

void trace(ThreadState& s) {  // which allocation, for whoever debugs a failing run
    if (!g_trace) return;
    ++s.paused;  // backtrace() may allocate on its first call
    void* frames[48];
    backtrace_symbols_fd(frames, backtrace(frames, 48), 2);
    --s.paused;
}

bool should_fail() {
    ThreadState& s = t_state;
    if (s.paused > 0) return false;  // neither failed nor counted
    if (g_any.armed.load(std::memory_order_acquire)) {
        const int64_t left = g_any.countdown.fetch_sub(1, std::memory_order_acq_rel);
        if (left > 0 || (left < 0 && !g_any.stay.load(std::memory_order_relaxed))) return false;
        g_any.fired.store(true, std::memory_order_release);
        trace(s);
        return true;
    }
    if (!s.armed) return false;
    if (s.countdown > 0) {
        --s.countdown;
        return false;
    }
    s.fired = true;
    if (!s.stay) s.armed = false;
    trace(s);
    return true;
}

void* allocate(std::size_t n, std::size_t align) {
    if (should_fail()) return nullptr;
    if (n == 0) n = 1;
    void* p = nullptr;
    if (align <= alignof(std::max_align_t)) {
        p = std::malloc(n);
    } else if (posix_memalign(&p, align, n) != 0) {
        p = nullptr;
    }
    if (p) g_live.fetch_add(1, std::memory_order_relaxed);
    return p;
}

void release(void* p) noexcept {
    if (!p) return;
    g_live.fetch_sub(1, std::memory_order_relaxed);
    std::free(p);
}

void* allocate_or_throw(std::size_t n, std::size_t align) {
    void* p = allocate(n, align);
    if (!p) throw std::bad_alloc();
    return p;
}

}  // namespace

void fail_from(uint64_t n, bool stay) {
    g_any.fired.store(false);
    t_state = ThreadState{true, stay, false, n, t_state.paused};
}
void fail_any_thread_from(uint64_t n, bool stay) {
    t_state.fired = false;
    g_any.fired.store(false);
    g_any.stay.store(stay);
    g_any.countdown.store(int64_t(n));
    g_any.armed.store(true, std::memory_order_release);
}
void disarm() {
    g_any.armed.store(false, std::memory_order_release);
    t_state.armed = false;
}
bool fired() { return t_state.fired || g_any.fired.load(std::memory_order_acquire); }
int64_t live_blocks() { return g_live.load(); }

}  // namespace failing_new

using failing_new::allocate;
using failing_new::allocate_or_throw;
using failing_new::release;
constexpr std::size_t plain = alignof(std::max_align_t);

void* operator new(std::size_t n) { return allocate_or_throw(n, plain); }
void* operator new[](std::size_t n) { return allocate_or_throw(n, plain); }
void* operator new(std::size_t n, std::align_val_t a) { return allocate_or_throw(n, std::size_t(a)); }
void* operator new[](std::size_t n, std::align_val_t a) { return allocate_or_throw(n, std::size_t(a)); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return allocate(n, plain); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return allocate(n, plain); }
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept { return allocate(n, std::size_t(a)); }
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
    return allocate(n, std::size_t(a));
}

void operator delete(void* p) noexcept { release(p); }
void operator delete[](void* p) noexcept { release(p); }
void operator delete(void* p, std::size_t) noexcept { release(p); }
void operator delete[](void* p, std::size_t) noexcept { release(p); }
void operator delete(void* p, std::align_val_t) noexcept { release(p); }
void operator delete[](void* p, std::align_val_t) noexcept { release(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { release(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { release(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { release(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { release(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { release(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { release(p); }

// Called by the CUDA emulator's entry points (tests/cuda_emu/emu_driver_scope.hpp).
extern "C" __attribute__((visibility("default"))) void px_test_pause_allocation_failures(int delta) {
    failing_new::t_state.paused += delta;
}
