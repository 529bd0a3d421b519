#pragma once

#include <vector>

#include "plexus/plexus.hpp"
#include "results.hpp"

namespace pxconformance {

// --perf: the median time of a few representative calls per op the device
// supports (each call followed by a synchronize), with its memory or
// arithmetic rate. For comparing plugins and spotting a slow op, not a
// benchmark with baselines (that is plexus-bench).
std::vector<PerfRow> measure_ops(plexus::Device dev);

}  // namespace pxconformance
