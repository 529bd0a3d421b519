// The CUDA emulator's stream queues (emu_streams.hpp).
#include "emu_streams.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <thread>

#include "emu_runtime.hpp"

namespace px_emu {

struct Queue {
    int device;
    std::deque<Work> work;
    uint64_t queued = 0, done = 0;  // counts since the queue was made
    bool running = false;           // its front is running (further up this thread's stack)
};

namespace {

std::recursive_mutex mutex;

bool eager_streams() {
    static const bool eager = [] {
        const char* mode = std::getenv("PLEXUS_CUDA_EMU_STREAMS");
        if (!mode || !*mode || std::strcmp(mode, "lazy") == 0) return false;
        if (std::strcmp(mode, "eager") == 0) return true;
        std::fprintf(stderr, "CUDA emulator: PLEXUS_CUDA_EMU_STREAMS='%s' is neither 'lazy' nor 'eager'\n", mode);
        std::abort();
    }();
    return eager;
}

// Makes `device` current on this thread while work of its queue runs (a
// fault inside loses that device), then restores the caller's.
class RunningOn {
public:
    explicit RunningOn(int device) : previous_(exchange_current_device(device)) {}
    ~RunningOn() { exchange_current_device(previous_); }
    RunningOn(const RunningOn&) = delete;
    RunningOn& operator=(const RunningOn&) = delete;

private:
    int previous_;
};

}  // namespace

std::shared_ptr<Queue> make_queue(int device) {
    auto q = std::make_shared<Queue>();
    q->device = device;
    return q;
}

int device_of(const Queue& q) { return q.device; }

std::recursive_mutex& run_lock() { return mutex; }

Position enqueue(const std::shared_ptr<Queue>& q, Work work) {
    std::lock_guard<std::recursive_mutex> lock(mutex);
    q->work.push_back(std::move(work));
    Position p{q, ++q->queued};
    if (eager_streams()) run_until(p);
    return p;
}

Position end_of(const std::shared_ptr<Queue>& q) {
    std::lock_guard<std::recursive_mutex> lock(mutex);
    return Position{q, q->queued};
}

bool finished(const Position& p) {
    std::lock_guard<std::recursive_mutex> lock(mutex);
    return !p.queue || p.queue->done >= p.seq;
}

bool run_until(const Position& p) {
    std::lock_guard<std::recursive_mutex> lock(mutex);
    if (!p.queue) return true;
    Queue& q = *p.queue;
    if (q.running) return q.done >= p.seq;
    while (q.done < p.seq) {
        bool done = true;
        if (!device_is_lost(q.device)) {
            q.running = true;
            RunningOn on(q.device);
            done = q.work.front()();  // a deque's elements stay put while others are pushed
            q.running = false;
        }
        if (!done) return false;
        q.work.pop_front();
        ++q.done;
    }
    return true;
}

void wait_until(const Position& p) {
    for (;;) {
        if (run_until(p)) return;
        std::this_thread::sleep_for(std::chrono::microseconds(50));  // another thread's work will unblock it
    }
}

}  // namespace px_emu
