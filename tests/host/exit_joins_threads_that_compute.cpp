// A worker pool made before main (so destroyed after the CPU plugin closed
// its queues at exit) whose destructor stops its threads and joins them,
// while they compute in a loop that checks the stop flag between ops. When
// the queues' closing made other threads' calls wait for the end of the
// process, this exit hung for ever (the join waited on threads that waited
// on the exit); before the closing it crashed now and then. The calls now
// wait 2 s, then run: the exit is then held in this destructor, before any
// library is finalized. The last product of each thread is checked.
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "plexus/plexus.hpp"

using namespace plexus;

namespace {
struct Pool {
    std::atomic<bool> stop{false};
    std::vector<std::thread> threads;
    std::atomic<int> good{0};
    void start() {
        for (int d = 0; d < 2; ++d)
            threads.emplace_back([this, d] {
                Tensor x = full({64, 64}, 1.0 / 64, cpu(d));
                while (!stop.load()) x = matmul(x, x);  // stays all 1/64
                if (std::fabs(x.max().item<float>() - 1.0f / 64) < 1e-6f) ++good;
            });
    }
    ~Pool() {
        stop = true;
        for (auto& t : threads) t.join();
        if (good.load() != 2) {
            std::fprintf(stderr, "exit_joins_threads_that_compute: %d of 2 threads ended with the right values\n",
                         good.load());
            std::_Exit(1);
        }
    }
} pool;
}  // namespace

int main() {
    pool.start();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    return 0;
}
