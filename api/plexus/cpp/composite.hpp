// plexus C++ frontend: ops made of other ops, as NumPy, MXNet and PyTorch
// users expect them: no plugin implements them, so every device has them,
// and those made of differentiable ops have gradients through autograd.
#pragma once

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "plexus/cpp/gradients.hpp"
#include "plexus/cpp/nn_ops.hpp"
#include "plexus/cpp/tensor.hpp"

namespace plexus {

// A tensor of x's shape, dtype and device, filled with `value`.
inline Tensor full_like(const Tensor& x, double value) { return full(x.shape(), value, x.device(), x.dtype()); }
inline Tensor zeros_like(const Tensor& x) { return full_like(x, 0); }
inline Tensor ones_like(const Tensor& x) { return full_like(x, 1); }

// The larger (smaller) of a and b, elementwise with broadcasting; a NaN in
// either gives NaN, as np.maximum does. The gradient goes to the operand
// chosen (to a on ties).
inline Tensor maximum(const Tensor& a, const Tensor& b) { return where((a >= b) + not_equal(a, a), a, b); }
inline Tensor minimum(const Tensor& a, const Tensor& b) { return where((a <= b) + not_equal(a, a), a, b); }

// The dtype `x op scalar` computes in (docs/semantics.md, "a scalar operand
// of an integer tensor"): x's, or int64 or float64 when x's cannot hold the
// scalar. Asked of the router with an op on a zero-dimensional tensor.
inline DType scalar_result_dtype(const Tensor& x, double scalar) {
    return (full(Shape{}, 0.0, x.device(), x.dtype()) + scalar).dtype();
}

// maximum / minimum with a scalar, as np.maximum(x, 0) (d2l's relu): in
// the dtype `x op scalar` computes in.
inline Tensor maximum(const Tensor& a, double s) {
    const DType d = scalar_result_dtype(a, s);
    return maximum(a.dtype() == d ? a : a.astype(d), full(Shape{}, s, a.device(), d));
}
inline Tensor minimum(const Tensor& a, double s) {
    const DType d = scalar_result_dtype(a, s);
    return minimum(a.dtype() == d ? a : a.astype(d), full(Shape{}, s, a.device(), d));
}
inline Tensor maximum(double s, const Tensor& a) { return maximum(a, s); }
inline Tensor minimum(double s, const Tensor& a) { return minimum(a, s); }

// where with a scalar for either choice, as np.where(cond, x, 0.0): in the
// dtype `x op scalar` computes in.
inline Tensor where(const Tensor& cond, const Tensor& a, double s) {
    const DType d = scalar_result_dtype(a, s);
    return where(cond, a.dtype() == d ? a : a.astype(d), full(Shape{}, s, a.device(), d));
}
inline Tensor where(const Tensor& cond, double s, const Tensor& b) {
    const DType d = scalar_result_dtype(b, s);
    return where(cond, full(Shape{}, s, b.device(), d), b.dtype() == d ? b : b.astype(d));
}

// x with every element put in [lo, hi], as np.clip; NaN stays NaN.
inline Tensor clip(const Tensor& x, double lo, double hi) {
    if (!(lo <= hi)) throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "clip: the bounds must have lo <= hi");
    // In the dtype both bounds fit, as np.clip: an int32 x clipped to [0.5, 2.5] is float64.
    const DType lo_d = scalar_result_dtype(x, lo), d = scalar_result_dtype(full(Shape{}, 0.0, x.device(), lo_d), hi);
    const Tensor v = x.dtype() == d ? x : x.astype(d);
    return minimum(maximum(v, full(Shape{}, lo, x.device(), d)), full(Shape{}, hi, x.device(), d));
}

