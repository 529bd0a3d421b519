#include "bench_layer_ops.hpp"


#include <string>
#include <vector>

#include "bench_util.hpp"
#include "raw_blas.hpp"
#include "plexus/philox.h"
#include "plexus/nn.hpp"

using namespace plexus;

namespace pxbench {

namespace {

// A 2x2/2 pooling geometry over planes of h x w (both even).
struct Planes {
    int64_t n, c, h, w;
    int64_t cells() const { return n * c * h * w; }
    int64_t pooled() const { return cells() / 4; }
    std::string str() const {
        return "(" + std::to_string(n) + "," + std::to_string(c) + "," + std::to_string(h) + "," + std::to_string(w) + ")";
    }
};

// The raw baselines: plain OpenMP loops that read and write the same bytes
// as the op they stand beside, without its comparisons, so the ratio says
// how far the op is from the memory traffic it cannot avoid.

// (A select here, `y > 0 ? dy : 0`, is what the relu gradient computes, but
// GCC compiles it to a branch that mispredicts on random signs: 10x slower.)
void raw_relu_grad(const float* y, const float* dy, float* dx, int64_t n) {
#pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < n; ++i) dx[i] = y[i] * dy[i];
}

// body(plane, the first row's offset, the first row, the second row, the
// offset of the windows' row in a quarter-size tensor) for every pair of rows of every plane, over OpenMP.
template <class Body>
void for_each_row_pair(const Planes& p, const float* x, Body&& body) {
    const int64_t oh = p.h / 2, ow = p.w / 2;
#pragma omp parallel for schedule(static)
    for (int64_t plane = 0; plane < p.n * p.c; ++plane)
        for (int64_t i = 0; i < oh; ++i) {
            const int64_t row = (plane * p.h + 2 * i) * p.w;
            body(plane, row, x + row, x + row + p.w, (plane * oh + i) * ow);
        }
}

// dx (h x w per plane) from x and a quarter-size dy: every byte a 2x2 pooling
// gradient touches, each dx cell written once.
void raw_pool_grad(const Planes& p, const float* x, const float* dy, float* dx) {
    const int64_t ow = p.w / 2;
    for_each_row_pair(p, x, [&](int64_t, int64_t row, const float* x0, const float* x1, int64_t at) {
        const float* g = dy + at;
        float* d0 = dx + row;
        float* d1 = d0 + p.w;
#pragma omp simd
        for (int64_t j = 0; j < ow; ++j) {
            d0[2 * j] = x0[2 * j] * g[j];
            d0[2 * j + 1] = x0[2 * j + 1] * g[j];
            d1[2 * j] = x1[2 * j] * g[j];
            d1[2 * j + 1] = x1[2 * j + 1] * g[j];
        }
    });
}

// y (a quarter of x) = the sum of each 2x2 window + the channel's bias.
void raw_pool_forward(const Planes& p, const float* x, const float* b, float* y) {
    const int64_t ow = p.w / 2;
    for_each_row_pair(p, x, [&](int64_t plane, int64_t, const float* x0, const float* x1, int64_t at) {
        float* out = y + at;
        const float bias = b[plane % p.c];
#pragma omp simd
        for (int64_t j = 0; j < ow; ++j) out[j] = x0[2 * j] + x0[2 * j + 1] + x1[2 * j] + x1[2 * j + 1] + bias;
    });
}

// Runs `ours` and `raw` `burst` times per sample, interleaved; reports microseconds per call.
void report_pair(const std::string& name, int reps, int burst, Device dev, const std::function<void()>& ours,
                 const std::function<void()>& raw, const std::string& baseline, bool json) {
    auto [o, r] = interleaved(
        reps,
        [&] {
            for (int i = 0; i < burst; ++i) ours();
            synchronize(dev);
        },
        [&] {
            for (int i = 0; i < burst; ++i) raw();
            synchronize(dev);  // where the baseline is a Plexus op too
        });
    report({name, "us", o / burst * 1e6, r / burst * 1e6, baseline, "time: lower is better"}, json);
}

// Dropout the plain way: one px_dropout_keeps (plexus/philox.h) per element.
void raw_dropout(const float* x, float* y, int64_t n, uint64_t seed, uint64_t offset, double p) {
    const float scale = float(1.0 / (1.0 - p));
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) y[i] = px_dropout_keeps(seed, offset, i, p) ? x[i] * scale : 0.0f;
}

Tensor activation_grad(const Tensor& y, const Tensor& dy) {
    return Tensor::wrap([&](px_tensor** o) { return px_activation_backward(PX_OP_RELU, y.handle(), dy.handle(), o); });
}

Tensor max_pool_grad(const Tensor& x, const Tensor& dy) {
    return Tensor::wrap(
        [&](px_tensor** o) { return px_pool2d_backward(PX_OP_MAX_POOL2D, x.handle(), dy.handle(), 2, 2, 2, 2, 0, 0, o); });
}

// The fused op and its gradient on planes p, beside the raw loops; with
// `unfused`, also the three ops it stands for.
void fused_rows(Device dev, const Planes& p, int reps, int burst, bool unfused, bool json) {
    Tensor x = random_normal({p.n, p.c, p.h, p.w}, 0, 1, dev), b = random_normal({p.c}, 0, 0.1, dev);
    Tensor dy = random_normal({p.n, p.c, p.h / 2, p.w / 2}, 0, 1, dev), keep;
    const std::vector<float> hx = x.to_vector<float>(), hb = b.to_vector<float>(), hdy = dy.to_vector<float>();
    std::vector<float> out_full(hx.size()), out_pooled(hdy.size());
    report_pair("bias+relu+max-pool 2x2 " + p.str(), reps, burst, dev,
                [&] { keep = bias_relu_max_pool2d(x, b, 2, 2); },
                [&] { raw_pool_forward(p, hx.data(), hb.data(), out_pooled.data()); }, "raw loop, same bytes", json);
    if (unfused)
        report_pair("bias+relu+max-pool 2x2, as three ops", reps, burst, dev,
                    [&] { keep = max_pool2d(bias_add(x, b).relu(), 2, 2); },
                    [&] { keep = bias_relu_max_pool2d(x, b, 2, 2); }, "the fused op", json);
    px_tensor *gx = nullptr, *gb = nullptr;
    report_pair("its gradient (dx, db) " + p.str(), reps, burst, dev,
                [&] {
                    check(px_bias_relu_max_pool2d_backward(x.handle(), b.handle(), dy.handle(), 2, 2, 2, 2, 0, 0, &gx, &gb));
                    Tensor tx(gx), tb(gb);  // released at once: the next call allocates anew
                },
                [&] { raw_pool_grad(p, hx.data(), hdy.data(), out_full.data()); }, "raw loop, same bytes", json);
}

// A stride-1 convolution without padding: n images of c planes h x h, o
// outputs, k x k taps.
struct Conv {
    int64_t n, c, h, o, k;
    int64_t oh() const { return h - k + 1; }
    int64_t taps() const { return c * k * k; }
    int64_t positions() const { return n * oh() * oh(); }
    std::string str() const {
        return "(" + std::to_string(n) + "," + std::to_string(c) + "," + std::to_string(h) + "," + std::to_string(h) +
               ") k" + std::to_string(k) + " -> " + std::to_string(o);
    }
};

// conv2d and its two gradients, each beside one cblas_sgemm of the same
// multiply-adds on operands already laid out as im2col would lay them (the
// im2col itself not counted): how near each op is to OpenBLAS's own speed
// on the same work.
void conv_rows(Device dev, const Conv& v, int reps, int burst, bool json) {
    Tensor x = random_normal({v.n, v.c, v.h, v.h}, 0, 1, dev), w = random_normal({v.o, v.c, v.k, v.k}, 0, 0.1, dev);
    Tensor dy = random_normal({v.n, v.o, v.oh(), v.oh()}, 0, 1, dev), keep;
    const int m = int(v.o), taps = int(v.taps()), pos = int(v.positions());
    std::vector<float> cols(size_t(taps) * size_t(pos), 0.5f), outs(size_t(m) * size_t(pos), 0.25f), wt(size_t(m) * size_t(taps));
    const std::string gemm = "cblas_sgemm, same multiply-adds";
    report_pair("conv2d " + v.str(), reps, burst, dev, [&] { keep = conv2d(x, w); },
                [&] {  // y[o x pos] = w[o x taps] cols[taps x pos]
                    raw_sgemm()(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, pos, taps, 1.0f, wt.data(), taps, cols.data(),
                                pos, 0.0f, outs.data(), pos);
                },
                gemm, json);
    report_pair("its input gradient", reps, burst, dev,
                [&] {
                    keep = Tensor::wrap([&](px_tensor** o) {
                        return px_conv2d_backward_input(dy.handle(), w.handle(), v.h, v.h, 1, 1, 0, 0, o);
                    });
                },
                [&] {  // dcols[taps x pos] = w^T dy[o x pos]
                    raw_sgemm()(CblasRowMajor, CblasTrans, CblasNoTrans, taps, pos, m, 1.0f, wt.data(), taps, outs.data(),
                                pos, 0.0f, cols.data(), pos);
                },
                gemm, json);
    report_pair("its weight gradient", reps, burst, dev,
                [&] {
                    keep = Tensor::wrap([&](px_tensor** o) {
                        return px_conv2d_backward_weight(dy.handle(), x.handle(), v.k, v.k, 1, 1, 0, 0, o);
                    });
                },
                [&] {  // dw[o x taps] = dy[o x pos] cols^T
                    raw_sgemm()(CblasRowMajor, CblasNoTrans, CblasTrans, m, taps, pos, 1.0f, outs.data(), pos, cols.data(),
                                pos, 0.0f, wt.data(), taps);
                },
                gemm, json);
}

}  // namespace

