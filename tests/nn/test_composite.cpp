// The frontend's composite ops (cpp/composite.hpp): values against NumPy's
// rules worked by hand, gradients against their formulas, and the refusals.
#include <catch2/catch.hpp>

#include <cmath>

#include "../conformance/nn_reference.hpp"
#include "../support.hpp"
#include "plexus/plexus.hpp"

using namespace plexus;
using pxtest::message_of;
using pxtest::same_values;
using pxtest::values;

TEST_CASE("maximum, minimum and clip follow NumPy: broadcasting, NaN propagates, every dtype", "[nn][composite]") {
    Tensor a = array({1.f, 5.f, NAN, -2.f}), b = array({3.f, 2.f, 0.f, NAN});
    CHECK(same_values(values(maximum(a, b)), {3, 5, NAN, NAN}));
    CHECK(same_values(values(minimum(a, b)), {1, 2, NAN, NAN}));
    CHECK(same_values(values(clip(a, 0, 2)), {1, 2, NAN, 0}));
    // A row broadcast against a column.
    Tensor row = array({0.f, 10.f}, {1, 2}), col = array({5.f, -5.f, 20.f}, {3, 1});
    CHECK(values(maximum(row, col)) == std::vector<double>{5, 10, 0, 10, 20, 20});
    Tensor i = array(std::vector<int64_t>{7, -3, 2});
    CHECK(values(minimum(i, array(std::vector<int64_t>{1, 1, 1}))) == std::vector<double>{1, -3, 1});
    CHECK(values(clip(i, -1, 5)) == std::vector<double>{5, -1, 2});
    CHECK(clip(i, -1, 5).dtype() == DType::int64);
    // Bounds an integer dtype cannot hold are not truncated to fit: np.clip gives [0.5 1. 2. 2.5], float64.
    const Tensor small = array(std::vector<int32_t>{0, 1, 2, 3});
    CHECK(values(clip(small, 0.5, 2.5)) == std::vector<double>{0.5, 1, 2, 2.5});
    CHECK(clip(small, 0.5, 2.5).dtype() == DType::float64);
    CHECK(clip(array(std::vector<uint8_t>{0, 200}), -1, 100).dtype() == DType::int64);
    CHECK(values(clip(array(std::vector<uint8_t>{0, 200}), -1, 100)) == std::vector<double>{0, 100});
    CHECK(clip(small, 0, 2).dtype() == DType::int32);
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { clip(a, 2, 1); }), "clip: the bounds must have lo <= hi");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { clip(a, NAN, 1); }), "clip: the bounds must have lo <= hi");
}

TEST_CASE("maximum's gradient goes to the operand chosen, to the first on ties", "[nn][composite]") {
    Tensor x = array({1.f, 5.f, 3.f}), y = array({2.f, 2.f, 3.f});
    x.attach_grad();
    y.attach_grad();
    Tensor out;
    {
        auto scope = autograd::record();
        out = (maximum(x, y) * array({1.f, 10.f, 100.f})).sum();
    }
    out.backward();
    CHECK(values(x.grad()) == std::vector<double>{0, 10, 100});
    CHECK(values(y.grad()) == std::vector<double>{1, 0, 0});
}

