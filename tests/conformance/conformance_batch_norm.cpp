// Conformance: batch normalisation (ABI 1.7). Statistics, the normalised
// output and both gradient ops against float64 host references in every
// float dtype, the gradients against finite differences in float64, and the
// errors the ops must raise.
#include <catch2/catch.hpp>

#include <cmath>

#include "conformance.hpp"
#include "nn_reference.hpp"

using namespace plexus;
using pxtest::check_gradients;
using pxtest::random_values;
using pxtest::values;

namespace {

// The float64 reference of every batch normalisation op on x (N,C,inner...).
struct Reference {
    int64_t n, c, inner;
    std::vector<double> x, dy, gamma, beta, mean, var, y, dx, dgamma, dbeta;

    Reference(std::vector<double> x_, std::vector<double> dy_, std::vector<double> gamma_, std::vector<double> beta_,
              int64_t n_, int64_t c_, int64_t inner_, double eps)
        : n(n_), c(c_), inner(inner_), x(std::move(x_)), dy(std::move(dy_)), gamma(std::move(gamma_)),
          beta(std::move(beta_)) {
        const double m = double(n * inner);
        mean.assign(size_t(c), 0), var.assign(size_t(c), 0), dgamma.assign(size_t(c), 0), dbeta.assign(size_t(c), 0);
        y.resize(x.size()), dx.resize(x.size());
        for_each([&](size_t i, size_t ch) { mean[ch] += x[i] / m; });
        for_each([&](size_t i, size_t ch) { var[ch] += (x[i] - mean[ch]) * (x[i] - mean[ch]) / m; });
        auto istd = [&](size_t ch) { return 1 / std::sqrt(var[ch] + eps); };
        for_each([&](size_t i, size_t ch) {
            const double xhat = (x[i] - mean[ch]) * istd(ch);
            y[i] = xhat * gamma[ch] + beta[ch];
            dbeta[ch] += dy[i];
            dgamma[ch] += dy[i] * xhat;
        });
        for_each([&](size_t i, size_t ch) {
            const double xhat = (x[i] - mean[ch]) * istd(ch);
            dx[i] = gamma[ch] * istd(ch) * (dy[i] - dbeta[ch] / m - xhat * dgamma[ch] / m);
        });
    }
    template <class F>
    void for_each(F&& f) const {
        for (int64_t s = 0; s < n; ++s)
            for (int64_t ch = 0; ch < c; ++ch)
                for (int64_t k = 0; k < inner; ++k) f(size_t((s * c + ch) * inner + k), size_t(ch));
    }
};

// x with channel ch offset by 10 * ch: statistics far from 0, where a
// one-pass variance (E[x^2] - mean^2) would lose digits.
std::vector<double> offset_channels(std::vector<double> x, int64_t n, int64_t c, int64_t inner) {
    for (int64_t s = 0; s < n; ++s)
        for (int64_t ch = 0; ch < c; ++ch)
            for (int64_t k = 0; k < inner; ++k) x[size_t((s * c + ch) * inner + k)] += 10.0 * double(ch);
    return x;
}

void check_batch_norm(Shape shape, uint64_t seed) {
    Device dev = pxtest::device_under_test();
    const int64_t n = shape[0], c = shape[1];
    int64_t inner = 1;
    for (size_t i = 2; i < shape.size(); ++i) inner *= shape[i];
    const size_t count = size_t(n * c * inner);
    const double eps = 1e-5;
    const auto x0 = offset_channels(random_values(count, seed, -2, 2), n, c, inner);
    const auto dy0 = random_values(count, seed + 1, -1, 1);
    const auto gamma0 = random_values(size_t(c), seed + 2, 0.5, 2), beta0 = random_values(size_t(c), seed + 3, -1, 1);
    for (DType d : pxtest::float_dtypes()) {
        // The reference takes the inputs as the device holds them.
        const Reference r(pxtest::rounded_to(x0, d), pxtest::rounded_to(dy0, d), pxtest::rounded_to(gamma0, d),
                          pxtest::rounded_to(beta0, d), n, c, inner, eps);
        auto make = [&](const std::vector<double>& v, Shape s) { return array(v, s, dev).astype(d); };
        auto channels = [&](const std::vector<double>& v) { return make(pxtest::rounded_to(v, d), {c}); };
        // Statistics rounded to d are what the device feeds the later ops;
        // in 16 bits the normalised values carry the rounding of x - mean.
        const double tol = pxtest::tolerance(d, 2e-5, 1e-11) * (pxtest::is_half(d) ? 16 : 1);
        PX_OP_SECTION(PX_OP_BATCH_NORM_STATS, d) {
            px_tensor *mean = nullptr, *var = nullptr;
            Tensor x = make(r.x, shape);
            check(px_batch_norm_stats(x.handle(), &mean, &var));
            Tensor tm(mean), tv(var);
            REQUIRE(tm.shape() == Shape{c});
            REQUIRE(tm.dtype() == d);
            PX_REQUIRE_CLOSE(values(tm), r.mean, pxtest::tolerance(d, 1e-6, 1e-12));
            PX_REQUIRE_CLOSE(values(tv), r.var, pxtest::tolerance(d, 1e-5, 1e-11));
        }
        PX_OP_SECTION(PX_OP_BATCH_NORM, d) {
            // By the statistics as d holds them (in float16 a mean near 150 moves by up to 1/16).
            const auto mean = pxtest::rounded_to(r.mean, d), var = pxtest::rounded_to(r.var, d);
            std::vector<double> want(r.x.size());
            r.for_each([&](size_t i, size_t ch) {
                want[i] = (r.x[i] - mean[ch]) / std::sqrt(var[ch] + eps) * r.gamma[ch] + r.beta[ch];
            });
            Tensor y = batch_norm(make(r.x, shape), make(mean, {c}), make(var, {c}), make(r.gamma, {c}),
                                  make(r.beta, {c}), eps);
            REQUIRE(y.shape() == shape);
            PX_REQUIRE_CLOSE(values(y), want, tol);
        }
        PX_OP_SECTION(PX_OP_BATCH_NORM_BACKWARD_REDUCE, d) {
            px_tensor *dgamma = nullptr, *dbeta = nullptr;
            Tensor x = make(r.x, shape), dy = make(r.dy, shape), m = channels(r.mean), v = channels(r.var),
                   g = make(r.gamma, {c});
            check(px_batch_norm_backward(x.handle(), dy.handle(), m.handle(), v.handle(), g.handle(), eps, nullptr,
                                         &dgamma, &dbeta));
            Tensor tg(dgamma), tb(dbeta);
            PX_REQUIRE_CLOSE(values(tb), r.dbeta, pxtest::tolerance(d, 1e-5, 1e-11));
            PX_REQUIRE_CLOSE(values(tg), r.dgamma, tol * double(n * inner) / 8);
        }
        PX_OP_SECTION(PX_OP_BATCH_NORM_BACKWARD, d) {
            PX_NEEDS({PX_OP_BATCH_NORM_BACKWARD_REDUCE, d});
            px_tensor *dx = nullptr, *dgamma = nullptr, *dbeta = nullptr;
            Tensor x = make(r.x, shape), dy = make(r.dy, shape), m = channels(r.mean), v = channels(r.var),
                   g = make(r.gamma, {c});
            check(px_batch_norm_backward(x.handle(), dy.handle(), m.handle(), v.handle(), g.handle(), eps, &dx,
                                         &dgamma, &dbeta));
            Tensor tx(dx), tg(dgamma), tb(dbeta);
            REQUIRE(tx.shape() == shape);
            PX_REQUIRE_CLOSE(values(tx), r.dx, tol * 4);
        }
    }
}

// A fixed random weighting, so that every output element matters to the loss.
Tensor weigh(const Tensor& y, uint64_t seed) {
    return (y * array(random_values(size_t(y.size()), seed), y.shape(), y.device())).sum();
}

}  // namespace

