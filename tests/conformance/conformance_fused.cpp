// Conformance: the fused ops of ABI 1.4 (R18). Optional: a device without
// them is recorded as unsupported. Where offered, each must give the values
// of the ops it fuses, run on the same device, bit for bit (the bias gradient,
// summed in another order, within rounding), and its gradients must match
// finite differences in float64.
#include <catch2/catch.hpp>

#include <cmath>

#include "conformance.hpp"
#include "nn_reference.hpp"

using namespace plexus;
using pxtest::random_values;
using pxtest::values;

namespace {

struct Geometry {
    int n, c, h, w, k, s, p;
};

Tensor fused(const Tensor& x, const Tensor& b, const Geometry& g) {
    return Tensor::wrap([&](px_tensor** o) {
        return px_bias_relu_max_pool2d(x.handle(), b.handle(), g.k, g.k, g.s, g.s, g.p, g.p, o);
    });
}

std::pair<Tensor, Tensor> fused_backward(const Tensor& x, const Tensor& b, const Tensor& dy, const Geometry& g) {
    px_tensor *dx = nullptr, *db = nullptr;
    check(px_bias_relu_max_pool2d_backward(x.handle(), b.handle(), dy.handle(), g.k, g.k, g.s, g.s, g.p, g.p, &dx, &db));
    return {Tensor(dx), Tensor(db)};
}

// The ops it fuses, with their gradients through autograd.
struct Unfused {
    Tensor y, dx, db;
};
Unfused unfused(const Tensor& x, const Tensor& b, const Tensor& dy, const Geometry& g) {
    Tensor xs = x.copyto(x.device()), bs = b.copyto(b.device());  // leaves of their own
    xs.attach_grad();
    bs.attach_grad();
    Tensor y;
    {
        auto scope = autograd::record();
        y = max_pool2d(bias_add(xs, bs).relu(), g.k, g.s, g.p);
    }
    y.backward(dy);
    return {y, xs.grad(), bs.grad()};
}

}  // namespace

TEST_CASE("bias_relu_max_pool2d gives the values of bias_add, relu and max_pool2d", "[conformance][nn][fused][R18]") {
    PX_NEEDS({PX_OP_BIAS_ADD, DType::float64}, {PX_OP_RELU, DType::float64}, {PX_OP_MAX_POOL2D, DType::float64},
             {PX_OP_MAX_POOL2D_BACKWARD, DType::float64}, {PX_OP_RELU_BACKWARD, DType::float64},
             {PX_OP_BIAS_GRAD, DType::float64});
    Device dev = pxtest::device_under_test();
    // LeNet's two layers (2x2, stride 2), odd planes (a last row and column
    // in no window), rows of more than 64 windows, overlapping windows with
    // padding, and stride 1.
    const Geometry cases[] = {{3, 6, 24, 24, 2, 2, 0}, {2, 16, 10, 10, 2, 2, 0}, {2, 3, 7, 5, 2, 2, 0},
                              {1, 2, 4, 150, 2, 2, 0}, {2, 3, 7, 6, 3, 2, 1}, {1, 2, 5, 6, 3, 1, 1}};
    // Values in [-1, 1] rounded to eighths: many ties, many windows relu
    // cuts to 0, and an Inf and a NaN (relu sends NaN to 0, so it never wins).
    struct Inputs {
        Tensor x, b, dy;
    };
    auto inputs = [&](const Geometry& g, DType d) {
        auto xv = random_values(size_t(g.n) * g.c * g.h * g.w, 51, -1, 1);
        for (double& v : xv) v = std::round(v * 8) / 8;
        xv[3] = INFINITY;
        xv[7] = NAN;
        const int oh = (g.h + 2 * g.p - g.k) / g.s + 1, ow = (g.w + 2 * g.p - g.k) / g.s + 1;
        return Inputs{array(xv, {g.n, g.c, g.h, g.w}, dev).astype(d),
                      array(random_values(size_t(g.c), 52, -0.5, 0.5), {g.c}, dev).astype(d),
                      array(random_values(size_t(g.n) * g.c * oh * ow, 53), {g.n, g.c, oh, ow}, dev).astype(d)};
    };
    // float16 and bfloat16 fuse in float32: relu and the maximum commute
    // with rounding, and the sums of eighths and a bias stay apart after it.
    for (DType d : pxtest::float_dtypes()) {
        PX_OP_SECTION(PX_OP_BIAS_RELU_MAX_POOL2D, d) {
            for (const Geometry& g : cases) {
                CAPTURE(g.n, g.c, g.h, g.w, g.k, g.s, g.p);
                Inputs in = inputs(g, d);
                Tensor y = fused(in.x, in.b, g);
                REQUIRE(y.shape() == in.dy.shape());
                REQUIRE(y.dtype() == d);
                CHECK(pxtest::same_values(values(y), values(unfused(in.x, in.b, in.dy, g).y)));
            }
        }
        PX_OP_SECTION(PX_OP_BIAS_RELU_MAX_POOL2D_BACKWARD, d) {
            for (const Geometry& g : cases) {
                CAPTURE(g.n, g.c, g.h, g.w, g.k, g.s, g.p);
                Inputs in = inputs(g, d);
                Unfused want = unfused(in.x, in.b, in.dy, g);
                auto [dx, db] = fused_backward(in.x, in.b, in.dy, g);
                REQUIRE(dx.shape() == in.x.shape());
                REQUIRE(db.shape() == in.b.shape());
                CHECK(pxtest::same_values(values(dx), values(want.dx)));
                PX_REQUIRE_CLOSE(values(db), values(want.db), pxtest::tolerance(d, 1e-6, 1e-12));
            }
        }
    }
}

