// Returns from main with products still queued on both CPU devices (one
// running inside OpenBLAS, more waiting), as a program that forgets to wait
// does. Exit must neither crash nor hang: before the CPU plugin drained its
// queues at exit (plugins/cpu/exit_drain.hpp), one run in about seven died
// of a segmentation fault as OpenBLAS was finalized under a running product.
// A static object's destructor then still computes. ctest runs it 20 times
// (tests/CMakeLists.txt).
#include <cstdio>
#include <cstdlib>

#include "plexus/plexus.hpp"

using namespace plexus;

namespace {
// Made before main, so destroyed after the plugin's queues were drained at
// exit: Plexus still computes then, as a static object's destructor may ask.
struct ComputesAtExit {
    ~ComputesAtExit() {
        try {
            if (matmul(full({64, 64}, 1.0, cpu(1)), full({64, 64}, 2.0, cpu(1))).max().item<float>() == 128.0f) return;
            std::fprintf(stderr, "exit_with_work_queued: a product computed at exit is wrong\n");
        } catch (const Error& e) {
            std::fprintf(stderr, "exit_with_work_queued: at exit: %s\n", e.what());
        }
        std::_Exit(1);
    }
} computes_at_exit;
}  // namespace

int main() try {
    const Device devices[] = {cpu(0), cpu(1)};
    for (const Device& d : devices) {
        Tensor a = full({512, 512}, 0.5, d);
        // One product read back: the device computes (the value is 512 * 0.25).
        if (matmul(a, a).max().item<float>() != 128.0f) {
            std::fprintf(stderr, "exit_with_work_queued: a product on %s is wrong\n", d.str().c_str());
            return 1;
        }
        Tensor big = random_normal({1024, 1024}, 0, 1, d);
        for (int i = 0; i < 4; ++i) big = matmul(big, big) * 1e-3;  // queued, never read
    }
    return 0;
} catch (const Error& e) {
    std::fprintf(stderr, "exit_with_work_queued: %s\n", e.what());
    return 1;
}
