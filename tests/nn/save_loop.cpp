// plexus-save-loop PATH: saves a network's parameters to PATH over and over,
// alternating two sets of values (seeds 1 and 2), until it is killed. The
// kill test starts it, SIGKILLs it at a random moment and checks that PATH
// still holds one of the two sets whole.
#include <chrono>
#include <cstdio>
#include <string>

#include "plexus/nn.hpp"
#include "save_loop_net.hpp"

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: plexus-save-loop PATH\n");
        return 2;
    }
    plexus::nn::Sequential a, b;
    pxtest::make_save_loop_net(a, 1);
    pxtest::make_save_loop_net(b, 2);
    // Start-up (loading plugins, building the nets, the first save's wait for
    // their initial values) takes a varying time; the test times its kill
    // from "ready", spread over a span of this process's own saves (a
    // sanitizer build on a loaded machine saves ten times slower), so the
    // kills land among the saves and both sets are seen.
    a.save_parameters(argv[1]);
    const auto started = std::chrono::steady_clock::now();
    b.save_parameters(argv[1]);
    const auto took = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - started);
    std::printf("ready %lld\n", static_cast<long long>(took.count()));
    std::fflush(stdout);
    for (;;) {
        a.save_parameters(argv[1]);
        b.save_parameters(argv[1]);
    }
}
