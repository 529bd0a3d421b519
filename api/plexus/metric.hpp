// plexus metrics (libplexus-nn), as Gluon's mx.metric: update(labels, preds)
// after each batch, get() the value over every sample since reset(). The
// hits are counted by ops on the predictions' device and summed there; only
// get() waits for them.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "plexus/plexus.hpp"

namespace plexus::metric {

class EvalMetric {
public:
    explicit EvalMetric(std::string name) : name_(std::move(name)) {}
    virtual ~EvalMetric() = default;
    // labels (N) of class numbers (any dtype holding whole numbers), preds
    // (N, C) of float scores, on one device.
    void update(const Tensor& labels, const Tensor& preds);
    // One pair per device, as split_and_load gives them.
    void update(const std::vector<Tensor>& labels, const std::vector<Tensor>& preds);
    // (name, hits / samples); NaN before any sample, as Gluon's.
    std::pair<std::string, double> get() const;
    void reset();
    int64_t num_samples() const { return samples_; }
    // The devices its running sums live on (get() waits for them).
    std::vector<Device> devices() const {
        std::vector<Device> out;
        for (const Tensor& t : sums_) out.push_back(t.device());
        return out;
    }

protected:
    // The hits of one batch: an int64 scalar on preds' device.
    virtual Tensor hits(const Tensor& labels, const Tensor& preds) const = 0;

private:
    std::string name_;
    std::vector<Tensor> sums_;  // one running int64 sum per device
    int64_t samples_ = 0;
};

// A hit when the highest score is the label's (the first highest, on ties,
// as argmax); preds of the labels' shape are taken as classes already.
class Accuracy : public EvalMetric {
public:
    Accuracy() : EvalMetric("accuracy") {}

protected:
    Tensor hits(const Tensor& labels, const Tensor& preds) const override;
};

// A hit when fewer than k scores are strictly greater than the label's:
// ties count in the label's favour (torch.topk would keep either). NaN is
// greater than every number, as in torch.topk and argmax (scores gone NaN
// are no hits). A label outside [0, C) is never a hit.
class TopKAccuracy : public EvalMetric {
public:
    explicit TopKAccuracy(int64_t k);
    int64_t k() const { return k_; }

protected:
    Tensor hits(const Tensor& labels, const Tensor& preds) const override;

private:
    int64_t k_;
};

}  // namespace plexus::metric
