/* Plexus plugin ABI: how the operands of an op call relate, pure C99.
 *
 * The layout the host guarantees (see px_op_call in plugin.h) as one check,
 * px_op_layout_check, which px_op_call_check runs once every operand has
 * passed alone. It is what keeps a kernel that indexes one operand by
 * another's shape inside its buffers when a host other than Plexus's sends
 * the call: shapes that fit together, dtypes that agree, contiguous operands
 * where a kernel reads them flat, and attrs values (strides, windows, axes)
 * that cannot divide by zero or leave a window empty. */
#ifndef PLEXUS_OP_LAYOUT_H
#define PLEXUS_OP_LAYOUT_H

#include <float.h>
#include <stdarg.h>
#include <stdio.h>

#include "plexus/op_rows.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Nonzero when t's elements lie in row-major order without gaps (an axis of
 * length 1 may have any stride; an empty tensor is contiguous). Only for a
 * desc px_tensor_end accepted: then the running product cannot overflow, as
 * it stays at most one past the last element's distance from the first. */
static inline int px_tensor_contiguous(const px_tensor_desc* t) {
    uint64_t want = 1;
    int32_t k;
    for (k = 0; k < t->ndim; ++k)
        if (t->shape[k] == 0) return 1;
    for (k = t->ndim - 1; k >= 0; --k) {
        if (t->shape[k] != 1 && (uint64_t)t->strides[k] != want) return 0;
        want *= (uint64_t)t->shape[k];
    }
    return 1;
}

/* The length of a window of `kernel` cells sliding with `stride` over `in`
 * cells padded by `pad` on both sides, or -1 when it does not fit (or the
 * figures are out of range). */
static inline int64_t px_window_out(int64_t in, int64_t kernel, int32_t stride, int32_t pad) {
    int64_t span;
    if (stride < 1 || pad < 0 || kernel < 1 || in < 0 || in > INT64_MAX - 2 * (int64_t)pad) return -1;
    span = in + 2 * (int64_t)pad;
    return span < kernel ? -1 : (span - kernel) / stride + 1;
}

/* A shape a rule expects, for comparing and for messages. */
typedef struct px_layout_shape {
    int32_t ndim;
    int64_t dims[PX_MAX_DIMS];
} px_layout_shape;

/* The state of one px_op_layout_check: the first problem found wins. */
typedef struct px_layout_state {
    const px_op_call* call;
    const px_op_row* row; /* the call's op */
    char* why;
    size_t why_size;
    px_status status;
} px_layout_state;

/* Operand i of the call: inputs first, then outputs. */
static inline const px_tensor_desc* px_layout_operand(const px_layout_state* s, int32_t i) {
    return i < s->call->num_inputs ? &s->call->inputs[i] : &s->call->outputs[i - s->call->num_inputs];
}

#if defined(__GNUC__)
#define PX_LAYOUT_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define PX_LAYOUT_PRINTF(f, a)
#endif

static inline void px_layout_fail(px_layout_state* s, px_status status, const char* format, ...) PX_LAYOUT_PRINTF(3, 4);
static inline void px_layout_fail(px_layout_state* s, px_status status, const char* format, ...) {
    va_list args;
    if (s->status != PX_OK) return;
    s->status = status;
    va_start(args, format);
    vsnprintf(s->why, s->why_size, format, args);
    va_end(args);
}

/* Whether the gradient row `op` reads the forward op's result (y) rather
 * than its input (x): PX_GRADIENT_TABLE says. */
static inline int px_layout_gradient_reads_result(int32_t op) {
#define PX_LAYOUT_READS_RESULT_(forward, backward, from) \
    if (op == (backward)) return (from) == PX_GRAD_FROM_RESULT;
    PX_GRADIENT_TABLE(PX_LAYOUT_READS_RESULT_)
#undef PX_LAYOUT_READS_RESULT_
    return 0;
}

/* What operand i is to the ops of the neural-network families ("the
 * weight"), by the call's form; NULL for the elementwise families, whose
 * operands have no roles beyond their place. */
