/* Plexus: the op table, pure C99. Every op is one row here, and everything
 * else about it comes from its row: the px_op enumerator and its number
 * (types.h), its name, the operand counts and attrs a call must have, the
 * dtypes it means something on, the dtype it writes, and the family whose
 * one shape rule (op_layout.h) both the host's router and a plugin's
 * px_op_call_check apply. Adding an op is adding a row, a kernel in each
 * plugin that offers it, and a conformance case.
 *
 * Numbers are part of the ABI: assigned once, never reused or renumbered;
 * new rows take new numbers (below PX_OP_NUMBER_LIMIT). Family, result and
 * flag values are header-only facts, not ABI: they may be extended. */
#ifndef PLEXUS_OP_TABLE_H
#define PLEXUS_OP_TABLE_H

/* The family of an op: which shape rule relates its operands. */
enum {
    PX_FAMILY_BINARY = 1,                   /* two tensors broadcast, or a tensor and a scalar */
    PX_FAMILY_UNARY = 2,                    /* elementwise over one contiguous input */
    PX_FAMILY_WHERE = 3,                    /* (cond uint8, a, b), broadcast over all three */
    PX_FAMILY_REDUCE = 4,                   /* over one axis or all; px_reduce_attrs */
    PX_FAMILY_MATMUL = 5,                   /* (B,M,K) x (B,K,N), rows of unit stride */
    PX_FAMILY_COPY = 6,                     /* strided in, strided out, one dtype */
    PX_FAMILY_CAST = 7,                     /* contiguous in, contiguous out of any dtype */
    PX_FAMILY_CREATION = 8,                 /* no input, one contiguous output */
    PX_FAMILY_GEMM = 9,                     /* 2-D op(a) x op(b) */
    PX_FAMILY_CONV2D = 10,                  /* x, w -> y */
    PX_FAMILY_CONV2D_BACKWARD_INPUT = 11,   /* dy, w -> dx */
    PX_FAMILY_CONV2D_BACKWARD_WEIGHT = 12,  /* dy, x -> dw */
    PX_FAMILY_POOL2D = 13,                  /* x -> y; or x, b -> y fused with bias and relu */
    PX_FAMILY_POOL2D_BACKWARD = 14,         /* (x,) dy -> dx; or x, b, dy -> dx, db fused */
    PX_FAMILY_BIAS = 15,                    /* x, b -> x + b along axis 1; or dy -> its sum but axis 1 */
    PX_FAMILY_POINTWISE_GRAD = 16,          /* (y or x, dy) -> dx, all of one shape (see each row) */
    PX_FAMILY_LOG_SOFTMAX = 17,             /* over the last axis of (N,C): x -> y; y, dy -> dx */
    PX_FAMILY_SOFTMAX_CROSS_ENTROPY = 18,   /* logits, labels -> loss; logits, labels, dloss -> dlogits */
    PX_FAMILY_DROPOUT = 19,                 /* x -> y of x's shape; px_dropout_attrs */
    PX_FAMILY_SGD = 20,                     /* in place: (param, grad[, m]) -> (param[, m]) */
    PX_FAMILY_BATCH_NORM = 21,              /* x (N,C,...) with per-channel (C) vectors; see the rows */
    PX_FAMILY_ADAM = 22,                    /* in place: (param, grad, state (2, n)) -> (param, state) */
    PX_FAMILY_UNARY_ALPHA = 23,             /* elementwise over one contiguous input; px_alpha_attrs */
    PX_FAMILY_TAKE = 24                     /* rows of a table picked by integer indices, and back */
};

/* The dtype an op writes, from its (first input's) dtype. */
enum {
    PX_RESULT_SAME = 1,     /* the input's */
    PX_RESULT_UINT8 = 2,    /* 0 or 1: comparisons */
    PX_RESULT_INT64 = 3,    /* an index: argmax */
    PX_RESULT_SUM = 4,      /* the input's for floats, int64 for integers */
    PX_RESULT_MEAN = 5,     /* the input's for floats, float64 for integers */
    PX_RESULT_CHOSEN = 6    /* the caller's choice: cast, and creation ops (the output's dtype) */
};

/* Sets of dtypes, as masks of (1 << px_dtype). A plugin's kernel list names
 * these; their meaning never widens, so a plugin rebuilt against a newer
 * header claims no dtype it was not written for. */
#define PX_DTYPE_BIT(dtype) (1u << (unsigned)(dtype))
#define PX_DTYPES_FLOAT (PX_DTYPE_BIT(1) | PX_DTYPE_BIT(2))                  /* float32, float64 */
#define PX_DTYPES_SIGNED (PX_DTYPES_FLOAT | PX_DTYPE_BIT(3) | PX_DTYPE_BIT(4)) /* and int32, int64 */
#define PX_DTYPES_ALL (PX_DTYPES_SIGNED | PX_DTYPE_BIT(5))                    /* ABI 1.0's five, uint8 too */
#define PX_DTYPES_HALF (PX_DTYPE_BIT(6) | PX_DTYPE_BIT(7))                    /* ABI 1.6: float16, bfloat16 */

