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
// The label in pred's shape: as Gluon's, one of as many values in another
// shape is reshaped (d2l's (N,) labels for a (N, 1) prediction).
// The prediction a loss computes on: under autocast a 16-bit one in
// float32, which its squares, logarithms and sums need (300 squared is
// beyond float16), as PyTorch's autocast runs losses; the gradient goes back
// through the cast in the prediction's dtype.
Tensor loss_input(const Tensor& pred) {
    const bool widen = nn::Autocast::dtype() != DType::float32 &&
                       (pred.dtype() == DType::float16 || pred.dtype() == DType::bfloat16);
    return widen ? pred.astype(DType::float32) : pred;
}

Tensor label_like(const char* loss, const Tensor& pred, const Tensor& label) {
    if (pred.shape() == label.shape()) return label;
    if (pred.size() == label.size()) return label.reshape(pred.shape());
    throw ShapeError(PX_ERROR_SHAPE, std::string(loss) + ": the label has shape " + str(label.shape()) +
                                         ", the prediction " + str(pred.shape()) + "; they must have as many values");
}
void check_weight(const char* loss, double weight) {
    if (!std::isfinite(weight))
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, std::string(loss) + ": weight must be finite");
}
// The elementwise loss times weight and sample_weight, then each sample's mean.
Tensor weighted_mean(const char* loss, Tensor elements, double weight, const Tensor& sample_weight) {
    if (weight != 1) elements = elements * weight;
    if (sample_weight.defined()) {
        const Shape before = elements.shape();
        if (sample_weight.device() != elements.device())
            throw DeviceMismatchError(PX_ERROR_DEVICE_MISMATCH, std::string(loss) + ": sample_weight is on " +
                                                                    sample_weight.device().str() + ", the loss on " +
                                                                    elements.device().str());
        const Tensor& w = sample_weight;
        Tensor product;
        try {
            product = elements * (w.dtype() == elements.dtype() ? w : w.astype(elements.dtype()));
        } catch (const ShapeError&) {
            product = Tensor();
        }
        if (!product.defined() || product.shape() != before)
            throw ShapeError(PX_ERROR_SHAPE, std::string(loss) + ": sample_weight of shape " + str(sample_weight.shape()) +
                                                 " does not broadcast to the loss's shape " + str(before));
        elements = product;
    }
    return per_sample_mean(elements);
}
}  // namespace

SoftmaxCrossEntropyLoss::SoftmaxCrossEntropyLoss(int axis, bool sparse_label, bool from_logits, double weight)
    : axis_(axis), sparse_label_(sparse_label), from_logits_(from_logits), weight_(weight) {
    check_weight("SoftmaxCrossEntropyLoss", weight);
}

Tensor SoftmaxCrossEntropyLoss::operator()(const Tensor& pred, const Tensor& label, const Tensor& sample_weight) const {
    Tensor p = loss_input(pred);
    const Shape ps = p.shape();
    const int rank = int(ps.size());
    if (rank < 2)
        throw ShapeError(PX_ERROR_SHAPE, "SoftmaxCrossEntropyLoss: the prediction must be (batch, ..., classes), got " +
                                             str(ps));
    const int axis = axis_ < 0 ? axis_ + rank : axis_;
    if (axis < 0 || axis >= rank)
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "SoftmaxCrossEntropyLoss: axis " + std::to_string(axis_) +
                                                                  " is out of range for a prediction of rank " +
                                                                  std::to_string(rank));
    // The class axis last: (..., C), its leading axes `lead`.
    std::vector<int32_t> perm;
    for (int i = 0; i < rank; ++i)
        if (i != axis) perm.push_back(i);
    perm.push_back(axis);
    Shape lead;
    for (int i = 0; i + 1 < rank; ++i) lead.push_back(ps[size_t(perm[size_t(i)])]);
    const int64_t classes = ps[size_t(axis)];
    int64_t rows = 1;
    for (int64_t d : lead) rows *= d;
    if (axis != rank - 1) p = p.transpose(perm);
    Tensor per;  // (lead)
    if (sparse_label_) {
        Shape with_one = lead;
        with_one.push_back(1);
        if (label.shape() != lead && label.shape() != with_one)
            throw ShapeError(PX_ERROR_SHAPE, "SoftmaxCrossEntropyLoss: the labels have shape " + str(label.shape()) +
                                                 "; class indices for a prediction " + str(ps) + " (classes on axis " +
                                                 std::to_string(axis) + ") have shape " + str(lead));
        const Tensor l = class_indices(label, DType::int64, "SoftmaxCrossEntropyLoss").reshape({rows});
        const Tensor flat = p.reshape({rows, classes});
        per = (from_logits_ ? -pick(flat, l) : softmax_cross_entropy(flat, l)).reshape(lead);
    } else {
        if (label.shape() != ps)
            throw ShapeError(PX_ERROR_SHAPE, "SoftmaxCrossEntropyLoss: dense labels (sparse_label false) have the "
                                             "prediction's shape " + str(ps) + ", got " + str(label.shape()));
        Tensor y = label.dtype() == p.dtype() ? label : label.astype(p.dtype());
        if (axis != rank - 1) y = y.transpose(perm);
        const Tensor flat = p.reshape({rows, classes});
        per = -((from_logits_ ? flat : log_softmax(flat)) * y.reshape({rows, classes})).sum(1).reshape(lead);
    }
    if (rank == 2 && axis == 1 && weight_ == 1 && !sample_weight.defined()) return per;  // (N): each sample's one value
    return weighted_mean("SoftmaxCrossEntropyLoss", expand_dims(per, axis), weight_, sample_weight);
}