static inline const char* px_layout_role(const px_layout_state* s, int32_t i) {
    static const char* const conv[3][3] = {{"the input", "the weight", "the output"},
                                           {"the output gradient", "the weight", "the input gradient"},
                                           {"the output gradient", "the input", "the weight gradient"}};
    const int32_t n = s->call->num_inputs, o = i - n;
    switch (s->row->family) {
    case PX_FAMILY_GEMM: return i == 0 ? "a" : i == 1 ? "b" : "the product";
    case PX_FAMILY_CONV2D: case PX_FAMILY_CONV2D_BACKWARD_INPUT: case PX_FAMILY_CONV2D_BACKWARD_WEIGHT:
        return i < 3 ? conv[s->row->family - PX_FAMILY_CONV2D][i] : NULL;
    case PX_FAMILY_POOL2D: return i == 0 ? "the input" : i < n ? "the bias" : "the output";
    case PX_FAMILY_POOL2D_BACKWARD:
        if (o >= 0) return o == 0 ? "the input gradient" : "the bias gradient";
        return i == n - 1 ? "the output gradient" : i == 0 ? "the input" : "the bias";
    case PX_FAMILY_BIAS:
        if (n == 1) return i == 0 ? "the gradient" : "the bias gradient";
        return i == 0 ? "the input" : i == 1 ? "the bias" : "the output";
    case PX_FAMILY_POINTWISE_GRAD: {
        const int from_y = px_layout_gradient_reads_result(s->call->op);
        return i == 0 ? (from_y ? "y" : "x") : i == 1 ? "dy" : "dx";
    }
    case PX_FAMILY_TAKE:
        if (s->call->op == PX_OP_TAKE) return i == 0 ? "the table" : i == 1 ? "the indices" : "the output";
        return i == 0 ? "the output gradient" : i == 1 ? "the indices" : "the table gradient";
    case PX_FAMILY_LOG_SOFTMAX:
        if (n == 1) return i == 0 ? "the input" : "the output";
        return i == 0 ? "y" : i == 1 ? "dy" : "dx";
    case PX_FAMILY_SOFTMAX_CROSS_ENTROPY:
        if (o >= 0) return n == 2 ? "the loss" : "the logits gradient";
        return i == 0 ? "the logits" : i == 1 ? "the labels" : "the loss gradient";
    case PX_FAMILY_DROPOUT: return i == 0 ? "the input" : "the output";
    case PX_FAMILY_SGD:
        if (o >= 0) return o == 0 ? "the parameter" : "the momentum buffer";
        return i == 0 ? "the parameter" : i == 1 ? "its gradient" : "the momentum buffer";
    case PX_FAMILY_ADAM:
        if (o >= 0) return o == 0 ? "the parameter" : "the state";
        return i == 0 ? "the parameter" : i == 1 ? "its gradient" : "the state";
    case PX_FAMILY_BATCH_NORM: {
        /* The gradients' inputs, in order; the forward op's are x, mean, var, gamma, beta. */
        static const char* const grads[7] = {"the input",    "the output gradient", "the mean",         "the variance",
                                             "gamma",        "the gamma gradient",  "the beta gradient"};
        static const char* const forward[5] = {"the input", "the mean", "the variance", "gamma", "beta"};
        switch (s->call->op) {
        case PX_OP_BATCH_NORM_STATS: return i == 0 ? "the input" : o == 0 ? "the mean" : "the variance";
        case PX_OP_BATCH_NORM: return o >= 0 ? "the output" : i < 5 ? forward[i] : NULL;
        case PX_OP_BATCH_NORM_BACKWARD_REDUCE:
            if (o >= 0) return o == 0 ? "the gamma gradient" : "the beta gradient";
            return i < 4 ? grads[i] : NULL;
        default: return o >= 0 ? "the input gradient" : i < 7 ? grads[i] : NULL;
        }
    }
    default: return NULL;
    }
}

/* Writes "input 1" or "output 0" for operand i, after its role where it has
 * one: "the weight (input 1)". */
static inline const char* px_layout_name(const px_layout_state* s, int32_t i, char* name, size_t size) {
    const int input = i < s->call->num_inputs;
    const char* role = px_layout_role(s, i);
    const int place = (int)(input ? i : i - s->call->num_inputs);
    if (role) snprintf(name, size, "%s (%s %d)", role, input ? "input" : "output", place);
    else snprintf(name, size, "%s %d", input ? "input" : "output", place);
    return name;
}

/* Writes "(2, 3)" ("(3,)" for one axis, "()" for none). */
static inline const char* px_layout_shape_text(int32_t ndim, const int64_t* dims, char* text, size_t size) {
    size_t used = 0;
    int32_t k;
    text[0] = 0;
    for (k = 0; k <= ndim && used < size; ++k) {
        const int n = k == ndim ? snprintf(text + used, size - used, "%s)", ndim == 1 ? "," : "")
                                : snprintf(text + used, size - used, "%s%lld", k ? ", " : "(", (long long)dims[k]);
        if (n < 0) break;
        used += (size_t)n;
    }
    if (ndim == 0) snprintf(text, size, "()");
    return text;
}

/* Nonzero when the call has attrs; a rule that reads them asks first (as
 * px_op_call_check has refused a call without the attrs its op needs, this
 * fails only for a caller of the layout check alone). */
static inline int px_layout_has_attrs(px_layout_state* s, const void* attrs) {
    if (attrs) return 1;
    px_layout_fail(s, PX_ERROR_INVALID_ARGUMENT, "needs an attrs struct, got none");
    return 0;
}

/* Operand i must have the shape `want`. */
static inline void px_layout_shape_is(px_layout_state* s, int32_t i, const px_layout_shape* want) {
    const px_tensor_desc* t = px_layout_operand(s, i);
    char name[48], got[200], need[200];
    int32_t k;
    int same = t->ndim == want->ndim;
    for (k = 0; same && k < t->ndim; ++k) same = t->shape[k] == want->dims[k];
    if (same || s->status != PX_OK) return;
    px_layout_fail(s, PX_ERROR_SHAPE, "%s has shape %s; the call needs %s", px_layout_name(s, i, name, sizeof name),
                   px_layout_shape_text(t->ndim, t->shape, got, sizeof got),
                   px_layout_shape_text(want->ndim, want->dims, need, sizeof need));
}