TEST_CASE("bias_relu_max_pool2d by hand: ties, relu's cut, padding", "[conformance][nn][fused][R18]") {
    Device dev = pxtest::device_under_test();
    // One 4x4 plane, bias -1: r = relu(x - 1).
    //   window (0,0): 3 3 / 1 0 -> r 2 2 0 0, a tie: the first 3 takes dy
    //   window (0,1): 1 0 / 0 1 -> r all 0: relu stops the gradient
    //   window (1,0): 0 5 / 2 5 -> r 0 4 1 4: the 5 at (2,1)
    //   window (1,1): 2 0 / 0 9 -> r 1 0 0 8: the 9
    std::vector<double> x{3, 3, 1, 0,
                          1, 0, 0, 1,
                          0, 5, 2, 0,
                          2, 5, 0, 9};
    for (DType d : pxtest::float_dtypes())
        PX_OP_SECTION(PX_OP_BIAS_RELU_MAX_POOL2D_BACKWARD, d) {
            Tensor tx = array(x, {1, 1, 4, 4}, dev).astype(d), tb = array(std::vector<double>{-1}, {1}, dev).astype(d);
            const Geometry g{1, 1, 4, 4, 2, 2, 0};
            CHECK(values(fused(tx, tb, g)) == std::vector<double>{2, 0, 4, 8});
            Tensor dy = array(std::vector<double>{10, 20, 30, 40}, {1, 1, 2, 2}, dev).astype(d);
            auto [dx, db] = fused_backward(tx, tb, dy, g);
            std::vector<double> want(16, 0.0);
            want[0] = 10, want[9] = 30, want[15] = 40;
            CHECK(values(dx) == want);
            CHECK(values(db) == std::vector<double>{80});  // 10 + 30 + 40: window (0,1) passed nothing
            // 3x3 windows, stride 2, padding 1: windows overlap (the 3 at
            // (0,1) is in two) and padded cells never win.
            const Geometry g3{1, 1, 4, 4, 3, 2, 1};
            CHECK(values(fused(tx, tb, g3)) == std::vector<double>{2, 2, 4, 8});
            auto [dx3, db3] = fused_backward(tx, tb, dy, g3);
            std::vector<double> want3(16, 0.0);
            want3[0] = 10;   // window (0,0), rows and cols -1..1: the first of the tied 3s
            want3[1] = 20;   // window (0,1), cols 1..3: the 3 at (0,1) is its only nonzero r
            want3[9] = 30;   // window (1,0), rows 1..3, cols -1..1: the 5 at (2,1) before the one at (3,1)
            want3[15] = 40;
            CHECK(values(dx3) == want3);
            CHECK(values(db3) == std::vector<double>{100});
        }
}

TEST_CASE("bias_relu_max_pool2d gradients match finite differences", "[conformance][nn][fused][grad][R18]") {
    if (!pxconf::runs(PX_OP_BIAS_RELU_MAX_POOL2D_BACKWARD, DType::float64)) return;
    Device dev = pxtest::device_under_test();
    // Random values: no ties and no window at exactly 0, where relu and the
    // maximum have no derivative.
    std::vector<double> x = random_values(2 * 3 * 6 * 5, 61), b = random_values(3, 62, -0.3, 0.3);
    pxtest::check_gradients(dev, {{{2, 3, 6, 5}, x}, {{3}, b}}, [&](const std::vector<Tensor>& t) {
        Tensor a = bias_relu_max_pool2d(t[0], t[1], 2, 2), c = bias_relu_max_pool2d(t[0], t[1], 3, 2, 1);
        return (a * array(random_values(size_t(a.size()), 63), a.shape(), dev)).sum() +
               (c * array(random_values(size_t(c.size()), 64), c.shape(), dev)).sum();
    });
}
