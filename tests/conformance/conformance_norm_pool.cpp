// Conformance of the layers the frontend builds from table ops: layer
// normalisation (on the batch-normalisation ops) and adaptive average
// pooling (avg_pool2d, or products with averaging matrices), against float64
// host references and finite differences, on the device under test.
#include <catch2/catch.hpp>

#include <cmath>

#include "conformance.hpp"
#include "nn_reference.hpp"

using namespace plexus;
using pxtest::check_gradients;
using pxtest::random_values;
using pxtest::values;

namespace {

std::vector<double> layer_norm_reference(const std::vector<double>& x, const std::vector<double>& g,
                                         const std::vector<double>& b, size_t d, double eps) {
    std::vector<double> y(x.size());
    for (size_t r = 0; r < x.size() / d; ++r) {
        double mean = 0, var = 0;
        for (size_t k = 0; k < d; ++k) mean += x[r * d + k] / double(d);
        for (size_t k = 0; k < d; ++k) var += (x[r * d + k] - mean) * (x[r * d + k] - mean) / double(d);
        for (size_t k = 0; k < d; ++k) y[r * d + k] = (x[r * d + k] - mean) / std::sqrt(var + eps) * g[k] + b[k];
    }
    return y;
}

std::vector<double> adaptive_reference(const std::vector<double>& x, int64_t planes, int64_t h, int64_t w, int64_t oh,
                                       int64_t ow) {
    std::vector<double> y;
    for (int64_t p = 0; p < planes; ++p)
        for (int64_t i = 0; i < oh; ++i)
            for (int64_t j = 0; j < ow; ++j) {
                const int64_t r0 = i * h / oh, r1 = ((i + 1) * h + oh - 1) / oh;
                const int64_t c0 = j * w / ow, c1 = ((j + 1) * w + ow - 1) / ow;
                double s = 0;
                for (int64_t r = r0; r < r1; ++r)
                    for (int64_t c = c0; c < c1; ++c) s += x[size_t((p * h + r) * w + c)];
                y.push_back(s / double((r1 - r0) * (c1 - c0)));
            }
    return y;
}

Tensor weigh(const Tensor& y, uint64_t seed) {
    return (y * array(random_values(size_t(y.size()), seed), y.shape(), y.device())).sum();
}

}  // namespace

TEST_CASE("layer_norm normalises each row of the last axis", "[conformance][nn][layer_norm][R15]") {
    PX_NEEDS({PX_OP_BATCH_NORM_STATS, DType::float32}, {PX_OP_BATCH_NORM, DType::float32},
             {PX_OP_BATCH_NORM_STATS, DType::float64}, {PX_OP_BATCH_NORM, DType::float64}, {PX_OP_FILL, DType::float32},
             {PX_OP_FILL, DType::float64}, {PX_OP_MUL, DType::float32}, {PX_OP_MUL, DType::float64},
             {PX_OP_CAST, DType::float64}, {PX_OP_CAST, DType::float32});
    Device dev = pxtest::device_under_test();
    const Shape shape{3, 4, 50};
    auto x = random_values(600, 100, -3, 3);
    for (size_t i = 0; i < x.size(); ++i) x[i] += double(i / 50) * 7;  // each row its own offset
    const auto g = random_values(50, 101, 0.5, 2), b = random_values(50, 102, -1, 1);
    const auto want = layer_norm_reference(x, g, b, 50, 1e-5);
    for (DType d : {DType::float32, DType::float64}) {
        Tensor y = layer_norm(array(x, shape, dev).astype(d), array(g, {50}, dev).astype(d),
                              array(b, {50}, dev).astype(d), 1e-5);
        REQUIRE(y.shape() == shape);
        PX_REQUIRE_CLOSE(values(y), want, d == DType::float64 ? 1e-12 : 2e-5);
    }
}

TEST_CASE("layer_norm of a 16-bit x keeps its rows' statistics in float32", "[conformance][nn][layer_norm][R15]") {
    PX_NEEDS({PX_OP_BATCH_NORM_STATS, DType::float32}, {PX_OP_BATCH_NORM, DType::float32}, {PX_OP_CAST, DType::bfloat16},
             {PX_OP_CAST, DType::float32}, {PX_OP_FILL, DType::float32}, {PX_OP_MUL, DType::float32});
    Device dev = pxtest::device_under_test();
    // A row near 100 with a spread of 1: its mean rounded to bfloat16 (steps of 0.5) would shift every value.
    std::vector<double> x(64);
    for (size_t i = 0; i < x.size(); ++i) x[i] = 100 + double(int(i % 9) - 4) * 0.25 + (i % 2 ? 0.125 : 0);
    const auto xb = pxtest::rounded_to(x, DType::bfloat16);
    const auto want = layer_norm_reference(xb, std::vector<double>(64, 1.0), std::vector<double>(64, 0.0), 64, 1e-5);
    Tensor y = layer_norm(array(xb, {1, 64}, dev).astype(DType::bfloat16), ones({64}, dev), zeros({64}, dev));
    REQUIRE(y.dtype() == DType::bfloat16);
    PX_REQUIRE_CLOSE(values(y), want, pxtest::tolerance(DType::bfloat16) * 2);
}

