// World: MPI set-up, and collectives that never wait forever. Every
// collective is non-blocking (MPI_Iallreduce, MPI_Ibcast, MPI_Ibarrier) and
// polled against a deadline; when the deadline passes a rank has died or
// hangs, and this rank says so and aborts the job.
#include "plexus/mpi.hpp"
#include "check_mpi.hpp"

#include <mpi.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace plexus::mpi {

void check_mpi(int code, const char* call) {
    if (code == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(code, text, &len);
    throw Error(PX_ERROR_INTERNAL, std::string(call) + " failed: " + std::string(text, size_t(len)));
}

namespace {

// Host float64 copies of the tensors, end to end.
std::vector<double> gather(const std::vector<Tensor>& ts) {
    std::vector<double> out;
    for (const Tensor& t : ts) {
        auto v = t.astype(DType::float64).to_vector<double>();
        out.insert(out.end(), v.begin(), v.end());
    }
    return out;
}

// Tensors shaped like `like`, on their devices and in their dtypes, from `values`.
std::vector<Tensor> scatter(const std::vector<double>& values, const std::vector<Tensor>& like) {
    std::vector<Tensor> out;
    size_t at = 0;
    for (const Tensor& t : like) {
        const size_t n = size_t(t.size());
        std::vector<double> part(values.begin() + long(at), values.begin() + long(at + n));
        at += n;
        out.push_back(array(part, t.shape(), t.device()).astype(t.dtype()));
    }
    return out;
}

// MPI counts elements in an int.
int mpi_count(size_t n) {
    if (n > size_t(INT32_MAX))
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "mpi: " + std::to_string(n) +
                                                                  " values are more than one MPI call can carry (2^31 - 1)");
    return int(n);
}

}  // namespace

World::World(int& argc, char**& argv) {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (initialized) throw Error(PX_ERROR_INVALID_ARGUMENT, "plexus::mpi::World: MPI is already initialized");
    int provided = 0;
    check_mpi(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
    // Errors come back as codes (and then exceptions), not as MPI's abort.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
    MPI_Comm local;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local) == MPI_SUCCESS) {
        MPI_Comm_rank(local, &local_rank_);
        MPI_Comm_free(&local);
    }
    if (const char* env = std::getenv("PLEXUS_MPI_TIMEOUT")) {
        char* end = nullptr;
        double t = std::strtod(env, &end);
        if (end == env || *end || !(t > 0)) abort(std::string("PLEXUS_MPI_TIMEOUT='") + env + "' is not a number of seconds > 0", 2);
        timeout_ = t;
    }
}

World::~World() {
    group_.reset();  // leaves the group while MPI can still carry the other ranks' news
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
}

void World::set_timeout(double seconds) {
    if (!(seconds > 0)) throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "mpi::World: the time-out must be > 0 seconds");
    timeout_ = seconds;
}

void World::wait(void* request_ptr, const std::string& what) {
    MPI_Request& request = *static_cast<MPI_Request*>(request_ptr);
    const auto start = std::chrono::steady_clock::now();
    const auto deadline = start + std::chrono::duration<double>(timeout_);
    // A non-blocking collective advances only inside MPI_Test: for the first
    // 100 ms test back to back (yielding the core), as a blocking MPI call
    // would, then, with a peer late or gone, less and less often until the
    // deadline. Sleeping between tests from the start made the two-rank MLP
    // epoch 6.9-7.6 s instead of 6.3-6.4 s (bench/results, interleaved runs).
    const auto eager = start + std::chrono::milliseconds(100);
    auto pause = std::chrono::microseconds(10);
    for (uint64_t round = 0;; ++round) {
        int done = 0;
        check_mpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
        if (done) return;
        if (round % 64 != 0) {
            std::this_thread::yield();
            continue;
        }
        const auto now = std::chrono::steady_clock::now();
        if (now > deadline) {
            char secs[32];
            std::snprintf(secs, sizeof secs, "%g", timeout_);
            abort(what + " (collective " + std::to_string(calls_) + ") waited " + secs + " s for the other " +
                      std::to_string(size_ - 1) + " rank(s): one has died or hangs. Stopping every rank "
                      "(PLEXUS_MPI_TIMEOUT sets the limit).",
                  3);
        }
        if (now < eager) {
            std::this_thread::yield();
            continue;
        }
        std::this_thread::sleep_for(pause);
        if (pause < std::chrono::microseconds(1000)) pause *= 2;
    }
}

