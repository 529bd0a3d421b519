// Conformance: GELU, SiLU, leaky ReLU and softplus (ABI 1.8), forward and gradient
// ops against float64 host references in every float dtype, the gradients
// through autograd against finite differences, and the refusals.
#include <catch2/catch.hpp>

#include <cmath>

#include "conformance.hpp"
#include "nn_reference.hpp"

using namespace plexus;
using pxtest::check_gradients;
using pxtest::random_values;
using pxtest::values;

namespace {

double gelu(double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); }
double gelu_grad(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)) + x * std::exp(-x * x / 2) / std::sqrt(2 * M_PI); }
double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }
double silu(double x) { return x * sigmoid(x); }
double silu_grad(double x) { return sigmoid(x) * (1 + x * (1 - sigmoid(x))); }
// log(1 + e^x); above 30, x + e^-x (the series' first term; the next is below 1e-26 of x).
double softplus(double x) { return x > 30 ? x + std::exp(-x) : std::log1p(std::exp(x)); }

std::vector<double> map(const std::vector<double>& a, double (*f)(double)) {
    std::vector<double> r(a.size());
    for (size_t i = 0; i < a.size(); ++i) r[i] = f(a[i]);
    return r;
}

// x and dy over the activations' interesting range, large tails included;
// 70,000 values: enough for a device's parallel paths.
std::vector<double> inputs(size_t n, uint64_t seed) {
    std::vector<double> x = random_values(n, seed, -6, 6);
    // Far below zero gelu is tiny but normal (-1.0e-18 at -9): 1 + erf(x / sqrt 2) would cancel there.
    const double edges[] = {0.0, -0.0, 1e-30, -1e-30, 30.0, -30.0, 800.0, -800.0, -9.0, -10.0, -12.0};
    for (size_t i = 0; i < std::size(edges) && i < n; ++i) x[i] = edges[i];
    return x;
}

Tensor input_backward(px_op op, const Tensor& x, const Tensor& dy, double alpha) {
    return Tensor::wrap([&](px_tensor** o) { return px_activation_input_backward(op, x.handle(), dy.handle(), alpha, o); });
}

}  // namespace

