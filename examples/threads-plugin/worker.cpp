#include "worker.hpp"

#include <exception>
#include <string>

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
    if (more_failures_ > 0)
        failure += " (and " + std::to_string(more_failures_) + " more failed since the last wait: " + others_ + ")";
    more_failures_ = 0;
    others_.clear();
    return failure;
}

void Worker::drain() {
    std::unique_lock<std::mutex> lock(mutex_);
    idle_.wait(lock, [&] { return tasks_.empty() && !busy_; });
}

void Worker::note_failure(const std::string& failure) {
    if (failure_.empty()) {
        failure_ = failure;
        return;
    }
    if (others_.size() < 256) others_ += (more_failures_ ? "; " : "") + failure;
    ++more_failures_;
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
        } catch (...) {  // a kernel's throw of anything else must not end the process
            failure = "a kernel threw an exception that is not a std::exception";
        }
        lock.lock();
        busy_ = false;
        if (!failure.empty()) note_failure(failure);
        if (tasks_.empty()) idle_.notify_all();
    }
}

}  // namespace threads_plugin
