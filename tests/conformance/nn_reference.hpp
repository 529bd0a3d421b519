// Float64 host references for the nn conformance tests, written the plain
// way (loops over every index), independent of any plugin's kernels.
#pragma once

#include <cmath>
#include <functional>
#include <random>
#include <vector>

#include "plexus/plexus.hpp"

namespace pxtest {

inline std::vector<double> random_values(size_t n, uint64_t seed, double lo = -1, double hi = 1) {
    std::mt19937_64 g(seed);
    std::uniform_real_distribution<double> u(lo, hi);
    std::vector<double> v(n);
    for (auto& x : v) x = u(g);
    return v;
}

// conv2d on (N,C,H,W) x (O,C,KH,KW).
inline std::vector<double> conv2d_reference(const std::vector<double>& x, const std::vector<double>& w, int n, int c,
                                            int h, int wd, int o, int kh, int kw, int sh, int sw, int ph, int pw,
                                            int& oh, int& ow) {
    oh = (h + 2 * ph - kh) / sh + 1, ow = (wd + 2 * pw - kw) / sw + 1;
    std::vector<double> y(size_t(n) * o * oh * ow, 0.0);
    for (int b = 0; b < n; ++b)
        for (int f = 0; f < o; ++f)
            for (int i = 0; i < oh; ++i)
                for (int j = 0; j < ow; ++j) {
                    double s = 0;
                    for (int ch = 0; ch < c; ++ch)
                        for (int u = 0; u < kh; ++u)
                            for (int v = 0; v < kw; ++v) {
                                int yy = i * sh - ph + u, xx = j * sw - pw + v;
                                if (yy < 0 || yy >= h || xx < 0 || xx >= wd) continue;
                                s += x[((size_t(b) * c + ch) * h + yy) * wd + xx] * w[((size_t(f) * c + ch) * kh + u) * kw + v];
                            }
                    y[((size_t(b) * o + f) * oh + i) * ow + j] = s;
                }
    return y;
}

// The two gradients of conv2d_reference for an upstream gradient dy
// (N,O,OH,OW): dx (N,C,H,W) and dw (O,C,KH,KW), by the same loops.
inline void conv2d_gradients_reference(const std::vector<double>& x, const std::vector<double>& w,
                                       const std::vector<double>& dy, int n, int c, int h, int wd, int o, int kh,
                                       int kw, int sh, int sw, int ph, int pw, std::vector<double>& dx,
                                       std::vector<double>& dw) {
    const int oh = (h + 2 * ph - kh) / sh + 1, ow = (wd + 2 * pw - kw) / sw + 1;
    dx.assign(x.size(), 0.0);
    dw.assign(w.size(), 0.0);
    for (int b = 0; b < n; ++b)
        for (int f = 0; f < o; ++f)
            for (int i = 0; i < oh; ++i)
                for (int j = 0; j < ow; ++j) {
                    const double g = dy[((size_t(b) * o + f) * oh + i) * ow + j];
                    for (int ch = 0; ch < c; ++ch)
                        for (int u = 0; u < kh; ++u)
                            for (int v = 0; v < kw; ++v) {
                                int yy = i * sh - ph + u, xx = j * sw - pw + v;
                                if (yy < 0 || yy >= h || xx < 0 || xx >= wd) continue;
                                const size_t xi = ((size_t(b) * c + ch) * h + yy) * wd + xx;
                                const size_t wi = ((size_t(f) * c + ch) * kh + u) * kw + v;
                                dx[xi] += g * w[wi];
                                dw[wi] += g * x[xi];
                            }
                }
}

// A pooling window: size, stride and padding per axis.
struct PoolGeom {
    int kh, kw, sh, sw, ph, pw;
};

// Pooling on (N,C,H,W); average divides by the whole window.
inline std::vector<double> pool_reference(const std::vector<double>& x, int planes, int h, int w, PoolGeom g,
                                          bool is_max, int& oh, int& ow) {
    oh = (h + 2 * g.ph - g.kh) / g.sh + 1, ow = (w + 2 * g.pw - g.kw) / g.sw + 1;
    std::vector<double> y(size_t(planes) * oh * ow);
    for (int pl = 0; pl < planes; ++pl)
        for (int i = 0; i < oh; ++i)
            for (int j = 0; j < ow; ++j) {
                double best = -INFINITY, sum = 0;
                for (int u = 0; u < g.kh; ++u)
                    for (int v = 0; v < g.kw; ++v) {
                        int yy = i * g.sh - g.ph + u, xx = j * g.sw - g.pw + v;
                        if (yy < 0 || yy >= h || xx < 0 || xx >= w) continue;
                        double val = x[(size_t(pl) * h + yy) * w + xx];
                        best = std::max(best, val);
                        sum += val;
                    }
                y[(size_t(pl) * oh + i) * ow + j] = is_max ? best : sum / (g.kh * g.kw);
            }
    return y;
}

// Checks the gradients autograd computes for `f` (a scalar function of
// float64 tensors on `dev`) against central finite differences.
inline void check_gradients(plexus::Device dev, const std::vector<std::pair<plexus::Shape, std::vector<double>>>& inputs,
                            const std::function<plexus::Tensor(const std::vector<plexus::Tensor>&)>& f,
                            double tol = 1e-6) {
    using namespace plexus;
    auto make = [&](const std::vector<std::vector<double>>& vals) {
        std::vector<Tensor> ts;
        for (size_t i = 0; i < inputs.size(); ++i) ts.push_back(array(vals[i], inputs[i].first, dev));
        return ts;
    };
    std::vector<std::vector<double>> vals;
    for (auto& in : inputs) vals.push_back(in.second);
    std::vector<Tensor> ts = make(vals);
    for (auto& t : ts) t.attach_grad();
    Tensor y;
    {
        auto scope = autograd::record();
        y = f(ts);
    }
    y.backward();
    const double eps = 1e-6;
    for (size_t i = 0; i < ts.size(); ++i) {
        std::vector<double> analytic = ts[i].grad().to_vector<double>();
        REQUIRE(ts[i].grad().device() == dev);
        for (size_t j = 0; j < vals[i].size(); ++j) {
            auto plus = vals, minus = vals;
            plus[i][j] += eps, minus[i][j] -= eps;
            double numeric = (f(make(plus)).item<double>() - f(make(minus)).item<double>()) / (2 * eps);
            INFO("input " << i << ", element " << j << ": autograd " << analytic[j] << ", finite difference " << numeric);
            REQUIRE(std::fabs(analytic[j] - numeric) <= tol * (1 + std::fabs(numeric)));
        }
    }
}

}  // namespace pxtest