/* Operand i must have the shape of operand j. */
static inline void px_layout_shape_of(px_layout_state* s, int32_t i, int32_t j) {
    const px_tensor_desc* t = px_layout_operand(s, j);
    px_layout_shape want;
    int32_t k;
    want.ndim = t->ndim;
    for (k = 0; k < t->ndim; ++k) want.dims[k] = t->shape[k];
    px_layout_shape_is(s, i, &want);
}

/* Operand i must have `ndim` axes (at least `ndim` when `or_more`). */
static inline void px_layout_rank(px_layout_state* s, int32_t i, int32_t ndim, int or_more) {
    const px_tensor_desc* t = px_layout_operand(s, i);
    char name[48], got[200];
    if (t->ndim == ndim || (or_more && t->ndim > ndim)) return;
    px_layout_fail(s, PX_ERROR_SHAPE, "%s must be %d-D%s, got shape %s", px_layout_name(s, i, name, sizeof name),
                   (int)ndim, or_more ? " or more" : "", px_layout_shape_text(t->ndim, t->shape, got, sizeof got));
}

/* Operand i must have the dtype `dtype`. */
static inline void px_layout_dtype_is(px_layout_state* s, int32_t i, int32_t dtype) {
    const px_tensor_desc* t = px_layout_operand(s, i);
    char name[48];
    if (t->dtype == dtype) return;
    px_layout_fail(s, PX_ERROR_DTYPE, "%s is %s; the call needs %s", px_layout_name(s, i, name, sizeof name),
                   px_dtype_name(t->dtype), px_dtype_name(dtype));
}

static inline void px_layout_contiguous(px_layout_state* s, int32_t i) {
    char name[48];
    if (px_tensor_contiguous(px_layout_operand(s, i))) return;
    px_layout_fail(s, PX_ERROR_INVALID_ARGUMENT, "%s is not contiguous (this op reads it in row-major order)",
                   px_layout_name(s, i, name, sizeof name));
}

/* {a} for one dimension, as a shape. */
static inline px_layout_shape px_layout_vector(int64_t a) {
    px_layout_shape v;
    v.ndim = 1;
    v.dims[0] = a;
    return v;
}

static inline px_layout_shape px_layout_4d(int64_t a, int64_t b, int64_t c, int64_t d) {
    px_layout_shape v;
    v.ndim = 4;
    v.dims[0] = a, v.dims[1] = b, v.dims[2] = c, v.dims[3] = d;
    return v;
}

/* The binary ops and comparisons (two tensors, or one and a scalar), the
 * unary ops, WHERE, COPY and CAST: every input has the output's shape (a
 * broadcast input has stride 0 on its repeated axes). */
static inline void px_layout_elementwise(px_layout_state* s) {
    const px_op_call* c = s->call;
    const int32_t family = s->row->family, o = c->num_inputs, dtype = c->inputs[0].dtype;
    int32_t i;
    for (i = 0; i < c->num_inputs; ++i) px_layout_shape_of(s, i, o);
    if (family == PX_FAMILY_BINARY) {
        const px_binary_attrs* b = (const px_binary_attrs*)c->attrs;
        const int32_t scalar = b && b->struct_size >= sizeof(px_binary_attrs) ? b->scalar_operand : 0;
        if (scalar < 0 || scalar > 2)
            px_layout_fail(s, PX_ERROR_INVALID_ARGUMENT, "scalar_operand %d is not 0, 1 or 2", (int)scalar);
        else if ((scalar != 0) != (c->num_inputs == 1))
            px_layout_fail(s, PX_ERROR_INVALID_ARGUMENT,
                           "%d inputs disagree with scalar_operand %d (one input goes with a scalar operand)",
                           (int)c->num_inputs, (int)scalar);
        if (c->num_inputs == 2) px_layout_dtype_is(s, 1, dtype);
        else px_layout_contiguous(s, 0);
        px_layout_dtype_is(s, o, px_op_result_dtype(c->op, dtype));
    } else if (family == PX_FAMILY_UNARY) {
        px_layout_contiguous(s, 0);
        px_layout_dtype_is(s, o, dtype);
    } else if (family == PX_FAMILY_WHERE) {
        px_layout_dtype_is(s, 0, PX_UINT8);
        px_layout_dtype_is(s, 2, c->inputs[1].dtype);
        px_layout_dtype_is(s, o, c->inputs[1].dtype);
    } else if (family == PX_FAMILY_COPY) {
        px_layout_dtype_is(s, o, dtype);
    } else { /* CAST */
        px_layout_contiguous(s, 0);
    }
}

/* The reductions: a contiguous input, the output shape the axis and keepdims
 * give, and no maximum, minimum or argmax of nothing. */