namespace detail {
// x in float32 when it is of a 16-bit float: a composite whose intermediate
// values float16 cannot hold (a sum of squares) or would round too coarsely
// (log_softmax before exp) computes there and rounds its result once.
inline Tensor widened(const Tensor& x) {
    return x.dtype() == DType::float16 || x.dtype() == DType::bfloat16 ? x.astype(DType::float32) : x;
}
// The index of the first minimum, of all elements or along `axis` (int64),
// as np.argmin: argmax of an order-reversing map, exact in every dtype (-x
// for floats, whose first NaN still wins; -1 - x, which wraps to ~x, for
// signed integers; 255 - x for uint8).
inline Tensor reversed_order(const Tensor& x) {
    if (is_floating(x.dtype())) return -x;
    return x.dtype() == DType::uint8 ? 255.0 - x : -1.0 - x;
}
}  // namespace detail
inline Tensor argmin(const Tensor& x) { return detail::reversed_order(x).argmax(); }
inline Tensor argmin(const Tensor& x, int axis, bool keepdims = false) {
    const int rank = x.ndim();
    if (axis < -rank || axis >= rank)  // checked here, so that the error names argmin, not argmax
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "argmin: axis " + std::to_string(axis) +
                                                                  " is out of range for a tensor of rank " +
                                                                  std::to_string(rank));
    return detail::reversed_order(x).argmax(axis, keepdims);
}

// The square root of the sum of squares of every element (the Frobenius
// norm of a matrix), as x.norm() in MXNet and PyTorch. Its gradient is
// x / norm, and 0 at x = 0 (PyTorch's) rather than 0 * inf = NaN: where the
// sum is 0 the root is taken of 1 and not used.
inline Tensor norm(const Tensor& x) {
    const Tensor w = detail::widened(x), s = (w * w).sum(), zero = zeros_like(s), at_zero = equal(s, zero);
    const Tensor n = where(at_zero, zero, where(at_zero, ones_like(s), s).sqrt());
    return n.dtype() == x.dtype() ? n : n.astype(x.dtype());
}

// exp(x - max) / sum(exp(x - max)) over the last axis, as
// exp(log_softmax(x)): numerically stable, with log_softmax's gradient.
inline Tensor softmax(const Tensor& x) {
    const Tensor s = log_softmax(detail::widened(x)).exp();
    return s.dtype() == x.dtype() ? s : s.astype(x.dtype());
}

// A view with a new axis of length 1 at `axis` (negative counts from the
// end of the result), as np.expand_dims.
inline Tensor expand_dims(const Tensor& x, int axis) {
    Shape s = x.shape();
    const int rank = int(s.size()) + 1;
    if (axis < -rank || axis >= rank)
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "expand_dims: axis " + std::to_string(axis) + " is out of range for a result of rank " +
                                   std::to_string(rank));
    s.insert(s.begin() + (axis < 0 ? axis + rank : axis), 1);
    return x.reshape(s);
}

// A view without the axis `axis`, which must have length 1, as np.squeeze.
// Running sums along `axis` (NumPy's cumsum; integers and uint8 summed in
// int64, as sum's result), by log2(n) shifted adds (a Hillis-Steele scan):
// differentiable, the work of a few sums. Floats are added in the scan's
// grouping, not left to right, so the last bits may differ from NumPy's.
inline Tensor cumsum(const Tensor& x, int axis) {
    Shape s = x.shape();
    const int rank = int(s.size());
    if (axis < -rank || axis >= rank)
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "cumsum: axis " + std::to_string(axis) +
                                                                  " is out of range for a tensor of rank " +
                                                                  std::to_string(rank));
    const int a = axis < 0 ? axis + rank : axis;
    const int64_t n = s[size_t(a)];
    Tensor y = is_floating(x.dtype()) || x.dtype() == DType::int64 ? x : x.astype(DType::int64);
    for (int64_t shift = 1; shift < n; shift *= 2) {  // y[i] += y[i - shift] where i >= shift
        s[size_t(a)] = shift;
        y = y + concat({zeros(s, y.device(), y.dtype()), y.slice_axis(a, 0, n - shift)}, a);
    }
    return y;
}
// Over every element, in row-major order (NumPy's cumsum without an axis).
inline Tensor cumsum(const Tensor& x) { return cumsum(x.reshape({x.size()}), 0); }

inline Tensor squeeze(const Tensor& x, int axis) {
    Shape s = x.shape();
    const int rank = int(s.size());
    if (axis < -rank || axis >= rank)
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "squeeze: axis " + std::to_string(axis) + " is out of range for a tensor of rank " +
                                   std::to_string(rank));
    const int a = axis < 0 ? axis + rank : axis;
    if (s[size_t(a)] != 1)
        throw ShapeError(PX_ERROR_SHAPE, "squeeze: axis " + std::to_string(axis) + " has length " + std::to_string(s[size_t(a)]) +
                         ", not 1");
    s.erase(s.begin() + a);
    return x.reshape(s);
}

