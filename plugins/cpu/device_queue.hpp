// One CPU device's queue: a worker thread runs tasks in submission order.
//
// The hot path takes no lock that the worker also takes: producers serialize
// among themselves, publish a slot by advancing `tail_`, and the worker
// consumes by advancing `head_`. The worker spins briefly before sleeping, so
// a stream of small ops costs no system calls; a producer wakes it only when
// it sleeps. A failed op does not stop the ops after it (plugin.h: they
// run, as on a GPU stream); the first failure is kept and handed to the next
// wait, with the count of the others and as many of their messages as fit.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <chrono>
#include <thread>
#include <vector>

#include "allocator.hpp"
#include "exit_drain.hpp"
#include "plexus/plugin_kit_trace.hpp"
#include "task.hpp"

namespace pxcpu {

class DeviceQueue final : public QueueProgress {
public:
    // threads: the OpenMP threads of the worker's parallel regions (0: OpenMP's default).
    DeviceQueue(int device_index, int threads);
    ~DeviceQueue();  // runs what is queued, then stops
    DeviceQueue(const DeviceQueue&) = delete;
    DeviceQueue& operator=(const DeviceQueue&) = delete;

    // Queues `task`; a small task (see task.hpp, small_task) runs at once on
    // the caller's thread instead when nothing is queued, since handing it to
    // the worker costs more than running it. Order and error reporting are the
    // same either way.
    // trace_id: the op's id in a trace (ABI 1.8's execute_traced), else 0.
    // Once the exit has closed the queue, a call from another thread than the
    // exiting one waits kParkedAtExit first, by which time the process has
    // normally ended.
    void push(const Task& task, uint64_t trace_id = 0);  // Task is trivially copyable: a copy into the ring
    // Waits until everything queued so far has run; returns and clears the
    // first failure's kind (PX_OK when none; PX_ERROR_OUT_OF_MEMORY when
    // memory ran out, else PX_ERROR_DEVICE), its message, followed by how
    // many more failed and theirs, copied into `message` (`size` bytes, may
    // be 0). Allocates nothing.
    px_status wait(char* message = nullptr, size_t size = 0);
    // When each task ran, while the host traces this device (ABI 1.8);
    // also stamped by the plugin's copies that run on the caller's thread.
    plexus::kit::TraceLog& trace() { return trace_; }
    // True when nothing is queued or running.
    bool idle() const { return head_.load(std::memory_order_acquire) == tail_.load(std::memory_order_acquire); }
    // Returns once everything queued so far has run, keeping any failure for
    // the next wait (at exit: exit_drain.hpp).
    void drain();
    // At exit, before the drain: from now on only the exiting thread (its
    // static destructors) queues work; the libraries the kernels call are
    // finalized after it, and must not be under another thread's task.
    void close_for_exit() noexcept;

    // fork(): the forking thread holds every queue first (exit_drain.cpp's
    // fork handlers), so that no task runs while the process is copied: a
    // child would inherit the locks and spin flags a running task held in
    // OpenBLAS or OpenMP, and its own runtime would wait on them forever.
    // Returns once no task runs here and none can start or be pushed.
    void hold_for_fork() noexcept;
    void resume_after_fork() noexcept;  // in the parent
    // In the child, whose only thread is the one that forked: a lock another
    // thread held at the fork (a waiter's, the worker's) stays held in the
    // child's copy for good, so the queue's locks and conditions start anew.
    void release_in_child() noexcept;
    bool held_for_fork() const noexcept { return held_.load(); }
    int device_index() const noexcept { return device_; }
    // Whether the caller is this queue's worker: a task that ends the process
    // (libgomp calls exit() when it cannot start a thread) must not wait at
    // exit for its own queue to drain.
    bool is_worker_thread() const noexcept { return thread_.get_id() == std::this_thread::get_id(); }

    // QueueProgress: tasks run inline count in neither, as they are done
    // before push() returns.
    uint64_t queued() const override { return tail_.load(std::memory_order_acquire); }
    uint64_t completed() const override { return head_.load(std::memory_order_acquire); }
    void wait_until_completed(uint64_t count) override { wait_for_head(count); }

private:
    void worker();
    void run(const Task& t);
    void execute(const Task& t, uint64_t trace_id);  // run + span + failure bookkeeping + staging release
    // Allocates nothing: it runs while memory may have run out.
    void record_failure(const Task& t, const char* what, px_status status) noexcept;
    // The first failure, the count of the others and their messages, in `size` bytes. Under sleep_.
    void write_failures(char* message, size_t size) const noexcept;
    void wait_for_head(uint64_t target);

    static constexpr uint64_t capacity = 1024;
    static constexpr std::chrono::seconds kParkedAtExit{2};
    // A slot of the ring: the task and its trace id.
    struct Queued {
        Task task;
        uint64_t trace_id;
    };

    const int device_;
    plexus::kit::TraceLog trace_;
    std::vector<Queued> ring_;
    alignas(64) std::atomic<uint64_t> tail_{0};  // next slot to fill (producers)
    alignas(64) std::atomic<uint64_t> head_{0};  // next slot to run (worker); == tasks completed
    alignas(64) std::atomic<bool> sleeping_{false};
    std::atomic<bool> stop_{false};
    std::atomic<bool> held_{false};     // hold_for_fork() until resume_after_fork()
    std::atomic<bool> in_task_{false};  // the worker is running a task (or about to)
    // The smallest head_ a waiter needs (UINT64_MAX: none); the worker signals
    // only when head_ reaches it, so waiting costs nothing per task.
    std::atomic<uint64_t> wake_at_{UINT64_MAX};
    std::mutex produce_;  // serializes producers
    bool closed_ = false;  // close_for_exit (under produce_)
    std::thread::id exiting_thread_;
    std::mutex sleep_;    // guards the sleep/wake handshake and the failures below
    std::condition_variable wake_worker_, progress_, resumed_;
    char error_[PX_MESSAGE_MAX] = {};   // the first failure since the last wait
    char others_[PX_MESSAGE_MAX] = {};  // later ones' messages, "; "-separated, as many as fit
    uint64_t other_failures_ = 0;       // how many failed after the first
    px_status error_status_ = PX_OK;    // PX_OK: no failure held
    std::thread thread_;
    ExitLink exit_link_;  // in the list the exit drains (exit_drain.hpp)
};

}  // namespace pxcpu
