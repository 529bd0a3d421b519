// plexus C++ frontend: the differentiable tensor ops and their gradient
// rules. Each op runs through the C API; when autograd wants it, a rule is
// recorded that captures detached inputs/results (never the recorded
// tensors themselves, which would make a cycle).
#pragma once

#include <algorithm>

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

// The gradient of taking rows start, start + step, ... (dy's extent along
// `axis`) of a tensor of `shape`: dy in those rows, zeros elsewhere.
inline Tensor place_rows(const Tensor& dy, const Shape& shape, int axis, int64_t start, int64_t step) {
    const int64_t n = dy.shape()[size_t(axis)], len = shape[size_t(axis)];
    auto zero_rows = [&](int64_t rows) {
        Shape s = shape;
        s[size_t(axis)] = rows;
        return full(s, 0.0, dy.device(), dy.dtype());
    };
    if (n == 0) return zero_rows(len);
    Tensor rows = dy;
    const int64_t span = (n - 1) * step + 1;
    if (step > 1) {  // each row followed by step - 1 rows of zeros: (.., n, 1, ..) beside (.., n, step - 1, ..)
        Shape split = dy.shape(), gaps;
        split.insert(split.begin() + axis + 1, 1);
        gaps = split;
        gaps[size_t(axis) + 1] = step - 1;
        Shape merged = dy.shape();
        merged[size_t(axis)] = n * step;
        rows = concat({dy.reshape(split), full(gaps, 0.0, dy.device(), dy.dtype())}, axis + 1)
                   .reshape(merged)
                   .slice_axis(axis, 0, span);
    }
    std::vector<Tensor> pieces;
    if (start > 0) pieces.push_back(zero_rows(start));
    pieces.push_back(rows);
    if (len - start - span > 0) pieces.push_back(zero_rows(len - start - span));
    return pieces.size() == 1 ? pieces[0] : concat(pieces, axis);
}

inline std::vector<Tensor> one(Tensor g) { return {std::move(g)}; }

}  // namespace grad_rules

inline Tensor Tensor::unary(px_op op) const {
    Tensor out = wrap([&](px_tensor** o) { return px_unary(op, need(), o); });
    if (!autograd::detail::wanted({this})) return out;
    using grad_rules::one;
    Tensor x = detach(), y = out.detach();
    autograd::GradFn fn;
    Tensor reads;  // what the rule reads, if anything
    switch (op) {
    case PX_OP_NEG: fn = [](const Tensor& dy) { return one(-dy); }; break;
    case PX_OP_EXP: fn = [y](const Tensor& dy) { return one(dy * y); }, reads = y; break;
    case PX_OP_LOG: fn = [x](const Tensor& dy) { return one(dy / x); }, reads = x; break;
    case PX_OP_SQRT: fn = [y](const Tensor& dy) { return one(dy * 0.5 / y); }, reads = y; break;
    case PX_OP_ABS:
        reads = x;
        fn = [x](const Tensor& dy) {
            Tensor sign = (x > 0.0).astype(x.dtype()) - (x < 0.0).astype(x.dtype());
            return one(dy * sign);
        };
        break;
    default: {
        if (px_op_zero_gradient(op)) {  // piecewise constant: floor, sign, ...
            fn = [](const Tensor& dy) { return one(full(dy.shape(), 0.0, dy.device(), dy.dtype())); };
            break;
        }
        // An activation whose gradient is a row of its own (the op table's PX_GRADIENT_TABLE).
        int32_t from = 0;
        if (!px_op_backward(op, &from)) {
            autograd::detail::no_gradient({this}, px_op_name(op));
            return out;
        }
        reads = from == PX_GRAD_FROM_RESULT ? y : x;
        if (from == PX_GRAD_FROM_RESULT)
            fn = [y, op](const Tensor& dy) {
                return one(wrap([&](px_tensor** o) { return px_activation_backward(op, y.handle(), dy.handle(), o); }));
            };
        else
            fn = [x, op](const Tensor& dy) {
                return one(wrap([&](px_tensor** o) {
                    return px_activation_input_backward(op, x.handle(), dy.handle(), 0.0, o);
                }));
            };
    }
    }
    autograd::detail::record(out, {this}, std::move(fn), px_op_name(op), {reads});
    return out;
}