TEST_CASE("layer_norm's gradients match finite differences", "[conformance][nn][layer_norm][grad][R15]") {
    PX_NEEDS({PX_OP_BATCH_NORM_STATS, DType::float64}, {PX_OP_BATCH_NORM, DType::float64},
             {PX_OP_BATCH_NORM_BACKWARD_REDUCE, DType::float64}, {PX_OP_BATCH_NORM_BACKWARD, DType::float64});
    Device dev = pxtest::device_under_test();
    check_gradients(dev, {{{2, 3, 5}, random_values(30, 103, -2, 2)}, {{5}, random_values(5, 104, 0.5, 2)},
                          {{5}, random_values(5, 105, -1, 1)}},
                    [](const std::vector<Tensor>& t) { return weigh(layer_norm(t[0], t[1], t[2], 1e-3), 106); });
}

TEST_CASE("layer_norm refuses what it cannot normalise", "[conformance][nn][layer_norm][errors][R5]") {
    PX_NEEDS({PX_OP_FILL, DType::float32}, {PX_OP_BATCH_NORM_STATS, DType::float32}, {PX_OP_BATCH_NORM, DType::float32});
    Device dev = pxtest::device_under_test();
    Tensor x = ones({2, 3}, dev), g = ones({3}, dev);
    PX_REQUIRE_MENTIONS(pxtest::message_of<ShapeError>([&] { layer_norm(x, ones({2}, dev), g); }),
                        "must have the shape of x's last axis, (3)");
    PX_REQUIRE_MENTIONS(pxtest::message_of<ShapeError>([&] { layer_norm(ones({}, dev), g, g); }), "a scalar");
    PX_REQUIRE_MENTIONS(pxtest::message_of<ShapeError>([&] { layer_norm(ones({2, 0}, dev), ones({0}, dev), ones({0}, dev)); }),
                        "has no values along its last axis");
    PX_REQUIRE_MENTIONS(pxtest::message_of<InvalidArgumentError>([&] { layer_norm(x, g, g, 0); }), "eps 0");
    REQUIRE(layer_norm(ones({0, 3}, dev), g, g).shape() == Shape{0, 3});
}

TEST_CASE("adaptive_avg_pool2d averages PyTorch's windows", "[conformance][nn][adaptive_pool][R15]") {
    PX_NEEDS({PX_OP_AVG_POOL2D, DType::float32}, {PX_OP_MATMUL, DType::float32}, {PX_OP_CAST, DType::float64});
    Device dev = pxtest::device_under_test();
    const auto x = random_values(2 * 3 * 7 * 10, 107, -2, 2);
    // Tiling windows (avg_pool2d), overlapping ones (7 -> 3, 10 -> 4), and more cells than rows (7 -> 9).
    for (auto [oh, ow] : {std::pair<int, int>{7, 5}, {1, 1}, {3, 4}, {9, 10}, {2, 3}}) {
        Tensor y = adaptive_avg_pool2d(array(x, {2, 3, 7, 10}, dev), Pair2(oh, ow));
        REQUIRE(y.shape() == Shape{2, 3, oh, ow});
        PX_REQUIRE_CLOSE(values(y), adaptive_reference(x, 6, 7, 10, oh, ow), 1e-6);
    }
}

TEST_CASE("adaptive_avg_pool2d's gradient matches finite differences", "[conformance][nn][adaptive_pool][grad][R15]") {
    PX_NEEDS({PX_OP_AVG_POOL2D, DType::float64}, {PX_OP_AVG_POOL2D_BACKWARD, DType::float64},
             {PX_OP_MATMUL, DType::float64}, {PX_OP_GEMM, DType::float64});
    Device dev = pxtest::device_under_test();
    for (Pair2 out : {Pair2(2, 3), Pair2(3, 2)}) {
        check_gradients(dev, {{{1, 2, 4, 6}, random_values(48, 108, -2, 2)}}, [&](const std::vector<Tensor>& t) {
            return weigh(adaptive_avg_pool2d(t[0], out), 109);
        });
    }
}

TEST_CASE("adaptive_avg_pool2d refuses bad sizes", "[conformance][nn][adaptive_pool][errors][R5]") {
    PX_NEEDS({PX_OP_FILL, DType::float32}, {PX_OP_FILL, DType::int32});
    Device dev = pxtest::device_under_test();
    PX_REQUIRE_MENTIONS(pxtest::message_of<ShapeError>([&] { adaptive_avg_pool2d(ones({2, 3, 4}, dev), 1); }),
                        "x must be (N, C, H, W), got (2, 3, 4)");
    PX_REQUIRE_MENTIONS(pxtest::message_of<InvalidArgumentError>([&] { adaptive_avg_pool2d(ones({1, 1, 4, 4}, dev), Pair2(0, 2)); }),
                        "the output size (0, 2) must be positive");
    PX_REQUIRE_MENTIONS(pxtest::message_of<ShapeError>([&] { adaptive_avg_pool2d(ones({1, 1, 0, 4}, dev), 1); }),
                        "has empty planes");
    PX_REQUIRE_MENTIONS(pxtest::message_of<DTypeError>([&] { adaptive_avg_pool2d(ones({1, 1, 3, 3}, dev, DType::int32), 2); }),
                        "adaptive_avg_pool2d: x is int32; averages need a float dtype");
}
