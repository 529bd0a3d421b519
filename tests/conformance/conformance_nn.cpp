// Conformance: the neural-network ops. Forward results against float64 host
// references (float32 and float64), every gradient against finite
// differences in float64, and the errors each op must raise.
#include <catch2/catch.hpp>

#include <iomanip>

#include "conformance.hpp"
#include "plexus/philox.h"
#include "nn_reference.hpp"

using namespace plexus;
using pxtest::check_gradients;
using pxtest::random_values;
using pxtest::values;

namespace {
using In = std::pair<Shape, std::vector<double>>;
In rnd(Shape s, uint64_t seed, double lo = -1, double hi = 1) {
    size_t n = 1;
    for (auto d : s) n *= size_t(d);
    return {s, random_values(n, seed, lo, hi)};
}
// `v` rounded to multiples of 1/64.
std::vector<double> sixty_fourths(std::vector<double> v) {
    for (double& x : v) x = std::round(x * 64) / 64;
    return v;
}
// A fixed random weighting, so that every output element matters to the loss.
Tensor weigh(const Tensor& y, uint64_t seed) {
    Shape s = y.shape();
    size_t n = size_t(y.size());
    return (y * array(random_values(n, seed), s, y.device())).sum();
}
}  // namespace

// The last case has small output planes and more images than threads: the
// CPU plugin puts several images side by side in one product.
TEST_CASE("conv2d matches the host reference", "[conformance][nn][R15]") {
    Device dev = pxtest::device_under_test();
    struct Case { int n, c, h, w, o, kh, kw, sh, sw, ph, pw; };
    for (DType d : pxtest::float_dtypes())
        PX_OP_SECTION(PX_OP_CONV2D, d) {
            for (Case k : {Case{2, 3, 7, 6, 4, 3, 3, 1, 1, 0, 0}, Case{2, 2, 8, 9, 3, 3, 2, 2, 1, 1, 0},
                           Case{1, 1, 28, 28, 6, 5, 5, 1, 1, 0, 0}, Case{3, 4, 5, 5, 2, 1, 1, 1, 1, 0, 0},
                           Case{5, 3, 6, 5, 4, 3, 3, 2, 2, 1, 1}}) {
                auto x = pxtest::rounded_to(random_values(size_t(k.n) * k.c * k.h * k.w, 1), d);
                auto w = pxtest::rounded_to(random_values(size_t(k.o) * k.c * k.kh * k.kw, 2), d);
                int oh, ow;
                auto want = pxtest::conv2d_reference(x, w, k.n, k.c, k.h, k.w, k.o, k.kh, k.kw, k.sh, k.sw, k.ph, k.pw, oh, ow);
                Tensor tx = array(x, {k.n, k.c, k.h, k.w}, dev).astype(d), tw = array(w, {k.o, k.c, k.kh, k.kw}, dev).astype(d);
                Tensor y = conv2d(tx, tw, {k.sh, k.sw}, {k.ph, k.pw});
                REQUIRE(y.shape() == Shape{k.n, k.o, oh, ow});
                REQUIRE(y.dtype() == d);
                PX_REQUIRE_CLOSE(values(y), want, pxtest::tolerance(d, 1e-5, 1e-12));
            }
        }
}

// Shapes chosen for the CPU plugin's two conv paths: LeNet's layers, a batch
// larger than the thread count, rows that are not a multiple of any vector
// width, padding wider than the kernel, 1x1, and strides (im2col only).
TEST_CASE("conv2d gradients match the host reference", "[conformance][nn][R15]") {
    Device dev = pxtest::device_under_test();
    struct Case { int n, c, h, w, o, kh, kw, sh, sw, ph, pw; };
    for (DType d : pxtest::float_dtypes())
        PX_OP_SECTION(PX_OP_CONV2D_BACKWARD_WEIGHT, d) {
            for (Case k : {Case{5, 1, 28, 28, 6, 5, 5, 1, 1, 0, 0}, Case{5, 6, 12, 12, 16, 3, 3, 1, 1, 0, 0},
                           Case{3, 2, 9, 13, 3, 3, 5, 1, 1, 1, 2}, Case{2, 3, 4, 5, 2, 2, 2, 1, 1, 3, 2},
                           Case{3, 4, 5, 7, 9, 1, 1, 1, 1, 0, 0}, Case{2, 2, 11, 10, 3, 3, 3, 2, 2, 1, 1},
                           Case{1, 2, 6, 17, 2, 3, 1, 1, 3, 0, 1},
                           // Many images of LeNet's second layer, and images larger
                           // than a CPU stack of weight-gradient scratch: the direct
                           // loops' stacks, whole and partial, per thread.
                           Case{40, 6, 12, 12, 16, 3, 3, 1, 1, 0, 0}, Case{3, 2, 150, 170, 3, 3, 3, 1, 1, 1, 1}}) {
                CAPTURE(k.n, k.c, k.h, k.w, k.o, k.kh, k.kw, k.sh, k.sw, k.ph, k.pw);
                const int oh = (k.h + 2 * k.ph - k.kh) / k.sh + 1, ow = (k.w + 2 * k.pw - k.kw) / k.sw + 1;
                auto x = pxtest::rounded_to(random_values(size_t(k.n) * k.c * k.h * k.w, 41), d);
                auto w = pxtest::rounded_to(random_values(size_t(k.o) * k.c * k.kh * k.kw, 42), d);
                auto dy = pxtest::rounded_to(random_values(size_t(k.n) * k.o * oh * ow, 43), d);
                std::vector<double> want_dx, want_dw;
                pxtest::conv2d_gradients_reference(x, w, dy, k.n, k.c, k.h, k.w, k.o, k.kh, k.kw, k.sh, k.sw, k.ph,
                                                   k.pw, want_dx, want_dw);
                Tensor tx = array(x, {k.n, k.c, k.h, k.w}, dev).astype(d);
                Tensor tw = array(w, {k.o, k.c, k.kh, k.kw}, dev).astype(d);
                Tensor tdy = array(dy, {k.n, k.o, oh, ow}, dev).astype(d);
                Tensor tdx = Tensor::wrap([&](px_tensor** o) {
                    return px_conv2d_backward_input(tdy.handle(), tw.handle(), k.h, k.w, k.sh, k.sw, k.ph, k.pw, o);
                });
                Tensor tdw = Tensor::wrap([&](px_tensor** o) {
                    return px_conv2d_backward_weight(tdy.handle(), tx.handle(), k.kh, k.kw, k.sh, k.sw, k.ph, k.pw, o);
                });
                REQUIRE(tdx.shape() == Shape{k.n, k.c, k.h, k.w});
                REQUIRE(tdw.shape() == Shape{k.o, k.c, k.kh, k.kw});
                // dw sums up to N*OH*OW products: float32 gets a looser bound.
                PX_REQUIRE_CLOSE(values(tdx), want_dx, pxtest::tolerance(d, 1e-5, 1e-12));
                PX_REQUIRE_CLOSE(values(tdw), want_dw, pxtest::tolerance(d, 2e-4, 1e-11));
            }
        }
}

