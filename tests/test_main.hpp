// The test programs' shared Catch2 main (tests/main.cpp). A program whose
// tests cannot run on this machine (the GPU tests without a GPU) registers
// why, at static initialisation: main then prints the reason and exits 4,
// which CTest reports as skipped (SKIP_RETURN_CODE), unless Catch2 is only
// listing tests.
#pragma once

#include <string>

namespace plexus_test {

// Returns "" when the tests can run, else why not.
using skip_check = std::string (*)();

// Registers the program's check; returns true so that a namespace-scope
// `const bool` can call it.
bool set_skip_check(skip_check check);

}  // namespace plexus_test