void World::sum_in_place(void* data, size_t n, bool float32, const std::string& what) {
    ++calls_;
    MPI_Request request;
    check_mpi(MPI_Iallreduce(MPI_IN_PLACE, data, mpi_count(n), float32 ? MPI_FLOAT : MPI_DOUBLE, MPI_SUM,
                             MPI_COMM_WORLD, &request),
              "MPI_Iallreduce");
    wait(&request, what);
}

void World::all_reduce_sum(std::vector<double>& values, const std::string& what) {
    sum_in_place(values.data(), values.size(), false, what);
}

std::vector<Tensor> World::all_reduce_sum(const std::vector<Tensor>& tensors, const std::string& what) {
    bool all_float32 = !tensors.empty();
    size_t n = 0;
    for (const Tensor& t : tensors) {
        all_float32 = all_float32 && t.dtype() == DType::float32;
        n += size_t(t.size());
    }
    if (all_float32) {
        // Each tensor is read straight into its place in one buffer and made
        // again from it: one copy each way, half the bytes of float64.
        staging_.resize(n);
        size_t at = 0;
        for (const Tensor& t : tensors) {
            check(px_tensor_to_host(t.handle(), staging_.data() + at, size_t(t.size()) * sizeof(float)));
            at += size_t(t.size());
        }
        sum_in_place(staging_.data(), n, true, what);
        std::vector<Tensor> out;
        at = 0;
        for (const Tensor& t : tensors) {
            Shape s = t.shape();
            const float* part = staging_.data() + at;
            out.push_back(Tensor::wrap([&](px_tensor** o) {
                return px_tensor_from_host(runtime(), t.device().raw(), PX_FLOAT32, int32_t(s.size()), s.data(), part,
                                           size_t(t.size()) * sizeof(float), o);
            }));
            at += size_t(t.size());
        }
        return out;
    }
    std::vector<double> values = gather(tensors);
    all_reduce_sum(values, what);
    return scatter(values, tensors);
}

void World::broadcast(const nn::ParameterDict& params) {
    std::vector<Tensor> data;
    for (auto& [name, p] : params) data.push_back(p->data());
    std::vector<double> values = gather(data);
    ++calls_;
    MPI_Request request;
    check_mpi(MPI_Ibcast(values.data(), mpi_count(values.size()), MPI_DOUBLE, 0, MPI_COMM_WORLD, &request), "MPI_Ibcast");
    wait(&request, "broadcasting the initial parameters");
    std::vector<Tensor> got = scatter(values, data);
    size_t i = 0;
    for (auto& [name, p] : params) p->set_data(got[i++]);
}

nn::Trainer::GradientHook World::gradient_reducer() {
    return [this](std::vector<Tensor>& grads) {
        if (size_ > 1) grads = all_reduce_sum(grads, "summing the gradients over the ranks");
    };
}

void World::barrier(const std::string& what) {
    ++calls_;
    MPI_Request request;
    check_mpi(MPI_Ibarrier(MPI_COMM_WORLD, &request), "MPI_Ibarrier");
    wait(&request, what);
}

void World::abort(const std::string& why, int code) {
    std::fprintf(stderr, "plexus-mpi: rank %d of %d: %s\n", rank_, size_, why.c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, code);
    std::_Exit(code);  // MPI_Abort does not return; this is for an MPI that does
}

}  // namespace plexus::mpi
