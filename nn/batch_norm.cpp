// BatchNorm: batch statistics while training (updating the running ones on
// the input's device), running statistics when predicting.
#include <cmath>

#include "plexus/nn.hpp"

namespace plexus::nn {

BatchNorm::BatchNorm(double momentum, double epsilon, int64_t in_channels)
    : momentum_(momentum), epsilon_(epsilon) {
    if (!(momentum >= 0 && momentum <= 1))
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT,
                                   "BatchNorm: momentum " + std::to_string(momentum) + " is not in [0, 1]");
    if (!(epsilon > 0 && std::isfinite(epsilon)))
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "BatchNorm: epsilon must be finite and > 0");
    if (in_channels < 0)
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "BatchNorm: in_channels must be >= 0 (0: inferred)");
    const Shape shape{in_channels};
    gamma_ = std::make_shared<Parameter>("gamma", shape, Initializer::One());
    beta_ = std::make_shared<Parameter>("beta", shape, Initializer::Zero());
    running_mean_ = std::make_shared<Parameter>("running_mean", shape, Initializer::Zero(), GradReq::null, false);
    running_var_ = std::make_shared<Parameter>("running_var", shape, Initializer::One(), GradReq::null, false);
}

std::vector<Parameter*> BatchNorm::own_params() {
    return {gamma_.get(), beta_.get(), running_mean_.get(), running_var_.get()};
}

std::string BatchNorm::describe() const {
    const int64_t c = gamma_->shape()[0];
    return "BatchNorm(" + (c ? std::to_string(c) : std::string("?")) + " channels, momentum " +
           std::to_string(momentum_) + ", eps " + std::to_string(epsilon_) + ")";
}

Tensor BatchNorm::forward(const Tensor& x) {
    if (x.ndim() < 2)
        throw ShapeError(PX_ERROR_SHAPE, "BatchNorm: the input must be (batch, channels, ...), got rank " +
                                             std::to_string(x.ndim()));
    const int64_t channels = x.shape()[1];
    for (Parameter* p : own_params()) p->infer_shape({channels});
    const Device d = x.device();
    // A 16-bit input (under Autocast) is normalised in float32 and the result
    // cast back: its per-channel sums (over N*H*W values, of a scaled loss's
    // gradient) overflow float16, and its statistics lose digits.
    if (x.dtype() == DType::float16 || x.dtype() == DType::bfloat16) return forward(x.astype(DType::float32)).astype(x.dtype());
    auto as_x = [&](const Tensor& p) { return p.dtype() == x.dtype() ? p : p.astype(x.dtype()); };
    Tensor gamma = as_x(gamma_->data(d)), beta = as_x(beta_->data(d));
    if (!autograd::is_training())
        return batch_norm(x, as_x(running_mean_->data(d)), as_x(running_var_->data(d)), gamma, beta, epsilon_);
    const int64_t per_channel = channels ? x.size() / channels : 0;
    if (per_channel < 2)
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT,
                                   "BatchNorm: training needs more than one value per channel (the batch's variance), "
                                   "got input shape " + plexus::str(x.shape()) +
                                       "; predict in predict mode (autograd::predict_mode(), Python's "
                                       "autograd.predict_mode())");
    BatchNormResult r = batch_norm_by_batch(x, gamma, beta, epsilon_);
    const Tensor mean = running_mean_->data(d), var = running_var_->data(d);
    const double unbiased = double(per_channel) / double(per_channel - 1);
    // Both made before either is stored: a failure leaves both as they were.
    Tensor new_mean = mean * momentum_ + r.mean.astype(mean.dtype()) * (1 - momentum_);
    Tensor new_var = var * momentum_ + r.var.astype(var.dtype()) * (unbiased * (1 - momentum_));
    running_mean_->set_replica(new_mean);
    running_var_->set_replica(new_var);
    return r.y;
}

}  // namespace plexus::nn
