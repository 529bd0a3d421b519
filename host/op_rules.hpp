// What each op means for dtypes, independent of any plugin: which input
// dtypes it accepts and what dtype it produces. A dtype the op cannot mean is
// PX_ERROR_DTYPE; a meaningful one the device's plugin lacks is
// PX_ERROR_UNSUPPORTED (checked by the router).
#pragma once

#include "plexus/types.h"

namespace px {

// nn: the ABI 1.1 neural-network ops (GEMM, conv, pooling, losses, ...).
enum class OpFamily { binary, comparison, unary, where, reduce, matmul, copy, cast, creation, nn, none };

OpFamily op_family(int32_t op);
// Nonzero when `op` is meaningful on inputs of `dtype`.
bool op_accepts(int32_t op, px_dtype dtype);
// The result dtype of `op` on inputs of `dtype`.
px_dtype op_result_dtype(int32_t op, px_dtype dtype);
// "int32, int64, float32, float64" etc. for messages.
const char* op_accepted_dtypes(int32_t op);

}  // namespace px
