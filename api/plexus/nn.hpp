// plexus nn: networks as in the seeds' Gluon, on any device (libplexus-nn).
//
//   nn::Sequential net;
//   net.add(nn::Conv2D(6, 5, 1, 0, "relu"), nn::MaxPool2D(2, 2), nn::Flatten(), nn::Dense(10));
//   net.initialize(try_gpu());                      // Xavier-uniform weights there
//   loss::SoftmaxCrossEntropyLoss loss_fn;
//   nn::Trainer trainer(net.collect_params(), "sgd", {{"learning_rate", 0.1}});
//   { auto r = autograd::record(); l = loss_fn(net(x), y); }
//   l.backward(); trainer.step(batch_size);
//
// Parameters live on the device(s) they were initialized on; net(x) runs on
// x's device. Parameter files: see docs/parameter-file.md.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "plexus/lr_scheduler.hpp"
#include "plexus/plexus.hpp"

namespace plexus::nn {

// Makes a parameter's initial values on a device, as Gluon's initializers
// (mxnet.init): Xavier (uniform or gaussian; fan-in, fan-out or their
// average; magnitude 3 by default: Xavier-Glorot's uniform limit
// sqrt(6 / (fan_in + fan_out))), MSRAPrelu (He/Kaiming), Normal(sigma),
// Uniform(scale) in [-scale, scale], Constant, Zero and One. Fans come from
// the shape: dimension 0 is the outputs, 1 the inputs, the rest the window.
// Custom runs a function of one's own, as a Gluon initializer's _init_weight.
struct Initializer {
    enum Kind { xavier_uniform, zeros, ones, normal, uniform, constant, xavier_gaussian, custom } kind = xavier_uniform;
    double scale = 0.01;  // normal: the standard deviation; uniform: the half-width; constant: the value
    enum Factor { avg, in, out } factor = avg;  // xavier: which fan
    double magnitude = 3;                       // xavier: the variance is magnitude / fan (uniform: limit sqrt(magnitude / fan))

    static Initializer Xavier(const std::string& rnd_type = "uniform", const std::string& factor_type = "avg",
                              double magnitude = 3);
    // He initialization for (leaky) ReLU layers: gaussian Xavier of magnitude 2 / (1 + slope^2).
    static Initializer MSRAPrelu(const std::string& factor_type = "avg", double slope = 0.25);
    static Initializer Normal(double sigma = 0.01);
    static Initializer Uniform(double scale = 0.07);
    static Initializer Constant(double value);
    static Initializer Zero() { return of(zeros); }
    static Initializer One() { return of(ones); }
    // fill(name, data) writes the initial values of the parameter `name`
    // into `data` (zeros of its shape and dtype, on its first device) in
    // place: data.assign(...), data[...] = ... in Python. Called once per
    // initialization; the other devices get copies. `label` is describe()'s.
    using Fill = std::function<void(const std::string& name, Tensor& data)>;
    static Initializer Custom(std::string label, Fill fill);
    Fill fill;          // custom
    std::string label;  // custom

    static Initializer of(Kind k) {
        Initializer i;
        i.kind = k;
        return i;
    }

    // A new tensor of initial values for the parameter `name` (custom's fill gets the name).
    Tensor make(const Shape& shape, Device d, DType dtype, const std::string& name = "") const;
    // e.g. "Xavier(uniform, avg, 3)", "Normal(0.01)".
    std::string describe() const;
};

// Whether a parameter has a gradient: `write` (trained; each backward()
// replaces the gradient), `add` (trained; backward() adds to the gradient,
// which zero_grad() clears: gradients accumulated over several batches), or
// `null`: no gradient, and trainers leave it alone. `null` is what layers
// give state they update themselves (BatchNorm's running statistics), and
// what freezes a parameter (set_grad_req, Gluon's
// collect_params().setattr('grad_req', 'null')).
enum class GradReq { write, null, add };

// Layers hold their parameters through shared_ptr, so that tied layers
// (share_parameters) can hold the same one.
class Parameter : public std::enable_shared_from_this<Parameter> {
public:
    // Without its own initializer, a parameter takes the one initialize() is
    // given (Xavier-uniform by default), as in Gluon, except by its name's
    // end, as Gluon's initializers: "bias", "beta", "running_mean" start at
    // zero, "gamma", "running_var" at one. initialize_as takes `init` for all.
    // A parameter that is not `differentiable` (state a layer updates itself)
    // keeps grad_req null.
    Parameter(std::string name, Shape shape, GradReq grad_req = GradReq::write, bool differentiable = true);
    Parameter(std::string name, Shape shape, Initializer init, GradReq grad_req = GradReq::write,
              bool differentiable = true);

