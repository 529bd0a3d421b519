#include "bench_parallel.hpp"

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "../train/lenet.hpp"
#include "bench_util.hpp"
#include "plexus/nn.hpp"

using namespace plexus;

namespace pxbench {

void bench_two_devices(Device a, Device b, bool quick, bool json) {
    const int64_t n = quick ? 256 : 2048;
    seed(1);
    Tensor x = random_uniform({n, n}, -1, 1, a), y = random_uniform({n, n}, -1, 1, b), xx, yy;
    Tensor y_on_a = y.copyto(a);
    // Seed 003: products on two devices at once, vs both on one, one after the other.
    auto [together, one_after_other] = interleaved(
        quick ? 3 : 9,
        [&] {
            xx = matmul(x, x);
            yy = matmul(y, y);
            synchronize(a);
            synchronize(b);
        },
        [&] {
            xx = matmul(x, x);
            yy = matmul(y_on_a, y_on_a);
            synchronize(a);
        });
    report({"two " + std::to_string(n) + "^2 products on " + a.str() + " and " + b.str(), "ms", together * 1e3,
            one_after_other * 1e3, "both on " + a.str(), "ratio < 1: the devices overlap"},
           json);
}

namespace {

// Median seconds of one training step at batch 256 on `devices`.
double step_seconds(const std::function<void(nn::Sequential&)>& build, const std::vector<Device>& devices, int reps) {
    seed(0);
    nn::Sequential net;
    build(net);
    net.initialize(devices);
    nn::Trainer trainer(net.collect_params(), "sgd", {{"learning_rate", 0.05}});
    loss::SoftmaxCrossEntropyLoss loss_fn;
    Tensor x = random_normal({256, 1, 28, 28}, 0, 1, devices[0]);
    Tensor y = random_uniform({256}, 0, 10, devices[0]).astype(DType::int32);
    auto step = [&] {
        auto xs = nn::split_and_load(x, devices), ys = nn::split_and_load(y, devices);
        std::vector<Tensor> losses;
        {
            auto scope = autograd::record();
            for (size_t i = 0; i < devices.size(); ++i) losses.push_back(loss_fn(net(xs[i]), ys[i]));
        }
        for (auto& l : losses) l.backward();
        trainer.step(256);
        for (Device d : devices) synchronize(d);
    };
    return interleaved(reps, step, nullptr).first;
}

}  // namespace

void bench_data_parallel(Device a, Device b, bool quick, bool json) {
    const int reps = quick ? 3 : 15;
    struct Net {
        const char* name;
        std::function<void(nn::Sequential&)> build;
    } nets[] = {{"LeNet", train::add_lenet}, {"MLP 784-1024-1024-10", train::add_mlp}};
    for (const Net& net : nets) {
        double one = step_seconds(net.build, {a}, reps);
        double two = step_seconds(net.build, {a, b}, reps);
        report({std::string(net.name) + " step, batch 256 over " + a.str() + "+" + b.str(), "ms", two * 1e3, one * 1e3,
                "on " + a.str() + " alone", "efficiency " + std::to_string(std::lround(100 * one / (2 * two))) + "%"},
               json);
    }
}

}  // namespace pxbench
