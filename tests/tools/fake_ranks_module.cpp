// A stand-in for libplexus-train-mpi whose MPI cannot start: it loads and
// has the entry point, which fails with a reason. The test of plexus-train's
// loader puts it where the real module goes (check_train_without_mpi.cmake).
#include <cstdio>
#include <type_traits>

#include "ranks.hpp"

extern "C" __attribute__((visibility("default"))) plexus::train::Ranks* plexus_train_open_ranks(
    int*, char***, char* error, unsigned long error_size) {
    std::snprintf(error, error_size, "%s", "MPI_Init_thread failed (a test module that has no MPI)");
    return nullptr;
}

static_assert(std::is_same_v<decltype(plexus_train_open_ranks), plexus::train::OpenRanks>,
              "the entry point must match what plexus-train looks up");