    const std::string& name() const { return name_; }
    // 0 marks a dimension not known yet (inferred at the first forward call).
    const Shape& shape() const { return shape_; }
    GradReq grad_req() const { return grad_req_; }
    // Freezes (null) or unfreezes (write, add) the parameter: every replica
    // keeps its values and gets a zero gradient, or none. Trainers skip a
    // parameter whose grad_req is null at each step, also one made before.
    // Refused (other than null) for a parameter that is not differentiable.
    void set_grad_req(GradReq req);
    bool differentiable() const { return differentiable_; }
    // Clears the gradient of every replica (for grad_req add).
    void zero_grad();
    // Multipliers of the trainer's learning rate and weight decay for this
    // parameter (Gluon's lr_mult and wd_mult; 1 by default): finite and >= 0.
    double lr_mult() const { return lr_mult_; }
    double wd_mult() const { return wd_mult_; }
    void set_lr_mult(double m);
    void set_wd_mult(double m);
    bool initialized() const { return !data_.empty(); }
    // Initialized before its shape was known: made at the first forward call.
    bool deferred() const { return !pending_.empty(); }
    std::vector<Device> devices() const;

    // Creates identical replicas on `devices` (values made on the first by
    // the parameter's own initializer, else by `init`, and copied), or
    // remembers them until the shape is known.
    void initialize(const std::vector<Device>& devices, bool force_reinit = false, const Initializer& init = {});
    // The same with `init` in place of the parameter's own initializer.
    void initialize_as(const Initializer& init, const std::vector<Device>& devices, bool force_reinit = false);
    // Completes a deferred shape (once) and creates the pending replicas.
    void infer_shape(const Shape& shape);

    // The replica on `d`; an error names the devices it lives on.
    Tensor data(Device d) const;
    Tensor data() const;  // the only (or first) replica
    std::vector<Tensor> list_data() const { return data_; }
    // The gradient of the replica on `d` (or the first); an error for a
    // parameter without one (grad_req null) says so.
    Tensor grad(Device d) const;
    Tensor grad() const;
    std::vector<Tensor> list_grad() const;

    // Writes `values` (same shape) into every replica, in place as Gluon's
    // set_data for a parameter with a gradient: a handle to a replica
    // (data(), memory shared through DLPack) sees them, and a recorded op
    // that read the old values refuses backward. A frozen parameter's
    // replicas (grad_req null) are replaced instead: autograd tracks no
    // writes to them. This, initialize() and reset_ctx() change nothing
    // when they fail (out of memory included).
    void set_data(const Tensor& values);
    // Replaces the replica on values' device alone (state each device keeps
    // for itself, as BatchNorm's running statistics); same shape and dtype.
    void set_replica(const Tensor& values);
    // Moves every replica to `devices`, keeping the values.
    void reset_ctx(const std::vector<Device>& devices);

private:
    friend class Block;  // load_parameters: every parameter's replicas made first, then all swapped in
    // New replicas of `values` on `devices`, in this parameter's dtype; changes
    // nothing. With `take` (values no one else holds), values itself is the
    // replica on its own device when already in this dtype: no second copy.
    std::vector<Tensor> make_replicas(const Tensor& values, const std::vector<Device>& devices, bool take = false) const;
    // Takes `shape` and `replicas` as they are; cannot fail.
    void adopt(Shape shape, std::vector<Tensor> replicas) noexcept;
    // Writes `replicas` (make_replicas's, for this parameter's devices) into
    // its own tensors in place when they match them one for one and have a
    // gradient, else (or when a write is refused) adopts them: never fails
    // half way.
    void store(Shape shape, std::vector<Tensor> replicas);

    // initialize() with the initializer already chosen.
    void start(const std::vector<Device>& devices, bool force_reinit, const Initializer& init);
    // Values of `shape` from `init` on `devices`, taken as the parameter's.
    void fill(const Shape& shape, const std::vector<Device>& devices, const Initializer& init);
    // Gives t a gradient when this parameter has one.
    void attach(Tensor& t) const;

    std::string name_;
    Shape shape_;
    std::optional<Initializer> init_;
    GradReq grad_req_;
    bool differentiable_;
    double lr_mult_ = 1, wd_mult_ = 1;
    std::vector<Tensor> data_;       // one per device, each with attach_grad() unless grad_req is null
    std::vector<Device> pending_;    // initialize() before the shape was known
    Initializer pending_init_;       // and the initializer chosen
};

// Parameters by name, in the order the network made them. A parameter met
// twice (a block added at two places of a network: tied layers, as d2l's
// shared Dense) is listed once, under its first name, so it is initialized,
// updated and saved once.
class ParameterDict {
public:
    void add(const std::string& name, Parameter* p);
    size_t size() const { return items_.size(); }
    Parameter& operator[](const std::string& name) const;
    const std::vector<std::pair<std::string, Parameter*>>& items() const { return items_; }
    auto begin() const { return items_.begin(); }
    auto end() const { return items_.end(); }