TEST_CASE("gelu, silu, leaky_relu and softplus match the host reference", "[conformance][nn][activations][R15]") {
    Device dev = pxtest::device_under_test();
    const size_t n = 70000;
    const auto x0 = inputs(n, 80), dy0 = random_values(n, 81, -1, 1);
    const double alpha = 0.125;
    for (DType d : pxtest::float_dtypes()) {
        const auto x = pxtest::rounded_to(x0, d), dy = pxtest::rounded_to(dy0, d);
        // Made inside each section, which has checked the casts they take.
        auto on_device = [&](const std::vector<double>& v) { return array(v, {int64_t(n)}, dev).astype(d); };
        // Computed in float64 and rounded once (16-bit: through float32, so twice).
        const double tol = pxtest::tolerance(d, 1e-7, 1e-14);
        auto leaky = [&](double v) { return v > 0 ? v : alpha * v; };
        PX_OP_SECTION(PX_OP_GELU, d) {
            Tensor y = on_device(x).gelu();
            REQUIRE(y.dtype() == d);
            PX_REQUIRE_CLOSE(values(y), map(x, gelu), tol);
        }
        PX_OP_SECTION(PX_OP_SILU, d) { PX_REQUIRE_CLOSE(values(on_device(x).silu()), map(x, silu), tol); }
        PX_OP_SECTION(PX_OP_LEAKY_RELU, d) {
            std::vector<double> want(n);
            for (size_t i = 0; i < n; ++i) want[i] = leaky(x[i]);
            PX_REQUIRE_CLOSE(values(on_device(x).leaky_relu(alpha)), want, tol);
        }
        PX_OP_SECTION(PX_OP_SOFTPLUS, d) { PX_REQUIRE_CLOSE(values(on_device(x).softplus()), map(x, softplus), tol); }
        PX_OP_SECTION(PX_OP_GELU_BACKWARD, d) {
            std::vector<double> want(n);
            for (size_t i = 0; i < n; ++i) want[i] = dy[i] * gelu_grad(x[i]);
            PX_REQUIRE_CLOSE(values(input_backward(PX_OP_GELU, on_device(x), on_device(dy), 0)), want, tol);
        }
        PX_OP_SECTION(PX_OP_SILU_BACKWARD, d) {
            std::vector<double> want(n);
            for (size_t i = 0; i < n; ++i) want[i] = dy[i] * silu_grad(x[i]);
            PX_REQUIRE_CLOSE(values(input_backward(PX_OP_SILU, on_device(x), on_device(dy), 0)), want, tol);
        }
        PX_OP_SECTION(PX_OP_LEAKY_RELU_BACKWARD, d) {
            std::vector<double> want(n);
            for (size_t i = 0; i < n; ++i) want[i] = x[i] > 0 ? dy[i] : alpha * dy[i];
            PX_REQUIRE_CLOSE(values(input_backward(PX_OP_LEAKY_RELU, on_device(x), on_device(dy), alpha)), want, tol);
        }
        PX_OP_SECTION(PX_OP_SOFTPLUS_BACKWARD, d) {
            std::vector<double> want(n);
            for (size_t i = 0; i < n; ++i) want[i] = dy[i] * (x[i] < 0 ? std::exp(x[i]) / (1 + std::exp(x[i])) : sigmoid(x[i]));
            PX_REQUIRE_CLOSE(values(input_backward(PX_OP_SOFTPLUS, on_device(x), on_device(dy), 0)), want, tol);
        }
    }
}

TEST_CASE("the activations give NaN and infinities as PyTorch does", "[conformance][nn][activations][R15]") {
    PX_NEEDS({PX_OP_LEAKY_RELU, DType::float32}, {PX_OP_GELU, DType::float32}, {PX_OP_SILU, DType::float32},
             {PX_OP_SOFTPLUS, DType::float32}, {PX_OP_SOFTPLUS, DType::float64},
             {PX_OP_SOFTPLUS_BACKWARD, DType::float64}, {PX_OP_FILL, DType::float64});
    Device dev = pxtest::device_under_test();
    Tensor x = array({NAN, INFINITY, -INFINITY, -2.0f}, dev);
    const auto y = values(x.leaky_relu(0.5));
    CHECK(std::isnan(y[0]));
    CHECK(y[1] == INFINITY);
    CHECK(y[2] == -INFINITY);
    CHECK(y[3] == -1.0);
    // gelu(-inf) and silu(-inf) are -inf * 0: NaN, as PyTorch 1.13 gives them.
    const auto g = values(x.gelu()), s = values(x.silu());
    CHECK((std::isnan(g[0]) && g[1] == INFINITY && std::isnan(g[2]) && g[3] == Approx(-2 * 0.0227501319481792)));
    CHECK((std::isnan(s[0]) && s[1] == INFINITY && std::isnan(s[2]) && s[3] == Approx(-2 * 0.1192029220221175)));
    // gelu(-9) = -9 Phi(-9) = -1.0157e-18 (Python's 0.5 * x * math.erfc(-x / sqrt(2))), not the -0
    // that 1 + erf(x / sqrt 2) gives.
    CHECK(values(array({-9.0f}, dev).gelu())[0] == Approx(-1.015729565358458e-18).epsilon(1e-6));
    // softplus(-inf) is 0 and softplus(inf) inf, as PyTorch's; softplus(-2) = log1p(e^-2); far below zero
    // it is e^x, not the 0 that log(1 + e^x) rounds to (torch.nn.functional.softplus(-100.) is 3.7201e-44).
    const auto p = values(x.softplus());
    CHECK((std::isnan(p[0]) && p[1] == INFINITY && p[2] == 0 && p[3] == Approx(0.1269280110429725)));
    CHECK(values(array({-100.0f}, dev).astype(DType::float64).softplus())[0] == Approx(3.720075976020836e-44).epsilon(1e-12));
    // Below -709.78 e^-x overflows: the gradient is still e^x (4.476e-309 at -710, subnormal), not 0.
    const Tensor far = array({-710.0f}, dev).astype(DType::float64);
    const double e710 = std::exp(-710.0);
    CHECK(values(far.softplus())[0] == Approx(e710).epsilon(1e-9));
    CHECK(values(input_backward(PX_OP_SOFTPLUS, far, ones({1}, dev, DType::float64), 0))[0] == Approx(e710).epsilon(1e-9));
}

