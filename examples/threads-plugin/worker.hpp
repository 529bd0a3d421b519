// One device = one worker thread running its queue in order. A task that
// fails keeps the first failure (with the op's name) until the next wait.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace threads_plugin {

class Worker {
public:
    // A task returns "" on success, else the failure's message.
    using Task = std::function<std::string()>;

    Worker();
    ~Worker();  // drains the queue, then stops the thread
    Worker(const Worker&) = delete;
    Worker& operator=(const Worker&) = delete;

    void submit(Task task);
    // Waits for every task submitted so far; returns the first failure since
    // the last wait ("" when none) and forgets it.
    std::string wait();

private:
    void run();

    std::mutex mutex_;
    std::condition_variable wake_, idle_;
    std::deque<Task> tasks_;
    bool busy_ = false, stopping_ = false;
    std::string failure_;
    std::thread thread_;
};

}  // namespace threads_plugin
