// Trainer: SGD, NAG, Adam and AdamW over every replica of every parameter, one
// fused op per replica; AdaGrad, RMSProp and AdaDelta composed of elementwise ops.
#include <cctype>
#include <cmath>

#include "plexus/nn.hpp"

namespace plexus::nn {

namespace {
struct Optimizer {
    const char* name;
    std::vector<const char*> options;
};
const Optimizer optimizers[] = {{"sgd", {"learning_rate", "momentum", "wd"}},
                                {"nag", {"learning_rate", "momentum", "wd"}},
                                {"adam", {"learning_rate", "beta1", "beta2", "epsilon", "wd"}},
                                {"adamw", {"learning_rate", "beta1", "beta2", "epsilon", "wd"}},
                                {"adagrad", {"learning_rate", "epsilon", "wd"}},
                                {"rmsprop", {"learning_rate", "gamma1", "epsilon", "wd"}},
                                {"adadelta", {"learning_rate", "rho", "epsilon", "wd"}}};

std::string optimizer_names() {
    std::string s;
    for (const Optimizer& o : optimizers) s += (s.empty() ? "" : ", ") + std::string(o.name);
    return s;
}

// One AdaGrad, RMSProp or AdaDelta step of parameter w by gradient g (MXNet's
// formulas, as d2l's chapter 12 writes them from scratch), each op rounded on
// its own, so that every plugin gives the same bits; 16-bit floats computed
// in float32. `state` is the sum of squares (AdaGrad, RMSProp's running
// mean) or AdaDelta's (2, n) accumulators of squared gradients and steps.
void composed_update(const std::string& optimizer, Tensor param, const Tensor& grad, Tensor state,
                     double lr, double wd, double rescale, double eps, double gamma1, double rho) {
    auto paused = autograd::pause();  // an update is no part of a graph, as the fused ones are not
    const DType d = param.dtype();
    const bool wide = d == DType::float16 || d == DType::bfloat16;
    const auto compute = [&](const Tensor& t) { return wide ? t.astype(DType::float32) : t.detach(); };
    const auto back = [&](const Tensor& t) { return wide ? t.astype(d) : t; };
    const Tensor w = compute(param), g = compute(grad) * rescale;
    if (optimizer == "adagrad") {  // h += g^2; w -= lr (g / sqrt(h + eps) + wd w)
        const Tensor h = compute(state) + g * g;
        state.assign(back(h));
        param.assign(back(w - (g / (h + eps).sqrt() + w * wd) * lr));
    } else if (optimizer == "rmsprop") {  // n = gamma1 n + (1 - gamma1) g^2; w -= lr g / sqrt(n + eps), g with wd w
        const Tensor gw = g + w * wd;
        const Tensor n = compute(state) * gamma1 + gw * gw * (1 - gamma1);
        state.assign(back(n));
        param.assign(back(w - gw * lr / (n + eps).sqrt()));
    } else {  // adadelta: s = rho s + (1 - rho) g^2; step = sqrt(dx + eps) / sqrt(s + eps) g; dx = rho dx + (1 - rho) step^2
        const Tensor gw = g + w * wd;
        const Shape row = param.shape();
        Tensor s_row = state.slice(0, 1), dx_row = state.slice(1, 2);
        const Tensor s = compute(s_row).reshape(row) * rho + gw * gw * (1 - rho);
        const Tensor step = (compute(dx_row).reshape(row) + eps).sqrt() / (s + eps).sqrt() * gw;
        const Tensor dx = compute(dx_row).reshape(row) * rho + step * step * (1 - rho);
        s_row.assign(back(s).reshape({1, param.size()}));
        dx_row.assign(back(dx).reshape({1, param.size()}));
        param.assign(back(w - step * lr));
    }
}

std::string joined(const std::vector<const char*>& names) {
    std::string s;
    for (const char* n : names) s += (s.empty() ? "" : ", ") + std::string(n);
    return s;
}

void check_option(bool ok, const std::string& what) {
    if (!ok) throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "Trainer: " + what);
}
}  // namespace

namespace {
// Optimizer names in any case, as MXNet's registry takes them ("SGD", "Adam").
std::string lowercase(std::string s) {
    for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
    return s;
}
}  // namespace