TEST_CASE("argmin is the first minimum in every dtype: NaN first and the extremes of each integer type", "[nn][composite]") {
    Tensor f = array({3.f, 1.f, -0.f, 1.f, 0.f, -7.f, -7.f});
    CHECK(argmin(f).item<int64_t>() == 5);  // ties keep the first
    CHECK(argmin(array({3.0, NAN, -1.0, NAN})).item<int64_t>() == 1);  // the first NaN wins, as np.argmin's
    CHECK(argmin(array({0.f, -0.f})).item<int64_t>() == 0);  // -0.0 == 0.0: a tie
    CHECK(argmin(array(std::vector<int32_t>{5, -2147483647 - 1, 2147483647, -2147483647 - 1})).item<int64_t>() == 1);
    CHECK(argmin(array(std::vector<int32_t>{2147483647, 0})).item<int64_t>() == 1);
    CHECK(argmin(array(std::vector<int64_t>{0, INT64_MIN, INT64_MAX})).item<int64_t>() == 1);
    CHECK(argmin(array(std::vector<uint8_t>{255, 7, 0, 0})).item<int64_t>() == 2);
    CHECK(argmin(array(std::vector<uint8_t>{255, 255})).item<int64_t>() == 0);
    // Along an axis, with and without keepdims: column and row minima of
    // [[4, 1, 9], [2, 8, 9]].
    Tensor m = array({4.f, 1.f, 9.f, 2.f, 8.f, 9.f}, {2, 3});
    CHECK(values(argmin(m, 0)) == std::vector<double>{1, 0, 0});
    CHECK(values(argmin(m, 1)) == std::vector<double>{1, 0});
    CHECK(argmin(m, 1, true).shape() == Shape{2, 1});
    CHECK(argmin(m, 1).dtype() == DType::int64);
    CHECK(values(argmin(m, -1)) == std::vector<double>{1, 0});
    CHECK(message_of<InvalidArgumentError>([&] { argmin(m, 2); }) == "argmin: axis 2 is out of range for a tensor of rank 2");
    CHECK(message_of<InvalidArgumentError>([&] { argmin(m, -3); }) == "argmin: axis -3 is out of range for a tensor of rank 2");
}

TEST_CASE("norm is the square root of the sum of squares, with gradient x / norm", "[nn][composite]") {
    Tensor x = array(std::vector<double>{3, -4, 12}, {3, 1});
    x.attach_grad();
    Tensor n;
    {
        auto scope = autograd::record();
        n = norm(x);
    }
    CHECK(n.shape() == Shape{});
    CHECK(n.item<double>() == 13);
    n.backward();
    CHECK(values(x.grad()) == std::vector<double>{3.0 / 13, -4.0 / 13, 12.0 / 13});
}

TEST_CASE("softmax: rows sum to 1, large logits stay finite, gradient s * (w - sum(w * s))", "[nn][composite]") {
    const std::vector<double> logits{1, 2, 3, 1000, 1001, 1002};
    Tensor x = array(logits, {2, 3});
    x.attach_grad();
    Tensor s;
    const std::vector<double> w{1, -2, 0.5, 3, 0, 1};
    {
        auto scope = autograd::record();
        s = softmax(x);
        (s * array(w, {2, 3})).sum().backward();
    }
    const auto got = values(s), grad = values(x.grad());
    for (size_t r = 0; r < 2; ++r) {
        double z = 0, ws = 0;
        for (size_t c = 0; c < 3; ++c) z += std::exp(logits[3 * r + c] - logits[3 * r + 2]);
        for (size_t c = 0; c < 3; ++c) {
            const double p = std::exp(logits[3 * r + c] - logits[3 * r + 2]) / z;
            CHECK(got[3 * r + c] == Approx(p).epsilon(1e-12));
            ws += w[3 * r + c] * p;
        }
        for (size_t c = 0; c < 3; ++c) CHECK(grad[3 * r + c] == Approx(got[3 * r + c] * (w[3 * r + c] - ws)).epsilon(1e-9));
    }
}

TEST_CASE("expand_dims and squeeze are views that add or drop an axis of length 1", "[nn][composite]") {
    Tensor t = arange(6).reshape({2, 3});
    CHECK(expand_dims(t, 0).shape() == Shape{1, 2, 3});
    CHECK(expand_dims(t, 2).shape() == Shape{2, 3, 1});
    CHECK(expand_dims(t, -1).shape() == Shape{2, 3, 1});
    CHECK(expand_dims(t, -3).shape() == Shape{1, 2, 3});
    CHECK(squeeze(expand_dims(t, 1), 1).shape() == Shape{2, 3});
    CHECK(squeeze(expand_dims(t, 1), -2).shape() == Shape{2, 3});
    CHECK(values(squeeze(expand_dims(t, 1), 1)) == values(t));
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { expand_dims(t, 3); }),
                        "expand_dims: axis 3 is out of range for a result of rank 3");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { expand_dims(t, -4); }),
                        "expand_dims: axis -4 is out of range for a result of rank 3");
    PX_REQUIRE_MENTIONS(message_of<ShapeError>([&] { squeeze(t, 0); }), "squeeze: axis 0 has length 2, not 1");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { squeeze(t, 2); }),
                        "squeeze: axis 2 is out of range for a tensor of rank 2");
}

