// Training on GPUs, step for step against the CPU plugin: a small LeNet
// (the layer kinds plexus-train uses) trained for a few SGD steps with
// momentum on gpu(0), on gpu(0)+gpu(1) (the plugin's all-reduce) and on
// cpu(0)+gpu(0) (the host's), each batch split over the devices, ends with
// the parameters of the same training on cpu(0), up to float32 summation
// order. Skipped (exit 4) without a GPU; run on the CUDA emulator everywhere.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "../../nn/small_training.hpp"
#include "plexus/nn.hpp"

using namespace plexus;

TEST_CASE("training on gpu(0), on two GPUs and on cpu(0)+gpu(0) follows the CPU step for step", "[cuda][gpu][nn]") {
    seed(3);
    // 9 rows: split 5 + 4, so the devices see batches of different sizes.
    Tensor x = random_normal({9, 1, 8, 8}, 0, 1);
    Tensor y = random_uniform({9}, 0, 3).astype(DType::int32);
    nn::Sequential want;
    const std::vector<double> want_losses = pxtest::train_split(want, {cpu(0)}, x, y, 5);
    CHECK(want_losses.back() < want_losses.front());  // it learned something
    auto pw = want.collect_params();
    std::vector<std::vector<Device>> mixes{{gpu(0)}, {cpu(0), gpu(0)}};
    if (num_gpus() >= 2) mixes.push_back({gpu(0), gpu(1)});
    for (const auto& mix : mixes) {
        INFO("devices " << mix[0].str() << (mix.size() > 1 ? " + " + mix[1].str() : std::string()));
        nn::Sequential got;
        const std::vector<double> got_losses = pxtest::train_split(got, mix, x, y, 5);
        for (size_t s = 0; s < got_losses.size(); ++s) CHECK(std::abs(got_losses[s] - want_losses[s]) < 1e-4);
        auto pg = got.collect_params();
        double worst = 0;
        for (auto& [name, param] : pw) {
            INFO(name);
            nn::Parameter& other = pg[name];
            REQUIRE(other.list_data().size() == mix.size());
            for (size_t i = 0; i < mix.size(); ++i) {
                CHECK(other.data(mix[i]).device() == mix[i]);
                worst = std::max(worst, pxtest::max_abs_diff(other.data(mix[i]), param->data()));
            }
            // Replicas stay bit-identical: one summed gradient, one update.
            if (mix.size() == 2) CHECK(pxtest::max_abs_diff(other.data(mix[0]), other.data(mix[1])) == 0.0);
        }
        WARN("largest parameter difference from the CPU after 5 steps: " << worst);
        CHECK(worst < 1e-4);
    }
}
