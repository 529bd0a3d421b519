// One CPU device's queue: a worker thread runs tasks in submission order.
// The worker spins briefly before sleeping so a stream of small ops costs no
// system calls; a failure is kept and handed to the next wait.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "task.hpp"

namespace pxcpu {

class DeviceQueue {
public:
    explicit DeviceQueue(int device_index);
    ~DeviceQueue();  // runs what is queued, then stops
    DeviceQueue(const DeviceQueue&) = delete;
    DeviceQueue& operator=(const DeviceQueue&) = delete;

    void push(Task&& task);
    // Waits until everything queued so far has run; returns and clears the
    // first failure ("" when none).
    std::string wait();
    // True when nothing is queued or running.
    bool idle();

private:
    void worker();
    void run(Task& t);

    static constexpr size_t capacity = 1024;
    const int device_;
    std::vector<Task> ring_;
    size_t head_ = 0, count_ = 0;
    uint64_t submitted_ = 0, completed_ = 0;
    std::atomic<size_t> pending_{0};  // mirror of count_ for the spin
    bool sleeping_ = false, stop_ = false;
    int idle_waiters_ = 0, space_waiters_ = 0;
    std::string error_;
    std::mutex mutex_;
    std::condition_variable has_work_, has_space_, is_idle_;
    std::thread thread_;
};

}  // namespace pxcpu