// Tensors of one shape joined along a new axis, as np.stack (no gradient,
// as concat).
// data (N, C), index (N) of class numbers (any dtype holding whole numbers)
// -> (N): data[i, index[i]], as MXNet's pick and d2l's y_hat[range(n), y];
// differentiable in data. An index outside [0, C) is an error (reading the
// index's extremes waits for it).
// `labels` as class indices: int32 and int64 as they are, other integers as
// `dtype`, and floats as `dtype` only when each is a whole number (checked
// here, a wait: 1.5 or NaN names no class, and truncating it would pick one).
// `what` says what a bad one is not, in the error.
inline Tensor class_indices(const Tensor& labels, DType dtype, const std::string& who,
                            const std::string& what = "a label is not a class index") {
    const DType d = labels.dtype();
    if (d == DType::int32 || d == DType::int64) return labels;
    if (!is_floating(d)) return labels.astype(dtype);
    const Tensor wide = labels.astype(DType::float64);
    const Tensor whole = equal(wide, wide.astype(DType::int64).astype(DType::float64)) *  // NaN and inf too
                         (wide.abs() < 9.2e18);  // (2^63 converts back to itself, as int64 saturates)
    if (labels.size() > 0 && whole.astype(DType::int64).sum().item<int64_t>() != labels.size())
        for (double v : wide.to_vector<double>())
            if (!(std::isfinite(v) && v == std::trunc(v) && std::fabs(v) < 9.2e18)) {
                std::ostringstream shown;  // 1.5, nan, 1e+300
                shown << v;
                throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT,
                                           who + ": " + what + " (a whole number below 2^63): found " +
                                               shown.str() + " (int32 or int64 indices need no such check)");
            }
    return labels.astype(dtype);
}

inline Tensor pick(const Tensor& data, const Tensor& index) {
    const Shape ds = data.shape(), is = index.shape();
    if (ds.size() != 2 || is.size() != 1 || is[0] != ds[0])
        throw ShapeError(PX_ERROR_SHAPE, "pick: wants data (N, C) and index (N), got " + str(ds) + " and " + str(is));
    const Tensor wide = index.astype(DType::float64);
    if (ds[0] > 0) {
        const double lo = wide.min().item<double>(), hi = wide.max().item<double>();
        if (!(lo >= 0 && hi < double(ds[1])))  // (NaN too)
            throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "pick: an index lies outside [0, " +
                                                                      std::to_string(ds[1]) + "): found " +
                                                                      std::to_string(lo >= 0 ? hi : lo));
    }
    const Tensor classes = arange(0, double(ds[1]), 1, data.device(), DType::float64).reshape({1, ds[1]});
    const Tensor matches = equal(classes, wide.reshape({ds[0], 1}));
    if (is_floating(index.dtype()) && ds[0] > 0 && matches.astype(DType::float64).sum().item<double>() != double(ds[0]))
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "pick: an index is not a whole number (a class)");
    // Chosen, not multiplied by a one-hot row: 0 * inf and 0 * NaN elsewhere in
    // a row would be NaN. The sum adds zeros to one value, so it is exact in
    // the data's dtype (an integer sum widens: narrowed back).
    const Tensor zero = full(Shape{}, 0.0, data.device(), data.dtype());
    return where(matches, data, zero).sum(1).astype(data.dtype());
}

inline Tensor stack(const std::vector<Tensor>& parts, int axis = 0) {
    if (parts.empty()) throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "stack: no tensors given");
    const int rank = int(parts[0].shape().size()) + 1;
    if (axis < -rank || axis >= rank)
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "stack: axis " + std::to_string(axis) +
                                                                  " is out of range for a result of rank " +
                                                                  std::to_string(rank));
    std::vector<Tensor> expanded;
    expanded.reserve(parts.size());
    for (const Tensor& t : parts) {
        if (t.shape() != parts[0].shape()) throw ShapeError(PX_ERROR_SHAPE, "stack: the tensors must have one shape");
        expanded.push_back(expand_dims(t, axis));
    }
    return concat(expanded, axis < 0 ? axis + int(parts[0].shape().size()) + 1 : axis);
}

}  // namespace plexus
