// Which (op, dtype) pairs the CPU plugin implements, and the dispatch to the
// kernel file of each op family.
#include "kernels.hpp"

namespace pxcpu {

namespace {
bool is_float(int32_t d) { return d == PX_FLOAT32 || d == PX_FLOAT64; }
bool is_dtype(int32_t d) { return d >= PX_FLOAT32 && d <= PX_UINT8; }
}  // namespace

bool kernel_supports(int32_t op, int32_t dtype) {
    if (!is_dtype(dtype)) return false;
    switch (op) {
    case PX_OP_ADD: case PX_OP_SUB: case PX_OP_MUL: case PX_OP_DIV:
    case PX_OP_EQ: case PX_OP_NE: case PX_OP_LT: case PX_OP_LE: case PX_OP_GT: case PX_OP_GE:
    case PX_OP_WHERE: case PX_OP_SUM: case PX_OP_MEAN: case PX_OP_MAX: case PX_OP_MIN: case PX_OP_ARGMAX:
    case PX_OP_COPY: case PX_OP_CAST: case PX_OP_FILL: case PX_OP_ARANGE:
        return true;
    case PX_OP_NEG: case PX_OP_ABS: case PX_OP_RELU:
        return dtype != PX_UINT8;
    case PX_OP_POW: case PX_OP_EXP: case PX_OP_LOG: case PX_OP_SQRT: case PX_OP_SIGMOID: case PX_OP_TANH:
    case PX_OP_RANDOM_UNIFORM: case PX_OP_RANDOM_NORMAL:
    case PX_OP_MATMUL:  // through OpenBLAS, which has no integer gemm
    case PX_OP_GEMM:
    case PX_OP_CONV2D: case PX_OP_CONV2D_BACKWARD_INPUT: case PX_OP_CONV2D_BACKWARD_WEIGHT:
    case PX_OP_BIAS_ADD: case PX_OP_BIAS_GRAD:
    case PX_OP_MAX_POOL2D: case PX_OP_AVG_POOL2D: case PX_OP_MAX_POOL2D_BACKWARD: case PX_OP_AVG_POOL2D_BACKWARD:
    case PX_OP_RELU_BACKWARD: case PX_OP_SIGMOID_BACKWARD: case PX_OP_TANH_BACKWARD:
    case PX_OP_LOG_SOFTMAX: case PX_OP_LOG_SOFTMAX_BACKWARD:
    case PX_OP_SOFTMAX_CROSS_ENTROPY: case PX_OP_SOFTMAX_CROSS_ENTROPY_BACKWARD:
    case PX_OP_DROPOUT: case PX_OP_DROPOUT_BACKWARD: case PX_OP_SGD_UPDATE:
    case PX_OP_BIAS_RELU_MAX_POOL2D: case PX_OP_BIAS_RELU_MAX_POOL2D_BACKWARD:
        return is_float(dtype);
    default:
        return false;
    }
}

void run_op(const OpTask& t) {
    switch (t.op) {
    case PX_OP_SUM: case PX_OP_MEAN: case PX_OP_MAX: case PX_OP_MIN: case PX_OP_ARGMAX:
        return run_reduce(t);
    case PX_OP_MATMUL:
        return run_matmul(t);
    case PX_OP_COPY: case PX_OP_CAST: case PX_OP_FILL: case PX_OP_ARANGE:
        return run_data(t);
    case PX_OP_RANDOM_UNIFORM: case PX_OP_RANDOM_NORMAL:
        return run_random(t);
    case PX_OP_GEMM:
        return run_gemm(t);
    case PX_OP_CONV2D: case PX_OP_CONV2D_BACKWARD_INPUT: case PX_OP_CONV2D_BACKWARD_WEIGHT:
        return run_conv(t);
    case PX_OP_MAX_POOL2D: case PX_OP_AVG_POOL2D: case PX_OP_MAX_POOL2D_BACKWARD: case PX_OP_AVG_POOL2D_BACKWARD:
        return run_pool(t);
    case PX_OP_BIAS_RELU_MAX_POOL2D: case PX_OP_BIAS_RELU_MAX_POOL2D_BACKWARD:
        return run_pool_fused(t);
    case PX_OP_LOG_SOFTMAX: case PX_OP_LOG_SOFTMAX_BACKWARD:
    case PX_OP_SOFTMAX_CROSS_ENTROPY: case PX_OP_SOFTMAX_CROSS_ENTROPY_BACKWARD:
        return run_softmax(t);
    case PX_OP_BIAS_ADD: case PX_OP_BIAS_GRAD: case PX_OP_RELU_BACKWARD: case PX_OP_SIGMOID_BACKWARD:
    case PX_OP_TANH_BACKWARD: case PX_OP_SGD_UPDATE:
        return run_nn_pointwise(t);
    case PX_OP_DROPOUT: case PX_OP_DROPOUT_BACKWARD:
        return run_dropout(t);
    default:
        return run_elementwise(t);
    }
}

}  // namespace pxcpu
