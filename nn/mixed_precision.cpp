// Mixed precision: the Autocast scope the layers read, and dynamic loss
// scaling over the trainer's finite-gradient step.
#include <cmath>

#include "plexus/nn.hpp"

namespace plexus::nn {

namespace {
// The dtype layers compute in on this thread.
DType& compute_dtype() {
    thread_local DType d = DType::float32;
    return d;
}
}  // namespace

Autocast::Autocast(DType dtype) : saved_(compute_dtype()) {
    if (dtype != DType::float32 && dtype != DType::float16 && dtype != DType::bfloat16)
        throw DTypeError(PX_ERROR_DTYPE, std::string("Autocast: layers compute in float32, float16 or bfloat16, not ") +
                                             name(dtype));
    compute_dtype() = dtype;
}

Autocast::~Autocast() { compute_dtype() = saved_; }

DType Autocast::dtype() { return compute_dtype(); }

Tensor autocast(const Tensor& x) {
    const DType d = compute_dtype();
    return d != DType::float32 && is_floating(x.dtype()) && x.dtype() != d ? x.astype(d) : x;
}

LossScaler::LossScaler(double init_scale, double growth_factor, double backoff_factor, int64_t growth_interval)
    : scale_(init_scale), growth_(growth_factor), backoff_(backoff_factor), interval_(growth_interval) {
    auto refuse = [](const std::string& what) {
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "LossScaler: " + what);
    };
    if (!(init_scale > 0 && std::isfinite(init_scale))) refuse("init_scale must be finite and > 0");
    if (!(growth_factor > 1 && std::isfinite(growth_factor))) refuse("growth_factor must be finite and > 1");
    if (!(backoff_factor > 0 && backoff_factor < 1)) refuse("backoff_factor must be in (0, 1)");
    if (growth_interval < 1) refuse("growth_interval must be >= 1, got " + std::to_string(growth_interval));
}

Tensor LossScaler::scale(const Tensor& loss) const {
    // Recorded wherever it is called, so scaler.scale(l).backward() works
    // after the record() scope that computed l has ended.
    autograd::Scope recorded(true, autograd::is_training());
    // In float32 at least, as PyTorch's GradScaler: the default scale, 65536,
    // is beyond float16 (a float16 loss times it was inf, and the step skipped).
    const bool half = loss.dtype() == DType::float16 || loss.dtype() == DType::bfloat16;
    return (half ? loss.astype(DType::float32) : loss) * scale_;
}

void LossScaler::set_state(const State& s) {
    if (!(s.scale > 0 && std::isfinite(s.scale)) || s.good < 0 || s.good >= interval_ || s.skipped < 0)
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT,
                                   "LossScaler::set_state: scale " + std::to_string(s.scale) + ", good steps " +
                                       std::to_string(s.good) + ", skipped " + std::to_string(s.skipped) +
                                       " is not a state (scale finite and > 0, counts >= 0, good below " +
                                       std::to_string(interval_) + ")");
    scale_ = s.scale, good_ = s.good, skipped_ = s.skipped;
}

bool LossScaler::step(Trainer& trainer, int64_t batch_size) {
    if (!trainer.step_if_finite(batch_size, scale_)) {
        // A scale so small that it underflows stays above the smallest
        // positive double: the loss it multiplies must stay finite and nonzero.
        scale_ = std::fmax(scale_ * backoff_, 0x1p-1000);
        good_ = 0;
        ++skipped_;
        return false;
    }
    if (++good_ == interval_) {
        const double grown = scale_ * growth_;
        if (std::isfinite(grown)) scale_ = grown;
        good_ = 0;
    }
    return true;
}

}  // namespace plexus::nn
