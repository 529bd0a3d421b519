// LayerNorm: each row along the last axis normalised, then scaled and shifted.
#include <cmath>

#include "plexus/nn.hpp"

namespace plexus::nn {

LayerNorm::LayerNorm(double epsilon, bool center, bool scale, int64_t in_channels)
    : epsilon_(epsilon), center_(center), scale_(scale) {
    if (!(epsilon > 0 && std::isfinite(epsilon)))
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "LayerNorm: epsilon must be finite and > 0");
    if (in_channels < 0)
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "LayerNorm: in_channels must be >= 0 (0: inferred)");
    gamma_ = std::make_shared<Parameter>("gamma", Shape{in_channels}, Initializer::One());
    beta_ = std::make_shared<Parameter>("beta", Shape{in_channels}, Initializer::Zero());
}

std::vector<Parameter*> LayerNorm::own_params() {
    std::vector<Parameter*> ps;
    if (scale_) ps.push_back(gamma_.get());
    if (center_) ps.push_back(beta_.get());
    return ps;
}

std::string LayerNorm::describe() const {
    const int64_t c = gamma_->shape()[0];
    return "LayerNorm(" + (c ? std::to_string(c) : std::string("?")) + ", eps " + std::to_string(epsilon_) + ")";
}

Tensor LayerNorm::forward(const Tensor& x) {
    if (x.ndim() < 1) throw ShapeError(PX_ERROR_SHAPE, "LayerNorm: a scalar has no axis to normalise");
    const int64_t d = x.shape().back();
    for (Parameter* p : own_params()) p->infer_shape({d});
    const Device dev = x.device();
    // gamma and beta in the dtype layer_norm computes in: float32 for a 16-bit x.
    const bool half = x.dtype() == DType::float16 || x.dtype() == DType::bfloat16;
    const DType dt = half ? DType::float32 : x.dtype();
    auto as_dt = [&](const Tensor& p) { return p.dtype() == dt ? p : p.astype(dt); };
    const Tensor gamma = scale_ ? as_dt(gamma_->data(dev)) : full({d}, 1.0, dev, dt);
    const Tensor beta = center_ ? as_dt(beta_->data(dev)) : full({d}, 0.0, dev, dt);
    return layer_norm(x, gamma, beta, epsilon_);
}

}  // namespace plexus::nn
