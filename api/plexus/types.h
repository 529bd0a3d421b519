/* Plexus: the value types shared by the application C API (plexus.h) and the
 * plugin ABI (plugin.h). Pure C99. Every enum value here is part of the ABI:
 * values are assigned once and never renumbered; new values are appended. */
#ifndef PLEXUS_TYPES_H
#define PLEXUS_TYPES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* In C++ the enums below have int32_t as their fixed underlying type, so a
 * value a C caller may pass that has no name (a dtype 99, to be refused with
 * an error) is still a valid value of the type, not undefined behaviour. In C
 * they are plain enums; both are 4 bytes. */
#ifdef __cplusplus
#define PX_ENUM(name) enum name : int32_t
#else
#define PX_ENUM(name) enum name
#endif

/* Largest rank a tensor may have. */
#define PX_MAX_DIMS 8

/* Size of the message buffer in px_plugin_error (bytes, NUL included). */
#define PX_MESSAGE_MAX 512

typedef PX_ENUM(px_status) {
    PX_OK = 0,
    PX_ERROR_INVALID_ARGUMENT = 1, /* a NULL pointer, a bad value, an out-of-range axis */
    PX_ERROR_INVALID_HANDLE = 2,   /* NULL, released, or of the wrong kind */
    PX_ERROR_DEVICE_MISMATCH = 3,  /* inputs live on different devices */
    PX_ERROR_SHAPE = 4,            /* shapes that do not fit the op, or overflow */
    PX_ERROR_DTYPE = 5,            /* dtypes that do not fit the op */
    PX_ERROR_OUT_OF_MEMORY = 6,
    PX_ERROR_UNSUPPORTED = 7,      /* the device's plugin lacks this (op, dtype) */
    PX_ERROR_NO_DEVICE = 8,        /* no such device, or no plugin provides it */
    PX_ERROR_PLUGIN = 9,           /* a plugin broke its contract or failed to load */
    PX_ERROR_DEVICE = 10,          /* work queued on a device failed */
    PX_ERROR_INTERNAL = 11
} px_status;

typedef PX_ENUM(px_dtype) {
    PX_FLOAT32 = 1,
    PX_FLOAT64 = 2,
    PX_INT32 = 3,
    PX_INT64 = 4,
    PX_UINT8 = 5 /* also the result of comparisons (0 or 1) */
} px_dtype;

typedef PX_ENUM(px_device_kind) {
    PX_DEVICE_CPU = 1,
    PX_DEVICE_GPU = 2,
    PX_DEVICE_ACCELERATOR = 3 /* anything else a plugin offers */
} px_device_kind;

/* A device as applications name it: cpu(0), gpu(1). The index counts the
 * devices of that kind over all loaded plugins, in load order. */
typedef struct px_device {
    int32_t kind;  /* a px_device_kind */
    int32_t index;
} px_device;

