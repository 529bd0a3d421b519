// plexus-save-loop PATH: saves a network's parameters to PATH over and over,
// alternating two sets of values (seeds 1 and 2), until it is killed. The
// kill test starts it, SIGKILLs it at a random moment and checks that PATH
// still holds one of the two sets whole.
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
    // Start-up (loading plugins, building the nets) takes a varying time; the
    // test times its kill from here, so the kills land among the saves.
    std::printf("ready\n");
    std::fflush(stdout);
    for (;;) {
        a.save_parameters(argv[1]);
        b.save_parameters(argv[1]);
    }
}
