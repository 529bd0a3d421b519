// Returns from main while two other threads still compute (products in a
// loop on cpu(0) and cpu(1)), as a program with a detached worker does. The
// exit drains the queues, then OpenBLAS is finalized: a product another
// thread queued after the drain had run inside it then, a segmentation fault
// in about one run in ten. The queues now close to other threads at exit
// (plugins/cpu/exit_drain.hpp): their next call waits for the end of the
// process. ctest runs it 20 times.
#include <chrono>
#include <thread>

#include "plexus/plexus.hpp"

using namespace plexus;

int main() {
    for (int d = 0; d < 2; ++d)
        std::thread([d] {
            Tensor x = random_uniform({256, 256}, 0, 1, cpu(d));
            for (;;) x = matmul(x, x) * 1e-3 + 0.5;
        }).detach();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    return 0;
}
