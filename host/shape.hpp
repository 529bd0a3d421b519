// Shapes: validation, overflow-checked sizes, NumPy broadcasting, strides.
#pragma once

#include <cstdint>
#include <string>

#include "plexus/types.h"

namespace px {

struct Shape {
    int32_t ndim = 0;
    int64_t dims[PX_MAX_DIMS] = {};

    int64_t operator[](int i) const { return dims[i]; }
    bool operator==(const Shape& o) const;
    bool operator!=(const Shape& o) const { return !(*this == o); }
};

// The element count of `dims`, or false when it does not fit in 64 bits. A
// zero-length axis makes the count 0 whatever the other axes are, in any
// order: (0, 2^32, 2^32) and its transpose (2^32, 2^32, 0) are both empty.
bool count_elements(const int64_t* dims, int32_t ndim, int64_t& n);
// Checks rank and dims (non-negative, product fits in 63 bits); `what` names
// the argument in messages.
Shape make_shape(int32_t ndim, const int64_t* dims, const char* what = "shape");
// The number of elements (the shape was validated, so it cannot overflow).
int64_t numel(const Shape& s);
// Whether the dims are non-negative and their product fits in 63 bits, an
// empty axis making it 0 (for shapes a rule derives).
bool fits(const Shape& s);
// numel * dtype size, failing with PX_ERROR_SHAPE when it would overflow.
uint64_t byte_size(const Shape& s, px_dtype dtype);
// "(2, 3)"
std::string to_string(const Shape& s);
// NumPy broadcasting of two shapes; `op` names the op in the error.
Shape broadcast(const Shape& a, const Shape& b, const char* op);
// The same dims, not yet checked to fit (for a rule that broadcasts several
// shapes and checks the result once).
Shape broadcast_dims(const Shape& a, const Shape& b, const char* op);
// Row-major strides in elements. A stride past 64 bits (possible only when an
// earlier axis is 0, so the tensor is empty and never indexed) is 0.
void contiguous_strides(const Shape& s, int64_t* strides);
// Strides that read `from` as if it had shape `to` (stride 0 on broadcast axes).
void broadcast_strides(const Shape& from, const Shape& to, int64_t* strides);
// Normalizes a possibly negative axis, failing with a message naming `op`.
int32_t normalize_axis(int32_t axis, int32_t ndim, const char* op);

}  // namespace px