TEST_CASE("pooling matches the host reference", "[conformance][nn][R15]") {
    Device dev = pxtest::device_under_test();
    for (bool is_max : {true, false})
        for (DType d : pxtest::float_dtypes())
            PX_OP_SECTION(is_max ? PX_OP_MAX_POOL2D : PX_OP_AVG_POOL2D, d) {
                auto x = pxtest::rounded_to(random_values(2 * 3 * 7 * 6, 3), d);
                // LeNet's 2x2; padded windows; windows without padding that
                // overlap (3/2, 2/1) or do not (3/3); windows of two sizes.
                for (pxtest::PoolGeom g : {pxtest::PoolGeom{2, 2, 2, 2, 0, 0}, {3, 3, 2, 2, 1, 1}, {3, 3, 1, 1, 1, 1},
                                           {3, 3, 2, 2, 0, 0}, {2, 2, 1, 1, 0, 0}, {3, 3, 3, 3, 0, 0},
                                           {2, 3, 1, 2, 1, 1}, {3, 2, 3, 1, 0, 0}}) {
                    CAPTURE(g.kh, g.kw, g.sh, g.sw, g.ph, g.pw);
                    int oh, ow;
                    auto want = pxtest::pool_reference(x, 6, 7, 6, g, is_max, oh, ow);
                    Tensor tx = array(x, {2, 3, 7, 6}, dev).astype(d);
                    const Pair2 k{g.kh, g.kw}, s{g.sh, g.sw}, p{g.ph, g.pw};
                    Tensor y = is_max ? max_pool2d(tx, k, s, p) : avg_pool2d(tx, k, s, p);
                    REQUIRE(y.shape() == Shape{2, 3, oh, ow});
                    PX_REQUIRE_CLOSE(values(y), want, pxtest::tolerance(d, 1e-6, 1e-12));
                }
            }
}

TEST_CASE("max pooling: ties send the gradient to the first maximum, NaN propagates and takes it", "[conformance][nn][R15]") {
    Device dev = pxtest::device_under_test();
    // One 5x5 plane (odd: the last row and column are in no 2x2 window).
    // Window (0,0) holds a tie (7 at (0,1) and (1,0)); window (0,1) a NaN
    // after its maximum; window (1,1) all equal.
    const double n = NAN;
    std::vector<double> x{1, 7, 9, n, 4,
                          7, 2, 3, 5, 4,
                          0, 1, 6, 6, 4,
                          2, 0, 6, 6, 4,
                          4, 4, 4, 4, 4};
    for (DType d : pxtest::float_dtypes())
        PX_OP_SECTION(PX_OP_MAX_POOL2D_BACKWARD, d) {
            Tensor tx = array(x, {1, 1, 5, 5}, dev).astype(d);
            tx.attach_grad();
            Tensor y;
            {
                auto scope = autograd::record();
                y = max_pool2d(tx, 2, 2);
            }
            auto yv = values(y);
            REQUIRE(yv.size() == 4);
            CHECK(yv[0] == 7);
            CHECK(std::isnan(yv[1]));
            CHECK(yv[2] == 2);
            CHECK(yv[3] == 6);
            y.backward(array(std::vector<double>{10, 20, 30, 40}, {1, 1, 2, 2}, dev).astype(d));
            std::vector<double> want(25, 0.0);
            want[1] = 10;        // the first 7, not the one at (1,0)
            want[3] = 20;        // the NaN, not the 9 before it
            want[3 * 5 + 0] = 30;  // window (1,0): 0 1 / 2 0, maximum 2 at (3,0)
            want[2 * 5 + 2] = 40;  // all four equal: the first
            CHECK(values(tx.grad()) == want);
            // The general path (3x3 windows, stride 2, padding 1) follows the same rule.
            Tensor y3;
            {
                auto scope = autograd::record();
                y3 = max_pool2d(tx, 3, 2, 1);
            }
            y3.backward(ones(y3.shape(), dev, d));
            auto g3 = values(tx.grad());
            CHECK(g3[1] == 1);  // window (0,0), rows and cols -1..1: 1 7 / 7 2 -> the first 7
            CHECK(g3[5] == 1);  // the second 7 is the maximum of window (1,0), rows 1..3, cols -1..1
            CHECK(g3[3] >= 1);  // the NaN takes every window it is in
            // Unpadded windows that overlap (3x3, stride 2), so a cell can
            // collect from two windows: 1 7 9 / 7 2 3 / 0 1 6 -> the 9;
            // 9 NaN 4 / 3 5 4 / 6 6 4 -> the NaN; both lower windows start
            // at the 6 at (2,2), which takes both gradients.
            Tensor yo;
            {
                auto scope = autograd::record();
                yo = max_pool2d(tx, 3, 2);
            }
            auto yov = values(yo);
            REQUIRE(yov.size() == 4);
            CHECK(yov[0] == 9);
            CHECK(std::isnan(yov[1]));
            CHECK(yov[2] == 6);
            CHECK(yov[3] == 6);
            yo.backward(array(std::vector<double>{10, 20, 30, 40}, {1, 1, 2, 2}, dev).astype(d));
            std::vector<double> want_o(25, 0.0);
            want_o[2] = 10;
            want_o[3] = 20;
            want_o[2 * 5 + 2] = 70;
            CHECK(values(tx.grad()) == want_o);
            // Unpadded windows that do not overlap (2x4, stride 2x4): rows 0-1
            // hold the NaN, rows 2-3 a tie of four 6s; row 4 and column 4
            // are in no window and get 0.
            Tensor yd;
            {
                auto scope = autograd::record();
                yd = max_pool2d(tx, {2, 4}, {2, 4});
            }
            auto ydv = values(yd);
            REQUIRE(yd.shape() == Shape{1, 1, 2, 1});
            CHECK(std::isnan(ydv[0]));
            CHECK(ydv[1] == 6);
            yd.backward(array(std::vector<double>{10, 20}, {1, 1, 2, 1}, dev).astype(d));
            std::vector<double> want_d(25, 0.0);
            want_d[3] = 10;
            want_d[2 * 5 + 2] = 20;
            CHECK(values(tx.grad()) == want_d);
        }
}

