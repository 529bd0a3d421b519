// LayerNorm, Embedding, LeakyReLU, AdaptiveAvgPool2D and the gelu/silu
// activations as layers: values by hand, parameters, printing, refusals,
// and a small model of them trained until its loss falls.
#include <catch2/catch.hpp>

#include <cmath>

#include "../support.hpp"
#include "plexus/nn.hpp"

using namespace plexus;
using pxtest::message_of;
using pxtest::values;

TEST_CASE("LayerNorm normalises each row and learns gamma and beta", "[nn][layer_norm]") {
    nn::LayerNorm ln;
    ln.initialize(cpu());
    // Rows (1, 2, 3) and (4, 4, 4): mean 2, biased variance 2/3; the second has no spread.
    Tensor x = array({1, 2, 3, 4, 4, 4}, {2, 3});
    const double s = 1 / std::sqrt(2.0 / 3 + 1e-5);
    PX_REQUIRE_CLOSE(values(ln(x)), (std::vector<double>{-s, 0, s, 0, 0, 0}), 1e-6);
    auto params = ln.collect_params();
    REQUIRE(params.size() == 2);
    REQUIRE(params["gamma"].shape() == Shape{3});
    CHECK(ln.describe() == "LayerNorm(3, eps 0.000010)");
    // 16-bit inputs are normalised in float32 and come back in their dtype.
    Tensor h = ln(x.astype(DType::bfloat16));
    CHECK(h.dtype() == DType::bfloat16);
    PX_REQUIRE_CLOSE(values(h), (std::vector<double>{-s, 0, s, 0, 0, 0}), 1e-2);
    // Without center and scale it has no parameters.
    nn::LayerNorm bare(1e-5, false, false);
    bare.initialize(cpu());
    CHECK(bare.collect_params().size() == 0);
    PX_REQUIRE_CLOSE(values(bare(x)), (std::vector<double>{-s, 0, s, 0, 0, 0}), 1e-6);
    CHECK_THAT(message_of<InvalidArgumentError>([] { (void)nn::LayerNorm(0); }),
               Catch::Contains("LayerNorm: epsilon must be finite and > 0"));
    CHECK_THAT(message_of<InvalidArgumentError>([] { (void)nn::LayerNorm(1e-5, true, true, -1); }),
               Catch::Contains("in_channels must be >= 0"));
    CHECK_THAT(message_of<ShapeError>([&] { ln(array({1, 2}, {2})); }), Catch::Contains("shape"));
    CHECK_THAT(message_of<ShapeError>([&] { ln(full({}, 1.0)); }), Catch::Contains("a scalar has no axis"));
}

TEST_CASE("Embedding looks rows up and its gradient sums repeats", "[nn][embedding]") {
    nn::Embedding emb(4, 2);
    emb.initialize(cpu());
    emb.weight().set_data(array({0, 1, 10, 11, 20, 21, 30, 31}, {4, 2}));
    Tensor idx = array(std::vector<int32_t>{3, 0, 3}, {});
    Tensor y;
    {
        auto r = autograd::record();
        y = emb(idx);
    }
    REQUIRE(y.shape() == Shape{3, 2});
    CHECK(values(y) == std::vector<double>{30, 31, 0, 1, 30, 31});
    y.backward(array({1, 2, 3, 4, 5, 6}, {3, 2}));
    CHECK(values(emb.weight().grad()) == std::vector<double>{3, 4, 0, 0, 0, 0, 6, 8});
    // Whole-number float indices are rows (MXNet's float32 token ids); NaN and 1.5 are refused, not read
    // as row 0 and 1 by a cast.
    CHECK(values(emb(array({3.0f, 0.0f}, {2}))) == std::vector<double>{30, 31, 0, 1});
    CHECK_THAT(message_of<InvalidArgumentError>([&] { emb(array({2.0f, NAN}, {2})); }),
               Catch::Contains("Embedding: an index is not a row number (a whole number below 2^63): found nan"));
    CHECK_THAT(message_of<InvalidArgumentError>([&] { emb(array({1.5f}, {1})); }),
               Catch::Contains("found 1.5"));
    CHECK(emb.describe() == "Embedding(4 -> 2)");
    {  // A lookup is no matrix product: it stays float32 under Autocast, as in PyTorch's autocast.
        nn::Autocast half(DType::bfloat16);
        CHECK(emb(idx).dtype() == DType::float32);
    }
    CHECK_THAT(message_of<InvalidArgumentError>([] { (void)nn::Embedding(0, 3); }),
               Catch::Contains("input_dim and output_dim must be >= 1, got 0 and 3"));
    CHECK_THAT(message_of<Error>([&] { emb(array(std::vector<int64_t>{4}, {})).to_vector<float>(); }),
               Catch::Contains("index 4 at position 0 is outside [0, 4)"));
}

