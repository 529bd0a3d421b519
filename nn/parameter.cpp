// Parameters (replicas per device, deferred shapes), ParameterDict, and the
// initializers.
#include <algorithm>
#include <cmath>

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

Tensor Initializer::make(const Shape& shape, Device d, DType dtype) const {
    switch (kind) {
    case zeros: return full(shape, 0.0, d, dtype);
    case ones: return full(shape, 1.0, d, dtype);
    case normal: return random_normal(shape, 0.0, scale, d, dtype);
    case xavier_uniform: {
        double receptive = 1;
        for (size_t i = 2; i < shape.size(); ++i) receptive *= double(shape[i]);
        double fan_out = shape.empty() ? 1 : double(shape[0]) * receptive;
        double fan_in = shape.size() < 2 ? fan_out : double(shape[1]) * receptive;
        double limit = std::sqrt(6.0 / (fan_in + fan_out));
        return random_uniform(shape, -limit, limit, d, dtype);
    }
    }
    throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "unknown initializer");
}

Parameter::Parameter(std::string name, Shape shape, Initializer init, GradReq grad_req)
    : name_(std::move(name)), shape_(std::move(shape)), init_(init), grad_req_(grad_req) {}

void Parameter::attach(Tensor& t) const {
    if (grad_req_ == GradReq::write) t.attach_grad();
}

std::vector<Device> Parameter::devices() const {
    std::vector<Device> out;
    for (auto& t : data_) out.push_back(t.device());
    return out;
}

void Parameter::initialize(const std::vector<Device>& devices, bool force_reinit) {
    if (devices.empty()) throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, name_ + ": initialize() needs a device");
    check_distinct(name_ + ": initialize()", devices);
    if (initialized() && !force_reinit)
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT,
                                   name_ + " is already initialized; pass force_reinit=true to initialize it again");
    if (!known(shape_)) {
        std::vector<Device> later = devices;  // completed by infer_shape at the first forward call
        data_.clear();
        pending_.swap(later);
        return;
    }
    Tensor first = init_.make(shape_, devices[0], DType::float32);
    std::vector<Tensor> made;
    made.reserve(devices.size());
    for (size_t i = 0; i < devices.size(); ++i) {
        Tensor t = i == 0 ? first : first.copyto(devices[i]);
        attach(t);
        made.push_back(t);
    }
    data_.swap(made);
    pending_.clear();
}

void Parameter::infer_shape(const Shape& shape) {
    if (known(shape_)) return;  // layers infer only the dimensions they left at 0
    shape_ = shape;
    if (!pending_.empty()) initialize(pending_);
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

std::vector<Tensor> Parameter::list_grad() const {
    if (grad_req_ == GradReq::null)
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT,
                                   "parameter " + name_ + " has no gradient (grad_req null: a layer updates it itself)");
    std::vector<Tensor> out;
    for (auto& t : data_) out.push_back(t.grad());
    return out;
}

void Parameter::set_data(const Tensor& values) {
    if (values.shape() != shape_)
        throw ShapeError(PX_ERROR_SHAPE, name_ + ": new values have another shape than the parameter");
    data_ = make_replicas(values, devices());
}

void Parameter::set_replica(const Tensor& values) {
    if (values.shape() != shape_)
        throw ShapeError(PX_ERROR_SHAPE, name_ + ": new values have another shape than the parameter");
    for (Tensor& t : data_)
        if (t.device() == values.device()) {
            if (values.dtype() != t.dtype())
                throw DTypeError(PX_ERROR_DTYPE, name_ + ": new values are " + plexus::name(values.dtype()) + ", the parameter " +
                                                     plexus::name(t.dtype()));
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

void Parameter::reset_ctx(const std::vector<Device>& devices) {
    if (devices.empty()) throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, name_ + ": reset_ctx() needs a device");
    check_distinct(name_ + ": reset_ctx()", devices);
    if (data_.empty()) {
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

void ParameterDict::initialize(const std::vector<Device>& devices, bool force_reinit) {
    for (auto& [n, p] : items_) p->initialize(devices, force_reinit);
}

void ParameterDict::reset_ctx(const std::vector<Device>& devices) {
    for (auto& [n, p] : items_) p->reset_ctx(devices);
}

}  // namespace plexus::nn