/* Op numbers: stable forever. Plugins receive these in px_op_call. */
typedef PX_ENUM(px_op) {
    /* elementwise binary, NumPy broadcasting; attrs: px_binary_attrs or NULL */
    PX_OP_ADD = 1,
    PX_OP_SUB = 2,
    PX_OP_MUL = 3,
    PX_OP_DIV = 4,
    PX_OP_POW = 5,
    PX_OP_EQ = 6, /* comparisons write uint8 0/1 */
    PX_OP_NE = 7,
    PX_OP_LT = 8,
    PX_OP_LE = 9,
    PX_OP_GT = 10,
    PX_OP_GE = 11,
    /* elementwise unary; no attrs */
    PX_OP_NEG = 20,
    PX_OP_EXP = 21,
    PX_OP_LOG = 22,
    PX_OP_SQRT = 23,
    PX_OP_ABS = 24,
    PX_OP_RELU = 25,
    PX_OP_SIGMOID = 26,
    PX_OP_TANH = 27,
    /* where(cond uint8, a, b), broadcasting over all three; no attrs */
    PX_OP_WHERE = 30,
    /* reductions; attrs: px_reduce_attrs */
    PX_OP_SUM = 40,
    PX_OP_MEAN = 41,
    PX_OP_MAX = 42,
    PX_OP_MIN = 43,
    PX_OP_ARGMAX = 44,
    /* matrix product, 2-D or batched 3-D; attrs: px_matmul_attrs or NULL */
    PX_OP_MATMUL = 50,
    /* data movement */
    PX_OP_COPY = 60, /* strided input -> strided output, same dtype; no attrs */
    PX_OP_CAST = 61, /* contiguous input -> contiguous output of another dtype */
    /* creation; output only */
    PX_OP_FILL = 70,           /* attrs: px_fill_attrs */
    PX_OP_ARANGE = 71,         /* attrs: px_arange_attrs */
    PX_OP_RANDOM_UNIFORM = 72, /* attrs: px_random_attrs */
    PX_OP_RANDOM_NORMAL = 73,  /* attrs: px_random_attrs */

    /* ---- ABI 1.1: neural-network ops (float32, float64) ---- */
    /* 2-D op(a) x op(b), where op transposes when asked; attrs: px_gemm_attrs */
    PX_OP_GEMM = 51,
    /* x (N,C,H,W), w (O,C,KH,KW) -> y (N,O,OH,OW); attrs: px_conv2d_attrs */
    PX_OP_CONV2D = 100,
    PX_OP_CONV2D_BACKWARD_INPUT = 101,  /* dy, w -> dx; the output desc gives x's shape */
    PX_OP_CONV2D_BACKWARD_WEIGHT = 102, /* dy, x -> dw; the output desc gives w's shape */
    PX_OP_BIAS_ADD = 103,  /* x (N,C,...), b (C) -> x + b along axis 1; no attrs */
    PX_OP_BIAS_GRAD = 104, /* dy (N,C,...) -> (C), the sum over every axis but 1 */
    /* x (N,C,H,W) -> (N,C,OH,OW); attrs: px_pool2d_attrs. Average pooling
     * divides by the whole window, padding included. */
    PX_OP_MAX_POOL2D = 110,
    PX_OP_AVG_POOL2D = 111,
    PX_OP_MAX_POOL2D_BACKWARD = 112, /* x, dy -> dx; ties go to the first maximum */
    PX_OP_AVG_POOL2D_BACKWARD = 113, /* dy -> dx; the output desc gives x's shape */
    /* activation gradients from the forward result y: (y, dy) -> dx */
    PX_OP_RELU_BACKWARD = 120,
    PX_OP_SIGMOID_BACKWARD = 121,
    PX_OP_TANH_BACKWARD = 122,
    /* over the last axis of a 2-D input (N,C) */
    PX_OP_LOG_SOFTMAX = 130,
    PX_OP_LOG_SOFTMAX_BACKWARD = 131, /* y, dy -> dx */
    /* logits (N,C), labels (N) int32 or int64 -> loss (N); a label outside
     * [0, C) fails on the device */
    PX_OP_SOFTMAX_CROSS_ENTROPY = 132,
    PX_OP_SOFTMAX_CROSS_ENTROPY_BACKWARD = 133, /* logits, labels, dloss (N) -> dlogits */
    /* inverted dropout, the mask drawn from Philox; attrs: px_dropout_attrs */
    PX_OP_DROPOUT = 140,
    PX_OP_DROPOUT_BACKWARD = 141, /* dy -> dx with the same attrs (same mask) */
    /* one SGD step in place; attrs: px_sgd_attrs. Inputs (param, grad) or
     * (param, grad, momentum); outputs the same param (and momentum) buffers. */
    PX_OP_SGD_UPDATE = 150,

    /* ---- ABI 1.4: fused ops (float32, float64); optional: a plugin may
     * leave them out, and the frontend then runs the unfused ops ---- */
    /* x (N,C,H,W), b (C) -> relu(max_pool2d(x) + b) (N,C,OH,OW), the same
     * values as max_pool2d(relu(bias_add(x, b))) in one pass over x;
     * attrs: px_pool2d_attrs. A NaN counts as 0, as relu(NaN) is 0
     * (docs/semantics.md). */
    PX_OP_BIAS_RELU_MAX_POOL2D = 114,
    /* x, b, dy -> dx (N,C,H,W) and db (C), two outputs: each window's dy goes
     * to the first maximum of x + b when relu passed it (max + b > 0). */
    PX_OP_BIAS_RELU_MAX_POOL2D_BACKWARD = 115
} px_op;

/* One past the largest op number; a table indexed by op may use this size. */
#define PX_OP_NUMBER_LIMIT 256

