// The OpenMP runtime, OpenBLAS and the plugin's OpenMP wait policy stay
// loaded once the plugin has loaded them (OpenBLAS: openblas.cpp loads it
// with RTLD_NODELETE; the other two are pinned here).
//
// Each time the host unloaded the plugin (px_runtime_destroy), libgomp and
// OpenBLAS went with it, and the next runtime loaded them afresh: libgomp
// then gave the thread that created the runtime a new record of its OpenMP
// settings (omp_set_num_threads, 216 bytes) that nothing frees, so a
// program creating and destroying runtimes grew without bound, and OpenBLAS
// started over each time. Neither library is made to be unloaded and loaded
// again in one process; a program that uses OpenMP itself keeps them anyway.
// The policy library stays with libgomp, whose environment it set: loaded
// again, it would find its own setting and take it for the user's.
#pragma once

#include <string>

namespace pxcpu {

// Marks the OpenMP runtime and the policy library not to be unloaded (RTLD_NODELETE). False, with why,
// when the dynamic loader refuses.
bool pin_runtime_libraries(std::string& why);

// The same for the library that holds `symbol`, named `what` in the reason.
bool pin_library_holding(const void* symbol, const char* what, std::string& why);

}  // namespace pxcpu
