// Which (op, dtype) pairs the CUDA plugin implements (the CPU plugin's set,
// so a program runs unchanged on either) and the dispatch to the kernel file
// of each op family.
#include "op_args.hpp"

namespace pxcuda {

bool kernel_supports(int32_t op, int32_t dtype) {
    const bool any = dtype >= PX_FLOAT32 && dtype <= PX_UINT8;
    const bool real = dtype == PX_FLOAT32 || dtype == PX_FLOAT64;
    switch (op) {
    case PX_OP_ADD: case PX_OP_SUB: case PX_OP_MUL: case PX_OP_DIV:
    case PX_OP_EQ: case PX_OP_NE: case PX_OP_LT: case PX_OP_LE: case PX_OP_GT: case PX_OP_GE:
    case PX_OP_WHERE: case PX_OP_SUM: case PX_OP_MEAN: case PX_OP_MAX: case PX_OP_MIN: case PX_OP_ARGMAX:
    case PX_OP_COPY: case PX_OP_CAST: case PX_OP_FILL: case PX_OP_ARANGE:
        return any;
    case PX_OP_NEG: case PX_OP_ABS: case PX_OP_RELU:  // signed arithmetic
        return any && dtype != PX_UINT8;
    case PX_OP_POW: case PX_OP_EXP: case PX_OP_LOG: case PX_OP_SQRT: case PX_OP_SIGMOID: case PX_OP_TANH:
    case PX_OP_RANDOM_UNIFORM: case PX_OP_RANDOM_NORMAL:
    case PX_OP_MATMUL: case PX_OP_GEMM:  // cuBLAS has no integer gemm with these semantics
    case PX_OP_CONV2D: case PX_OP_CONV2D_BACKWARD_INPUT: case PX_OP_CONV2D_BACKWARD_WEIGHT:
    case PX_OP_BIAS_ADD: case PX_OP_BIAS_GRAD:
    case PX_OP_MAX_POOL2D: case PX_OP_AVG_POOL2D: case PX_OP_MAX_POOL2D_BACKWARD: case PX_OP_AVG_POOL2D_BACKWARD:
    case PX_OP_RELU_BACKWARD: case PX_OP_SIGMOID_BACKWARD: case PX_OP_TANH_BACKWARD:
    case PX_OP_LOG_SOFTMAX: case PX_OP_LOG_SOFTMAX_BACKWARD:
    case PX_OP_SOFTMAX_CROSS_ENTROPY: case PX_OP_SOFTMAX_CROSS_ENTROPY_BACKWARD:
    case PX_OP_DROPOUT: case PX_OP_DROPOUT_BACKWARD: case PX_OP_SGD_UPDATE:
    case PX_OP_BIAS_RELU_MAX_POOL2D: case PX_OP_BIAS_RELU_MAX_POOL2D_BACKWARD:
        return real;
    default:
        return false;
    }
}

void run_op(const OpArgs& t, const Launch& l) {
    switch (t.op) {
    case PX_OP_SUM: case PX_OP_MEAN: case PX_OP_MAX: case PX_OP_MIN: case PX_OP_ARGMAX:
        return run_reduce(t, l);
    case PX_OP_MATMUL:
        return run_matmul(t, l);
    case PX_OP_GEMM:
        return run_gemm(t, l);
    case PX_OP_COPY: case PX_OP_CAST: case PX_OP_FILL: case PX_OP_ARANGE:
    case PX_OP_RANDOM_UNIFORM: case PX_OP_RANDOM_NORMAL:
        return run_data(t, l);
    case PX_OP_CONV2D: case PX_OP_CONV2D_BACKWARD_INPUT: case PX_OP_CONV2D_BACKWARD_WEIGHT:
        return run_conv(t, l);
    case PX_OP_MAX_POOL2D: case PX_OP_AVG_POOL2D: case PX_OP_MAX_POOL2D_BACKWARD: case PX_OP_AVG_POOL2D_BACKWARD:
        return run_pool(t, l);
    case PX_OP_BIAS_RELU_MAX_POOL2D: case PX_OP_BIAS_RELU_MAX_POOL2D_BACKWARD:
        return run_pool_fused(t, l);
    case PX_OP_LOG_SOFTMAX: case PX_OP_LOG_SOFTMAX_BACKWARD:
    case PX_OP_SOFTMAX_CROSS_ENTROPY: case PX_OP_SOFTMAX_CROSS_ENTROPY_BACKWARD:
        return run_softmax(t, l);
    case PX_OP_BIAS_ADD: case PX_OP_BIAS_GRAD: case PX_OP_RELU_BACKWARD: case PX_OP_SIGMOID_BACKWARD:
    case PX_OP_TANH_BACKWARD: case PX_OP_DROPOUT: case PX_OP_DROPOUT_BACKWARD: case PX_OP_SGD_UPDATE:
        return run_nn_pointwise(t, l);
    default:
        return run_elementwise(t, l);
    }
}

}  // namespace pxcuda
