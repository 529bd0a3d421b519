// fork() and Plexus on the CPU: each case runs in a forked child, under an
// alarm that turns a hang into a failure. A child forked before any Plexus
// call computes as any process. A child of a process that computed gets an
// error naming the fork for work on the parent's devices (their workers
// stayed in the parent) instead of waiting forever, while the C++ frontend
// computes on a runtime of the child's own; releasing the parent's
// tensors, destroying its runtime and exiting with the parent's work still
// queued all return; and a runtime it makes computes, a sum across devices
// (on the calling thread) included. ctest runs it with two CPU devices (tests/CMakeLists.txt);
// exit 0 when every case holds.
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>

#include "plexus/plexus.hpp"

using namespace plexus;

namespace {

int failures = 0;

// The child's status once it ends, or SIGKILL's after 30 s: a child that
// hangs before its own alarm is set (in fork()'s handlers) is ended too.
int wait_for(pid_t pid) {
    int status = 0;
    for (auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);;) {
        if (waitpid(pid, &status, WNOHANG) == pid) return status;
        if (std::chrono::steady_clock::now() > until) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            return status;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}

// Runs `body` in a child; it must end with exit status 0 within 30 s.
void in_child(const char* name, const std::function<int()>& body) {
    std::fflush(nullptr);
    const pid_t pid = fork();
    if (pid < 0) {
        std::perror("fork");
        std::exit(2);
    }
    if (pid == 0) {
        alarm(30);
        int code = 1;
        try {
            code = body();
        } catch (const std::exception& e) {
            std::fprintf(stderr, "  %s: unexpected: %s\n", name, e.what());
        }
        std::fflush(nullptr);
        _exit(code);
    }
    const int status = wait_for(pid);
    const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (WIFSIGNALED(status) && (WTERMSIG(status) == SIGALRM || WTERMSIG(status) == SIGKILL))
        std::fprintf(stderr, "  %s: hung\n", name);
    std::printf("%s: %s\n", ok ? "ok  " : "FAIL", name);
    failures += ok ? 0 : 1;
}

// Forks `count` times while another thread waits on cpu(0) over and over
// (each wait holds the queue's lock a moment); each child exits at once. A
// child whose fork handler waited for a lock held by a thread it does not
// have never got that far.
void fork_while_another_thread_waits(const char* name, int count) {
    std::atomic<bool> stop{false};
    std::thread waiter([&stop] {
        Tensor x = full({8}, 1.0, cpu(0));
        while (!stop.load()) {
            (void)(x + 1.0);
            synchronize(cpu(0));
        }
    });
    int hung = 0;
    for (int i = 0; i < count && hung == 0; ++i) {
        std::fflush(nullptr);
        const pid_t pid = fork();
        if (pid < 0) {
            std::perror("fork");
            std::exit(2);
        }
        if (pid == 0) _exit(0);
        const int status = wait_for(pid);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            std::fprintf(stderr, "  %s: fork %d: the child never returned from fork()\n", name, i);
            ++hung;
        }
    }
    stop.store(true);
    waiter.join();
    std::printf("%s: %s\n", hung == 0 ? "ok  " : "FAIL", name);
    failures += hung;
}

// 0 when `f` throws a DeviceError that names the fork.
int refused(const std::function<void()>& f) {
    try {
        f();
    } catch (const DeviceError& e) {
        if (std::string(e.what()).find("this process is a forked child") != std::string::npos) return 0;
        std::fprintf(stderr, "  wrong message: %s\n", e.what());
        return 1;
    }
    std::fprintf(stderr, "  it computed\n");
    return 1;
}

// On cpu(0) and cpu(1) of `rt`: 2^21 elements each summed across the two,
// then a product.
bool sums_across_devices(px_runtime* rt) {
    const int64_t shape[] = {2048, 1024};
    px_tensor *a = nullptr, *b = nullptr, *c = nullptr;
    bool ok = px_tensor_full(rt, px_device{PX_DEVICE_CPU, 0}, PX_FLOAT32, 2, shape, 0.5, &a) == PX_OK &&
              px_tensor_full(rt, px_device{PX_DEVICE_CPU, 1}, PX_FLOAT32, 2, shape, 1.5, &b) == PX_OK;
    px_tensor* both[] = {a, b};
    ok = ok && px_all_reduce_sum(both, 2) == PX_OK;
    static float back[2048 * 1024];
    ok = ok && px_tensor_to_host(b, back, sizeof back) == PX_OK && back[0] == 2.0f && back[2048 * 1024 - 1] == 2.0f;
    const int32_t perm[] = {1, 0};
    px_tensor* at = nullptr;
    ok = ok && px_transpose(a, perm, 2, &at) == PX_OK && px_matmul(at, a, &c) == PX_OK;  // (1024, 1024): 2048 * 4
    ok = ok && px_tensor_to_host(c, back, 1024 * 1024 * sizeof(float)) == PX_OK && back[5] == 8192.0f;
    for (px_tensor* t : {a, b, c, at}) px_tensor_release(t);
    return ok;
}