static inline void px_layout_reduce(px_layout_state* s) {
    const px_op_call* c = s->call;
    const px_tensor_desc* a = &c->inputs[0];
    const px_reduce_attrs* r = (const px_reduce_attrs*)c->attrs;
    px_layout_shape want;
    int nothing_reduced = 0, nothing_kept = 0;
    int32_t k;
    px_layout_contiguous(s, 0);
    if (!px_layout_has_attrs(s, r)) return;
    /* The analyzer follows a call of another family's op here, its attrs read as these.
     * NOLINTNEXTLINE(clang-analyzer-core.UndefinedBinaryOperatorResult) */
    if (r->axis < -1 || r->axis >= a->ndim) {
        px_layout_fail(s, PX_ERROR_INVALID_ARGUMENT, "axis %d is out of range for rank %d (-1 means every axis)",
                       (int)r->axis, (int)a->ndim);
        return;
    }
    want.ndim = 0;
    for (k = 0; k < a->ndim; ++k) {
        const int reduced = r->axis == -1 || r->axis == k;
        if (reduced) nothing_reduced |= a->shape[k] == 0;
        else nothing_kept |= a->shape[k] == 0;
        if (reduced && !r->keepdims) continue;
        want.dims[want.ndim++] = reduced ? 1 : a->shape[k];
    }
    px_layout_shape_is(s, 1, &want);
    px_layout_dtype_is(s, 1, px_op_result_dtype(c->op, a->dtype));
    if (nothing_reduced && !nothing_kept && (s->row->flags & PX_OP_FLAG_NEEDS_ELEMENTS))
        px_layout_fail(s, PX_ERROR_SHAPE, "the reduced extent is empty, and an empty set has no %s", s->row->name);
}

/* MATMUL: (B,M,K) x (B,K,N) -> (B,M,N), each matrix's rows stored with unit
 * stride and at least a row apart (BLAS's leading dimension); a batch
 * stride of 0 shares one matrix. */
static inline void px_layout_matmul(px_layout_state* s) {
    const px_op_call* c = s->call;
    const px_tensor_desc *a = &c->inputs[0], *out = &c->outputs[0];
    px_layout_shape want;
    char name[48];
    int32_t i;
    for (i = 0; i < 3; ++i) px_layout_rank(s, i, 3, 0);
    if (s->status != PX_OK) return;
    want.ndim = 3;
    want.dims[0] = out->shape[0], want.dims[1] = out->shape[1], want.dims[2] = a->shape[2];
    px_layout_shape_is(s, 0, &want);
    want.dims[1] = a->shape[2], want.dims[2] = out->shape[2];
    px_layout_shape_is(s, 1, &want);
    px_layout_dtype_is(s, 1, a->dtype);
    px_layout_dtype_is(s, 2, a->dtype);
    for (i = 0; i < 3; ++i) {
        const px_tensor_desc* t = px_layout_operand(s, i);
        const int64_t cols = t->shape[2] > 1 ? t->shape[2] : 1;
        if (t->shape[0] == 0 || t->shape[1] == 0 || t->shape[2] == 0) continue;
        if ((t->shape[2] > 1 && t->strides[2] != 1) || t->strides[1] < cols)
            px_layout_fail(s, PX_ERROR_INVALID_ARGUMENT,
                           "%s's rows are not stored with unit stride at least a row (%lld) apart",
                           px_layout_name(s, i, name, sizeof name), (long long)cols);
    }
}

/* The window of a convolution or pooling along one axis: its output length,
 * or a shape error naming the axis. */
static inline int64_t px_layout_window(px_layout_state* s, const char* axis, int64_t in, int64_t kernel, int32_t stride,
                                       int32_t pad) {
    const int64_t out = px_window_out(in, kernel, stride, pad);
    if (out >= 0) return out;
    if (kernel < 1)
        px_layout_fail(s, PX_ERROR_SHAPE, "the kernel is empty along the %s", axis);
    else if (in < 0 || in > INT64_MAX - 2 * (int64_t)pad) /* an empty batch allows a huge extent */
        px_layout_fail(s, PX_ERROR_SHAPE, "the %s extent %lld with padding %d has more cells than fit in 64 bits", axis,
                       (long long)in, (int)pad);
    else
        px_layout_fail(s, PX_ERROR_SHAPE, "the %s extent %lld with padding %d is smaller than the kernel (%lld)", axis,
                       (long long)in, (int)pad, (long long)kernel);
    return out;
}

