#include "op_rules.hpp"

#include "plexus/plugin.h"

namespace px {
namespace {
bool is_float(px_dtype d) { return d == PX_FLOAT32 || d == PX_FLOAT64; }
bool is_signed(px_dtype d) { return d != PX_UINT8; }
}  // namespace

OpFamily op_family(int32_t op) {
    if (op >= PX_OP_ADD && op <= PX_OP_POW) return OpFamily::binary;
    if (op >= PX_OP_EQ && op <= PX_OP_GE) return OpFamily::comparison;
    if (op >= PX_OP_NEG && op <= PX_OP_TANH) return OpFamily::unary;
    if (op == PX_OP_WHERE) return OpFamily::where;
    if (op >= PX_OP_SUM && op <= PX_OP_ARGMAX) return OpFamily::reduce;
    if (op == PX_OP_MATMUL) return OpFamily::matmul;
    if (op == PX_OP_COPY) return OpFamily::copy;
    if (op == PX_OP_CAST) return OpFamily::cast;
    if (op >= PX_OP_FILL && op <= PX_OP_RANDOM_NORMAL) return OpFamily::creation;
    if (op == PX_OP_GEMM || (op >= PX_OP_CONV2D && px_op_name(op))) return OpFamily::nn;
    return OpFamily::none;
}

bool op_accepts(int32_t op, px_dtype d) {
    switch (op) {
    case PX_OP_POW: case PX_OP_EXP: case PX_OP_LOG: case PX_OP_SQRT: case PX_OP_SIGMOID:
    case PX_OP_TANH: case PX_OP_RANDOM_UNIFORM: case PX_OP_RANDOM_NORMAL:
        return is_float(d);
    case PX_OP_NEG: case PX_OP_ABS: case PX_OP_RELU:
        return is_signed(d);
    default:
        if (op_family(op) == OpFamily::nn) return is_float(d);
        return op_family(op) != OpFamily::none;
    }
}

const char* op_accepted_dtypes(int32_t op) {
    switch (op) {
    case PX_OP_POW: case PX_OP_EXP: case PX_OP_LOG: case PX_OP_SQRT: case PX_OP_SIGMOID:
    case PX_OP_TANH: case PX_OP_RANDOM_UNIFORM: case PX_OP_RANDOM_NORMAL:
        return "float32, float64";
    case PX_OP_NEG: case PX_OP_ABS: case PX_OP_RELU:
        return "float32, float64, int32, int64";
    default:
        if (op_family(op) == OpFamily::nn) return "float32, float64";
        return "float32, float64, int32, int64, uint8";
    }
}

px_dtype op_result_dtype(int32_t op, px_dtype d) {
    return static_cast<px_dtype>(px_op_result_dtype(op, d));  // the rule plugins check outputs against
}

}  // namespace px
