// The router's neural-network ops (ABI 1.1): each sizes its outputs, then
// runs its family's layout rule (op_layout.h, the rule each plugin checks a
// call by) over the inputs and the sized outputs before anything is
// allocated or queued, so the user's error and a plugin's refusal are
// written once, per family. What only the host knows stays here: devices,
// dtypes, and the arguments that are not operands (SGD's settings, a
// convolution's input size). Every operand of these ops is contiguous.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "dispatch.hpp"
#include "plexus/op_layout.h"
#include "router.hpp"

namespace px::router {
namespace {

using Owned = std::unique_ptr<TensorObj>;

// The checks shared by every nn op on float inputs of one device and dtype.
void check_float_inputs(int32_t op, std::initializer_list<const TensorObj*> ts) {
    check_same_device(op, ts);
    const TensorObj& first = **ts.begin();
    for (const TensorObj* t : ts) check_same_dtype(op, first, *t);
    check_accepts(op, first.dtype);
}

// An output as sized, not yet allocated: contiguous, no buffer. The extents
// may be anything the inputs gave (-1 for a window that does not fit); the
// layout rule refuses them before they are used.
px_tensor_desc planned(px_dtype dtype, std::initializer_list<int64_t> dims) {
    px_tensor_desc d{};
    d.struct_size = sizeof d;
    d.dtype = dtype;
    d.ndim = int32_t(dims.size());
    uint64_t stride = 1;  // as px_tensor_contiguous counts, wrapping where it wraps
    for (int32_t k = d.ndim - 1; k >= 0; --k) {
        d.shape[k] = dims.begin()[k];
        d.strides[k] = int64_t(stride);
        stride *= uint64_t(d.shape[k]);
    }
    return d;
}
px_tensor_desc planned_like(const TensorObj& t) {
    px_tensor_desc d = t.desc();
    d.buffer = nullptr;
    d.offset = 0;
    return d;
}

// The op's layout rule over the call as it will be made: a refusal fails
// with the rule's reason, after the op's name.
void check_layout(int32_t op, const px_tensor_desc* in, int32_t nin, const px_tensor_desc* out, int32_t nout,
                  const void* attrs) {
    const px_op_call call{sizeof(px_op_call), op, 0, nin, in, nout, out, attrs};
    char why[PX_MESSAGE_MAX];
    if (const px_status st = px_op_layout_check(&call, why, sizeof why)) fail(st, name_of(op), ": ", why);
}
void check_layout(int32_t op, std::initializer_list<px_tensor_desc> in, std::initializer_list<px_tensor_desc> out,
                  const void* attrs) {
    check_layout(op, in.begin(), int32_t(in.size()), out.begin(), int32_t(out.size()), attrs);
}

// A tensor for an output the layout rule accepted, on `like`'s device.
Owned make(const TensorObj& like, const px_tensor_desc& d) {
    return Owned(new_tensor(like.buffer->device, px_dtype(d.dtype), make_shape(d.ndim, d.shape)));
}

// The output length of a sliding window (-1 when it does not fit: the rule says why).
int64_t window(int64_t in, int64_t kernel, int32_t stride, int32_t pad) { return px_window_out(in, kernel, stride, pad); }

px_pool2d_attrs pool_attrs(const Window& w) {
    return px_pool2d_attrs{sizeof(px_pool2d_attrs), w.kernel_h, w.kernel_w, w.stride_h, w.stride_w, w.pad_h, w.pad_w};
}
px_conv2d_attrs conv_attrs(const Window& w) {
    return px_conv2d_attrs{sizeof(px_conv2d_attrs), w.stride_h, w.stride_w, w.pad_h, w.pad_w};
}

// (N,C,OH,OW) of pooling x (N,C,H,W) by `win`.
px_tensor_desc pooled(const TensorObj& x, const Window& win) {
    const int64_t* d = x.shape.dims;
    return planned(x.dtype, {d[0], d[1], window(d[2], win.kernel_h, win.stride_h, win.pad_h),
                             window(d[3], win.kernel_w, win.stride_w, win.pad_w)});
}

void check_pool_op(px_op op) {
    if (op != PX_OP_MAX_POOL2D && op != PX_OP_AVG_POOL2D)
        fail(PX_ERROR_INVALID_ARGUMENT, "op ", int(op), " is not PX_OP_MAX_POOL2D or PX_OP_AVG_POOL2D");
}

// An op whose one output has its first input's shape: the activation
// gradients, log-softmax and its gradient.
TensorObj* pointwise(int32_t op, std::initializer_list<const TensorObj*> ts, const void* attrs = nullptr) {
    check_float_inputs(op, ts);
    const TensorObj& first = **ts.begin();
    px_tensor_desc in[2];
    int32_t n = 0;
    for (const TensorObj* t : ts) in[n++] = t->desc();
    const px_tensor_desc planned_out = planned_like(first);
    check_layout(op, in, n, &planned_out, 1, attrs);
    Owned out = make(first, planned_out);
    const px_tensor_desc o = out->desc();
    dispatch(first.device(), op, first.dtype, in, n, &o, 1, attrs, numel(first.shape) > 0);
    return out.release();
}

// An output of `dims` (at most PX_MAX_DIMS of them: a longer list is cut, and
// the layout rule, which sees the inputs' ranks, refuses the call first).
px_tensor_desc planned(px_dtype dtype, const std::vector<int64_t>& dims) {
    px_tensor_desc d = planned(dtype, {});
    d.ndim = int32_t(std::min<size_t>(dims.size(), PX_MAX_DIMS));
    uint64_t stride = 1;
    for (int32_t k = d.ndim - 1; k >= 0; --k) {
        d.shape[k] = dims[size_t(k)];
        d.strides[k] = int64_t(stride);
        stride *= uint64_t(d.shape[k]);
    }
    return d;
}

}  // namespace

TensorObj* gemm(const TensorObj& a, const TensorObj& b, bool trans_a, bool trans_b) {
    const int32_t op = PX_OP_GEMM;
    check_float_inputs(op, {&a, &b});
    // Worded as the user multiplies, before the layout rule names the one operand it checks against the other.
    if (a.shape.ndim == 2 && b.shape.ndim == 2 && a.shape.dims[trans_a ? 0 : 1] != b.shape.dims[trans_b ? 1 : 0])
        fail(PX_ERROR_SHAPE, "gemm: inner dimensions differ, ", to_string(a.shape), trans_a ? " transposed" : "", " x ",
             to_string(b.shape), trans_b ? " transposed" : "", " (", a.shape.dims[trans_a ? 0 : 1], " vs ",
             b.shape.dims[trans_b ? 1 : 0], ")");
    const px_gemm_attrs attrs{sizeof(px_gemm_attrs), trans_a, trans_b, tf32_allowed(a.device())};
    const px_tensor_desc o = planned(a.dtype, {a.shape.dims[trans_a ? 1 : 0], b.shape.dims[trans_b ? 0 : 1]});
    check_layout(op, {a.desc(), b.desc()}, {o}, &attrs);
    Owned out = make(a, o);
    px_tensor_desc in[2] = {a.desc(), b.desc()}, od = out->desc();
    dispatch(a.device(), op, a.dtype, in, 2, &od, 1, &attrs, numel(out->shape) > 0);
    return out.release();
}

TensorObj* conv2d(const TensorObj& x, const TensorObj& w, const Window& win) {
    const int32_t op = PX_OP_CONV2D;
    check_float_inputs(op, {&x, &w});
    const px_conv2d_attrs attrs = conv_attrs(win);
    const int64_t *xd = x.shape.dims, *wd = w.shape.dims;
    const px_tensor_desc o = planned(x.dtype, {xd[0], wd[0], window(xd[2], wd[2], win.stride_h, win.pad_h),
                                               window(xd[3], wd[3], win.stride_w, win.pad_w)});
    check_layout(op, {x.desc(), w.desc()}, {o}, &attrs);
    Owned out = make(x, o);
    px_tensor_desc in[2] = {x.desc(), w.desc()}, od = out->desc();
    dispatch(x.device(), op, x.dtype, in, 2, &od, 1, &attrs, numel(out->shape) > 0);
    return out.release();
}

TensorObj* conv2d_backward_input(const TensorObj& dy, const TensorObj& w, int64_t in_h, int64_t in_w,
                                 const Window& win) {
    const int32_t op = PX_OP_CONV2D_BACKWARD_INPUT;
    check_float_inputs(op, {&dy, &w});
    if (in_h < 1 || in_w < 1) fail(PX_ERROR_SHAPE, name_of(op), ": the input size ", in_h, "x", in_w, " is empty");
    const px_conv2d_attrs attrs = conv_attrs(win);
    const px_tensor_desc o = planned(dy.dtype, {dy.shape.dims[0], w.shape.dims[1], in_h, in_w});
    check_layout(op, {dy.desc(), w.desc()}, {o}, &attrs);
    Owned out = make(dy, o);
    px_tensor_desc in[2] = {dy.desc(), w.desc()}, od = out->desc();
    dispatch(dy.device(), op, dy.dtype, in, 2, &od, 1, &attrs, numel(out->shape) > 0);
    return out.release();
}

TensorObj* conv2d_backward_weight(const TensorObj& dy, const TensorObj& x, int64_t kernel_h, int64_t kernel_w,
                                  const Window& win) {
    const int32_t op = PX_OP_CONV2D_BACKWARD_WEIGHT;
    check_float_inputs(op, {&dy, &x});
    const px_conv2d_attrs attrs = conv_attrs(win);
    const px_tensor_desc o = planned(dy.dtype, {dy.shape.dims[1], x.shape.dims[1], kernel_h, kernel_w});
    check_layout(op, {dy.desc(), x.desc()}, {o}, &attrs);
    if (numel(dy.shape) == 0)  // an empty batch: the gradient is zero
        return full(dy.buffer->device, dy.dtype, make_shape(o.ndim, o.shape), 0.0);
    Owned out = make(dy, o);
    px_tensor_desc in[2] = {dy.desc(), x.desc()}, od = out->desc();
    dispatch(dy.device(), op, dy.dtype, in, 2, &od, 1, &attrs, numel(out->shape) > 0);
    return out.release();
}

TensorObj* pool2d(px_op op, const TensorObj& x, const Window& win) {
    check_pool_op(op);
    check_float_inputs(op, {&x});
    const px_pool2d_attrs attrs = pool_attrs(win);
    const px_tensor_desc o = pooled(x, win);
    check_layout(op, {x.desc()}, {o}, &attrs);
    Owned out = make(x, o);
    px_tensor_desc in = x.desc(), od = out->desc();
    dispatch(x.device(), op, x.dtype, &in, 1, &od, 1, &attrs, numel(out->shape) > 0);
    return out.release();
}

TensorObj* pool2d_backward(px_op op, const TensorObj& x, const TensorObj& dy, const Window& win) {
    check_pool_op(op);
    const px_op bop = op == PX_OP_MAX_POOL2D ? PX_OP_MAX_POOL2D_BACKWARD : PX_OP_AVG_POOL2D_BACKWARD;
    check_float_inputs(bop, {&x, &dy});
    const px_pool2d_attrs attrs = pool_attrs(win);
    const bool is_max = op == PX_OP_MAX_POOL2D;
    // Average pooling's gradient reads no x: its shape comes from the output.
    if (is_max) check_layout(bop, {x.desc(), dy.desc()}, {planned_like(x)}, &attrs);
    else check_layout(bop, {dy.desc()}, {planned_like(x)}, &attrs);
    Owned out = make(x, planned_like(x));
    px_tensor_desc in[2] = {x.desc(), dy.desc()}, od = out->desc();
    dispatch(x.device(), bop, x.dtype, is_max ? in : in + 1, is_max ? 2 : 1, &od, 1, &attrs, numel(x.shape) > 0);
    return out.release();
}

TensorObj* bias_relu_max_pool2d(const TensorObj& x, const TensorObj& b, const Window& win) {
    const int32_t op = PX_OP_BIAS_RELU_MAX_POOL2D;
    check_float_inputs(op, {&x, &b});
    const px_pool2d_attrs attrs = pool_attrs(win);
    const px_tensor_desc o = pooled(x, win);
    check_layout(op, {x.desc(), b.desc()}, {o}, &attrs);
    Owned out = make(x, o);
    px_tensor_desc in[2] = {x.desc(), b.desc()}, od = out->desc();
    dispatch(x.device(), op, x.dtype, in, 2, &od, 1, &attrs, numel(out->shape) > 0);
    return out.release();
}

std::pair<TensorObj*, TensorObj*> bias_relu_max_pool2d_backward(const TensorObj& x, const TensorObj& b,
                                                                const TensorObj& dy, const Window& win) {
    const int32_t op = PX_OP_BIAS_RELU_MAX_POOL2D_BACKWARD;
    check_float_inputs(op, {&x, &b, &dy});
    const px_pool2d_attrs attrs = pool_attrs(win);
    check_layout(op, {x.desc(), b.desc(), dy.desc()}, {planned_like(x), planned_like(b)}, &attrs);
    Owned dx = make(x, planned_like(x));
    if (numel(x.shape) == 0) {  // an empty batch: no gradient reaches the bias
        Owned zeros(full(b.buffer->device, b.dtype, b.shape, 0.0));
        return {dx.release(), zeros.release()};
    }
    Owned db = make(b, planned_like(b));
    px_tensor_desc in[3] = {x.desc(), b.desc(), dy.desc()}, o[2] = {dx->desc(), db->desc()};
    dispatch(x.device(), op, x.dtype, in, 3, o, 2, &attrs, true);
    return {dx.release(), db.release()};
}

TensorObj* bias_add(const TensorObj& x, const TensorObj& b) {
    const int32_t op = PX_OP_BIAS_ADD;
    check_float_inputs(op, {&x, &b});
    check_layout(op, {x.desc(), b.desc()}, {planned_like(x)}, nullptr);
    Owned out = make(x, planned_like(x));
    px_tensor_desc in[2] = {x.desc(), b.desc()}, o = out->desc();
    dispatch(x.device(), op, x.dtype, in, 2, &o, 1, nullptr, numel(x.shape) > 0);
    return out.release();
}

TensorObj* bias_grad(const TensorObj& dy) {
    const int32_t op = PX_OP_BIAS_GRAD;
    check_float_inputs(op, {&dy});
    const px_tensor_desc o = planned(dy.dtype, {dy.shape.dims[1]});
    check_layout(op, {dy.desc()}, {o}, nullptr);
    if (numel(dy.shape) == 0) return full(dy.buffer->device, dy.dtype, make_shape(1, o.shape), 0.0);
    Owned out = make(dy, o);
    px_tensor_desc in = dy.desc(), od = out->desc();
    dispatch(dy.device(), op, dy.dtype, &in, 1, &od, 1, nullptr, true);
    return out.release();
}

// The row that computes `op`'s gradient from `operand` (PX_GRAD_FROM_*),
// or the refusal naming the ops whose gradient does (the op table's).
px_op backward_row(px_op op, int32_t operand) {
    int32_t from = 0;
    const int32_t backward = px_op_backward(op, &from);
    if (backward && from == operand) return px_op(backward);
    std::vector<std::string> ops;
#define PX_ROUTER_GRADIENT_FROM_(forward, backward_op, from_operand) \
    if ((from_operand) == operand) ops.emplace_back(#forward);
    PX_GRADIENT_TABLE(PX_ROUTER_GRADIENT_FROM_)
#undef PX_ROUTER_GRADIENT_FROM_
    std::string list;
    for (size_t i = 0; i < ops.size(); ++i) list += (i == 0 ? "" : i + 1 == ops.size() ? " or " : ", ") + ops[i];
    fail(PX_ERROR_INVALID_ARGUMENT, "op ", int(op), " (", name_of(op) ? name_of(op) : "unknown", ") is not ", list,
         operand == PX_GRAD_FROM_RESULT ? ", the ops whose gradient reads their result"
                                        : ", the ops whose gradient reads their input");
}

TensorObj* activation_backward(px_op op, const TensorObj& y, const TensorObj& dy) {
    return pointwise(backward_row(op, PX_GRAD_FROM_RESULT), {&y, &dy});
}

TensorObj* unary_alpha(px_op op, const TensorObj& x, double alpha) {
    if (!in_family(op, PX_FAMILY_UNARY_ALPHA))
        fail(PX_ERROR_INVALID_ARGUMENT, "op ", int(op), " (", name_of(op) ? name_of(op) : "unknown",
             ") is not an elementwise op with an alpha (PX_OP_LEAKY_RELU)");
    const px_alpha_attrs attrs{sizeof(px_alpha_attrs), alpha};
    return pointwise(op, {&x}, &attrs);
}

TensorObj* activation_input_backward(px_op op, const TensorObj& x, const TensorObj& dy, double alpha) {
    const px_op bop = backward_row(op, PX_GRAD_FROM_INPUT);
    const px_alpha_attrs attrs{sizeof(px_alpha_attrs), alpha};
    return pointwise(bop, {&x, &dy}, in_family(op, PX_FAMILY_UNARY_ALPHA) ? &attrs : nullptr);
}

TensorObj* take(const TensorObj& table, const TensorObj& indices) {
    const int32_t op = PX_OP_TAKE;
    check_same_device(op, {&table, &indices});
    check_accepts(op, table.dtype);
    std::vector<int64_t> dims(indices.shape.dims, indices.shape.dims + indices.shape.ndim);
    if (table.shape.ndim > 0) dims.insert(dims.end(), table.shape.dims + 1, table.shape.dims + table.shape.ndim);
    const px_tensor_desc o = planned(table.dtype, dims);
    check_layout(op, {table.desc(), indices.desc()}, {o}, nullptr);
    Owned out = make(table, o);
    px_tensor_desc in[2] = {table.desc(), indices.desc()}, od = out->desc();
    dispatch(table.device(), op, table.dtype, in, 2, &od, 1, nullptr, numel(out->shape) > 0);
    return out.release();
}

TensorObj* take_backward(const TensorObj& dy, const TensorObj& indices, int64_t rows) {
    const int32_t op = PX_OP_TAKE_BACKWARD;
    check_same_device(op, {&dy, &indices});
    check_accepts(op, dy.dtype);
    if (rows < 0) fail(PX_ERROR_INVALID_ARGUMENT, "take_backward: rows ", rows, " is negative");
    std::vector<int64_t> dims{rows};
    for (int32_t k = indices.shape.ndim; k < dy.shape.ndim; ++k) dims.push_back(dy.shape.dims[k]);
    const px_tensor_desc o = planned(dy.dtype, dims);
    check_layout(op, {dy.desc(), indices.desc()}, {o}, nullptr);
    Owned out = make(dy, o);
    px_tensor_desc in[2] = {dy.desc(), indices.desc()}, od = out->desc();
    dispatch(dy.device(), op, dy.dtype, in, 2, &od, 1, nullptr, numel(out->shape) > 0);
    return out.release();
}

TensorObj* log_softmax(const TensorObj& x) { return pointwise(PX_OP_LOG_SOFTMAX, {&x}); }

TensorObj* log_softmax_backward(const TensorObj& y, const TensorObj& dy) {
    return pointwise(PX_OP_LOG_SOFTMAX_BACKWARD, {&y, &dy});
}

TensorObj* softmax_cross_entropy(const TensorObj& logits, const TensorObj& labels) {
    const int32_t op = PX_OP_SOFTMAX_CROSS_ENTROPY;
    check_same_device(op, {&logits, &labels});
    check_accepts(op, logits.dtype);
    const px_tensor_desc o = planned(logits.dtype, {logits.shape.dims[0]});
    check_layout(op, {logits.desc(), labels.desc()}, {o}, nullptr);
    Owned out = make(logits, o);
    px_tensor_desc in[2] = {logits.desc(), labels.desc()}, od = out->desc();
    dispatch(logits.device(), op, logits.dtype, in, 2, &od, 1, nullptr, numel(logits.shape) > 0);
    return out.release();
}

TensorObj* softmax_cross_entropy_backward(const TensorObj& logits, const TensorObj& labels, const TensorObj& dloss) {
    const int32_t op = PX_OP_SOFTMAX_CROSS_ENTROPY_BACKWARD;
    check_same_device(op, {&logits, &labels, &dloss});
    check_accepts(op, logits.dtype);
    check_same_dtype(op, logits, dloss);
    check_layout(op, {logits.desc(), labels.desc(), dloss.desc()}, {planned_like(logits)}, nullptr);
    Owned out = make(logits, planned_like(logits));
    px_tensor_desc in[3] = {logits.desc(), labels.desc(), dloss.desc()}, o = out->desc();
    dispatch(logits.device(), op, logits.dtype, in, 3, &o, 1, nullptr, numel(logits.shape) > 0);
    return out.release();
}

TensorObj* dropout(px_op op, const TensorObj& x, double p, uint64_t& seed, uint64_t& offset, Runtime* rt) {
    if (op != PX_OP_DROPOUT && op != PX_OP_DROPOUT_BACKWARD)
        fail(PX_ERROR_INVALID_ARGUMENT, "op ", int(op), " is not PX_OP_DROPOUT or PX_OP_DROPOUT_BACKWARD");
    check_float_inputs(op, {&x});
    px_dropout_attrs attrs{sizeof(px_dropout_attrs), seed, offset, p};
    check_layout(op, {x.desc()}, {planned_like(x)}, &attrs);
    check_supported(x.device(), op, x.dtype);
    Owned out = make(x, planned_like(x));
    if (rt) {
        attrs.seed = seed = rt->seed.load();
        attrs.offset = offset = rt->take_random_offset(static_cast<uint64_t>(numel(x.shape)));
    }
    px_tensor_desc in = x.desc(), o = out->desc();
    dispatch(x.device(), op, x.dtype, &in, 1, &o, 1, &attrs, numel(x.shape) > 0);
    return out.release();
}

namespace {
// Refuses a setting that is not finite or lies below `lo` or above `hi`
// (at `hi` too when `open_hi`), saying which.
void check_setting(const char* op, const char* what, double v, double lo, double hi, bool open_hi = false) {
    const double huge = std::numeric_limits<double>::max();
    if (std::isfinite(v) && v >= lo && v <= hi && !(open_hi && v == hi)) return;
    if (lo == -huge) fail(PX_ERROR_INVALID_ARGUMENT, op, ": ", what, " ", v, " is not finite");
    if (hi == huge) fail(PX_ERROR_INVALID_ARGUMENT, op, ": ", what, " ", v, " must be finite and ", lo > 0 ? "> 0" : ">= 0");
    fail(PX_ERROR_INVALID_ARGUMENT, op, ": ", what, " ", v, " is not in [", lo, ", ", hi, open_hi ? ")" : "]");
}
// The optimizer state buffer must not be the parameter's memory.
void check_apart(const char* op, const TensorObj& param, const TensorObj* state, const char* what) {
    if (state && state->buffer == param.buffer)
        fail(PX_ERROR_INVALID_ARGUMENT, op, ": the ", what, " shares memory with the parameter");
}
}  // namespace

void sgd_update(TensorObj& param, const TensorObj& grad, TensorObj* momentum, const SgdSettings& s) {
    const int32_t op = s.nesterov ? PX_OP_NAG_UPDATE : PX_OP_SGD_UPDATE;
    const char* name = name_of(op);
    if (momentum) check_float_inputs(op, {&param, &grad, momentum});
    else check_float_inputs(op, {&param, &grad});
    check_apart(name, param, momentum, "momentum buffer");
    const double huge = std::numeric_limits<double>::max();
    check_setting(name, "learning rate", s.lr, 0, huge);
    check_setting(name, "momentum", s.momentum, 0, 1);
    check_setting(name, "weight decay", s.weight_decay, 0, huge);
    check_setting(name, "rescale", s.rescale, -huge, huge);
    px_sgd_attrs attrs;
    std::memset(&attrs, 0, sizeof attrs);  // padding too: the layout check reads attrs by the op's family
    attrs = px_sgd_attrs{sizeof(px_sgd_attrs), s.lr, s.momentum, s.weight_decay, s.rescale};
    px_tensor_desc in[3] = {param.desc(), grad.desc(), momentum ? momentum->desc() : px_tensor_desc{}};
    px_tensor_desc out[2] = {in[0], in[2]};
    const int n = momentum ? 2 : 1;
    if (momentum) check_layout(op, {in[0], in[1], in[2]}, {out[0], out[1]}, &attrs);
    else check_layout(op, {in[0], in[1]}, {out[0]}, &attrs);
    dispatch(param.device(), op, param.dtype, in, n + 1, out, n, &attrs, numel(param.shape) > 0);
    param.note_write();  // once queued (a refused step writes nothing)
    if (momentum) momentum->note_write();
}

void adam_update(TensorObj& param, const TensorObj& grad, TensorObj& state, const AdamSettings& s) {
    const int32_t op = PX_OP_ADAM_UPDATE;
    const char* name = name_of(op);
    check_float_inputs(op, {&param, &grad, &state});
    check_apart(name, param, &state, "state");
    const double huge = std::numeric_limits<double>::max();
    check_setting(name, "learning rate", s.lr, 0, huge);
    check_setting(name, "beta1", s.beta1, 0, 1, true);
    check_setting(name, "beta2", s.beta2, 0, 1, true);
    check_setting(name, "epsilon", s.eps, std::numeric_limits<double>::min(), huge);
    check_setting(name, "weight decay", s.weight_decay, 0, huge);
    check_setting(name, "rescale", s.rescale, -huge, huge);
    if (s.step < 1) fail(PX_ERROR_INVALID_ARGUMENT, name, ": step ", s.step, " must be >= 1 (the first update is 1)");
    // The figures of the settings alone, here once for every plugin (this
    // file is compiled without multiply-add fusion: the same bits everywhere).
    px_adam_attrs attrs;
    std::memset(&attrs, 0, sizeof attrs);
    attrs.struct_size = sizeof attrs;
    attrs.decoupled = s.decoupled ? 1 : 0;
    attrs.beta1 = s.beta1, attrs.beta2 = s.beta2, attrs.eps = s.eps;
    attrs.weight_decay = s.weight_decay, attrs.rescale = s.rescale;
    attrs.one_minus_beta1 = 1 - s.beta1, attrs.one_minus_beta2 = 1 - s.beta2;
    const double product = s.lr * s.weight_decay;
    attrs.decay = 1 - product;
    attrs.step_size = s.lr / (1 - std::pow(s.beta1, double(s.step)));
    attrs.root_correction2 = std::sqrt(1 - std::pow(s.beta2, double(s.step)));
    const px_tensor_desc in[3] = {param.desc(), grad.desc(), state.desc()}, out[2] = {in[0], in[2]};
    check_layout(op, in, 3, out, 2, &attrs);
    dispatch(param.device(), op, param.dtype, in, 3, out, 2, &attrs, numel(param.shape) > 0);
    param.note_write();
    state.note_write();
}

namespace {
px_batch_norm_attrs batch_norm_attrs(double eps) {
    px_batch_norm_attrs attrs;
    std::memset(&attrs, 0, sizeof attrs);  // padding too: the layout check reads attrs by the op's family
    attrs.struct_size = sizeof attrs;
    attrs.eps = eps;
    return attrs;
}
}  // namespace

std::pair<TensorObj*, TensorObj*> batch_norm_stats(const TensorObj& x) {
    const int32_t op = PX_OP_BATCH_NORM_STATS;
    check_float_inputs(op, {&x});
    const px_tensor_desc per_channel = planned(x.dtype, {x.shape.ndim > 1 ? x.shape.dims[1] : 0});
    check_layout(op, {x.desc()}, {per_channel, per_channel}, nullptr);
    Owned mean = make(x, per_channel), var = make(x, per_channel);
    px_tensor_desc in = x.desc(), o[2] = {mean->desc(), var->desc()};
    dispatch(x.device(), op, x.dtype, &in, 1, o, 2, nullptr, numel(mean->shape) > 0);
    return {mean.release(), var.release()};
}

TensorObj* batch_norm(const TensorObj& x, const TensorObj& mean, const TensorObj& var, const TensorObj& gamma,
                      const TensorObj& beta, double eps) {
    const int32_t op = PX_OP_BATCH_NORM;
    check_float_inputs(op, {&x, &mean, &var, &gamma, &beta});
    const px_batch_norm_attrs attrs = batch_norm_attrs(eps);
    px_tensor_desc in[5] = {x.desc(), mean.desc(), var.desc(), gamma.desc(), beta.desc()};
    const px_tensor_desc planned_out = planned_like(x);
    check_layout(op, in, 5, &planned_out, 1, &attrs);
    Owned out = make(x, planned_out);
    const px_tensor_desc o = out->desc();
    dispatch(x.device(), op, x.dtype, in, 5, &o, 1, &attrs, numel(x.shape) > 0);
    return out.release();
}

BatchNormGrads batch_norm_backward(const TensorObj& x, const TensorObj& dy, const TensorObj& mean,
                                   const TensorObj& var, const TensorObj& gamma, double eps, bool want_dx) {
    const int32_t reduce = PX_OP_BATCH_NORM_BACKWARD_REDUCE, op = PX_OP_BATCH_NORM_BACKWARD;
    check_float_inputs(reduce, {&x, &dy, &mean, &var, &gamma});
    const px_batch_norm_attrs attrs = batch_norm_attrs(eps);
    px_tensor_desc in[7] = {x.desc(), dy.desc(), mean.desc(), var.desc(), gamma.desc()};
    const px_tensor_desc per_channel = planned(x.dtype, {x.shape.ndim > 1 ? x.shape.dims[1] : 0});
    const px_tensor_desc sums[2] = {per_channel, per_channel};
    check_layout(reduce, in, 4, sums, 2, &attrs);
    in[5] = in[6] = per_channel;  // shapes only: the rule sees what the second op would be given (gamma's too)
    const px_tensor_desc planned_dx = planned_like(x);
    check_layout(op, in, 7, &planned_dx, 1, &attrs);
    const bool empty = numel(x.shape) == 0;
    Owned dgamma, dbeta;
    if (empty) {  // no value reaches gamma or beta
        dgamma.reset(full(x.buffer->device, x.dtype, make_shape(1, per_channel.shape), 0.0));
        dbeta.reset(full(x.buffer->device, x.dtype, make_shape(1, per_channel.shape), 0.0));
    } else {
        dgamma = make(x, sums[0]), dbeta = make(x, sums[1]);
        const px_tensor_desc o[2] = {dgamma->desc(), dbeta->desc()};
        dispatch(x.device(), reduce, x.dtype, in, 4, o, 2, &attrs, true);
    }
    Owned dx;
    if (want_dx) {
        dx = make(x, planned_like(x));
        in[5] = dgamma->desc(), in[6] = dbeta->desc();
        const px_tensor_desc o = dx->desc();
        dispatch(x.device(), op, x.dtype, in, 7, &o, 1, &attrs, !empty);
    }
    return {dx.release(), dgamma.release(), dbeta.release()};
}

}  // namespace px::router