/* The dtypes an op row accepts (its meaning grows with the table's dtypes):
 * the floats, the signed, or every dtype. */
#define PX_ACCEPTS_FLOAT (PX_DTYPES_FLOAT | PX_DTYPES_HALF)
#define PX_ACCEPTS_SIGNED (PX_DTYPES_SIGNED | PX_DTYPES_HALF)
#define PX_ACCEPTS_ALL (PX_DTYPES_ALL | PX_DTYPES_HALF)

/* Facts about one op that its family does not fix. */
#define PX_OP_FLAG_NEEDS_ELEMENTS 1u /* a reduction over nothing has no value (max, min, argmax) */
#define PX_OP_FLAG_OPTIONAL 2u       /* a plugin may leave it out; the frontend then runs unfused ops */
#define PX_OP_FLAG_CHECKS_VALUES 4u  /* its kernel checks the values of its integer inputs (a divisor, a label, \
                                      * an index) and fails on the device for a bad one */
#define PX_OP_FLAG_ZERO_GRADIENT 8u  /* piecewise constant (floor, sign): autograd gives it a zero gradient */

/* X(enumerator, number, name (an identifier: the frontend's method name;
 *   "name" for messages), family, inputs least, most, outputs least, most,
 *   attrs size (0: none needed), dtypes, result, flags, ABI minor it came in).
 * The binary family needs its attrs only in the scalar form (one input). */