TEST_CASE("batch normalisation matches the host reference", "[conformance][nn][batch_norm][R15]") {
    SECTION("convolution maps (N,C,H,W)") { check_batch_norm({4, 3, 5, 7}, 60); }
    SECTION("a dense layer's (N,C)") { check_batch_norm({9, 5}, 61); }
    // 64 x 16 x 100: enough values for a device's parallel paths.
    SECTION("a large batch") { check_batch_norm({64, 16, 10, 10}, 62); }
}

TEST_CASE("batch normalisation's gradients match finite differences", "[conformance][nn][batch_norm][grad][R15]") {
    PX_NEEDS({PX_OP_BATCH_NORM_STATS, DType::float64}, {PX_OP_BATCH_NORM, DType::float64},
             {PX_OP_BATCH_NORM_BACKWARD_REDUCE, DType::float64}, {PX_OP_BATCH_NORM_BACKWARD, DType::float64});
    Device dev = pxtest::device_under_test();
    auto rnd = [](Shape s, uint64_t seed, double lo, double hi) {
        size_t n = 1;
        for (auto d : s) n *= size_t(d);
        return std::pair<Shape, std::vector<double>>{s, random_values(n, seed, lo, hi)};
    };
    SECTION("by the batch's statistics (training)") {
        check_gradients(dev, {rnd({3, 2, 2, 3}, 63, -2, 2), rnd({2}, 64, 0.5, 2), rnd({2}, 65, -1, 1)},
                        [](const std::vector<Tensor>& t) {
                            return weigh(batch_norm_by_batch(t[0], t[1], t[2], 1e-5).y, 66);
                        });
    }
    SECTION("by fixed statistics (predicting)") {
        Tensor mean = array(std::vector<double>{0.25, -0.5}, {2}, dev), var = array(std::vector<double>{0.5, 2.0}, {2}, dev);
        check_gradients(dev, {rnd({3, 2, 4}, 67, -2, 2), rnd({2}, 68, 0.5, 2), rnd({2}, 69, -1, 1)},
                        [&](const std::vector<Tensor>& t) { return weigh(batch_norm(t[0], mean, var, t[1], t[2], 1e-3), 70); });
    }
}

