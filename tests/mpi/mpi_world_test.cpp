// Run under mpirun -np 2 (or more). Modes:
//   collectives  all_reduce_sum of values and tensors, broadcast of
//                parameters, the gradient hook; exits 0 when all hold.
//   stall        rank 1 stops answering at the third collective; the
//                others must stop with the time-out error (exit nonzero).
//   exit         rank 1 exits at the third collective; the job must stop.
//   group        gradient_reducer(device): the ranks agree on MPI when any
//                device lacks process groups, and join one on accel(0) (the
//                group-mpi test plugin) when all have them.
//   group-gpu    the same with gpu(local rank) (NCCL); exits 77 unless
//                every rank has a GPU of its own.
//   group-no-id  rank 0 cannot make a group id: every rank sums through MPI.
//   group-join-fails  rank 1 cannot join: the job stops, saying why.
//   group-stall  rank 1 stops answering at the second gradient sum through
//                the group; rank 0's next wait must fail with the time-out.
//   disagree     disagreement(): every rank gets the same verdict on facts
//                that agree, a value, a name, a missing fact and parameter
//                shapes that differ on rank 1, and collectives still work.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "plexus/mpi.hpp"

using namespace plexus;

namespace {

int failures = 0;

void expect(bool ok, const std::string& what, int rank) {
    if (ok) return;
    std::fprintf(stderr, "rank %d: FAILED: %s\n", rank, what.c_str());
    ++failures;
}

void collectives(mpi::World& w) {
    const int r = w.rank(), n = w.size();
    // Values: sum of (rank + 1) and of 0.1 * rank.
    std::vector<double> v{double(r + 1), 0.1 * r};
    w.all_reduce_sum(v, "test values");
    expect(v[0] == n * (n + 1) / 2.0, "the sum of rank + 1", r);
    // Tensors keep their device, dtype and shape; int64 stays exact.
    Tensor f = full({2, 3}, double(r + 1));
    Tensor i = array(std::vector<int64_t>{(int64_t(1) << 40) + r, -r}, {2});
    auto sums = w.all_reduce_sum({f, i}, "test tensors");
    expect(sums[0].shape() == Shape{2, 3} && sums[0].dtype() == DType::float32, "shape and dtype kept", r);
    expect(sums[0].to_vector<float>()[5] == float(n * (n + 1) / 2), "float32 sum", r);
    expect(sums[1].dtype() == DType::int64, "int64 kept", r);
    expect(sums[1].to_vector<int64_t>()[0] == n * ((int64_t(1) << 40)) + n * (n - 1) / 2, "int64 sum", r);
    // Broadcast: every rank ends with rank 0's parameters.
    nn::Sequential net;
    net.add(nn::Dense(3, "", 2));
    seed(100 + uint64_t(r));  // different values on every rank
    net.initialize(cpu());
    w.broadcast(net.collect_params());
    std::vector<double> mine = net.collect_params()["0.weight"].data().astype(DType::float64).to_vector<double>();
    std::vector<double> zeroth = mine;
    if (r != 0) std::fill(zeroth.begin(), zeroth.end(), 0.0);
    w.all_reduce_sum(zeroth, "rank 0's weights");
    expect(mine == zeroth, "broadcast gives rank 0's values", r);
    // The gradient hook sums over the ranks.
    auto hook = w.gradient_reducer();
    std::vector<Tensor> grads{full({4}, 2.0 * r)};
    hook(grads);
    expect(grads[0].to_vector<float>()[3] == float(n * (n - 1)), "gradient hook", r);
    // Several float32 tensors travel in one buffer: each gets its own part back.
    auto parts = w.all_reduce_sum({full({3}, double(r)), full({2, 2}, 10.0 * (r + 1))}, "float32 tensors");
    expect(parts[0].shape() == Shape{3} && parts[1].shape() == Shape{2, 2}, "float32 shapes kept", r);
    expect(parts[0].to_vector<float>()[2] == float(n * (n - 1) / 2), "float32 first part", r);
    expect(parts[1].to_vector<float>()[0] == float(10 * n * (n + 1) / 2), "float32 second part", r);
    // A bad time-out is refused.
    bool refused = false;
    try {
        w.set_timeout(0);
    } catch (const InvalidArgumentError&) {
        refused = true;
    }
    expect(refused, "set_timeout(0) refused", r);
    w.barrier("the end of the test");
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// `values` as float32 on `d` (from host memory: the test plugin runs no fill).
Tensor on(Device d, const std::vector<float>& values, const Shape& shape) { return array(values, shape, d); }

// `dev` is this rank's device whose plugin has process groups.
void group(mpi::World& w, const Device dev) {
    const int r = w.rank(), n = w.size();
    const std::string plugin = plugin_of(dev);
    // No device of ours has groups: MPI it is.
    w.gradient_reducer(cpu());
    expect(contains(w.reducer(), "MPI through host memory (" + std::to_string(n) + " of " + std::to_string(n) + " ranks"),
           "cpu: " + w.reducer(), r);
    // Only rank 0's has: still MPI, and the sum still right.
    const Device mixed = r == 0 ? dev : cpu();
    auto hook = w.gradient_reducer(mixed);
    expect(contains(w.reducer(), "(" + std::to_string(n - 1) + " of " + std::to_string(n) + " ranks have no " + plugin),
           "mixed: " + w.reducer(), r);
    std::vector<Tensor> grads{on(mixed, {float(r + 1)}, {1})};
    hook(grads);
    expect(grads[0].to_vector<float>()[0] == float(n * (n + 1) / 2), "mixed: the sum through MPI", r);
    // Every rank's device has them: the sum runs in the plugin.
    hook = w.gradient_reducer(dev);
    expect(contains(w.reducer(), "the " + plugin + " plugin's process group"), "group: " + w.reducer(), r);
    Tensor a = on(dev, {float(r + 1), 1, 2, float(r)}, {2, 2});
    Tensor b = on(dev, {0.5f * float(r), -1, 0.25f}, {3});
    grads = {a, b, a};  // one tensor twice (gradients may share memory): each summed once
    hook(grads);
    expect(grads[0].shape() == Shape{2, 2} && grads[1].shape() == Shape{3}, "group: shapes kept", r);
    auto a_sum = grads[0].to_vector<float>(), b_sum = grads[1].to_vector<float>(), a_again = grads[2].to_vector<float>();
    expect(a_sum == std::vector<float>{float(n * (n + 1) / 2), float(n), float(2 * n), float(n * (n - 1) / 2)},
           "group: the first gradient's sum", r);
    expect(b_sum == std::vector<float>{0.25f * float(n * (n - 1)), float(-n), 0.25f * float(n)},
           "group: the second gradient's sum", r);
    expect(a_again == a_sum, "group: a gradient given twice is summed once", r);
    expect(a.to_vector<float>()[0] == float(r + 1), "group: the hook leaves its inputs alone", r);
    // Refusals: a gradient elsewhere, and a second reducer.
    std::vector<Tensor> elsewhere{full({1}, 1.0)};
    bool refused = false;
    try {
        hook(elsewhere);
    } catch (const DeviceMismatchError& e) {
        refused = contains(e.what(), "summed on " + resolve(dev).str() + ", but one is on cpu(0)");
    }
    expect(refused, "group: a gradient on another device is refused", r);
    refused = false;
    try {
        w.gradient_reducer(dev);
    } catch (const InvalidArgumentError& e) {
        refused = contains(e.what(), "already called (a World joins one process group): give the hook it returned");
    }
    expect(refused, "group: a second gradient_reducer(device) is refused, saying what to do", r);
    w.barrier("the end of the group test");
}

// Rank 1 stalls; rank 0's wait after the group's sum must fail in time.
void group_stall(mpi::World& w) {
    auto hook = w.gradient_reducer(accel(0));
    for (int step = 0; step < 3; ++step) {
        if (step == 1 && w.rank() == 1) sleep(600);
        std::vector<Tensor> grads{on(accel(0), {1, 2}, {2})};
        try {
            hook(grads);
            grads[0].to_vector<float>();  // the wait that reports the group's failure
        } catch (const DeviceError& e) {
            w.abort(e.what(), 4);
        }
    }
}

// Every rank must get `expected` from disagreement(facts).
void verdict(mpi::World& w, const mpi::Facts& facts, const std::string& expected, const std::string& what) {
    const std::string got = w.disagreement(facts);
    expect(got == expected, what + ": got '" + got + "'", w.rank());
}

void disagree(mpi::World& w) {
    const bool one = w.rank() == 1;
    const std::string tail = " (every rank must run with the same settings, data and network)";
    mpi::Facts same{{"--batch-size", "64"}, {"--net", "lenet"}};
    verdict(w, same, "", "facts that agree");
    verdict(w, {{"--batch-size", one ? "32" : "64"}, {"--net", "lenet"}},
            "the ranks disagree: --batch-size differs: rank 0 has '64', rank 1 has '32'" + tail, "a value");
    verdict(w, {{"--batch-size", "64"}, {one ? "--max-batches" : "--net", "lenet"}},
            "the ranks disagree: rank 0 has --net where rank 1 has --max-batches" + tail, "a name");
    mpi::Facts longer = same;
    if (one) longer.emplace_back("test images", "0");
    verdict(w, longer, "the ranks disagree: rank 1 has test images '0', which rank 0 lacks" + tail, "a fact rank 0 lacks");
    verdict(w, one ? mpi::Facts{} : same, "the ranks disagree: rank 0 has --batch-size '64', which rank 1 lacks" + tail,
            "no facts on rank 1");
    verdict(w, {{"--data", std::string(one ? (1 << 20) : 1, 'x')}},
            "cannot compare the ranks' settings: rank 1's take 1048584 bytes, more than 1048576", "too much to compare");
    // Parameter shapes: rank 1's second layer is wider; the first layer's
    // input is still deferred ("?").
    nn::Sequential net;
    net.add(nn::Dense(4, "relu"), nn::Dense(one ? 3 : 2, "", 4));
    net.initialize(cpu());
    verdict(w, mpi::parameter_shapes(net.collect_params()),
            "the ranks disagree: the shape of parameter 1.weight differs: rank 0 has '(2, 4)', rank 1 has '(3, 4)'" + tail,
            "parameter shapes");
    verdict(w, {{"the shape of parameter 0.weight", "(4, ?)"}}, "", "a deferred dimension");
    expect(mpi::parameter_shapes(net.collect_params())[0].second == "(4, ?)", "a deferred dimension is '?'", w.rank());
    // The ranks are still in step: a sum after the verdicts.
    std::vector<double> v{1.0};
    w.all_reduce_sum(v, "after the verdicts");
    expect(v[0] == double(w.size()), "a sum after the verdicts", w.rank());
}

}  // namespace

int main(int argc, char** argv) {
    const std::string mode = argc > 1 ? argv[1] : "collectives";
    mpi::World w(argc, argv);
    if (mode == "collectives") {
        collectives(w);
        if (w.rank() == 0 && failures == 0) std::printf("collectives: all checks passed on %d ranks\n", w.size());
        return failures ? 1 : 0;
    }
    if (mode == "disagree") {
        disagree(w);
        if (w.rank() == 0 && failures == 0) std::printf("disagree: all checks passed on %d ranks\n", w.size());
        return failures ? 1 : 0;
    }
    if (mode == "group-gpu") {  // one GPU per rank: NCCL between them
        std::vector<double> lacking{num_gpus() > w.local_rank() ? 0.0 : 1.0};
        w.all_reduce_sum(lacking, "counting the GPUs");
        if (lacking[0] > 0) {
            if (w.rank() == 0) std::printf("skipped: %g rank(s) have no GPU of their own (NCCL needs one per rank)\n", lacking[0]);
            return 77;
        }
        group(w, gpu(w.local_rank()));
        if (w.rank() == 0 && failures == 0) std::printf("group: all checks passed on %d ranks (%s)\n", w.size(), w.reducer().c_str());
        return failures ? 1 : 0;
    }
    if (mode == "group") {
        group(w, accel(0));
        if (w.rank() == 0 && failures == 0) std::printf("group: all checks passed on %d ranks (%s)\n", w.size(), w.reducer().c_str());
        return failures ? 1 : 0;
    }
    if (mode == "group-no-id") {  // GROUP_TEST_NO_ID=1: rank 0 cannot make an id, so MPI sums
        auto hook = w.gradient_reducer(accel(0));
        // Only rank 0 knows why, and only rank 0 prints it.
        expect(contains(w.reducer(), "MPI through host memory (rank 0 could not make a group-mpi group") &&
                   (w.rank() != 0 || contains(w.reducer(), "simulated: the collective library is missing")),
               "no id: " + w.reducer(), w.rank());
        std::vector<Tensor> grads{on(accel(0), {float(w.rank() + 1)}, {1})};
        hook(grads);
        expect(grads[0].to_vector<float>()[0] == float(w.size() * (w.size() + 1) / 2), "no id: the sum through MPI", w.rank());
        if (w.rank() == 0 && failures == 0) std::printf("group-no-id: all checks passed on %d ranks\n", w.size());
        return failures ? 1 : 0;
    }
    if (mode == "group-join-fails") {  // GROUP_TEST_JOIN_FAILS_ON=1: that rank stops the job
        w.gradient_reducer(accel(0));
        std::fprintf(stderr, "rank %d: the job went on after a failed join\n", w.rank());
        return 1;
    }
    if (mode == "group-stall") {
        group_stall(w);
        std::fprintf(stderr, "rank %d: the job went on without rank 1\n", w.rank());
        return 1;
    }
    for (int step = 0; step < 5; ++step) {
        if (step == 2 && w.rank() == 1) {
            if (mode == "exit") std::_Exit(7);  // a rank that dies
            sleep(600);                         // a rank that hangs
        }
        std::vector<double> v{1.0};
        w.all_reduce_sum(v, "step " + std::to_string(step));
    }
    std::fprintf(stderr, "rank %d: the job went on without rank 1\n", w.rank());
    return 1;
}