/* Names for messages; NULL for a number that is not an op. */
static inline const char* px_op_name(int32_t op) {
    switch (op) {
    case PX_OP_ADD: return "add";
    case PX_OP_SUB: return "sub";
    case PX_OP_MUL: return "mul";
    case PX_OP_DIV: return "div";
    case PX_OP_POW: return "pow";
    case PX_OP_EQ: return "eq";
    case PX_OP_NE: return "ne";
    case PX_OP_LT: return "lt";
    case PX_OP_LE: return "le";
    case PX_OP_GT: return "gt";
    case PX_OP_GE: return "ge";
    case PX_OP_NEG: return "neg";
    case PX_OP_EXP: return "exp";
    case PX_OP_LOG: return "log";
    case PX_OP_SQRT: return "sqrt";
    case PX_OP_ABS: return "abs";
    case PX_OP_RELU: return "relu";
    case PX_OP_SIGMOID: return "sigmoid";
    case PX_OP_TANH: return "tanh";
    case PX_OP_WHERE: return "where";
    case PX_OP_SUM: return "sum";
    case PX_OP_MEAN: return "mean";
    case PX_OP_MAX: return "max";
    case PX_OP_MIN: return "min";
    case PX_OP_ARGMAX: return "argmax";
    case PX_OP_MATMUL: return "matmul";
    case PX_OP_COPY: return "copy";
    case PX_OP_CAST: return "cast";
    case PX_OP_FILL: return "fill";
    case PX_OP_ARANGE: return "arange";
    case PX_OP_RANDOM_UNIFORM: return "random_uniform";
    case PX_OP_RANDOM_NORMAL: return "random_normal";
    case PX_OP_GEMM: return "gemm";
    case PX_OP_CONV2D: return "conv2d";
    case PX_OP_CONV2D_BACKWARD_INPUT: return "conv2d_backward_input";
    case PX_OP_CONV2D_BACKWARD_WEIGHT: return "conv2d_backward_weight";
    case PX_OP_BIAS_ADD: return "bias_add";
    case PX_OP_BIAS_GRAD: return "bias_grad";
    case PX_OP_MAX_POOL2D: return "max_pool2d";
    case PX_OP_AVG_POOL2D: return "avg_pool2d";
    case PX_OP_MAX_POOL2D_BACKWARD: return "max_pool2d_backward";
    case PX_OP_AVG_POOL2D_BACKWARD: return "avg_pool2d_backward";
    case PX_OP_RELU_BACKWARD: return "relu_backward";
    case PX_OP_SIGMOID_BACKWARD: return "sigmoid_backward";
    case PX_OP_TANH_BACKWARD: return "tanh_backward";
    case PX_OP_LOG_SOFTMAX: return "log_softmax";
    case PX_OP_LOG_SOFTMAX_BACKWARD: return "log_softmax_backward";
    case PX_OP_SOFTMAX_CROSS_ENTROPY: return "softmax_cross_entropy";
    case PX_OP_SOFTMAX_CROSS_ENTROPY_BACKWARD: return "softmax_cross_entropy_backward";
    case PX_OP_DROPOUT: return "dropout";
    case PX_OP_DROPOUT_BACKWARD: return "dropout_backward";
    case PX_OP_SGD_UPDATE: return "sgd_update";
    case PX_OP_BIAS_RELU_MAX_POOL2D: return "bias_relu_max_pool2d";
    case PX_OP_BIAS_RELU_MAX_POOL2D_BACKWARD: return "bias_relu_max_pool2d_backward";
    default: return NULL;
    }
}

/* Names for messages; NULL for a number that is not a dtype. */
static inline const char* px_dtype_name(int32_t dtype) {
    switch (dtype) {
    case PX_FLOAT32: return "float32";
    case PX_FLOAT64: return "float64";
    case PX_INT32: return "int32";
    case PX_INT64: return "int64";
    case PX_UINT8: return "uint8";
    default: return NULL;
    }
}

/* Bytes per element; 0 for a number that is not a dtype. */
static inline size_t px_dtype_size(int32_t dtype) {
    switch (dtype) {
    case PX_FLOAT32: return 4;
    case PX_FLOAT64: return 8;
    case PX_INT32: return 4;
    case PX_INT64: return 8;
    case PX_UINT8: return 1;
    default: return 0;
    }
}

/* "cpu", "gpu", "accel"; NULL for a number that is not a kind. */
static inline const char* px_device_kind_name(int32_t kind) {
    switch (kind) {
    case PX_DEVICE_CPU: return "cpu";
    case PX_DEVICE_GPU: return "gpu";
    case PX_DEVICE_ACCELERATOR: return "accel";
    default: return NULL;
    }
}

#ifdef __cplusplus
}
#endif

#endif /* PLEXUS_TYPES_H */
