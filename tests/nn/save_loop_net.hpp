// The network plexus-save-loop saves and the kill test reads back: about
// 1 MiB of parameters, so a save takes long enough to be interrupted.
#pragma once

#include <cstdint>

#include "plexus/nn.hpp"

namespace pxtest {

inline void make_save_loop_net(plexus::nn::Sequential& net, uint64_t seed) {
    net.add(plexus::nn::Dense(512, "relu", 512), plexus::nn::Dense(10, "", 512));
    plexus::seed(seed);
    net.initialize(plexus::cpu());
}

}  // namespace pxtest