inline Tensor Tensor::unary_alpha(px_op op, double alpha) const {
    Tensor out = wrap([&](px_tensor** o) { return px_unary_alpha(op, need(), alpha, o); });
    if (!autograd::detail::wanted({this})) return out;
    Tensor x = detach();
    autograd::detail::record(out, {this}, [x, op, alpha](const Tensor& dy) {
        return grad_rules::one(wrap([&](px_tensor** o) {
            return px_activation_input_backward(op, x.handle(), dy.handle(), alpha, o);
        }));
    }, px_op_name(op), {x});
    return out;
}

// Defined below (where's own gradient is recorded there).
inline Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);

namespace detail {
// Operands of two dtypes meet in px_dtype_promote's (docs/semantics.md,
// "operands of two dtypes"), as the router casts them for C callers; here
// through astype, so each one's gradient comes back in its own dtype. False
// (and nothing cast) when the dtypes agree.
inline bool promoted(const Tensor& a, const Tensor& b, Tensor& as_a, Tensor& as_b) {
    if (!a.defined() || !b.defined()) return false;
    const DType da = a.dtype(), db = b.dtype();
    const int32_t common = da == db ? 0 : px_dtype_promote(static_cast<int32_t>(da), static_cast<int32_t>(db));
    if (common == 0) return false;
    const auto to = static_cast<DType>(common);
    as_a = da == to ? a : a.astype(to);
    as_b = db == to ? b : b.astype(to);
    return true;
}
}  // namespace detail

inline Tensor Tensor::binary_op(px_op op, const Tensor& b) const {
    if (Tensor as_a, as_b; detail::promoted(*this, b, as_a, as_b)) return as_a.binary_op(op, as_b);
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
            // d(x^y)/dy = x^y log x, 0 where x is 0 and y >= 0 (0 * log 0 is NaN; PyTorch's choice).
            const Tensor dy = d * z * x.log(), at_zero = x.scalar_op(PX_OP_EQ, 0.0, false) * (y >= 0.0);
            return std::vector<Tensor>{sum_to(d * y * x.pow(y - 1.0), xs),
                                       sum_to(where(at_zero, full(dy.shape(), 0.0, dy.device(), dy.dtype()), dy), ys)};
        };
        break;
    default: return out;  // comparisons: uint8 results carry no gradient
    }
    if (op == PX_OP_ADD || op == PX_OP_SUB)  // their rules read no values
        autograd::detail::record(out, {this, &b}, std::move(fn), px_op_name(op));
    else
        autograd::detail::record(out, {this, &b}, std::move(fn), px_op_name(op), {x, y, op == PX_OP_POW ? z : Tensor()});
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
            if (!scalar_first) return one(d * s * x.pow(s - 1.0));
            const Tensor dx = d * z * std::log(s);  // 0 where s is 0 and x >= 0, as above
            return one(s == 0 ? where(x >= 0.0, full(dx.shape(), 0.0, dx.device(), dx.dtype()), dx) : dx);
        };
        break;
    default: return out;  // comparisons
    }
    // What the rule reads: x for s / x and both powers, the result for s ** x.
    const bool reads_x = op == PX_OP_POW || (op == PX_OP_DIV && scalar_first);
    const bool reads_z = op == PX_OP_POW && scalar_first;
    autograd::detail::record(out, {this}, std::move(fn), px_op_name(op), {reads_x ? x : Tensor(), reads_z ? z : Tensor()});
    return out;
}