    void initialize(Device d, bool force_reinit = false) { initialize(std::vector<Device>{d}, force_reinit); }
    void initialize(const std::vector<Device>& devices, bool force_reinit = false, const Initializer& init = {});
    void reset_ctx(Device d) { reset_ctx(std::vector<Device>{d}); }
    void reset_ctx(const std::vector<Device>& devices);
    // The parameters whose names `pattern` matches from their start (ECMAScript
    // regex, as Gluon's collect_params(select) with re.match: ".*bias").
    ParameterDict select(const std::string& pattern) const;
    // Gluon's setattr for every parameter: set_grad_req (which leaves the
    // parameters that are not differentiable at null, as Gluon's) /
    // set_lr_mult / set_wd_mult.
    void set_grad_req(GradReq req);
    void set_lr_mult(double m);
    void set_wd_mult(double m);
    void zero_grad();

private:
    std::vector<std::pair<std::string, Parameter*>> items_;
};

class Block {
public:
    virtual ~Block();
    virtual Tensor forward(const Tensor& x) = 0;
    // forward(x); a block calls its children this way (so summary() sees them).
    Tensor operator()(const Tensor& x);
    // One line, e.g. "Conv2D(1 -> 6, kernel 5x5, relu)".
    virtual std::string describe() const = 0;
    // The registered children, in order (what holds a block's parameters
    // keeps them: a child replaced later is then still there for it).
    const std::vector<std::pair<std::string, std::shared_ptr<Block>>>& children() const { return children_; }
    // Gluon's name, its kind and a number counted per kind in this process
    // ("conv0", "pool0", "dense2"; a block written in Python: its class's
    // name in lower case), given at the first call (d2l prints layer.name).
    std::string name() const;

    // This block's parameters, named as in saved files ("0.weight").
    virtual ParameterDict collect_params();
    void initialize(Device d = cpu(), bool force_reinit = false) { collect_params().initialize(d, force_reinit); }
    void initialize(const std::vector<Device>& ds, bool force_reinit = false) {
        collect_params().initialize(ds, force_reinit);
    }
    // With `init` for the parameters that have no initializer of their own
    // (weights), as Gluon's net.initialize(init.Normal(0.01), ctx).
    void initialize(const Initializer& init, Device d = cpu(), bool force_reinit = false) {
        collect_params().initialize({d}, force_reinit, init);
    }
    void initialize(const Initializer& init, const std::vector<Device>& ds, bool force_reinit = false) {
        collect_params().initialize(ds, force_reinit, init);
    }
    // The weight / bias of a layer that has them.
    virtual Parameter& weight();
    virtual Parameter& bias();

    // See docs/parameter-file.md. Saving replaces `path` atomically by a
    // rename, so it needs write permission on the folder, not the file: a
    // read-only file is replaced (by a new file, mode 0644 less the umask),
    // and a symlink at `path` is itself replaced by a regular file, its
    // target left untouched. Loading checks everything before it changes
    // any parameter. Without devices (or with an empty list) each parameter
    // stays on the devices it was initialized on (one not initialized goes
    // to cpu()), as Gluon's load_parameters(ctx=None).
    void save_parameters(const std::string& path);
    void load_parameters(const std::string& path) { load_parameters(path, std::vector<Device>{}); }
    void load_parameters(const std::string& path, Device d);
    void load_parameters(const std::string& path, const std::vector<Device>& ds);

