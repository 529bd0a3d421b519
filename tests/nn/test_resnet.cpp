// BatchNorm, GlobalAvgPool2D, Activation, Residual, resnet18 and summary():
// values computed by hand, and ResNet-18's size as PyTorch counts it.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>

#include "../support.hpp"
#include "plexus/nn.hpp"

using namespace plexus;
using pxtest::message_of;
using pxtest::values;

namespace {
// Channel 0 holds 1, 2, 3, 4 (mean 2.5, biased variance 1.25, unbiased 5/3);
// channel 1 holds 0, 0, 2, 2 (mean 1, biased variance 1, unbiased 4/3).
Tensor two_channels() { return array(std::vector<double>{1, 0, 2, 0, 3, 2, 4, 2}, {4, 2}).astype(DType::float32); }
}  // namespace

TEST_CASE("BatchNorm normalises by the batch while training and keeps running statistics", "[nn][batch_norm]") {
    nn::BatchNorm bn;
    bn.initialize(cpu());
    Tensor y;
    {
        auto r = autograd::record();
        y = bn(two_channels());
    }
    const double e = 1e-5;
    const std::vector<double> want{(1 - 2.5) / std::sqrt(1.25 + e), -1 / std::sqrt(1 + e), (2 - 2.5) / std::sqrt(1.25 + e),
                                   -1 / std::sqrt(1 + e),            (3 - 2.5) / std::sqrt(1.25 + e), 1 / std::sqrt(1 + e),
                                   (4 - 2.5) / std::sqrt(1.25 + e), 1 / std::sqrt(1 + e)};
    PX_REQUIRE_CLOSE(values(y), want, 1e-6);
    auto params = bn.collect_params();
    REQUIRE(params.size() == 4);
    // running = 0.9 * running + 0.1 * batch, the variance unbiased.
    PX_REQUIRE_CLOSE(values(params["running_mean"].data()), (std::vector<double>{0.25, 0.1}), 1e-7);
    PX_REQUIRE_CLOSE(values(params["running_var"].data()), (std::vector<double>{0.9 + 0.5 / 3, 0.9 + 0.4 / 3}), 1e-7);
    // Predicting uses the running statistics and changes nothing.
    Tensor p = bn(two_channels());
    const std::vector<double> rm{0.25, 0.1}, rv{0.9 + 0.5 / 3, 0.9 + 0.4 / 3};
    const auto x = values(two_channels());
    for (size_t i = 0; i < x.size(); ++i) {
        INFO("element " << i);
        REQUIRE(values(p)[i] == Approx((x[i] - rm[i % 2]) / std::sqrt(rv[i % 2] + e)).epsilon(1e-6));
    }
    PX_REQUIRE_CLOSE(values(params["running_mean"].data()), rm, 1e-7);
    PX_REQUIRE_MENTIONS(bn.describe(), "BatchNorm(2 channels");
}

TEST_CASE("BatchNorm's statistics are state: no gradient, left alone by the trainer, saved and loaded", "[nn][batch_norm]") {
    nn::Sequential net;
    net.add(nn::Dense(2, "", 2), nn::BatchNorm());
    net.initialize(cpu());
    auto params = net.collect_params();
    REQUIRE(params.size() == 6);
    REQUIRE(params["1.running_var"].grad_req() == nn::GradReq::null);
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { params["1.running_var"].list_grad(); }), "grad_req null");
    nn::Trainer trainer(params, "sgd", {{"learning_rate", 0.5}});
    Tensor l;
    {
        auto r = autograd::record();
        // Weights that differ by row: with one weight per channel, dgamma = w * sum(xhat) is 0 but for rounding.
        l = (net(two_channels()) * array({1, -1, 2, 0.5f, -1, 1, 0.5f, 2}, {4, 2})).sum();
    }
    l.backward();
    const auto running = values(params["1.running_mean"].data());
    const auto gamma = values(params["1.gamma"].data());
    trainer.step(4);
    REQUIRE(values(params["1.running_mean"].data()) == running);  // the trainer left it
    REQUIRE(values(params["1.gamma"].data()) != gamma);           // and trained gamma
    const std::string path = "test_resnet_bn.params";
    net.save_parameters(path);
    nn::Sequential again;
    again.add(nn::Dense(2, "", 2), nn::BatchNorm(0.9, 1e-5, 2));
    again.initialize(cpu());
    again.load_parameters(path);
    REQUIRE(values(again.collect_params()["1.running_mean"].data()) == running);
    std::remove(path.c_str());
}

TEST_CASE("BatchNorm misuse is a clear error", "[nn][batch_norm][errors]") {
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([] { nn::BatchNorm(1.5); }), "momentum 1.5");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([] { nn::BatchNorm(0.9, 0); }), "epsilon");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([] { nn::Activation(""); }), "unknown activation");
    nn::BatchNorm bn;
    bn.initialize(cpu());
    PX_REQUIRE_MENTIONS(message_of<ShapeError>([&] { bn(ones({3})); }), "got rank 1");
    auto r = autograd::record();
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { bn(ones({1, 3})); }), "more than one value per channel");
    // A bad call changes no running statistic.
    REQUIRE(values(bn.collect_params()["running_mean"].data()) == std::vector<double>{0, 0, 0});
}