inline Tensor Tensor::reduce_impl(px_op op, bool all_axes, int axis, bool keepdims) const {
    Tensor out = wrap([&](px_tensor** o) {
        return px_reduce(op, need(), all_axes ? 1 : 0, axis, keepdims ? 1 : 0, o);
    });
    if (op == PX_OP_ARGMAX || !autograd::detail::wanted({this})) return out;
    Shape xs = shape(), kept = xs;
    int nd = ndim();
    int ax = axis < 0 ? axis + nd : axis;
    for (int i = 0; i < nd; ++i)
        if (all_axes || i == ax) kept[i] = 1;
    double count = 1;
    for (int i = 0; i < nd; ++i)
        if (all_axes || i == ax) count *= static_cast<double>(xs[i]);
    if (op == PX_OP_MAX || op == PX_OP_MIN) {
        // To the extremes, shared evenly among ties (as PyTorch's max() of all elements).
        Tensor x = detach(), y = out.detach();
        autograd::detail::record(out, {this}, [x, y, kept, xs, all_axes, ax](const Tensor& d) {
            const Tensor hit = equal(x, y.reshape(kept)).astype(d.dtype());
            const Tensor ties = all_axes ? hit.sum() : hit.sum(ax, true);
            return grad_rules::one(hit * grad_rules::spread(d, kept, xs) / ties.reshape(kept));
        }, px_op_name(op), {x, y});
        return out;
    }
    const double scale = op == PX_OP_MEAN ? 1.0 / count : 1.0;
    autograd::detail::record(out, {this}, [xs, kept, scale](const Tensor& d) {
        Tensor g = grad_rules::spread(d, kept, xs);
        return grad_rules::one(scale == 1.0 ? g : g * scale);
    }, px_op_name(op));
    return out;
}

inline Tensor Tensor::reduce(px_op op, const std::vector<int>& axes, bool keepdims) const {
    if (op == PX_OP_ARGMAX) throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "argmax: one axis at a time");
    const int nd = ndim();
    std::vector<int> sorted;
    for (int a : axes) {
        const int k = a < 0 ? a + nd : a;
        if (k < 0 || k >= nd)
            throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, std::string(px_op_name(op)) + ": axis " +
                                                                      std::to_string(a) + " is out of range for rank " +
                                                                      std::to_string(nd));
        if (std::find(sorted.begin(), sorted.end(), k) != sorted.end())
            throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT,
                                       std::string(px_op_name(op)) + ": axis " + std::to_string(a) + " is given twice");
        sorted.push_back(k);
    }
    if ((op == PX_OP_SUM || op == PX_OP_MEAN) && sorted.size() > 1) {
        // One reduction over the axes gathered last, so that the sum is rounded
        // once (as over all axes); axis by axis, float16 [[6e4, 6e4], [-6e4, -6e4]]
        // summed to inf - inf (NaN).
        const Shape xs = shape();
        std::vector<int32_t> perm;
        Shape gathered, kept = xs;
        int64_t count = 1;
        for (int i = 0; i < nd; ++i)
            if (std::find(sorted.begin(), sorted.end(), i) == sorted.end()) perm.push_back(i), gathered.push_back(xs[size_t(i)]);
        for (int i = 0; i < nd; ++i)
            if (std::find(sorted.begin(), sorted.end(), i) != sorted.end()) perm.push_back(i), count *= xs[size_t(i)], kept[size_t(i)] = 1;
        gathered.push_back(count);
        bool in_order = true;
        for (int i = 0; i < nd; ++i) in_order = in_order && perm[size_t(i)] == i;
        const Tensor out = (in_order ? *this : transpose(perm)).reshape(gathered).reduce(op, int(gathered.size()) - 1);
        return keepdims ? out.reshape(kept) : out;
    }
    std::sort(sorted.rbegin(), sorted.rend());  // the highest first: the lower ones keep their numbers
    Tensor out = *this;
    for (int k : sorted) out = out.reduce(op, k, keepdims);
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
    }, "gemm", {x, y});
    return out;
}