/* CONV2D and its backward ops; x (N,C,H,W), w (O,C,KH,KW), y (N,O,OH,OW). */
static inline void px_layout_conv(px_layout_state* s) {
    const px_op_call* c = s->call;
    const px_conv2d_attrs* a = (const px_conv2d_attrs*)c->attrs;
    /* Where x, w and y are among the operands, per family (y is dy backwards). */
    const int32_t family = s->row->family;
    const int32_t xi = family == PX_FAMILY_CONV2D ? 0 : family == PX_FAMILY_CONV2D_BACKWARD_INPUT ? 2 : 1;
    const int32_t wi = family == PX_FAMILY_CONV2D_BACKWARD_WEIGHT ? 2 : 1;
    const int32_t yi = family == PX_FAMILY_CONV2D ? 2 : 0;
    const px_tensor_desc *x = px_layout_operand(s, xi), *w = px_layout_operand(s, wi);
    int64_t oh, ow;
    int32_t i;
    for (i = 0; i < 3; ++i) px_layout_rank(s, i, 4, 0);
    if (!px_layout_has_attrs(s, a)) return;
    if (a->stride_h < 1 || a->stride_w < 1 || a->pad_h < 0 || a->pad_w < 0)
        px_layout_fail(s, PX_ERROR_INVALID_ARGUMENT, "strides %dx%d must be >= 1 and padding %dx%d >= 0",
                       (int)a->stride_h, (int)a->stride_w, (int)a->pad_h, (int)a->pad_w);
    if (s->status != PX_OK) return;
    if (family == PX_FAMILY_CONV2D && w->shape[1] != x->shape[1]) {
        char xs[200], ws[200];
        px_layout_fail(s, PX_ERROR_SHAPE, "the input has %lld channels (shape %s) but the weight expects %lld (shape %s)",
                       (long long)x->shape[1], px_layout_shape_text(4, x->shape, xs, sizeof xs), (long long)w->shape[1],
                       px_layout_shape_text(4, w->shape, ws, sizeof ws));
    }
    if (w->shape[0] < 1 || w->shape[1] < 1)
        px_layout_fail(s, PX_ERROR_SHAPE, "the weight has no channels (shape (%lld, %lld, ...))", (long long)w->shape[0],
                       (long long)w->shape[1]);
    oh = px_layout_window(s, "height", x->shape[2], w->shape[2], a->stride_h, a->pad_h);
    ow = px_layout_window(s, "width", x->shape[3], w->shape[3], a->stride_w, a->pad_w);
    if (s->status != PX_OK) return;
    {
        const px_layout_shape wants_w = px_layout_4d(w->shape[0], x->shape[1], w->shape[2], w->shape[3]);
        const px_layout_shape wants_y = px_layout_4d(x->shape[0], w->shape[0], oh, ow);
        px_layout_shape_is(s, wi, &wants_w);
        if (family == PX_FAMILY_CONV2D) {
            px_layout_shape_is(s, yi, &wants_y);
        } else if (s->status == PX_OK) {
            const px_tensor_desc* y = px_layout_operand(s, yi);
            char got[200], need[200];
            int same = y->ndim == 4, k;
            for (k = 0; same && k < 4; ++k) same = y->shape[k] == wants_y.dims[k];
            if (!same)
                px_layout_fail(s, PX_ERROR_SHAPE,
                               "the output gradient (input 0) has shape %s, which does not fit the weight and the "
                               "input: the call needs %s",
                               px_layout_shape_text(y->ndim, y->shape, got, sizeof got),
                               px_layout_shape_text(4, wants_y.dims, need, sizeof need));
        }
    }
}

/* The pooling ops, plain and fused with bias and relu; x (N,C,H,W), b (C),
 * y (N,C,OH,OW). Padding is at most half the window, so every window holds
 * a cell of x. */
static inline void px_layout_pool(px_layout_state* s) {
    const px_op_call* c = s->call;
    const px_pool2d_attrs* a = (const px_pool2d_attrs*)c->attrs;
    const int backward = s->row->family == PX_FAMILY_POOL2D_BACKWARD;
    /* x is the output when the gradient is the only input (average pooling's
     * backward), the first input otherwise. */
    const int32_t xi = backward && c->num_inputs == 1 ? 1 : 0;
    /* The fused ops take the bias as input 1: forwards (x, b), backwards (x, b, dy). */
    const int fused = c->num_inputs == (backward ? 3 : 2);
    /* y is dy backwards: the last input; forwards the output. */
    const int32_t yi = backward ? c->num_inputs - 1 : c->num_inputs;
    const px_tensor_desc* x = px_layout_operand(s, xi);
    int64_t oh, ow;
    px_layout_rank(s, xi, 4, 0);
    if (!px_layout_has_attrs(s, a)) return;
    if (a->kernel_h < 1 || a->kernel_w < 1 || a->stride_h < 1 || a->stride_w < 1)
        px_layout_fail(s, PX_ERROR_INVALID_ARGUMENT, "pool size %dx%d and strides %dx%d must be >= 1",
                       (int)a->kernel_h, (int)a->kernel_w, (int)a->stride_h, (int)a->stride_w);
    else if (a->pad_h < 0 || a->pad_w < 0 || a->pad_h > a->kernel_h / 2 || a->pad_w > a->kernel_w / 2)
        px_layout_fail(s, PX_ERROR_INVALID_ARGUMENT, "padding %dx%d must be >= 0 and at most half the pool size %dx%d",
                       (int)a->pad_h, (int)a->pad_w, (int)a->kernel_h, (int)a->kernel_w);
    if (s->status != PX_OK) return;
    if (x->shape[2] == 0 || x->shape[3] == 0)
        px_layout_fail(s, PX_ERROR_SHAPE, "the input's planes are empty (%lldx%lld); a window would hold no cell",
                       (long long)x->shape[2], (long long)x->shape[3]);
    oh = px_layout_window(s, "height", x->shape[2], a->kernel_h, a->stride_h, a->pad_h);
    ow = px_layout_window(s, "width", x->shape[3], a->kernel_w, a->stride_w, a->pad_w);
    if (s->status != PX_OK) return;
    {
        const px_layout_shape pooled = px_layout_4d(x->shape[0], x->shape[1], oh, ow);
        const px_layout_shape bias = px_layout_vector(x->shape[1]);
        px_layout_shape_is(s, yi, &pooled);
        if (fused) px_layout_shape_is(s, 1, &bias);
        if (backward && xi == 0) px_layout_shape_of(s, c->num_inputs, 0); /* dx has x's shape */
        if (backward && fused) px_layout_shape_is(s, c->num_inputs + 1, &bias);
    }
}

