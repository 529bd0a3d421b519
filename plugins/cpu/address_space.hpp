// What the process's address space holds and allows, worded for the messages
// of an allocation the system refused: a block of device memory or one of
// OpenBLAS's work buffers under `ulimit -v`.
#pragma once

#include <string>

namespace pxcpu {

// "N MiB"
std::string mib_text(double bytes);

// "N MiB mapped of the M MiB that RLIMIT_AS (ulimit -v) allows", or, without
// such a limit, "N MiB mapped, with no address-space limit: the system
// refused it".
std::string address_space_text();

}  // namespace pxcpu
