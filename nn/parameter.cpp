// Parameters (replicas per device, deferred shapes), ParameterDict, and the
// initializers.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <regex>
#include <sstream>

#include "plexus/nn.hpp"

namespace plexus::nn {

namespace {
std::string device_list(const std::vector<Device>& ds) {
    std::string s;
    for (auto& d : ds) s += (s.empty() ? "" : ", ") + d.str();
    return s.empty() ? "no device" : s;
}
// Refuses a device list that names a device twice: replicas are one per device.
void check_distinct(const std::string& who, const std::vector<Device>& ds) {
    for (size_t i = 0; i < ds.size(); ++i)
        for (size_t j = 0; j < i; ++j)
            if (ds[i] == ds[j])
                throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT,
                                           who + ": the devices [" + device_list(ds) + "] name " + ds[i].str() +
                                               " twice; a parameter has one replica per device");
}
bool known(const Shape& s) {
    return std::all_of(s.begin(), s.end(), [](int64_t d) { return d > 0; });
}
}  // namespace

namespace {
void check_init(bool ok, const std::string& what) {
    if (!ok) throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "initializer " + what);
}
Initializer::Factor factor_of(const std::string& factor_type, const char* who) {
    if (factor_type == "avg") return Initializer::avg;
    if (factor_type == "in") return Initializer::in;
    if (factor_type == "out") return Initializer::out;
    check_init(false, std::string(who) + ": factor_type '" + factor_type + "' is not avg, in or out");
    return Initializer::avg;
}
std::string number(double v) {
    std::ostringstream s;
    s << v;
    return s.str();
}
}  // namespace

Initializer Initializer::Xavier(const std::string& rnd_type, const std::string& factor_type, double magnitude) {
    check_init(rnd_type == "uniform" || rnd_type == "gaussian",
               "Xavier: rnd_type '" + rnd_type + "' is not uniform or gaussian");
    check_init(magnitude > 0 && std::isfinite(magnitude), "Xavier: magnitude must be finite and > 0");
    Initializer i = of(rnd_type == "uniform" ? xavier_uniform : xavier_gaussian);
    i.factor = factor_of(factor_type, "Xavier");
    i.magnitude = magnitude;
    return i;
}

Initializer Initializer::MSRAPrelu(const std::string& factor_type, double slope) {
    const double magnitude = 2.0 / (1 + slope * slope);
    check_init(std::isfinite(slope) && magnitude > 0, "MSRAPrelu: slope must be finite (and its square too)");
    Initializer i = Xavier("gaussian", "avg", magnitude);
    i.factor = factor_of(factor_type, "MSRAPrelu");
    return i;
}

Initializer Initializer::Normal(double sigma) {
    check_init(sigma >= 0 && std::isfinite(sigma), "Normal: sigma must be finite and >= 0");
    Initializer i = of(normal);
    i.scale = sigma;
    return i;
}

Initializer Initializer::Uniform(double scale) {
    check_init(scale >= 0 && std::isfinite(scale), "Uniform: scale must be finite and >= 0");
    Initializer i = of(uniform);
    i.scale = scale;
    return i;
}

Initializer Initializer::Constant(double value) {
    check_init(std::isfinite(value), "Constant: the value must be finite");
    Initializer i = of(constant);
    i.scale = value;
    return i;
}

Initializer Initializer::Custom(std::string label, Fill fill) {
    if (!fill) throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "Initializer::Custom: the fill function is empty");
    Initializer i = of(custom);
    i.fill = std::move(fill);
    i.label = std::move(label);
    return i;
}

