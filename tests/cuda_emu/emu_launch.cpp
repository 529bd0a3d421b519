// Kernel launches in the CUDA emulator (emu_kernel.hpp): a launch is checked
// when it is made and queued on its stream (emu_streams.hpp); when the stream
// gets to it, every thread of every block runs on the thread running the
// stream's work. Block 0's thread 0 runs first as a
// fiber; if it finishes without waiting for its block or warp, the kernel
// never waits and the other threads run as plain calls. Otherwise every
// block's threads run as fibers, switched at __syncthreads and at warp
// shuffles, which release once every live thread (or lane) has arrived, as a
// GPU's barriers do. A kernel that faults returns from its launch and loses
// its device (emu_runtime.hpp), as an illegal address does on a GPU.
//
// The fibers switch through Boost.Context's fcontext, which saves only the
// registers a call preserves: ucontext's swapcontext also saved and restored
// the signal mask with a system call at every switch, which was 73% of the
// emulated conformance suite's time (perf, 2026-11-27). AddressSanitizer is
// told of each switch (leaving_fiber and the rest, below), as it is not of
// fcontext's.
#include <boost/context/detail/fcontext.hpp>
#include <setjmp.h>
#include <signal.h>

#include <pthread.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "emu_kernel.hpp"
#include "emu_runtime.hpp"
#include "emu_streams.hpp"
#include "../sanitizers.hpp"