TEST_CASE("softmax cross-entropy and log-softmax are exact and stable", "[conformance][nn][R15]") {
    Device dev = pxtest::device_under_test();
    // Logits of 1000 would overflow exp() without the max subtracted first.
    // bfloat16 holds 1000 and 1004, not 1001: the references take the
    // logits as each dtype holds them.
    Tensor labels = array(std::vector<int32_t>{2, 0}, {2}, dev);
    auto lse = [](double a, double b, double c) {
        double m = std::max({a, b, c});
        return m + std::log(std::exp(a - m) + std::exp(b - m) + std::exp(c - m));
    };
    for (DType d : pxtest::float_dtypes()) {
        auto x = pxtest::rounded_to(std::vector<double>{1000, 1001, 1002, -3, 0, 3}, d);
        std::vector<double> want{lse(x[0], x[1], x[2]) - x[2], lse(x[3], x[4], x[5]) - x[3]};
        const double tol = pxtest::tolerance(d, 1e-6, 1e-12);
        PX_OP_SECTION(PX_OP_SOFTMAX_CROSS_ENTROPY, d) {
        Tensor l = array(x, {2, 3}, dev).astype(d);
        PX_REQUIRE_CLOSE(values(softmax_cross_entropy(l, labels)), want, tol);
        PX_REQUIRE_CLOSE(values(softmax_cross_entropy(l, labels.astype(DType::int64))), want, tol);
        }
        PX_OP_SECTION(PX_OP_LOG_SOFTMAX, d) {
        auto ls = values(log_softmax(array(x, {2, 3}, dev).astype(d)));
        CAPTURE(ls[2], ls[3]);
        REQUIRE(pxtest::close(ls[2], x[2] - lse(x[0], x[1], x[2]), tol));
        REQUIRE(pxtest::close(ls[3], x[3] - lse(x[3], x[4], x[5]), tol));
        }
    }
}

TEST_CASE("a label outside the classes fails at the next wait, naming the op", "[conformance][nn][errors][R9]") {
    PX_NEEDS({PX_OP_FILL, DType::float32}, {PX_OP_SOFTMAX_CROSS_ENTROPY, DType::float32});
    Device dev = pxtest::device_under_test();
    Tensor l = zeros({3, 4}, dev);
    Tensor loss = softmax_cross_entropy(l, array(std::vector<int32_t>{0, 4, 1}, {3}, dev));
    auto msg = pxtest::message_of<DeviceError>([&] { loss.to_vector<float>(); });
    PX_REQUIRE_NAMES_OP(msg, "softmax_cross_entropy");  // R9.1: not its gradient's name
    PX_REQUIRE_MENTIONS(msg, "label 4 in row 1");       // R9.2
    // The device still works afterwards.
    REQUIRE(values(softmax_cross_entropy(l, array(std::vector<int32_t>{0, 3, 1}, {3}, dev)))[1] ==
            Approx(std::log(4.0)));
}

TEST_CASE("a label outside the classes fails the gradient alone at the next wait", "[conformance][nn][errors][R9]") {
    PX_NEEDS({PX_OP_FILL, DType::float32}, {PX_OP_SOFTMAX_CROSS_ENTROPY_BACKWARD, DType::float32});
    Device dev = pxtest::device_under_test();
    Tensor l = zeros({3, 4}, dev), dloss = ones({3}, dev);
    Tensor labels = array(std::vector<int32_t>{0, 1, -2}, {3}, dev);
    Tensor g = Tensor::wrap([&](px_tensor** o) {
        return px_softmax_cross_entropy_backward(l.handle(), labels.handle(), dloss.handle(), o);
    });
    auto msg = pxtest::message_of<DeviceError>([&] { g.to_vector<float>(); });
    PX_REQUIRE_NAMES_OP(msg, "softmax_cross_entropy_backward");  // R9.1
    PX_REQUIRE_MENTIONS(msg, "label -2 in row 2");
}

namespace {
// log_softmax, softmax_cross_entropy and the latter's gradient of (rows,
// cols) logits on the device under test, in every float dtype, against
// float64 references computed here (a row holding a NaN is NaN throughout).
void check_softmax_ops(const std::vector<double>& logits, int rows, int cols, const std::vector<int64_t>& labels) {
    Device dev = pxtest::device_under_test();
    Tensor tl = array(labels, {rows}, dev);
    for (DType d : pxtest::float_dtypes()) {
    const std::vector<double> x = pxtest::rounded_to(logits, d);
    std::vector<double> want_ls(x.size()), want_loss(static_cast<size_t>(rows)), want_grad(x.size());
    for (int r = 0; r < rows; ++r) {
        const double* row = x.data() + size_t(r) * size_t(cols);
        double m = -INFINITY, s = 0;
        bool nan = false;
        for (int c = 0; c < cols; ++c) m = std::max(m, row[c]), nan = nan || std::isnan(row[c]);
        for (int c = 0; c < cols; ++c) s += std::exp(row[c] - m);
        for (int c = 0; c < cols; ++c) {
            const double ls = nan ? NAN : row[c] - m - std::log(s);
            want_ls[size_t(r * cols + c)] = ls;
            want_grad[size_t(r * cols + c)] = std::exp(ls) - (c == labels[size_t(r)] ? 1.0 : 0.0);
        }
        want_loss[size_t(r)] = -want_ls[size_t(r * cols + labels[size_t(r)])];
    }
        const double tol = pxtest::tolerance(d, 1e-5, 1e-12);
        // Made in each section: a device may lack d altogether.
        auto input = [&] { return array(x, {rows, cols}, dev).astype(d); };
        PX_OP_SECTION(PX_OP_LOG_SOFTMAX, d) { PX_REQUIRE_CLOSE(values(log_softmax(input())), want_ls, tol); }
        PX_OP_SECTION(PX_OP_SOFTMAX_CROSS_ENTROPY, d) {
            PX_REQUIRE_CLOSE(values(softmax_cross_entropy(input(), tl)), want_loss, tol);
        }
        PX_OP_SECTION(PX_OP_SOFTMAX_CROSS_ENTROPY_BACKWARD, d) {
            Tensor tx = input();
            tx.attach_grad();
            Tensor loss;
            {
                auto scope = autograd::record();
                loss = softmax_cross_entropy(tx, tl).sum();
            }
            loss.backward();
            PX_REQUIRE_CLOSE(values(tx.grad()), want_grad, tol);
        }
    }
}
}  // namespace