TEST_CASE("stack joins tensors of one shape along a new axis", "[nn][composite]") {
    Tensor a = array({1.f, 2.f}), b = array({3.f, 4.f}), c = array({5.f, 6.f});
    CHECK(stack({a, b, c}).shape() == Shape{3, 2});
    CHECK(values(stack({a, b, c})) == std::vector<double>{1, 2, 3, 4, 5, 6});
    CHECK(stack({a, b, c}, 1).shape() == Shape{2, 3});
    CHECK(values(stack({a, b, c}, 1)) == std::vector<double>{1, 3, 5, 2, 4, 6});
    CHECK(values(stack({a, b, c}, -1)) == std::vector<double>{1, 3, 5, 2, 4, 6});
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([] { stack({}); }), "stack: no tensors given");
    PX_REQUIRE_MENTIONS(message_of<ShapeError>([&] { stack({a, array({1.f, 2.f, 3.f})}); }),
                        "stack: the tensors must have one shape");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { stack({a, b}, 2); }),
                        "stack: axis 2 is out of range for a result of rank 2");  // it had named expand_dims
}

TEST_CASE("full_like, zeros_like and ones_like keep the shape, dtype and device", "[nn][composite]") {
    Tensor i = arange(0, 6, 1, cpu(1), DType::int32).reshape({3, 2});
    Tensor z = zeros_like(i), o = ones_like(i), f = full_like(i, 7);
    for (const Tensor* t : {&z, &o, &f}) {
        CHECK(t->shape() == Shape{3, 2});
        CHECK(t->dtype() == DType::int32);
        CHECK(t->device() == cpu(1));
    }
    CHECK(values(z) == std::vector<double>(6, 0));
    CHECK(values(o) == std::vector<double>(6, 1));
    CHECK(values(f) == std::vector<double>(6, 7));
}

TEST_CASE("pow's gradient in the exponent is 0 where the base is 0, as PyTorch's", "[nn][composite]") {
    // d(x^e)/de = x^e log x: 0 * -inf at x = 0, which PyTorch (and this) take as 0 for e >= 0.
    Tensor x = array({0.0, 2.0}), e = array({2.0, 3.0});
    x.attach_grad();
    e.attach_grad();
    Tensor y;
    {
        auto r = autograd::record();
        y = x.pow(e).sum();
    }
    y.backward();
    CHECK(values(e.grad())[0] == 0.0);
    CHECK(values(e.grad())[1] == Approx(8 * std::log(2.0)));
    CHECK(values(x.grad()) == std::vector<double>{0, 12});
    // A scalar base of 0 (0 ** e): the same.
    Tensor f = array({1.0, 2.0});
    f.attach_grad();
    {
        auto r = autograd::record();
        y = pow(0.0, f).sum();
    }
    y.backward();
    CHECK(values(f.grad()) == std::vector<double>{0, 0});
}

TEST_CASE("equal and not_equal take a scalar as the ordered comparisons do", "[nn][composite]") {
    const Tensor x = array(std::vector<int32_t>{1, 2, 2, 3}, {4});
    REQUIRE(values(equal(x, 2.0)) == std::vector<double>{0, 1, 1, 0});
    REQUIRE(values(not_equal(x, 2.0)) == std::vector<double>{1, 0, 0, 1});
    REQUIRE(equal(x, 2.0).dtype() == DType::uint8);
    REQUIRE(values(equal(array({0.5f, NAN}), NAN)) == std::vector<double>{0, 0});  // NaN equals nothing
}