    // One line per block with its output shape and parameter count, for an
    // input like `x` (run forward, outside autograd, in prediction mode),
    // then the totals, as Gluon's summary prints it.
    std::string summary(const Tensor& x);

protected:
    // Own parameters (leaf layers).
    virtual std::vector<Parameter*> own_params() { return {}; }
    // Whether summary() is running on this thread (Sequential then runs each
    // block on its own rather than fused).
    static bool summarising();
    // Makes `block` a child named `name`: collect_params() gives its
    // parameters as "name.weight". A block with children (a residual block)
    // registers them in its constructor and calls them in forward().
    template <class B>
    std::shared_ptr<std::decay_t<B>> register_child(const std::string& name, B&& block) {
        auto made = std::make_shared<std::decay_t<B>>(std::forward<B>(block));
        children_.emplace_back(name, made);
        return made;
    }
    // Makes an existing block a child named `name` (shared, not copied: a
    // block that is also a child elsewhere keeps one set of parameters).
    void register_child_shared(const std::string& name, std::shared_ptr<Block> block);
    // Whether `other` is this block or one of its children, at any depth.
    bool holds(const Block& other) const;
    // "kind(" then a line "  (name): child" per child, indented, then ")".
    std::string with_children(const std::string& kind) const;

private:
    friend class Sequential;
    std::vector<std::pair<std::string, std::shared_ptr<Block>>> children_;
};

// Applies "relu", "sigmoid", "tanh", "gelu", "silu", "softplus" (also
// "softrelu", Gluon's name) or nothing ("").
Tensor activate(const Tensor& x, const std::string& activation);

// An activation as a layer: any name activate() takes but "".
class Activation : public Block {
public:
    explicit Activation(std::string activation);
    Tensor forward(const Tensor& x) override { return activate(x, activation_); }
    std::string describe() const override { return "Activation(" + activation_ + ")"; }

private:
    std::string activation_;
};

// A layer with a weight, an optional bias added along axis 1, and an
// activation: what Dense and Conv2D share.
class WeightedLayer : public Block {
public:
    Parameter& weight() override { return *weight_; }
    Parameter& bias() override;
    // Gluon's share_parameters (d2l's tied layers, Dense(8, params=shared.params)
    // in Python): this layer computes with the "weight" of `params`, and its
    // "bias" when the layer has one, in place of its own; they must be a layer's
    // parameters of a shape that agrees where both are known. A ParameterDict
    // or Trainer made before still holds the layer's own, which the layer
    // keeps alive (a Trainer then finds their gradients stale, as Gluon's).
    void share_parameters(const ParameterDict& params);

protected:
    WeightedLayer(const char* kind, Shape weight_shape, int64_t outputs, std::string activation, bool use_bias);
    std::vector<Parameter*> own_params() override;
    // bias_add (when there is a bias), then the activation.
    Tensor finish(const Tensor& y) const;
    // "Kind(in -> out" for describe(), with "?" for an input size not known yet.
    std::string head(int64_t in) const;