void bench_layer_ops(Device dev, bool quick, bool json) {
    // LeNet's two layers at batch 256 (the first has its largest
    // activations); --quick a smaller batch.
    const int64_t batch = quick ? 16 : 256;
    const Planes first{batch, 6, 24, 24}, second{batch, 16, 10, 10};
    const int reps = quick ? 3 : 15, burst = quick ? 2 : 10;
    seed(3);
    // Half the values negative, in no order: every branch a coin toss.
    Tensor x = random_normal({first.n, first.c, first.h, first.w}, 0, 1, dev);
    Tensor g = random_normal({first.n, first.c, first.h, first.w}, 0, 1, dev);
    Tensor dy = random_normal({first.n, first.c, first.h / 2, first.w / 2}, 0, 1, dev), keep;
    const std::vector<float> hx = x.to_vector<float>(), hg = g.to_vector<float>(), hdy = dy.to_vector<float>();
    std::vector<float> out(hx.size());
    report_pair("relu gradient " + first.str(), reps, burst, dev, [&] { keep = activation_grad(x, g); },
                [&] { raw_relu_grad(hx.data(), hg.data(), out.data(), first.cells()); }, "raw loop, same bytes", json);
    report_pair("max-pool 2x2 gradient " + first.str(), reps, burst, dev, [&] { keep = max_pool_grad(x, dy); },
                [&] { raw_pool_grad(first, hx.data(), hdy.data(), out.data()); }, "raw loop, same bytes", json);
    // Dropout after a 1024-unit dense layer (as in seed 002's MLP with dropout).
    const int64_t units = quick ? 64 * 1024 : 256 * 1024;
    Tensor d = random_normal({units / 1024, 1024}, 0, 1, dev);
    const std::vector<float> hd = d.to_vector<float>();
    std::vector<float> dropped(hd.size());
    uint64_t dseed = 0, doffset = 0;
    report_pair("dropout p=0.5 (" + std::to_string(units / 1024) + ",1024)", reps, burst, dev,
                [&] { keep = Tensor::wrap([&](px_tensor** o) { return px_dropout(d.handle(), 0.5, &dseed, &doffset, o); }); },
                [&] { raw_dropout(hd.data(), dropped.data(), units, dseed, doffset, 0.5); },
                "px_dropout_keeps loop", json);
    // LeNet's two convolutions.
    conv_rows(dev, Conv{batch, 1, 28, 6, 5}, reps, burst, json);
    conv_rows(dev, Conv{batch, 6, 12, 16, 3}, reps, burst, json);
    if (!supports(dev, PX_OP_BIAS_RELU_MAX_POOL2D, PX_FLOAT32)) {
        if (!json) std::printf("(%s lacks the fused bias + relu + max-pool op: its rows are not measured)\n", dev.str().c_str());
        return;
    }
    fused_rows(dev, first, reps, burst, true, json);
    fused_rows(dev, second, reps, burst, false, json);
}

}  // namespace pxbench