TEST_CASE("log-softmax and softmax cross-entropy over many rows match the reference", "[conformance][nn][R15]") {
    // 2000 rows of 20: enough work for a device's parallel path.
    const int rows = 2000, cols = 20;
    std::vector<int64_t> labels(rows);
    for (int r = 0; r < rows; ++r) labels[size_t(r)] = (r * 7) % cols;
    check_softmax_ops(random_values(size_t(rows) * cols, 41, -8, 8), rows, cols, labels);
}

TEST_CASE("log-softmax over long rows matches the reference and a NaN spoils only its own row", "[conformance][nn][R15]") {
    // Rows of 1037: longer than a CPU block of 512 and not a whole number of
    // vectors. Row 1 holds a NaN.
    const int rows = 3, cols = 1037;
    auto x = random_values(size_t(rows) * cols, 43, -30, 30);
    x[size_t(cols + 700)] = NAN;
    check_softmax_ops(x, rows, cols, {5, 1036, 0});
}

TEST_CASE("bias add and its gradient on a large batch match the reference", "[conformance][nn][R15]") {
    // (64, 16, 10, 10): 102,400 values, enough for a device's parallel path.
    Device dev = pxtest::device_under_test();
    const int n = 64, c = 16, hw = 100;
    // Multiples of 1/64: every float dtype holds them (bfloat16's 8 bits).
    auto x = sixty_fourths(random_values(size_t(n) * c * hw, 43, -2, 2)), b = sixty_fourths(random_values(c, 44, -1, 1));
    std::vector<double> want_y(x.size()), want_db(c, 0.0);
    for (int i = 0; i < n; ++i)
        for (int ch = 0; ch < c; ++ch)
            for (int k = 0; k < hw; ++k) {
                const size_t at = (size_t(i) * c + ch) * hw + k;
                want_y[at] = x[at] + b[size_t(ch)];
                want_db[size_t(ch)] += x[at];  // the gradient of x's sum, taking x as dy
            }
    for (DType d : pxtest::float_dtypes()) {
        auto input = [&] { return array(x, {n, c, 10, 10}, dev).astype(d); };
        PX_OP_SECTION(PX_OP_BIAS_ADD, d) {
            PX_REQUIRE_CLOSE(values(bias_add(input(), array(b, {c}, dev).astype(d))), want_y,
                             pxtest::tolerance(d, 1e-6, 1e-12));
        }
        PX_OP_SECTION(PX_OP_BIAS_GRAD, d) {
            Tensor tx = input();
            Tensor db = Tensor::wrap([&](px_tensor** o) { return px_bias_grad(tx.handle(), o); });
            PX_REQUIRE_CLOSE(values(db), want_db, pxtest::tolerance(d, 1e-5, 1e-12));
        }
    }
}

TEST_CASE("a dense layer's bias gradient on a large batch matches the reference", "[conformance][nn][R15]") {
    // (300, 700): the sums over the batch of each of 700 columns, enough
    // values for a device's parallel path and columns for several blocks.
    Device dev = pxtest::device_under_test();
    const int n = 300, c = 700;
    auto x = sixty_fourths(random_values(size_t(n) * c, 45, -2, 2));
    std::vector<double> want(c, 0.0);
    for (int i = 0; i < n; ++i)
        for (int ch = 0; ch < c; ++ch) want[size_t(ch)] += x[size_t(i) * c + size_t(ch)];
    for (DType d : pxtest::float_dtypes()) {
        PX_OP_SECTION(PX_OP_BIAS_GRAD, d) {
            Tensor tx = array(x, {n, c}, dev).astype(d);
            Tensor db = Tensor::wrap([&](px_tensor** o) { return px_bias_grad(tx.handle(), o); });
            REQUIRE(db.shape() == Shape{c});
            PX_REQUIRE_CLOSE(values(db), want, pxtest::tolerance(d, 1e-5, 1e-12));
        }
    }
}