    const char* kind_;
    int64_t outputs_;
    std::string activation_;
    std::shared_ptr<Parameter> weight_, bias_;
    std::vector<std::shared_ptr<Parameter>> replaced_;  // by share_parameters
};

class Dense : public WeightedLayer {
public:
    // in_units 0: inferred from the first input. Inputs of rank > 2 are
    // flattened to (batch, features); with flatten false (Gluon's
    // flatten=False) the layer maps the last axis alone, (..., in_units) ->
    // (..., units), as attention's projections and d2l's position-wise
    // feed-forward networks use it.
    explicit Dense(int64_t units, std::string activation = "", int64_t in_units = 0, bool use_bias = true,
                   bool flatten = true);
    Tensor forward(const Tensor& x) override;
    std::string describe() const override;

private:
    bool flatten_;
};

class MaxPool2D;

class Conv2D : public WeightedLayer {
public:
    // in_channels 0: inferred from the first input.
    Conv2D(int64_t channels, Pair2 kernel_size, Pair2 strides = 1, Pair2 padding = 0, std::string activation = "",
           int64_t in_channels = 0, bool use_bias = true);
    Tensor forward(const Tensor& x) override;
    std::string describe() const override;
    // Whether forward_max_pooled fuses: relu, with a bias.
    bool fuses_max_pool() const { return activation_ == "relu" && bias_ != nullptr; }
    // pool(forward(x)), with the bias, relu and pooling as one op where x's
    // device offers it (bias_relu_max_pool2d). Sequential runs a Conv2D with
    // relu followed by a MaxPool2D this way; the values are the same.
    Tensor forward_max_pooled(const Tensor& x, const MaxPool2D& pool);

private:
    Tensor convolve(const Tensor& x);  // the convolution alone
    Pair2 kernel_, strides_, padding_;
};

class MaxPool2D : public Block {
public:
    // strides 0: the pool size.
    explicit MaxPool2D(Pair2 pool_size = 2, Pair2 strides = 0, Pair2 padding = 0);
    Tensor forward(const Tensor& x) override;
    std::string describe() const override;
    Pair2 pool_size() const { return size_; }
    Pair2 strides() const { return strides_; }
    Pair2 padding() const { return padding_; }

protected:
    Pair2 size_, strides_, padding_;
};

class AvgPool2D : public MaxPool2D {
public:
    using MaxPool2D::MaxPool2D;
    Tensor forward(const Tensor& x) override;
    std::string describe() const override;
};

class Flatten : public Block {
public:
    Tensor forward(const Tensor& x) override { return flatten(x); }
    std::string describe() const override { return "Flatten"; }
};

// Batch normalisation over every axis but 1 (channels), as Gluon's: while
// training (autograd::is_training()) by the batch's statistics, updating
// running = momentum * running + (1 - momentum) * batch, the variance
// unbiased (n / (n - 1)) as cuDNN's and PyTorch's; when predicting by the
// running statistics. Parameters gamma (ones), beta (zeros), running_mean
// (zeros) and running_var (ones), the last two with GradReq::null. Each
// device keeps its own running statistics (as d2l's multi-GPU training);
// saving writes the first device's. A 16-bit input (nn::Autocast) is
// normalised in float32, the result cast back to its dtype.
class BatchNorm : public Block {
public:
    explicit BatchNorm(double momentum = 0.9, double epsilon = 1e-5, int64_t in_channels = 0);
    Tensor forward(const Tensor& x) override;
    std::string describe() const override;

protected:
    std::vector<Parameter*> own_params() override;

private:
    double momentum_, epsilon_;
    std::shared_ptr<Parameter> gamma_, beta_, running_mean_, running_var_;
};

// The mean of each channel's plane: (N,C,H,W) -> (N,C,1,1).
class GlobalAvgPool2D : public Block {
public:
    Tensor forward(const Tensor& x) override;
    std::string describe() const override { return "GlobalAvgPool2D"; }
};

// Adaptive average pooling to (N, C, OH, OW), windows as PyTorch's
// AdaptiveAvgPool2d (adaptive_avg_pool2d).
class AdaptiveAvgPool2D : public Block {
public:
    explicit AdaptiveAvgPool2D(Pair2 output_size);
    Tensor forward(const Tensor& x) override { return adaptive_avg_pool2d(x, output_size_); }
    std::string describe() const override;

private:
    Pair2 output_size_;
};

// x > 0 ? x : alpha * x, as Gluon's LeakyReLU (alpha finite).
class LeakyReLU : public Block {
public:
    explicit LeakyReLU(double alpha = 0.01);
    Tensor forward(const Tensor& x) override { return leaky_relu(x, alpha_); }
    std::string describe() const override;

private:
    double alpha_;
};

// Layer normalisation over the last axis, as Gluon's LayerNorm (axis -1):
// gamma (ones) and beta (zeros) of the last axis' size (in_channels, 0:
// inferred); `center`/`scale` false leave beta/gamma out. Training and
// predicting are the same. A 16-bit input is normalised in float32 and
// the result cast back (layer_norm does it), as BatchNorm's.
class LayerNorm : public Block {
public:
    explicit LayerNorm(double epsilon = 1e-5, bool center = true, bool scale = true, int64_t in_channels = 0);
    Tensor forward(const Tensor& x) override;
    std::string describe() const override;

protected:
    std::vector<Parameter*> own_params() override;

private:
    double epsilon_;
    bool center_, scale_;
    std::shared_ptr<Parameter> gamma_, beta_;
};

// A lookup table of input_dim rows of output_dim values, as Gluon's
// Embedding: indices of any shape (int32 or int64; float indices are
// refused, as PyTorch does, where MXNet would truncate them) give
// (indices' shape, output_dim). An index outside [0, input_dim) fails, reported by the
// next wait on the result. Its gradient adds rows in the indices' order.
class Embedding : public Block {
public:
    Embedding(int64_t input_dim, int64_t output_dim);
    Tensor forward(const Tensor& x) override;
    std::string describe() const override;
    Parameter& weight() override { return *weight_; }

protected:
    std::vector<Parameter*> own_params() override;

private:
    int64_t input_dim_, output_dim_;
    std::shared_ptr<Parameter> weight_;
};

// d2l's residual block: relu(bn2(conv2(relu(bn1(conv1(x))))) + shortcut(x)),
// the convolutions 3x3 with padding 1, conv1 with `strides`; the shortcut
// is x, or a 1x1 convolution with `strides` when use_1x1conv.
class Residual : public Block {
public:
    explicit Residual(int64_t channels, bool use_1x1conv = false, int strides = 1);
    Tensor forward(const Tensor& x) override;
    std::string describe() const override;

private:
    int64_t channels_;
    int strides_;
    std::shared_ptr<Block> conv1_, bn1_, conv2_, bn2_, conv3_;
};

class Dropout : public Block {
public:
    explicit Dropout(double rate);
    Tensor forward(const Tensor& x) override { return dropout(x, rate_); }
    std::string describe() const override;

private:
    double rate_;
};

// Its children in order, named "0", "1", ... in parameter names.
class Sequential : public Block {
public:
    template <class... B>
    void add(B&&... blocks) {
        (add_shared(std::make_shared<std::decay_t<B>>(std::forward<B>(blocks))), ...);
    }
    void add_shared(std::shared_ptr<Block> b);
    Block& operator[](size_t i) const;
    // The same block, shared (for another Sequential made of some of these).
    std::shared_ptr<Block> shared(size_t i) const;
    size_t size() const { return children().size(); }
    Tensor forward(const Tensor& x) override;
    std::string describe() const override;
};

// ResNet-18 as d2l builds it for Fashion-MNIST's 28x28 images: a 3x3
// convolution (64 channels), BatchNorm and relu, no max pooling; four stages
// of two Residual blocks (64, 128, 256, 512 channels, the last three halving
// the size); global average pooling and a Dense layer of num_classes.
Sequential resnet18(int64_t num_classes, int64_t in_channels = 1);

// Named tensors to a file and back, as MXNet's nd.save / nd.load, in the
// parameter file format (docs/parameter-file.md; any dtype), written
// atomically; names are 1 to 1024 bytes and distinct. load_tensors gives
// them in the file's order on `d`, and changes nothing when the file is bad.
void save_tensors(const std::string& path, const std::vector<std::pair<std::string, Tensor>>& named);
std::vector<std::pair<std::string, Tensor>> load_tensors(const std::string& path, Device d = cpu());

// Splits `batch` along `batch_axis` into one part per device, in order, and
// puts each part on its device (as_in_context: a part already there is not
// copied). Part sizes differ by at most one, the first parts taking the
// remainder; with `even_split` (Gluon's default, Python's too) a batch that
// does not divide evenly is an error. As Gluon's, one device takes the whole
// batch, and without even_split fewer rows than devices make fewer parts.
std::vector<Tensor> split_and_load(const Tensor& batch, const std::vector<Device>& devices, int batch_axis = 0,
                                   bool even_split = false);

// Sums each parameter's gradients over its replicas (all_reduce_sum: the
// replicas' gradients are replaced by the sum) and updates every replica
// identically, by one fused op per replica whose bits are the same on every
// plugin. As Gluon's, a trainer holds the parameters it updates (those a
// shared_ptr owns, as every layer's: a network destroyed before its trainer
// leaves them to it); a parameter made otherwise must outlive it. A
// parameter whose grad_req is null at a step (frozen) is left
// alone and its state kept; each parameter's lr_mult and wd_mult scale the
// learning rate and wd for it. Optimizers and their
// options (defaults in brackets):
//   "sgd"   learning_rate [0.01], momentum [0], wd [0]
//   "nag"   the same, with Nesterov momentum (PyTorch's SGD(nesterov=True));
//           momentum must be above 0
//   "adam"  learning_rate [0.001], beta1 [0.9], beta2 [0.999], epsilon [1e-8],
//           wd [0] (added to the gradient, L2)
//   "adamw" the same, wd decoupled (param *= 1 - learning_rate * wd first;
//           PyTorch's AdamW defaults wd to 0.01, Plexus to 0)
// wd is weight decay. The formulas are plugin.h's (px_sgd_attrs,
// px_adam_attrs).
class Trainer {
public:
    Trainer(const ParameterDict& params, const std::string& optimizer, const std::map<std::string, double>& options);
    // The devices its parameters' replicas live on.
    std::vector<Device> devices() const;
    // One update; gradients are divided by batch_size. As Gluon's, every
    // parameter's gradient must have been written by backward() since the
    // last step, on every replica: a stale one (a layer the forward pass did
    // not use, a second step without a backward pass) throws, naming the
    // parameter, and nothing changes. With ignore_stale_grad such parameters
    // are left as they are (their gradients still go through the replicas'
    // sum and the hook, so every rank makes the same collective calls).
    void step(int64_t batch_size, bool ignore_stale_grad = false);
    // step() for the gradients of a loss multiplied by `loss_scale`
    // (LossScaler): they are divided by batch_size * loss_scale. When a
    // gradient, summed over the replicas (and by the hook), holds an
    // infinity or a NaN, no parameter or optimizer state changes and it
    // returns false (the gradients are summed over the replicas, as by
    // step(), and count as used). It reads one value back, so it waits for
    // the backward pass.
    bool step_if_finite(int64_t batch_size, double loss_scale = 1, bool ignore_stale_grad = false);
    // The rate of the last update (before any, the first's), from the
    // schedule when there is one.
    double learning_rate() const { return scheduler_ ? (*scheduler_)(updates_) : lr_; }
    // Refused while a schedule is set: it would be overridden at the next step.
    void set_learning_rate(double lr);
    const std::string& optimizer() const { return optimizer_; }
    // Updates made so far (the schedules count them; Adam's bias corrections
    // count each parameter's own).
    int64_t num_update() const { return updates_; }
    // Writes the optimizer's state: each parameter's momentum buffer or Adam
    // moments (its first replica's; they are the same on every replica), the
    // update counts (the trainer's and each parameter's) and the runtime's
    // random stream (random_state()), in the parameter file format
    // (docs/parameter-file.md), atomically. With the network's parameters
    // (save_parameters), a run resumes exactly.
    void save_states(const std::string& path) const;
    // Reads what save_states wrote for the same optimizer and parameters,
    // making each state on every device of its parameter, and restores the
    // random stream. A parameter without a state in the file (frozen in
    // every update until then) starts from a zero state when it is updated,
    // as Gluon's. Everything is checked before anything changes.
    void load_states(const std::string& path);
    // Called by step() with one gradient per parameter trained in this step
    // (in collect_params order, frozen ones left out, already summed over
    // this process's replicas) before any update;
    // it may replace them, e.g. with their sum over MPI ranks
    // (plexus::mpi::World::gradient_reducer). Every replica is then updated
    // with the gradients it leaves.
    using GradientHook = std::function<void(std::vector<Tensor>& grads)>;
    void set_gradient_hook(GradientHook hook) { hook_ = std::move(hook); }
    // Sets the learning rate of every later update from `scheduler`, by the
    // update's number (num_update() + 1: the first update is 1, as in
    // Gluon); null goes back to a fixed rate.
    void set_lr_scheduler(std::shared_ptr<const LRScheduler> scheduler) { scheduler_ = std::move(scheduler); }

private:
    // Each parameter's replicas' gradients, summed over the replicas and passed through the hook.
    std::vector<std::vector<Tensor>> summed_gradients();
    // Per parameter, whether backward() wrote every replica's gradient since
    // the last step; throws for a stale one unless ignore_stale_grad.
    std::vector<bool> fresh_gradients(bool ignore_stale_grad, const char* call) const;
    // The parameters' gradients become stale: the next step needs a backward pass.
    void use_gradients();
    // Whether parameter k is trained now (its grad_req is not null).
    bool trained(size_t k) const;
    void update(const std::vector<std::vector<Tensor>>& grads, double rescale, const std::vector<bool>& fresh);
    void use_rate(double lr);
    // What can fail before the gradients are summed: the next update's rate
    // from the schedule, and the optimizer states the update needs.
    void prepare(const std::vector<bool>& fresh);
    // The state a replica's update needs (an empty tensor when none): zeros
    // of the right shape, made at the first update.
    Tensor state_of(size_t param, size_t replica);

