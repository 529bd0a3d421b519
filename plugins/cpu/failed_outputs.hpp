// What an op that fails while it runs leaves in its outputs (plugin.h, R9):
// never the bytes their memory held before (another tensor's, freed and
// cached), which a later read would return as if they were the op's, but
// NaN in a float output and 0 in an integer one. An output the op updates
// in place (an optimizer's parameters and state) keeps its values: the step
// that failed did not happen.
#pragma once

#include "task.hpp"

namespace pxcpu {

void fill_failed_outputs(const OpTask& t) noexcept;

}  // namespace pxcpu
