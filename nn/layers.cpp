// The layers: Dense, Conv2D, pooling, activations, Flatten, Dropout, Sequential.
#include <algorithm>
#include <cmath>
#include <sstream>
#include <typeinfo>
#include <utility>

#include "plexus/nn.hpp"

namespace plexus::nn {

namespace {
// The activations a layer takes by name, as Gluon names them ("softrelu" is
// Gluon's softplus), and the op each runs.
constexpr std::pair<const char*, px_op> kActivations[] = {
    {"relu", PX_OP_RELU}, {"sigmoid", PX_OP_SIGMOID},   {"tanh", PX_OP_TANH},         {"gelu", PX_OP_GELU},
    {"silu", PX_OP_SILU}, {"softplus", PX_OP_SOFTPLUS}, {"softrelu", PX_OP_SOFTPLUS}};

// The op of activation `a`; "" (no activation) is 0.
px_op activation_op(const std::string& a) {
    if (a.empty()) return px_op(0);
    for (const auto& [name, op] : kActivations)
        if (a == name) return op;
    std::string names;
    for (const auto& known : kActivations) names += std::string("\"") + known.first + "\", ";
    throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "unknown activation '" + a + "' (use " + names + "or \"\")");
}
void check_activation(const std::string& a) { activation_op(a); }
void check_positive(const char* layer, const char* what, int64_t v) {
    if (v < 1)
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT,
                                   std::string(layer) + ": " + what + " must be >= 1, got " + std::to_string(v));
}
std::string with_activation(const std::string& s, const std::string& a) { return a.empty() ? s + ")" : s + ", " + a + ")"; }
}  // namespace

Tensor activate(const Tensor& x, const std::string& a) {
    const px_op op = activation_op(a);
    return op ? x.unary(op) : x;
}

Activation::Activation(std::string activation) : activation_(std::move(activation)) {
    if (activation_.empty()) check_activation("none");
    check_activation(activation_);
}

// ---- Block ----

ParameterDict Block::collect_params() {
    ParameterDict d;
    for (Parameter* p : own_params()) d.add(p->name(), p);
    for (auto& [child, block] : children_)
        for (auto& [name, p] : block->collect_params()) d.add(child + "." + name, p);
    return d;
}

Parameter& Block::weight() {
    throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, describe() + " has no weight");
}
Parameter& Block::bias() { throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, describe() + " has no bias"); }

// ---- WeightedLayer, Dense, Conv2D ----

WeightedLayer::WeightedLayer(const char* kind, Shape weight_shape, int64_t outputs, std::string activation,
                             bool use_bias)
    : kind_(kind), outputs_(outputs), activation_(std::move(activation)) {
    check_activation(activation_);
    weight_ = std::make_shared<Parameter>("weight", std::move(weight_shape));
    if (use_bias) bias_ = std::make_shared<Parameter>("bias", Shape{outputs}, Initializer::Zero());
}

namespace {

// params[name], held by a layer, for `layer` to use in place of `own`.
std::shared_ptr<Parameter> shared_one(const ParameterDict& params, const char* name, const Parameter& own,
                                      const std::string& layer) {
    const auto& items = params.items();
    const auto it = std::find_if(items.begin(), items.end(), [&](const auto& item) { return item.first == name; });
    if (it == items.end()) {
        std::string names;
        for (const auto& item : items) names += (names.empty() ? "" : ", ") + item.first;
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, layer + ": share_parameters: the parameters given have no " +
                                                                  name + " (they are: " + (names.empty() ? "none" : names) +
                                                                  "); give a layer's own, as shared.collect_params()");
    }
    std::shared_ptr<Parameter> held = it->second->weak_from_this().lock();
    if (!held)
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, layer + ": share_parameters: " + name +
                                                                  " is not a layer's parameter; share a layer's own");
    const Shape &a = held->shape(), &b = own.shape();
    bool agree = a.size() == b.size();
    for (size_t i = 0; agree && i < a.size(); ++i) agree = a[i] == 0 || b[i] == 0 || a[i] == b[i];
    if (!agree)
        throw ShapeError(PX_ERROR_SHAPE, layer + ": share_parameters: the shared " + name + " is " + str(a) +
                                             " and this layer's is " + str(b) + " (0: not known yet)");
    return held;
}

}  // namespace

