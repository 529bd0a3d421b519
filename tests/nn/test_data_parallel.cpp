// Data parallelism in one process, as in seed 002: split_and_load, replicas
// on every device, one backward per device, and a Trainer step that sums the
// gradients and leaves every replica identical. Runs on cpu(0) and cpu(1)
// (PLEXUS_CPU_DEVICES=2).
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "plexus/nn.hpp"
#include "small_training.hpp"

using namespace plexus;

namespace {

std::vector<float> host(const Tensor& t) { return t.astype(DType::float32).to_vector<float>(); }

}  // namespace

TEST_CASE("split_and_load gives each device a part, sizes differing by at most one", "[nn][parallel]") {
    Tensor batch = arange(0, 30).reshape({10, 3});
    auto parts = nn::split_and_load(batch, {cpu(0), cpu(1), cpu(0)});
    REQUIRE(parts.size() == 3);
    CHECK(parts[0].shape() == Shape{4, 3});
    CHECK(parts[1].shape() == Shape{3, 3});
    CHECK(parts[2].shape() == Shape{3, 3});
    CHECK(parts[0].device() == cpu(0));
    CHECK(parts[1].device() == cpu(1));
    CHECK(parts[2].device() == cpu(0));
    CHECK(host(parts[1])[0] == 12.0f);  // rows 4..6
    CHECK(host(parts[2]).back() == 29.0f);
    // The labels of a batch split the same way.
    auto labels = nn::split_and_load(arange(0, 10, 1, cpu(), DType::int32), {cpu(0), cpu(1)});
    CHECK(labels[1].to_vector<int32_t>() == std::vector<int32_t>{5, 6, 7, 8, 9});
}

TEST_CASE("split_and_load as Gluon's: one device takes the whole batch, fewer rows than devices fewer parts",
          "[nn][parallel]") {
    auto whole = nn::split_and_load(zeros({0, 2}), {cpu(1)}, 0, true);
    REQUIRE(whole.size() == 1);
    CHECK(whole[0].shape() == Shape{0, 2});
    CHECK(whole[0].device() == cpu(1));
    auto fewer = nn::split_and_load(arange(0, 4).reshape({2, 2}), {cpu(1), cpu(0), cpu(1)});  // it had refused
    REQUIRE(fewer.size() == 2);
    CHECK(fewer[0].device() == cpu(1));
    CHECK(host(fewer[1]) == std::vector<float>{2, 3});
    CHECK(nn::split_and_load(zeros({0, 2}), {cpu(0), cpu(1)}, 0, true).size() == 2);  // 0 rows split evenly
}

TEST_CASE("split_and_load refuses what it cannot split", "[nn][parallel][errors]") {
    CHECK_THROWS_AS(nn::split_and_load(zeros({4, 2}), {}), InvalidArgumentError);
    CHECK_THROWS_AS(nn::split_and_load(full({}, 1.0), {cpu(0)}), ShapeError);
    CHECK_THROWS_WITH(nn::split_and_load(zeros({5, 2}), {cpu(0), cpu(1)}, 0, true),
                      Catch::Contains("split_and_load: a batch of 5 rows along axis 0 does not split evenly over 2 "
                                      "devices; use a batch size that is a multiple of 2 or even_split (false; False "
                                      "in Python)"));
    CHECK_THROWS_WITH(nn::split_and_load(zeros({4, 2}), {cpu(0), cpu(1)}, 2),
                      Catch::Contains("split_and_load: batch_axis 2 is not an axis of a tensor of shape (4, 2)"));
    CHECK_THROWS_WITH(nn::split_and_load(zeros({4, 2}), {cpu(0), cpu(1)}, -3), Catch::Contains("batch_axis -3"));
}

TEST_CASE("split_and_load splits along another axis as Gluon's batch_axis and gradients flow back",
          "[nn][parallel]") {
    const Tensor seq = arange(0, 12).reshape({2, 6});  // (features, time): split the time steps
    Tensor x = seq;
    x.attach_grad();
    std::vector<Tensor> parts;
    {
        auto rec = autograd::record();
        parts = nn::split_and_load(x, {cpu(0), cpu(1)}, -1, true);
        ((parts[0] * 2.0).sum() + (parts[1] * 3.0).sum().copyto(cpu(0))).backward();
    }
    REQUIRE(parts[0].shape() == Shape{2, 3});
    CHECK(host(parts[0]) == std::vector<float>{0, 1, 2, 6, 7, 8});
    CHECK(host(parts[1]) == std::vector<float>{3, 4, 5, 9, 10, 11});
    CHECK(parts[1].device() == cpu(1));
    CHECK(host(x.grad()) == std::vector<float>{2, 2, 2, 3, 3, 3, 2, 2, 2, 3, 3, 3});
}

