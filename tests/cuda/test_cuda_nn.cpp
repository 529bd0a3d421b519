// Training on GPUs, step for step against the CPU plugin: a small LeNet
// (the layer kinds plexus-train uses) trained for a few SGD steps with
// momentum on gpu(0), on gpu(0)+gpu(1) (the plugin's all-reduce) and on
// cpu(0)+gpu(0) (the host's), each batch split over the devices, ends with
// the parameters of the same training on cpu(0), up to float32 summation
// order. Skipped (exit 4) without a GPU; run on the CUDA emulator everywhere.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "plexus/nn.hpp"

using namespace plexus;

namespace {

double max_abs_diff(const Tensor& a, const Tensor& b) {
    auto x = a.astype(DType::float64).copyto(cpu()).to_vector<double>();
    auto y = b.astype(DType::float64).copyto(cpu()).to_vector<double>();
    REQUIRE(x.size() == y.size());
    double m = 0;
    for (size_t i = 0; i < x.size(); ++i) m = std::max(m, std::abs(x[i] - y[i]));
    return m;
}

void build(nn::Sequential& net) {
    net.add(nn::Conv2D(4, 3, 1, 1, "relu", 1), nn::MaxPool2D(2, 2), nn::Conv2D(6, 3, 1, 0, "relu", 4),
            nn::AvgPool2D(2, 2), nn::Flatten(), nn::Dense(16, "relu", 6), nn::Dense(3, "", 16));
}

// k SGD steps with momentum and weight decay on `devices`; returns the losses.
std::vector<double> train(nn::Sequential& net, const std::vector<Device>& devices, const Tensor& x, const Tensor& y,
                          int k) {
    seed(11);
    build(net);
    net.initialize(devices);
    nn::Trainer trainer(net.collect_params(), "sgd", {{"learning_rate", 0.2}, {"momentum", 0.9}, {"wd", 1e-3}});
    loss::SoftmaxCrossEntropyLoss loss_fn;
    std::vector<double> losses;
    for (int step = 0; step < k; ++step) {
        auto xs = nn::split_and_load(x, devices);
        auto ys = nn::split_and_load(y, devices);
        std::vector<Tensor> parts;
        {
            auto scope = autograd::record();
            for (size_t i = 0; i < devices.size(); ++i) parts.push_back(loss_fn(net(xs[i]), ys[i]));
        }
        double total = 0;
        for (auto& l : parts) {
            l.backward();
            total += l.sum().astype(DType::float64).copyto(cpu()).item<double>();
        }
        losses.push_back(total / double(x.shape()[0]));
        trainer.step(x.shape()[0]);
    }
    return losses;
}

}  // namespace

TEST_CASE("training on gpu(0), on two GPUs and on cpu(0)+gpu(0) follows the CPU step for step", "[cuda][gpu][nn]") {
    seed(3);
    // 9 rows: split 5 + 4, so the devices see batches of different sizes.
    Tensor x = random_normal({9, 1, 8, 8}, 0, 1);
    Tensor y = random_uniform({9}, 0, 3).astype(DType::int32);
    nn::Sequential want;
    const std::vector<double> want_losses = train(want, {cpu(0)}, x, y, 5);
    CHECK(want_losses.back() < want_losses.front());  // it learned something
    auto pw = want.collect_params();
    std::vector<std::vector<Device>> mixes{{gpu(0)}, {cpu(0), gpu(0)}};
    if (num_gpus() >= 2) mixes.push_back({gpu(0), gpu(1)});
    for (const auto& mix : mixes) {
        INFO("devices " << mix[0].str() << (mix.size() > 1 ? " + " + mix[1].str() : std::string()));
        nn::Sequential got;
        const std::vector<double> got_losses = train(got, mix, x, y, 5);
        for (size_t s = 0; s < got_losses.size(); ++s) CHECK(std::abs(got_losses[s] - want_losses[s]) < 1e-4);
        auto pg = got.collect_params();
        double worst = 0;
        for (auto& [name, param] : pw) {
            INFO(name);
            nn::Parameter& other = pg[name];
            REQUIRE(other.list_data().size() == mix.size());
            for (size_t i = 0; i < mix.size(); ++i) {
                CHECK(other.data(mix[i]).device() == mix[i]);
                worst = std::max(worst, max_abs_diff(other.data(mix[i]), param->data()));
            }
            // Replicas stay bit-identical: one summed gradient, one update.
            if (mix.size() == 2) CHECK(max_abs_diff(other.data(mix[0]), other.data(mix[1])) == 0.0);
        }
        WARN("largest parameter difference from the CPU after 5 steps: " << worst);
        CHECK(worst < 1e-4);
    }
}