    GradientHook hook_;
    std::shared_ptr<const LRScheduler> scheduler_;
    std::vector<Parameter*> params_;
    std::vector<std::shared_ptr<Parameter>> held_;  // those of params_ a shared_ptr owns (every layer's)
    std::vector<std::string> names_;  // as collect_params() names them ("0.weight")
    std::string optimizer_;
    double lr_ = 0.01, momentum_ = 0, wd_ = 0, beta1_ = 0.9, beta2_ = 0.999, eps_ = 1e-8, gamma1_ = 0.9, rho_ = 0.9;
    // Whether the optimizer keeps a state per parameter, and whether it is two rows (2, n) (Adam's
    // moments, AdaDelta's accumulators) rather than one of the parameter's shape.
    bool keeps_state() const;
    bool two_row_state() const;
    int64_t updates_ = 0;
    // Per parameter (params_ order), one state per replica: momentum buffers, AdaGrad's and RMSProp's
    // sums, or Adam's and AdaDelta's (2, n) rows.
    std::vector<std::vector<Tensor>> states_;
    // Per parameter, the updates it took (Adam's bias corrections count
    // them: one frozen for a while starts at 1 when trained, as Gluon's and
    // PyTorch's).
    std::vector<int64_t> counts_;
};

// Scales `grads` in place (Tensor::assign) so that their global L2 norm,
// over all of them together, is at most max_norm, as Gluon's
// clip_global_norm; returns the norm before clipping. Given the parameters'
// gradients (list_grad(), grad()), the next step applies the clipped ones.
// It reads one value back (a wait). A NaN or an infinite norm leaves them as
// they are. In a trainer's gradient hook it clips the summed gradients
// before the update divides by the batch size:
//   trainer.set_gradient_hook([](std::vector<Tensor>& g) { nn::clip_global_norm(g, 5.0 * batch); });
double clip_global_norm(std::vector<Tensor>& grads, double max_norm);

// Mixed precision, as PyTorch's autocast: inside the scope Dense and Conv2D
// compute in `dtype`, float16 or bfloat16. Their input, weight and bias are
// cast to it as autograd records, so the gradients reach the parameters,
// which stay float32 ("master weights"), in float32, and the trainer sums
// and steps in float32. The losses (SoftmaxCrossEntropyLoss, L2Loss,
// L1Loss, SigmoidBinaryCrossEntropyLoss) compute in float32 inside the scope,
// and LossScaler::scale multiplies a 16-bit loss in float32. float32 gives a scope that casts nothing. Per thread; a scope
// restores the one it replaced.
//
//   { auto r = autograd::record(); nn::Autocast half(DType::bfloat16); l = loss_fn(net(x), y); }
class Autocast {
public:
    explicit Autocast(DType dtype);
    ~Autocast();
    Autocast(const Autocast&) = delete;
    Autocast& operator=(const Autocast&) = delete;
    // The dtype layers compute in on this thread now: float32 outside every scope.
    static DType dtype();

private:
    DType saved_;
};

// `x` as the layers compute it: cast to Autocast::dtype() when x is a
// float of another dtype inside a scope, x itself otherwise.
Tensor autocast(const Tensor& x);

// Dynamic loss scaling for float16 training, as PyTorch's GradScaler: the
// loss is multiplied by a scale before backward, so small gradients do not
// flush to zero in float16; step() divides it out, skips the update when a
// gradient overflowed (infinity or NaN) and halves the scale, and doubles it
// after growth_interval updates in a row that did not. The defaults are
// GradScaler's, whose losses are usually a batch's mean; a Gluon-style loss
// is per sample and backward() sums it, making gradients batch_size times
// larger, so start at about 65536 / batch_size (plexus-train does) or expect
// the first steps to be skipped while the scale backs off.
//
//   nn::LossScaler scaler;
//   scaler.scale(l).backward();
//   scaler.step(trainer, batch_size);
class LossScaler {
public:
    explicit LossScaler(double init_scale = 65536.0, double growth_factor = 2.0, double backoff_factor = 0.5,
                        int64_t growth_interval = 2000);
    // loss times the scale, recorded for backward (inside record() or not).
    Tensor scale(const Tensor& loss) const;
    // trainer.step_if_finite(batch_size, loss_scale()), then the scale's
    // change; whether the parameters were updated.
    bool step(Trainer& trainer, int64_t batch_size);
    double loss_scale() const { return scale_; }
    int64_t skipped_steps() const { return skipped_; }
    // What resuming a run needs: the scale, the good steps since it last
    // changed, the steps skipped. set_state checks each (scale finite and
    // > 0, counts >= 0, good below growth_interval).
    struct State {
        double scale = 0;
        int64_t good = 0, skipped = 0;
    };
    State state() const { return State{scale_, good_, skipped_}; }
    void set_state(const State& s);

private:
    double scale_, growth_, backoff_;
    int64_t interval_, good_ = 0, skipped_ = 0;
};

}  // namespace plexus::nn