TEST_CASE("copyto and as_in_context pass gradients back and maximum takes a scalar", "[nn][composite]") {
    Tensor x = array({1.0f, -2.0f});
    x.attach_grad();
    Tensor l;
    {
        auto r = autograd::record();
        // as_in_context on x's device is x itself, with its record; copies count once each.
        l = (x.as_in_context(cpu(0)) * 2.0 + x.copyto(cpu(0)) + maximum(x, 0.0) * 4.0).sum();
    }
    l.backward();
    REQUIRE(values(x.grad()) == std::vector<double>{7, 3});
    REQUIRE(values(minimum(array(std::vector<int32_t>{-1, 3}, {2}), 0.5)) == std::vector<double>{-1, 0.5});
}

TEST_CASE("cumsum gives running sums along an axis and sums the gradient back from the end", "[nn][composite]") {
    // 2x5 int32: row sums worked by hand, in int64 (NumPy's integer cumsum).
    Tensor x = array(std::vector<int32_t>{1, 2, 3, 4, 5, -1, 10, 100, 0, 7}, {2, 5});
    Tensor rows = cumsum(x, 1);
    CHECK(rows.dtype() == DType::int64);
    CHECK(values(rows) == std::vector<double>{1, 3, 6, 10, 15, -1, 9, 109, 109, 116});
    CHECK(values(cumsum(x, 0)) == std::vector<double>{1, 2, 3, 4, 5, 0, 12, 103, 4, 12});
    CHECK(values(cumsum(x)) == std::vector<double>{1, 3, 6, 10, 15, 14, 24, 124, 124, 131});
    CHECK(cumsum(zeros({3, 0}), 1).shape() == Shape{3, 0});
    CHECK(cumsum(zeros({3, 0})).shape() == Shape{0});
    // 70 float64 values: every prefix against a sum left to right (the scan groups them otherwise).
    std::vector<double> v(70), want(70);
    for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(double(i)) * 3, want[i] = v[i] + (i ? want[i - 1] : 0);
    PX_REQUIRE_CLOSE(values(cumsum(array(v), 0)), want, 1e-12);
    // d/dx_j sum_i w_i y_i = sum_{i >= j} w_i.
    Tensor f = array(std::vector<double>{1, 2, 3, 4});
    f.attach_grad();
    {
        auto r = autograd::record();
        (cumsum(f, 0) * array(std::vector<double>{1, 10, 100, 1000})).sum().backward();
    }
    CHECK(values(f.grad()) == std::vector<double>{1111, 1110, 1100, 1000});
    CHECK(message_of<InvalidArgumentError>([&] { cumsum(x, 2); }) == "cumsum: axis 2 is out of range for a tensor of rank 2");
}

TEST_CASE("matmul broadcasts batch axes beyond three as NumPy's and refuses ones that do not fit", "[nn][composite]") {
    // (2,1,2,3) x (3,3,2): batch (2,3); each product worked from the operands' own numbers.
    std::vector<double> av(12), bv(18);
    for (size_t i = 0; i < av.size(); ++i) av[i] = double(i);
    for (size_t i = 0; i < bv.size(); ++i) bv[i] = double(i % 5) - 2;
    Tensor a = array(av, {2, 1, 2, 3}), b = array(bv, {3, 3, 2});
    a.attach_grad();
    Tensor c;
    {
        auto r = autograd::record();
        c = matmul(a, b);
        c.sum().backward();
    }
    REQUIRE(c.shape() == Shape{2, 3, 2, 2});
    std::vector<double> want;
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 3; ++j)
            for (int m = 0; m < 2; ++m)
                for (int n = 0; n < 2; ++n) {
                    double s = 0;
                    for (int k = 0; k < 3; ++k) s += av[size_t(i * 6 + m * 3 + k)] * bv[size_t(j * 6 + k * 2 + n)];
                    want.push_back(s);
                }
    CHECK(values(c) == want);
    // da[i, 0, m, k] = sum over j and n of b[j, k, n].
    std::vector<double> da;
    for (int i = 0; i < 2; ++i)
        for (int m = 0; m < 2; ++m)
            for (int k = 0; k < 3; ++k) {
                double s = 0;
                for (int j = 0; j < 3; ++j)
                    for (int n = 0; n < 2; ++n) s += bv[size_t(j * 6 + k * 2 + n)];
                da.push_back(s);
            }
    CHECK(values(a.grad()) == da);
    CHECK(matmul(ones({1, 4, 5}), ones({3, 5, 2})).shape() == Shape{3, 4, 2});
    CHECK(message_of<ShapeError>([&] { matmul(ones({2, 3, 4, 5}), ones({4, 5, 6})); }) ==
          "matmul: the batch axes of (2, 3, 4, 5) and (4, 5, 6) do not broadcast together");
    CHECK(message_of<ShapeError>([&] { matmul(ones({2, 3, 4, 5}), ones({3, 4, 6})); }) ==
          "matmul: (2, 3, 4, 5) x (3, 4, 6): the inner axes differ (5 and 4)");
}

