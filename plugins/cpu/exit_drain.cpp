#include "exit_drain.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <vector>

#include "device_queue.hpp"

namespace pxcpu {
namespace {

// Set once the registry below is destroyed: a queue made or destroyed later
// in the exit (by another static object's destructor) leaves it alone.
// Trivially destructible, so it can be read at any point of the exit.
std::atomic<bool> g_registry_gone{false};

// A function-local static: its destructor is registered (with this plugin's
// handle) when the first queue is made, so it runs at exit, or when the
// plugin is unloaded, by which time every queue is gone.
struct LiveQueues {
    std::mutex mu;
    std::vector<DeviceQueue*> queues;
    ~LiveQueues() {
        std::lock_guard<std::mutex> lock(mu);
        for (DeviceQueue* q : queues) q->drain();
        g_registry_gone.store(true);
    }
};

LiveQueues& live_queues() {
    static LiveQueues live;
    return live;
}

}  // namespace

void drain_at_exit(DeviceQueue* queue) {
    if (g_registry_gone.load()) return;
    LiveQueues& live = live_queues();
    std::lock_guard<std::mutex> lock(live.mu);
    live.queues.push_back(queue);
}

void forget_at_exit(DeviceQueue* queue) {
    if (g_registry_gone.load()) return;
    LiveQueues& live = live_queues();
    std::lock_guard<std::mutex> lock(live.mu);
    live.queues.erase(std::remove(live.queues.begin(), live.queues.end(), queue), live.queues.end());
}

}  // namespace pxcpu
