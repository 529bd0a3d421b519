#include "router.hpp"

#include <cmath>
#include <cstring>
#include <limits>

#include "dispatch.hpp"
#include "trace.hpp"

namespace px::router {
namespace {

using Owned = std::unique_ptr<TensorObj>;

px_tensor_desc broadcast_desc(const TensorObj& t, const Shape& out) {
    px_tensor_desc d;
    t.fill_desc(d, out.ndim);
    for (int i = 0; i < out.ndim; ++i) d.shape[i] = out.dims[i];
    broadcast_strides(t.shape, out, d.strides);
    return d;
}

// Whether an integer dtype holds `v` exactly: a whole number in its range.
bool integer_dtype_holds(int32_t dtype, double v) {
    if (!std::isfinite(v) || v != std::floor(v)) return false;
    const int bits = 8 * static_cast<int>(px_dtype_size(dtype));
    if (px_dtype_class(dtype) == PX_DTYPE_CLASS_UNSIGNED) return v >= 0 && v < std::ldexp(1.0, bits);
    return v >= -std::ldexp(1.0, bits - 1) && v < std::ldexp(1.0, bits - 1);
}

}  // namespace

TensorObj* from_host(const std::shared_ptr<DeviceImpl>& dev, px_dtype dtype, const Shape& shape, const void* data,
                     uint64_t bytes) {
    uint64_t need = byte_size(shape, dtype);
    if (bytes != need)
        fail(PX_ERROR_INVALID_ARGUMENT, "got ", bytes, " bytes of data for a ", px_dtype_name(dtype), " tensor of shape ",
             to_string(shape), ", which needs ", need);
    if (!data && bytes > 0) fail(PX_ERROR_INVALID_ARGUMENT, "'data' is NULL");
    Owned t(new_tensor(dev, dtype, shape));
    if (bytes > 0) {
        const auto& p = *dev->plugin;
        const DeviceImpl::Submitting queued{*dev};
        traced_copy(dev->tracer.get(), nullptr, dev.get(), bytes, [&] {
            p.call([&] { return cat("copying ", bytes, " bytes from the host to ", dev->label); }, [&](px_plugin_error* e) {
                return p.api->copy_from_host(p.context, t->buffer->handle, 0, data, bytes, e);
            });
        });
    }
    return t.release();
}

void to_host(const TensorObj& t, void* dst, uint64_t bytes) {
    uint64_t need = t.bytes();
    if (bytes != need)
        fail(PX_ERROR_INVALID_ARGUMENT, "the destination has ", bytes, " bytes; the tensor has ", need);
    if (!dst && bytes > 0) fail(PX_ERROR_INVALID_ARGUMENT, "'dst' is NULL");
    const auto& dev = t.device();
    const auto& p = *dev.plugin;
    if (bytes == 0) {
        dev.synchronize();  // still a waiting point: report earlier failures
        return;
    }
    // A read waits for the device's work and reports its failure, or one a
    // wait of the host's own took from the plugin first.
    dev.settled([&] {
        traced_copy(dev.tracer.get(), &dev, nullptr, bytes, [&] {
            p.call([&] { return cat("reading values from ", dev.label); }, [&](px_plugin_error* e) {
                return p.api->copy_to_host(p.context, t.buffer->handle, t.offset, dst, bytes, e);
            });
        });
    });
}

// The copy itself: device to device within a plugin, else staged through the host.
static void copy_between(const TensorObj& src, TensorObj& dst, const DeviceImpl& from, const DeviceImpl& to, uint64_t bytes) {
    const auto& p = *to.plugin;
    const DeviceImpl::Submitting queued_from{from}, queued_to{to};
    traced_copy(to.tracer.get(), &from, &to, bytes, [&] {
        if (from.plugin == to.plugin) {
            p.call([&] { return cat("copying ", bytes, " bytes from ", from.label, " to ", to.label); },
                   [&](px_plugin_error* e) {
                       return p.api->copy_device(p.context, src.buffer->handle, src.offset, dst.buffer->handle,
                                                 dst.offset, bytes, e);
                   });
            return;
        }
        // Devices of two plugins: stage through host memory (the read is a
        // traced copy of its own, matched to the source device's span).
        std::vector<unsigned char> staging(bytes);
        to_host(src, staging.data(), bytes);
        p.call([&] { return cat("copying ", bytes, " bytes from the host to ", to.label); }, [&](px_plugin_error* e) {
            return p.api->copy_from_host(p.context, dst.buffer->handle, dst.offset, staging.data(), bytes, e);
        });
    });
}

void copy_into(const TensorObj& src, TensorObj& dst) {
    const DeviceImpl& from = src.device();
    const DeviceImpl& to = dst.device();
    const uint64_t bytes = src.bytes();
    if (bytes == 0) return;
    if (&from == &to) {
        px_tensor_desc in = src.desc(), out = dst.desc();
        dispatch(to, PX_OP_COPY, src.dtype, &in, 1, &out, 1, nullptr);
        return;
    }
    // Two devices: the copy reads the source, a waiting point, which reports
    // a failure of the source's work (or one a wait of the host's own took
    // from it, kept or racing the read) instead of copying: the values it
    // spoiled would reach a device whose waits cannot report it.
    try {
        from.settle();
        from.settled([&] { copy_between(src, dst, from, to, bytes); });
    } catch (const Failure& f) {
        throw Failure(f.status, cat(f.message, "; the copy was not made"));
    }
}

void check_values_dtype(const TensorObj& src, const TensorObj& dst) {
    if (src.dtype != dst.dtype)
        fail(PX_ERROR_DTYPE, "the values are ", px_dtype_name(src.dtype), ", the tensor ", px_dtype_name(dst.dtype),
             "; cast them first");
}

void assign_region(TensorObj& dst, const int64_t* start, const int64_t* step, const int64_t* count,
                   const TensorObj& src) {
    const int32_t nd = dst.shape.ndim;
    if (nd > 0 && (!start || !step || !count))
        fail(PX_ERROR_INVALID_ARGUMENT, "'", !start ? "start" : !step ? "step" : "count",
             "' is NULL; start, step and count each hold one value per axis of the tensor (", nd, ")");
    check_values_dtype(src, dst);
    Shape region;
    region.ndim = nd;
    for (int32_t k = 0; k < nd; ++k) {
        const int64_t dim = dst.shape.dims[k];
        if (step[k] < 1) fail(PX_ERROR_INVALID_ARGUMENT, "step[", k, "] is ", step[k], "; it must be at least 1");
        if (count[k] < 0) fail(PX_ERROR_INVALID_ARGUMENT, "count[", k, "] is ", count[k], "; it must not be negative");
        if (start[k] < 0 || start[k] > dim)
            fail(PX_ERROR_INVALID_ARGUMENT, "start[", k, "] is ", start[k], ", outside axis ", k, "'s [0, ", dim, "]");
        // The last place, start + (count - 1) * step, inside the axis (divided, not multiplied: no overflow).
        if (count[k] > 0 && (start[k] == dim || (count[k] - 1) > (dim - 1 - start[k]) / step[k]))
            fail(PX_ERROR_INVALID_ARGUMENT, "count[", k, "] places from ", start[k], " by ", step[k],
                 " reach past axis ", k, "'s length ", dim);
        region.dims[k] = count[k];
    }
    // NumPy's assignment: the values' trailing axes meet the region's, each 1 or its length; axes the
    // region lacks are leading ones of length 1.
    const int32_t extra = src.shape.ndim - nd;
    bool fits = true;
    for (int32_t i = 0; fits && i < src.shape.ndim; ++i) {
        const int64_t have = src.shape.dims[i];
        fits = have == 1 || (i >= extra && have == region.dims[i - extra]);
    }
    if (!fits)
        fail(PX_ERROR_SHAPE, "the values have shape ", to_string(src.shape), ", which does not broadcast to the region's ",
             to_string(region));
    if (numel(region) == 0) return;
    px_tensor_desc out = dst.desc();
    for (int32_t k = 0; k < nd; ++k) {
        out.offset += static_cast<uint64_t>(start[k] * out.strides[k]) * px_dtype_size(dst.dtype);
        out.shape[k] = count[k];
        if (count[k] > 1) out.strides[k] *= step[k];
    }
    // Values from another device come over first; values that share dst's memory are read whole before
    // any of them is overwritten (x[1:] = x[:-1] as NumPy's).
    Owned moved;
    const TensorObj* from = &src;
    if (&src.device() != &dst.device() || may_share_memory(src, dst)) {
        moved.reset(copy_to(src, dst.buffer->device));
        from = moved.get();
    }
    px_tensor_desc in{};
    int64_t src_strides[PX_MAX_DIMS];
    contiguous_strides(from->shape, src_strides);
    from->fill_desc(in, nd);
    for (int32_t k = 0; k < nd; ++k) {
        const int32_t j = k + extra;  // the values' axis that meets axis k, if any
        in.shape[k] = region.dims[k];
        in.strides[k] = j >= 0 && from->shape.dims[j] != 1 ? src_strides[j] : 0;
    }
    dispatch(dst.device(), PX_OP_COPY, dst.dtype, &in, 1, &out, 1, nullptr);
    dst.note_write();
}

TensorObj* copy_to(const TensorObj& t, const std::shared_ptr<DeviceImpl>& dev) {
    Owned out(new_tensor(dev, t.dtype, t.shape));
    copy_into(t, *out);
    return out.release();
}

// `value` toward zero, saturated to the range of integer `dtype`.
static int64_t saturated_integer(px_dtype dtype, double value) {
    int64_t lo = INT64_MIN, hi = INT64_MAX;
    if (dtype == PX_INT32) lo = INT32_MIN, hi = INT32_MAX;
    if (dtype == PX_UINT8) lo = 0, hi = UINT8_MAX;
    if (value <= static_cast<double>(lo)) return lo;
    if (value >= static_cast<double>(hi)) return hi;  // (double)INT64_MAX is 2^63: above every int64
    return static_cast<int64_t>(value);
}

TensorObj* full(const std::shared_ptr<DeviceImpl>& dev, px_dtype dtype, const Shape& shape, double value) {
    px_fill_attrs attrs{sizeof(px_fill_attrs), value, 0};
    if (px_dtype_class(dtype) != PX_DTYPE_CLASS_FLOAT) {
        if (std::isnan(value)) fail(PX_ERROR_INVALID_ARGUMENT, "fill: NaN cannot be stored in ", px_dtype_name(dtype));
        attrs.int_value = saturated_integer(dtype, value);  // as cast converts a float
    }
    Owned out(new_tensor(dev, dtype, shape));
    px_tensor_desc o = out->desc();
    dispatch(*dev, PX_OP_FILL, dtype, nullptr, 0, &o, 1, &attrs, numel(shape) > 0);
    return out.release();
}

TensorObj* arange(const std::shared_ptr<DeviceImpl>& dev, px_dtype dtype, double start, double stop, double step) {
    if (!std::isfinite(start) || !std::isfinite(stop) || !std::isfinite(step) || step == 0)
        fail(PX_ERROR_INVALID_ARGUMENT, "arange: start, stop and step must be finite and step nonzero (got ", start, ", ",
             stop, ", ", step, ")");
    double count = std::ceil((stop - start) / step);
    if (count < 0) count = 0;
    if (count > 9.0e18) fail(PX_ERROR_SHAPE, "arange: ", count, " elements do not fit in 64 bits");
    int64_t n = static_cast<int64_t>(count);
    Shape shape = make_shape(1, &n);
    px_arange_attrs attrs{sizeof(px_arange_attrs), start, step};
    Owned out(new_tensor(dev, dtype, shape));
    px_tensor_desc o = out->desc();
    dispatch(*dev, PX_OP_ARANGE, dtype, nullptr, 0, &o, 1, &attrs, n > 0);
    return out.release();
}

TensorObj* random(Runtime& rt, px_op op, const std::shared_ptr<DeviceImpl>& dev, px_dtype dtype, const Shape& shape,
                  double a, double b) {
    check_accepts(op, dtype);
    if (!std::isfinite(a) || !std::isfinite(b))
        fail(PX_ERROR_INVALID_ARGUMENT, name_of(op), ": parameters must be finite (got ", a, ", ", b, ")");
    if (op == PX_OP_RANDOM_UNIFORM && !(a <= b))
        fail(PX_ERROR_INVALID_ARGUMENT, "random_uniform: low ", a, " is above high ", b);
    // low + (high - low) * u: a span past the largest double would give values outside [low, high).
    if (op == PX_OP_RANDOM_UNIFORM && !std::isfinite(b - a))
        fail(PX_ERROR_INVALID_ARGUMENT, "random_uniform: the span from ", a, " to ", b, " is larger than the largest double");
    if (op == PX_OP_RANDOM_NORMAL && !(b >= 0))
        fail(PX_ERROR_INVALID_ARGUMENT, "random_normal: the standard deviation ", b, " is negative");
    check_supported(*dev, op, dtype);
    Owned out(new_tensor(dev, dtype, shape));
    uint64_t n = static_cast<uint64_t>(numel(shape));
    px_random_attrs attrs{sizeof(px_random_attrs), rt.seed.load(), rt.take_random_offset(n), a, b};
    px_tensor_desc o = out->desc();
    dispatch(*dev, op, dtype, nullptr, 0, &o, 1, &attrs, n > 0);
    return out.release();
}

namespace {
// Operands of two dtypes compute in px_dtype_promote's (docs/semantics.md,
// "operands of two dtypes"): the one of another dtype is cast first.
// The dtype to cast to; 0 when the dtypes agree (or one is not a dtype).
int32_t promotion(const TensorObj& a, const TensorObj& b) {
    return a.dtype == b.dtype ? 0 : px_dtype_promote(a.dtype, b.dtype);
}
// a cast to `dtype`; nullptr when a is of it already.
TensorObj* cast_to(const TensorObj& a, int32_t dtype) {
    return a.dtype == dtype ? nullptr : cast(a, static_cast<px_dtype>(dtype));
}
}  // namespace

TensorObj* binary(px_op op, const TensorObj& a, const TensorObj& b) {
    if (!in_family(op, PX_FAMILY_BINARY))
        fail(PX_ERROR_INVALID_ARGUMENT, "op ", static_cast<int>(op), " (", name_of(op) ? name_of(op) : "unknown",
             ") is not a binary elementwise op");
    check_same_device(op, {&a, &b});
    Shape shape = broadcast(a.shape, b.shape, name_of(op));
    if (const int32_t common = promotion(a, b)) {
        check_accepts(op, static_cast<px_dtype>(common));  // before anything is cast
        Owned as_a(cast_to(a, common)), as_b(cast_to(b, common));
        return binary(op, as_a ? *as_a : a, as_b ? *as_b : b);
    }
    check_same_dtype(op, a, b);
    check_accepts(op, a.dtype);
    Owned out(new_tensor(a.buffer->device, result_dtype(op, a.dtype), shape));
    px_tensor_desc in[2] = {broadcast_desc(a, shape), broadcast_desc(b, shape)}, o = out->desc();
    dispatch(a.device(), op, a.dtype, in, 2, &o, 1, nullptr, numel(shape) > 0);
    return out.release();
}

TensorObj* binary_scalar(px_op op, const TensorObj& a, double scalar, bool scalar_first) {
    if (!in_family(op, PX_FAMILY_BINARY))
        fail(PX_ERROR_INVALID_ARGUMENT, "op ", static_cast<int>(op), " (", name_of(op) ? name_of(op) : "unknown",
             ") is not a binary elementwise op");
    // An integer tensor with a scalar it cannot hold computes in a dtype that
    // can, as NumPy promotes: with a fraction, an infinity or a NaN in float64
    // (int32 * 0.5 is never [0 0]); with a whole number outside the dtype's
    // range in int64, or float64 beyond int64's (uint8 + 300 is 300).
    if (px_dtype_class(a.dtype) != PX_DTYPE_CLASS_FLOAT && !integer_dtype_holds(a.dtype, scalar)) {
        const bool whole = std::isfinite(scalar) && scalar == std::floor(scalar);
        Owned wide(cast(a, whole && integer_dtype_holds(PX_INT64, scalar) ? PX_INT64 : PX_FLOAT64));
        return binary_scalar(op, *wide, scalar, scalar_first);
    }
    check_accepts(op, a.dtype);
    Owned out(new_tensor(a.buffer->device, result_dtype(op, a.dtype), a.shape));
    px_binary_attrs attrs{sizeof(px_binary_attrs), scalar_first ? 1 : 2, scalar};
    px_tensor_desc in = a.desc(), o = out->desc();
    dispatch(a.device(), op, a.dtype, &in, 1, &o, 1, &attrs, numel(a.shape) > 0);
    return out.release();
}

TensorObj* unary(px_op op, const TensorObj& a) {
    if (!in_family(op, PX_FAMILY_UNARY))
        fail(PX_ERROR_INVALID_ARGUMENT, "op ", static_cast<int>(op), " (", name_of(op) ? name_of(op) : "unknown",
             ") is not a unary elementwise op");
    check_accepts(op, a.dtype);
    Owned out(new_tensor(a.buffer->device, a.dtype, a.shape));
    px_tensor_desc in = a.desc(), o = out->desc();
    dispatch(a.device(), op, a.dtype, &in, 1, &o, 1, nullptr, numel(a.shape) > 0);
    return out.release();
}

TensorObj* where(const TensorObj& cond, const TensorObj& a, const TensorObj& b) {
    check_same_device(PX_OP_WHERE, {&cond, &a, &b});
    if (cond.dtype != PX_UINT8)
        fail(PX_ERROR_DTYPE, "where: the condition must be uint8 (the result of a comparison), not ",
             px_dtype_name(cond.dtype));
    // Sized once, over all three: a pair alone may not fit where the whole is empty.
    const Shape all = broadcast_dims(broadcast_dims(cond.shape, a.shape, "where"), b.shape, "where");
    Shape shape = make_shape(all.ndim, all.dims, "where");
    if (const int32_t common = promotion(a, b)) {
        Owned as_a(cast_to(a, common)), as_b(cast_to(b, common));
        return where(cond, as_a ? *as_a : a, as_b ? *as_b : b);
    }
    check_same_dtype(PX_OP_WHERE, a, b);
    Owned out(new_tensor(a.buffer->device, a.dtype, shape));
    px_tensor_desc in[3] = {broadcast_desc(cond, shape), broadcast_desc(a, shape), broadcast_desc(b, shape)};
    px_tensor_desc o = out->desc();
    dispatch(a.device(), PX_OP_WHERE, a.dtype, in, 3, &o, 1, nullptr, numel(shape) > 0);
    return out.release();
}

TensorObj* reduce(px_op op, const TensorObj& a, bool all_axes, int32_t axis, bool keepdims) {
    if (!in_family(op, PX_FAMILY_REDUCE))
        fail(PX_ERROR_INVALID_ARGUMENT, "op ", static_cast<int>(op), " (", name_of(op) ? name_of(op) : "unknown",
             ") is not a reduction");
    check_accepts(op, a.dtype);
    Shape shape;
    int64_t extent;
    if (all_axes) {
        extent = numel(a.shape);
        shape.ndim = keepdims ? a.shape.ndim : 0;
        for (int i = 0; i < shape.ndim; ++i) shape.dims[i] = 1;
        axis = -1;
    } else {
        if (a.shape.ndim == 0) fail(PX_ERROR_INVALID_ARGUMENT, name_of(op), ": a scalar has no axis ", axis);
        axis = normalize_axis(axis, a.shape.ndim, name_of(op));
        extent = a.shape.dims[axis];
        for (int i = 0; i < a.shape.ndim; ++i) {
            if (i == axis && !keepdims) continue;
            shape.dims[shape.ndim++] = i == axis ? 1 : a.shape.dims[i];
        }
        // An empty axis hides the size of the others: (0, 2^32, 2^32) is empty, its sum is not.
        if (!fits(shape))
            fail(PX_ERROR_SHAPE, name_of(op), ": reducing ", to_string(a.shape), " over axis ", axis, " gives ",
                 to_string(shape), ", which has more elements than fit in 64 bits");
    }
    if (extent == 0 && has_flag(op, PX_OP_FLAG_NEEDS_ELEMENTS))
        fail(PX_ERROR_SHAPE, name_of(op), ": the reduced extent of shape ", to_string(a.shape),
             " is empty, and an empty set has no ", name_of(op));
    Owned out(new_tensor(a.buffer->device, result_dtype(op, a.dtype), shape));
    px_reduce_attrs attrs{sizeof(px_reduce_attrs), axis, keepdims ? 1 : 0};
    px_tensor_desc in = a.desc(), o = out->desc();
    dispatch(a.device(), op, a.dtype, &in, 1, &o, 1, &attrs, numel(shape) > 0);
    return out.release();
}

TensorObj* matmul(const TensorObj& a, const TensorObj& b) {
    check_same_device(PX_OP_MATMUL, {&a, &b});
    check_same_dtype(PX_OP_MATMUL, a, b);
    int ra = a.shape.ndim, rb = b.shape.ndim;
    if (ra < 2 || ra > 3 || rb < 2 || rb > 3)
        fail(PX_ERROR_SHAPE, "matmul: operands must be 2-D or 3-D (batched), got ", to_string(a.shape), " and ",
             to_string(b.shape));
    int64_t m = a.shape.dims[ra - 2], k = a.shape.dims[ra - 1], k2 = b.shape.dims[rb - 2], n = b.shape.dims[rb - 1];
    if (k != k2)
        fail(PX_ERROR_SHAPE, "matmul: inner dimensions differ, ", to_string(a.shape), " x ", to_string(b.shape), " (", k,
             " vs ", k2, ")");
    int64_t batch = 1;
    if (ra == 3 && rb == 3 && a.shape.dims[0] != b.shape.dims[0])
        fail(PX_ERROR_SHAPE, "matmul: batch sizes differ, ", to_string(a.shape), " x ", to_string(b.shape));
    if (ra == 3) batch = a.shape.dims[0];
    if (rb == 3) batch = b.shape.dims[0];
    Shape shape;
    if (ra == 2 && rb == 2) {
        int64_t d[2] = {m, n};
        shape = make_shape(2, d);
    } else {
        int64_t d[3] = {batch, m, n};
        shape = make_shape(3, d);
    }
    Owned out(new_tensor(a.buffer->device, a.dtype, shape));
    // Row-major strides (0 where rows * cols overflows, which only a batch of
    // none allows); a 2-D operand is shared by the batch.
    auto as3d = [&](const TensorObj& t, int64_t rows, int64_t cols, bool batched) {
        px_tensor_desc d = t.desc();
        d.ndim = 3;
        d.shape[0] = batch, d.shape[1] = rows, d.shape[2] = cols;
        Shape s;
        s.ndim = 3, s.dims[0] = batch, s.dims[1] = rows, s.dims[2] = cols;
        contiguous_strides(s, d.strides);
        if (!batched) d.strides[0] = 0;
        return d;
    };
    px_tensor_desc in[2] = {as3d(a, m, k, ra == 3), as3d(b, k, n, rb == 3)}, o = as3d(*out, m, n, true);
    px_matmul_attrs attrs{sizeof(px_matmul_attrs), tf32_allowed(a.device())};
    dispatch(a.device(), PX_OP_MATMUL, a.dtype, in, 2, &o, 1, &attrs, numel(shape) > 0);
    return out.release();
}

TensorObj* transpose(const TensorObj& a, const int32_t* perm, int32_t nperm) {
    int nd = a.shape.ndim;
    int32_t p[PX_MAX_DIMS];
    if (perm) {
        if (nperm != nd) fail(PX_ERROR_INVALID_ARGUMENT, "transpose: ", nperm, " axes given for a tensor of rank ", nd);
        bool seen[PX_MAX_DIMS] = {};
        for (int i = 0; i < nd; ++i) {
            int32_t ax = normalize_axis(perm[i], nd, "transpose");
            if (seen[ax]) fail(PX_ERROR_INVALID_ARGUMENT, "transpose: axis ", ax, " appears twice in the permutation");
            seen[ax] = true;
            p[i] = ax;
        }
    } else {
        for (int i = 0; i < nd; ++i) p[i] = nd - 1 - i;
    }
    Shape shape;
    shape.ndim = nd;
    for (int i = 0; i < nd; ++i) shape.dims[i] = a.shape.dims[p[i]];
    Owned out(new_tensor(a.buffer->device, a.dtype, shape));
    px_tensor_desc in = a.desc(), o = out->desc();
    int64_t st[PX_MAX_DIMS];
    contiguous_strides(a.shape, st);
    for (int i = 0; i < nd; ++i) in.shape[i] = shape.dims[i], in.strides[i] = st[p[i]];
    dispatch(a.device(), PX_OP_COPY, a.dtype, &in, 1, &o, 1, nullptr, numel(shape) > 0);
    return out.release();
}

TensorObj* slice_axis(const TensorObj& a, int32_t axis, int64_t start, int64_t stop, int64_t step) {
    if (a.shape.ndim == 0) fail(PX_ERROR_INVALID_ARGUMENT, "slice: a scalar cannot be sliced");
    axis = normalize_axis(axis, a.shape.ndim, "slice");
    if (step <= 0) fail(PX_ERROR_INVALID_ARGUMENT, "slice: step must be positive, got ", step);
    int64_t dim = a.shape.dims[axis];
    auto clamp = [dim](int64_t i) {
        if (i < 0) i += dim;
        return i < 0 ? int64_t(0) : (i > dim ? dim : i);
    };
    start = clamp(start), stop = clamp(stop);
    // NumPy's count, which (unlike stop - start + step - 1) cannot overflow for any step.
    int64_t len = stop > start ? 1 + (stop - start - 1) / step : 0;
    Shape shape = a.shape;
    shape.dims[axis] = len;
    Owned out(new_tensor(a.buffer->device, a.dtype, shape));
    px_tensor_desc in = a.desc(), o = out->desc();
    in.shape[axis] = len;
    // A non-empty result reads a non-empty input, whose element offsets fit:
    // start < dim, and step < dim when len > 1. An empty one reads nothing,
    // and its offsets may not fit (an earlier axis of 0 allows huge dims).
    const bool nonempty = numel(shape) > 0;
    if (nonempty) {
        in.offset += static_cast<uint64_t>(start * in.strides[axis]) * px_dtype_size(a.dtype);
        if (len > 1) in.strides[axis] *= step;
    }
    dispatch(a.device(), PX_OP_COPY, a.dtype, &in, 1, &o, 1, nullptr, nonempty);
    return out.release();
}

TensorObj* concat(const std::vector<const TensorObj*>& parts, int32_t axis) {
    if (parts.empty()) fail(PX_ERROR_INVALID_ARGUMENT, "concat: no tensors given");
    const TensorObj& first = *parts[0];
    if (first.shape.ndim == 0) fail(PX_ERROR_SHAPE, "concat: scalars cannot be joined; reshape them to (1,) first");
    axis = normalize_axis(axis, first.shape.ndim, "concat");
    Shape shape = first.shape;
    shape.dims[axis] = 0;
    for (size_t i = 0; i < parts.size(); ++i) {
        const TensorObj& t = *parts[i];
        check_same_device(PX_OP_COPY, {&first, &t});
        check_same_dtype(PX_OP_COPY, first, t);
        bool fits = t.shape.ndim == first.shape.ndim;
        for (int d = 0; fits && d < t.shape.ndim; ++d) fits = d == axis || t.shape.dims[d] == first.shape.dims[d];
        if (!fits)
            fail(PX_ERROR_SHAPE, "concat: tensor ", i, " has shape ", to_string(t.shape), ", which does not match ",
                 to_string(first.shape), " outside axis ", axis);
        if (__builtin_add_overflow(shape.dims[axis], t.shape.dims[axis], &shape.dims[axis]))
            fail(PX_ERROR_SHAPE, "concat: the joined axis overflows");
    }
    shape = make_shape(shape.ndim, shape.dims, "concat result");
    Owned out(new_tensor(first.buffer->device, first.dtype, shape));
    px_tensor_desc o = out->desc();
    int64_t at = 0;
    for (const TensorObj* t : parts) {
        px_tensor_desc in = t->desc(), dst = o;
        for (int d = 0; d < shape.ndim; ++d) dst.shape[d] = t->shape.dims[d];
        const bool nonempty = numel(t->shape) > 0;
        if (nonempty)  // then the result is not empty either, and its offsets fit
            dst.offset += static_cast<uint64_t>(at * o.strides[axis]) * px_dtype_size(first.dtype);
        dispatch(first.device(), PX_OP_COPY, first.dtype, &in, 1, &dst, 1, nullptr, nonempty);
        at += t->shape.dims[axis];
    }
    return out.release();
}

TensorObj* cast(const TensorObj& a, px_dtype dtype) {
    // The input's dtype is checked by dispatch; a plugin may cast from a dtype and not to another.
    if (!a.device().supports(PX_OP_CAST, dtype))
        fail(PX_ERROR_UNSUPPORTED, "cast to ", px_dtype_name(dtype), " is not supported on ", a.device().label,
             " by plugin '", a.device().plugin->name, "'");
    Owned out(new_tensor(a.buffer->device, dtype, a.shape));
    px_tensor_desc in = a.desc(), o = out->desc();
    dispatch(a.device(), PX_OP_CAST, a.dtype, &in, 1, &o, 1, nullptr, numel(a.shape) > 0);
    return out.release();
}

}  // namespace px::router
