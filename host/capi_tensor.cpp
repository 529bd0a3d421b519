// C API: creating, inspecting, moving and viewing tensors.
#include <cstring>
#include <vector>

#include "router.hpp"

using namespace px;

namespace {

// Publishes a new tensor into *out (already checked non-NULL).
void give(px_tensor** out, TensorObj* t) { *out = publish(t); }

}  // namespace

extern "C" {

px_status px_tensor_empty(px_runtime* runtime, px_device device, px_dtype dtype, int32_t ndim, const int64_t* shape,
                          px_tensor** out) {
    return guard("px_tensor_empty", [&] {
        Runtime& rt = get_runtime(runtime);
        need_out(out);
        check_dtype(dtype);
        Shape s = make_shape(ndim, shape);
        give(out, new_tensor(rt.device(device), dtype, s));
    });
}

px_status px_tensor_from_host(px_runtime* runtime, px_device device, px_dtype dtype, int32_t ndim,
                              const int64_t* shape, const void* data, uint64_t bytes, px_tensor** out) {
    return guard("px_tensor_from_host", [&] {
        Runtime& rt = get_runtime(runtime);
        need_out(out);
        check_dtype(dtype);
        Shape s = make_shape(ndim, shape);
        give(out, router::from_host(rt.device(device), dtype, s, data, bytes));
    });
}

px_status px_tensor_full(px_runtime* runtime, px_device device, px_dtype dtype, int32_t ndim, const int64_t* shape,
                         double value, px_tensor** out) {
    return guard("px_tensor_full", [&] {
        Runtime& rt = get_runtime(runtime);
        need_out(out);
        check_dtype(dtype);
        Shape s = make_shape(ndim, shape);
        give(out, router::full(rt.device(device), dtype, s, value));
    });
}

px_status px_tensor_arange(px_runtime* runtime, px_device device, px_dtype dtype, double start, double stop,
                           double step, px_tensor** out) {
    return guard("px_tensor_arange", [&] {
        Runtime& rt = get_runtime(runtime);
        need_out(out);
        check_dtype(dtype);
        give(out, router::arange(rt.device(device), dtype, start, stop, step));
    });
}

static px_status random_tensor(const char* fn, px_op op, px_runtime* runtime, px_device device, px_dtype dtype,
                               int32_t ndim, const int64_t* shape, double a, double b, px_tensor** out) {
    return guard(fn, [&] {
        Runtime& rt = get_runtime(runtime);
        need_out(out);
        check_dtype(dtype);
        Shape s = make_shape(ndim, shape);
        give(out, router::random(rt, op, rt.device(device), dtype, s, a, b));
    });
}

px_status px_tensor_random_uniform(px_runtime* runtime, px_device device, px_dtype dtype, int32_t ndim,
                                   const int64_t* shape, double low, double high, px_tensor** out) {
    return random_tensor("px_tensor_random_uniform", PX_OP_RANDOM_UNIFORM, runtime, device, dtype, ndim, shape, low,
                         high, out);
}

px_status px_tensor_random_normal(px_runtime* runtime, px_device device, px_dtype dtype, int32_t ndim,
                                  const int64_t* shape, double mean, double stddev, px_tensor** out) {
    return random_tensor("px_tensor_random_normal", PX_OP_RANDOM_NORMAL, runtime, device, dtype, ndim, shape, mean,
                         stddev, out);
}

px_status px_tensor_retain(px_tensor* tensor) {
    return guard("px_tensor_retain", [&] { get_tensor(tensor).refs.retain(); });
}

px_status px_tensor_release(px_tensor* tensor) {
    return guard("px_tensor_release", [&] { release(tensor); });
}

px_status px_tensor_device(px_tensor* tensor, px_device* out) {
    return guard("px_tensor_device", [&] {
        TensorObj& t = get_tensor(tensor);
        *need_out(out) = t.device().id;
    });
}

px_status px_tensor_dtype(px_tensor* tensor, px_dtype* out) {
    return guard("px_tensor_dtype", [&] {
        TensorObj& t = get_tensor(tensor);
        *need_out(out) = t.dtype;
    });
}

px_status px_tensor_ndim(px_tensor* tensor, int32_t* out) {
    return guard("px_tensor_ndim", [&] {
        TensorObj& t = get_tensor(tensor);
        *need_out(out) = t.shape.ndim;
    });
}

px_status px_tensor_shape(px_tensor* tensor, int64_t* out, int32_t capacity) {
    return guard("px_tensor_shape", [&] {
        TensorObj& t = get_tensor(tensor);
        if (capacity < t.shape.ndim)
            fail(PX_ERROR_INVALID_ARGUMENT, "capacity ", capacity, " is less than the tensor's rank ", t.shape.ndim);
        if (t.shape.ndim > 0) need_out(out);
        for (int i = 0; i < t.shape.ndim; ++i) out[i] = t.shape.dims[i];
    });
}

px_status px_tensor_numel(px_tensor* tensor, int64_t* out) {
    return guard("px_tensor_numel", [&] {
        TensorObj& t = get_tensor(tensor);
        *need_out(out) = numel(t.shape);
    });
}

px_status px_tensor_version(px_tensor* tensor, uint64_t* out) {
    return guard("px_tensor_version", [&] { *need_out(out) = get_tensor(tensor).buffer->writes.load(); });
}

px_status px_tensor_to_host(px_tensor* tensor, void* dst, uint64_t bytes) {
    return guard("px_tensor_to_host", [&] { router::to_host(get_tensor(tensor), dst, bytes); });
}

px_status px_tensor_copy_to(px_tensor* tensor, px_device device, px_tensor** out) {
    return guard("px_tensor_copy_to", [&] {
        TensorObj& t = get_tensor(tensor);
        need_out(out);
        give(out, router::copy_to(t, DeviceImpl::runtime_device(t.buffer->device, device)));
    });
}

px_status px_tensor_as_on(px_tensor* tensor, px_device device, px_tensor** out) {
    return guard("px_tensor_as_on", [&] {
        TensorObj& t = get_tensor(tensor);
        need_out(out);
        auto dev = DeviceImpl::runtime_device(t.buffer->device, device);
        if (dev.get() == &t.device()) {
            t.refs.retain();
            *out = tensor;
            return;
        }
        give(out, router::copy_to(t, dev));
    });
}

px_status px_tensor_assign(px_tensor* dst, px_tensor* src) {
    return guard("px_tensor_assign", [&] {
        TensorObj& d = get_tensor(dst, "dst");
        const TensorObj& s = get_tensor(src, "src");
        router::check_values_dtype(s, d);
        if (!(s.shape == d.shape))
            fail(PX_ERROR_SHAPE, "the values have shape ", to_string(s.shape), ", the tensor ",
                 to_string(d.shape), "; they must be the same");
        if (s.buffer == d.buffer) {
            if (s.offset == d.offset) return;  // the same elements
            const uint64_t bytes = d.bytes();
            if (s.offset < d.offset + bytes && d.offset < s.offset + bytes)
                fail(PX_ERROR_INVALID_ARGUMENT,
                     "the values and the tensor are overlapping parts of one tensor's memory; assign a copy");
        }
        if (&s.device() == &d.device()) {  // the whole tensor as the region (imported memory read first)
            const std::vector<int64_t> start(size_t(d.shape.ndim), 0), step(size_t(d.shape.ndim), 1);
            router::assign_region(d, start.data(), step.data(), d.shape.dims, s);
            return;
        }
        router::copy_into(s, d);
        d.note_write();  // once queued (a refused copy writes nothing)
    });
}

px_status px_tensor_assign_region(px_tensor* dst, const int64_t* start, const int64_t* step, const int64_t* count,
                                  px_tensor* src) {
    return guard("px_tensor_assign_region", [&] {
        TensorObj& d = get_tensor(dst, "dst");
        const TensorObj& s = get_tensor(src, "src");
        router::assign_region(d, start, step, count, s);
    });
}

px_status px_tensor_reshape(px_tensor* tensor, int32_t ndim, const int64_t* shape, px_tensor** out) {
    return guard("px_tensor_reshape", [&] {
        TensorObj& t = get_tensor(tensor);
        need_out(out);
        if (ndim < 0 || ndim > PX_MAX_DIMS) fail(PX_ERROR_SHAPE, "rank ", ndim, " is outside 0..", PX_MAX_DIMS);
        if (ndim > 0 && !shape) fail(PX_ERROR_INVALID_ARGUMENT, "'shape' is NULL");
        int64_t dims[PX_MAX_DIMS];
        int infer = -1;
        int64_t known = 1;
        for (int i = 0; i < ndim; ++i) {
            dims[i] = shape[i];
            if (shape[i] == -1) {
                if (infer >= 0) fail(PX_ERROR_SHAPE, "only one dimension may be -1 (axes ", infer, " and ", i, " are)");
                infer = i;
                continue;
            }
            if (shape[i] < 0) fail(PX_ERROR_SHAPE, "dimension ", i, " is negative (", shape[i], ")");
        }
        int64_t given[PX_MAX_DIMS];  // the dims but the inferred one
        int32_t count = 0;
        for (int i = 0; i < ndim; ++i)
            if (i != infer) given[count++] = shape[i];
        if (!count_elements(given, count, known)) fail(PX_ERROR_SHAPE, "the new shape overflows 64 bits");
        int64_t total = numel(t.shape);
        if (infer >= 0) {
            if (known == 0 || total % known != 0)
                fail(PX_ERROR_SHAPE, "cannot infer axis ", infer, ": ", total, " elements of ", to_string(t.shape),
                     " do not divide by ", known);
            dims[infer] = total / known;
        }
        Shape s = make_shape(ndim, dims);
        if (numel(s) != total)
            fail(PX_ERROR_SHAPE, "cannot reshape ", to_string(t.shape), " (", total, " elements) into ", to_string(s), " (",
                 numel(s), " elements)");
        give(out, new_view(t, t.offset, s));
    });
}

px_status px_tensor_slice(px_tensor* tensor, int64_t start, int64_t stop, px_tensor** out) {
    return guard("px_tensor_slice", [&] {
        TensorObj& t = get_tensor(tensor);
        need_out(out);
        if (t.shape.ndim == 0) fail(PX_ERROR_SHAPE, "a scalar has no first axis to slice");
        int64_t rows = t.shape.dims[0];
        if (start < 0 || stop < start || stop > rows)
            fail(PX_ERROR_INVALID_ARGUMENT, "rows [", start, ", ", stop, ") are not within [0, ", rows, "] of shape ",
                 to_string(t.shape));
        Shape s = t.shape;
        s.dims[0] = stop - start;
        uint64_t row_bytes = rows ? t.bytes() / static_cast<uint64_t>(rows) : 0;
        give(out, new_view(t, t.offset + static_cast<uint64_t>(start) * row_bytes, s));
    });
}

}  // extern "C"
