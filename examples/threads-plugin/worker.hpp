// One device = one worker thread running its queue in order. A task that
// fails does not stop the ones after it; the first failure (with the op's
// name) is kept until the next wait, with the count and messages of the rest.
#pragma once

#include <condition_variable>
#include <cstdint>
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
    // the last wait ("" when none), followed by how many more failed and
    // their messages, and forgets them.
    std::string wait();
    // Waits for every task submitted so far, keeping their failures for the next wait().
    void drain();

private:
    void run();
    void note_failure(const std::string& failure);  // under mutex_

    std::mutex mutex_;
    std::condition_variable wake_, idle_;
    std::deque<Task> tasks_;
    bool busy_ = false, stopping_ = false;
    std::string failure_;  // the first since the last wait
    std::string others_;   // later ones' messages, while under 256 bytes
    int64_t more_failures_ = 0;
    std::thread thread_;
};

}  // namespace threads_plugin