void WeightedLayer::share_parameters(const ParameterDict& params) {
    auto weight = shared_one(params, "weight", *weight_, describe());
    auto bias = bias_ ? shared_one(params, "bias", *bias_, describe()) : nullptr;
    replaced_.push_back(weight_);  // (both found before either is replaced)
    weight_ = std::move(weight);
    if (bias_) {
        replaced_.push_back(bias_);
        bias_ = std::move(bias);
    }
}

Parameter& WeightedLayer::bias() {
    if (!bias_) return Block::bias();
    return *bias_;
}

std::vector<Parameter*> WeightedLayer::own_params() {
    std::vector<Parameter*> out{weight_.get()};
    if (bias_) out.push_back(bias_.get());
    return out;
}

Tensor WeightedLayer::finish(const Tensor& y) const {
    return activate(bias_ ? bias_add(y, autocast(bias_->data(y.device()))) : y, activation_);
}

std::string WeightedLayer::head(int64_t in) const {
    return std::string(kind_) + "(" + (in ? std::to_string(in) : "?") + " -> " + std::to_string(outputs_);
}

Dense::Dense(int64_t units, std::string activation, int64_t in_units, bool use_bias, bool flatten)
    : WeightedLayer("Dense", Shape{units, in_units}, units, std::move(activation), use_bias), flatten_(flatten) {
    check_positive("Dense", "units", units);
    if (in_units < 0) check_positive("Dense", "in_units", in_units);
}

namespace {
// A Dense layer's weight (units, in_units) against the input's features, in
// the layer's words rather than the product's.
void check_features(const Parameter& weight, int64_t features, const std::string& layer) {
    const int64_t in_units = weight.shape()[1];
    if (in_units != 0 && in_units != features)
        throw ShapeError(PX_ERROR_SHAPE, layer + ": the input has " + std::to_string(features) +
                                             " features, the layer takes " + std::to_string(in_units) +
                                             " (in_units, or what its first input had)");
}
}  // namespace

namespace {
// The input and the weight as the layer's product takes them (autocast), an
// input of another dtype refused in the layer's words (the product would
// name its operands and suggest casting either).
std::pair<Tensor, Tensor> product_operands(const Tensor& x, const Tensor& weight, const std::string& layer) {
    Tensor xs = autocast(x), ws = autocast(weight);
    if (xs.dtype() != ws.dtype()) {
        const std::string want = name(ws.dtype());
        throw DTypeError(PX_ERROR_DTYPE, layer + ": the input is " + name(xs.dtype()) + " and the layer's parameters " +
                                             want + "; cast the input: x.astype('" + want + "') in Python, x.astype(DType::" +
                                             want + ") in C++");
    }
    return {xs, ws};
}
}  // namespace

Tensor Dense::forward(const Tensor& x) {
    // The rows the product takes: the batch's samples flattened, or (flatten
    // false) every position of the other axes, with the last axis as features.
    Tensor rows;
    Shape out;
    if (flatten_) {
        rows = x.ndim() > 2 ? flatten(x) : x;
        if (rows.ndim() != 2)
            throw ShapeError(PX_ERROR_SHAPE, "Dense: the input must be (batch, features), got rank " + std::to_string(x.ndim()));
    } else {
        if (x.ndim() == 0) throw ShapeError(PX_ERROR_SHAPE, "Dense: the input needs a features axis, got a scalar");
        if (x.shape().back() == 0)  // (the rows of no features cannot be counted from the elements)
            throw ShapeError(PX_ERROR_SHAPE, describe() + ": the input " + str(x.shape()) + " has no features");
        out = x.shape();
        rows = x.reshape({-1, out.back()});
        out.back() = outputs_;
    }
    check_features(*weight_, rows.shape()[1], describe());
    weight_->infer_shape({outputs_, rows.shape()[1]});
    const auto [xs, ws] = product_operands(rows, weight_->data(rows.device()), describe());
    const Tensor y = finish(gemm(xs, ws, false, true));
    return flatten_ ? y : y.reshape(out);
}

std::string Dense::describe() const { return with_activation(head(weight_->shape()[1]), activation_); }

