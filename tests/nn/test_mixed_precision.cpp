// Mixed precision: nn::Autocast (layers in float16 or bfloat16, parameters
// and gradients in float32), the trainer's finite-gradient step, and dynamic
// loss scaling with a forced float16 overflow.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "plexus/nn.hpp"
#include "small_training.hpp"
#include "tests/support.hpp"

using namespace plexus;

namespace {

std::vector<double> host(const Tensor& t) { return t.astype(DType::float64).copyto(cpu()).to_vector<double>(); }

// Every parameter's values, in collect_params order.
std::vector<std::vector<double>> snapshot(nn::Block& net) {
    std::vector<std::vector<double>> out;
    for (auto& [name, p] : net.collect_params()) out.push_back(host(p->data()));
    return out;
}

struct Batch {
    Tensor x, y;
};
// Eight (1, 8, 8) images and labels that depend on them, so a network can learn them.
Batch small_batch() {
    seed(5);
    Tensor x = random_normal({8, 1, 8, 8}, 0, 1);
    Tensor y = (x.sum(3).sum(2).sum(1) > 0.0).astype(DType::int32) + (x.sum(3).sum(2).sum(1) > 3.0).astype(DType::int32);
    return {x, y};
}

// The loss of one forward pass (and its backward) of `net`, its layers in `compute`.
Tensor loss_and_backward(nn::Block& net, const Batch& b, DType compute, Tensor* out = nullptr, double scale = 1) {
    loss::SoftmaxCrossEntropyLoss loss_fn;
    Tensor l, y, scaled;
    {
        auto r = autograd::record();
        nn::Autocast precision(compute);
        y = net(b.x);
        l = loss_fn(y, b.y);
        scaled = l * scale;
    }
    scaled.backward();
    if (out) *out = y;
    return l;
}

}  // namespace

TEST_CASE("Autocast: the layers compute in float16 or bfloat16, the parameters and gradients stay float32",
          "[nn][mixed]") {
    const Batch b = small_batch();
    for (DType d : {DType::float16, DType::bfloat16}) {
        CAPTURE(name(d));
        nn::Sequential net;
        seed(11);
        pxtest::build_small_lenet(net);
        net.initialize(cpu());
        loss_and_backward(net, b, DType::float32);
        std::vector<std::vector<double>> want;
        for (auto& [n, p] : net.collect_params()) want.push_back(host(p->grad()));

        Tensor y;
        Tensor l = loss_and_backward(net, b, d, &y);
        CHECK(y.dtype() == d);
        CHECK(l.dtype() == DType::float32);  // the loss computes in float32
        CHECK(nn::Autocast::dtype() == DType::float32);  // the scope ended
        size_t k = 0;
        for (auto& [n, p] : net.collect_params()) {
            CAPTURE(n);
            REQUIRE(p->data().dtype() == DType::float32);
            REQUIRE(p->grad().dtype() == DType::float32);
            // Close to the float32 gradient: within a few of the format's
            // ulps of the largest element (the forward rounds every layer).
            auto got = host(p->grad());
            double largest = 0, worst = 0;
            for (size_t i = 0; i < got.size(); ++i) {
                largest = std::fmax(largest, std::fabs(want[k][i]));
                worst = std::fmax(worst, std::fabs(got[i] - want[k][i]));
            }
            CHECK(largest > 0);
            CHECK(worst <= 16 * pxtest::tolerance(d) * largest);
            ++k;
        }
    }
}

TEST_CASE("Autocast scopes nest, each restoring the one before, and float32 casts nothing", "[nn][mixed]") {
    Tensor x = ones({2, 3});
    CHECK(nn::autocast(x).is(x));
    {
        nn::Autocast outer(DType::bfloat16);
        CHECK(nn::autocast(x).dtype() == DType::bfloat16);
        CHECK(nn::autocast(arange(0, 3, 1, cpu(), DType::int32)).dtype() == DType::int32);  // integers stay
        {
            nn::Autocast inner(DType::float16);
            CHECK(nn::Autocast::dtype() == DType::float16);
            nn::Autocast none(DType::float32);
            CHECK(nn::autocast(x).is(x));
        }
        CHECK(nn::Autocast::dtype() == DType::bfloat16);
    }
    CHECK(nn::Autocast::dtype() == DType::float32);
}

TEST_CASE("Autocast refuses a dtype the layers cannot compute in", "[nn][mixed][errors]") {
    for (DType d : {DType::float64, DType::int32, DType::uint8}) {
        auto msg = pxtest::message_of<DTypeError>([&] { nn::Autocast a(d); });
        PX_REQUIRE_MENTIONS(msg, "Autocast");
        PX_REQUIRE_MENTIONS(msg, name(d));
    }
    CHECK(nn::Autocast::dtype() == DType::float32);  // a refused scope changed nothing
}

