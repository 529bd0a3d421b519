// Kernel launches in the CUDA emulator (emu_kernel.hpp): a launch is checked
// when it is made and queued on its stream (emu_streams.hpp); when the stream
// gets to it, every thread of every block runs on the thread running the
// stream's work. Block 0's thread 0 runs first as a
// fiber; if it finishes without waiting for its block or warp, the kernel
// never waits and the other threads run as plain calls. Otherwise every
// block's threads run as fibers (ucontext), switched at __syncthreads and at
// warp shuffles, which release once every live thread (or lane) has arrived,
// as a GPU's barriers do. A kernel that faults returns from its launch and
// loses its device (emu_runtime.hpp), as an illegal address does on a GPU.
#include <setjmp.h>
#include <signal.h>
#include <ucontext.h>

#include <pthread.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "emu_kernel.hpp"
#include "emu_runtime.hpp"
#include "emu_streams.hpp"

namespace px_emu {

Indices current;

namespace {

constexpr size_t kStackBytes = 64 * 1024;
constexpr unsigned kWarp = 32;

enum class State { runnable, at_block_barrier, at_warp_barrier, done };

struct Fiber {
    ucontext_t context;
    State state = State::runnable;
    uint64_t offered[2] = {0, 0};  // warp exchanges, by round parity: a lane is at most one round ahead
    unsigned round = 0;
};

struct BlockRun {
    const std::function<void()>* body = nullptr;
    std::vector<Fiber> fibers;
    ucontext_t scheduler;
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

void fiber_main() {
    BlockRun& r = *active;
    (*r.body)();
    r.fibers[r.running].state = State::done;  // returning resumes uc_link, the scheduler
}

void start(BlockRun& r, unsigned i) {
    Fiber& f = r.fibers[i];
    f = Fiber{};
    if (getcontext(&f.context) != 0) fatal("getcontext failed");
    f.context.uc_stack.ss_sp = stacks.data() + size_t(i) * kStackBytes;
    f.context.uc_stack.ss_size = kStackBytes;
    f.context.uc_link = &r.scheduler;
    makecontext(&f.context, fiber_main, 0);
}

void resume(BlockRun& r, unsigned i) {
    r.running = i;
    current.thread = thread_of(i, current.block_dim);
    if (swapcontext(&r.scheduler, &r.fibers[i].context) != 0) fatal("swapcontext failed");
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
    if (swapcontext(&f.context, &r.scheduler) != 0) fatal("swapcontext failed");
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
    if (fault_exit && pthread_equal(pthread_self(), kernel_thread)) siglongjmp(*fault_exit, 1);
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
