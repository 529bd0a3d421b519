// Conformance: the optimizer steps of ABI 1.7, SGD with Nesterov momentum
// and Adam/AdamW. Like sgd_update (conformance_nn.cpp), each must be its
// formula in plugin.h bit for bit, every operation rounded on its own, so
// replicas of a parameter on devices of two plugins stay identical.
#include <catch2/catch.hpp>

#include <cmath>
#include <iomanip>

#include "conformance.hpp"
#include "nn_reference.hpp"

using namespace plexus;
using pxtest::random_values;
using pxtest::values;

namespace {

// How many elements of `got` are not `want`'s bits, the first named.
template <class T>
size_t differing(const std::vector<double>& got, const std::vector<T>& want) {
    size_t n = 0;
    for (size_t i = 0; i < want.size(); ++i)
        if (got[i] != double(want[i]) && n++ == 0)
            UNSCOPED_INFO("first at " << i << ": " << std::setprecision(17) << got[i] << " not " << double(want[i]));
    return n;
}

struct Adam {
    double lr, beta1, beta2, eps, wd, rescale;
    bool decoupled;
};

// plugin.h's Adam step in T (this file is built with -ffp-contract=off):
// the figures of settings alone as the host computes them in float64, each
// rounded once to T.
template <class T>
void adam_reference(std::vector<T>& p, std::vector<T>& m, std::vector<T>& v, const std::vector<T>& g, const Adam& a,
                    int64_t step) {
    const double product = a.lr * a.wd;
    const T rescale = T(a.rescale), wd = T(a.wd), b1 = T(a.beta1), b2 = T(a.beta2), rest1 = T(1 - a.beta1),
            rest2 = T(1 - a.beta2), eps = T(a.eps), decay = T(1 - product),
            size = T(a.lr / (1 - std::pow(a.beta1, double(step)))),
            root2 = T(std::sqrt(1 - std::pow(a.beta2, double(step))));
    for (size_t i = 0; i < p.size(); ++i) {
        T gi = rescale * g[i], pi = p[i];
        if (a.decoupled) pi = pi * decay;
        else gi = gi + wd * pi;
        m[i] = b1 * m[i] + rest1 * gi;
        v[i] = b2 * v[i] + (rest2 * gi) * gi;
        const T denom = std::sqrt(v[i]) / root2 + eps;
        p[i] = pi - size * (m[i] / denom);
    }
}

// plugin.h's NAG step in T.
template <class T>
void nag_reference(std::vector<T>& p, std::vector<T>& m, const std::vector<T>& g, T lr, T mu, T wd, T rescale) {
    for (size_t i = 0; i < p.size(); ++i) {
        const T gi = rescale * g[i] + wd * p[i];
        m[i] = mu * m[i] + gi;
        p[i] -= lr * (gi + mu * m[i]);
    }
}

}  // namespace

TEST_CASE("nag_update and adam_update are their unfused formulas bit for bit", "[conformance][nn][optimizers][R15]") {
    // 4096 elements over 3 steps: a multiply-add fused where the formula
    // rounds twice, or a reciprocal square root for sqrt then divide, shows.
    Device dev = pxtest::device_under_test();
    const size_t n = 4096;
    const int64_t len = int64_t(n);
    auto p0 = random_values(n, 70, -2, 2), g0 = random_values(n, 71, -3, 3);
    // T: the dtype's arithmetic; S: its storage (the 16-bit floats run the
    // float32 formula, each step's results rounded back to S).
    auto run = [&](auto compute, auto storage, DType d, int32_t op) {
        using T = decltype(compute);
        using S = decltype(storage);
        auto held = [](std::vector<T>& v) {
            for (T& x : v) x = T(S(x));
        };
        std::vector<T> p, g, m(n, T(0)), v(n, T(0));
        for (size_t i = 0; i < n; ++i) p.push_back(T(S(p0[i]))), g.push_back(T(S(g0[i])));
        Tensor tp = array(p0, {len}, dev).astype(d), tg = array(g0, {len}, dev).astype(d);
        if (op == PX_OP_NAG_UPDATE) {
            Tensor tm = zeros({len}, dev, d);
            for (int step = 0; step < 3; ++step) {
                check(px_nag_update(tp.handle(), tg.handle(), tm.handle(), 0.1, 0.9, 0.01, 0.5));
                nag_reference<T>(p, m, g, T(0.1), T(0.9), T(0.01), T(0.5));
                held(p), held(m);
            }
            CHECK(differing(values(tp), p) == 0);
            CHECK(differing(values(tm), m) == 0);
            return;
        }
        for (const bool decoupled : {false, true}) {
            INFO((decoupled ? "AdamW" : "Adam"));
            const Adam a{0.01, 0.9, 0.999, 1e-8, 0.05, 0.5, decoupled};
            std::vector<T> ap = p, am = m, av = v;
            Tensor tap = tp.copyto(dev), state = zeros({2, len}, dev, d);
            for (int64_t step = 1; step <= 3; ++step) {
                check(px_adam_update(tap.handle(), tg.handle(), state.handle(), a.lr, a.beta1, a.beta2, a.eps, a.wd,
                                     a.rescale, step, decoupled));
                adam_reference<T>(ap, am, av, g, a, step);
                held(ap), held(am), held(av);
            }
            CHECK(differing(values(tap), ap) == 0);
            std::vector<T> moments = am;
            moments.insert(moments.end(), av.begin(), av.end());
            CHECK(differing(values(state), moments) == 0);
        }
    };
    for (const int32_t op : {PX_OP_NAG_UPDATE, PX_OP_ADAM_UPDATE}) {
        PX_OP_SECTION(px_op(op), DType::float32) run(float{}, float{}, DType::float32, op);
        PX_OP_SECTION(px_op(op), DType::float64) run(double{}, double{}, DType::float64, op);
        PX_OP_SECTION(px_op(op), DType::float16) run(float{}, float16{}, DType::float16, op);
        PX_OP_SECTION(px_op(op), DType::bfloat16) run(float{}, bfloat16{}, DType::bfloat16, op);
    }
}

TEST_CASE("adam_update's first step moves each parameter by about the learning rate", "[conformance][nn][optimizers][R15]") {
    // Hand-computed: at step 1 the bias corrections make m / sqrt(v) = g / |g|,
    // so p moves by lr * sign(g) (less eps's share), whatever g's size.
    PX_NEEDS({PX_OP_ADAM_UPDATE, DType::float64});
    Device dev = pxtest::device_under_test();
    Tensor p = array(std::vector<double>{1, 1, 1}, {3}, dev), g = array(std::vector<double>{1e-3, -50, 2}, {3}, dev);
    Tensor state = zeros({2, 3}, dev, DType::float64);
    check(px_adam_update(p.handle(), g.handle(), state.handle(), 0.1, 0.9, 0.999, 1e-12, 0, 1, 1, 0));
    PX_REQUIRE_CLOSE(values(p), (std::vector<double>{0.9, 1.1, 0.9}), 1e-8);
    PX_REQUIRE_CLOSE(values(state), (std::vector<double>{1e-4, -5, 0.2, 1e-9, 2.5, 4e-3}), 1e-12);
}