TEST_CASE("conv2d_transpose scatters each input by the kernel, and its gradients match finite differences",
          "[nn][composite]") {
    // x (1,2,3,2), w (2,3,3,2), stride (2,1), pad (1,0), output_padding (1,0): y (1,3,6,3), worked by hand
    // as the scatter y[o, i s - p + a, j s - p + b] += x[c, i, j] w[c, o, a, b].
    const std::vector<double> x = pxtest::random_values(12, 31), w = pxtest::random_values(36, 32);
    const int64_t oh = (3 - 1) * 2 - 2 * 1 + 3 + 1, ow = (2 - 1) * 1 - 0 + 2 + 0;
    std::vector<double> want(size_t(3 * oh * ow), 0.0);
    for (int c = 0; c < 2; ++c)
        for (int i = 0; i < 3; ++i)
            for (int j = 0; j < 2; ++j)
                for (int o = 0; o < 3; ++o)
                    for (int a = 0; a < 3; ++a)
                        for (int b = 0; b < 2; ++b) {
                            const int64_t r = i * 2 - 1 + a, q = j * 1 + b;
                            if (r < 0 || r >= oh || q < 0 || q >= ow) continue;
                            want[size_t((o * oh + r) * ow + q)] += x[size_t((c * 3 + i) * 2 + j)] * w[size_t(((c * 3 + o) * 3 + a) * 2 + b)];
                        }
    const Tensor y = conv2d_transpose(array(x, {1, 2, 3, 2}), array(w, {2, 3, 3, 2}), {2, 1}, {1, 0}, {1, 0});
    REQUIRE(y.shape() == Shape{1, 3, oh, ow});
    PX_REQUIRE_CLOSE(values(y), want, 1e-12);
    const std::vector<double> weights = pxtest::random_values(size_t(3 * oh * ow), 33);
    pxtest::check_gradients(cpu(), {{{1, 2, 3, 2}, x}, {{2, 3, 3, 2}, w}}, [&](const std::vector<Tensor>& t) {
        return (conv2d_transpose(t[0], t[1], {2, 1}, {1, 0}, {1, 0}) * array(weights, {1, 3, oh, ow})).sum();
    });
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([] {
                            conv2d_transpose(zeros({1, 1, 2, 2}), zeros({1, 1, 3, 3}), 2, 0, 2);
                        }),
                        "output_padding (2, 2) must be >= 0 and below the stride (2, 2)");
    PX_REQUIRE_MENTIONS(message_of<ShapeError>([] { conv2d_transpose(zeros({1, 2, 2}), zeros({1, 1, 3, 3})); }),
                        "takes x (N, C, H, W) and weight (C, O, KH, KW)");
    PX_REQUIRE_MENTIONS(message_of<ShapeError>([] { conv2d_transpose(zeros({1, 1, 1, 1}), zeros({1, 1, 2, 2}), 1, 1); }),
                        "would be 0x0");
}
