// plexus-bench's figures for several devices: seed 003's two products at once
// vs one after the other, and data-parallel training steps on one device vs
// split over two (the speed-up and its efficiency).
#pragma once

#include "plexus/plexus.hpp"

namespace pxbench {

void bench_two_devices(plexus::Device a, plexus::Device b, bool quick, bool json);
void bench_data_parallel(plexus::Device a, plexus::Device b, bool quick, bool json);

}  // namespace pxbench