TEST_CASE("step_if_finite leaves every parameter when a gradient overflowed and else divides by the scale",
          "[nn][mixed]") {
    const Batch b = small_batch();
    auto make = [](nn::Sequential& net) {
        seed(11);
        pxtest::build_small_lenet(net);
        net.initialize(cpu());
    };
    nn::Sequential scaled, plain;
    make(scaled);
    make(plain);
    nn::Trainer t_scaled(scaled.collect_params(), "sgd", {{"learning_rate", 0.1}, {"momentum", 0.9}});
    nn::Trainer t_plain(plain.collect_params(), "sgd", {{"learning_rate", 0.1}, {"momentum", 0.9}});

    // An infinity in the loss's gradient reaches every parameter's.
    Tensor y;
    loss_and_backward(scaled, b, DType::float32, &y, INFINITY);
    const auto before = snapshot(scaled);
    CHECK_FALSE(t_scaled.step_if_finite(8, 1024));
    CHECK(snapshot(scaled) == before);

    // A power of two scales every gradient exactly: the same update as unscaled.
    loss_and_backward(scaled, b, DType::float32, nullptr, 1024);
    loss_and_backward(plain, b, DType::float32);
    CHECK(t_scaled.step_if_finite(8, 1024));
    t_plain.step(8);
    CHECK(snapshot(scaled) == snapshot(plain));
    CHECK(snapshot(scaled) != before);

    CHECK_THROWS_WITH(t_plain.step_if_finite(8, 0), Catch::Contains("loss_scale must be finite and > 0"));
    CHECK_THROWS_WITH(t_plain.step_if_finite(8, INFINITY), Catch::Contains("loss_scale must be finite and > 0"));
    CHECK_THROWS_WITH(t_plain.step_if_finite(0, 1), Catch::Contains("batch_size must be >= 1, got 0"));
}

TEST_CASE("LossScaler: a float16 overflow skips the step and backs off, steps in a row grow the scale",
          "[nn][mixed]") {
    const Batch b = small_batch();
    nn::Sequential net;
    seed(11);
    pxtest::build_small_lenet(net);
    net.initialize(cpu());
    nn::Trainer trainer(net.collect_params(), "sgd", {{"learning_rate", 0.1}});
    // 2^40 times the loss: the float16 gradients overflow (float16's largest is 65504).
    nn::LossScaler scaler(0x1p40, 2, 0x1p-30, 2);
    auto scaled_step = [&] {
        loss::SoftmaxCrossEntropyLoss loss_fn;
        Tensor l;
        {
            auto r = autograd::record();
            nn::Autocast half(DType::float16);
            l = loss_fn(net(b.x), b.y);
        }
        scaler.scale(l).backward();
        return scaler.step(trainer, 8);
    };
    const auto before = snapshot(net);
    CHECK_FALSE(scaled_step());
    CHECK(snapshot(net) == before);
    CHECK(scaler.skipped_steps() == 1);
    CHECK(scaler.loss_scale() == 0x1p10);
    CHECK(scaled_step());
    CHECK(snapshot(net) != before);
    CHECK(scaler.loss_scale() == 0x1p10);
    CHECK(scaled_step());  // the second in a row: the scale grows
    CHECK(scaler.loss_scale() == 0x1p11);
    CHECK(scaler.skipped_steps() == 1);
    CHECK(nn::LossScaler().loss_scale() == 65536);
}

TEST_CASE("LossScaler refuses settings that cannot scale", "[nn][mixed][errors]") {
    CHECK_THROWS_WITH(nn::LossScaler(0), Catch::Contains("init_scale must be finite and > 0"));
    CHECK_THROWS_WITH(nn::LossScaler(NAN), Catch::Contains("init_scale must be finite and > 0"));
    CHECK_THROWS_WITH(nn::LossScaler(1, 1), Catch::Contains("growth_factor must be finite and > 1"));
    CHECK_THROWS_WITH(nn::LossScaler(1, 2, 1), Catch::Contains("backoff_factor must be in (0, 1)"));
    CHECK_THROWS_WITH(nn::LossScaler(1, 2, 0), Catch::Contains("backoff_factor must be in (0, 1)"));
    CHECK_THROWS_WITH(nn::LossScaler(1, 2, 0.5, 0), Catch::Contains("growth_interval must be >= 1, got 0"));
}

TEST_CASE("training in bfloat16 and float16 lowers the loss as float32 does, on one device and two", "[nn][mixed]") {
    const Batch b = small_batch();
    nn::Sequential reference;
    const auto want = pxtest::train_split(reference, {cpu(0)}, b.x, b.y, 8);
    for (double w : want) UNSCOPED_INFO(w);
    REQUIRE(want.back() < 0.8 * want.front());
    for (DType d : {DType::bfloat16, DType::float16}) {
        CAPTURE(name(d));
        nn::Sequential one, two;
        const auto got = pxtest::train_split(one, {cpu(0)}, b.x, b.y, 8, d);
        const auto split = pxtest::train_split(two, {cpu(0), cpu(1)}, b.x, b.y, 8, d);
        for (size_t i = 0; i < want.size(); ++i) {
            CAPTURE(i);
            CHECK(std::fabs(got[i] - want[i]) <= 0.05 * want[0]);
            CHECK(std::fabs(split[i] - want[i]) <= 0.05 * want[0]);
        }
    }
}
