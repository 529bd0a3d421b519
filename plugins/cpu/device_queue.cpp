#include "device_queue.hpp"

#include <chrono>
#include <cstdlib>
#include <cstring>

namespace pxcpu {

namespace {
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}
}  // namespace

DeviceQueue::DeviceQueue(int device_index) : device_(device_index), ring_(capacity) {
    thread_ = std::thread([this] { worker(); });
}

DeviceQueue::~DeviceQueue() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
    }
    has_work_.notify_all();
    thread_.join();
}

void DeviceQueue::push(Task&& task) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (count_ == capacity) {
        ++space_waiters_;
        has_space_.wait(lock, [&] { return count_ < capacity; });
        --space_waiters_;
    }
    ring_[(head_ + count_) % capacity] = std::move(task);
    ++count_;
    ++submitted_;
    pending_.store(count_, std::memory_order_release);
    if (sleeping_) has_work_.notify_one();
}

std::string DeviceQueue::wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    uint64_t target = submitted_;
    if (completed_ < target) {
        ++idle_waiters_;
        is_idle_.wait(lock, [&] { return completed_ >= target; });
        --idle_waiters_;
    }
    std::string e;
    e.swap(error_);
    return e;
}

bool DeviceQueue::idle() {
    std::lock_guard<std::mutex> lock(mutex_);
    return completed_ == submitted_;
}

void DeviceQueue::worker() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
        if (count_ == 0) {
            // Spin for a short while before sleeping: the next op is usually near.
            lock.unlock();
            auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(50);
            while (pending_.load(std::memory_order_acquire) == 0 && std::chrono::steady_clock::now() < until)
                for (int i = 0; i < 64; ++i) cpu_relax();
            lock.lock();
            if (count_ == 0) {
                if (stop_) return;
                sleeping_ = true;
                has_work_.wait(lock, [&] { return count_ > 0 || stop_; });
                sleeping_ = false;
                if (count_ == 0) return;  // stop_ with nothing left
            }
        }
        Task task = std::move(ring_[head_]);
        head_ = (head_ + 1) % capacity;
        --count_;
        pending_.store(count_, std::memory_order_release);
        if (space_waiters_) has_space_.notify_one();
        bool skip = !error_.empty() && task.kind == Task::op;  // after a failure, ops wait for the report
        lock.unlock();
        std::string failure;
        if (!skip) {
            try {
                run(task);
            } catch (const std::exception& e) {
                failure = e.what();
            } catch (...) {
                failure = "unknown failure";
            }
        }
        if (task.staging) std::free(task.staging);
        lock.lock();
        if (!failure.empty() && error_.empty()) {
            const char* name = px_op_name(task.op_task.op);
            error_ = task.kind == Task::op
                         ? std::string(name ? name : "op") + " failed on cpu(" + std::to_string(device_) + "): " + failure
                         : "a copy failed on cpu(" + std::to_string(device_) + "): " + failure;
        }
        ++completed_;
        if (idle_waiters_ && completed_ == submitted_) is_idle_.notify_all();
    }
}

void DeviceQueue::run(Task& t) {
    if (t.kind == Task::copy) {
        std::memcpy(t.dst, t.src, t.bytes);
        return;
    }
    run_op(t.op_task);
}

}  // namespace pxcpu
