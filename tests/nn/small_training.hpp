// A small LeNet and a few data-parallel SGD steps on it, shared by the tests
// that compare training on several devices with training on one
// (tests/nn/test_data_parallel.cpp, tests/plugins/cuda/test_cuda_nn.cpp).
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "plexus/nn.hpp"

namespace pxtest {

// The largest |a - b| over two tensors of one shape, on any devices.
inline double max_abs_diff(const plexus::Tensor& a, const plexus::Tensor& b) {
    using plexus::DType;
    auto x = a.astype(DType::float64).copyto(plexus::cpu()).to_vector<double>();
    auto y = b.astype(DType::float64).copyto(plexus::cpu()).to_vector<double>();
    REQUIRE(x.size() == y.size());
    double m = 0;
    for (size_t i = 0; i < x.size(); ++i) m = std::max(m, std::abs(x[i] - y[i]));
    return m;
}

// Every layer kind plexus-train uses, for (N, 1, 8, 8) inputs and 3 classes.
inline void build_small_lenet(plexus::nn::Sequential& net) {
    using namespace plexus;
    net.add(nn::Conv2D(4, 3, 1, 1, "relu", 1), nn::MaxPool2D(2, 2), nn::Conv2D(6, 3, 1, 0, "relu", 4),
            nn::AvgPool2D(2, 2), nn::Flatten(), nn::Dense(16, "relu", 6), nn::Dense(3, "", 16));
}

// Builds the small LeNet (seed 11) on `devices` and runs k SGD steps with
// momentum and weight decay, each batch split over the devices, the layers
// computing in `compute` (nn::Autocast); returns each step's mean loss.
inline std::vector<double> train_split(plexus::nn::Sequential& net, const std::vector<plexus::Device>& devices,
                                       const plexus::Tensor& x, const plexus::Tensor& y, int k,
                                       plexus::DType compute = plexus::DType::float32) {
    using namespace plexus;
    seed(11);
    build_small_lenet(net);
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
            nn::Autocast precision(compute);
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

}  // namespace pxtest
