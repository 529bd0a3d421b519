// fork() while the parent computes (issue 37, item 9): two threads keep
// matrix products, convolutions and sums running on the CPU device (one
// device: its OpenMP team, and so OpenBLAS's threads, span the cores) while
// the main thread forks again and again; each child makes a runtime of its
// own and computes products through OpenBLAS. A child that inherits a lock
// a parent thread held inside OpenBLAS, OpenMP or the plugin waits forever:
// before the CPU plugin paused its devices around fork(), children hung in
// OpenBLAS in about one fork of five. An alarm turns a hang into a failure.
// Usage: plexus-fork-while-computing [forks] (default 200); exit 0 when every
// child computed the right values in time.
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "plexus/plexus.hpp"

using namespace plexus;

namespace {
// In the child: a runtime of its own (the C API's, so the parent's is left
// alone), a product large enough for OpenBLAS's threads, read back.
int child_computes() {
    alarm(30);
    px_runtime* rt = nullptr;
    if (px_runtime_create(nullptr, &rt) != PX_OK) return 3;
    const px_device cpu0{PX_DEVICE_CPU, 0};
    const int64_t shape[] = {384, 384};
    px_tensor *a = nullptr, *p = nullptr;
    std::vector<float> got(384 * 384);
    const int64_t small_shape[] = {24, 24};
    px_tensor *s = nullptr, *sp = nullptr;
    float small[24 * 24];
    const bool ok = px_tensor_full(rt, cpu0, PX_FLOAT32, 2, shape, 0.5, &a) == PX_OK && px_matmul(a, a, &p) == PX_OK &&
                    px_tensor_to_host(p, got.data(), got.size() * sizeof(float)) == PX_OK &&
                    // small enough to run on this thread, the one that forked
                    px_tensor_full(rt, cpu0, PX_FLOAT32, 2, small_shape, 0.5, &s) == PX_OK &&
                    px_matmul(s, s, &sp) == PX_OK && px_tensor_to_host(sp, small, sizeof small) == PX_OK;
    px_tensor_release(sp);
    px_tensor_release(s);
    px_tensor_release(p);
    px_tensor_release(a);
    if (ok && small[0] != 6.0f) return 6;  // 24 * 0.25
    if (px_runtime_destroy(rt) != PX_OK || !ok) return 4;
    for (float v : got)
        if (v != 96.0f) return 5;  // 384 * 0.25
    return 0;
}
}  // namespace

int main(int argc, char** argv) try {
    const int forks = argc > 1 ? std::atoi(argv[1]) : 200;
    std::atomic<bool> stop{false};
    std::vector<std::thread> busy;
    for (const Device& d : {cpu(0), cpu(0)}) {
        busy.emplace_back([&stop, d] {
            Tensor x = random_normal({1, 4, 32, 32}, 0, 1, d), w = random_normal({8, 4, 3, 3}, 0, 0.1, d);
            Tensor m = random_normal({256, 256}, 0, 0.05, d);
            while (!stop.load()) {
                Tensor y = conv2d(x, w, 1, 1).sum();
                Tensor z = matmul(m, m).sum(1);
                Tensor small = matmul(m.slice(0, 8), m.slice(0, 8).transpose());  // run on this thread when idle
                (void)y, (void)z, (void)small;
                // A few ops queued at a time: the device stays busy, and the
                // forking thread's own work is not stuck behind a full queue.
                synchronize(d);
            }
            synchronize(d);
        });
    }
    // The forking thread computes too, small products on itself included.
    Tensor mine = random_normal({96, 96}, 0, 0.1, cpu(0)), big = random_normal({384, 384}, 0, 0.05, cpu(0));
    int failed = 0;
    for (int i = 0; i < forks; ++i) {
        (void)matmul(mine, mine).sum().item<float>();
        Tensor queued = matmul(big, big);  // left running as the process forks
        std::fflush(nullptr);
        const pid_t pid = fork();
        if (pid < 0) {
            std::perror("fork");
            failed = forks;
            break;
        }
        if (pid == 0) _exit(child_computes());
        int status = 0;
        waitpid(pid, &status, 0);
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0) continue;
        ++failed;
        if (WIFSIGNALED(status))
            std::fprintf(stderr, "fork %d: the child %s\n", i,
                         WTERMSIG(status) == SIGALRM ? "hung (30 s)" : "died of a signal");
        else
            std::fprintf(stderr, "fork %d: the child exited with %d\n", i, WEXITSTATUS(status));
    }
    stop.store(true);
    for (auto& t : busy) t.join();
    std::printf("%d of %d forks while computing: the child computed\n", forks - failed, forks);
    return failed == 0 ? 0 : 1;
} catch (const Error& e) {
    std::fprintf(stderr, "fork_while_computing: %s\n", e.what());
    return 1;
}