Trainer::Trainer(const ParameterDict& params, const std::string& optimizer_name,
                 const std::map<std::string, double>& options)
    : optimizer_(lowercase(optimizer_name)) {
    const std::string& optimizer = optimizer_;
    const Optimizer* chosen = nullptr;
    for (const Optimizer& o : optimizers)
        if (optimizer == o.name) chosen = &o;
    check_option(chosen != nullptr, "unknown optimizer '" + optimizer_name + "' (" + optimizer_names() + ")");
    const bool adam = optimizer == "adam" || optimizer == "adamw";
    if (adam) lr_ = 0.001;
    // MXNet's defaults: AdaGrad's eps 1e-7, AdaDelta's 1e-5 and its rate 1 (each step is the update itself).
    if (optimizer == "adagrad") eps_ = 1e-7;
    if (optimizer == "adadelta") eps_ = 1e-5, lr_ = 1.0;
    for (auto& [key, value] : options) {
        bool known = false;
        for (const char* o : chosen->options) known = known || key == o;
        check_option(known, "unknown " + optimizer + " option '" + key + "' (" + joined(chosen->options) + ")");
        if (key == "learning_rate") lr_ = value;
        else if (key == "momentum") momentum_ = value;
        else if (key == "wd") wd_ = value;
        else if (key == "beta1") beta1_ = value;
        else if (key == "beta2") beta2_ = value;
        else if (key == "epsilon") eps_ = value;
        else if (key == "gamma1") gamma1_ = value;
        else if (key == "rho") rho_ = value;
    }
    set_learning_rate(lr_);
    check_option(momentum_ >= 0 && momentum_ <= 1, "momentum must be in [0, 1]");
    check_option(optimizer != "nag" || momentum_ > 0, "nag needs a momentum above 0 (without one it is sgd)");
    check_option(wd_ >= 0 && std::isfinite(wd_), "wd must be finite and >= 0");
    check_option(beta1_ >= 0 && beta1_ < 1 && beta2_ >= 0 && beta2_ < 1, "beta1 and beta2 must be in [0, 1)");
    check_option(eps_ > 0 && std::isfinite(eps_), "epsilon must be finite and > 0");
    check_option(gamma1_ >= 0 && gamma1_ < 1 && rho_ >= 0 && rho_ < 1, "gamma1 and rho must be in [0, 1)");
    for (auto& [name, p] : params) {
        if (!p->differentiable()) continue;  // frozen ones (grad_req null) are held and skipped at each step
        params_.push_back(p);
        if (std::shared_ptr<Parameter> owned = p->weak_from_this().lock()) held_.push_back(std::move(owned));
        names_.push_back(name);
    }
    states_.resize(params_.size());
    counts_.resize(params_.size(), 0);
}

void Trainer::set_learning_rate(double lr) {
    if (scheduler_)
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT,
                                   "Trainer::set_learning_rate: a learning-rate schedule sets the rate of every update; "
                                   "set_lr_scheduler(nullptr) first (None in Python), as Gluon refuses it too");
    use_rate(lr);
}

void Trainer::use_rate(double lr) {
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

std::vector<bool> Trainer::fresh_gradients(bool ignore_stale_grad, const char* call) const {
    for (Parameter* p : params_)
        if (p->list_data().empty())
            throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, std::string(call) + ": parameter " + p->name() +
                                                                      " is not initialized (run a forward pass first)");
    std::vector<bool> fresh;
    fresh.reserve(params_.size());
    for (size_t k = 0; k < params_.size(); ++k) {
        if (!trained(k)) {
            fresh.push_back(false);
            continue;
        }
        bool all = true;
        for (const Tensor& r : params_[k]->list_data()) {
            const auto& meta = r.autograd_meta();
            if (meta && meta->fresh) continue;
            all = false;
            if (!ignore_stale_grad)
                throw InvalidArgumentError(
                    PX_ERROR_INVALID_ARGUMENT,
                    std::string(call) + ": the gradient of parameter " + names_[k] + " on " + r.device().str() +
                        " was not written by backward() since the last step: the forward pass did not use it "
                        "(on that device: a batch split into fewer parts than devices), or backward() did not run. "
                        "Nothing was updated; to update the other parameters alone, pass "
                        "ignore_stale_grad (true; True in Python)");
        }
        fresh.push_back(all);
    }
    return fresh;
}

void Trainer::use_gradients() {
    for (Parameter* p : params_)
        for (const Tensor& r : p->list_data())
            if (const auto& meta = r.autograd_meta()) meta->fresh = false;
}

void Trainer::prepare(const std::vector<bool>& fresh) {
    // Before the gradients are summed over the replicas (in place): a
    // schedule that throws, or a state that does not fit in memory, leaves
    // them as backward() wrote them, for a retry.
    if (scheduler_) use_rate((*scheduler_)(updates_ + 1));  // numbered from 1, as Gluon's
    for (size_t k = 0; k < params_.size(); ++k)
        if (fresh[k]) state_of(k, 0);
}

std::vector<Device> Trainer::devices() const {
    std::vector<Device> out;
    for (const Parameter* p : params_)
        for (const Tensor& r : p->list_data()) out.push_back(r.device());
    return out;
}

bool Trainer::trained(size_t k) const { return params_[k]->grad_req() != GradReq::null; }

void Trainer::step(int64_t batch_size, bool ignore_stale_grad) {
    check_batch_size(batch_size, "Trainer::step");
    const std::vector<bool> fresh = fresh_gradients(ignore_stale_grad, "Trainer::step");
    prepare(fresh);
    update(summed_gradients(), 1.0 / double(batch_size), fresh);
}