/* The optimizer steps work in place: output 0 is input 0 (param), output 1
 * input 2 (the momentum buffer, or Adam's state). */
static inline void px_layout_in_place(px_layout_state* s) {
    const px_op_call* c = s->call;
    int32_t i;
    for (i = 0; i < c->num_outputs; ++i) {
        const px_tensor_desc *out = &c->outputs[i], *in = &c->inputs[i == 0 ? 0 : 2];
        if (out->buffer != in->buffer || out->offset != in->offset)
            px_layout_fail(s, PX_ERROR_INVALID_ARGUMENT, "output %d is not input %d (the update is in place)", (int)i,
                           (int)(i == 0 ? 0 : 2));
    }
}

/* SGD_UPDATE and NAG_UPDATE: every operand has the param's shape. */
static inline void px_layout_sgd(px_layout_state* s) {
    const px_op_call* c = s->call;
    int32_t i;
    for (i = 1; i < c->num_inputs + c->num_outputs; ++i) px_layout_shape_of(s, i, 0);
    px_layout_in_place(s);
}

/* ADAM_UPDATE: the gradient has the param's shape, the state (2, n) for the
 * param's n values (rows m and v). */
static inline void px_layout_adam(px_layout_state* s) {
    const px_tensor_desc* p = &s->call->inputs[0];
    px_layout_shape state;
    int32_t k;
    state.ndim = 2, state.dims[0] = 2, state.dims[1] = 1;
    for (k = 0; k < p->ndim; ++k)
        if (p->shape[k] == 0) state.dims[1] = 0;
    /* A non-empty param lies within its buffer (px_tensor_end), so its count fits. */
    for (k = 0; k < p->ndim && state.dims[1] != 0; ++k) state.dims[1] *= p->shape[k];
    px_layout_shape_of(s, 1, 0);
    px_layout_shape_is(s, 2, &state);
    px_layout_shape_of(s, 3, 0);
    px_layout_shape_is(s, 4, &state);
    px_layout_in_place(s);
}

/* BATCH_NORM: x (N,C,...) with at least one value per channel for the
 * statistics; dy, y and dx have x's shape, every other operand is (C); eps
 * is finite and > 0. */
static inline void px_layout_batch_norm(px_layout_state* s) {
    const px_op_call* c = s->call;
    const px_tensor_desc* x = &c->inputs[0];
    const int32_t op = c->op, n = c->num_inputs;
    const int gradient = op == PX_OP_BATCH_NORM_BACKWARD_REDUCE || op == PX_OP_BATCH_NORM_BACKWARD;
    const int writes_x_shape = op == PX_OP_BATCH_NORM || op == PX_OP_BATCH_NORM_BACKWARD;
    px_layout_shape channels;
    int64_t per_channel = 1;
    int32_t i;
    px_layout_rank(s, 0, 2, 1);
    if (s->status != PX_OK) return;
    channels = px_layout_vector(x->shape[1]);
    for (i = 1; i < n + c->num_outputs; ++i) {
        if ((i == 1 && gradient) || (i >= n && writes_x_shape)) px_layout_shape_of(s, i, 0);
        else px_layout_shape_is(s, i, &channels);
    }
    for (i = 0; i < x->ndim; ++i)
        if (i != 1) per_channel = x->shape[i] ? per_channel : 0;
    if (op == PX_OP_BATCH_NORM_STATS && per_channel == 0 && x->shape[1] > 0) {
        char got[200];
        px_layout_fail(s, PX_ERROR_SHAPE, "the input %s has no values per channel, and nothing has no mean",
                       px_layout_shape_text(x->ndim, x->shape, got, sizeof got));
    }
    if (op != PX_OP_BATCH_NORM_STATS) {
        const px_batch_norm_attrs* a = (const px_batch_norm_attrs*)c->attrs;
        if (px_layout_has_attrs(s, a) && !(a->eps > 0 && a->eps <= DBL_MAX))
            px_layout_fail(s, PX_ERROR_INVALID_ARGUMENT, "eps %g must be finite and > 0", a->eps);
    }
}

/* GEMM: op(a) (M,K) x op(b) (K,N) -> (M,N), op transposing a stored operand
 * when its attrs ask. */
