#include "device_queue.hpp"

#include "failed_outputs.hpp"
#include "scratch_pool.hpp"

#include <omp.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

namespace pxcpu {

namespace {
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}
}  // namespace

DeviceQueue::DeviceQueue(int device_index, int threads) : device_(device_index), ring_(capacity) {
    thread_ = std::thread([this, threads] {
        // The OpenMP team this worker starts (our kernels, OpenBLAS) is its
        // share of the cores, so devices computing at once do not fight.
        if (threads > 0) omp_set_num_threads(threads);
        worker();
    });
    make_scratch_pool();
    drain_at_exit(exit_link_, this);
}

DeviceQueue::~DeviceQueue() {
    forget_at_exit(exit_link_);
    {
        std::lock_guard<std::mutex> lock(sleep_);
        stop_.store(true);
    }
    wake_worker_.notify_all();
    thread_.join();
}

void DeviceQueue::drain() { wait_for_head(tail_.load(std::memory_order_acquire)); }

void DeviceQueue::close_for_exit() noexcept {
    std::lock_guard<std::mutex> producers(produce_);
    closed_ = true;
    exiting_thread_ = std::this_thread::get_id();
}

void DeviceQueue::push(const Task& task, uint64_t trace_id) {
    std::unique_lock<std::mutex> producers(produce_);
    if (closed_ && std::this_thread::get_id() != exiting_thread_) {
        // A thread still computing as main returned waits: the process
        // normally ends first, before its libraries are finalized under the
        // task. If it has not (a static destructor is joining this thread,
        // so the libraries are not finalized yet), the task runs.
        producers.unlock();
        std::this_thread::sleep_for(kParkedAtExit);
        producers.lock();
    }
    uint64_t t = tail_.load(std::memory_order_relaxed);
    if (small_task(task) && head_.load(std::memory_order_acquire) == t) {
        // Idle queue: nothing can run before or beside this, and later pushes
        // wait for produce_, so running it here keeps the device's order.
        execute(task, trace_id);
        return;
    }
    if (t - head_.load(std::memory_order_acquire) == capacity) wait_for_head(t - capacity / 2);  // full: let it drain half
    ring_[t % capacity] = Queued{task, trace_id};
    tail_.store(t + 1, std::memory_order_seq_cst);
    if (sleeping_.load(std::memory_order_seq_cst)) {
        std::lock_guard<std::mutex> lock(sleep_);
        wake_worker_.notify_one();
    }
}

px_status DeviceQueue::wait(char* message, size_t size) {
    wait_for_head(tail_.load(std::memory_order_acquire));
    std::lock_guard<std::mutex> lock(sleep_);
    const px_status status = error_status_;
    if (message && size > 0) {
        if (status == PX_OK)
            message[0] = '\0';
        else if (other_failures_ == 0)
            std::snprintf(message, size, "%s", error_);
        else
            write_failures(message, size);
    }
    error_status_ = PX_OK;
    other_failures_ = 0;
    others_[0] = '\0';
    return status;
}

void DeviceQueue::write_failures(char* message, size_t size) const noexcept {
    const int head = std::snprintf(message, size, "%s (and %llu more failed since the last wait: ", error_,
                                   static_cast<unsigned long long>(other_failures_));
    if (head < 0 || size_t(head) + 8 > size) return;  // the first failure fills it
    // Whole messages of the later ones while they fit, then "...", then ")".
    const size_t room = size - size_t(head) - 2;
    size_t len = std::strlen(others_);
    if (len > room) {
        len = 0;
        for (const char* sep = others_; (sep = std::strstr(sep, "; ")) && size_t(sep - others_) + 5 <= room; sep += 2)
            len = size_t(sep - others_);
        std::memcpy(message + head, others_, len);
        std::memcpy(message + head + len, len ? "; ..." : "...", len ? 5 : 3);
        len += len ? 5 : 3;
    } else {
        std::memcpy(message + head, others_, len);
    }
    std::memcpy(message + head + len, ")", 2);
}

void DeviceQueue::worker() {
    for (;;) {
        uint64_t h = head_.load(std::memory_order_relaxed);
        if (tail_.load(std::memory_order_acquire) == h) {
            // Spin a short while: the next op is usually near.
            auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(50);
            while (tail_.load(std::memory_order_acquire) == h && std::chrono::steady_clock::now() < until)
                for (int i = 0; i < 32; ++i) cpu_relax();
            if (tail_.load(std::memory_order_acquire) == h) {
                std::unique_lock<std::mutex> lock(sleep_);
                sleeping_.store(true, std::memory_order_seq_cst);
                wake_worker_.wait(lock, [&] { return tail_.load(std::memory_order_seq_cst) != h || stop_.load(); });
                sleeping_.store(false, std::memory_order_relaxed);
                if (tail_.load(std::memory_order_acquire) == h) return;  // stopping with nothing left
            }
        }
        // seq_cst with hold_for_fork's: one of the two sees the other's store.
        in_task_.store(true, std::memory_order_seq_cst);
        while (held_.load(std::memory_order_seq_cst)) {
            in_task_.store(false, std::memory_order_seq_cst);
            {
                std::unique_lock<std::mutex> lock(sleep_);
                resumed_.wait(lock, [&] { return !held_.load(); });
            }
            in_task_.store(true, std::memory_order_seq_cst);
        }
        const Queued& next = ring_[h % capacity];
        execute(next.task, next.trace_id);
        in_task_.store(false, std::memory_order_release);
        // seq_cst on both: a waiter publishes wake_at_ and then reads head_,
        // so this store must not pass the load below (or it would sleep on).
        head_.store(h + 1, std::memory_order_seq_cst);
        if (h + 1 >= wake_at_.load(std::memory_order_seq_cst)) {
            std::lock_guard<std::mutex> lock(sleep_);
            wake_at_.store(UINT64_MAX);
            progress_.notify_all();  // each waiter re-registers if its target is further on
        }
    }
}