inline Tensor matmul(const Tensor& a, const Tensor& b) {
    // NumPy's rule for a vector: a row on the left, a column on the right,
    // and that axis leaves the result (two vectors give their dot product).
    if ((a.ndim() == 1 || b.ndim() == 1) && a.ndim() >= 1 && b.ndim() >= 1) {
        const Tensor m = matmul(a.ndim() == 1 ? a.reshape({1, a.size()}) : a,
                                b.ndim() == 1 ? b.reshape({b.size(), 1}) : b);
        Shape s = m.shape();
        if (b.ndim() == 1) s.pop_back();
        if (a.ndim() == 1) s.erase(s.end() - 1 - (b.ndim() == 1 ? 0 : 1));
        return m.reshape(s);
    }
    // (..., M, K) x (..., K, N) beyond the op's 3-D: NumPy's batch axes,
    // broadcast together (a side is copied out only where its own differ),
    // folded into the one batch axis of a 3-D product, and unfolded after.
    const bool batched = a.ndim() >= 2 && b.ndim() >= 2 && (a.ndim() > 3 || b.ndim() > 3);
    if (batched || (a.ndim() == 3 && b.ndim() == 3 && a.shape()[0] != b.shape()[0])) {
        const Shape as = a.shape(), bs = b.shape();
        const int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
        Shape batch(std::max(as.size(), bs.size()) - 2, 1);
        for (const Shape* s : {&as, &bs})
            for (size_t i = 0; i + 2 < s->size(); ++i) {
                int64_t& to = batch[batch.size() - (s->size() - 2) + i];
                const int64_t dim = (*s)[i];
                if (to != 1 && dim != 1 && dim != to)
                    throw ShapeError(PX_ERROR_SHAPE, "matmul: the batch axes of " + str(as) + " and " + str(bs) +
                                                         " do not broadcast together");
                if (dim != 1) to = dim;
            }
        if (bs[bs.size() - 2] != k)
            throw ShapeError(PX_ERROR_SHAPE, "matmul: " + str(as) + " x " + str(bs) + ": the inner axes differ (" +
                                                 std::to_string(k) + " and " + std::to_string(bs[bs.size() - 2]) + ")");
        int64_t count = 1;
        for (int64_t d : batch) count *= d;
        const auto folded = [&](const Tensor& t, int64_t rows, int64_t cols) {
            const Shape ts = t.shape();
            Shape full = batch;
            full.push_back(rows), full.push_back(cols);
            const bool own = Shape(ts.begin(), ts.end() - 2) == batch;
            return (own ? t : t + zeros(full, t.device(), t.dtype())).reshape({count, rows, cols});
        };
        Shape out = batch;
        out.push_back(m), out.push_back(n);
        return matmul(folded(a, m, k), folded(b, k, n)).reshape(out);
    }
    // 2-D float products go through GEMM, which has a gradient, on devices
    // that offer it; a plugin with MATMUL alone still multiplies.
    if (a.ndim() == 2 && b.ndim() == 2 && is_floating(a.dtype()) && a.dtype() == b.dtype() &&
        supports(a.device(), PX_OP_GEMM, static_cast<px_dtype>(a.dtype())))
        return gemm(a, b);
    Tensor out = Tensor::wrap([&](px_tensor** o) { return px_matmul(a.need(), b.need(), o); });
    if (!autograd::detail::wanted({&a, &b})) return out;
    // (B,M,K) x (B,K,N), either side possibly 2-D and shared by the batch:
    // dA = d B^T and dB = A^T d per matrix, summed over the batch where shared.
    Tensor x = a.detach(), y = b.detach();
    autograd::detail::record(out, {&a, &b}, [x, y](const Tensor& d) {
        auto t = [](const Tensor& m) { return m.ndim() == 3 ? m.transpose({0, 2, 1}) : m.transpose(); };
        Tensor da = matmul(d, t(y)), db = matmul(t(x), d);
        if (x.ndim() == 2 && da.ndim() == 3) da = da.sum(0);
        if (y.ndim() == 2 && db.ndim() == 3) db = db.sum(0);
        return std::vector<Tensor>{da, db};
    }, "matmul", {x, y});
    return out;
}

