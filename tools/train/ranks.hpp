// The ranks of a plexus-train --distributed run, as the tool uses them. The
// MPI side lives in a module (libplexus-train-mpi, ranks_mpi.cpp) that
// plexus-train loads only for --distributed, so the tool itself never needs
// MPI's libraries: a machine without them trains on its own devices.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "plexus/mpi.hpp"
#include "plexus/nn.hpp"

namespace plexus::train {

class Ranks {
public:
    virtual ~Ranks() = default;
    virtual int rank() const = 0;
    virtual int size() const = 0;
    virtual int local_rank() const = 0;  // among the ranks on this machine (picks a GPU)
    // Sums `values` over the ranks in place; `what` names the call in errors.
    virtual void sum(std::vector<double>& values, const std::string& what) = 0;
    // Sums each step's gradients on `device` over the ranks (a Trainer hook).
    virtual nn::Trainer::GradientHook gradient_reducer(const Device& device) = 0;
    // How the gradients are summed ("MPI through host memory", NCCL...).
    virtual std::string reducer() const = 0;
    // "" when every rank has the same `facts` as rank 0; otherwise, on every
    // rank, what differs (mpi::World::disagreement).
    virtual std::string disagreement(const mpi::Facts& facts) = 0;
    // Prints `why` naming this rank and stops every rank.
    [[noreturn]] virtual void abort(const std::string& why) = 0;
};

// The module's entry point: a new Ranks (MPI initialized), or nullptr with
// the reason in `error`.
using OpenRanks = Ranks*(int* argc, char*** argv, char* error, unsigned long error_size);
constexpr const char* open_ranks_symbol = "plexus_train_open_ranks";
constexpr const char* ranks_module_file = "libplexus-train-mpi.so";

// Loads the module from the library folder beside the tool's bin folder and
// opens the ranks; throws std::runtime_error naming what it tried and why
// it failed. The module stays loaded until the process exits.
std::unique_ptr<Ranks> open_mpi_ranks(int& argc, char**& argv);

}  // namespace plexus::train
