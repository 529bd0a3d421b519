// The CUDA emulator's stream queues (emu_streams.hpp).
#include "emu_streams.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <random>
#include <string>
#include <thread>
#include <vector>

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

enum class Order { lazy, eager, random };

struct Mode {
    Order order = Order::lazy;
    uint64_t seed = 1;
};

const Mode& mode() {
    static const Mode m = [] {
        Mode m;
        const char* text = std::getenv("PLEXUS_CUDA_EMU_STREAMS");
        const std::string v = text ? text : "";
        char* end = nullptr;
        if (v.empty() || v == "lazy") return m;
        if (v == "eager") {
            m.order = Order::eager;
            return m;
        }
        if (v.rfind("random:", 0) == 0 && v.size() > 7) {
            m.order = Order::random;
            m.seed = std::strtoull(v.c_str() + 7, &end, 10);
            if (*end == '\0') return m;
        }
        std::fprintf(stderr, "CUDA emulator: PLEXUS_CUDA_EMU_STREAMS='%s' is not 'lazy', 'eager' or 'random:SEED'\n",
                     v.c_str());
        std::abort();
    }();
    return m;
}

// Every queue alive, for the random order to pick from (under the run lock).
std::vector<std::weak_ptr<Queue>>& all_queues() {
    static std::vector<std::weak_ptr<Queue>> queues;
    return queues;
}

// The random order: after each piece of work is queued, runs a random
// number of pieces, each the front of a random queue that has work, so
// streams interleave in a different way for each seed, as a GPU's may.
void run_some() {
    static std::mt19937_64 random(mode().seed);
    std::vector<std::shared_ptr<Queue>> ready;
    while (random() % 2) {
        ready.clear();
        auto& queues = all_queues();
        for (auto it = queues.begin(); it != queues.end();) {
            std::shared_ptr<Queue> q = it->lock();
            if (!q) {
                it = queues.erase(it);
                continue;
            }
            if (q->done < q->queued && !q->running) ready.push_back(q);
            ++it;
        }
        if (ready.empty()) return;
        const std::shared_ptr<Queue>& q = ready[random() % ready.size()];
        run_until(Position{q, q->done + 1});
    }
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
    std::lock_guard<std::recursive_mutex> lock(mutex);
    if (mode().order == Order::random) all_queues().push_back(q);
    return q;
}

int device_of(const Queue& q) { return q.device; }

std::recursive_mutex& run_lock() { return mutex; }

Position enqueue(const std::shared_ptr<Queue>& q, Work work) {
    std::lock_guard<std::recursive_mutex> lock(mutex);
    q->work.push_back(std::move(work));
    Position p{q, ++q->queued};
    if (mode().order == Order::eager) run_until(p);
    if (mode().order == Order::random) run_some();
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