Tensor Initializer::make(const Shape& shape, Device d, DType dtype, const std::string& name) const {
    switch (kind) {
    case custom: {
        // A deferred initialization runs inside the first forward call, often
        // under record(): the fill's writes are no recorded op.
        auto outside = autograd::pause(autograd::is_training());
        Tensor data = full(shape, 0.0, d, dtype);
        Tensor given = data;
        fill(name, given);
        if (given.is(data)) return data;
        // The function assigned another tensor to its argument (data = ...): its values, if they fit.
        if (!given.defined() || given.shape() != shape || given.dtype() != dtype)
            throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT,
                                       label + " for " + name + ": the fill function replaced its tensor with " +
                                           (given.defined() ? "one of shape " + str(given.shape()) + ", " +
                                                                  plexus::name(given.dtype())
                                                            : std::string("an empty handle")) +
                                           "; write values of shape " + str(shape) + ", " + plexus::name(dtype) +
                                           " into it");
        return data.assign(given.as_in_context(d));
    }
    case zeros: return full(shape, 0.0, d, dtype);
    case ones: return full(shape, 1.0, d, dtype);
    case constant: return full(shape, scale, d, dtype);
    case normal: return random_normal(shape, 0.0, scale, d, dtype);
    case uniform: return random_uniform(shape, -scale, scale, d, dtype);
    case xavier_uniform:
    case xavier_gaussian: {
        // Gluon's fans: dimension 0 is the outputs and 1 the inputs, each
        // times the window's size. A vector's are taken as its length (MXNet's
        // Xavier refuses one; vectors named as biases never get here).
        double receptive = 1;
        for (size_t i = 2; i < shape.size(); ++i) receptive *= double(shape[i]);
        const double fan_out = shape.empty() ? 1 : double(shape[0]) * receptive;
        const double fan_in = shape.size() < 2 ? fan_out : double(shape[1]) * receptive;
        const double fan = factor == in ? fan_in : factor == out ? fan_out : (fan_in + fan_out) / 2;
        const double spread = std::sqrt(magnitude / fan);
        return kind == xavier_uniform ? random_uniform(shape, -spread, spread, d, dtype)
                                      : random_normal(shape, 0.0, spread, d, dtype);
    }
    }
    throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "unknown initializer");
}

std::string Initializer::describe() const {
    const char* factors[] = {"avg", "in", "out"};
    switch (kind) {
    case custom: return label;
    case zeros: return "Zero";
    case ones: return "One";
    case constant: return "Constant(" + number(scale) + ")";
    case normal: return "Normal(" + number(scale) + ")";
    case uniform: return "Uniform(" + number(scale) + ")";
    case xavier_uniform:
    case xavier_gaussian:
        return std::string("Xavier(") + (kind == xavier_uniform ? "uniform" : "gaussian") + ", " + factors[factor] +
               ", " + number(magnitude) + ")";
    }
    return "unknown initializer";
}

Parameter::Parameter(std::string name, Shape shape, GradReq grad_req, bool differentiable)
    : name_(std::move(name)), shape_(std::move(shape)), grad_req_(differentiable ? grad_req : GradReq::null),
      differentiable_(differentiable) {}

Parameter::Parameter(std::string name, Shape shape, Initializer init, GradReq grad_req, bool differentiable)
    : name_(std::move(name)), shape_(std::move(shape)), init_(init),
      grad_req_(differentiable ? grad_req : GradReq::null), differentiable_(differentiable) {}

void Parameter::attach(Tensor& t) const {
    if (grad_req_ != GradReq::null) t.attach_grad(grad_req_ == GradReq::add ? "add" : "write");
}

void Parameter::set_grad_req(GradReq req) {
    if (req != GradReq::write && req != GradReq::null && req != GradReq::add)
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, name_ + ": unknown grad_req");
    if (req == grad_req_) return;  // the gradients stay, as Gluon's
    if (!differentiable_ && req != GradReq::null)
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT,
                                   "parameter " + name_ + " is state its layer updates itself (not differentiable); "
                                                          "its grad_req stays null");
    // Between "write" and "add" only how backward() writes the gradients
    // changes: they stay, and so does what a graph recorded before reaches.
    if (req != GradReq::null && grad_req_ != GradReq::null) {
        for (const Tensor& t : data_)
            if (const auto& meta = t.autograd_meta()) meta->accumulate = req == GradReq::add;
        grad_req_ = req;
        return;
    }
    // New handles for the same memory: made first, so a failure (the zero
    // gradients' memory) changes nothing.
    const GradReq before = grad_req_;
    grad_req_ = req;
    std::vector<Tensor> made;
    try {
        made.reserve(data_.size());
        for (const Tensor& t : data_) {
            Tensor v = t.detach();
            attach(v);
            made.push_back(v);
        }
    } catch (...) {
        grad_req_ = before;
        throw;
    }
    data_.swap(made);
}

