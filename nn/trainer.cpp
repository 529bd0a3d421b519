// Trainer: SGD over every replica of every parameter, one op per replica.
#include <cmath>

#include "plexus/nn.hpp"

namespace plexus::nn {

Trainer::Trainer(const ParameterDict& params, const std::string& optimizer, const std::map<std::string, double>& options) {
    if (optimizer != "sgd")
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "Trainer: unknown optimizer '" + optimizer + "' (\"sgd\" is available)");
    for (auto& [key, value] : options) {
        if (key == "learning_rate") lr_ = value;
        else if (key == "momentum") momentum_ = value;
        else if (key == "wd") wd_ = value;
        else
            throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT,
                                       "Trainer: unknown sgd option '" + key + "' (learning_rate, momentum, wd)");
    }
    set_learning_rate(lr_);
    if (!(momentum_ >= 0 && momentum_ <= 1))
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "Trainer: momentum must be in [0, 1]");
    if (!(wd_ >= 0 && std::isfinite(wd_)))
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "Trainer: wd must be finite and >= 0");
    for (auto& [name, p] : params) {
        if (p->grad_req() == GradReq::null) continue;
        params_.push_back(p);
        names_.push_back(name);
    }
}

void Trainer::set_learning_rate(double lr) {
    if (!(lr >= 0 && std::isfinite(lr)))
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "Trainer: learning_rate must be finite and >= 0");
    lr_ = lr;
}

namespace {
void check_batch_size(int64_t batch_size, const char* call) {
    if (batch_size < 1)
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, std::string(call) + ": batch_size must be >= 1, got " +
                                                                  std::to_string(batch_size));
}
}  // namespace

void Trainer::step(int64_t batch_size) {
    check_batch_size(batch_size, "Trainer::step");
    update(summed_gradients(), 1.0 / double(batch_size));
}

bool Trainer::step_if_finite(int64_t batch_size, double loss_scale) {
    check_batch_size(batch_size, "Trainer::step_if_finite");
    if (!(loss_scale > 0 && std::isfinite(loss_scale)))
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "Trainer::step_if_finite: loss_scale must be finite and > 0");
    std::vector<std::vector<Tensor>> grads = summed_gradients();
    // g * 0 is 0 for every finite g and NaN for an infinity or a NaN, and so
    // is its sum: one sum per gradient, added up on the first one's device
    // and read once. The summed gradients are the same on every replica (and
    // rank), so every one decides alike.
    Tensor total;
    for (auto& g : grads) {
        Tensor s = (g[0] * 0.0).sum().astype(DType::float64);
        total = total.defined() ? total + s.as_in_context(total.device()) : s;
    }
    if (total.defined() && !std::isfinite(total.item<double>())) return false;
    update(grads, 1.0 / (double(batch_size) * loss_scale));
    return true;
}

std::vector<std::vector<Tensor>> Trainer::summed_gradients() {
    // Every replica's gradient becomes the sum over the replicas.
    std::vector<std::vector<Tensor>> grads;
    for (Parameter* p : params_) {
        if (p->list_data().empty())
            throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "Trainer::step: parameter " + p->name() +
                                                                      " is not initialized (run a forward pass first)");
        grads.push_back(p->list_grad());
        if (grads.back().size() > 1) all_reduce_sum(grads.back());
    }
    if (hook_) {
        std::vector<Tensor> first;
        first.reserve(grads.size());
        for (auto& g : grads) first.push_back(g[0]);
        hook_(first);
        if (first.size() != grads.size())
            throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "Trainer: the gradient hook changed the number of gradients");
        for (size_t k = 0; k < grads.size(); ++k) {
            if (first[k].shape() != grads[k][0].shape())
                throw ShapeError(PX_ERROR_SHAPE, "Trainer: the gradient hook changed the shape of " + names_[k] +
                                                     "'s gradient");
            for (size_t i = 0; i < grads[k].size(); ++i) grads[k][i] = first[k].as_in_context(grads[k][i].device());
        }
    }
    return grads;
}

void Trainer::update(const std::vector<std::vector<Tensor>>& grads, double rescale) {
    for (size_t k = 0; k < params_.size(); ++k) {
        Parameter* p = params_[k];
        std::vector<Tensor> replicas = p->list_data();
        auto& buffers = momentum_buffers_[p];
        if (momentum_ > 0 && buffers.size() != replicas.size()) {
            buffers.clear();
            for (auto& r : replicas) buffers.push_back(zeros(r.shape(), r.device(), r.dtype()));
        }
        for (size_t i = 0; i < replicas.size(); ++i)
            check(px_sgd_update(replicas[i].handle(), grads[k][i].handle(), momentum_ > 0 ? buffers[i].handle() : nullptr,
                                lr_, momentum_, wd_, rescale));
    }
}

}  // namespace plexus::nn