TEST_CASE("gradients match finite differences", "[conformance][nn][grad][R15]") {
    PX_NEEDS({PX_OP_CONV2D_BACKWARD_INPUT, DType::float64}, {PX_OP_CONV2D_BACKWARD_WEIGHT, DType::float64},
             {PX_OP_MAX_POOL2D_BACKWARD, DType::float64}, {PX_OP_AVG_POOL2D_BACKWARD, DType::float64},
             {PX_OP_BIAS_GRAD, DType::float64}, {PX_OP_RELU_BACKWARD, DType::float64},
             {PX_OP_SIGMOID_BACKWARD, DType::float64}, {PX_OP_TANH_BACKWARD, DType::float64},
             {PX_OP_GEMM, DType::float64}, {PX_OP_LOG_SOFTMAX_BACKWARD, DType::float64},
             {PX_OP_SOFTMAX_CROSS_ENTROPY_BACKWARD, DType::float64});
    Device dev = pxtest::device_under_test();
    SECTION("conv2d, stride and padding") {
        check_gradients(dev, {rnd({2, 2, 5, 6}, 10), rnd({3, 2, 3, 2}, 11)}, [](const std::vector<Tensor>& t) {
            return weigh(conv2d(t[0], t[1], {2, 1}, {1, 0}), 12);
        });
    }
    SECTION("conv2d 1x1") {
        check_gradients(dev, {rnd({2, 3, 3, 3}, 13), rnd({2, 3, 1, 1}, 14)},
                        [](const std::vector<Tensor>& t) { return weigh(conv2d(t[0], t[1]), 15); });
    }
    SECTION("max and average pooling") {
        check_gradients(dev, {rnd({2, 2, 5, 5}, 16)}, [](const std::vector<Tensor>& t) {
            return weigh(max_pool2d(t[0], 2, 2), 17) + weigh(max_pool2d(t[0], 3, 2, 1), 18) +
                   weigh(avg_pool2d(t[0], 3, 2, 1), 19) + weigh(max_pool2d(t[0], 3, 2), 40) +
                   weigh(max_pool2d(t[0], {2, 3}, {2, 3}), 41) + weigh(avg_pool2d(t[0], {3, 2}, {1, 2}, {1, 0}), 42);
        });
    }
    SECTION("bias add and the activations") {
        check_gradients(dev, {rnd({3, 4, 2}, 20), rnd({4}, 21)}, [](const std::vector<Tensor>& t) {
            Tensor z = bias_add(t[0], t[1]);
            return weigh(z.relu(), 22) + weigh(z.sigmoid(), 23) + weigh(z.tanh(), 24);
        });
    }
    SECTION("gemm with every transpose, and a dense layer") {
        check_gradients(dev, {rnd({3, 4}, 25), rnd({4, 5}, 26), rnd({5, 4}, 27), rnd({4, 3}, 28)},
                        [](const std::vector<Tensor>& t) {
                            return weigh(gemm(t[0], t[1]), 29) + weigh(gemm(t[0], t[2], false, true), 30) +
                                   weigh(gemm(t[3], t[1], true, false), 31) + weigh(gemm(t[3], t[2], true, true), 32);
                        });
    }
    SECTION("log-softmax and softmax cross-entropy") {
        Tensor labels = array(std::vector<int64_t>{1, 0, 3}, {3}, dev);
        check_gradients(dev, {rnd({3, 4}, 33, -3, 3)}, [&](const std::vector<Tensor>& t) {
            return weigh(softmax_cross_entropy(t[0], labels), 34) + weigh(log_softmax(t[0]), 35);
        });
    }
    SECTION("slices, concat, max and min, batched matmul, several axes at once, pick") {
        PX_NEEDS({PX_OP_MATMUL, DType::float64}, {PX_OP_MAX, DType::float64}, {PX_OP_MIN, DType::float64},
                 {PX_OP_COPY, DType::float64}, {PX_OP_EQ, DType::float64});
        Tensor labels = array(std::vector<int64_t>{4, 0, 2, 1, 3, 3, 0, 1, 2, 4, 1, 0}, {12}, dev);
        check_gradients(dev, {rnd({4, 3, 5}, 71), rnd({2, 3, 5}, 72), rnd({4, 5, 2}, 73), rnd({5, 2}, 74)},
                        [&](const std::vector<Tensor>& t) {
                            const Tensor &a = t[0], &b = t[1], &c = t[2], &w = t[3];
                            return weigh(a.slice(1, 3), 75) + weigh(a.slice_axis(2, -4, 5, 2), 76) +
                                   weigh(a.slice_axis(0, 1, 4, 3), 85) + weigh(concat({a, b}, 0), 77) +
                                   weigh(concat({a, a.slice_axis(1, 0, 1)}, 1), 78) + weigh(a.max(1), 79) +
                                   a.min() * 3.0 + weigh(matmul(a, c), 80) + weigh(matmul(a, w), 81) +
                                   weigh(a.sum({0, 2}), 82) + weigh(a.mean({-1, 1}, true), 83) +
                                   weigh(pick(a.reshape({12, 5}), labels), 84);
                        });
    }
    SECTION("broadcasting arithmetic, reductions, reshape, transpose") {
        check_gradients(dev, {rnd({2, 3}, 36, 0.5, 2), rnd({3}, 37, 0.5, 2)}, [](const std::vector<Tensor>& t) {
            Tensor a = t[0], b = t[1];
            Tensor e = (a + b) * (a - b) / b + a.pow(b) + (2.0 - a) * 3.0 + (1.0 / a) + a.pow(2.0) +
                       a.scalar_op(PX_OP_POW, 2.0, true) + where(a > 1.0, a * 2.0, b * 1.0);
            return weigh(e, 38) + (a.exp() + a.log() + a.sqrt()).sum(1).mean() + weigh(a.transpose().reshape({3, 2}), 39) +
                   (-a).abs().sum();
        });
    }
}

TEST_CASE("dropout: the same mask forward and backward, the right rate, identity when predicting", "[conformance][nn][R15]") {
    PX_NEEDS({PX_OP_FILL, DType::float32}, {PX_OP_DROPOUT, DType::float32}, {PX_OP_DROPOUT_BACKWARD, DType::float32});
    Device dev = pxtest::device_under_test();
    Tensor x = full({100000}, 2.0, dev);
    Tensor same = dropout(x, 0.3);
    REQUIRE(same.is(x));  // outside record() (predicting) dropout does nothing
    x.attach_grad();
    Tensor y;
    {
        auto scope = autograd::record();
        y = dropout(x, 0.3);
    }
    y.backward(full({100000}, 3.0, dev));
    auto yv = y.to_vector<float>(), gv = x.grad().to_vector<float>();
    size_t kept = 0;
    for (size_t i = 0; i < yv.size(); ++i) {
        bool keep = yv[i] != 0;
        kept += keep;
        REQUIRE(yv[i] == Approx(keep ? 2.0 / 0.7 : 0.0));
        REQUIRE(gv[i] == Approx(keep ? 3.0 / 0.7 : 0.0));
    }
    REQUIRE(double(kept) / yv.size() == Approx(0.7).margin(0.01));
}

