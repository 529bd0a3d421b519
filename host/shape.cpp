#include "shape.hpp"

#include <algorithm>

#include "error.hpp"

namespace px {

bool Shape::operator==(const Shape& o) const {
    return ndim == o.ndim && std::equal(dims, dims + ndim, o.dims);
}

bool count_elements(const int64_t* dims, int32_t ndim, int64_t& n) {
    n = 0;
    for (int i = 0; i < ndim; ++i)
        if (dims[i] == 0) return true;
    n = 1;
    for (int i = 0; i < ndim; ++i)
        if (__builtin_mul_overflow(n, dims[i], &n)) return false;
    return true;
}

Shape make_shape(int32_t ndim, const int64_t* dims, const char* what) {
    if (ndim < 0 || ndim > PX_MAX_DIMS)
        fail(PX_ERROR_SHAPE, what, ": rank ", ndim, " is outside 0..", PX_MAX_DIMS);
    if (ndim > 0 && !dims) fail(PX_ERROR_INVALID_ARGUMENT, what, ": NULL dims for rank ", ndim);
    Shape s;
    s.ndim = ndim;
    for (int i = 0; i < ndim; ++i) {
        if (dims[i] < 0) fail(PX_ERROR_SHAPE, what, ": dimension ", i, " is negative (", dims[i], ")");
        s.dims[i] = dims[i];
    }
    int64_t n = 0;
    if (!count_elements(s.dims, ndim, n))
        fail(PX_ERROR_SHAPE, what, ": ", to_string(s), " has more elements than fit in 64 bits");
    return s;
}

int64_t numel(const Shape& s) {
    int64_t n = 0;
    // Every Shape is made by make_shape or permuted from one, so its count
    // fits; were it not, INT64_MAX makes byte_size refuse it.
    return count_elements(s.dims, s.ndim, n) ? n : INT64_MAX;
}

bool fits(const Shape& s) {
    for (int i = 0; i < s.ndim; ++i)
        if (s.dims[i] < 0) return false;
    int64_t n = 0;
    return count_elements(s.dims, s.ndim, n);
}

uint64_t byte_size(const Shape& s, px_dtype dtype) {
    int64_t bytes;
    if (__builtin_mul_overflow(numel(s), static_cast<int64_t>(px_dtype_size(dtype)), &bytes))
        fail(PX_ERROR_SHAPE, "a ", px_dtype_name(dtype), " tensor of shape ", to_string(s),
             " needs more bytes than fit in 64 bits");
    return static_cast<uint64_t>(bytes);
}

std::string to_string(const Shape& s) {
    std::string out = "(";
    for (int i = 0; i < s.ndim; ++i) {
        if (i) out += ", ";
        out += std::to_string(s.dims[i]);
    }
    if (s.ndim == 1) out += ",";
    return out + ")";
}

Shape broadcast_dims(const Shape& a, const Shape& b, const char* op) {
    Shape out;
    out.ndim = std::max(a.ndim, b.ndim);
    for (int i = 0; i < out.ndim; ++i) {
        int ia = a.ndim - out.ndim + i, ib = b.ndim - out.ndim + i;
        int64_t da = ia >= 0 ? a.dims[ia] : 1, db = ib >= 0 ? b.dims[ib] : 1;
        if (da != db && da != 1 && db != 1)
            fail(PX_ERROR_SHAPE, op, ": shapes ", to_string(a), " and ", to_string(b),
                 " cannot be broadcast together (axis ", i, ": ", da, " vs ", db, ")");
        out.dims[i] = da == 1 ? db : da;
    }
    return out;
}

Shape broadcast(const Shape& a, const Shape& b, const char* op) {
    const Shape out = broadcast_dims(a, b, op);
    return make_shape(out.ndim, out.dims, op);  // the result's size may overflow where the inputs' did not
}

void contiguous_strides(const Shape& s, int64_t* strides) {
    int64_t st = 1;
    for (int i = s.ndim - 1; i >= 0; --i) {
        strides[i] = st;
        if (__builtin_mul_overflow(st, s.dims[i], &st)) st = 0;
    }
}

void broadcast_strides(const Shape& from, const Shape& to, int64_t* strides) {
    int64_t own[PX_MAX_DIMS];
    contiguous_strides(from, own);
    for (int i = 0; i < to.ndim; ++i) {
        int j = from.ndim - to.ndim + i;
        strides[i] = (j < 0 || from.dims[j] == 1) ? 0 : own[j];
    }
}

int32_t normalize_axis(int32_t axis, int32_t ndim, const char* op) {
    if (axis < -ndim || axis >= ndim)
        fail(PX_ERROR_INVALID_ARGUMENT, op, ": axis ", axis, " is out of range for a tensor of rank ", ndim);
    return axis < 0 ? axis + ndim : axis;
}

}  // namespace px
