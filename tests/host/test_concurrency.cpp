// Several threads creating, computing on, copying and releasing tensors on
// two shared CPU devices at once, plus one tensor every thread reads and
// retains; PLEXUS_TEST_DEVICE_KIND=gpu does the same on two GPUs (ctest runs
// it on the CUDA emulator's, so the CUDA plugin's locking is tested too).
// Run by ctest in every build, and under ThreadSanitizer by
// tools/run-sanitizers.sh, where any data race fails it. What may be shared
// between threads is written down in docs/thread-safety.md.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "plexus/plexus.hpp"

using namespace plexus;

namespace {

Device device_under_test(int index) {
    const char* kind = std::getenv("PLEXUS_TEST_DEVICE_KIND");
    return kind && std::strcmp(kind, "gpu") == 0 ? gpu(index) : cpu(index);
}

}  // namespace

TEST_CASE("threads compute on shared devices at once and every result is right", "[concurrency]") {
    // Both must exist (ctest sets PLEXUS_CPU_DEVICES=2); a tensor on an absent one throws.
    const Device first = device_under_test(0), second = device_under_test(1);
    constexpr int threads = 6, rounds = 60;
    constexpr int64_t n = 32;
    // Read by every thread; each takes and drops its own references.
    const Tensor shared[2] = {full({n, n}, 5.0, first), full({n, n}, 5.0, second)};
    std::atomic<int> wrong{0}, errors{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            try {
                for (int r = 0; r < rounds; ++r) {
                    const int d = (t + r) % 2;
                    const Device here = d == 0 ? first : second, there = d == 0 ? second : first;
                    const double k = 1 + (t + r) % 7;
                    Tensor mine = shared[d];  // a retained copy of the handle
                    Tensor a = full({n, n}, k, here), b = ones({n, n}, here);
                    Tensor c = matmul(a, b) + mine;  // every element k*n + 5
                    Tensor moved = c.copyto(there);
                    double total = moved.sum().item<float>();
                    if (total != double(n * n) * (k * n + 5)) ++wrong;
                    Tensor e = (c - mine).max();  // k*n
                    if (e.item<float>() != k * n) ++wrong;
                    if (r % 10 == 0) {
                        synchronize(here);
                        if (device_info(here).memory_in_use == 0) ++wrong;  // a, b, c are alive
                    }
                }
            } catch (const Error&) {
                ++errors;
            }
        });
    }
    for (auto& th : pool) th.join();
    CHECK(errors == 0);
    CHECK(wrong == 0);
    CHECK(shared[0].sum().item<float>() == 5.0f * n * n);  // the shared tensors were only read
}

TEST_CASE("threads create and destroy their own runtimes while others compute", "[concurrency]") {
    std::atomic<int> failures{0};
    std::vector<std::thread> pool;
    for (int t = 0; t < 4; ++t) {
        pool.emplace_back([&] {
            for (int r = 0; r < 10; ++r) {
                px_runtime* rt = nullptr;
                if (px_runtime_create(nullptr, &rt) != PX_OK) {
                    ++failures;
                    continue;
                }
                int64_t dims[1] = {100};
                px_tensor* x = nullptr;
                float sum = 0;
                px_tensor* s = nullptr;
                if (px_tensor_full(rt, px_device{PX_DEVICE_CPU, 0}, PX_FLOAT32, 1, dims, 2.0, &x) != PX_OK ||
                    px_reduce(PX_OP_SUM, x, 1, 0, 0, &s) != PX_OK || px_tensor_to_host(s, &sum, sizeof sum) != PX_OK ||
                    sum != 200.0f)
                    ++failures;
                px_tensor_release(s);
                px_tensor_release(x);
                px_runtime_destroy(rt);
            }
        });
    }
    for (auto& th : pool) th.join();
    CHECK(failures == 0);
}
