// The regression and binary losses, composed of differentiable ops; and
// clip_global_norm.
#include <cmath>

#include "plexus/nn.hpp"

namespace plexus::loss {

namespace {
// The mean of each sample's values: (N, ...) -> (N).
Tensor per_sample_mean(const Tensor& x) {
    if (x.ndim() == 0) throw ShapeError(PX_ERROR_SHAPE, "loss: the prediction needs a batch axis");
    return x.ndim() == 1 ? x : flatten(x).mean(1);
}
void check_same_shape(const char* loss, const Tensor& pred, const Tensor& label) {
    if (pred.shape() != label.shape())
        throw ShapeError(PX_ERROR_SHAPE, std::string(loss) + ": the label has shape " + str(label.shape()) +
                                             ", the prediction " + str(pred.shape()) + "; they must be the same");
}
}  // namespace

Tensor L2Loss::operator()(const Tensor& pred, const Tensor& label) const {
    check_same_shape("L2Loss", pred, label);
    const Tensor d = pred - label.astype(pred.dtype());
    return per_sample_mean(d * d * 0.5);
}

Tensor L1Loss::operator()(const Tensor& pred, const Tensor& label) const {
    check_same_shape("L1Loss", pred, label);
    return per_sample_mean((pred - label.astype(pred.dtype())).abs());
}

// Its gradient is its own rule, sigmoid(x) - y: composed, the kinks of relu
// and abs at x = 0 (whose derivatives the frontend takes as 0) gave -y there,
// where the loss is smooth and the gradient 0.5 - y (a zero-initialized
// output layer starts there).
Tensor SigmoidBinaryCrossEntropyLoss::operator()(const Tensor& pred, const Tensor& label) const {
    check_same_shape("SigmoidBinaryCrossEntropyLoss", pred, label);
    Tensor x = pred.detach(), y = label.astype(pred.dtype()).detach();  // not const: the lambda moves them
    Tensor elements = x.relu() - x * y + ((-x.abs()).exp() + 1.0).log();
    if (autograd::detail::wanted({&pred, &label})) {
        const bool label_grad = autograd::detail::needs_grad(&label);
        const DType label_dtype = label.dtype();
        autograd::detail::record(elements, {&pred, &label}, [x, y, label_grad, label_dtype](const Tensor& dy) {
            return std::vector<Tensor>{dy * (x.sigmoid() - y), label_grad ? (-(dy * x)).astype(label_dtype) : Tensor()};
        }, "SigmoidBinaryCrossEntropyLoss");
    }
    return per_sample_mean(elements);
}

}  // namespace plexus::loss

namespace plexus::nn {

double clip_global_norm(std::vector<Tensor>& grads, double max_norm) {
    if (!(max_norm > 0 && std::isfinite(max_norm)))
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "clip_global_norm: max_norm must be finite and > 0");
    if (grads.empty()) return 0;
    Tensor total;
    for (const Tensor& g : grads) {
        Tensor s = (g.astype(DType::float64) * g.astype(DType::float64)).sum();
        total = total.defined() ? total + s.as_in_context(total.device()) : s;
    }
    const double norm = std::sqrt(total.item<double>());
    if (!std::isfinite(norm) || norm <= max_norm) return norm;
    const double scale = max_norm / norm;
    for (Tensor& g : grads) g.assign(g * scale);
    return norm;
}

}  // namespace plexus::nn