namespace plexus::loss {

// Losses as Gluon's: one value per sample (axis 0 is the batch), the mean
// over every other axis of the elementwise loss times `weight` and, when
// given, times `sample_weight` (on the loss's device; differentiable), which must broadcast to the elementwise
// loss's shape (for SoftmaxCrossEntropyLoss, pred's shape with the class
// axis 1, as Gluon keeps it: d2l's masked sequence loss passes (N, T, 1)).

// -log softmax(pred)[label] over the class `axis`. sparse_label: labels
// are class indices of pred's shape without the class axis (any dtype, cast
// to int32 when not int32/int64); otherwise a distribution of pred's shape,
// giving -sum(label * log_softmax(pred)). from_logits: pred is already
// log-probabilities (no log_softmax). Inside an nn::Autocast scope a 16-bit
// float pred is cast to float32 first, and the loss is float32.
class SoftmaxCrossEntropyLoss {
public:
    SoftmaxCrossEntropyLoss() = default;
    explicit SoftmaxCrossEntropyLoss(int axis, bool sparse_label = true, bool from_logits = false, double weight = 1);
    Tensor operator()(const Tensor& pred, const Tensor& label) const { return (*this)(pred, label, Tensor()); }
    Tensor operator()(const Tensor& pred, const Tensor& label, const Tensor& sample_weight) const;

private:
    int axis_ = -1;
    bool sparse_label_ = true, from_logits_ = false;
    double weight_ = 1;
};

// L2Loss (pred - label)^2 / 2; L1Loss |pred - label|;
// SigmoidBinaryCrossEntropyLoss, from logits, max(x, 0) - x * label +
// log(1 + exp(-|x|)) (stable for any x), or with from_sigmoid (pred is a
// probability) -(label log(pred + 1e-12) + (1 - label) log((1 - pred) + 1e-12)),
// computed in float32 at least. label has pred's shape, or as many values
// (reshaped to it, as Gluon's: (N,) labels for a (N, 1) prediction).
class L2Loss {
public:
    explicit L2Loss(double weight = 1);
    Tensor operator()(const Tensor& pred, const Tensor& label, const Tensor& sample_weight = Tensor()) const;

private:
    double weight_;
};
class L1Loss {
public:
    explicit L1Loss(double weight = 1);
    Tensor operator()(const Tensor& pred, const Tensor& label, const Tensor& sample_weight = Tensor()) const;

private:
    double weight_;
};
class SigmoidBinaryCrossEntropyLoss {
public:
    explicit SigmoidBinaryCrossEntropyLoss(bool from_sigmoid = false, double weight = 1);
    Tensor operator()(const Tensor& pred, const Tensor& label, const Tensor& sample_weight = Tensor()) const;

private:
    bool from_sigmoid_;
    double weight_;
};

}  // namespace plexus::loss
