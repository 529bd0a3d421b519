// Calls into a plugin that may never return (a hang in create, device_info
// or synchronize), bounded in time: the call runs on a thread of its own and
// the caller waits at most a time-out for it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>

namespace px {

// Runs `work` on a thread of its own and waits at most `seconds` for it.
// True when it finished (an exception it threw is rethrown here); false when
// it did not: the thread goes on, detached, and `work` must own (by value or
// shared_ptr) everything it touches, the plugin it is running in included,
// so that nothing it uses is freed or unloaded under it. When the system
// gives no thread, `work` runs here, unbounded: a load without its time-out
// rather than no load.
template <class Work>
bool finish_within(double seconds, Work work) {
    struct Shared {
        std::mutex m;
        std::condition_variable cv;
        bool done = false;
        std::exception_ptr error;
    };
    auto s = std::make_shared<Shared>();
    auto body = [s, work]() mutable {
        std::exception_ptr error;
        try {
            work();
        } catch (...) {
            error = std::current_exception();
        }
        std::lock_guard<std::mutex> lock(s->m);
        s->error = error;
        s->done = true;
        s->cv.notify_all();
    };
    std::thread t;
    try {
        t = std::thread(body);
    } catch (const std::system_error&) {
        work();
        return true;
    }
    std::unique_lock<std::mutex> lock(s->m);
    const bool done = s->cv.wait_for(lock, std::chrono::duration<double>(seconds), [&] { return s->done; });
    lock.unlock();
    if (!done) {
        t.detach();
        return false;
    }
    t.join();
    if (s->error) std::rethrow_exception(s->error);
    return true;
}

}  // namespace px
