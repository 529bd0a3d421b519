// plexus C++ frontend: the differentiable tensor ops and their gradient
// rules. Each op runs through the C API; when autograd wants it, a rule is
// recorded that captures detached inputs/results (never the recorded
// tensors themselves, which would make a cycle).
#pragma once

#include "plexus/cpp/autograd.hpp"

namespace plexus {
namespace grad_rules {

// Sums `g` over the axes that broadcasting added or stretched, back to `shape`.
inline Tensor sum_to(Tensor g, const Shape& shape) {
    while (g.ndim() > static_cast<int>(shape.size())) g = g.sum(0);
    Shape gs = g.shape();
    for (size_t i = 0; i < shape.size(); ++i)
        if (shape[i] == 1 && gs[i] != 1) g = g.sum(static_cast<int>(i), true);
    return g;
}

// `g` (the shape of a reduction's result with keepdims) spread over `shape`.
inline Tensor spread(const Tensor& g, const Shape& kept, const Shape& shape) {
    return g.reshape(kept) + full(shape, 0.0, g.device(), g.dtype());
}

inline std::vector<Tensor> one(Tensor g) { return {std::move(g)}; }

}  // namespace grad_rules

inline Tensor Tensor::unary(px_op op) const {
    Tensor out = wrap([&](px_tensor** o) { return px_unary(op, need(), o); });
    if (!autograd::detail::wanted({this})) return out;
    using grad_rules::one;
    Tensor x = detach(), y = out.detach();
    autograd::GradFn fn;
    switch (op) {
    case PX_OP_NEG: fn = [](const Tensor& dy) { return one(-dy); }; break;
    case PX_OP_EXP: fn = [y](const Tensor& dy) { return one(dy * y); }; break;
    case PX_OP_LOG: fn = [x](const Tensor& dy) { return one(dy / x); }; break;
    case PX_OP_SQRT: fn = [y](const Tensor& dy) { return one(dy * 0.5 / y); }; break;
    case PX_OP_ABS:
        fn = [x](const Tensor& dy) {
            Tensor sign = (x > 0.0).astype(x.dtype()) - (x < 0.0).astype(x.dtype());
            return one(dy * sign);
        };
        break;
    case PX_OP_RELU: case PX_OP_SIGMOID: case PX_OP_TANH:
        fn = [y, op](const Tensor& dy) {
            return one(wrap([&](px_tensor** o) { return px_activation_backward(op, y.handle(), dy.handle(), o); }));
        };
        break;
    default: autograd::detail::no_gradient({this}, px_op_name(op)); return out;
    }
    autograd::detail::record(out, {this}, std::move(fn), px_op_name(op));
    return out;
}

inline Tensor Tensor::binary_op(px_op op, const Tensor& b) const {
    Tensor out = wrap([&](px_tensor** o) { return px_binary(op, need(), b.need(), o); });
    if (!autograd::detail::wanted({this, &b})) return out;
    using grad_rules::sum_to;
    Tensor x = detach(), y = b.detach(), z = out.detach();
    Shape xs = shape(), ys = b.shape();
    autograd::GradFn fn;
    switch (op) {
    case PX_OP_ADD: fn = [xs, ys](const Tensor& d) { return std::vector<Tensor>{sum_to(d, xs), sum_to(d, ys)}; }; break;
    case PX_OP_SUB: fn = [xs, ys](const Tensor& d) { return std::vector<Tensor>{sum_to(d, xs), sum_to(-d, ys)}; }; break;
    case PX_OP_MUL:
        fn = [x, y, xs, ys](const Tensor& d) { return std::vector<Tensor>{sum_to(d * y, xs), sum_to(d * x, ys)}; };
        break;
    case PX_OP_DIV:
        fn = [x, y, xs, ys](const Tensor& d) {
            return std::vector<Tensor>{sum_to(d / y, xs), sum_to(-d * x / (y * y), ys)};
        };
        break;
    case PX_OP_POW:
        fn = [x, y, z, xs, ys](const Tensor& d) {
            return std::vector<Tensor>{sum_to(d * y * x.pow(y - 1.0), xs), sum_to(d * z * x.log(), ys)};
        };
        break;
    default: return out;  // comparisons: uint8 results carry no gradient
    }
    autograd::detail::record(out, {this, &b}, std::move(fn), px_op_name(op));
    return out;
}

inline Tensor Tensor::scalar_op(px_op op, double s, bool scalar_first) const {
    Tensor out = wrap([&](px_tensor** o) { return px_binary_scalar(op, need(), s, scalar_first ? 1 : 0, o); });
    if (!autograd::detail::wanted({this})) return out;
    using grad_rules::one;
    Tensor x = detach(), z = out.detach();
    autograd::GradFn fn;
    switch (op) {
    case PX_OP_ADD: fn = [](const Tensor& d) { return one(d); }; break;
    case PX_OP_SUB: fn = [scalar_first](const Tensor& d) { return one(scalar_first ? -d : d); }; break;
    case PX_OP_MUL: fn = [s](const Tensor& d) { return one(d * s); }; break;
    case PX_OP_DIV:
        fn = [s, x, scalar_first](const Tensor& d) { return one(scalar_first ? -d * s / (x * x) : d / s); };
        break;
    case PX_OP_POW:
        fn = [s, x, z, scalar_first](const Tensor& d) {
            return one(scalar_first ? d * z * std::log(s) : d * s * x.pow(s - 1.0));
        };
        break;
    default: return out;  // comparisons
    }
    autograd::detail::record(out, {this}, std::move(fn), px_op_name(op));
    return out;
}

inline Tensor Tensor::reduce_impl(px_op op, bool all_axes, int axis, bool keepdims) const {
    Tensor out = wrap([&](px_tensor** o) {
        return px_reduce(op, need(), all_axes ? 1 : 0, axis, keepdims ? 1 : 0, o);
    });
    if (op == PX_OP_ARGMAX || !autograd::detail::wanted({this})) return out;
    if (op != PX_OP_SUM && op != PX_OP_MEAN) {
        autograd::detail::no_gradient({this}, px_op_name(op));
        return out;
    }
    Shape xs = shape(), kept = xs;
    int nd = ndim();
    int ax = axis < 0 ? axis + nd : axis;
    for (int i = 0; i < nd; ++i)
        if (all_axes || i == ax) kept[i] = 1;
    double count = 1;
    for (int i = 0; i < nd; ++i)
        if (all_axes || i == ax) count *= static_cast<double>(xs[i]);
    const double scale = op == PX_OP_MEAN ? 1.0 / count : 1.0;
    autograd::detail::record(out, {this}, [xs, kept, scale](const Tensor& d) {
        Tensor g = grad_rules::spread(d, kept, xs);
        return grad_rules::one(scale == 1.0 ? g : g * scale);
    }, px_op_name(op));
    return out;
}

inline Tensor gemm(const Tensor& a, const Tensor& b, bool trans_a = false, bool trans_b = false) {
    Tensor out = Tensor::wrap([&](px_tensor** o) { return px_gemm(a.need(), b.need(), trans_a, trans_b, o); });
    if (!autograd::detail::wanted({&a, &b})) return out;
    Tensor x = a.detach(), y = b.detach();
    autograd::detail::record(out, {&a, &b}, [x, y, trans_a, trans_b](const Tensor& d) {
        // C = op(A) op(B): dA = d op(B)^T (transposed back when A was), dB likewise.
        Tensor da = trans_a ? gemm(y, d, trans_b, true) : gemm(d, y, false, !trans_b);
        Tensor db = trans_b ? gemm(d, x, true, trans_a) : gemm(x, d, !trans_a, false);
        return std::vector<Tensor>{da, db};
    }, "gemm");
    return out;
}

inline Tensor matmul(const Tensor& a, const Tensor& b) {
    // 2-D float products go through GEMM, which has a gradient, on devices
    // that offer it; a plugin with MATMUL alone still multiplies.
    if (a.ndim() == 2 && b.ndim() == 2 && is_floating(a.dtype()) && a.dtype() == b.dtype() &&
        supports(a.device(), PX_OP_GEMM, static_cast<px_dtype>(a.dtype())))
        return gemm(a, b);
    autograd::detail::no_gradient({&a, &b}, "batched matmul");
    return Tensor::wrap([&](px_tensor** o) { return px_matmul(a.need(), b.need(), o); });
}

inline Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
    Tensor out = Tensor::wrap([&](px_tensor** o) { return px_where(cond.need(), a.need(), b.need(), o); });
    if (!autograd::detail::wanted({&a, &b})) return out;
    Tensor c = cond.detach();
    Shape as = a.shape(), bs = b.shape();
    autograd::detail::record(out, {nullptr, &a, &b}, [c, as, bs](const Tensor& d) {
        Tensor zero = full(Shape{}, 0.0, d.device(), d.dtype());
        Tensor ga = plexus::where(c, d, zero), gb = plexus::where(c, zero, d);
        std::vector<Tensor> grads(3);
        grads[1] = grad_rules::sum_to(ga, as);
        grads[2] = grad_rules::sum_to(gb, bs);
        return grads;
    }, "where");
    return out;
}

}  // namespace plexus
