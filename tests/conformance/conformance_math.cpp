// Conformance: the elementwise math functions (ABI 1.9: sin, cos, tan, sinh,
// cosh, log1p, expm1, sign, floor, ceil, round) and their gradients, against
// float64 host references in every float dtype, the values NumPy gives at
// the edges, the gradients through autograd against finite differences, and
// the refusals.
#include <catch2/catch.hpp>

#include <cmath>

#include "conformance.hpp"
#include "nn_reference.hpp"

using namespace plexus;
using pxtest::check_gradients;
using pxtest::random_values;
using pxtest::values;

namespace {

double sign(double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : x == 0 ? 0.0 : x; }

struct Row {
    px_op op;
    double (*f)(double);
    double low, high;  // where its inputs are drawn
};

const Row forward_rows[] = {
    {PX_OP_SIN, [](double x) { return std::sin(x); }, -20, 20},
    {PX_OP_COS, [](double x) { return std::cos(x); }, -20, 20},
    {PX_OP_TAN, [](double x) { return std::tan(x); }, -1.5, 1.5},
    {PX_OP_SINH, [](double x) { return std::sinh(x); }, -10, 10},
    {PX_OP_COSH, [](double x) { return std::cosh(x); }, -10, 10},
    {PX_OP_LOG1P, [](double x) { return std::log1p(x); }, -0.99, 50},
    {PX_OP_EXPM1, [](double x) { return std::expm1(x); }, -10, 10},
    {PX_OP_SIGN, sign, -3, 3},
    {PX_OP_FLOOR, [](double x) { return std::floor(x); }, -100, 100},
    {PX_OP_CEIL, [](double x) { return std::ceil(x); }, -100, 100},
    {PX_OP_ROUND, [](double x) { return std::nearbyint(x); }, -100, 100},
};

// dx from the operand the gradient row reads (x, or y for tan and expm1) and dy.
struct GradientRow {
    px_op forward, backward;
    bool from_result;
    double (*dx)(double v, double dy);
    double low, high;
};

const GradientRow gradient_rows[] = {
    {PX_OP_SIN, PX_OP_SIN_BACKWARD, false, [](double x, double dy) { return dy * std::cos(x); }, -20, 20},
    {PX_OP_COS, PX_OP_COS_BACKWARD, false, [](double x, double dy) { return -dy * std::sin(x); }, -20, 20},
    {PX_OP_TAN, PX_OP_TAN_BACKWARD, true, [](double y, double dy) { return dy * (1 + y * y); }, -1.5, 1.5},
    {PX_OP_SINH, PX_OP_SINH_BACKWARD, false, [](double x, double dy) { return dy * std::cosh(x); }, -10, 10},
    {PX_OP_COSH, PX_OP_COSH_BACKWARD, false, [](double x, double dy) { return dy * std::sinh(x); }, -10, 10},
    {PX_OP_LOG1P, PX_OP_LOG1P_BACKWARD, false, [](double x, double dy) { return dy / (1 + x); }, -0.99, 50},
    {PX_OP_EXPM1, PX_OP_EXPM1_BACKWARD, true, [](double y, double dy) { return dy * (y + 1); }, -10, 10},
};

std::vector<double> map(const std::vector<double>& a, double (*f)(double)) {
    std::vector<double> r(a.size());
    for (size_t i = 0; i < a.size(); ++i) r[i] = f(a[i]);
    return r;
}

Tensor result_backward(px_op op, const Tensor& y, const Tensor& dy) {
    return Tensor::wrap([&](px_tensor** o) { return px_activation_backward(op, y.handle(), dy.handle(), o); });
}
Tensor input_backward(px_op op, const Tensor& x, const Tensor& dy) {
    return Tensor::wrap([&](px_tensor** o) { return px_activation_input_backward(op, x.handle(), dy.handle(), 0, o); });
}

}  // namespace