#define PX_OP_TABLE(X)                                                                                              \
    /* elementwise binary, NumPy broadcasting; px_binary_attrs in the scalar form */                               \
    X(PX_OP_ADD, 1, add, PX_FAMILY_BINARY, 1, 2, 1, 1, sizeof(px_binary_attrs), PX_ACCEPTS_ALL, PX_RESULT_SAME, 0, 0) \
    X(PX_OP_SUB, 2, sub, PX_FAMILY_BINARY, 1, 2, 1, 1, sizeof(px_binary_attrs), PX_ACCEPTS_ALL, PX_RESULT_SAME, 0, 0) \
    X(PX_OP_MUL, 3, mul, PX_FAMILY_BINARY, 1, 2, 1, 1, sizeof(px_binary_attrs), PX_ACCEPTS_ALL, PX_RESULT_SAME, 0, 0) \
    /* integer division truncates toward zero; by zero it fails on the device */                                  \
    X(PX_OP_DIV, 4, div, PX_FAMILY_BINARY, 1, 2, 1, 1, sizeof(px_binary_attrs), PX_ACCEPTS_ALL, PX_RESULT_SAME,     \
      PX_OP_FLAG_CHECKS_VALUES, 0) \
    X(PX_OP_POW, 5, pow, PX_FAMILY_BINARY, 1, 2, 1, 1, sizeof(px_binary_attrs), PX_ACCEPTS_FLOAT, PX_RESULT_SAME, 0, 0) \
    /* comparisons write uint8 0/1 */                                                                              \
    X(PX_OP_EQ, 6, eq, PX_FAMILY_BINARY, 1, 2, 1, 1, sizeof(px_binary_attrs), PX_ACCEPTS_ALL, PX_RESULT_UINT8, 0, 0) \
    X(PX_OP_NE, 7, ne, PX_FAMILY_BINARY, 1, 2, 1, 1, sizeof(px_binary_attrs), PX_ACCEPTS_ALL, PX_RESULT_UINT8, 0, 0) \
    X(PX_OP_LT, 8, lt, PX_FAMILY_BINARY, 1, 2, 1, 1, sizeof(px_binary_attrs), PX_ACCEPTS_ALL, PX_RESULT_UINT8, 0, 0) \
    X(PX_OP_LE, 9, le, PX_FAMILY_BINARY, 1, 2, 1, 1, sizeof(px_binary_attrs), PX_ACCEPTS_ALL, PX_RESULT_UINT8, 0, 0) \
    X(PX_OP_GT, 10, gt, PX_FAMILY_BINARY, 1, 2, 1, 1, sizeof(px_binary_attrs), PX_ACCEPTS_ALL, PX_RESULT_UINT8, 0, 0) \
    X(PX_OP_GE, 11, ge, PX_FAMILY_BINARY, 1, 2, 1, 1, sizeof(px_binary_attrs), PX_ACCEPTS_ALL, PX_RESULT_UINT8, 0, 0) \
    /* elementwise unary; no attrs. relu(NaN) is 0 */                                                              \
    X(PX_OP_NEG, 20, neg, PX_FAMILY_UNARY, 1, 1, 1, 1, 0, PX_ACCEPTS_SIGNED, PX_RESULT_SAME, 0, 0)                 \
    X(PX_OP_EXP, 21, exp, PX_FAMILY_UNARY, 1, 1, 1, 1, 0, PX_ACCEPTS_FLOAT, PX_RESULT_SAME, 0, 0)                  \
    X(PX_OP_LOG, 22, log, PX_FAMILY_UNARY, 1, 1, 1, 1, 0, PX_ACCEPTS_FLOAT, PX_RESULT_SAME, 0, 0)                  \
    X(PX_OP_SQRT, 23, sqrt, PX_FAMILY_UNARY, 1, 1, 1, 1, 0, PX_ACCEPTS_FLOAT, PX_RESULT_SAME, 0, 0)                \
    X(PX_OP_ABS, 24, abs, PX_FAMILY_UNARY, 1, 1, 1, 1, 0, PX_ACCEPTS_SIGNED, PX_RESULT_SAME, 0, 0)                 \
    X(PX_OP_RELU, 25, relu, PX_FAMILY_UNARY, 1, 1, 1, 1, 0, PX_ACCEPTS_SIGNED, PX_RESULT_SAME, 0, 0)               \
    X(PX_OP_SIGMOID, 26, sigmoid, PX_FAMILY_UNARY, 1, 1, 1, 1, 0, PX_ACCEPTS_FLOAT, PX_RESULT_SAME, 0, 0)          \
    X(PX_OP_TANH, 27, tanh, PX_FAMILY_UNARY, 1, 1, 1, 1, 0, PX_ACCEPTS_FLOAT, PX_RESULT_SAME, 0, 0)                \
    /* where(cond uint8, a, b); the dtype is a's */                                                                \
    X(PX_OP_WHERE, 30, where, PX_FAMILY_WHERE, 3, 3, 1, 1, 0, PX_ACCEPTS_ALL, PX_RESULT_SAME, 0, 0)                \
    /* reductions; px_reduce_attrs */                                                                              \
    X(PX_OP_SUM, 40, sum, PX_FAMILY_REDUCE, 1, 1, 1, 1, sizeof(px_reduce_attrs), PX_ACCEPTS_ALL, PX_RESULT_SUM, 0, 0) \
    X(PX_OP_MEAN, 41, mean, PX_FAMILY_REDUCE, 1, 1, 1, 1, sizeof(px_reduce_attrs), PX_ACCEPTS_ALL, PX_RESULT_MEAN, 0, 0) \
    X(PX_OP_MAX, 42, max, PX_FAMILY_REDUCE, 1, 1, 1, 1, sizeof(px_reduce_attrs), PX_ACCEPTS_ALL, PX_RESULT_SAME,   \
      PX_OP_FLAG_NEEDS_ELEMENTS, 0)                                                                                \
    X(PX_OP_MIN, 43, min, PX_FAMILY_REDUCE, 1, 1, 1, 1, sizeof(px_reduce_attrs), PX_ACCEPTS_ALL, PX_RESULT_SAME,   \
      PX_OP_FLAG_NEEDS_ELEMENTS, 0)                                                                                \
    X(PX_OP_ARGMAX, 44, argmax, PX_FAMILY_REDUCE, 1, 1, 1, 1, sizeof(px_reduce_attrs), PX_ACCEPTS_ALL,             \
      PX_RESULT_INT64, PX_OP_FLAG_NEEDS_ELEMENTS, 0)                                                               \
    /* matrix product, 2-D or batched 3-D; px_matmul_attrs or NULL */                                              \
    X(PX_OP_MATMUL, 50, matmul, PX_FAMILY_MATMUL, 2, 2, 1, 1, 0, PX_ACCEPTS_ALL, PX_RESULT_SAME, 0, 0)             \
    /* data movement: COPY strided to strided, one dtype; CAST contiguous to another dtype */                     \
    X(PX_OP_COPY, 60, copy, PX_FAMILY_COPY, 1, 1, 1, 1, 0, PX_ACCEPTS_ALL, PX_RESULT_SAME, 0, 0)                   \
    X(PX_OP_CAST, 61, cast, PX_FAMILY_CAST, 1, 1, 1, 1, 0, PX_ACCEPTS_ALL, PX_RESULT_CHOSEN, 0, 0)                 \
    /* creation, output only: px_fill_attrs, px_arange_attrs, px_random_attrs */                                   \
    X(PX_OP_FILL, 70, fill, PX_FAMILY_CREATION, 0, 0, 1, 1, sizeof(px_fill_attrs), PX_ACCEPTS_ALL,                 \
      PX_RESULT_CHOSEN, 0, 0)                                                                                      \
    X(PX_OP_ARANGE, 71, arange, PX_FAMILY_CREATION, 0, 0, 1, 1, sizeof(px_arange_attrs), PX_ACCEPTS_ALL,           \
      PX_RESULT_CHOSEN, 0, 0)                                                                                      \
    X(PX_OP_RANDOM_UNIFORM, 72, random_uniform, PX_FAMILY_CREATION, 0, 0, 1, 1, sizeof(px_random_attrs),          \
      PX_ACCEPTS_FLOAT, PX_RESULT_CHOSEN, 0, 0)                                                                     \
    X(PX_OP_RANDOM_NORMAL, 73, random_normal, PX_FAMILY_CREATION, 0, 0, 1, 1, sizeof(px_random_attrs),            \
      PX_ACCEPTS_FLOAT, PX_RESULT_CHOSEN, 0, 0)                                                                     \
    /* ---- ABI 1.1: neural-network ops; every operand contiguous ---- */                                           \
    /* 2-D op(a) x op(b), op transposing when asked; px_gemm_attrs */                                             \
    X(PX_OP_GEMM, 51, gemm, PX_FAMILY_GEMM, 2, 2, 1, 1, sizeof(px_gemm_attrs), PX_ACCEPTS_FLOAT, PX_RESULT_SAME, 0, 1) \
    /* x (N,C,H,W), w (O,C,KH,KW) -> y (N,O,OH,OW); px_conv2d_attrs. Backwards the output desc gives the shape */ \
    X(PX_OP_CONV2D, 100, conv2d, PX_FAMILY_CONV2D, 2, 2, 1, 1, sizeof(px_conv2d_attrs), PX_ACCEPTS_FLOAT,          \
      PX_RESULT_SAME, 0, 1)                                                                                        \
    X(PX_OP_CONV2D_BACKWARD_INPUT, 101, conv2d_backward_input, PX_FAMILY_CONV2D_BACKWARD_INPUT, 2, 2, 1, 1,       \
      sizeof(px_conv2d_attrs), PX_ACCEPTS_FLOAT, PX_RESULT_SAME, 0, 1)                                              \
    X(PX_OP_CONV2D_BACKWARD_WEIGHT, 102, conv2d_backward_weight, PX_FAMILY_CONV2D_BACKWARD_WEIGHT, 2, 2, 1, 1,    \
      sizeof(px_conv2d_attrs), PX_ACCEPTS_FLOAT, PX_RESULT_SAME, 0, 1)                                              \
    /* x (N,C,...), b (C) -> x + b along axis 1; dy (N,C,...) -> (C), the sum over every axis but 1 */            \
    X(PX_OP_BIAS_ADD, 103, bias_add, PX_FAMILY_BIAS, 2, 2, 1, 1, 0, PX_ACCEPTS_FLOAT, PX_RESULT_SAME, 0, 1)        \
    X(PX_OP_BIAS_GRAD, 104, bias_grad, PX_FAMILY_BIAS, 1, 1, 1, 1, 0, PX_ACCEPTS_FLOAT, PX_RESULT_SAME, 0, 1)      \
    /* x (N,C,H,W) -> (N,C,OH,OW); px_pool2d_attrs. Average pooling divides by the whole window, padding          \
     * included. Backwards: max (x, dy) -> dx, ties to the first maximum; avg dy -> dx, the output desc           \
     * giving x's shape */                                                                                         \
    X(PX_OP_MAX_POOL2D, 110, max_pool2d, PX_FAMILY_POOL2D, 1, 1, 1, 1, sizeof(px_pool2d_attrs), PX_ACCEPTS_FLOAT,  \
      PX_RESULT_SAME, 0, 1)                                                                                        \
    X(PX_OP_AVG_POOL2D, 111, avg_pool2d, PX_FAMILY_POOL2D, 1, 1, 1, 1, sizeof(px_pool2d_attrs), PX_ACCEPTS_FLOAT,  \
      PX_RESULT_SAME, 0, 1)                                                                                        \
    X(PX_OP_MAX_POOL2D_BACKWARD, 112, max_pool2d_backward, PX_FAMILY_POOL2D_BACKWARD, 2, 2, 1, 1,                 \
      sizeof(px_pool2d_attrs), PX_ACCEPTS_FLOAT, PX_RESULT_SAME, 0, 1)                                              \
    X(PX_OP_AVG_POOL2D_BACKWARD, 113, avg_pool2d_backward, PX_FAMILY_POOL2D_BACKWARD, 1, 1, 1, 1,                 \
      sizeof(px_pool2d_attrs), PX_ACCEPTS_FLOAT, PX_RESULT_SAME, 0, 1)                                              \
    /* activation gradients from the forward result y: (y, dy) -> dx */                                           \
    X(PX_OP_RELU_BACKWARD, 120, relu_backward, PX_FAMILY_POINTWISE_GRAD, 2, 2, 1, 1, 0, PX_ACCEPTS_FLOAT,          \
      PX_RESULT_SAME, 0, 1)                                                                                        \
    X(PX_OP_SIGMOID_BACKWARD, 121, sigmoid_backward, PX_FAMILY_POINTWISE_GRAD, 2, 2, 1, 1, 0, PX_ACCEPTS_FLOAT,    \
      PX_RESULT_SAME, 0, 1)                                                                                        \
    X(PX_OP_TANH_BACKWARD, 122, tanh_backward, PX_FAMILY_POINTWISE_GRAD, 2, 2, 1, 1, 0, PX_ACCEPTS_FLOAT,          \
      PX_RESULT_SAME, 0, 1)                                                                                        \
    /* over the last axis of a 2-D input (N,C); backward (y, dy) -> dx */                                          \
    X(PX_OP_LOG_SOFTMAX, 130, log_softmax, PX_FAMILY_LOG_SOFTMAX, 1, 1, 1, 1, 0, PX_ACCEPTS_FLOAT, PX_RESULT_SAME, \
      0, 1)                                                                                                        \
    X(PX_OP_LOG_SOFTMAX_BACKWARD, 131, log_softmax_backward, PX_FAMILY_LOG_SOFTMAX, 2, 2, 1, 1, 0,                \
      PX_ACCEPTS_FLOAT, PX_RESULT_SAME, 0, 1)                                                                       \
    /* logits (N,C), labels (N) int32 or int64 -> loss (N); a label outside [0, C) fails on the device.            \
     * Backward: logits, labels, dloss (N) -> dlogits */                                                          \
    X(PX_OP_SOFTMAX_CROSS_ENTROPY, 132, softmax_cross_entropy, PX_FAMILY_SOFTMAX_CROSS_ENTROPY, 2, 2, 1, 1, 0,    \
      PX_ACCEPTS_FLOAT, PX_RESULT_SAME, PX_OP_FLAG_CHECKS_VALUES, 1)                                                                       \
    X(PX_OP_SOFTMAX_CROSS_ENTROPY_BACKWARD, 133, softmax_cross_entropy_backward,                                  \
      PX_FAMILY_SOFTMAX_CROSS_ENTROPY, 3, 3, 1, 1, 0, PX_ACCEPTS_FLOAT, PX_RESULT_SAME, PX_OP_FLAG_CHECKS_VALUES, 1)                       \
    /* inverted dropout, the mask drawn from Philox; backward dy -> dx with the same attrs (same mask) */          \
    X(PX_OP_DROPOUT, 140, dropout, PX_FAMILY_DROPOUT, 1, 1, 1, 1, sizeof(px_dropout_attrs), PX_ACCEPTS_FLOAT,      \
      PX_RESULT_SAME, 0, 1)                                                                                        \
    X(PX_OP_DROPOUT_BACKWARD, 141, dropout_backward, PX_FAMILY_DROPOUT, 1, 1, 1, 1, sizeof(px_dropout_attrs),     \
      PX_ACCEPTS_FLOAT, PX_RESULT_SAME, 0, 1)                                                                       \
    /* one SGD step in place; px_sgd_attrs. (param, grad) -> param, or (param, grad, m) -> (param, m) */          \
    X(PX_OP_SGD_UPDATE, 150, sgd_update, PX_FAMILY_SGD, 2, 3, 1, 2, sizeof(px_sgd_attrs), PX_ACCEPTS_FLOAT,        \
      PX_RESULT_SAME, 0, 1)                                                                                        \
    /* ---- ABI 1.4: fused ops; optional ---- */                                                                    \
    /* x (N,C,H,W), b (C) -> relu(max_pool2d(x) + b), the values of max_pool2d(relu(bias_add(x, b))) in one        \
     * pass; a NaN counts as 0, as relu(NaN) is 0. Backward: x, b, dy -> dx and db, each window's dy going to      \
     * the first maximum of x + b when relu passed it (max + b > 0) */                                             \
    X(PX_OP_BIAS_RELU_MAX_POOL2D, 114, bias_relu_max_pool2d, PX_FAMILY_POOL2D, 2, 2, 1, 1,                        \
      sizeof(px_pool2d_attrs), PX_ACCEPTS_FLOAT, PX_RESULT_SAME, PX_OP_FLAG_OPTIONAL, 4)                            \
    X(PX_OP_BIAS_RELU_MAX_POOL2D_BACKWARD, 115, bias_relu_max_pool2d_backward, PX_FAMILY_POOL2D_BACKWARD, 3, 3,   \
      2, 2, sizeof(px_pool2d_attrs), PX_ACCEPTS_FLOAT, PX_RESULT_SAME, PX_OP_FLAG_OPTIONAL, 4)                      \
    /* ---- ABI 1.7: batch normalisation over every axis but 1; x (N,C,...), the rest (C) ---- */               \
    /* x -> mean, var: each channel's mean and biased variance over its N*H*W... values (at least one) */        \
    X(PX_OP_BATCH_NORM_STATS, 160, batch_norm_stats, PX_FAMILY_BATCH_NORM, 1, 1, 2, 2, 0, PX_ACCEPTS_FLOAT,          \
      PX_RESULT_SAME, 0, 7)                                                                                        \
    /* x, mean, var, gamma, beta -> y = (x - mean) / sqrt(var + eps) * gamma + beta; px_batch_norm_attrs */        \
    X(PX_OP_BATCH_NORM, 161, batch_norm, PX_FAMILY_BATCH_NORM, 5, 5, 1, 1, sizeof(px_batch_norm_attrs),             \
      PX_ACCEPTS_FLOAT, PX_RESULT_SAME, 0, 7)                                                                       \
    /* the gradient when mean and var are x's own statistics (training). x, dy, mean, var -> dgamma =              \
     * sum(dy * xhat), dbeta = sum(dy), xhat = (x - mean) / sqrt(var + eps); then x, dy, mean, var, gamma,          \
     * dgamma, dbeta -> dx = gamma / sqrt(var + eps) * (dy - (dbeta + xhat * dgamma) / M), M values per channel */  \
    X(PX_OP_BATCH_NORM_BACKWARD_REDUCE, 162, batch_norm_backward_reduce, PX_FAMILY_BATCH_NORM, 4, 4, 2, 2,          \
      sizeof(px_batch_norm_attrs), PX_ACCEPTS_FLOAT, PX_RESULT_SAME, 0, 7)                                          \
    X(PX_OP_BATCH_NORM_BACKWARD, 163, batch_norm_backward, PX_FAMILY_BATCH_NORM, 7, 7, 1, 1,                        \
      sizeof(px_batch_norm_attrs), PX_ACCEPTS_FLOAT, PX_RESULT_SAME, 0, 7)                                          \
    /* ---- ABI 1.7: optimizer steps in place, each the unfused formula of its attrs (plugin.h) ---- */          \
    /* SGD with Nesterov momentum; px_sgd_attrs. (param, grad, m) -> (param, m) */                                 \
    X(PX_OP_NAG_UPDATE, 151, nag_update, PX_FAMILY_SGD, 3, 3, 2, 2, sizeof(px_sgd_attrs), PX_ACCEPTS_FLOAT,          \
      PX_RESULT_SAME, 0, 7)                                                                                        \
    /* Adam and AdamW; px_adam_attrs. (param, grad, state) -> (param, state); state (2, n) holds m and v for the    \
     * n values of param */                                                                                        \
    X(PX_OP_ADAM_UPDATE, 152, adam_update, PX_FAMILY_ADAM, 3, 3, 2, 2, sizeof(px_adam_attrs), PX_ACCEPTS_FLOAT,      \
      PX_RESULT_SAME, 0, 7)                                                                                          \
    /* ---- ABI 1.8: activations of modern networks, and the embedding lookup ---- */                                \
    /* gelu(x) = x * Phi(x), Phi the normal distribution's CDF (the erf form, not the tanh approximation);           \
     * silu(x) = x * sigmoid(x). Both computed in float64 from the input and rounded once */                         \
    X(PX_OP_GELU, 28, gelu, PX_FAMILY_UNARY, 1, 1, 1, 1, 0, PX_ACCEPTS_FLOAT, PX_RESULT_SAME, 0, 8)                  \
    X(PX_OP_SILU, 29, silu, PX_FAMILY_UNARY, 1, 1, 1, 1, 0, PX_ACCEPTS_FLOAT, PX_RESULT_SAME, 0, 8)                  \
    /* leaky_relu(x) = x > 0 ? x : alpha * x, NaN staying NaN; px_alpha_attrs (alpha finite) */                      \
    X(PX_OP_LEAKY_RELU, 31, leaky_relu, PX_FAMILY_UNARY_ALPHA, 1, 1, 1, 1, sizeof(px_alpha_attrs),                   \
      PX_ACCEPTS_FLOAT, PX_RESULT_SAME, 0, 8)                                                                        \
    /* their gradients from the forward op's INPUT: (x, dy) -> dx; leaky_relu's is dy where x > 0, else              \
     * alpha * dy (px_alpha_attrs) */                                                                                \
    X(PX_OP_GELU_BACKWARD, 123, gelu_backward, PX_FAMILY_POINTWISE_GRAD, 2, 2, 1, 1, 0, PX_ACCEPTS_FLOAT,            \
      PX_RESULT_SAME, 0, 8)                                                                                          \
    X(PX_OP_SILU_BACKWARD, 124, silu_backward, PX_FAMILY_POINTWISE_GRAD, 2, 2, 1, 1, 0, PX_ACCEPTS_FLOAT,            \
      PX_RESULT_SAME, 0, 8)                                                                                          \
    X(PX_OP_LEAKY_RELU_BACKWARD, 125, leaky_relu_backward, PX_FAMILY_POINTWISE_GRAD, 2, 2, 1, 1,                     \
      sizeof(px_alpha_attrs), PX_ACCEPTS_FLOAT, PX_RESULT_SAME, 0, 8)                                                \
    /* table (V, ...) of any dtype, indices (int32 or int64, any shape) -> out (indices' shape, ...):                \
     * out[i] = table[indices[i]]; an index outside [0, V) fails on the device */                                    \
    X(PX_OP_TAKE, 170, take, PX_FAMILY_TAKE, 2, 2, 1, 1, 0, PX_ACCEPTS_ALL, PX_RESULT_SAME, PX_OP_FLAG_CHECKS_VALUES, 8)                    \
    /* dy (indices' shape, ...), indices -> dtable (V, ...): row v is the sum of the rows of dy whose index is       \
     * v, added in the indices' order (every plugin gives the same bits), zeros where no index points */             \
    X(PX_OP_TAKE_BACKWARD, 171, take_backward, PX_FAMILY_TAKE, 2, 2, 1, 1, 0, PX_ACCEPTS_FLOAT, PX_RESULT_SAME,      \
      PX_OP_FLAG_CHECKS_VALUES, 8)                                                                                   \
    /* softplus(x) = log(1 + exp(x)) (Gluon's softrelu), without overflow; its gradient from the input is            \
     * dy * sigmoid(x) */                                                                                            \
    X(PX_OP_SOFTPLUS, 32, softplus, PX_FAMILY_UNARY, 1, 1, 1, 1, 0, PX_ACCEPTS_FLOAT, PX_RESULT_SAME, 0, 8)          \
    X(PX_OP_SOFTPLUS_BACKWARD, 126, softplus_backward, PX_FAMILY_POINTWISE_GRAD, 2, 2, 1, 1, 0, PX_ACCEPTS_FLOAT,    \
      PX_RESULT_SAME, 0, 8)                                                                                          \
    /* ---- ABI 1.9: the elementwise math functions NumPy has (np.sin, ...), each computed in float64 from the       \
     * input and rounded once (plexus/op_math.h). NaN stays NaN; the values at infinities and poles are C's */       \
    X(PX_OP_SIN, 180, sin, PX_FAMILY_UNARY, 1, 1, 1, 1, 0, PX_ACCEPTS_FLOAT, PX_RESULT_SAME, 0, 9)                   \
    X(PX_OP_COS, 181, cos, PX_FAMILY_UNARY, 1, 1, 1, 1, 0, PX_ACCEPTS_FLOAT, PX_RESULT_SAME, 0, 9)                   \
    X(PX_OP_TAN, 182, tan, PX_FAMILY_UNARY, 1, 1, 1, 1, 0, PX_ACCEPTS_FLOAT, PX_RESULT_SAME, 0, 9)                   \
    X(PX_OP_SINH, 183, sinh, PX_FAMILY_UNARY, 1, 1, 1, 1, 0, PX_ACCEPTS_FLOAT, PX_RESULT_SAME, 0, 9)                 \
    X(PX_OP_COSH, 184, cosh, PX_FAMILY_UNARY, 1, 1, 1, 1, 0, PX_ACCEPTS_FLOAT, PX_RESULT_SAME, 0, 9)                 \
    /* log1p(x) = log(1 + x) and expm1(x) = exp(x) - 1, exact near 0 */                                             \
    X(PX_OP_LOG1P, 185, log1p, PX_FAMILY_UNARY, 1, 1, 1, 1, 0, PX_ACCEPTS_FLOAT, PX_RESULT_SAME, 0, 9)               \
    X(PX_OP_EXPM1, 186, expm1, PX_FAMILY_UNARY, 1, 1, 1, 1, 0, PX_ACCEPTS_FLOAT, PX_RESULT_SAME, 0, 9)               \
    /* sign (NumPy's: -1, 0 or 1, NaN staying NaN), floor, ceil and round (NumPy's: half to even); piecewise        \
     * constant, so their gradient is zero */                                                                       \
    X(PX_OP_SIGN, 187, sign, PX_FAMILY_UNARY, 1, 1, 1, 1, 0, PX_ACCEPTS_FLOAT, PX_RESULT_SAME,                       \
      PX_OP_FLAG_ZERO_GRADIENT, 9)                                                                                   \
    X(PX_OP_FLOOR, 188, floor, PX_FAMILY_UNARY, 1, 1, 1, 1, 0, PX_ACCEPTS_FLOAT, PX_RESULT_SAME,                     \
      PX_OP_FLAG_ZERO_GRADIENT, 9)                                                                                   \
    X(PX_OP_CEIL, 189, ceil, PX_FAMILY_UNARY, 1, 1, 1, 1, 0, PX_ACCEPTS_FLOAT, PX_RESULT_SAME,                       \
      PX_OP_FLAG_ZERO_GRADIENT, 9)                                                                                   \
    X(PX_OP_ROUND, 190, round, PX_FAMILY_UNARY, 1, 1, 1, 1, 0, PX_ACCEPTS_FLOAT, PX_RESULT_SAME,                     \
      PX_OP_FLAG_ZERO_GRADIENT, 9)                                                                                   \
    /* their gradients: from the INPUT, (x, dy) -> dx: sin's dy * cos(x), cos's -dy * sin(x), sinh's               \
     * dy * cosh(x), cosh's dy * sinh(x), log1p's dy / (1 + x); from the RESULT, (y, dy) -> dx: tan's               \
     * dy * (1 + y * y), expm1's dy * (y + 1) */                                                                    \
    X(PX_OP_SIN_BACKWARD, 200, sin_backward, PX_FAMILY_POINTWISE_GRAD, 2, 2, 1, 1, 0, PX_ACCEPTS_FLOAT,              \
      PX_RESULT_SAME, 0, 9)                                                                                          \
    X(PX_OP_COS_BACKWARD, 201, cos_backward, PX_FAMILY_POINTWISE_GRAD, 2, 2, 1, 1, 0, PX_ACCEPTS_FLOAT,              \
      PX_RESULT_SAME, 0, 9)                                                                                          \
    X(PX_OP_TAN_BACKWARD, 202, tan_backward, PX_FAMILY_POINTWISE_GRAD, 2, 2, 1, 1, 0, PX_ACCEPTS_FLOAT,              \
      PX_RESULT_SAME, 0, 9)                                                                                          \
    X(PX_OP_SINH_BACKWARD, 203, sinh_backward, PX_FAMILY_POINTWISE_GRAD, 2, 2, 1, 1, 0, PX_ACCEPTS_FLOAT,            \
      PX_RESULT_SAME, 0, 9)                                                                                          \
    X(PX_OP_COSH_BACKWARD, 204, cosh_backward, PX_FAMILY_POINTWISE_GRAD, 2, 2, 1, 1, 0, PX_ACCEPTS_FLOAT,            \
      PX_RESULT_SAME, 0, 9)                                                                                          \
    X(PX_OP_LOG1P_BACKWARD, 205, log1p_backward, PX_FAMILY_POINTWISE_GRAD, 2, 2, 1, 1, 0, PX_ACCEPTS_FLOAT,          \
      PX_RESULT_SAME, 0, 9)                                                                                          \
    X(PX_OP_EXPM1_BACKWARD, 206, expm1_backward, PX_FAMILY_POINTWISE_GRAD, 2, 2, 1, 1, 0, PX_ACCEPTS_FLOAT,          \
      PX_RESULT_SAME, 0, 9)