void Parameter::zero_grad() {
    if (grad_req_ == GradReq::null) return;  // no gradient to clear, as Gluon's
    auto outside = autograd::pause(autograd::is_training());  // a gradient is no recorded op's input
    for (const Tensor& g : list_grad()) {
        Tensor own = g;
        own.assign(0.0);
    }
}

namespace {
void check_multiplier(double m, const std::string& who) {
    if (!(m >= 0 && std::isfinite(m)))
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, who + " must be finite and >= 0, got " + number(m));
}
}  // namespace

void Parameter::set_lr_mult(double m) {
    check_multiplier(m, name_ + ": lr_mult");
    lr_mult_ = m;
}

void Parameter::set_wd_mult(double m) {
    check_multiplier(m, name_ + ": wd_mult");
    wd_mult_ = m;
}

std::vector<Device> Parameter::devices() const {
    std::vector<Device> out;
    for (auto& t : data_) out.push_back(t.device());
    return out;
}

namespace {
// Gluon's initializers set parameters by the end of their names: biases,
// betas and running means start at zero, gammas and running variances at
// one, whatever the network's initializer; it sets the rest (weights).
Initializer by_name(const std::string& name, const Initializer& init) {
    auto ends = [&](const char* suffix) {
        const size_t n = std::strlen(suffix);
        return name.size() >= n && name.compare(name.size() - n, n, suffix) == 0;
    };
    if (ends("bias") || ends("beta") || ends("running_mean") || ends("moving_mean")) return Initializer::Zero();
    if (ends("gamma") || ends("running_var") || ends("moving_var")) return Initializer::One();
    return init;
}
}  // namespace

void Parameter::initialize(const std::vector<Device>& devices, bool force_reinit, const Initializer& init) {
    start(devices, force_reinit, init_ ? *init_ : by_name(name_, init));
}

void Parameter::initialize_as(const Initializer& init, const std::vector<Device>& devices, bool force_reinit) {
    start(devices, force_reinit, init);
}

void Parameter::start(const std::vector<Device>& devices, bool force_reinit, const Initializer& init) {
    if (devices.empty()) throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, name_ + ": initialize() needs a device");
    check_distinct(name_ + ": initialize()", devices);
    if ((initialized() || deferred()) && !force_reinit)
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT,
                                   name_ + " is already initialized" +
                                       (initialized() ? "" : " (its shape comes at the first forward call)") +
                                       "; pass force_reinit=true to initialize it again");
    if (!known(shape_)) {
        std::vector<Device> later = devices;  // completed by infer_shape at the first forward call
        data_.clear();
        pending_.swap(later);
        pending_init_ = init;
        return;
    }
    fill(shape_, devices, init);
}

void Parameter::fill(const Shape& shape, const std::vector<Device>& devices, const Initializer& init) {
    Tensor first = init.make(shape, devices[0], DType::float32, name_);
    std::vector<Tensor> made;
    made.reserve(devices.size());
    for (size_t i = 0; i < devices.size(); ++i) {
        Tensor t = i == 0 ? first : first.copyto(devices[i]);
        attach(t);
        made.push_back(t);
    }
    data_.swap(made);
    pending_.clear();
    pending_init_ = Initializer{};  // not needed again: an initializer written in Python is let go
}

void Parameter::infer_shape(const Shape& shape) {
    if (known(shape_)) return;  // layers infer only the dimensions they left at 0
    if (!pending_.empty()) {
        // Copies, and the shape taken only once the values are made: an
        // initializer written in Python may initialize this parameter again
        // or let another thread call the layer meanwhile; one that fails
        // leaves it deferred, so the next forward call tries again.
        const std::vector<Device> devices = pending_;
        const Initializer init = pending_init_;
        fill(shape, devices, init);
    }
    shape_ = shape;
}