TEST_CASE("dropout drops exactly the elements px_dropout_keeps names, at any offset", "[conformance][nn][R15]") {
    // The mask is Philox's (plexus/philox.h), so every plugin drops the same
    // elements. 100,003 elements: no multiple of a vector or a chunk.
    Device dev = pxtest::device_under_test();
    const int64_t n = 100003;
    std::vector<double> x(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) x[size_t(i)] = double(i % 13) - 6.0;
    x[5] = NAN, x[6] = INFINITY, x[7] = -INFINITY, x[8] = NAN;
    for (DType d : pxtest::float_dtypes())
        for (double p : {0.3, 0.0, 0.9}) {
            INFO("p " << p);
            const double scale = 1.0 / (1.0 - p);
            auto input = [&] { return array(x, {n}, dev).astype(d); };
            auto check_mask = [&](const std::vector<double>& got, uint64_t seed, uint64_t offset) {
                for (int64_t i = 0; i < n; ++i) {
                    const bool keep = px_dropout_keeps(seed, offset, i, p);
                    const double want = keep ? x[size_t(i)] * scale : 0.0;  // a dropped NaN or Inf gives 0
                    INFO("element " << i << " (seed " << seed << ", offset " << offset << ")");
                    if (std::isnan(want)) REQUIRE(std::isnan(got[size_t(i)]));
                    else REQUIRE(got[size_t(i)] == Approx(want).epsilon(pxtest::tolerance(d, 1e-6, 1e-6)));
                }
            };
            PX_OP_SECTION(PX_OP_DROPOUT, d) {
                uint64_t seed = 0, offset = 0;
                Tensor tx = input();
                Tensor y = Tensor::wrap([&](px_tensor** o) { return px_dropout(tx.handle(), p, &seed, &offset, o); });
                check_mask(values(y), seed, offset);
            }
            PX_OP_SECTION(PX_OP_DROPOUT_BACKWARD, d) {
                Tensor tx = input();
                // Counters that cross 2^32 inside the tensor, and the top of the range.
                for (uint64_t offset : {(uint64_t(1) << 32) - 1000, ~uint64_t(0) - 50}) {
                    const uint64_t seed = 0x0123456789ABCDEFull;
                    Tensor dx = Tensor::wrap(
                        [&](px_tensor** o) { return px_dropout_backward(tx.handle(), p, seed, offset, o); });
                    check_mask(values(dx), seed, offset);
                }
            }
        }
}

TEST_CASE("sgd_update matches the host reference, with and without momentum", "[conformance][nn][R15]") {
    Device dev = pxtest::device_under_test();
    auto p0 = random_values(50, 40), g = random_values(50, 41);
    for (DType d : pxtest::float_dtypes()) PX_OP_SECTION(PX_OP_SGD_UPDATE, d) {
        Tensor p = array(p0, {50}, dev).astype(d), m = zeros({50}, dev, d), grad = array(g, {50}, dev).astype(d);
        Tensor plain = array(p0, {50}, dev).astype(d);
        std::vector<double> want = p0, mom(50, 0.0), want_plain = p0;
        for (int step = 0; step < 3; ++step) {
            check(px_sgd_update(p.handle(), grad.handle(), m.handle(), 0.1, 0.9, 0.01, 0.5));
            check(px_sgd_update(plain.handle(), grad.handle(), nullptr, 0.1, 0, 0.01, 0.5));
            for (size_t i = 0; i < 50; ++i) {
                double gi = 0.5 * g[i] + 0.01 * want[i];
                mom[i] = 0.9 * mom[i] + gi;
                want[i] -= 0.1 * mom[i];
                want_plain[i] -= 0.1 * (0.5 * g[i] + 0.01 * want_plain[i]);
            }
        }
        // Three steps, each rounding the parameter and momentum to d.
        double tol = pxtest::tolerance(d, 1e-6, 1e-12) * (pxtest::is_half(d) ? 4 : 1);
        PX_REQUIRE_CLOSE(values(p), want, tol);
        PX_REQUIRE_CLOSE(values(m), mom, tol);
        PX_REQUIRE_CLOSE(values(plain), want_plain, tol);
    }
}

// The update as every plugin must compute it, in T, each product and sum
// rounded on its own (this file is built with -ffp-contract=off).
template <class T>
void sgd_reference(std::vector<T>& p, std::vector<T>& m, const std::vector<T>& g, T lr, T mu, T wd, T rescale) {
    for (size_t i = 0; i < p.size(); ++i) {
        const T gi = rescale * g[i] + wd * p[i];
        if (m.empty()) {
            p[i] -= lr * gi;
        } else {
            m[i] = mu * m[i] + gi;
            p[i] -= lr * m[i];
        }
    }
}

// How many elements of `got` are not `want`'s bits, the first named.
template <class T>
size_t differing(const std::vector<double>& got, const std::vector<T>& want) {
    size_t n = 0;
    for (size_t i = 0; i < want.size(); ++i)
        if (got[i] != double(want[i]) && n++ == 0) UNSCOPED_INFO("first at " << i << ": " << std::setprecision(17) << got[i] << " not " << double(want[i]));
    return n;
}

TEST_CASE("sgd_update is the unfused formula bit for bit, so replicas on two plugins stay identical",
          "[conformance][nn][R15]") {
    // Data-parallel training updates each replica of a parameter on its own
    // device from one summed gradient: replicas on cpu(0) and gpu(0) stay
    // identical only if every plugin rounds the same steps. A multiply-add
    // fused where the CPU plugin rounds twice (nvcc's default) is off by an
    // ulp in about one element in ten: 4096 elements over 3 steps show it.
    Device dev = pxtest::device_under_test();
    const size_t n = 4096;
    auto p0 = random_values(n, 50, -2, 2), g0 = random_values(n, 51, -3, 3);
    // T: the dtype's arithmetic; S: its storage. float16 and bfloat16 run
    // the float32 formula on their values widened, each step's parameter
    // and momentum rounded back to S.
    auto run = [&](auto compute, auto storage, DType d) {
        using T = decltype(compute);
        using S = decltype(storage);
        auto held = [](std::vector<T>& v) {
            for (T& x : v) x = T(S(x));
        };
        std::vector<T> p, g, m(n, T(0)), none;
        for (size_t i = 0; i < n; ++i) p.push_back(T(S(p0[i]))), g.push_back(T(S(g0[i])));
        std::vector<T> plain = p;
        Tensor tp = array(p0, {int64_t(n)}, dev).astype(d), tm = zeros({int64_t(n)}, dev, d);
        Tensor tplain = array(p0, {int64_t(n)}, dev).astype(d), tg = array(g0, {int64_t(n)}, dev).astype(d);
        for (int step = 0; step < 3; ++step) {
            check(px_sgd_update(tp.handle(), tg.handle(), tm.handle(), 0.1, 0.9, 0.01, 0.5));
            check(px_sgd_update(tplain.handle(), tg.handle(), nullptr, 0.1, 0, 0.01, 0.5));
            sgd_reference<T>(p, m, g, T(0.1), T(0.9), T(0.01), T(0.5));
            sgd_reference<T>(plain, none, g, T(0.1), T(0), T(0.01), T(0.5));
            held(p), held(m), held(plain);
        }
        CHECK(differing(values(tp), p) == 0);
        CHECK(differing(values(tm), m) == 0);
        CHECK(differing(values(tplain), plain) == 0);
    };
    PX_OP_SECTION(PX_OP_SGD_UPDATE, DType::float32) run(float{}, float{}, DType::float32);
    PX_OP_SECTION(PX_OP_SGD_UPDATE, DType::float64) run(double{}, double{}, DType::float64);
    PX_OP_SECTION(PX_OP_SGD_UPDATE, DType::float16) run(float{}, float16{}, DType::float16);
    PX_OP_SECTION(PX_OP_SGD_UPDATE, DType::bfloat16) run(float{}, bfloat16{}, DType::bfloat16);
}

