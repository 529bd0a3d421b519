// plexus C++ frontend: the neural-network ops (conv2d, pooling, bias,
// losses, dropout), differentiable, on the device of their inputs.
#pragma once

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "plexus/cpp/gradients.hpp"

namespace plexus {

// Two values, one per spatial axis (height, width).
struct Pair2 {
    int h = 0, w = 0;
    Pair2() = default;
    Pair2(int both) : h(both), w(both) {}  // NOLINT: 2 means (2, 2), as in Gluon
    Pair2(int h_, int w_) : h(h_), w(w_) {}
};

// x (N,C,H,W) with weight w (O,C,KH,KW) -> (N,O,OH,OW).
inline Tensor conv2d(const Tensor& x, const Tensor& w, Pair2 stride = 1, Pair2 pad = 0) {
    Tensor out = Tensor::wrap([&](px_tensor** o) {
        return px_conv2d(x.need(), w.need(), stride.h, stride.w, pad.h, pad.w, o);
    });
    if (!autograd::detail::wanted({&x, &w})) return out;
    Tensor xd = x.detach(), wd = w.detach();
    const bool need_dx = autograd::detail::needs_grad(&x);  // the first layer's input usually needs none
    autograd::detail::record(out, {&x, &w}, [xd, wd, stride, pad, need_dx](const Tensor& dy) {
        Shape xs = xd.shape(), ws = wd.shape();
        Tensor dx;
        if (need_dx)
            dx = Tensor::wrap([&](px_tensor** o) {
                return px_conv2d_backward_input(dy.handle(), wd.handle(), xs[2], xs[3], stride.h, stride.w, pad.h,
                                                pad.w, o);
            });
        Tensor dw = Tensor::wrap([&](px_tensor** o) {
            return px_conv2d_backward_weight(dy.handle(), xd.handle(), ws[2], ws[3], stride.h, stride.w, pad.h, pad.w,
                                             o);
        });
        return std::vector<Tensor>{dx, dw};
    }, "conv2d", {xd, wd});
    return out;
}

// The transposed convolution (Gluon's Conv2DTranspose, MXNet's deconvolution):
// x (N,C,H,W) with weight w (C,O,KH,KW) -> (N,O,OH,OW), OH = (H - 1) stride -
// 2 pad + KH + output_padding (output_padding below stride). It is the
// gradient of conv2d with respect to its input, so it runs as that op; its own
// gradients are a convolution (for x) and conv2d's weight gradient (for w).
inline Tensor conv2d_transpose(const Tensor& x, const Tensor& w, Pair2 stride = 1, Pair2 pad = 0,
                               Pair2 output_padding = 0) {
    const Shape xs = x.shape(), ws = w.shape();
    if (xs.size() != 4 || ws.size() != 4)
        throw ShapeError(PX_ERROR_SHAPE, "conv2d_transpose: takes x (N, C, H, W) and weight (C, O, KH, KW), got " +
                                             str(xs) + " and " + str(ws));
    if (output_padding.h < 0 || output_padding.w < 0 || output_padding.h >= std::max(stride.h, 1) ||
        output_padding.w >= std::max(stride.w, 1))
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT,
                                   "conv2d_transpose: output_padding (" + std::to_string(output_padding.h) + ", " +
                                       std::to_string(output_padding.w) + ") must be >= 0 and below the stride (" +
                                       std::to_string(stride.h) + ", " + std::to_string(stride.w) + ")");
    const int64_t out_h = (xs[2] - 1) * stride.h - 2 * int64_t(pad.h) + ws[2] + output_padding.h;
    const int64_t out_w = (xs[3] - 1) * stride.w - 2 * int64_t(pad.w) + ws[3] + output_padding.w;
    if (out_h < 1 || out_w < 1)
        throw ShapeError(PX_ERROR_SHAPE, "conv2d_transpose: the output of " + str(xs) + " by kernel " +
                                             std::to_string(ws[2]) + "x" + std::to_string(ws[3]) + " would be " +
                                             std::to_string(out_h) + "x" + std::to_string(out_w));
    Tensor out = Tensor::wrap([&](px_tensor** o) {
        return px_conv2d_backward_input(x.need(), w.need(), out_h, out_w, stride.h, stride.w, pad.h, pad.w, o);
    });
    if (!autograd::detail::wanted({&x, &w})) return out;
    Tensor xd = x.detach(), wd = w.detach();
    autograd::detail::record(out, {&x, &w}, [xd, wd, stride, pad](const Tensor& dy) {
        const Tensor dx = Tensor::wrap([&](px_tensor** o) {
            return px_conv2d(dy.handle(), wd.handle(), stride.h, stride.w, pad.h, pad.w, o);
        });
        const Shape ws = wd.shape();
        const Tensor dw = Tensor::wrap([&](px_tensor** o) {
            return px_conv2d_backward_weight(xd.handle(), dy.handle(), ws[2], ws[3], stride.h, stride.w, pad.h, pad.w,
                                             o);
        });
        return std::vector<Tensor>{dx, dw};
    }, "conv2d_transpose", {xd, wd});
    return out;
}