TEST_CASE("the math functions match the host reference", "[conformance][elementwise][math][R10]") {
    Device dev = pxtest::device_under_test();
    const size_t n = 20000;  // enough for a device's parallel paths
    for (DType d : pxtest::float_dtypes())
        for (const Row& r : forward_rows) {
            PX_OP_SECTION(r.op, d) {
                // Rounded to the dtype first, so the reference sees what the device does.
                const auto x = pxtest::rounded_to(random_values(n, 90 + uint64_t(r.op), r.low, r.high), d);
                const Tensor y = array(x, {int64_t(n)}, dev).astype(d).unary(r.op);
                REQUIRE(y.dtype() == d);
                // Computed in float64 and rounded once (16-bit: through float32, so twice).
                PX_REQUIRE_CLOSE(values(y), map(x, r.f), pxtest::tolerance(d, 1e-7, 1e-14));
            }
        }
}

TEST_CASE("the math functions' gradient rows match the host reference", "[conformance][elementwise][math][R10]") {
    Device dev = pxtest::device_under_test();
    const size_t n = 20000;
    for (DType d : pxtest::float_dtypes())
        for (const GradientRow& r : gradient_rows) {
            PX_OP_SECTION(r.backward, d) {
                const auto x = pxtest::rounded_to(random_values(n, 120 + uint64_t(r.forward), r.low, r.high), d);
                const auto dy = pxtest::rounded_to(random_values(n, 140 + uint64_t(r.forward), -1, 1), d);
                // The row reads y for tan and expm1: the float64 y rounded to the dtype, as a device holds it.
                const auto v = r.from_result
                                   ? pxtest::rounded_to(map(x, r.forward == PX_OP_TAN ? [](double a) { return std::tan(a); }
                                                                                       : [](double a) { return std::expm1(a); }),
                                                        d)
                                   : x;
                std::vector<double> want(n);
                for (size_t i = 0; i < n; ++i) want[i] = r.dx(v[i], dy[i]);
                const Tensor tv = array(v, {int64_t(n)}, dev).astype(d), tdy = array(dy, {int64_t(n)}, dev).astype(d);
                const Tensor dx = r.from_result ? result_backward(r.forward, tv, tdy) : input_backward(r.forward, tv, tdy);
                REQUIRE(dx.dtype() == d);
                PX_REQUIRE_CLOSE(values(dx), want, pxtest::tolerance(d, 1e-7, 1e-14));
            }
        }
}

TEST_CASE("the math functions give NumPy's values at the edges", "[conformance][elementwise][math][R10]") {
    PX_NEEDS({PX_OP_SIN, DType::float64}, {PX_OP_COSH, DType::float64}, {PX_OP_LOG1P, DType::float64},
             {PX_OP_EXPM1, DType::float64}, {PX_OP_SIGN, DType::float64}, {PX_OP_FLOOR, DType::float64},
             {PX_OP_CEIL, DType::float64}, {PX_OP_ROUND, DType::float64}, {PX_OP_ROUND, DType::float32},
             {PX_OP_EXPM1, DType::float32}, {PX_OP_LOG1P, DType::float32}, {PX_OP_FILL, DType::float64});
    Device dev = pxtest::device_under_test();
    auto on = [&](std::vector<double> v) { return array(v, {int64_t(v.size())}, dev); };
    // Round is NumPy's: half to even (Python's round too), not half away from zero.
    for (DType d : {DType::float32, DType::float64})
        CHECK(values(on({0.5, 1.5, 2.5, -0.5, -2.5, 3.7, -3.7}).astype(d).round()) ==
              std::vector<double>{0, 2, 2, -0.0, -2, 4, -4});
    // sign: +0 for either zero, NaN staying NaN, infinities their sign (NumPy's; PyTorch 1.13 gives 0 for NaN).
    const auto s = values(on({-0.0, 0.0, NAN, -INFINITY, INFINITY, -1e-300}).sign());
    CHECK((s[0] == 0 && !std::signbit(s[0]) && s[1] == 0 && std::isnan(s[2]) && s[3] == -1 && s[4] == 1 && s[5] == -1));
    // floor and ceil keep the zero's sign; NaN and infinities stay.
    const auto f = values(on({-0.0, -0.5, NAN, INFINITY}).floor()), c = values(on({-0.0, -0.5, NAN, -INFINITY}).ceil());
    CHECK((std::signbit(f[0]) && f[1] == -1 && std::isnan(f[2]) && f[3] == INFINITY));
    CHECK((std::signbit(c[0]) && c[1] == 0 && std::signbit(c[1]) && std::isnan(c[2]) && c[3] == -INFINITY));
    // Exact near 0, where log(1 + x) and exp(x) - 1 lose every digit: float32 too.
    for (DType d : {DType::float32, DType::float64}) {
        CHECK(values(on({1e-10}).astype(d).log1p())[0] == Approx(1e-10 - 5e-21).epsilon(1e-6));
        CHECK(values(on({1e-10}).astype(d).expm1())[0] == Approx(1e-10 + 5e-21).epsilon(1e-6));
    }
    // C's values at the poles and beyond the range: log1p(-1) = -inf, log1p(-2) NaN, cosh(1000) inf, sin(inf) NaN.
    const auto l = values(on({-1.0, -2.0}).log1p());
    CHECK((l[0] == -INFINITY && std::isnan(l[1])));
    CHECK(values(on({1000.0}).cosh())[0] == INFINITY);
    CHECK(std::isnan(values(on({INFINITY}).sin())[0]));
    CHECK(values(on({-INFINITY}).expm1())[0] == -1);
}

