#pragma once

#include <string>
#include <vector>

#include "results.hpp"

namespace pxconformance {

void print_text(const DeviceResults& r);
std::string to_json(const std::vector<DeviceResults>& all);

}  // namespace pxconformance
