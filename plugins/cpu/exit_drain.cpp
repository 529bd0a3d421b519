#include "exit_drain.hpp"

#include <atomic>
#include <mutex>

#include <pthread.h>

#include "device_queue.hpp"
#include "fork_guard.hpp"

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
    ExitLink head;  // head.next: the first live queue's link
    // Held across fork(), so that the child's copy of the list is whole.
    LiveQueues() { pthread_atfork(lock_for_fork, unlock_in_parent, unlock_in_child); }
    ~LiveQueues() {
        std::lock_guard<std::mutex> lock(mu);
        g_registry_gone.store(true);  // under the lock: a fork now leaves the list alone
        // A forked child's inherited queues have no worker to wait for, and a
        // worker that exits (a task's library calling exit()) cannot run its own.
        // Closed first: a thread still computing as main returned queues
        // nothing more to run beside the libraries' finalizers.
        for (ExitLink* l = head.next; l; l = l->next)
            if (l->generation == fork_generation()) l->queue->close_for_exit();
        for (ExitLink* l = head.next; l; l = l->next)
            if (l->generation == fork_generation() && !l->queue->is_worker_thread()) l->queue->drain();
    }
    static void lock_for_fork();
    static void unlock_after_fork(void (DeviceQueue::*resume)() noexcept);
    static void unlock_in_parent() { unlock_after_fork(&DeviceQueue::resume_after_fork); }
    static void unlock_in_child() { unlock_after_fork(&DeviceQueue::release_in_child); }
};

LiveQueues& live_queues() {
    static LiveQueues live;
    return live;
}

// A forked child has no worker for the queues it inherited: only this
// process's own are held (device_queue.hpp, hold_for_fork).
void LiveQueues::lock_for_fork() {
    if (g_registry_gone.load()) return;
    LiveQueues& live = live_queues();
    live.mu.lock();
    for (ExitLink* l = live.head.next; l; l = l->next)
        if (l->generation == fork_generation()) l->queue->hold_for_fork();
}
void LiveQueues::unlock_after_fork(void (DeviceQueue::*resume)() noexcept) {
    if (g_registry_gone.load()) return;
    LiveQueues& live = live_queues();
    for (ExitLink* l = live.head.next; l; l = l->next)
        if (l->queue->held_for_fork()) (l->queue->*resume)();
    live.mu.unlock();
}

}  // namespace

void drain_at_exit(ExitLink& link, DeviceQueue* queue) noexcept {
    if (g_registry_gone.load()) return;
    LiveQueues& live = live_queues();
    std::lock_guard<std::mutex> lock(live.mu);
    link.queue = queue;
    link.generation = fork_generation();
    link.prev = &live.head;
    link.next = live.head.next;
    if (link.next) link.next->prev = &link;
    live.head.next = &link;
}

void forget_at_exit(ExitLink& link) noexcept {
    if (g_registry_gone.load()) return;
    // Under the lock: a neighbour's registration writes this link's prev.
    std::lock_guard<std::mutex> lock(live_queues().mu);
    if (!link.prev) return;
    link.prev->next = link.next;
    if (link.next) link.next->prev = link.prev;
    link.prev = link.next = nullptr;
}

}  // namespace pxcpu
