#pragma once

#include <string>
#include <vector>

#include "results.hpp"

namespace pxconformance {

// Every row of the op table, one a line: name, number, dtypes, result dtype,
// the ABI minor that added it, and "optional" where a plugin may leave it out.
void print_op_table();

void print_text(const DeviceResults& r);
// `crashed` ("<device> <check>: <signal>") adds a "crashed" field: the run
// ended there and the results are only those found before.
std::string to_json(const std::vector<DeviceResults>& all, const std::string& crashed = "");

}  // namespace pxconformance