TEST_CASE("the math functions' gradients match finite differences, and the piecewise constant ones are 0",
          "[conformance][elementwise][math][grad][R10]") {
    PX_NEEDS({PX_OP_SIN, DType::float64}, {PX_OP_COS, DType::float64}, {PX_OP_TAN, DType::float64},
             {PX_OP_SINH, DType::float64}, {PX_OP_COSH, DType::float64}, {PX_OP_LOG1P, DType::float64},
             {PX_OP_EXPM1, DType::float64}, {PX_OP_SIN_BACKWARD, DType::float64}, {PX_OP_COS_BACKWARD, DType::float64},
             {PX_OP_TAN_BACKWARD, DType::float64}, {PX_OP_SINH_BACKWARD, DType::float64},
             {PX_OP_COSH_BACKWARD, DType::float64}, {PX_OP_LOG1P_BACKWARD, DType::float64},
             {PX_OP_EXPM1_BACKWARD, DType::float64}, {PX_OP_FLOOR, DType::float64}, {PX_OP_SIGN, DType::float64},
             {PX_OP_MUL, DType::float64}, {PX_OP_SUM, DType::float64}, {PX_OP_FILL, DType::float64});
    Device dev = pxtest::device_under_test();
    const std::vector<double> x = random_values(24, 84, -0.9, 1.2), w = random_values(24, 85);
    auto weigh = [&](const Tensor& y) { return (y * array(w, {4, 6}, y.device())).sum(); };
    for (const GradientRow& r : gradient_rows)
        check_gradients(dev, {{{4, 6}, x}}, [&](const std::vector<Tensor>& t) { return weigh(t[0].unary(r.forward)); });
    // floor, sign, ...: a zero gradient, as MXNet's (they are recorded, so a chain through them has one).
    Tensor a = array(x, {4, 6}, dev);
    a.attach_grad();
    Tensor y;
    {
        auto scope = autograd::record();
        y = weigh(a.floor() + a.sign() + a * 2.0);
    }
    y.backward();
    const auto g = values(a.grad());
    for (size_t i = 0; i < g.size(); ++i) CHECK(g[i] == Approx(2 * w[i]));
}

TEST_CASE("the math functions refuse integer dtypes", "[conformance][elementwise][math][errors][R5]") {
    PX_NEEDS({PX_OP_FILL, DType::int32});
    Device dev = pxtest::device_under_test();
    for (px_op op : {PX_OP_SIN, PX_OP_FLOOR, PX_OP_ROUND, PX_OP_SIGN})
        PX_REQUIRE_MENTIONS(pxtest::message_of<DTypeError>([&] { ones({2}, dev, DType::int32).unary(op); }), "int32");
}