TEST_CASE("the activations' gradients match finite differences", "[conformance][nn][activations][grad][R15]") {
    PX_NEEDS({PX_OP_GELU, DType::float64}, {PX_OP_SILU, DType::float64}, {PX_OP_LEAKY_RELU, DType::float64},
             {PX_OP_GELU_BACKWARD, DType::float64}, {PX_OP_SILU_BACKWARD, DType::float64},
             {PX_OP_LEAKY_RELU_BACKWARD, DType::float64}, {PX_OP_SOFTPLUS, DType::float64},
             {PX_OP_SOFTPLUS_BACKWARD, DType::float64}, {PX_OP_MUL, DType::float64}, {PX_OP_SUM, DType::float64});
    Device dev = pxtest::device_under_test();
    // Away from leaky_relu's kink at 0, where a difference quotient straddles it.
    std::vector<double> x = random_values(24, 82, -3, 3);
    for (double& v : x) v += v >= 0 ? 0.01 : -0.01;
    const std::vector<double> w = random_values(24, 83);
    auto weigh = [&](const Tensor& y) { return (y * array(w, {4, 6}, y.device())).sum(); };
    check_gradients(dev, {{{4, 6}, x}}, [&](const std::vector<Tensor>& t) { return weigh(t[0].gelu()); });
    check_gradients(dev, {{{4, 6}, x}}, [&](const std::vector<Tensor>& t) { return weigh(t[0].silu()); });
    check_gradients(dev, {{{4, 6}, x}}, [&](const std::vector<Tensor>& t) { return weigh(leaky_relu(t[0], 0.2)); });
    check_gradients(dev, {{{4, 6}, x}}, [&](const std::vector<Tensor>& t) { return weigh(softplus(t[0])); });
}

TEST_CASE("the activations refuse bad arguments", "[conformance][nn][activations][errors][R5]") {
    PX_NEEDS({PX_OP_LEAKY_RELU, DType::float32}, {PX_OP_FILL, DType::float32}, {PX_OP_FILL, DType::int32});
    Device dev = pxtest::device_under_test();
    Tensor x = ones({2, 3}, dev);
    PX_REQUIRE_MENTIONS(pxtest::message_of<InvalidArgumentError>([&] { x.leaky_relu(NAN); }), "alpha nan must be finite");
    PX_REQUIRE_MENTIONS(pxtest::message_of<InvalidArgumentError>([&] { x.leaky_relu(INFINITY); }), "must be finite");
    PX_REQUIRE_MENTIONS(pxtest::message_of<DTypeError>([&] { ones({2}, dev, DType::int32).gelu(); }), "int32");
    PX_REQUIRE_MENTIONS(pxtest::message_of<DTypeError>([&] { ones({2}, dev, DType::int32).softplus(); }), "int32");
    PX_REQUIRE_MENTIONS(pxtest::message_of<DTypeError>([&] { ones({2}, dev, DType::int32).leaky_relu(0.1); }), "int32");
    px_tensor* out = nullptr;
    REQUIRE(px_unary_alpha(PX_OP_RELU, x.handle(), 0.1, &out) == PX_ERROR_INVALID_ARGUMENT);
    PX_REQUIRE_MENTIONS(px_last_error(), "is not an elementwise op with an alpha");
    REQUIRE(px_activation_input_backward(PX_OP_RELU, x.handle(), x.handle(), 0, &out) == PX_ERROR_INVALID_ARGUMENT);
    PX_REQUIRE_MENTIONS(px_last_error(), "is not PX_OP_GELU, PX_OP_SILU, PX_OP_LEAKY_RELU, PX_OP_SOFTPLUS, PX_OP_SIN");
    PX_REQUIRE_MENTIONS(px_last_error(), "the ops whose gradient reads their input");
    Tensor turned = ones({3, 2}, dev);  // made first: releasing a temporary would clear the last error
    REQUIRE(px_activation_input_backward(PX_OP_GELU, x.handle(), turned.handle(), 0, &out) == PX_ERROR_SHAPE);
    PX_REQUIRE_MENTIONS(px_last_error(), "dy (input 1) has shape (3, 2)");
    REQUIRE(px_activation_input_backward(PX_OP_LEAKY_RELU, x.handle(), x.handle(), NAN, &out) == PX_ERROR_INVALID_ARGUMENT);
    REQUIRE(out == nullptr);
}