Conv2D::Conv2D(int64_t channels, Pair2 kernel_size, Pair2 strides, Pair2 padding, std::string activation,
               int64_t in_channels, bool use_bias)
    : WeightedLayer("Conv2D", Shape{channels, in_channels, kernel_size.h, kernel_size.w}, channels,
                    std::move(activation), use_bias),
      kernel_(kernel_size), strides_(strides), padding_(padding) {
    check_positive("Conv2D", "channels", channels);
    check_positive("Conv2D", "kernel height", kernel_.h);
    check_positive("Conv2D", "kernel width", kernel_.w);
    check_positive("Conv2D", "stride", std::min(strides_.h, strides_.w));
    if (padding_.h < 0 || padding_.w < 0)
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "Conv2D: padding must be >= 0");
    if (in_channels < 0) check_positive("Conv2D", "in_channels", in_channels);
}

Tensor Conv2D::convolve(const Tensor& x) {
    if (x.ndim() != 4)
        throw ShapeError(PX_ERROR_SHAPE, "Conv2D: the input must be (batch, channels, height, width), got rank " +
                                             std::to_string(x.ndim()));
    weight_->infer_shape({outputs_, x.shape()[1], kernel_.h, kernel_.w});
    const auto [xs, ws] = product_operands(x, weight_->data(x.device()), describe());
    return conv2d(xs, ws, strides_, padding_);
}

Tensor Conv2D::forward(const Tensor& x) { return finish(convolve(x)); }

Tensor Conv2D::forward_max_pooled(const Tensor& x, const MaxPool2D& pool) {
    if (!fuses_max_pool()) return max_pool2d(forward(x), pool.pool_size(), pool.strides(), pool.padding());
    Tensor y = convolve(x);
    return bias_relu_max_pool2d(y, autocast(bias_->data(y.device())), pool.pool_size(), pool.strides(), pool.padding());
}

std::string Conv2D::describe() const {
    std::ostringstream s;
    s << head(weight_->shape()[1]) << ", kernel " << kernel_.h << "x" << kernel_.w;
    if (strides_.h != 1 || strides_.w != 1) s << ", stride " << strides_.h << "x" << strides_.w;
    if (padding_.h || padding_.w) s << ", padding " << padding_.h << "x" << padding_.w;
    return with_activation(s.str(), activation_);
}

// ---- pooling, dropout ----

MaxPool2D::MaxPool2D(Pair2 pool_size, Pair2 strides, Pair2 padding)
    : size_(pool_size), strides_(strides.h == 0 && strides.w == 0 ? pool_size : strides), padding_(padding) {
    check_positive("pooling", "pool size", std::min(size_.h, size_.w));
    check_positive("pooling", "stride", std::min(strides_.h, strides_.w));
}

Tensor MaxPool2D::forward(const Tensor& x) { return max_pool2d(x, size_, strides_, padding_); }
Tensor AvgPool2D::forward(const Tensor& x) { return avg_pool2d(x, size_, strides_, padding_); }

namespace {
// "MaxPool2D(3x3, stride 1x1, padding 1x1)": every setting, padding when there is some.
std::string describe_pool(const char* name, Pair2 size, Pair2 strides, Pair2 padding) {
    std::ostringstream s;
    s << name << "(" << size.h << "x" << size.w << ", stride " << strides.h << "x" << strides.w;
    if (padding.h || padding.w) s << ", padding " << padding.h << "x" << padding.w;
    return s.str() + ")";
}
}  // namespace

std::string MaxPool2D::describe() const { return describe_pool("MaxPool2D", size_, strides_, padding_); }
std::string AvgPool2D::describe() const { return describe_pool("AvgPool2D", size_, strides_, padding_); }

AdaptiveAvgPool2D::AdaptiveAvgPool2D(Pair2 output_size) : output_size_(output_size) {
    check_positive("AdaptiveAvgPool2D", "the output height", output_size.h);
    check_positive("AdaptiveAvgPool2D", "the output width", output_size.w);
}

std::string AdaptiveAvgPool2D::describe() const {
    return "AdaptiveAvgPool2D(" + std::to_string(output_size_.h) + "x" + std::to_string(output_size_.w) + ")";
}

