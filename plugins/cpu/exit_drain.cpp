#include "exit_drain.hpp"

#include <algorithm>
#include <mutex>
#include <vector>

#include "device_queue.hpp"

namespace pxcpu {
namespace {

// A function-local static: its destructor is registered (with this plugin's
// handle) when the first queue is made, so it runs at exit, or at the
// plugin's unloading, when every queue is gone and it has nothing to do.
struct LiveQueues {
    std::mutex mu;
    std::vector<DeviceQueue*> queues;
    ~LiveQueues() {
        std::lock_guard<std::mutex> lock(mu);
        for (DeviceQueue* q : queues) q->abandon();
    }
};

LiveQueues& live_queues() {
    static LiveQueues live;
    return live;
}

}  // namespace

void stop_at_exit(DeviceQueue* queue) {
    LiveQueues& live = live_queues();
    std::lock_guard<std::mutex> lock(live.mu);
    live.queues.push_back(queue);
}

void forget_at_exit(DeviceQueue* queue) {
    LiveQueues& live = live_queues();
    std::lock_guard<std::mutex> lock(live.mu);
    live.queues.erase(std::remove(live.queues.begin(), live.queues.end(), queue), live.queues.end());
}

}  // namespace pxcpu