float product_max(const Device& d) { return matmul(full({256, 256}, 0.5, d), full({256, 256}, 2.0, d)).max().item<float>(); }

}  // namespace

int main() {
    // Before this process computes at all: the child is a process like any.
    in_child("a child forked before any Plexus call computes", [] { return product_max(cpu(0)) == 256.0f ? 0 : 1; });

    // The parent computes (OpenMP's threads start), keeps a tensor and a
    // runtime of the C API, and leaves work queued as it forks.
    if (product_max(cpu(0)) != 256.0f) return 1;
    Tensor kept = full({512, 512}, 0.25, cpu(0));
    px_runtime* rt = nullptr;
    px_tensor* queued = nullptr;
    if (px_runtime_create(nullptr, &rt) != PX_OK) return 1;
    const int64_t shape[] = {512, 512};
    px_tensor* ones = nullptr;
    if (px_tensor_full(rt, px_device{PX_DEVICE_CPU, 0}, PX_FLOAT32, 2, shape, 1.0, &ones) != PX_OK) return 1;
    if (!sums_across_devices(rt)) {
        std::fprintf(stderr, "fork_child: the parent's sum across cpu(0) and cpu(1) failed (PLEXUS_CPU_DEVICES=2?): %s\n",
                     px_last_error());
        return 1;
    }

    fork_while_another_thread_waits("a fork while another thread waits on the device: every child starts", 300);

    in_child("work on the parent's devices is refused, naming the fork", [&] {
        return refused([&] { (kept * 2.0).sum().item<float>(); }) + refused([&] { kept.to_vector<float>(); });
    });
    in_child("the C++ frontend makes a runtime of its own in the child and computes there", [&] {
        if (product_max(cpu(0)) != 256.0f) return 1;
        // The parent's tensors stay the parent's: beside the child's own they are another runtime's.
        try {
            (kept + full({512, 512}, 1.0, cpu(0))).sum().item<float>();
        } catch (const DeviceMismatchError& e) {
            return std::string(e.what()).find("cpu(0) of two different runtimes") != std::string::npos ? 0 : 1;
        }
        return 1;
    });
    in_child("a new runtime in the child computes: products, large sums, a sum across devices", [&] {
        px_runtime* mine = nullptr;
        if (px_runtime_create(nullptr, &mine) != PX_OK) return 1;
        const bool ok = sums_across_devices(mine) && px_runtime_destroy(mine) == PX_OK;
        if (!ok) std::fprintf(stderr, "  %s\n", px_last_error());
        return ok ? 0 : 1;
    });
    for (int i = 0; i < 4; ++i) px_matmul(ones, ones, &queued), px_tensor_release(queued);  // queued as the child forks
    in_child("releasing the parent's tensors and destroying its runtime return", [&] {
        px_tensor_release(ones);
        kept = Tensor();
        // The runtime goes; its wait says that the work the parent queued will not run here.
        const px_status destroyed = px_runtime_destroy(rt);
        const bool named = std::string(px_last_error()).find("forked child") != std::string::npos;
        if (destroyed != PX_OK && !named) std::fprintf(stderr, "  px_runtime_destroy: %s\n", px_last_error());
        return destroyed == PX_OK || named ? 0 : 1;
    });
    for (int i = 0; i < 4; ++i) px_matmul(ones, ones, &queued), px_tensor_release(queued);
    in_child("exit() with the parent's work queued returns (the exit drain skips the parent's queues)", [] {
        std::exit(0);  // static destructors and the plugin's exit drain run
        return 1;
    });

    // And the parent goes on.
    const bool parent_ok = product_max(cpu(0)) == 256.0f && (kept * 4.0).sum().item<float>() == 512.0f * 512.0f;
    std::printf("%s: the parent computes after its children\n", parent_ok ? "ok  " : "FAIL");
    px_tensor_release(ones);
    px_runtime_destroy(rt);
    return failures == 0 && parent_ok ? 0 : 1;
}
