// The router's neural-network ops (ABI 1.1): shape rules for gemm, conv2d,
// pooling, softmax losses, dropout and SGD, checked before anything is
// allocated or queued. Every operand of these ops is contiguous.
#include <cmath>

#include "dispatch.hpp"
#include "plexus/op_layout.h"
#include "router.hpp"

namespace px::router {
namespace {

using Owned = std::unique_ptr<TensorObj>;

void check_rank(int32_t op, const char* what, const TensorObj& t, int rank) {
    if (t.shape.ndim != rank)
        fail(PX_ERROR_SHAPE, name_of(op), ": ", what, " must be ", rank, "-D, got shape ", to_string(t.shape));
}

void check_same_shape(int32_t op, const char* a_name, const TensorObj& a, const char* b_name, const TensorObj& b) {
    if (!(a.shape == b.shape))
        fail(PX_ERROR_SHAPE, name_of(op), ": ", a_name, " has shape ", to_string(a.shape), " but ", b_name, " has ",
             to_string(b.shape), "; they must match");
}

// The checks shared by every nn op on float inputs of one device and dtype.
void check_float_inputs(int32_t op, std::initializer_list<const TensorObj*> ts) {
    check_same_device(op, ts);
    const TensorObj& first = **ts.begin();
    for (const TensorObj* t : ts) check_same_dtype(op, first, *t);
    check_accepts(op, first.dtype);
}

Owned make(const TensorObj& like, px_dtype dtype, int ndim, const int64_t* dims) {
    return Owned(new_tensor(like.buffer->device, dtype, make_shape(ndim, dims)));
}

// Output length of a sliding window along one axis (the formula plugins
// check it by, px_window_out), or an error naming the figure at fault.
int64_t window_out(int32_t op, const char* axis, int64_t in, int64_t kernel, int32_t stride, int32_t pad) {
    if (stride < 1) fail(PX_ERROR_INVALID_ARGUMENT, name_of(op), ": stride ", stride, " along ", axis, " must be >= 1");
    if (pad < 0) fail(PX_ERROR_INVALID_ARGUMENT, name_of(op), ": padding ", pad, " along ", axis, " is negative");
    if (kernel < 1) fail(PX_ERROR_SHAPE, name_of(op), ": the kernel is empty along ", axis);
    int64_t span;
    if (__builtin_add_overflow(in, 2 * int64_t(pad), &span))  // an empty batch allows a huge extent
        fail(PX_ERROR_SHAPE, name_of(op), ": the ", axis, " extent ", in, " with padding ", pad,
             " has more cells than fit in 64 bits");
    if (span < kernel)
        fail(PX_ERROR_SHAPE, name_of(op), ": the ", axis, " extent ", in, " with padding ", pad,
             " is smaller than the kernel (", kernel, ")");
    return px_window_out(in, kernel, stride, pad);
}

void check_pool_window(int32_t op, const Window& w) {
    if (w.kernel_h < 1 || w.kernel_w < 1)
        fail(PX_ERROR_INVALID_ARGUMENT, name_of(op), ": pool size ", w.kernel_h, "x", w.kernel_w, " must be >= 1");
    if (w.pad_h > w.kernel_h / 2 || w.pad_w > w.kernel_w / 2)
        fail(PX_ERROR_INVALID_ARGUMENT, name_of(op), ": padding ", w.pad_h, "x", w.pad_w,
             " must be at most half the pool size ", w.kernel_h, "x", w.kernel_w);
}

px_pool2d_attrs pool_attrs(const Window& w) {
    return px_pool2d_attrs{sizeof(px_pool2d_attrs), w.kernel_h, w.kernel_w, w.stride_h, w.stride_w, w.pad_h, w.pad_w};
}

// The checked (N,C,OH,OW) of pooling x (N,C,H,W). A plane with no cells is
// refused: a window would hold nothing but padding, and have no maximum.
Shape pooled_shape(int32_t op, const TensorObj& x, const Window& win) {
    check_rank(op, "the input", x, 4);
    check_pool_window(op, win);
    if (x.shape.dims[2] == 0 || x.shape.dims[3] == 0)
        fail(PX_ERROR_SHAPE, name_of(op), ": the input ", to_string(x.shape), " has empty planes; a window would hold no cell");
    int64_t oh = window_out(op, "height", x.shape.dims[2], win.kernel_h, win.stride_h, win.pad_h);
    int64_t ow = window_out(op, "width", x.shape.dims[3], win.kernel_w, win.stride_w, win.pad_w);
    int64_t dims[4] = {x.shape.dims[0], x.shape.dims[1], oh, ow};
    return make_shape(4, dims);
}

// dy must have the shape pooling x gives.
void check_pooled_gradient(int32_t op, const TensorObj& x, const TensorObj& dy, const Window& win) {
    Shape want = pooled_shape(op, x, win);
    if (!(dy.shape == want))
        fail(PX_ERROR_SHAPE, name_of(op), ": the output gradient has shape ", to_string(dy.shape), "; pooling ",
             to_string(x.shape), " gives ", to_string(want));
}

// b is one value per channel of x (axis 1).
void check_bias(int32_t op, const TensorObj& x, const TensorObj& b) {
    check_rank(op, "the bias", b, 1);
    if (b.shape.dims[0] != x.shape.dims[1])
        fail(PX_ERROR_SHAPE, name_of(op), ": the bias has ", b.shape.dims[0], " values but the input ", to_string(x.shape),
             " has ", x.shape.dims[1], " channels");
}

px_conv2d_attrs conv_attrs(const Window& w) {
    return px_conv2d_attrs{sizeof(px_conv2d_attrs), w.stride_h, w.stride_w, w.pad_h, w.pad_w};
}

}  // namespace

TensorObj* gemm(const TensorObj& a, const TensorObj& b, bool trans_a, bool trans_b) {
    check_float_inputs(PX_OP_GEMM, {&a, &b});
    check_rank(PX_OP_GEMM, "a", a, 2);
    check_rank(PX_OP_GEMM, "b", b, 2);
    int64_t m = a.shape.dims[trans_a ? 1 : 0], k = a.shape.dims[trans_a ? 0 : 1];
    int64_t k2 = b.shape.dims[trans_b ? 1 : 0], n = b.shape.dims[trans_b ? 0 : 1];
    if (k != k2)
        fail(PX_ERROR_SHAPE, "gemm: inner dimensions differ, ", to_string(a.shape), trans_a ? "^T" : "", " x ",
             to_string(b.shape), trans_b ? "^T" : "", " (", k, " vs ", k2, ")");
    int64_t dims[2] = {m, n};
    Owned out = make(a, a.dtype, 2, dims);
    px_gemm_attrs attrs{sizeof(px_gemm_attrs), trans_a, trans_b, tf32_allowed(a.device())};
    px_tensor_desc in[2] = {a.desc(), b.desc()}, o = out->desc();
    dispatch(a.device(), PX_OP_GEMM, a.dtype, in, 2, &o, 1, &attrs, m * n > 0);
    return out.release();
}

TensorObj* conv2d(const TensorObj& x, const TensorObj& w, const Window& win) {
    const int32_t op = PX_OP_CONV2D;
    check_float_inputs(op, {&x, &w});
    check_rank(op, "the input", x, 4);
    check_rank(op, "the weight", w, 4);
    if (x.shape.dims[1] != w.shape.dims[1])
        fail(PX_ERROR_SHAPE, "conv2d: the input has ", x.shape.dims[1], " channels (shape ", to_string(x.shape),
             ") but the weight expects ", w.shape.dims[1], " (shape ", to_string(w.shape), ")");
    if (w.shape.dims[0] < 1 || w.shape.dims[1] < 1)
        fail(PX_ERROR_SHAPE, "conv2d: the weight ", to_string(w.shape), " has no channels");
    int64_t oh = window_out(op, "height", x.shape.dims[2], w.shape.dims[2], win.stride_h, win.pad_h);
    int64_t ow = window_out(op, "width", x.shape.dims[3], w.shape.dims[3], win.stride_w, win.pad_w);
    int64_t dims[4] = {x.shape.dims[0], w.shape.dims[0], oh, ow};
    Owned out = make(x, x.dtype, 4, dims);
    px_conv2d_attrs attrs = conv_attrs(win);
    px_tensor_desc in[2] = {x.desc(), w.desc()}, o = out->desc();
    dispatch(x.device(), op, x.dtype, in, 2, &o, 1, &attrs, numel(out->shape) > 0);
    return out.release();
}

TensorObj* conv2d_backward_input(const TensorObj& dy, const TensorObj& w, int64_t in_h, int64_t in_w,
                                 const Window& win) {
    const int32_t op = PX_OP_CONV2D_BACKWARD_INPUT;
    check_float_inputs(op, {&dy, &w});
    check_rank(op, "the output gradient", dy, 4);
    check_rank(op, "the weight", w, 4);
    if (in_h < 1 || in_w < 1) fail(PX_ERROR_SHAPE, name_of(op), ": the input size ", in_h, "x", in_w, " is empty");
    int64_t oh = window_out(op, "height", in_h, w.shape.dims[2], win.stride_h, win.pad_h);
    int64_t ow = window_out(op, "width", in_w, w.shape.dims[3], win.stride_w, win.pad_w);
    if (dy.shape.dims[1] != w.shape.dims[0] || dy.shape.dims[2] != oh || dy.shape.dims[3] != ow)
        fail(PX_ERROR_SHAPE, name_of(op), ": the output gradient ", to_string(dy.shape), " does not fit the weight ",
             to_string(w.shape), " on a ", in_h, "x", in_w, " input (expected (", dy.shape.dims[0], ", ",
             w.shape.dims[0], ", ", oh, ", ", ow, "))");
    int64_t dims[4] = {dy.shape.dims[0], w.shape.dims[1], in_h, in_w};
    Owned out = make(dy, dy.dtype, 4, dims);
    px_conv2d_attrs attrs = conv_attrs(win);
    px_tensor_desc in[2] = {dy.desc(), w.desc()}, o = out->desc();
    dispatch(dy.device(), op, dy.dtype, in, 2, &o, 1, &attrs, numel(out->shape) > 0);
    return out.release();
}

TensorObj* conv2d_backward_weight(const TensorObj& dy, const TensorObj& x, int64_t kernel_h, int64_t kernel_w,
                                  const Window& win) {
    const int32_t op = PX_OP_CONV2D_BACKWARD_WEIGHT;
    check_float_inputs(op, {&dy, &x});
    check_rank(op, "the output gradient", dy, 4);
    check_rank(op, "the input", x, 4);
    int64_t oh = window_out(op, "height", x.shape.dims[2], kernel_h, win.stride_h, win.pad_h);
    int64_t ow = window_out(op, "width", x.shape.dims[3], kernel_w, win.stride_w, win.pad_w);
    if (dy.shape.dims[0] != x.shape.dims[0] || dy.shape.dims[2] != oh || dy.shape.dims[3] != ow)
        fail(PX_ERROR_SHAPE, name_of(op), ": the output gradient ", to_string(dy.shape), " does not fit the input ",
             to_string(x.shape), " with a ", kernel_h, "x", kernel_w, " kernel (expected (", x.shape.dims[0],
             ", O, ", oh, ", ", ow, "))");
    int64_t dims[4] = {dy.shape.dims[1], x.shape.dims[1], kernel_h, kernel_w};
    if (numel(dy.shape) == 0)  // an empty batch: the gradient is zero
        return full(dy.buffer->device, dy.dtype, make_shape(4, dims), 0.0);
    Owned out = make(dy, dy.dtype, 4, dims);
    px_conv2d_attrs attrs = conv_attrs(win);
    px_tensor_desc in[2] = {dy.desc(), x.desc()}, o = out->desc();
    dispatch(dy.device(), op, dy.dtype, in, 2, &o, 1, &attrs, numel(out->shape) > 0);
    return out.release();
}

TensorObj* pool2d(px_op op, const TensorObj& x, const Window& win) {
    if (op != PX_OP_MAX_POOL2D && op != PX_OP_AVG_POOL2D)
        fail(PX_ERROR_INVALID_ARGUMENT, "op ", int(op), " is not PX_OP_MAX_POOL2D or PX_OP_AVG_POOL2D");
    check_float_inputs(op, {&x});
    Shape pooled = pooled_shape(op, x, win);
    Owned out = make(x, x.dtype, 4, pooled.dims);
    px_pool2d_attrs attrs = pool_attrs(win);
    px_tensor_desc in = x.desc(), o = out->desc();
    dispatch(x.device(), op, x.dtype, &in, 1, &o, 1, &attrs, numel(out->shape) > 0);
    return out.release();
}

TensorObj* pool2d_backward(px_op op, const TensorObj& x, const TensorObj& dy, const Window& win) {
    if (op != PX_OP_MAX_POOL2D && op != PX_OP_AVG_POOL2D)
        fail(PX_ERROR_INVALID_ARGUMENT, "op ", int(op), " is not PX_OP_MAX_POOL2D or PX_OP_AVG_POOL2D");
    const px_op bop = op == PX_OP_MAX_POOL2D ? PX_OP_MAX_POOL2D_BACKWARD : PX_OP_AVG_POOL2D_BACKWARD;
    check_float_inputs(bop, {&x, &dy});
    check_pooled_gradient(bop, x, dy, win);
    Owned out = make(x, x.dtype, 4, x.shape.dims);
    px_pool2d_attrs attrs = pool_attrs(win);
    px_tensor_desc in[2] = {x.desc(), dy.desc()}, o = out->desc();
    bool is_max = op == PX_OP_MAX_POOL2D;
    dispatch(x.device(), bop, x.dtype, is_max ? in : in + 1, is_max ? 2 : 1, &o, 1, &attrs, numel(x.shape) > 0);
    return out.release();
}

TensorObj* bias_relu_max_pool2d(const TensorObj& x, const TensorObj& b, const Window& win) {
    const int32_t op = PX_OP_BIAS_RELU_MAX_POOL2D;
    check_float_inputs(op, {&x, &b});
    Shape pooled = pooled_shape(op, x, win);
    check_bias(op, x, b);
    Owned out = make(x, x.dtype, 4, pooled.dims);
    px_pool2d_attrs attrs = pool_attrs(win);
    px_tensor_desc in[2] = {x.desc(), b.desc()}, o = out->desc();
    dispatch(x.device(), op, x.dtype, in, 2, &o, 1, &attrs, numel(out->shape) > 0);
    return out.release();
}

std::pair<TensorObj*, TensorObj*> bias_relu_max_pool2d_backward(const TensorObj& x, const TensorObj& b,
                                                                const TensorObj& dy, const Window& win) {
    const int32_t op = PX_OP_BIAS_RELU_MAX_POOL2D_BACKWARD;
    check_float_inputs(op, {&x, &b, &dy});
    check_pooled_gradient(op, x, dy, win);
    check_bias(op, x, b);
    Owned dx = make(x, x.dtype, 4, x.shape.dims);
    if (numel(x.shape) == 0) {  // an empty batch: no gradient reaches the bias
        Owned zeros(full(b.buffer->device, b.dtype, b.shape, 0.0));
        return {dx.release(), zeros.release()};
    }
    Owned db = make(b, b.dtype, 1, b.shape.dims);
    px_pool2d_attrs attrs = pool_attrs(win);
    px_tensor_desc in[3] = {x.desc(), b.desc(), dy.desc()}, o[2] = {dx->desc(), db->desc()};
    dispatch(x.device(), op, x.dtype, in, 3, o, 2, &attrs, true);
    return {dx.release(), db.release()};
}

TensorObj* bias_add(const TensorObj& x, const TensorObj& b) {
    check_float_inputs(PX_OP_BIAS_ADD, {&x, &b});
    if (x.shape.ndim < 2) fail(PX_ERROR_SHAPE, "bias_add: the input must have a channel axis 1, got ", to_string(x.shape));
    check_bias(PX_OP_BIAS_ADD, x, b);
    Owned out = make(x, x.dtype, x.shape.ndim, x.shape.dims);
    px_tensor_desc in[2] = {x.desc(), b.desc()}, o = out->desc();
    dispatch(x.device(), PX_OP_BIAS_ADD, x.dtype, in, 2, &o, 1, nullptr, numel(x.shape) > 0);
    return out.release();
}

TensorObj* bias_grad(const TensorObj& dy) {
    check_float_inputs(PX_OP_BIAS_GRAD, {&dy});
    if (dy.shape.ndim < 2) fail(PX_ERROR_SHAPE, "bias_grad: the gradient must have a channel axis 1, got ", to_string(dy.shape));
    if (numel(dy.shape) == 0) return full(dy.buffer->device, dy.dtype, make_shape(1, &dy.shape.dims[1]), 0.0);
    Owned out = make(dy, dy.dtype, 1, &dy.shape.dims[1]);
    px_tensor_desc in = dy.desc(), o = out->desc();
    dispatch(dy.device(), PX_OP_BIAS_GRAD, dy.dtype, &in, 1, &o, 1, nullptr, true);
    return out.release();
}

TensorObj* activation_backward(px_op op, const TensorObj& y, const TensorObj& dy) {
    px_op bop = op == PX_OP_RELU ? PX_OP_RELU_BACKWARD
              : op == PX_OP_SIGMOID ? PX_OP_SIGMOID_BACKWARD
              : op == PX_OP_TANH ? PX_OP_TANH_BACKWARD : px_op(0);
    if (!bop) fail(PX_ERROR_INVALID_ARGUMENT, "op ", int(op), " is not PX_OP_RELU, PX_OP_SIGMOID or PX_OP_TANH");
    check_float_inputs(bop, {&y, &dy});
    check_same_shape(bop, "y", y, "dy", dy);
    Owned out = make(y, y.dtype, y.shape.ndim, y.shape.dims);
    px_tensor_desc in[2] = {y.desc(), dy.desc()}, o = out->desc();
    dispatch(y.device(), bop, y.dtype, in, 2, &o, 1, nullptr, numel(y.shape) > 0);
    return out.release();
}

TensorObj* log_softmax(const TensorObj& x) {
    check_float_inputs(PX_OP_LOG_SOFTMAX, {&x});
    check_rank(PX_OP_LOG_SOFTMAX, "the input", x, 2);
    Owned out = make(x, x.dtype, 2, x.shape.dims);
    px_tensor_desc in = x.desc(), o = out->desc();
    dispatch(x.device(), PX_OP_LOG_SOFTMAX, x.dtype, &in, 1, &o, 1, nullptr, numel(x.shape) > 0);
    return out.release();
}

TensorObj* log_softmax_backward(const TensorObj& y, const TensorObj& dy) {
    const int32_t op = PX_OP_LOG_SOFTMAX_BACKWARD;
    check_float_inputs(op, {&y, &dy});
    check_rank(op, "y", y, 2);
    check_same_shape(op, "y", y, "dy", dy);
    Owned out = make(y, y.dtype, 2, y.shape.dims);
    px_tensor_desc in[2] = {y.desc(), dy.desc()}, o = out->desc();
    dispatch(y.device(), op, y.dtype, in, 2, &o, 1, nullptr, numel(y.shape) > 0);
    return out.release();
}

namespace {
void check_labels(int32_t op, const TensorObj& logits, const TensorObj& labels) {
    check_rank(op, "the logits", logits, 2);
    if (logits.shape.dims[1] < 1) fail(PX_ERROR_SHAPE, name_of(op), ": the logits ", to_string(logits.shape), " have no classes");
    if (labels.dtype != PX_INT32 && labels.dtype != PX_INT64)
        fail(PX_ERROR_DTYPE, name_of(op), ": labels must be int32 or int64 class indices, not ",
             px_dtype_name(labels.dtype));
    if (labels.shape.ndim != 1 || labels.shape.dims[0] != logits.shape.dims[0])
        fail(PX_ERROR_SHAPE, name_of(op), ": labels of shape ", to_string(labels.shape), " do not fit logits ",
             to_string(logits.shape), " (one label per row expected)");
}
}  // namespace

TensorObj* softmax_cross_entropy(const TensorObj& logits, const TensorObj& labels) {
    const int32_t op = PX_OP_SOFTMAX_CROSS_ENTROPY;
    check_same_device(op, {&logits, &labels});
    check_accepts(op, logits.dtype);
    check_labels(op, logits, labels);
    Owned out = make(logits, logits.dtype, 1, logits.shape.dims);
    px_tensor_desc in[2] = {logits.desc(), labels.desc()}, o = out->desc();
    dispatch(logits.device(), op, logits.dtype, in, 2, &o, 1, nullptr, numel(logits.shape) > 0);
    return out.release();
}

TensorObj* softmax_cross_entropy_backward(const TensorObj& logits, const TensorObj& labels, const TensorObj& dloss) {
    const int32_t op = PX_OP_SOFTMAX_CROSS_ENTROPY_BACKWARD;
    check_same_device(op, {&logits, &labels, &dloss});
    check_accepts(op, logits.dtype);
    check_labels(op, logits, labels);
    check_same_dtype(op, logits, dloss);
    if (!(dloss.shape == labels.shape))
        fail(PX_ERROR_SHAPE, name_of(op), ": the loss gradient has shape ", to_string(dloss.shape), ", not ",
             to_string(labels.shape));
    Owned out = make(logits, logits.dtype, 2, logits.shape.dims);
    px_tensor_desc in[3] = {logits.desc(), labels.desc(), dloss.desc()}, o = out->desc();
    dispatch(logits.device(), op, logits.dtype, in, 3, &o, 1, nullptr, numel(logits.shape) > 0);
    return out.release();
}

TensorObj* dropout(px_op op, const TensorObj& x, double p, uint64_t seed, uint64_t offset) {
    if (op != PX_OP_DROPOUT && op != PX_OP_DROPOUT_BACKWARD)
        fail(PX_ERROR_INVALID_ARGUMENT, "op ", int(op), " is not PX_OP_DROPOUT or PX_OP_DROPOUT_BACKWARD");
    check_float_inputs(op, {&x});
    if (!(p >= 0 && p < 1)) fail(PX_ERROR_INVALID_ARGUMENT, name_of(op), ": the drop probability ", p, " is not in [0, 1)");
    Owned out = make(x, x.dtype, x.shape.ndim, x.shape.dims);
    px_dropout_attrs attrs{sizeof(px_dropout_attrs), seed, offset, p};
    px_tensor_desc in = x.desc(), o = out->desc();
    dispatch(x.device(), op, x.dtype, &in, 1, &o, 1, &attrs, numel(x.shape) > 0);
    return out.release();
}

void sgd_update(TensorObj& param, const TensorObj& grad, TensorObj* momentum, const SgdSettings& s) {
    const int32_t op = PX_OP_SGD_UPDATE;
    if (momentum) check_float_inputs(op, {&param, &grad, momentum});
    else check_float_inputs(op, {&param, &grad});
    check_same_shape(op, "the parameter", param, "its gradient", grad);
    if (momentum) check_same_shape(op, "the parameter", param, "the momentum buffer", *momentum);
    if (momentum && momentum->buffer == param.buffer)
        fail(PX_ERROR_INVALID_ARGUMENT, "sgd_update: the momentum buffer shares memory with the parameter");
    auto bad = [](double v) { return !std::isfinite(v); };
    if (bad(s.lr) || s.lr < 0) fail(PX_ERROR_INVALID_ARGUMENT, "sgd_update: learning rate ", s.lr, " must be finite and >= 0");
    if (bad(s.momentum) || s.momentum < 0 || s.momentum > 1)
        fail(PX_ERROR_INVALID_ARGUMENT, "sgd_update: momentum ", s.momentum, " is not in [0, 1]");
    if (bad(s.weight_decay) || s.weight_decay < 0)
        fail(PX_ERROR_INVALID_ARGUMENT, "sgd_update: weight decay ", s.weight_decay, " must be finite and >= 0");
    if (bad(s.rescale)) fail(PX_ERROR_INVALID_ARGUMENT, "sgd_update: rescale ", s.rescale, " is not finite");
    px_sgd_attrs attrs{sizeof(px_sgd_attrs), s.lr, s.momentum, s.weight_decay, s.rescale};
    px_tensor_desc in[3] = {param.desc(), grad.desc(), momentum ? momentum->desc() : px_tensor_desc{}};
    px_tensor_desc out[2] = {in[0], in[2]};
    int n = momentum ? 2 : 1;
    dispatch(param.device(), op, param.dtype, in, n + 1, out, n, &attrs, numel(param.shape) > 0);
}

}  // namespace px::router
