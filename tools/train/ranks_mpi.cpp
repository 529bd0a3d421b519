// libplexus-train-mpi: plexus-train's ranks over MPI (plexus::mpi::World),
// loaded by the tool only for --distributed (ranks.hpp).
#include <cstdio>
#include <exception>
#include <type_traits>

#include "plexus/mpi.hpp"
#include "ranks.hpp"

namespace plexus::train {
namespace {

class MpiRanks final : public Ranks {
public:
    MpiRanks(int& argc, char**& argv) : world_(argc, argv) {}
    int rank() const override { return world_.rank(); }
    int size() const override { return world_.size(); }
    int local_rank() const override { return world_.local_rank(); }
    void sum(std::vector<double>& values, const std::string& what) override { world_.all_reduce_sum(values, what); }
    nn::Trainer::GradientHook gradient_reducer(const Device& device) override { return world_.gradient_reducer(device); }
    std::string disagreement(const mpi::Facts& facts) override { return world_.disagreement(facts); }
    std::string reducer() const override { return world_.reducer(); }
    [[noreturn]] void abort(const std::string& why) override { world_.abort(why); }

private:
    mpi::World world_;
};

}  // namespace
}  // namespace plexus::train

extern "C" __attribute__((visibility("default"))) plexus::train::Ranks* plexus_train_open_ranks(
    int* argc, char*** argv, char* error, unsigned long error_size) {
    try {
        return new plexus::train::MpiRanks(*argc, *argv);
    } catch (const std::exception& e) {
        std::snprintf(error, error_size, "%s", e.what());
    } catch (...) {
        std::snprintf(error, error_size, "an unknown exception");
    }
    return nullptr;
}

static_assert(std::is_same_v<decltype(plexus_train_open_ranks), plexus::train::OpenRanks>,
              "the entry point must match what plexus-train looks up");