bool Trainer::step_if_finite(int64_t batch_size, double loss_scale, bool ignore_stale_grad) {
    check_batch_size(batch_size, "Trainer::step_if_finite");
    if (!(loss_scale > 0 && std::isfinite(loss_scale)))
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "Trainer::step_if_finite: loss_scale must be finite and > 0");
    const std::vector<bool> fresh = fresh_gradients(ignore_stale_grad, "Trainer::step_if_finite");
    prepare(fresh);
    std::vector<std::vector<Tensor>> grads = summed_gradients();
    // g * 0 is 0 for every finite g and NaN for an infinity or a NaN, and so
    // is its sum: one sum per gradient, added up on the first one's device
    // and read once. The summed gradients are the same on every replica (and
    // rank), so every one decides alike.
    Tensor total;
    for (auto& g : grads) {
        if (g.empty()) continue;  // frozen
        Tensor s = (g[0] * 0.0).sum().astype(DType::float64);
        total = total.defined() ? total + s.as_in_context(total.device()) : s;
    }
    if (total.defined() && !std::isfinite(total.item<double>())) {
        use_gradients();
        return false;
    }
    update(grads, 1.0 / (double(batch_size) * loss_scale), fresh);
    return true;
}

std::vector<std::vector<Tensor>> Trainer::summed_gradients() {
    // Every replica's gradient becomes the sum over the replicas; a frozen
    // parameter has none (an empty list).
    std::vector<std::vector<Tensor>> grads(params_.size());
    std::vector<size_t> used;  // the parameters trained in this step, in order
    for (size_t k = 0; k < params_.size(); ++k) {
        if (!trained(k)) continue;
        used.push_back(k);
        grads[k] = params_[k]->list_grad();
        if (grads[k].size() > 1) all_reduce_sum(grads[k]);
    }
    if (hook_) {
        std::vector<Tensor> first;
        first.reserve(used.size());
        for (size_t k : used) first.push_back(grads[k][0]);
        hook_(first);
        if (first.size() != used.size())
            throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "Trainer: the gradient hook changed the number of gradients");
        for (size_t j = 0; j < used.size(); ++j) {
            const size_t k = used[j];
            if (first[j].shape() != grads[k][0].shape())
                throw ShapeError(PX_ERROR_SHAPE, "Trainer: the gradient hook changed the shape of " + names_[k] +
                                                     "'s gradient");
            for (size_t i = 0; i < grads[k].size(); ++i) grads[k][i] = first[j].as_in_context(grads[k][i].device());
        }
    }
    return grads;
}

bool Trainer::two_row_state() const {
    return optimizer_ == "adam" || optimizer_ == "adamw" || optimizer_ == "adadelta";
}
bool Trainer::keeps_state() const {
    return two_row_state() || optimizer_ == "adagrad" || optimizer_ == "rmsprop" || momentum_ > 0;
}

Tensor Trainer::state_of(size_t k, size_t i) {
    const std::vector<Tensor> replicas = params_[k]->list_data();
    std::vector<Tensor>& states = states_[k];
    if (!keeps_state()) return Tensor();
    bool placed = states.size() == replicas.size();
    for (size_t j = 0; placed && j < states.size(); ++j) placed = states[j].device() == replicas[j].device();
    if (!placed) {  // the first step, or the parameter was moved (reset_ctx): the state goes with it
        std::vector<Tensor> made;
        made.reserve(replicas.size());
        for (const Tensor& r : replicas)
            made.push_back(!states.empty() ? states[0].copyto(r.device())
                           : two_row_state() ? zeros({2, r.size()}, r.device(), r.dtype())
                                           : zeros(r.shape(), r.device(), r.dtype()));
        states.swap(made);
    }
    return states[i];
}

void Trainer::update(const std::vector<std::vector<Tensor>>& grads, double rescale, const std::vector<bool>& fresh) {
    const bool adam = optimizer_ == "adam" || optimizer_ == "adamw";
    // Every state was made by prepare(): no replica changes before all can. A
    // parameter frozen so far has none yet.
    for (size_t k = 0; k < params_.size(); ++k) {
        if (!fresh[k]) continue;  // frozen, or stale with ignore_stale_grad: left as it is
        const double lr = lr_ * params_[k]->lr_mult(), wd = wd_ * params_[k]->wd_mult();
        std::vector<Tensor> replicas = params_[k]->list_data();
        for (size_t i = 0; i < replicas.size(); ++i) {
            const Tensor state = state_of(k, i);
            px_tensor *p = replicas[i].handle(), *g = grads[k][i].handle();
            if (optimizer_ == "adagrad" || optimizer_ == "rmsprop" || optimizer_ == "adadelta")
                composed_update(optimizer_, replicas[i], grads[k][i], state, lr, wd, rescale, eps_, gamma1_, rho_);
            else if (adam)
                check(px_adam_update(p, g, state.handle(), lr, beta1_, beta2_, eps_, wd, rescale, counts_[k] + 1,
                                     optimizer_ == "adamw"));
            else if (optimizer_ == "nag" && state.defined())
                check(px_nag_update(p, g, state.handle(), lr, momentum_, wd, rescale));
            else
                check(px_sgd_update(p, g, state.defined() ? state.handle() : nullptr, lr, momentum_, wd, rescale));
        }
    }
    for (size_t k = 0; k < params_.size(); ++k)
        if (fresh[k]) ++counts_[k];
    use_gradients();
    ++updates_;
}

}  // namespace plexus::nn