/* Where an elementwise op's gradient comes from: the row that computes dx,
 * and the forward operand that row reads beside dy. */
enum {
    PX_GRAD_FROM_RESULT = 1, /* (y, dy) -> dx, y the forward result (px_activation_backward) */
    PX_GRAD_FROM_INPUT = 2   /* (x, dy) -> dx, x the forward input (px_activation_input_backward) */
};

/* G(forward op, its backward row, PX_GRAD_FROM_*): every elementwise op
 * whose gradient is a row of its own. The router and the frontend's
 * autograd both read it. */
#define PX_GRADIENT_TABLE(G)                                    \
    G(PX_OP_RELU, PX_OP_RELU_BACKWARD, PX_GRAD_FROM_RESULT)       \
    G(PX_OP_SIGMOID, PX_OP_SIGMOID_BACKWARD, PX_GRAD_FROM_RESULT) \
    G(PX_OP_TANH, PX_OP_TANH_BACKWARD, PX_GRAD_FROM_RESULT)       \
    G(PX_OP_GELU, PX_OP_GELU_BACKWARD, PX_GRAD_FROM_INPUT)        \
    G(PX_OP_SILU, PX_OP_SILU_BACKWARD, PX_GRAD_FROM_INPUT)        \
    G(PX_OP_LEAKY_RELU, PX_OP_LEAKY_RELU_BACKWARD, PX_GRAD_FROM_INPUT) \
    G(PX_OP_SOFTPLUS, PX_OP_SOFTPLUS_BACKWARD, PX_GRAD_FROM_INPUT) \
    G(PX_OP_SIN, PX_OP_SIN_BACKWARD, PX_GRAD_FROM_INPUT)          \
    G(PX_OP_COS, PX_OP_COS_BACKWARD, PX_GRAD_FROM_INPUT)          \
    G(PX_OP_TAN, PX_OP_TAN_BACKWARD, PX_GRAD_FROM_RESULT)         \
    G(PX_OP_SINH, PX_OP_SINH_BACKWARD, PX_GRAD_FROM_INPUT)        \
    G(PX_OP_COSH, PX_OP_COSH_BACKWARD, PX_GRAD_FROM_INPUT)        \
    G(PX_OP_LOG1P, PX_OP_LOG1P_BACKWARD, PX_GRAD_FROM_INPUT)      \
    G(PX_OP_EXPM1, PX_OP_EXPM1_BACKWARD, PX_GRAD_FROM_RESULT)

#endif /* PLEXUS_OP_TABLE_H */