Tensor Parameter::data(Device d) const {
    for (auto& t : data_)
        if (t.device() == d) return t;
    // accel(i) of a plugin that names its devices: the replicas carry that name.
    px_device own{};
    if (d.kind == PX_DEVICE_ACCELERATOR && !data_.empty() && px_runtime_resolve_device(runtime(), d.raw(), &own) == PX_OK)
        for (auto& t : data_)
            if (t.device() == Device::of(own)) return t;
    if (data_.empty())
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT,
                                   "parameter " + name_ + " is not initialized; call initialize() on the network first" +
                                       (pending_.empty() ? "" : " (its shape is inferred at the first forward call)"));
    throw DeviceMismatchError(PX_ERROR_DEVICE_MISMATCH, "parameter " + name_ + " lives on " + device_list(devices()) +
                                                            ", not on " + d.str() +
                                                            "; move the input there or call reset_ctx(" + d.str() + ")");
}

Tensor Parameter::data() const {
    if (data_.empty()) return data(cpu());  // the not-initialized error
    return data_[0];
}

namespace {
void check_has_grad(const std::string& name, GradReq req) {
    if (req == GradReq::null)
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT,
                                   "parameter " + name + " has no gradient (grad_req null: frozen, or state a layer "
                                                         "updates itself)");
}
}  // namespace

Tensor Parameter::grad(Device d) const {
    check_has_grad(name_, grad_req_);
    return data(d).grad();
}

Tensor Parameter::grad() const {
    check_has_grad(name_, grad_req_);
    return data().grad();
}

std::vector<Tensor> Parameter::list_grad() const {
    check_has_grad(name_, grad_req_);
    std::vector<Tensor> out;
    for (auto& t : data_) out.push_back(t.grad());
    return out;
}

namespace {
void check_new_shape(const std::string& name, const Shape& values, const Shape& own) {
    if (values != own)
        throw ShapeError(PX_ERROR_SHAPE, name + ": new values of shape " + str(values) + " for a parameter of shape " +
                                             str(own) + " (0: not known yet)");
}
}  // namespace

void Parameter::set_data(const Tensor& values) {
    if (data_.empty())  // (its values would be lost: initialize() makes them)
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT,
                                   name_ + ": set_data: the parameter has no values yet; initialize() makes them (or, "
                                           "for a shape still to be inferred, the first forward call), then set_data");
    check_new_shape(name_, values.shape(), shape_);
    store(shape_, make_replicas(values, devices()));
}

void Parameter::set_replica(const Tensor& values) {
    check_new_shape(name_, values.shape(), shape_);
    for (Tensor& t : data_)
        if (t.device() == values.device()) {
            if (values.dtype() != t.dtype())
                throw DTypeError(PX_ERROR_DTYPE, name_ + ": new values are " + plexus::name(values.dtype()) + ", the parameter " +
                                                     plexus::name(t.dtype()));
            // Replaced, not written: autograd tracks no writes to a tensor
            // without a gradient, so an op recorded reading the old values
            // (a prediction of BatchNorm under record) would read the new.
            Tensor v = values.detach();
            attach(v);
            t = v;
            return;
        }
    data(values.device());  // the error naming where the parameter lives, when it is not initialized or elsewhere
    throw DeviceMismatchError(PX_ERROR_DEVICE_MISMATCH, name_ + ": set_replica needs values on a device the parameter "
                                                                "has a replica on, by its own name, not " +
                                                            values.device().str());
}

std::vector<Tensor> Parameter::make_replicas(const Tensor& values, const std::vector<Device>& devices, bool take) const {
    const DType dtype = data_.empty() ? DType::float32 : data_[0].dtype();
    std::vector<Tensor> made;
    made.reserve(devices.size());
    for (auto d : devices) {
        const bool itself = take && d == values.device() && values.dtype() == dtype;
        take = take && !itself;
        Tensor v = itself ? values : values.astype(dtype).copyto(d);
        attach(v);
        made.push_back(v);
    }
    return made;
}

void Parameter::adopt(Shape shape, std::vector<Tensor> replicas) noexcept {
    shape_.swap(shape);
    data_.swap(replicas);
    pending_.clear();
}