TEST_CASE("training on two devices equals training on one, and the replicas stay identical", "[nn][parallel]") {
    seed(3);
    // 9 rows: parts of 5 and 4, so the devices see batches of different sizes.
    Tensor x = random_normal({9, 1, 8, 8}, 0, 1);
    Tensor y = (random_uniform({9}, 0, 3)).astype(DType::int32);
    nn::Sequential one, two, swapped;
    pxtest::train_split(one, {cpu(0)}, x, y, 4);
    pxtest::train_split(two, {cpu(0), cpu(1)}, x, y, 4);
    pxtest::train_split(swapped, {cpu(1), cpu(0)}, x, y, 4);  // the replicas made on cpu(1) first
    auto p1 = one.collect_params();
    auto p2 = two.collect_params();
    auto p3 = swapped.collect_params();
    REQUIRE(p1.size() == p2.size());
    // Training moved the parameters away from where they started.
    nn::Sequential fresh;
    seed(11);
    pxtest::build_small_lenet(fresh);
    fresh.initialize(cpu(0));
    CHECK(pxtest::max_abs_diff(fresh.collect_params()["6.weight"].data(), p1["6.weight"].data()) > 1e-3);
    for (auto& [name, param] : p1) {
        INFO(name);
        nn::Parameter& other = p2[name];
        REQUIRE(other.list_data().size() == 2);
        // Bit-identical replicas: the same summed gradient, the same update.
        CHECK(pxtest::max_abs_diff(other.data(cpu(0)), other.data(cpu(1))) == 0.0);
        CHECK(pxtest::max_abs_diff(p3[name].data(cpu(0)), p3[name].data(cpu(1))) == 0.0);
        // The same parameters as on one device, up to float32 summation order.
        CHECK(pxtest::max_abs_diff(param->data(), other.data(cpu(0))) < 2e-5);
        CHECK(pxtest::max_abs_diff(param->data(), p3[name].data(cpu(1))) < 2e-5);
        CHECK(other.grad(cpu(1)).device() == cpu(1));
    }
}

TEST_CASE("a gradient hook may replace the gradients but not their number or shapes", "[nn][parallel][errors]") {
    nn::Sequential net;
    net.add(nn::Dense(2, "", 3));
    seed(5);
    net.initialize({cpu(0), cpu(1)});
    nn::Trainer trainer(net.collect_params(), "sgd", {{"learning_rate", 1.0}});
    // One row per device; d(sum)/d(bias) is 1 per row, so the summed bias
    // gradient is 2, the hook doubles it to 4, and step(2) applies 4 / 2.
    auto run_step = [&] {
        auto xs = nn::split_and_load(ones({2, 3}), {cpu(0), cpu(1)});
        std::vector<Tensor> ls;
        {
            auto scope = autograd::record();
            for (auto& x : xs) ls.push_back(net(x).sum());
        }
        for (auto& l : ls) l.backward();
        trainer.step(2);
    };
    const float before = host(net[0].bias().data(cpu(1)))[0];
    trainer.set_gradient_hook([](std::vector<Tensor>& grads) {
        for (auto& g : grads) g = g * 2.0;
    });
    run_step();
    CHECK(host(net[0].bias().data(cpu(1)))[0] == Approx(before - 2.0));
    CHECK(pxtest::max_abs_diff(net[0].bias().data(cpu(0)), net[0].bias().data(cpu(1))) == 0.0);
    trainer.set_gradient_hook([](std::vector<Tensor>& grads) { grads.pop_back(); });
    CHECK_THROWS_WITH(run_step(), Catch::Contains("changed the number of gradients"));
    trainer.set_gradient_hook([](std::vector<Tensor>& grads) { grads[0] = zeros({7}); });
    CHECK_THROWS_WITH(run_step(), Catch::Contains("changed the shape of 0.weight's gradient"));
}