LeakyReLU::LeakyReLU(double alpha) : alpha_(alpha) {
    if (!std::isfinite(alpha)) throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "LeakyReLU: alpha must be finite");
}

std::string LeakyReLU::describe() const {
    std::ostringstream s;
    s << "LeakyReLU(" << alpha_ << ")";
    return s.str();
}

Tensor GlobalAvgPool2D::forward(const Tensor& x) {
    if (x.ndim() != 4)
        throw ShapeError(PX_ERROR_SHAPE, "GlobalAvgPool2D: the input must be (batch, channels, height, width), got rank " +
                                             std::to_string(x.ndim()));
    const Shape s = x.shape();
    if (s[2] < 1 || s[3] < 1 || s[2] > INT32_MAX || s[3] > INT32_MAX)
        throw ShapeError(PX_ERROR_SHAPE, "GlobalAvgPool2D: the input's planes are " + std::to_string(s[2]) + "x" +
                                             std::to_string(s[3]) + "; they need at least one value");
    const Pair2 plane{int(s[2]), int(s[3])};
    return avg_pool2d(x, plane, plane);
}

Dropout::Dropout(double rate) : rate_(rate) {
    if (!(rate >= 0 && rate < 1))
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "Dropout: rate " + std::to_string(rate) + " is not in [0, 1)");
}
std::string Dropout::describe() const { return "Dropout(" + std::to_string(rate_) + ")"; }

// ---- Sequential ----

bool Block::holds(const Block& other) const {
    if (&other == this) return true;
    for (const auto& child : children_)
        if (child.second->holds(other)) return true;
    return false;
}

void Block::register_child_shared(const std::string& name, std::shared_ptr<Block> block) {
    if (!block) throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "register_child: the block '" + name + "' is null");
    if (block->holds(*this))  // a cycle: every walk over the children would never end
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "register_child: the block '" + name +
                                                                  "' is this block or holds it; a block cannot hold itself");
    for (auto& [n, b] : children_)
        if (n == name) {  // assigned again: the new block replaces the old one, as an attribute does
            b = std::move(block);
            return;
        }
    children_.emplace_back(name, std::move(block));
}

void Sequential::add_shared(std::shared_ptr<Block> b) {
    if (!b) throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "Sequential::add_shared: the block is null");
    if (b->holds(*this))  // a cycle: every walk over the children would never end
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT,
                                   "Sequential::add: the block is this Sequential or holds it; a block cannot hold itself");
    children_.emplace_back(std::to_string(children_.size()), std::move(b));
}

Block& Sequential::operator[](size_t i) const {
    if (i >= children_.size())
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "Sequential: no block " + std::to_string(i) + " (it has " +
                                                                  std::to_string(children_.size()) + ")");
    return *children_[i].second;
}

std::shared_ptr<Block> Sequential::shared(size_t i) const {
    (void)(*this)[i];  // its refusal
    return children_[i].second;
}

Tensor Sequential::forward(const Tensor& x) {
    Tensor y = x;
    for (size_t i = 0; i < children_.size(); ++i) {
        Block& c = *children_[i].second;
        // Conv2D(relu) then MaxPool2D, both exactly those classes (a subclass
        // may change forward), run as one fused op.
        if (!summarising() && i + 1 < children_.size() && typeid(c) == typeid(Conv2D)) {
            const Block& next = *children_[i + 1].second;
            if (typeid(next) == typeid(MaxPool2D) && static_cast<Conv2D&>(c).fuses_max_pool()) {
                y = static_cast<Conv2D&>(c).forward_max_pooled(y, static_cast<const MaxPool2D&>(next));
                ++i;
                continue;
            }
        }
        y = c(y);
    }
    return y;
}

std::string Block::with_children(const std::string& kind) const {
    std::string s = kind + "(\n";
    for (auto& [name, block] : children_) {
        std::string d = block->describe();
        for (size_t at = d.find('\n'); at != std::string::npos; at = d.find('\n', at + 3)) d.replace(at, 1, "\n  ");
        s += "  (" + name + "): " + d + "\n";
    }
    return s + ")";
}

std::string Sequential::describe() const { return with_children("Sequential"); }

}  // namespace plexus::nn