TEST_CASE("batch normalisation refuses bad arguments before queuing anything", "[conformance][nn][batch_norm][errors][R5]") {
    PX_NEEDS({PX_OP_BATCH_NORM, DType::float32}, {PX_OP_BATCH_NORM_STATS, DType::float32});
    Device dev = pxtest::device_under_test();
    Tensor x = ones({2, 3, 4}, dev), c3 = ones({3}, dev), c2 = ones({2}, dev);
    PX_REQUIRE_MENTIONS(pxtest::message_of<ShapeError>([&] { batch_norm(x, c3, c3, c2, c3, 1e-5); }),
                        "gamma (input 3) has shape (2,); the call needs (3,)");
    PX_REQUIRE_MENTIONS(pxtest::message_of<InvalidArgumentError>([&] { batch_norm(x, c3, c3, c3, c3, 0); }),
                        "eps 0 must be finite and > 0");
    PX_REQUIRE_MENTIONS(pxtest::message_of<InvalidArgumentError>([&] { batch_norm(x, c3, c3, c3, c3, NAN); }),
                        "must be finite and > 0");
    PX_REQUIRE_MENTIONS(pxtest::message_of<DTypeError>([&] { batch_norm(x, c3, c3, c3.astype(DType::float64), c3, 1e-5); }),
                        "float64");
    PX_REQUIRE_MENTIONS(pxtest::message_of<ShapeError>([&] { batch_norm(ones({3}, dev), c3, c3, c3, c3, 1e-5); }),
                        "must be 2-D or more");
    PX_REQUIRE_MENTIONS(pxtest::message_of<ShapeError>([&] { batch_norm_by_batch(ones({0, 3}, dev), c3, c3, 1e-5); }),
                        "no values per channel");
    px_tensor* same = nullptr;
    REQUIRE(px_batch_norm_stats(x.handle(), &same, &same) == PX_ERROR_INVALID_ARGUMENT);
    PX_REQUIRE_MENTIONS(px_last_error(), "mean and var point to the same place");
    REQUIRE(px_batch_norm_backward(x.handle(), x.handle(), c3.handle(), c3.handle(), c3.handle(), 1e-5, nullptr, &same,
                                   &same) == PX_ERROR_INVALID_ARGUMENT);
    REQUIRE(same == nullptr);
}

TEST_CASE("batch normalisation of an empty batch", "[conformance][nn][batch_norm][R15]") {
    PX_NEEDS({PX_OP_BATCH_NORM, DType::float32}, {PX_OP_BATCH_NORM_BACKWARD_REDUCE, DType::float32},
             {PX_OP_BATCH_NORM_BACKWARD, DType::float32});
    Device dev = pxtest::device_under_test();
    Tensor x = ones({0, 3, 2}, dev), c3 = ones({3}, dev);
    Tensor y = batch_norm(x, c3, c3, c3, c3, 1e-5);
    REQUIRE(y.shape() == Shape{0, 3, 2});
    px_tensor *dx = nullptr, *dgamma = nullptr, *dbeta = nullptr;
    check(px_batch_norm_backward(x.handle(), x.handle(), c3.handle(), c3.handle(), c3.handle(), 1e-5, &dx, &dgamma, &dbeta));
    Tensor tx(dx), tg(dgamma), tb(dbeta);
    REQUIRE(tx.shape() == Shape{0, 3, 2});
    REQUIRE(values(tg) == std::vector<double>{0, 0, 0});
    REQUIRE(values(tb) == std::vector<double>{0, 0, 0});
}