// op is PX_OP_MAX_POOL2D or PX_OP_AVG_POOL2D.
inline Tensor pool2d(px_op op, const Tensor& x, Pair2 size, Pair2 stride, Pair2 pad = 0) {
    Tensor out = Tensor::wrap([&](px_tensor** o) {
        return px_pool2d(op, x.need(), size.h, size.w, stride.h, stride.w, pad.h, pad.w, o);
    });
    if (!autograd::detail::wanted({&x})) return out;
    Tensor xd = x.detach();
    autograd::detail::record(out, {&x}, [op, xd, size, stride, pad](const Tensor& dy) {
        return grad_rules::one(Tensor::wrap([&](px_tensor** o) {
            return px_pool2d_backward(op, xd.handle(), dy.handle(), size.h, size.w, stride.h, stride.w, pad.h, pad.w, o);
        }));
    }, px_op_name(op), {xd});
    return out;
}
inline Tensor max_pool2d(const Tensor& x, Pair2 size, Pair2 stride, Pair2 pad = 0) {
    return pool2d(PX_OP_MAX_POOL2D, x, size, stride, pad);
}
inline Tensor avg_pool2d(const Tensor& x, Pair2 size, Pair2 stride, Pair2 pad = 0) {
    return pool2d(PX_OP_AVG_POOL2D, x, size, stride, pad);
}

// x (N,C,...) + b (C) along axis 1.
inline Tensor bias_add(const Tensor& x, const Tensor& b) {
    Tensor out = Tensor::wrap([&](px_tensor** o) { return px_bias_add(x.need(), b.need(), o); });
    if (!autograd::detail::wanted({&x, &b})) return out;
    autograd::detail::record(out, {&x, &b}, [](const Tensor& dy) {
        return std::vector<Tensor>{dy, Tensor::wrap([&](px_tensor** o) { return px_bias_grad(dy.handle(), o); })};
    }, "bias_add");
    return out;
}

// max_pool2d(relu(bias_add(x, b)), size, stride, pad), as one op (one pass
// over x each way) where x's device offers PX_OP_BIAS_RELU_MAX_POOL2D, else
// through those three ops. The values are the same either way.
inline Tensor bias_relu_max_pool2d(const Tensor& x, const Tensor& b, Pair2 size, Pair2 stride, Pair2 pad = 0) {
    if (!supports(x.device(), PX_OP_BIAS_RELU_MAX_POOL2D, static_cast<px_dtype>(x.dtype())))
        return max_pool2d(bias_add(x, b).relu(), size, stride, pad);
    Tensor out = Tensor::wrap([&](px_tensor** o) {
        return px_bias_relu_max_pool2d(x.need(), b.need(), size.h, size.w, stride.h, stride.w, pad.h, pad.w, o);
    });
    if (!autograd::detail::wanted({&x, &b})) return out;
    Tensor xd = x.detach(), bd = b.detach();
    autograd::detail::record(out, {&x, &b}, [xd, bd, size, stride, pad](const Tensor& dy) {
        px_tensor *dx = nullptr, *db = nullptr;
        check(px_bias_relu_max_pool2d_backward(xd.handle(), bd.handle(), dy.handle(), size.h, size.w, stride.h,
                                               stride.w, pad.h, pad.w, &dx, &db));
        return std::vector<Tensor>{Tensor(dx), Tensor(db)};
    }, "bias_relu_max_pool2d", {xd, bd});
    return out;
}

// Over the last axis: of (N,C) by the op, of any other rank >= 1 as the
// rows (every leading axis together) of a view of it.
inline Tensor log_softmax(const Tensor& x) {
    const Shape s = x.shape();
    if (!s.empty() && s.size() != 2) {
        int64_t rows = 1;
        for (size_t i = 0; i + 1 < s.size(); ++i) rows *= s[i];
        return log_softmax(x.reshape({rows, s.back()})).reshape(s);
    }
    Tensor out = Tensor::wrap([&](px_tensor** o) { return px_log_softmax(x.need(), o); });
    if (!autograd::detail::wanted({&x})) return out;
    Tensor y = out.detach();
    autograd::detail::record(out, {&x}, [y](const Tensor& dy) {
        return grad_rules::one(Tensor::wrap([&](px_tensor** o) {
            return px_log_softmax_backward(y.handle(), dy.handle(), o);
        }));
    }, "log_softmax", {y});
    return out;
}