TEST_CASE("LeakyReLU, AdaptiveAvgPool2D and the gelu and silu activations as layers", "[nn][activations]") {
    nn::LeakyReLU leaky(0.25);
    CHECK(values(leaky(array({-4, 0, 2}, {3}))) == std::vector<double>{-1, 0, 2});
    CHECK(leaky.describe() == "LeakyReLU(0.25)");
    CHECK_THAT(message_of<InvalidArgumentError>([] { (void)nn::LeakyReLU(INFINITY); }), Catch::Contains("alpha must be finite"));
    // gelu(1) = Phi(1) = 0.8413447460685429, silu(1) = sigmoid(1) = 0.7310585786300049.
    PX_REQUIRE_CLOSE(values(nn::Activation("gelu")(array({1}, {1}))), std::vector<double>{0.8413447460685429}, 1e-7);
    PX_REQUIRE_CLOSE(values(nn::Activation("silu")(array({1}, {1}))), std::vector<double>{0.7310585786300049}, 1e-7);
    nn::Dense dense(2, "gelu", 3);
    dense.initialize(cpu());
    CHECK(dense(ones({4, 3})).shape() == Shape{4, 2});
    CHECK_THAT(message_of<InvalidArgumentError>([] { (void)nn::Activation("swish"); }), Catch::Contains("\"gelu\", \"silu\""));
    // A 3x3 plane to 2x2: PyTorch's overlapping windows rows/cols [0, 2) and [1, 3).
    nn::AdaptiveAvgPool2D pool(2);
    Tensor x = arange(1, 10).reshape({1, 1, 3, 3});
    CHECK(values(pool(x)) == std::vector<double>{3, 4, 6, 7});
    CHECK(pool.describe() == "AdaptiveAvgPool2D(2x2)");
    // Every setting of a pooling layer (padding and the stride's width had been left out).
    CHECK(nn::MaxPool2D(3, 1, 1).describe() == "MaxPool2D(3x3, stride 1x1, padding 1x1)");
    CHECK(nn::AvgPool2D({2, 3}, {1, 2}).describe() == "AvgPool2D(2x3, stride 1x2)");
    CHECK_THAT(message_of<InvalidArgumentError>([] { (void)nn::AdaptiveAvgPool2D(Pair2(1, 0)); }),
               Catch::Contains("the output width must be >= 1, got 0"));
}

TEST_CASE("a model of Embedding, LayerNorm and GELU trains with Adam", "[nn][embedding][layer_norm]") {
    // Learn each token's class: 8 tokens, the class is token % 3.
    nn::Sequential net;
    net.add(nn::Embedding(8, 6), nn::LayerNorm(), nn::Activation("gelu"), nn::Dense(3));
    net.initialize(cpu());
    nn::Trainer trainer(net.collect_params(), "adam", {{"learning_rate", 0.05}});
    Tensor tokens = array(std::vector<int32_t>{0, 1, 2, 3, 4, 5, 6, 7}, {});
    Tensor labels = array(std::vector<int32_t>{0, 1, 2, 0, 1, 2, 0, 1}, {});
    auto loss_now = [&] {
        Tensor l;
        {
            auto r = autograd::record();
            l = softmax_cross_entropy(net(tokens), labels).mean();
        }
        l.backward();
        return l.item<float>();
    };
    const float first = loss_now();
    float last = first;
    for (int step = 0; step < 60; ++step) {
        last = loss_now();
        trainer.step(1);
    }
    CHECK(last < first * 0.2f);
}