void Parameter::store(Shape shape, std::vector<Tensor> replicas) {
    try {  // (reading the shapes allocates too)
        // In place only where autograd tracks writes (a tensor with a
        // gradient: a recorded op that read it then refuses backward); a
        // frozen parameter's tensors are replaced, as a recorded op reading
        // them could not tell.
        bool matching = replicas.size() == data_.size() && shape == shape_ && grad_req_ != GradReq::null;
        for (size_t i = 0; matching && i < data_.size(); ++i)
            matching = data_[i].device() == replicas[i].device() && data_[i].dtype() == replicas[i].dtype() &&
                       data_[i].shape() == replicas[i].shape();
        if (matching) {
            auto paused = autograd::pause();  // a write of values, not an op to differentiate
            for (size_t i = 0; i < data_.size(); ++i) data_[i].assign(replicas[i]);
            return;
        }
    } catch (const std::exception&) {
        // A write refused (out of memory queuing it): the replicas are taken
        // instead, so the values are all new either way (loads stay whole).
    }
    adopt(std::move(shape), std::move(replicas));
}

void Parameter::reset_ctx(const std::vector<Device>& devices) {
    if (devices.empty()) throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, name_ + ": reset_ctx() needs a device");
    check_distinct(name_ + ": reset_ctx()", devices);
    if (data_.empty()) {
        if (pending_.empty()) pending_init_ = init_ ? *init_ : by_name(name_, Initializer{});  // never initialized
        if (known(shape_)) {  // made there now: only an unknown shape waits for the first forward call
            fill(shape_, devices, pending_init_);
            pending_.clear();
            return;
        }
        pending_ = devices;
        return;
    }
    Tensor src = data_[0];
    std::vector<Tensor> moved;
    moved.reserve(devices.size());
    for (auto d : devices) {
        Tensor t = src.detach().copyto(d);
        attach(t);
        moved.push_back(t);
    }
    data_ = std::move(moved);
}

void ParameterDict::add(const std::string& name, Parameter* p) {
    for (const auto& item : items_)
        if (item.second == p) return;  // a shared block's parameter, listed under its first name
    items_.emplace_back(name, p);
}

Parameter& ParameterDict::operator[](const std::string& name) const {
    for (auto& [n, p] : items_)
        if (n == name) return *p;
    throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "no parameter named '" + name + "'");
}

void ParameterDict::initialize(const std::vector<Device>& devices, bool force_reinit, const Initializer& init) {
    // As Gluon's: the parameters already initialized (or waiting for their
    // shape) are left as they are, and the rest, of blocks added since, are
    // initialized. With none left to initialize the call is a mistake.
    std::vector<Parameter*> todo;
    std::string done;
    for (auto& [n, p] : items_) {
        if (force_reinit || !(p->initialized() || p->deferred())) todo.push_back(p);
        else if (done.size() < 200) done += (done.empty() ? "" : ", ") + n;
    }
    if (todo.empty() && !items_.empty())
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "initialize: every parameter is already initialized (" +
                                                                  done + (done.size() >= 200 ? ", ..." : "") +
                                                                  "); pass force_reinit=true to initialize them again");
    for (Parameter* p : todo) p->initialize(devices, force_reinit, init);
}

ParameterDict ParameterDict::select(const std::string& pattern) const {
    std::regex re;
    try {
        re = std::regex(pattern, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT,
                                   "collect_params: '" + pattern + "' is not a regular expression (" + e.what() + ")");
    }
    ParameterDict out;
    for (auto& [n, p] : items_)
        if (std::regex_search(n, re, std::regex_constants::match_continuous)) out.add(n, p);
    return out;
}

void ParameterDict::set_grad_req(GradReq req) {
    for (auto& [n, p] : items_)
        if (p->differentiable()) p->set_grad_req(req);
}

void ParameterDict::set_lr_mult(double m) {
    for (auto& [n, p] : items_) p->set_lr_mult(m);
}

void ParameterDict::set_wd_mult(double m) {
    for (auto& [n, p] : items_) p->set_wd_mult(m);
}

void ParameterDict::zero_grad() {
    for (auto& [n, p] : items_)
        if (p->grad_req() != GradReq::null) p->zero_grad();
}

void ParameterDict::reset_ctx(const std::vector<Device>& devices) {
    for (auto& [n, p] : items_) p->reset_ctx(devices);
}

}  // namespace plexus::nn