void DeviceQueue::hold_for_fork() noexcept {
    produce_.lock();  // no push, and so no task run inline, until resumed
    held_.store(true, std::memory_order_seq_cst);
    while (in_task_.load(std::memory_order_seq_cst)) std::this_thread::yield();  // the running task ends
}

void DeviceQueue::resume_after_fork() noexcept {
    {
        std::lock_guard<std::mutex> lock(sleep_);
        held_.store(false);
    }
    resumed_.notify_all();
    produce_.unlock();
}

void DeviceQueue::release_in_child() noexcept {
    new (&sleep_) std::mutex;
    new (&wake_worker_) std::condition_variable;
    new (&progress_) std::condition_variable;
    new (&resumed_) std::condition_variable;
    held_.store(false);
    produce_.unlock();  // held by this thread, the one that forked
}

void DeviceQueue::execute(const Task& task, uint64_t trace_id) {
    // A failure does not stop the tasks after it: each runs (plugin.h).
    bool failed = true;
    try {
        const bool copy = task.kind == Task::copy;
        plexus::kit::TraceStamp stamp(trace_, copy ? 0 : task.op_task.op, trace_id, copy ? task.bytes : 0);
        run(task);
        failed = false;
    } catch (const ScratchRefused& e) {  // says what was refused and why
        record_failure(task, e.what(), PX_ERROR_OUT_OF_MEMORY);
    } catch (const std::bad_alloc&) {
        record_failure(task, "out of host memory", PX_ERROR_OUT_OF_MEMORY);
    } catch (const std::exception& e) {
        record_failure(task, e.what(), PX_ERROR_DEVICE);
    } catch (...) {
        record_failure(task, "unknown failure", PX_ERROR_DEVICE);
    }
    if (failed && task.kind == Task::op) fill_failed_outputs(task.op_task);  // never stale bytes
    std::free(task.staging);  // the slot is overwritten before it runs again
}

void DeviceQueue::wait_for_head(uint64_t target) {
    if (head_.load(std::memory_order_acquire) >= target) return;  // done already: no clock read, no lock
    // Short waits are common (a read right after a few small ops): spin
    // first, long enough to cover them. Seed 003's 1000 products of 100x100
    // matrices, each norm read: 24.7-38.4 ms spinning 20 us, 22.6-27.8 ms
    // spinning 50 us, beside 21.9-26.9 ms with the norms kept on the device.
    auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(50);
    while (head_.load(std::memory_order_acquire) < target && std::chrono::steady_clock::now() < until) cpu_relax();
    std::unique_lock<std::mutex> lock(sleep_);
    while (head_.load(std::memory_order_seq_cst) < target) {
        uint64_t cur = wake_at_.load();
        while (target < cur && !wake_at_.compare_exchange_weak(cur, target)) {}
        if (head_.load(std::memory_order_seq_cst) >= target) break;
        progress_.wait(lock);
    }
}

void DeviceQueue::record_failure(const Task& task, const char* what, px_status status) noexcept {
    std::lock_guard<std::mutex> lock(sleep_);
    const char* name = task.kind == Task::copy ? "a copy" : px_op_name(task.op_task.op);
    if (error_status_ == PX_OK) {
        error_status_ = status;
        std::snprintf(error_, sizeof error_, "%s failed on cpu(%d): %s", name ? name : "op", device_, what);
        return;
    }
    // Later ones: counted, and their messages kept while they fit whole.
    char line[PX_MESSAGE_MAX];
    const int n = std::snprintf(line, sizeof line, "%s%s: %s", other_failures_ ? "; " : "", name ? name : "op", what);
    const size_t used = std::strlen(others_);
    if (n > 0 && used + size_t(n) < sizeof others_) std::memcpy(others_ + used, line, size_t(n) + 1);
    ++other_failures_;
}

void DeviceQueue::run(const Task& t) {
    if (t.kind == Task::copy) {
        std::memcpy(t.dst, t.src, t.bytes);
        return;
    }
    run_op(t.op_task);
}

}  // namespace pxcpu
