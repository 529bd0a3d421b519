// The one routing point. Every op passes here: inputs must share a device,
// dtypes must fit the op, shapes must broadcast and fit in 64 bits; then the
// output is allocated on that device and the device's plugin is called.
// Each function returns a new tensor owned by the caller (one reference).
#pragma once

#include <utility>
#include <vector>

#include "objects.hpp"

namespace px::router {

TensorObj* from_host(const std::shared_ptr<DeviceImpl>& dev, px_dtype dtype, const Shape& shape,
                     const void* data, uint64_t bytes);
void to_host(const TensorObj& t, void* dst, uint64_t bytes);
TensorObj* copy_to(const TensorObj& t, const std::shared_ptr<DeviceImpl>& dev);
// Overwrites `dst` with `src` (same shape and dtype; the caller checks), on any two devices.
void copy_into(const TensorObj& src, TensorObj& dst);
// The refusal of values of another dtype than the tensor written (assign).
void check_values_dtype(const TensorObj& src, const TensorObj& dst);
// Writes `src`, broadcast, into the elements of `dst` that start, step and
// count name along each of its axes (px_tensor_assign_region), in place.
void assign_region(TensorObj& dst, const int64_t* start, const int64_t* step, const int64_t* count, const TensorObj& src);

TensorObj* full(const std::shared_ptr<DeviceImpl>& dev, px_dtype dtype, const Shape& shape, double value);
TensorObj* arange(const std::shared_ptr<DeviceImpl>& dev, px_dtype dtype, double start, double stop, double step);
TensorObj* random(Runtime& rt, px_op op, const std::shared_ptr<DeviceImpl>& dev, px_dtype dtype,
                  const Shape& shape, double a, double b);

TensorObj* binary(px_op op, const TensorObj& a, const TensorObj& b);
TensorObj* binary_scalar(px_op op, const TensorObj& a, double scalar, bool scalar_first);
TensorObj* unary(px_op op, const TensorObj& a);
TensorObj* where(const TensorObj& cond, const TensorObj& a, const TensorObj& b);
TensorObj* reduce(px_op op, const TensorObj& a, bool all_axes, int32_t axis, bool keepdims);
TensorObj* matmul(const TensorObj& a, const TensorObj& b);
TensorObj* transpose(const TensorObj& a, const int32_t* perm, int32_t nperm);
TensorObj* slice_axis(const TensorObj& a, int32_t axis, int64_t start, int64_t stop, int64_t step);
TensorObj* concat(const std::vector<const TensorObj*>& parts, int32_t axis);
TensorObj* cast(const TensorObj& a, px_dtype dtype);

// Sums tensors of one shape and dtype, one per device, into every one of them
// (router_collective.cpp).
void all_reduce_sum(const std::vector<TensorObj*>& tensors);
// Sums each tensor on the group's device with its peers in the other
// processes of the group, in place (router_collective.cpp).
void group_all_reduce_sum(const GroupObj& group, const std::vector<TensorObj*>& tensors);

// ---- neural-network ops (router_nn.cpp) ----

// A sliding window: conv2d takes its kernel size from the weight.
struct Window {
    int32_t kernel_h = 0, kernel_w = 0, stride_h = 1, stride_w = 1, pad_h = 0, pad_w = 0;
};
struct SgdSettings {
    double lr = 0, momentum = 0, weight_decay = 0, rescale = 1;
    bool nesterov = false;  // NAG_UPDATE: the C API requires the momentum buffer
};
struct AdamSettings {
    double lr = 0.001, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0, rescale = 1;
    int64_t step = 1;        // the update's number, from 1: the bias corrections' exponent
    bool decoupled = false;  // AdamW
};

TensorObj* gemm(const TensorObj& a, const TensorObj& b, bool trans_a, bool trans_b);
TensorObj* conv2d(const TensorObj& x, const TensorObj& w, const Window& win);
TensorObj* conv2d_backward_input(const TensorObj& dy, const TensorObj& w, int64_t in_h, int64_t in_w,
                                 const Window& win);
TensorObj* conv2d_backward_weight(const TensorObj& dy, const TensorObj& x, int64_t kernel_h, int64_t kernel_w,
                                  const Window& win);
TensorObj* pool2d(px_op op, const TensorObj& x, const Window& win);
TensorObj* pool2d_backward(px_op op, const TensorObj& x, const TensorObj& dy, const Window& win);
// relu(max_pool2d(x) + b) in one op, and its gradients (dx, db), for plugins
// that offer PX_OP_BIAS_RELU_MAX_POOL2D.
TensorObj* bias_relu_max_pool2d(const TensorObj& x, const TensorObj& b, const Window& win);
std::pair<TensorObj*, TensorObj*> bias_relu_max_pool2d_backward(const TensorObj& x, const TensorObj& b,
                                                                const TensorObj& dy, const Window& win);
TensorObj* bias_add(const TensorObj& x, const TensorObj& b);
TensorObj* bias_grad(const TensorObj& dy);
TensorObj* activation_backward(px_op op, const TensorObj& y, const TensorObj& dy);
// leaky_relu (the PX_FAMILY_UNARY_ALPHA ops), and the gradients of gelu,
// silu and leaky_relu from their input x.
TensorObj* unary_alpha(px_op op, const TensorObj& x, double alpha);
TensorObj* activation_input_backward(px_op op, const TensorObj& x, const TensorObj& dy, double alpha);
// Rows of `table` by `indices`, and the gradient that adds them back into
// a table of `rows` rows.
TensorObj* take(const TensorObj& table, const TensorObj& indices);
TensorObj* take_backward(const TensorObj& dy, const TensorObj& indices, int64_t rows);
TensorObj* log_softmax(const TensorObj& x);
TensorObj* log_softmax_backward(const TensorObj& y, const TensorObj& dy);
TensorObj* softmax_cross_entropy(const TensorObj& logits, const TensorObj& labels);
TensorObj* softmax_cross_entropy_backward(const TensorObj& logits, const TensorObj& labels, const TensorObj& dloss);
// The mask comes from (seed, offset): the backward op is given them; the
// forward op, given `rt`, takes them from rt's random stream once the call
// is checked (a refused call leaves the stream as it was) and returns them.
TensorObj* dropout(px_op op, const TensorObj& x, double p, uint64_t& seed, uint64_t& offset, Runtime* rt = nullptr);
void sgd_update(TensorObj& param, const TensorObj& grad, TensorObj* momentum, const SgdSettings& s);
// Adam's step in place; state is (2, n): m and v of param's n values.
void adam_update(TensorObj& param, const TensorObj& grad, TensorObj& state, const AdamSettings& s);
// Batch normalisation over every axis but 1 (ABI 1.7): each channel's mean
// and biased variance; the normalised x; the gradients by x's own
// statistics, dx left out (null) unless `want_dx`.
std::pair<TensorObj*, TensorObj*> batch_norm_stats(const TensorObj& x);
TensorObj* batch_norm(const TensorObj& x, const TensorObj& mean, const TensorObj& var, const TensorObj& gamma,
                      const TensorObj& beta, double eps);
struct BatchNormGrads {
    TensorObj *dx = nullptr, *dgamma = nullptr, *dbeta = nullptr;
};
BatchNormGrads batch_norm_backward(const TensorObj& x, const TensorObj& dy, const TensorObj& mean,
                                   const TensorObj& var, const TensorObj& gamma, double eps, bool want_dx);

}  // namespace px::router