// Per-row -log softmax(logits)[label]; labels (N) int32 or int64.
inline Tensor softmax_cross_entropy(const Tensor& logits, const Tensor& labels) {
    Tensor out = Tensor::wrap([&](px_tensor** o) {
        return px_softmax_cross_entropy(logits.need(), labels.need(), o);
    });
    if (!autograd::detail::wanted({&logits})) return out;
    Tensor l = logits.detach(), y = labels.detach();
    autograd::detail::record(out, {&logits}, [l, y](const Tensor& dloss) {
        return grad_rules::one(Tensor::wrap([&](px_tensor** o) {
            return px_softmax_cross_entropy_backward(l.handle(), y.handle(), dloss.handle(), o);
        }));
    }, "softmax_cross_entropy", {l, y});
    return out;
}

// Drops each element with probability p while training (autograd::is_training()),
// scaling the rest by 1/(1-p); the identity otherwise.
inline Tensor dropout(const Tensor& x, double p) {
    // Refused in every mode (px_dropout refuses it when training).
    if (!(p >= 0 && p < 1))
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT,
                                   "dropout: the drop probability " + std::to_string(p) + " is not in [0, 1)");
    if (!autograd::is_training() || p == 0) return x;
    uint64_t seed = 0, offset = 0;
    Tensor out = Tensor::wrap([&](px_tensor** o) { return px_dropout(x.need(), p, &seed, &offset, o); });
    if (!autograd::detail::wanted({&x})) return out;
    autograd::detail::record(out, {&x}, [p, seed, offset](const Tensor& dy) {
        return grad_rules::one(Tensor::wrap([&](px_tensor** o) {
            return px_dropout_backward(dy.handle(), p, seed, offset, o);
        }));
    }, "dropout");
    return out;
}

// Batch normalisation over every axis but 1 of x (N,C,...); the other
// tensors are (C), of x's dtype.
//
// batch_norm with given statistics (running ones, when predicting): the
// statistics are constants to autograd; x, gamma and beta get gradients.
inline Tensor batch_norm(const Tensor& x, const Tensor& mean, const Tensor& var, const Tensor& gamma,
                         const Tensor& beta, double eps) {
    Tensor out = Tensor::wrap([&](px_tensor** o) {
        return px_batch_norm(x.need(), mean.need(), var.need(), gamma.need(), beta.need(), eps, o);
    });
    if (!autograd::detail::wanted({&x, &gamma, &beta})) return out;
    Tensor xd = x.detach(), m = mean.detach(), v = var.detach(), g = gamma.detach();
    autograd::detail::record(out, {&x, &gamma, &beta}, [xd, m, v, g, eps](const Tensor& dy) {
        px_tensor *dgamma = nullptr, *dbeta = nullptr;
        check(px_batch_norm_backward(xd.handle(), dy.handle(), m.handle(), v.handle(), g.handle(), eps, nullptr,
                                     &dgamma, &dbeta));
        Tensor dg(dgamma), db(dbeta), zero = full(m.shape(), 0.0, m.device(), m.dtype());
        // With fixed statistics dx is dy * gamma / sqrt(var + eps): the forward op with mean 0 and beta 0.
        Tensor dx = Tensor::wrap([&](px_tensor** o) {
            return px_batch_norm(dy.handle(), zero.handle(), v.handle(), g.handle(), zero.handle(), eps, o);
        });
        return std::vector<Tensor>{dx, dg, db};
    }, "batch_norm", {xd, m, v, g});
    return out;
}

// batch_norm by x's own statistics (training): y, and the batch's mean and
// biased variance (for running statistics; constants to autograd). The
// gradient of x accounts for the statistics depending on x.
struct BatchNormResult {
    Tensor y, mean, var;
};
inline BatchNormResult batch_norm_by_batch(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps) {
    px_tensor *mean = nullptr, *var = nullptr;
    check(px_batch_norm_stats(x.need(), &mean, &var));
    BatchNormResult r{Tensor(), Tensor(mean), Tensor(var)};
    r.y = Tensor::wrap([&](px_tensor** o) {
        return px_batch_norm(x.handle(), r.mean.handle(), r.var.handle(), gamma.need(), beta.need(), eps, o);
    });
    if (!autograd::detail::wanted({&x, &gamma, &beta})) return r;
    Tensor xd = x.detach(), g = gamma.detach();
    const bool need_dx = autograd::detail::needs_grad(&x);
    autograd::detail::record(r.y, {&x, &gamma, &beta}, [xd, m = r.mean, v = r.var, g, eps, need_dx](const Tensor& dy) {
        px_tensor *dx = nullptr, *dgamma = nullptr, *dbeta = nullptr;
        check(px_batch_norm_backward(xd.handle(), dy.handle(), m.handle(), v.handle(), g.handle(), eps,
                                     need_dx ? &dx : nullptr, &dgamma, &dbeta));
        return std::vector<Tensor>{dx ? Tensor(dx) : Tensor(), Tensor(dgamma), Tensor(dbeta)};
    }, "batch_norm", {xd, r.mean, r.var, g});
    return r;
}

