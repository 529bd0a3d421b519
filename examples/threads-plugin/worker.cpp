#include "worker.hpp"

#include <exception>

namespace threads_plugin {

Worker::Worker() : thread_([this] { run(); }) {}

Worker::~Worker() {
    {
        std::unique_lock<std::mutex> lock(mutex_);
        idle_.wait(lock, [&] { return tasks_.empty() && !busy_; });
        stopping_ = true;
    }
    wake_.notify_one();
    thread_.join();
}

void Worker::submit(Task task) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        tasks_.push_back(std::move(task));
    }
    wake_.notify_one();
}

std::string Worker::wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    idle_.wait(lock, [&] { return tasks_.empty() && !busy_; });
    std::string failure;
    failure.swap(failure_);
    return failure;
}

void Worker::run() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
        wake_.wait(lock, [&] { return stopping_ || !tasks_.empty(); });
        if (tasks_.empty()) return;  // stopping, and nothing left
        Task task = std::move(tasks_.front());
        tasks_.pop_front();
        busy_ = true;
        lock.unlock();
        std::string failure;
        try {
            failure = task();
        } catch (const std::exception& e) {
            failure = e.what();
        }
        lock.lock();
        busy_ = false;
        if (!failure.empty() && failure_.empty()) failure_ = failure;
        if (tasks_.empty()) idle_.notify_all();
    }
}

}  // namespace threads_plugin