namespace px_emu {

Indices current;

namespace {

constexpr size_t kStackBytes = 64 * 1024;
constexpr unsigned kWarp = 32;

namespace fctx = boost::context::detail;

enum class State { runnable, at_block_barrier, at_warp_barrier, done };

struct Fiber {
    fctx::fcontext_t context = nullptr;  // where it resumes
    State state = State::runnable;
    uint64_t offered[2] = {0, 0};  // warp exchanges, by round parity: a lane is at most one round ahead
    unsigned round = 0;
};

struct BlockRun {
    const std::function<void()>* body = nullptr;
    std::vector<Fiber> fibers;
    fctx::fcontext_t scheduler = nullptr;  // where the running fiber returns to
    unsigned running = 0;
    bool waited = false;  // a thread met a barrier or a shuffle
};

// One launch at a time in the process: the state below is the running launch's.
std::mutex launching;
BlockRun* active = nullptr;  // the block whose fibers run
bool plain = false;          // threads run as plain calls: they must not wait
std::vector<char> stacks;

[[noreturn]] void fatal(const char* what) {
    std::fprintf(stderr, "CUDA emulator: %s\n", what);
    std::abort();
}

uint3 thread_of(unsigned i, dim3 b) { return uint3{i % b.x, (i / b.x) % b.y, i / (b.x * b.y)}; }

char* stack_of(unsigned i) { return stacks.data() + size_t(i) * kStackBytes; }

// AddressSanitizer follows a switch of stacks only when told of it: the
// side that leaves names the stack it enters, the side that arrives says
// so (common_interface_defs.h). The scheduler's stack is the thread's. The
// fibers share the thread's fake stack (detect_stack_use_after_return), as
// they did under ucontext: one of their own each, made and freed with every
// fiber, was half of the run's time in mmap and munmap.
#ifdef PXTEST_ASAN
}  // namespace
}  // namespace px_emu
#include <sanitizer/common_interface_defs.h>
namespace px_emu {
namespace {
const void* scheduler_stack = nullptr;
size_t scheduler_stack_size = 0;
void* fake_stack = nullptr;  // the running thread's
void leaving_scheduler_for(unsigned i) { __sanitizer_start_switch_fiber(&fake_stack, stack_of(i), kStackBytes); }
void back_in_scheduler() { __sanitizer_finish_switch_fiber(fake_stack, nullptr, nullptr); }
void leaving_fiber() {
    void* used = nullptr;  // (passing no place for it would free it)
    __sanitizer_start_switch_fiber(&used, scheduler_stack, scheduler_stack_size);
    if (used) fake_stack = used;  // the thread had none: the fiber made it, and the thread keeps it
}
void in_fiber() { __sanitizer_finish_switch_fiber(fake_stack, &scheduler_stack, &scheduler_stack_size); }
#else
void leaving_scheduler_for(unsigned) {}
void back_in_scheduler() {}
void leaving_fiber() {}
void in_fiber() {}
#endif

// A fiber's first frame: it runs the thread, then returns to the scheduler
// for good (an fcontext entry must never return).
void fiber_main(fctx::transfer_t from) {
    in_fiber();
    BlockRun& r = *static_cast<BlockRun*>(from.data);
    r.scheduler = from.fctx;
    (*r.body)();
    r.fibers[r.running].state = State::done;
    leaving_fiber();
    fctx::jump_fcontext(r.scheduler, nullptr);
    fatal("a finished fiber was resumed");
}

void start(BlockRun& r, unsigned i) {
    Fiber& f = r.fibers[i];
    f = Fiber{};
    f.context = fctx::make_fcontext(stack_of(i) + kStackBytes, kStackBytes, fiber_main);  // stacks grow down
}

bool on_a_fiber = false;  // a fault there leaves that stack for the scheduler's

void resume(BlockRun& r, unsigned i) {
    r.running = i;
    current.thread = thread_of(i, current.block_dim);
    leaving_scheduler_for(i);
    on_a_fiber = true;
    const fctx::transfer_t back = fctx::jump_fcontext(r.fibers[i].context, &r);
    on_a_fiber = false;
    back_in_scheduler();
    r.fibers[i].context = back.fctx;
}

// Parks the running fiber in `state` until the scheduler releases it.
Fiber& park(State state) {
    if (plain || !active)
        fatal("a kernel waited at a barrier or shuffle although its first thread did not; the emulator "
              "needs every thread of a kernel to meet the same barriers");
    BlockRun& r = *active;
    Fiber& f = r.fibers[r.running];
    f.state = state;
    r.waited = true;
    leaving_fiber();
    const fctx::transfer_t from = fctx::jump_fcontext(r.scheduler, nullptr);
    in_fiber();
    r.scheduler = from.fctx;
    return f;
}

// Runs the block's fibers (those below `started` exist already) to the end.
void run_fibers(BlockRun& r, unsigned started) {
    const unsigned n = unsigned(r.fibers.size());
    for (unsigned i = started; i < n; ++i) start(r, i);
    for (;;) {
        for (unsigned i = 0; i < n; ++i)
            if (r.fibers[i].state == State::runnable) resume(r, i);
        unsigned live = 0, at_block = 0;
        bool released = false;
        for (unsigned w = 0; w < n; w += kWarp) {
            unsigned live_lanes = 0, at_warp = 0;
            for (unsigned i = w; i < std::min(n, w + kWarp); ++i) {
                const State s = r.fibers[i].state;
                live_lanes += s != State::done;
                at_warp += s == State::at_warp_barrier;
                at_block += s == State::at_block_barrier;
            }
            live += live_lanes;
            if (at_warp > 0 && at_warp == live_lanes) {
                for (unsigned i = w; i < std::min(n, w + kWarp); ++i)
                    if (r.fibers[i].state == State::at_warp_barrier) r.fibers[i].state = State::runnable;
                released = true;
            }
        }
        if (live == 0) return;
        if (!released && at_block == live) {
            for (Fiber& f : r.fibers)
                if (f.state == State::at_block_barrier) f.state = State::runnable;
            released = true;
        }
        if (!released) fatal("deadlock: the threads of a block wait at different barriers");
    }
}

// Faults inside a kernel jump back to its launch; others go to the handler
// that was there before.
sigjmp_buf* fault_exit = nullptr;  // set while a kernel runs
pthread_t kernel_thread;           // the thread running it
struct sigaction previous_segv, previous_bus;

void on_fault(int sig, siginfo_t* info, void* context) {
    if (fault_exit && pthread_equal(pthread_self(), kernel_thread)) {
        if (on_a_fiber) leaving_fiber();  // its frames are abandoned
        siglongjmp(*fault_exit, 1);
    }
    const struct sigaction& before = sig == SIGSEGV ? previous_segv : previous_bus;
    if (before.sa_flags & SA_SIGINFO) return before.sa_sigaction(sig, info, context);
    sigaction(sig, &before, nullptr);  // default or ignore: fault again with it
}

// (Re)installed before each kernel runs: a test framework may have put its
// own handler in since (Catch2 does, per test case).
void catch_faults() {
    struct sigaction now {};
    if (sigaction(SIGSEGV, nullptr, &now) == 0 && (now.sa_flags & SA_SIGINFO) && now.sa_sigaction == on_fault) return;
    struct sigaction action {};
    action.sa_sigaction = on_fault;
    action.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&action.sa_mask);
    sigaction(SIGSEGV, &action, &previous_segv);
    sigaction(SIGBUS, &action, &previous_bus);
}

bool valid(dim3 grid, dim3 block, size_t shared_bytes) {
    const uint64_t threads = uint64_t(block.x) * block.y * block.z;
    return threads >= 1 && threads <= 1024 && block.x <= 1024 && block.y <= 1024 && block.z <= 64 && grid.x >= 1 &&
           grid.x <= 0x7fffffffu && grid.y >= 1 && grid.y <= 65535 && grid.z >= 1 && grid.z <= 65535 &&
           shared_bytes <= 48 * 1024;
}

// Runs every thread of every block of a kernel now (its stream got to it).
void run_kernel(dim3 grid, dim3 block, const std::function<void()>& thread_body) {
    catch_faults();
    std::lock_guard<std::mutex> one_at_a_time(launching);
    BlockRun r;  // before the jump point: a fault returns to it with r alive
    sigjmp_buf exit;
    if (sigsetjmp(exit, 1) != 0) {  // the kernel faulted: its threads are abandoned
        if (on_a_fiber) back_in_scheduler();
        on_a_fiber = false;
        fault_exit = nullptr;
        active = nullptr;
        plain = false;
        std::fprintf(stderr, "CUDA emulator: a kernel faulted; the device is lost, as after an illegal address\n");
        return note_device_fault();
    }
    kernel_thread = pthread_self();
    fault_exit = &exit;
    const unsigned n = block.x * block.y * block.z;
    const uint64_t blocks = uint64_t(grid.x) * grid.y * grid.z;
    r.body = &thread_body;
    r.fibers.resize(n);
    if (stacks.size() < size_t(n) * kStackBytes) stacks.resize(size_t(n) * kStackBytes);
    current.grid_dim = grid;
    current.block_dim = block;
    active = &r;
    bool plain_kernel = false;
    for (uint64_t b = 0; b < blocks; ++b) {
        current.block = uint3{unsigned(b % grid.x), unsigned(b / grid.x % grid.y), unsigned(b / (uint64_t(grid.x) * grid.y))};
        unsigned started = 0;
        if (b == 0) {
            start(r, 0);
            resume(r, 0);
            started = 1;
            plain_kernel = r.fibers[0].state == State::done && !r.waited;
        }
        if (plain_kernel) {
            plain = true;
            for (unsigned i = started; i < n; ++i) {
                current.thread = thread_of(i, block);
                thread_body();
            }
            plain = false;
        } else {
            run_fibers(r, started);
        }
    }
    active = nullptr;
    fault_exit = nullptr;
}

}  // namespace

void sync_block() { park(State::at_block_barrier); }

uint64_t exchange_in_warp(uint64_t bits, int lane_mask) {
    BlockRun& r = *active;
    const unsigned me = r.running;
    const unsigned slot = r.fibers[me].round & 1;
    r.fibers[me].offered[slot] = bits;
    Fiber& f = park(State::at_warp_barrier);
    const unsigned partner = (me & ~(kWarp - 1)) | ((me & (kWarp - 1)) ^ unsigned(lane_mask));
    const uint64_t got = partner < r.fibers.size() ? r.fibers[partner].offered[slot] : bits;
    ++f.round;
    return got;
}

void Launcher::launch(std::function<void()> thread_body) {
    if (!valid(grid_, block_, shared_bytes_)) return note_launch_error(cudaErrorInvalidConfiguration);
    const std::shared_ptr<Queue> q = queue_of(stream_);
    if (!q) return note_launch_error(cudaErrorInvalidResourceHandle);
    if (const cudaError_t e = refused("cudaLaunchKernel", device_of(*q))) return note_launch_error(e);
    enqueue(q, [grid = grid_, block = block_, body = std::move(thread_body)] {
        run_kernel(grid, block, body);
        return true;
    });
}

}  // namespace px_emu
