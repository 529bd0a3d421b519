#pragma once

#include <string>
#include <vector>

#include "results.hpp"

namespace pxconformance {

void print_text(const DeviceResults& r);
// `crashed` ("<device> <check>: <signal>") adds a "crashed" field: the run
// ended there and the results are only those found before.
std::string to_json(const std::vector<DeviceResults>& all, const std::string& crashed = "");

}  // namespace pxconformance