inline Tensor Tensor::slice(int64_t start, int64_t stop) const {
    Tensor out = wrap([&](px_tensor** o) { return px_tensor_slice(need(), start, stop, o); });
    if (!autograd::detail::wanted({this})) return out;
    Shape xs = shape();
    autograd::detail::record(out, {this}, [xs, start](const Tensor& d) {
        return grad_rules::one(grad_rules::place_rows(d, xs, 0, start, 1));
    }, "slice");
    return out;
}

inline Tensor Tensor::slice_axis(int axis, int64_t start, int64_t stop, int64_t step) const {
    Tensor out = wrap([&](px_tensor** o) { return px_slice_axis(need(), axis, start, stop, step, o); });
    if (!autograd::detail::wanted({this})) return out;
    Shape xs = shape();
    const int nd = ndim(), ax = axis < 0 ? axis + nd : axis;
    const int64_t dim = xs[size_t(ax)];
    int64_t first = start < 0 ? start + dim : start;  // as px_slice_axis clamps
    first = first < 0 ? 0 : first > dim ? dim : first;
    autograd::detail::record(out, {this}, [xs, ax, first, step](const Tensor& d) {
        return grad_rules::one(grad_rules::place_rows(d, xs, ax, first, step));
    }, "slice_axis");
    return out;
}

inline Tensor concat(const std::vector<Tensor>& parts, int axis) {
    std::vector<px_tensor*> hs;
    std::vector<const Tensor*> inputs;
    hs.reserve(parts.size());
    inputs.reserve(parts.size());
    for (const auto& t : parts) {
        hs.push_back(t.handle());
        inputs.push_back(&t);
    }
    Tensor out = Tensor::wrap([&](px_tensor** o) { return px_concat(hs.data(), int32_t(hs.size()), axis, o); });
    bool wanted = false;
    for (const Tensor* t : inputs) wanted = wanted || autograd::detail::wanted({t});
    if (!wanted) return out;
    const int nd = out.ndim(), ax = axis < 0 ? axis + nd : axis;
    std::vector<int64_t> ends;  // where each part ends along the axis
    ends.reserve(parts.size());
    for (const Tensor& t : parts) ends.push_back((ends.empty() ? 0 : ends.back()) + t.shape()[size_t(ax)]);
    autograd::detail::record_many(out, inputs, [ends, ax](const Tensor& d) {
        std::vector<Tensor> grads;
        grads.reserve(ends.size());
        for (size_t i = 0; i < ends.size(); ++i) grads.push_back(d.slice_axis(ax, i ? ends[i - 1] : 0, ends[i]));
        return grads;
    }, "concat");
    return out;
}

inline Tensor take(const Tensor& table, const Tensor& indices) {
    Tensor out = Tensor::wrap([&](px_tensor** o) { return px_take(table.need(), indices.need(), o); });
    if (!autograd::detail::wanted({&table})) return out;
    Tensor idx = indices.detach();
    const int64_t rows = table.shape()[0];
    autograd::detail::record(out, {&table}, [idx, rows](const Tensor& dy) {
        return grad_rules::one(
            Tensor::wrap([&](px_tensor** o) { return px_take_backward(dy.handle(), idx.handle(), rows, o); }));
    }, "take", {idx});
    return out;
}

inline Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
    if (Tensor as_a, as_b; detail::promoted(a, b, as_a, as_b)) return where(cond, as_a, as_b);
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
    }, "where", {c});
    return out;
}

}  // namespace plexus