TEST_CASE("nn ops reject bad arguments before queuing anything", "[conformance][nn][errors][R5]") {
    PX_NEEDS({PX_OP_FILL, DType::float32}, {PX_OP_FILL, DType::int32}, {PX_OP_CONV2D, DType::float32});
    Device dev = pxtest::device_under_test();
    Tensor x = zeros({2, 3, 8, 8}, dev), w = zeros({4, 3, 3, 3}, dev);
    // The typed error is the contract (R5); the words are the host's, the
    // same on every device, and tested with the host.
    // conv2d: rank, channels, kernel larger than the input, bad stride, integer dtype, devices
    REQUIRE_THROWS_AS(conv2d(zeros({3, 8, 8}, dev), w), ShapeError);
    REQUIRE_THROWS_AS(conv2d(x, zeros({4, 2, 3, 3}, dev)), ShapeError);
    REQUIRE_THROWS_AS(conv2d(x, zeros({4, 3, 9, 9}, dev)), ShapeError);
    REQUIRE_THROWS_AS(conv2d(x, zeros({0, 3, 3, 3}, dev)), ShapeError);
    REQUIRE_THROWS_AS(conv2d(x, zeros({4, 3, 0, 3}, dev)), ShapeError);
    REQUIRE_THROWS_AS(conv2d(x, w, 0), InvalidArgumentError);
    REQUIRE_THROWS_AS(conv2d(x, w, 1, -1), InvalidArgumentError);
    REQUIRE_THROWS_AS(conv2d(x.astype(DType::int32), w.astype(DType::int32)), DTypeError);
    REQUIRE_THROWS_AS(conv2d(x, w.astype(DType::float64)), DTypeError);
    if (dev != cpu(0)) REQUIRE_THROWS_AS(conv2d(x, w.copyto(cpu(0))), DeviceMismatchError);
    // conv2d gradients: shapes that do not fit
    Tensor dy = zeros({2, 4, 6, 6}, dev);
    CHECK(px_conv2d_backward_input(dy.handle(), w.handle(), 9, 8, 1, 1, 0, 0, nullptr) == PX_ERROR_INVALID_ARGUMENT);
    px_tensor* out = nullptr;
    REQUIRE(px_conv2d_backward_input(dy.handle(), w.handle(), 9, 8, 1, 1, 0, 0, &out) == PX_ERROR_SHAPE);
    REQUIRE(px_conv2d_backward_input(dy.handle(), w.handle(), 0, 8, 1, 1, 0, 0, &out) == PX_ERROR_SHAPE);
    // Held by name: a temporary's release would succeed, and a success clears the last error (plexus.h).
    Tensor other_x = zeros({3, 3, 8, 8}, dev);
    REQUIRE(px_conv2d_backward_weight(dy.handle(), other_x.handle(), 3, 3, 1, 1, 0, 0, &out) == PX_ERROR_SHAPE);
    REQUIRE(px_conv2d_backward_weight(dy.handle(), x.handle(), 0, 3, 1, 1, 0, 0, &out) == PX_ERROR_SHAPE);
    REQUIRE(out == nullptr);
    // pooling: rank, window, padding over half the window, a gradient of the wrong shape, the wrong op
    REQUIRE_THROWS_AS(max_pool2d(zeros({8, 8}, dev), 2, 2), ShapeError);
    REQUIRE_THROWS_AS(max_pool2d(x, 0, 2), InvalidArgumentError);
    REQUIRE_THROWS_AS(avg_pool2d(x, 2, 2, 2), InvalidArgumentError);
    REQUIRE_THROWS_AS(max_pool2d(x, 9, 1), ShapeError);
    REQUIRE(px_pool2d_backward(PX_OP_MAX_POOL2D, x.handle(), x.handle(), 2, 2, 2, 2, 0, 0, &out) == PX_ERROR_SHAPE);
    REQUIRE(px_pool2d(PX_OP_ADD, x.handle(), 2, 2, 2, 2, 0, 0, &out) == PX_ERROR_INVALID_ARGUMENT);
    REQUIRE(px_pool2d_backward(PX_OP_SUM, x.handle(), x.handle(), 2, 2, 2, 2, 0, 0, &out) == PX_ERROR_INVALID_ARGUMENT);
    // bias: rank, length
    REQUIRE_THROWS_AS(bias_add(zeros({4}, dev), zeros({4}, dev)), ShapeError);
    REQUIRE_THROWS_AS(bias_add(x, zeros({4}, dev)), ShapeError);
    REQUIRE_THROWS_AS(bias_add(x, zeros({3, 1}, dev)), ShapeError);
    REQUIRE(px_bias_grad(zeros({3}, dev).handle(), &out) == PX_ERROR_SHAPE);
    // activation gradients: the wrong op, shapes that differ
    REQUIRE(px_activation_backward(PX_OP_EXP, x.handle(), x.handle(), &out) == PX_ERROR_INVALID_ARGUMENT);
    REQUIRE(px_activation_backward(PX_OP_RELU, x.handle(), w.handle(), &out) == PX_ERROR_SHAPE);
    // softmax: rank, labels of the wrong dtype, count or rank, a gradient of the wrong shape
    Tensor l = zeros({4, 10}, dev);
    // (the op takes (N, C); the C++ frontend's log_softmax views other ranks as rows)
    REQUIRE(px_log_softmax(zeros({10}, dev).handle(), &out) == PX_ERROR_SHAPE);
    REQUIRE_THROWS_AS(log_softmax(zeros({}, dev)), ShapeError);
    REQUIRE_THROWS_AS(softmax_cross_entropy(l, zeros({4}, dev)), DTypeError);
    REQUIRE_THROWS_AS(softmax_cross_entropy(l, zeros({3}, dev, DType::int32)), ShapeError);
    REQUIRE_THROWS_AS(softmax_cross_entropy(zeros({4, 0}, dev), zeros({4}, dev, DType::int32)), ShapeError);
    REQUIRE(px_softmax_cross_entropy_backward(l.handle(), zeros({4}, dev, DType::int32).handle(), zeros({5}, dev).handle(),
                                              &out) == PX_ERROR_SHAPE);
    REQUIRE(px_softmax_cross_entropy_backward(l.handle(), zeros({4}, dev, DType::int32).handle(),
                                              zeros({4}, dev, DType::float64).handle(), &out) == PX_ERROR_DTYPE);
    REQUIRE(px_log_softmax_backward(l.handle(), zeros({4, 9}, dev).handle(), &out) == PX_ERROR_SHAPE);
    // gemm: rank, inner dimensions
    REQUIRE_THROWS_AS(gemm(zeros({2, 3}, dev), zeros({2, 3}, dev)), ShapeError);
    REQUIRE_THROWS_AS(gemm(zeros({2, 3, 1}, dev), zeros({3, 3}, dev)), ShapeError);
    REQUIRE(gemm(zeros({2, 3}, dev), zeros({2, 3}, dev), false, true).shape() == Shape{2, 2});
    // dropout: p outside [0, 1)
    uint64_t s = 0, o = 0;
    REQUIRE(px_dropout(x.handle(), 1.0, &s, &o, &out) == PX_ERROR_INVALID_ARGUMENT);
    REQUIRE(px_dropout(x.handle(), -0.1, &s, &o, &out) == PX_ERROR_INVALID_ARGUMENT);
    REQUIRE(px_dropout(x.handle(), 0.5, nullptr, &o, &out) == PX_ERROR_INVALID_ARGUMENT);
    REQUIRE(px_dropout_backward(x.handle(), 1.5, 0, 0, &out) == PX_ERROR_INVALID_ARGUMENT);
    // sgd: shapes, dtypes, settings, a momentum buffer that is the parameter
    Tensor p = zeros({5}, dev), g = zeros({5}, dev);
    REQUIRE(px_sgd_update(p.handle(), zeros({4}, dev).handle(), nullptr, 0.1, 0, 0, 1) == PX_ERROR_SHAPE);
    REQUIRE(px_sgd_update(p.handle(), g.handle(), zeros({6}, dev).handle(), 0.1, 0.9, 0, 1) == PX_ERROR_SHAPE);
    REQUIRE(px_sgd_update(p.handle(), g.astype(DType::float64).handle(), nullptr, 0.1, 0, 0, 1) == PX_ERROR_DTYPE);
    REQUIRE(px_sgd_update(p.handle(), g.handle(), nullptr, -0.1, 0, 0, 1) == PX_ERROR_INVALID_ARGUMENT);
    REQUIRE(px_sgd_update(p.handle(), g.handle(), nullptr, 0.1, 1.5, 0, 1) == PX_ERROR_INVALID_ARGUMENT);
    REQUIRE(px_sgd_update(p.handle(), g.handle(), nullptr, 0.1, 0, -1, 1) == PX_ERROR_INVALID_ARGUMENT);
    REQUIRE(px_sgd_update(p.handle(), g.handle(), nullptr, 0.1, 0, 0, NAN) == PX_ERROR_INVALID_ARGUMENT);
    REQUIRE(px_sgd_update(p.handle(), g.handle(), p.handle(), 0.1, 0.9, 0, 1) == PX_ERROR_INVALID_ARGUMENT);
    REQUIRE(px_sgd_update(p.astype(DType::int32).handle(), g.astype(DType::int32).handle(), nullptr, 0.1, 0, 0, 1) ==
            PX_ERROR_DTYPE);
    REQUIRE(out == nullptr);
}