TEST_CASE("GlobalAvgPool2D averages each plane", "[nn]") {
    Tensor x = arange(0, 16).reshape({1, 2, 2, 4}).astype(DType::float32);
    Tensor y = nn::GlobalAvgPool2D()(x);
    REQUIRE(y.shape() == Shape{1, 2, 1, 1});
    REQUIRE(values(y) == std::vector<double>{3.5, 11.5});
    PX_REQUIRE_MENTIONS(message_of<ShapeError>([&] { nn::GlobalAvgPool2D()(ones({2, 3})); }), "got rank 2");
}

TEST_CASE("resnet18 is d2l's network, the size PyTorch counts, and trains", "[nn][resnet]") {
    nn::Sequential net = nn::resnet18(10, 1);
    net.initialize(cpu());
    REQUIRE(net(zeros({2, 1, 28, 28})).shape() == Shape{2, 10});  // which also infers the deferred shapes
    int64_t trainable = 0, state = 0;
    for (auto& [name, p] : net.collect_params()) {
        int64_t n = 1;
        for (int64_t d : p->shape()) n *= d;
        (p->grad_req() == nn::GradReq::write ? trainable : state) += n;
    }
    // The same network in PyTorch: 11,175,818 parameters, 7,808 running statistics.
    CHECK(trainable == 11175818);
    CHECK(state == 7808);
    const std::string summary = net.summary(zeros({2, 1, 28, 28}));
    PX_REQUIRE_MENTIONS(summary, "Residual(128 channels, stride 2, 1x1 shortcut)");
    PX_REQUIRE_MENTIONS(summary, "(2, 512, 4, 4)");
    PX_REQUIRE_MENTIONS(summary, "GlobalAvgPool2D");
    PX_REQUIRE_MENTIONS(summary, "Parameters: 11183626 (trainable 11175818, not trainable 7808)");
    auto names = net.collect_params().items();
    REQUIRE(names[0].first == "0.weight");
    REQUIRE(names[4].first == "1.running_mean");
    REQUIRE(names[6].first == "3.0.conv1.weight");
}

TEST_CASE("initialize refuses a device listed twice, as seed 002 makes on a machine without GPUs", "[nn][errors]") {
    nn::Sequential net;
    net.add(nn::Dense(2, "", 3));
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { net.initialize({cpu(0), cpu(0)}); }),
                        "name cpu(0) twice");
    REQUIRE_FALSE(net[0].weight().initialized());
}

TEST_CASE("BatchNorm over two devices keeps each device's running statistics", "[nn][batch_norm]") {
    nn::BatchNorm bn;
    bn.initialize({cpu(0), cpu(1)});
    auto parts = nn::split_and_load(two_channels(), {cpu(0), cpu(1)});  // rows 0-1 and 2-3
    {
        auto r = autograd::record();
        bn(parts[0]);
        bn(parts[1]);
    }
    auto& mean = bn.collect_params()["running_mean"];
    // Channel 0: rows {1, 2} and {3, 4}; channel 1: {0, 0} and {2, 2}.
    PX_REQUIRE_CLOSE(values(mean.data(cpu(0))), (std::vector<double>{0.15, 0.0}), 1e-7);
    PX_REQUIRE_CLOSE(values(mean.data(cpu(1))), (std::vector<double>{0.35, 0.2}), 1e-7);
    // set_replica's refusals.
    PX_REQUIRE_MENTIONS(message_of<ShapeError>([&] { mean.set_replica(zeros({3})); }),
                        "running_mean: new values of shape (3,) for a parameter of shape (2,)");
    PX_REQUIRE_MENTIONS(message_of<DTypeError>([&] { mean.set_replica(zeros({2}, cpu(), DType::float64)); }), "float64");
}

TEST_CASE("the refusals of set_replica, LossScaler::set_state, BatchNorm and GlobalAvgPool2D", "[nn][errors]") {
    nn::BatchNorm bn;
    bn.initialize(cpu(0));
    auto& mean = bn.collect_params()["running_mean"];
    bn(zeros({2, 3}));  // infers the shape
    PX_REQUIRE_MENTIONS(message_of<DeviceMismatchError>([&] { mean.set_replica(zeros({3}, cpu(1))); }), "lives on cpu(0)");
    nn::LossScaler scaler(1024.0, 2.0, 0.5, 10);
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { scaler.set_state({0.0, 0, 0}); }), "is not a state");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { scaler.set_state({8.0, 10, 0}); }), "good below 10");
    scaler.set_state({8.0, 3, 2});
    REQUIRE(scaler.loss_scale() == 8.0);
    REQUIRE(scaler.skipped_steps() == 2);
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([] { nn::BatchNorm(0.9, 1e-5, -1); }), "in_channels must be >= 0");
    PX_REQUIRE_MENTIONS(message_of<ShapeError>([] { nn::GlobalAvgPool2D()(zeros({1, 2, 0, 3})); }), "need at least one value");
}
