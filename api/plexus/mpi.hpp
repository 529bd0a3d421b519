// plexus mpi: data-parallel training across processes and machines with MPI
// (libplexus-mpi, built when MPI is found; the runtime never needs MPI).
//
//   plexus::mpi::World world(argc, argv);           // MPI_Init .. MPI_Finalize
//   loader.shard(world.rank(), world.size());        // this rank's part of each batch
//   world.broadcast(net.collect_params());           // rank 0's initial values everywhere
//   trainer.set_gradient_hook(world.gradient_reducer(device));  // sum gradients across ranks
//
// Collectives go through host buffers, except the gradients' sum when every
// rank's device offers process groups (plugin ABI 1.3: NCCL between GPUs),
// which stays on the devices. Each waits at most timeout() seconds for the
// other ranks (PLEXUS_MPI_TIMEOUT, default 20): a rank that died or hangs
// makes the others stop with an error naming why instead of waiting forever.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "plexus/nn.hpp"

namespace plexus::mpi {

// What every rank must share before the collectives start: (name, value)
// pairs such as ("--batch-size", "64"), ("training images", "60000").
using Facts = std::vector<std::pair<std::string, std::string>>;

// Each parameter's name and shape, "(6, 1, 5, 5)" ("?" for a dimension not
// inferred yet), for World::disagreement.
inline Facts parameter_shapes(const nn::ParameterDict& params) {
    Facts out;
    for (const auto& [name, p] : params) {
        std::string shape = "(";
        for (size_t i = 0; i < p->shape().size(); ++i)
            shape += (i ? ", " : "") + (p->shape()[i] ? std::to_string(p->shape()[i]) : std::string("?"));
        out.emplace_back("the shape of parameter " + name, shape + ")");
    }
    return out;
}

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
    // For nn::Trainer::set_gradient_hook: sums the gradients over the ranks
    // through host memory (MPI).
    nn::Trainer::GradientHook gradient_reducer();
    // The same for gradients on `device` (each rank its own): when every
    // rank's device comes from one plugin that offers process groups, the
    // sum runs there, on the devices (NCCL for the CUDA plugin), one call per
    // dtype for all the gradients; otherwise as gradient_reducer(). Every
    // rank must call it (the ranks agree on the way); a rank that cannot
    // join the group stops them all. reducer() says which way was taken.
    // Called once per World: several Trainers share the hook it returns.
    nn::Trainer::GradientHook gradient_reducer(const Device& device);
    // "MPI through host memory", or the group's plugin and device, with why.
    const std::string& reducer() const { return reducer_; }
    // Compares every rank's `facts` with rank 0's (two all-gathers whose
    // sizes never depend on them). Ranks that disagree on a batch size or a
    // network would later hand MPI buffers of different sizes and corrupt its
    // heap, so call it before those collectives. Returns "" when all agree;
    // otherwise the same message on every rank, naming the first fact that
    // differs, the rank and both values, so each can stop cleanly.
    std::string disagreement(const Facts& facts);
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
    // Joins a process group on `device` when every rank can (device_group.cpp).
    void join_group(const Device& device);
    int64_t calls_ = 0;
    std::unique_ptr<ProcessGroup> group_;  // from gradient_reducer(device); left before MPI_Finalize
    std::string reducer_ = "MPI through host memory";
    std::vector<float> staging_;  // reused by every float32 all-reduce: no allocation per step
};

}  // namespace plexus::mpi