TEST_CASE("empty batches flow through the nn ops", "[conformance][nn][R15]") {
    PX_NEEDS({PX_OP_FILL, DType::float32}, {PX_OP_CONV2D, DType::float32}, {PX_OP_MAX_POOL2D, DType::float32},
             {PX_OP_GEMM, DType::float32}, {PX_OP_SOFTMAX_CROSS_ENTROPY, DType::float32});
    Device dev = pxtest::device_under_test();
    Tensor x = zeros({0, 3, 8, 8}, dev), w = ones({4, 3, 3, 3}, dev);
    REQUIRE(conv2d(x, w).shape() == Shape{0, 4, 6, 6});
    REQUIRE(max_pool2d(x, 2, 2).shape() == Shape{0, 3, 4, 4});
    Tensor dw = Tensor::wrap([&](px_tensor** o) {
        return px_conv2d_backward_weight(zeros({0, 4, 6, 6}, dev).handle(), x.handle(), 3, 3, 1, 1, 0, 0, o);
    });
    REQUIRE(values(dw) == std::vector<double>(4 * 3 * 3 * 3, 0.0));
    REQUIRE(values(Tensor::wrap([&](px_tensor** o) { return px_bias_grad(zeros({0, 3}, dev).handle(), o); })) ==
            std::vector<double>(3, 0.0));
    if (pxconf::runs(PX_OP_BIAS_RELU_MAX_POOL2D_BACKWARD, DType::float32)) {
        Tensor b = ones({3}, dev);
        REQUIRE(bias_relu_max_pool2d(x, b, 2, 2).shape() == Shape{0, 3, 4, 4});
        px_tensor *dx = nullptr, *db = nullptr;
        REQUIRE(px_bias_relu_max_pool2d_backward(x.handle(), b.handle(), zeros({0, 3, 4, 4}, dev).handle(), 2, 2, 2, 2,
                                                 0, 0, &dx, &db) == PX_OK);
        Tensor tdx(dx), tdb(db);  // each takes its reference
        REQUIRE(tdx.shape() == Shape{0, 3, 8, 8});
        REQUIRE(values(tdb) == std::vector<double>(3, 0.0));  // no gradient reaches the bias
        REQUIRE(tdb.device() == dev);
    }
}
