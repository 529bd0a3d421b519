// Accuracy and top-k accuracy, counted by ops on the predictions' device.
#include "plexus/metric.hpp"

#include <limits>

namespace plexus::metric {
namespace {

// preds (N, C) of floats and labels (N), or a ShapeError/DTypeError naming `who`.
void check_scores(const char* who, const Tensor& labels, const Tensor& preds) {
    const Shape ls = labels.shape(), ps = preds.shape();
    if (ps.size() != 2 || ls.size() != 1 || ls[0] != ps[0])
        throw ShapeError(PX_ERROR_SHAPE, std::string(who) + ": wants labels (N) and preds (N, C), got " + str(ls) +
                                             " and " + str(ps));
    if (!is_floating(preds.dtype()))
        throw DTypeError(PX_ERROR_DTYPE, std::string(who) + ": the scores are " + name(preds.dtype()) + ", not floats");
}

}  // namespace

void EvalMetric::update(const Tensor& labels, const Tensor& preds) {
    // Labels (N, 1), a data set's column, beside scores (N, C) are labels (N), as MXNet's metrics take them.
    Tensor l = labels.detach();
    const Shape ls = l.shape(), ps = preds.shape();
    if (ls.size() == 2 && ls[1] == 1 && ps.size() == 2 && ps[0] == ls[0] && ps[1] != 1) l = l.reshape({ls[0]});
    Tensor h = hits(l, preds.detach());
    const Device d = h.device();
    for (Tensor& s : sums_)
        if (s.device() == d) {
            s = s + h;
            samples_ += labels.size();
            return;
        }
    sums_.push_back(h);
    samples_ += labels.size();
}

void EvalMetric::update(const std::vector<Tensor>& labels, const std::vector<Tensor>& preds) {
    if (labels.size() != preds.size())
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, name_ + ": " + std::to_string(labels.size()) +
                                                                  " labels for " + std::to_string(preds.size()) + " preds");
    for (size_t i = 0; i < labels.size(); ++i) update(labels[i], preds[i]);
}

std::pair<std::string, double> EvalMetric::get() const {
    if (samples_ == 0) return {name_, std::numeric_limits<double>::quiet_NaN()};
    int64_t total = 0;
    for (const Tensor& s : sums_) total += s.item<int64_t>();
    return {name_, double(total) / double(samples_)};
}

void EvalMetric::reset() {
    sums_.clear();
    samples_ = 0;
}

Tensor Accuracy::hits(const Tensor& labels, const Tensor& preds) const {
    if (preds.shape() == labels.shape()) {  // predicted classes: whole numbers as the labels, NaN no class
        const Tensor p = preds.astype(DType::float64);
        const Tensor l = class_indices(labels, DType::int64, "Accuracy").astype(DType::float64);
        return equal(p, l).astype(DType::int64).sum();
    }
    check_scores("Accuracy", labels, preds);
    // A row whose top score is NaN (NaN ranks first, as in argmax) is no hit: a model gone NaN scores nothing.
    const Tensor top = preds.max(1);
    const Tensor hit = equal(preds.argmax(1), class_indices(labels, DType::int64, "Accuracy").astype(DType::int64));
    return (hit * equal(top, top)).astype(DType::int64).sum();
}

TopKAccuracy::TopKAccuracy(int64_t k) : EvalMetric("top_k_accuracy_" + std::to_string(k)), k_(k) {
    if (k < 1) throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "TopKAccuracy: k must be >= 1, got " + std::to_string(k));
}

Tensor TopKAccuracy::hits(const Tensor& labels, const Tensor& preds) const {
    check_scores("TopKAccuracy", labels, preds);
    const Shape s = preds.shape();
    const Device d = preds.device();
    // The label's column, then its score (where, not a product: a -inf or
    // NaN elsewhere in the row must not reach it).
    const Tensor classes = arange(0, double(s[1]), 1, d, DType::float64).reshape({1, s[1]});
    const Tensor is_label =
        equal(classes, class_indices(labels, DType::int64, "TopKAccuracy").astype(DType::float64).reshape({s[0], 1}));
    const Tensor lowest = full(Shape{}, -std::numeric_limits<double>::infinity(), d, preds.dtype());
    const Tensor label_score = where(is_label, preds, lowest).max(1, true);
    // NaN ranks above every number (torch.topk's and argmax's order); a NaN
    // label score is no hit (a model gone NaN scores nothing).
    const Tensor scored = equal(label_score, label_score).reshape({s[0]});
    const Tensor nan_above = not_equal(preds, preds);
    const Tensor above = ((preds > label_score) + nan_above).sum(1);  // int64
    const Tensor valid = is_label.sum(1);               // 0 for a label outside [0, C)
    return ((above < double(k_)).astype(DType::int64) * valid * scored).sum();
}

}  // namespace plexus::metric