L2Loss::L2Loss(double weight) : weight_(weight) { check_weight("L2Loss", weight); }

Tensor L2Loss::operator()(const Tensor& given, const Tensor& label, const Tensor& sample_weight) const {
    const Tensor pred = loss_input(given), d = pred - label_like("L2Loss", pred, label).astype(pred.dtype());
    return weighted_mean("L2Loss", d * d * 0.5, weight_, sample_weight);
}

L1Loss::L1Loss(double weight) : weight_(weight) { check_weight("L1Loss", weight); }

Tensor L1Loss::operator()(const Tensor& given, const Tensor& label, const Tensor& sample_weight) const {
    const Tensor pred = loss_input(given);
    return weighted_mean("L1Loss", (pred - label_like("L1Loss", pred, label).astype(pred.dtype())).abs(), weight_,
                         sample_weight);
}

SigmoidBinaryCrossEntropyLoss::SigmoidBinaryCrossEntropyLoss(bool from_sigmoid, double weight)
    : from_sigmoid_(from_sigmoid), weight_(weight) {
    check_weight("SigmoidBinaryCrossEntropyLoss", weight);
}

// From logits its gradient is its own rule, sigmoid(x) - y: composed, the
// kinks of relu and abs at x = 0 (whose derivatives the frontend takes as 0)
// gave -y there, where the loss is smooth and the gradient 0.5 - y (a
// zero-initialized output layer starts there).
Tensor SigmoidBinaryCrossEntropyLoss::operator()(const Tensor& given, const Tensor& label,
                                                 const Tensor& sample_weight) const {
    const Tensor pred = loss_input(given);
    const Tensor& labels = label_like("SigmoidBinaryCrossEntropyLoss", pred, label);
    if (from_sigmoid_) {
        // Gluon's formula, in float32 at least: 1e-12 keeps both logarithms
        // finite at a probability of exactly 0 or 1 (a saturated sigmoid).
        const DType d = pred.dtype() == DType::float64 ? DType::float64 : DType::float32;
        const Tensor p = pred.astype(d), y = labels.astype(d);
        const Tensor elements = -((p + 1e-12).log() * y + (((-p) + 1.0) + 1e-12).log() * ((-y) + 1.0));
        return weighted_mean("SigmoidBinaryCrossEntropyLoss", elements, weight_, sample_weight);
    }
    Tensor x = pred.detach(), y = labels.astype(pred.dtype()).detach();  // not const: the lambda moves them
    Tensor elements = x.relu() - x * y + ((-x.abs()).exp() + 1.0).log();
    if (autograd::detail::wanted({&pred, &label})) {
        const bool label_grad = autograd::detail::needs_grad(&label);
        const DType label_dtype = label.dtype();
        autograd::detail::record(elements, {&pred, &label}, [x, y, label_grad, label_dtype](const Tensor& dy) {
            return std::vector<Tensor>{dy * (x.sigmoid() - y), label_grad ? (-(dy * x)).astype(label_dtype) : Tensor()};
        }, "SigmoidBinaryCrossEntropyLoss", {x, y});
    }
    return weighted_mean("SigmoidBinaryCrossEntropyLoss", elements, weight_, sample_weight);
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