// Layer normalisation (Ba et al.): each row along x's last axis (D values)
// to mean 0 and variance 1 (biased, eps added), then * gamma + beta, both
// (D). It runs on the batch-normalisation ops, over x viewed as (1, rows,
// D) (each row a channel), so it has their kernels and gradient. A 16-bit
// x is normalised in float32 and the result cast back: the ops would round
// each row's statistics to x's dtype (a bfloat16 mean near 100 to 0.5).
inline Tensor layer_norm(const Tensor& x, const Tensor& gamma, const Tensor& beta, double eps = 1e-5) {
    if (x.dtype() == DType::float16 || x.dtype() == DType::bfloat16)
        return layer_norm(x.astype(DType::float32), gamma.astype(DType::float32), beta.astype(DType::float32), eps)
            .astype(x.dtype());
    const Shape s = x.shape();
    if (s.empty()) throw ShapeError(PX_ERROR_SHAPE, "layer_norm: a scalar has no axis to normalise");
    const int64_t d = s.back();
    if (gamma.shape() != Shape{d} || beta.shape() != Shape{d})
        throw ShapeError(PX_ERROR_SHAPE, "layer_norm: gamma " + str(gamma.shape()) + " and beta " + str(beta.shape()) +
                                             " must have the shape of x's last axis, (" + std::to_string(d) + ")");
    int64_t rows = 1;
    for (size_t i = 0; i + 1 < s.size(); ++i) rows *= s[i];
    if (d == 0 && rows > 0)
        throw ShapeError(PX_ERROR_SHAPE, "layer_norm: x " + str(s) + " has no values along its last axis to normalise");
    const Tensor ones = full({rows}, 1.0, x.device(), x.dtype()), zeros = full({rows}, 0.0, x.device(), x.dtype());
    const Tensor xhat = batch_norm_by_batch(x.reshape({1, rows, d}), ones, zeros, eps).y.reshape(s);
    return xhat * gamma + beta;
}

// Adaptive average pooling as PyTorch's: output cell (i, j) of (N, C, OH,
// OW) averages rows [floor(i H / OH), ceil((i + 1) H / OH)) and the columns
// likewise. Windows that tile the plane are avg_pool2d; others are two
// products with averaging matrices, which any plugin with matmul runs.
inline Tensor adaptive_avg_pool2d(const Tensor& x, Pair2 out_size) {
    const Shape s = x.shape();
    if (!is_floating(x.dtype()))
        throw DTypeError(PX_ERROR_DTYPE, std::string("adaptive_avg_pool2d: x is ") + name(x.dtype()) +
                                             "; averages need a float dtype (astype first)");
    if (s.size() != 4)
        throw ShapeError(PX_ERROR_SHAPE, "adaptive_avg_pool2d: x must be (N, C, H, W), got " + str(s));
    const int64_t h = s[2], w = s[3], oh = out_size.h, ow = out_size.w;
    if (oh < 1 || ow < 1)
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "adaptive_avg_pool2d: the output size (" +
                                                                  std::to_string(oh) + ", " + std::to_string(ow) +
                                                                  ") must be positive");
    if (h == 0 || w == 0)
        throw ShapeError(PX_ERROR_SHAPE, "adaptive_avg_pool2d: x " + str(s) + " has empty planes; nothing has no mean");
    if (h % oh == 0 && w % ow == 0) {
        const Pair2 window(int(h / oh), int(w / ow));
        return avg_pool2d(x, window, window);
    }
    auto averaging = [&](int64_t out, int64_t in) {  // (out, in): row i averages its window
        std::vector<double> m(size_t(out * in), 0.0);
        for (int64_t i = 0; i < out; ++i) {
            const int64_t lo = i * in / out, hi = ((i + 1) * in + out - 1) / out;
            for (int64_t k = lo; k < hi; ++k) m[size_t(i * in + k)] = 1.0 / double(hi - lo);
        }
        return array(m, {out, in}, x.device()).astype(x.dtype());
    };
    const Tensor planes = x.reshape({s[0] * s[1], h, w});
    return matmul(matmul(averaging(oh, h), planes), averaging(ow, w).T()).reshape({s[0], s[1], oh, ow});
}

// (N, ...) -> (N, rest), a view.
inline Tensor flatten(const Tensor& x) {
    Shape s = x.shape();
    if (s.empty()) throw ShapeError(PX_ERROR_SHAPE, "flatten: a scalar has no batch axis");
    int64_t rest = 1;
    for (size_t i = 1; i < s.size(); ++i) rest *= s[i];
    return x.reshape({s[0], rest});
}

}  // namespace plexus
