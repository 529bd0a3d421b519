// plexus mpi: data-parallel training across processes and machines with MPI
// (libplexus-mpi, built when MPI is found; the runtime never needs MPI).
//
//   plexus::mpi::World world(argc, argv);           // MPI_Init .. MPI_Finalize
//   loader.shard(world.rank(), world.size());        // this rank's part of each batch
//   world.broadcast(net.collect_params());           // rank 0's initial values everywhere
//   trainer.set_gradient_hook(world.gradient_reducer());  // sum gradients across ranks
//
// Collectives go through host buffers in float64. Each waits at most
// timeout() seconds for the other ranks (PLEXUS_MPI_TIMEOUT, default 20): a
// rank that died or hangs makes the others print why and stop with
// MPI_Abort instead of waiting forever.
#pragma once

#include <string>
#include <vector>

#include "plexus/nn.hpp"

namespace plexus::mpi {

class World {
public:
    // Initializes MPI (once per process); throws when it is already initialized.
    World(int& argc, char**& argv);
    ~World();  // MPI_Finalize
    World(const World&) = delete;
    World& operator=(const World&) = delete;

    int rank() const { return rank_; }
    int size() const { return size_; }
    // This rank's index among the ranks on its machine (for picking a GPU).
    int local_rank() const { return local_rank_; }
    double timeout() const { return timeout_; }
    void set_timeout(double seconds);

    // Sums `values` over the ranks in place; `what` names the call in the
    // time-out message.
    void all_reduce_sum(std::vector<double>& values, const std::string& what);
    // Sums each tensor over the ranks; returns the sums on the same devices
    // in the same dtypes. All float32 (gradients, usually): summed as
    // float32 through one reused host buffer; otherwise as float64.
    std::vector<Tensor> all_reduce_sum(const std::vector<Tensor>& tensors, const std::string& what);
    // Gives every rank rank 0's values of every parameter.
    void broadcast(const nn::ParameterDict& params);
    // For nn::Trainer::set_gradient_hook: sums the gradients over the ranks.
    nn::Trainer::GradientHook gradient_reducer();
    // Waits until every rank has arrived.
    void barrier(const std::string& what);
    // Prints `why` on stderr naming this rank and stops every rank.
    [[noreturn]] void abort(const std::string& why, int code = 1);

private:
    void wait(void* request, const std::string& what);
    // Sums n floats (float32) or doubles at `data` over the ranks, in place.
    void sum_in_place(void* data, size_t n, bool float32, const std::string& what);
    int rank_ = 0, size_ = 1, local_rank_ = 0;
    double timeout_ = 20;
    int64_t calls_ = 0;
    std::vector<float> staging_;  // reused by every float32 all-reduce: no allocation per step
};

}  // namespace plexus::mpi