static inline void px_layout_gemm(px_layout_state* s) {
    const px_op_call* c = s->call;
    const px_gemm_attrs* g = (const px_gemm_attrs*)c->attrs;
    px_layout_shape want;
    int32_t i;
    for (i = 0; i < 3; ++i) px_layout_rank(s, i, 2, 0);
    if (s->status != PX_OK || !px_layout_has_attrs(s, g)) return;
    want.ndim = 2;
    want.dims[0] = c->outputs[0].shape[0], want.dims[1] = c->inputs[1].shape[g->trans_b ? 1 : 0];
    if (g->trans_a) want.dims[0] = want.dims[1], want.dims[1] = c->outputs[0].shape[0];
    px_layout_shape_is(s, 0, &want); /* op(a) is (M,K), with b's K */
    want.dims[0] = c->inputs[1].shape[0], want.dims[1] = c->inputs[1].shape[1];
    want.dims[g->trans_b ? 0 : 1] = c->outputs[0].shape[1];
    px_layout_shape_is(s, 1, &want); /* op(b) is (K,N), with the output's N */
}

/* BIAS: with two inputs x (N,C,...), b (C) -> x's shape; with one, dy
 * (N,C,...) -> (C). */
static inline void px_layout_bias(px_layout_state* s) {
    const px_op_call* c = s->call;
    const int32_t o = c->num_inputs;
    px_layout_shape bias;
    px_layout_rank(s, 0, 2, 1);
    if (s->status != PX_OK) return;
    bias = px_layout_vector(c->inputs[0].shape[1]);
    px_layout_shape_is(s, o == 2 ? 1 : o, &bias);
    if (o == 2) px_layout_shape_of(s, o, 0);
}

/* SOFTMAX_CROSS_ENTROPY: logits (N,C) with C >= 1 and labels (N) int32 or
 * int64 -> loss (N); with a third input dloss (N) -> dlogits (N,C). */
static inline void px_layout_softmax_cross_entropy(px_layout_state* s) {
    const px_op_call* c = s->call;
    const px_tensor_desc* x = &c->inputs[0];
    const int32_t o = c->num_inputs;
    px_layout_shape rows;
    px_layout_rank(s, 0, 2, 0);
    if (s->status != PX_OK) return;
    if (x->shape[1] < 1) px_layout_fail(s, PX_ERROR_SHAPE, "the logits have no classes");
    if (c->inputs[1].dtype != PX_INT32 && c->inputs[1].dtype != PX_INT64)
        px_layout_fail(s, PX_ERROR_DTYPE, "the labels (input 1) are %s; labels are int32 or int64 class indices",
                       px_dtype_name(c->inputs[1].dtype));
    rows = px_layout_vector(x->shape[0]);
    if (c->inputs[1].ndim != 1 || c->inputs[1].shape[0] != x->shape[0]) {
        char got[200], logits[200];
        px_layout_fail(s, PX_ERROR_SHAPE, "the labels (input 1) have shape %s; one label per row of the logits %s is needed",
                       px_layout_shape_text(c->inputs[1].ndim, c->inputs[1].shape, got, sizeof got),
                       px_layout_shape_text(x->ndim, x->shape, logits, sizeof logits));
    }
    if (o == 2) {
        px_layout_shape_is(s, o, &rows);
    } else {
        px_layout_shape_is(s, 2, &rows);
        px_layout_shape_of(s, o, 0);
    }
}

/* px_alpha_attrs' alpha, when the op has them: finite. */
static inline void px_layout_alpha(px_layout_state* s) {
    const px_alpha_attrs* a = (const px_alpha_attrs*)s->call->attrs;
    if (s->row->attrs_size == 0 || !px_layout_has_attrs(s, a)) return;
    if (!(a->alpha >= -DBL_MAX && a->alpha <= DBL_MAX))
        px_layout_fail(s, PX_ERROR_INVALID_ARGUMENT, "alpha %g must be finite", a->alpha);
}

/* TAKE: the table (V, ...) and the indices (int32 or int64, any shape) give
 * rows of the indices' shape followed by the table's trailing axes; the
 * backward's output gradient has that shape and its result the table's. */
static inline void px_layout_take(px_layout_state* s) {
    const px_op_call* c = s->call;
    const px_tensor_desc* idx = &c->inputs[1];
    const px_tensor_desc* table = c->op == PX_OP_TAKE ? &c->inputs[0] : &c->outputs[0];
    const int32_t rows_of = c->op == PX_OP_TAKE ? 2 : 0; /* the operand shaped (indices' shape, ...) */
    px_layout_shape want;
    int32_t k;
    if (idx->dtype != PX_INT32 && idx->dtype != PX_INT64)
        px_layout_fail(s, PX_ERROR_DTYPE, "the indices (input 1) are %s; indices are int32 or int64",
                       px_dtype_name(idx->dtype));
    px_layout_rank(s, c->op == PX_OP_TAKE ? 0 : 2, 1, 1);
    if (s->status != PX_OK) return;
    if (idx->ndim + table->ndim - 1 > PX_MAX_DIMS) {
        px_layout_fail(s, PX_ERROR_SHAPE, "the result would have %d axes; at most %d", (int)(idx->ndim + table->ndim - 1),
                       (int)PX_MAX_DIMS);
        return;
    }
    want.ndim = idx->ndim + table->ndim - 1;
    for (k = 0; k < idx->ndim; ++k) want.dims[k] = idx->shape[k];
    for (k = 1; k < table->ndim; ++k) want.dims[idx->ndim + k - 1] = table->shape[k];
    px_layout_shape_is(s, rows_of, &want);
}