TEST_CASE("far below zero float64 sigmoid and silu keep e^x and abs clears the sign bit",
          "[conformance][nn][activations][R15]") {
    PX_NEEDS({PX_OP_SIGMOID, DType::float64}, {PX_OP_SILU, DType::float64}, {PX_OP_SILU_BACKWARD, DType::float64},
             {PX_OP_ABS, DType::float32}, {PX_OP_ABS, DType::float64}, {PX_OP_FILL, DType::float64});
    Device dev = pxtest::device_under_test();
    // Below -709.78 e^-x overflows: 1 / (1 + e^-x) gave 0 where e^x is still a float64 (normal down to
    // -708.4, subnormal to -745.1), as did silu's x / (1 + e^-x).
    const std::vector<double> xs{-709.9, -738.44, -800.0, -748.0};
    const Tensor far = array(xs, {4}, dev);
    REQUIRE(far.dtype() == DType::float64);
    const auto s = values(far.sigmoid()), l = values(far.silu());
    CHECK(s[0] == Approx(std::exp(-709.9)).epsilon(1e-12));
    CHECK(s[1] == Approx(std::exp(-738.44)).epsilon(1e-2));  // subnormal: a few significant bits
    CHECK(s[2] == 0.0);
    CHECK(l[0] == Approx(-709.9 * std::exp(-709.9)).epsilon(1e-12));  // -3.51e-306, a normal float64
    CHECK(l[2] == 0.0);
    CHECK(l[3] == Approx(-std::exp(-748.0 + std::log(748.0))).epsilon(2e-2));  // -3.9e-322, where e^-748 is 0
    const auto g = values(input_backward(PX_OP_SILU, far, ones({4}, dev, DType::float64), 0));
    CHECK(g[0] == Approx(std::exp(-709.9) * (1 - 709.9)).epsilon(1e-9));
    CHECK(g[3] == Approx(-std::exp(-748.0 + std::log(747.0))).epsilon(2e-2));
    // |-0.0| is +0.0 and |-NaN| a NaN without its sign, as NumPy's and PyTorch's (-0.0 < 0 is false: it stayed -0.0).
    for (DType d : {DType::float32, DType::float64}) {
        const auto a = values(array(std::vector<double>{-0.0, 0.0, -1.5, std::copysign(NAN, -1.0)}, {4}, dev).astype(d).abs());
        CHECK_FALSE(std::signbit(a[0]));
        CHECK_FALSE(std::signbit(a[1]));
        CHECK(a[2] == 1.5);
        CHECK((std::isnan(a[3]) && !std::signbit(a[3])));
    }
}