/* The families from GEMM on (the ABI 1.1 and 1.4 ops): contiguous operands
 * of one dtype the row accepts (labels aside), related as the family says. */
static inline void px_layout_nn(px_layout_state* s) {
    const px_op_call* c = s->call;
    const int32_t family = s->row->family, o = c->num_inputs, dtype = c->inputs[0].dtype;
    const int labels = family == PX_FAMILY_SOFTMAX_CROSS_ENTROPY || family == PX_FAMILY_TAKE;
    int32_t i;
    if (!px_op_accepts(c->op, dtype)) {
        char takes[96];
        px_layout_fail(s, PX_ERROR_DTYPE, "input 0 is %s; the op takes %s", px_dtype_name(dtype),
                       px_op_accepted_dtypes(c->op, takes, sizeof takes));
    }
    for (i = 0; i < c->num_inputs + c->num_outputs; ++i) {
        px_layout_contiguous(s, i);
        if (!(labels && i == 1)) px_layout_dtype_is(s, i, dtype);
    }
    if (s->status != PX_OK) return;
    switch (family) {
    case PX_FAMILY_GEMM: px_layout_gemm(s); return;
    case PX_FAMILY_CONV2D: case PX_FAMILY_CONV2D_BACKWARD_INPUT: case PX_FAMILY_CONV2D_BACKWARD_WEIGHT:
        px_layout_conv(s);
        return;
    case PX_FAMILY_POOL2D: case PX_FAMILY_POOL2D_BACKWARD: px_layout_pool(s); return;
    case PX_FAMILY_BIAS: px_layout_bias(s); return;
    case PX_FAMILY_LOG_SOFTMAX:
        px_layout_rank(s, 0, 2, 0);
        for (i = 1; i <= o; ++i) px_layout_shape_of(s, i, 0);
        return;
    case PX_FAMILY_SOFTMAX_CROSS_ENTROPY: px_layout_softmax_cross_entropy(s); return;
    case PX_FAMILY_DROPOUT: {
        const px_dropout_attrs* d = (const px_dropout_attrs*)c->attrs;
        double p;
        if (!px_layout_has_attrs(s, d)) return;
        p = d->p;
        if (!(p >= 0 && p < 1)) px_layout_fail(s, PX_ERROR_INVALID_ARGUMENT, "the drop probability %g is not in [0, 1)", p);
        px_layout_shape_of(s, o, 0);
        return;
    }
    case PX_FAMILY_SGD: px_layout_sgd(s); return;
    case PX_FAMILY_BATCH_NORM: px_layout_batch_norm(s); return;
    case PX_FAMILY_ADAM: px_layout_adam(s); return;
    case PX_FAMILY_TAKE: px_layout_take(s); return;
    case PX_FAMILY_UNARY_ALPHA:
        px_layout_shape_of(s, o, 0);
        px_layout_alpha(s);
        return;
    default: /* PX_FAMILY_POINTWISE_GRAD: (y or x, dy) -> dx, all of one shape */
        px_layout_shape_of(s, 1, 0);
        px_layout_shape_of(s, o, 0);
        px_layout_alpha(s);
        return;
    }
}

/* Checks how the operands of `c` relate, for a call whose form and operands
 * px_op_call_check has accepted one by one (a known op, counts, descs,
 * extents, attrs sizes): PX_OK, or the status with the reason written to
 * `why` ("input 1 has shape (4, 2); the call needs (3, 2)"), by the rule of
 * the op's family. Every output but COPY's is contiguous. */
static inline px_status px_op_layout_check(const px_op_call* c, char* why, size_t why_size) {
    px_layout_state s;
    int32_t i, family;
    s.call = c, s.row = px_op_row_of(c->op), s.why = why, s.why_size = why_size, s.status = PX_OK;
    if (!s.row) {
        snprintf(why, why_size, "unknown op %d", (int)c->op);
        return PX_ERROR_UNSUPPORTED;
    }
    family = s.row->family;
    if (family != PX_FAMILY_COPY)
        for (i = 0; i < c->num_outputs; ++i) px_layout_contiguous(&s, c->num_inputs + i);
    if (s.status != PX_OK) return s.status;
    switch (family) {
    case PX_FAMILY_BINARY: case PX_FAMILY_UNARY: case PX_FAMILY_WHERE: case PX_FAMILY_COPY: case PX_FAMILY_CAST:
        px_layout_elementwise(&s);
        break;
    case PX_FAMILY_REDUCE: px_layout_reduce(&s); break;
    case PX_FAMILY_MATMUL: px_layout_matmul(&s); break;
    case PX_FAMILY_CREATION: break; /* one contiguous output, nothing to relate */
    default: px_layout_nn(&s); break;
    }
    return s.status;
}

#ifdef __cplusplus
}
#endif

#endif /* PLEXUS_OP_LAYOUT_H */
