// Parameters as Gluon's: initializers chosen at initialize(), freezing
// (grad_req null) that a trainer made before honours, gradients that
// accumulate (grad_req add, zero_grad), lr_mult / wd_mult, and selecting
// parameters by name.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include <unistd.h>

#include "../support.hpp"
#include "nn/param_file.hpp"
#include "plexus/nn.hpp"

using namespace plexus;
using pxtest::message_of;
using pxtest::values;

namespace {
struct Moments {
    double mean = 0, sd = 0, max_abs = 0;
};
Moments moments(const std::vector<double>& v) {
    Moments m;
    for (double x : v) m.mean += x / double(v.size());
    for (double x : v) m.sd += (x - m.mean) * (x - m.mean) / double(v.size() - 1);
    m.sd = std::sqrt(m.sd);
    for (double x : v) m.max_abs = std::max(m.max_abs, std::abs(x));
    return m;
}
Moments drawn(const nn::Initializer& init, const Shape& shape) {
    nn::Parameter p("p", shape);
    p.initialize({cpu()}, false, init);
    return moments(values(p.data()));
}

// loss = sum(w * x) over a batch of one: the gradient is x.
void backward_through(nn::Parameter& w, const Tensor& x) {
    Tensor l;
    {
        auto r = autograd::record();
        l = (w.data() * x).sum();
    }
    l.backward();
}

nn::ParameterDict dict_of(std::initializer_list<std::pair<const char*, nn::Parameter*>> ps) {
    nn::ParameterDict d;
    for (auto& [n, p] : ps) d.add(n, p);
    return d;
}
}  // namespace

TEST_CASE("initializers draw with Gluon's spreads from the shape's fans", "[nn][init]") {
    seed(5);
    // A (200, 50, 3, 3) weight: fan_in 450, fan_out 1800. 90,000 draws: the
    // deviation's relative standard error is about 0.3%.
    const Shape w{200, 50, 3, 3};
    const double fan_in = 450, fan_out = 1800, avg = (fan_in + fan_out) / 2;
    Moments xu = drawn(nn::Initializer::Xavier(), w);
    const double limit = std::sqrt(3.0 / avg);  // sqrt(6 / (fan_in + fan_out))
    CHECK(xu.max_abs <= limit);
    CHECK(xu.max_abs > 0.99 * limit);
    CHECK(xu.sd == Approx(limit / std::sqrt(3.0)).epsilon(0.02));
    CHECK(drawn(nn::Initializer::Xavier("gaussian", "in", 2), w).sd == Approx(std::sqrt(2 / fan_in)).epsilon(0.02));
    CHECK(drawn(nn::Initializer::Xavier("gaussian", "out", 3), w).sd == Approx(std::sqrt(3 / fan_out)).epsilon(0.02));
    // He: magnitude 2 / (1 + slope^2).
    CHECK(drawn(nn::Initializer::MSRAPrelu("in", 0), w).sd == Approx(std::sqrt(2 / fan_in)).epsilon(0.02));
    CHECK(drawn(nn::Initializer::MSRAPrelu(), w).sd == Approx(std::sqrt(2 / 1.0625 / avg)).epsilon(0.02));
    Moments u = drawn(nn::Initializer::Uniform(0.3), {300, 300});
    CHECK(u.max_abs <= 0.3);
    CHECK(u.sd == Approx(0.3 / std::sqrt(3.0)).epsilon(0.02));
    CHECK(std::abs(u.mean) < 0.003);
    Moments n = drawn(nn::Initializer::Normal(0.2), {300, 300});
    CHECK(n.sd == Approx(0.2).epsilon(0.02));
    CHECK(std::abs(n.mean) < 0.003);
    nn::Parameter c("c", {2, 2});
    c.initialize({cpu()}, false, nn::Initializer::Constant(-1.5));
    REQUIRE(values(c.data()) == std::vector<double>(4, -1.5));
    REQUIRE(nn::Initializer::Xavier("gaussian", "out", 2).describe() == "Xavier(gaussian, out, 2)");
    REQUIRE(nn::Initializer::Normal(0.01).describe() == "Normal(0.01)");
}

TEST_CASE("initializers refuse what they cannot draw", "[nn][init][errors]") {
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([] { nn::Initializer::Xavier("cauchy"); }),
                        "rnd_type 'cauchy' is not uniform or gaussian");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([] { nn::Initializer::Xavier("uniform", "sum"); }),
                        "factor_type 'sum' is not avg, in or out");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([] { nn::Initializer::MSRAPrelu("fan"); }),
                        "MSRAPrelu: factor_type 'fan'");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([] { nn::Initializer::Xavier("uniform", "avg", 0); }),
                        "magnitude must be finite and > 0");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([] { nn::Initializer::MSRAPrelu("avg", NAN); }),
                        "slope must be finite");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([] { nn::Initializer::Normal(-1); }),
                        "sigma must be finite and >= 0");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([] { nn::Initializer::Uniform(INFINITY); }),
                        "scale must be finite and >= 0");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([] { nn::Initializer::Constant(NAN); }),
                        "the value must be finite");
}

TEST_CASE("a custom initializer writes each weight once by name and its copies reach every device", "[nn][init]") {
    std::vector<std::string> names;
    const auto diagonal = nn::Initializer::Custom("Diagonal", [&](const std::string& name, Tensor& data) {
        names.push_back(name + " " + str(data.shape()));
        const int64_t rows = data.shape()[0], cols = data.shape()[1];
        std::vector<float> v(size_t(rows * cols), 0.0f);
        for (int64_t i = 0; i < std::min(rows, cols); ++i) v[size_t(i * cols + i)] = 2.0f;
        data.assign(array(v, {rows, cols}));
    });
    REQUIRE(diagonal.describe() == "Diagonal");
    nn::Sequential net;
    net.add(nn::Dense(3, "", 2), nn::Dense(2));  // the second's input size inferred
    net.initialize(diagonal, std::vector<Device>{cpu(0), cpu(1)});
    net(ones({1, 2}));
    REQUIRE(names == std::vector<std::string>{"weight (3, 2)", "weight (2, 3)"});  // weights only, once each
    for (const Device& d : {cpu(0), cpu(1)}) {
        REQUIRE(values(net[0].weight().data(d)) == std::vector<double>{2, 0, 0, 2, 0, 0});
        REQUIRE(values(net[1].weight().data(d)) == std::vector<double>{2, 0, 0, 0, 2, 0});
        REQUIRE(values(net[0].bias().data(d)) == std::vector<double>{0, 0, 0});
    }
    // A function that assigns a new tensor of the right shape to its argument: its values count.
    nn::Parameter p("p", {2});
    p.initialize({cpu()}, false, nn::Initializer::Custom("Fives", [](const std::string&, Tensor& data) {
        data = full({2}, 5.0, cpu(), DType::float32);
    }));
    REQUIRE(values(p.data()) == std::vector<double>{5, 5});
}

TEST_CASE("a custom initializer is refused without a function and when it replaces its tensor by another shape",
          "[nn][init][errors]") {
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([] { nn::Initializer::Custom("none", {}); }),
                        "Initializer::Custom: the fill function is empty");
    nn::Parameter p("p", {2, 2});
    const auto wrong = nn::Initializer::Custom("Wrong", [](const std::string&, Tensor& data) { data = ones({3}); });
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { p.initialize({cpu()}, false, wrong); }),
                        "Wrong for p: the fill function replaced its tensor with one of shape (3,), float32; write "
                        "values of shape (2, 2), float32 into it");
    REQUIRE(!p.initialized());  // nothing was set
    const auto empty = nn::Initializer::Custom("Empty", [](const std::string&, Tensor& data) { data = Tensor(); });
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { p.initialize({cpu()}, false, empty); }),
                        "replaced its tensor with an empty handle");
    const auto throwing = nn::Initializer::Custom("Throwing", [](const std::string&, Tensor&) {
        throw ShapeError(PX_ERROR_SHAPE, "from the fill");
    });
    PX_REQUIRE_MENTIONS(message_of<ShapeError>([&] { p.initialize({cpu()}, false, throwing); }), "from the fill");
    REQUIRE(!p.initialized());
}

TEST_CASE("a deferred custom initializer runs inside record() and a failed one is tried again at the next call",
          "[nn][init][errors]") {
    int calls = 0;
    bool fail = true;
    const auto fives = nn::Initializer::Custom("Fives", [&](const std::string&, Tensor& data) {
        ++calls;
        if (fail) throw ShapeError(PX_ERROR_SHAPE, "not yet");
        data.assign(full(data.shape(), 5.0, data.device(), data.dtype()));  // a write, refused while recording
    });
    nn::Dense layer(2);  // the input size comes at the first call
    layer.initialize(fives, cpu());
    {
        auto rec = autograd::record();
        PX_REQUIRE_MENTIONS(message_of<ShapeError>([&] { layer(ones({1, 3})); }), "not yet");
    }
    REQUIRE(!layer.weight().initialized());
    fail = false;
    Tensor y;
    {
        auto rec = autograd::record();
        y = layer(ones({1, 3}));  // still deferred: initialized now, while recording
    }
    REQUIRE(calls == 2);
    REQUIRE(values(layer.weight().data()) == std::vector<double>(6, 5.0));
    REQUIRE(values(y) == std::vector<double>{15, 15});
    y.backward();
    REQUIRE(values(layer.weight().grad()) == std::vector<double>(6, 1.0));
}

TEST_CASE("tied layers share one weight and bias: initialized and updated once with both uses' gradients",
          "[nn][share]") {
    nn::Sequential net;
    auto shared = std::make_shared<nn::Dense>(3, "", 3);
    auto tied = std::make_shared<nn::Dense>(3);  // its input size is the shared one's
    tied->share_parameters(shared->collect_params());
    net.add_shared(shared);
    net.add_shared(tied);
    REQUIRE(&tied->weight() == &shared->weight());
    REQUIRE(&tied->bias() == &shared->bias());
    net.initialize(nn::Initializer::Constant(0.5), cpu());
    REQUIRE(net.collect_params().size() == 2);  // listed, initialized and updated once
    Tensor y;
    {
        auto rec = autograd::record();
        y = net(ones({1, 3}));  // (1.5 + 0) per unit, then 0.5 * 4.5 = 2.25
        y.sum().backward();
    }
    REQUIRE(values(y) == std::vector<double>{2.25, 2.25, 2.25});
    // dW sums both uses: the second's dy (1) times its input (1.5), the first's dh (3 x 0.5) times x (1).
    REQUIRE(values(shared->weight().grad()) == std::vector<double>(9, 3.0));
    REQUIRE(values(shared->bias().grad()) == std::vector<double>{2.5, 2.5, 2.5});  // biases start at 0: dy + dh
}

TEST_CASE("a dict and a trainer made before share_parameters keep the layer's own parameters alive",
          "[nn][share]") {
    nn::Dense shared(4, "", 3), tied(4, "", 3);
    shared.initialize(cpu());
    tied.initialize(cpu());
    const nn::ParameterDict before = tied.collect_params();
    nn::Trainer trainer(before, "sgd", {{"learning_rate", 1.0}});
    tied.share_parameters(shared.collect_params());
    REQUIRE(&tied.weight() == &shared.weight());
    // The old dict still reads the layer's own weight and bias (freed here once, and reused by the next layers).
    std::vector<std::unique_ptr<nn::Dense>> others;
    for (int i = 0; i < 8; ++i) {
        others.push_back(std::make_unique<nn::Dense>(4, "", 3));
        others.back()->collect_params().initialize({cpu()}, false, nn::Initializer::Constant(0));
    }
    REQUIRE(before["weight"].shape() == Shape{4, 3});
    REQUIRE(before["bias"].shape() == Shape{4});
    REQUIRE(&before["weight"] != &tied.weight());
    {
        auto rec = autograd::record();
        tied(ones({1, 3})).sum().backward();
    }
    // The trainer's parameters are no longer the layer's: their gradients are stale, as in Gluon.
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { trainer.step(1); }),
                        "the gradient of parameter weight on cpu(0) was not written by backward()");
    for (auto& o : others) REQUIRE(values(o->weight().data()) == std::vector<double>(12, 0.0));
}

TEST_CASE("share_parameters refuses parameters that are missing or of another shape and changes nothing",
          "[nn][share][errors]") {
    nn::Dense source(8, "", 20), no_bias(8, "", 0, false), wider(4);
    PX_REQUIRE_MENTIONS(message_of<ShapeError>([&] { wider.share_parameters(source.collect_params()); }),
                        "Dense(? -> 4): share_parameters: the shared weight is (8, 20) and this layer's is (4, 0)");
    nn::Dense biased(8);
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { biased.share_parameters(no_bias.collect_params()); }),
                        "share_parameters: the parameters given have no bias (they are: weight); give a layer's own");
    REQUIRE(&biased.weight() != &no_bias.weight());  // the weight was not taken either
    nn::Parameter loose("weight", {8, 20});
    nn::ParameterDict given;
    given.add("weight", &loose);
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { no_bias.share_parameters(given); }),
                        "share_parameters: weight is not a layer's parameter; share a layer's own");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { no_bias.share_parameters(nn::ParameterDict{}); }),
                        "have no weight (they are: none)");
}

TEST_CASE("a network initializer sets its weights while biases and BatchNorm keep their own also for deferred shapes",
          "[nn][init]") {
    nn::Sequential net;
    net.add(nn::Dense(4, "relu"), nn::BatchNorm(), nn::Dense(3, "", 4));  // the first's input size inferred
    net.initialize(nn::Initializer::Constant(0.25), cpu());
    REQUIRE(!net[0].weight().initialized());
    net(ones({2, 5}));
    auto params = net.collect_params();
    REQUIRE(values(params["0.weight"].data()) == std::vector<double>(20, 0.25));
    REQUIRE(values(params["2.weight"].data()) == std::vector<double>(12, 0.25));
    REQUIRE(values(params["0.bias"].data()) == std::vector<double>(4, 0.0));
    REQUIRE(values(params["1.gamma"].data()) == std::vector<double>(4, 1.0));
    REQUIRE(values(params["1.running_var"].data()) == std::vector<double>(4, 1.0));
    // initialize_as overrides a parameter's own initializer; initialize does not.
    params["0.bias"].initialize({cpu()}, true, nn::Initializer::One());
    REQUIRE(values(params["0.bias"].data()) == std::vector<double>(4, 0.0));
    params["0.bias"].initialize_as(nn::Initializer::One(), {cpu()}, true);
    REQUIRE(values(params["0.bias"].data()) == std::vector<double>(4, 1.0));
}

TEST_CASE("a frozen parameter is left alone by a trainer made before and trained again once unfrozen",
          "[nn][freeze]") {
    nn::Parameter a("a", {3}), b("b", {3});
    a.initialize({cpu()}, false, nn::Initializer::Constant(1));
    b.initialize({cpu()}, false, nn::Initializer::Constant(2));
    nn::ParameterDict params = dict_of({{"a", &a}, {"b", &b}});
    nn::Trainer trainer(params, "sgd", {{"learning_rate", 0.5}, {"momentum", 0.9}});
    size_t hooked = 0;
    trainer.set_gradient_hook([&](std::vector<Tensor>& g) { hooked = g.size(); });
    const Tensor x = array({1.0, 2.0, 4.0}).astype(DType::float32);
    auto step = [&] {
        Tensor l;
        {
            auto r = autograd::record();
            l = ((a.data() + b.data()) * x).sum();
        }
        l.backward();
        trainer.step(1);
    };
    step();  // both: p - 0.5 * x
    REQUIRE(values(a.data()) == std::vector<double>{0.5, 0, -1});
    REQUIRE(hooked == 2);
    a.set_grad_req(nn::GradReq::null);
    REQUIRE(a.grad_req() == nn::GradReq::null);
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { a.grad(); }), "has no gradient (grad_req null");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { a.list_grad(); }), "frozen");
    step();  // b alone: its momentum 0.9 * x + x
    REQUIRE(values(a.data()) == std::vector<double>{0.5, 0, -1});
    PX_REQUIRE_CLOSE(values(b.data()), (std::vector<double>{2 - 0.5 - 0.95, 2 - 1 - 1.9, 2 - 2 - 3.8}), 1e-6);
    REQUIRE(hooked == 1);
    a.set_grad_req(nn::GradReq::write);
    step();  // a's momentum kept while frozen: 0.9 * x + x again
    PX_REQUIRE_CLOSE(values(a.data()), (std::vector<double>{0.5 - 0.95, 0 - 1.9, -1 - 3.8}), 1e-6);
    REQUIRE(hooked == 2);
}

TEST_CASE("state a layer updates itself stays grad_req null", "[nn][freeze][errors]") {
    nn::Sequential net;
    net.add(nn::Dense(2, "", 2), nn::BatchNorm(0.9, 1e-5, 2));
    net.initialize(cpu());
    auto params = net.collect_params();
    REQUIRE(!params["1.running_mean"].differentiable());
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { params["1.running_mean"].set_grad_req(nn::GradReq::write); }),
                        "running_mean is state its layer updates itself");
    params.set_grad_req(nn::GradReq::null);  // freezes everything
    params.set_grad_req(nn::GradReq::write);  // unfreezes all but the running statistics
    for (auto& [name, p] : params)
        REQUIRE(p->grad_req() == (name.find("running") == std::string::npos ? nn::GradReq::write : nn::GradReq::null));
    net[0].collect_params().set_grad_req(nn::GradReq::null);
    REQUIRE(net.summary(ones({3, 2})).find("trainable 4, not trainable 10") != std::string::npos);
}

TEST_CASE("grad_req add sums the gradients of several backward passes until zero_grad", "[nn][freeze]") {
    nn::Parameter w("w", {2}, nn::Initializer::One(), nn::GradReq::add);
    w.initialize({cpu()});
    const Tensor x = array({1.0, -3.0}).astype(DType::float32);
    backward_through(w, x);
    backward_through(w, x * 2.0);
    REQUIRE(values(w.grad()) == std::vector<double>{3, -9});
    nn::ParameterDict d = dict_of({{"w", &w}});
    nn::Trainer trainer(d, "sgd", {{"learning_rate", 0.1}});
    trainer.step(3);  // the summed gradient, divided by the batch size
    PX_REQUIRE_CLOSE(values(w.data()), (std::vector<double>{0.9, 1.3}), 1e-6);
    d.zero_grad();
    REQUIRE(values(w.grad()) == std::vector<double>{0, 0});
    backward_through(w, x);
    REQUIRE(values(w.grad()) == std::vector<double>{1, -3});
    // write replaces: set back, one backward gives x alone.
    w.set_grad_req(nn::GradReq::write);
    backward_through(w, x);
    backward_through(w, x);
    REQUIRE(values(w.grad()) == std::vector<double>{1, -3});
}

TEST_CASE("lr_mult and wd_mult scale the learning rate and weight decay per parameter", "[nn][freeze]") {
    nn::Parameter a("a", {2}), b("b", {2}), c("c", {2});
    for (auto* p : {&a, &b, &c}) p->initialize({cpu()}, false, nn::Initializer::Constant(1));
    b.set_lr_mult(2);
    c.set_wd_mult(0);
    nn::ParameterDict d = dict_of({{"a", &a}, {"b", &b}, {"c", &c}});
    nn::Trainer trainer(d, "sgd", {{"learning_rate", 0.1}, {"wd", 0.5}});
    const Tensor x = array({1.0, 2.0}).astype(DType::float32);
    Tensor l;
    {
        auto r = autograd::record();
        l = ((a.data() + b.data() + c.data()) * x).sum();
    }
    l.backward();
    trainer.step(1);
    // p - lr * lr_mult * (g + wd * wd_mult * p)
    PX_REQUIRE_CLOSE(values(a.data()), (std::vector<double>{1 - 0.1 * 1.5, 1 - 0.1 * 2.5}), 1e-6);
    PX_REQUIRE_CLOSE(values(b.data()), (std::vector<double>{1 - 0.2 * 1.5, 1 - 0.2 * 2.5}), 1e-6);
    PX_REQUIRE_CLOSE(values(c.data()), (std::vector<double>{1 - 0.1, 1 - 0.2}), 1e-6);
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { a.set_lr_mult(-1); }), "a: lr_mult must be finite and >= 0");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { a.set_wd_mult(NAN); }), "a: wd_mult must be finite");
}

TEST_CASE("select picks parameters whose names match from their start", "[nn][freeze]") {
    nn::Sequential net;
    net.add(nn::Dense(2, "", 2), nn::BatchNorm(0.9, 1e-5, 2), nn::Dense(2, "", 2));
    auto names = [](const nn::ParameterDict& d) {
        std::vector<std::string> out;
        for (auto& [n, p] : d) out.push_back(n);
        return out;
    };
    REQUIRE(names(net.collect_params().select(".*bias")) == std::vector<std::string>{"0.bias", "2.bias"});
    REQUIRE(names(net.collect_params().select("1\\.")) ==
            std::vector<std::string>{"1.gamma", "1.beta", "1.running_mean", "1.running_var"});
    REQUIRE(net.collect_params().select("bias").size() == 0);  // from the start, as re.match
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { net.collect_params().select("(["); }),
                        "'([' is not a regular expression");
}

TEST_CASE("trainer states: a parameter frozen in every update has none and the file still loads", "[nn][freeze]") {
    nn::Parameter a("a", {2}), b("b", {2});
    for (auto* p : {&a, &b}) p->initialize({cpu()}, false, nn::Initializer::Constant(1));
    nn::ParameterDict d = dict_of({{"a", &a}, {"b", &b}});
    a.set_grad_req(nn::GradReq::null);
    nn::Trainer trainer(d, "adam", {});
    const Tensor x = array({1.0, 2.0}).astype(DType::float32);
    backward_through(b, x);
    trainer.step(1);
    const std::string path = "test_frozen.states";
    trainer.save_states(path);
    const auto bytes = nn::param_file::read_file(path);
    std::vector<std::string> names;
    for (auto& e : nn::param_file::decode(bytes.data(), bytes.size(), path)) names.push_back(e.name);
    REQUIRE(std::count(names.begin(), names.end(), "b.state") == 1);
    REQUIRE(std::count(names.begin(), names.end(), "a.state") == 0);
    nn::Trainer resumed(d, "adam", {});
    resumed.load_states(path);
    REQUIRE(resumed.num_update() == 1);
    // Unfrozen since: loaded into a trainer where it is trained, it starts
    // from a zero state, its bias corrections from its own first update (the
    // first Adam step moves each value by the learning rate, as PyTorch's).
    a.set_grad_req(nn::GradReq::write);
    nn::Trainer unfrozen(d, "adam", {{"learning_rate", 0.1}});
    unfrozen.load_states(path);
    backward_through(a, x);
    backward_through(b, x);
    unfrozen.step(1);
    PX_REQUIRE_CLOSE(values(a.data()), (std::vector<double>{0.9, 0.9}), 1e-6);
    REQUIRE(unfrozen.num_update() == 2);
    unfrozen.save_states(path);
    const auto bytes2 = nn::param_file::read_file(path);
    std::vector<int64_t> counts;
    for (auto& e : nn::param_file::decode(bytes2.data(), bytes2.size(), path))
        if (e.name == "a.updates" || e.name == "b.updates") {
            int64_t n = 0;
            std::memcpy(&n, e.data.data(), sizeof n);
            counts.push_back(n);
        }
    REQUIRE(counts == std::vector<int64_t>{1, 2});
    std::remove(path.c_str());
}

TEST_CASE("parameters named as biases and gammas start at zero and one whatever the network is given", "[nn][init]") {
    nn::Parameter bias("my_bias", {3}), gamma("gamma", {3}), weight("w", {2, 3});
    for (auto* p : {&bias, &gamma, &weight}) p->initialize({cpu()}, false, nn::Initializer::Constant(5));
    REQUIRE(values(bias.data()) == std::vector<double>(3, 0.0));
    REQUIRE(values(gamma.data()) == std::vector<double>(3, 1.0));
    REQUIRE(values(weight.data()) == std::vector<double>(6, 5.0));
    // reset_ctx before initialize, the shape still to come: the layer's own values.
    nn::BatchNorm bn;
    bn.collect_params().reset_ctx(cpu());
    bn(ones({2, 3}));
    auto params = bn.collect_params();
    REQUIRE(values(params["gamma"].data()) == std::vector<double>(3, 1.0));
    REQUIRE(values(params["running_var"].data()) == std::vector<double>(3, 1.0));
    REQUIRE(values(params["beta"].data()) == std::vector<double>(3, 0.0));
    // An initialized parameter waiting for its shape is initialized: again needs force_reinit.
    nn::Dense d(2);
    d.initialize(nn::Initializer::Constant(2), cpu());
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { d.initialize(cpu()); }),
                        "initialize: every parameter is already initialized (weight, bias); pass force_reinit=true");
    d(ones({1, 3}));
    REQUIRE(values(d.weight().data()) == std::vector<double>(6, 2.0));
}

TEST_CASE("initialize leaves the parameters already initialized and initializes the blocks added since, as Gluon's",
          "[nn][initialize]") {
    nn::Sequential net;
    net.add(nn::Dense(3, "", 2));
    net.initialize(nn::Initializer::Constant(2), cpu());
    net.add(nn::Dense(2, "", 3));
    // It had thrown at the first layer's weight, leaving the new layer without values.
    net.initialize(nn::Initializer::Constant(5), cpu());
    auto params = net.collect_params();
    CHECK(values(params["0.weight"].data()) == std::vector<double>(6, 2.0));
    CHECK(values(params["1.weight"].data()) == std::vector<double>(6, 5.0));
    CHECK(values(net(ones({1, 2}))) == std::vector<double>{60, 60});  // 2 + 2 = 4 per unit, then 5 * (4 + 4 + 4)
    net.initialize(nn::Initializer::Constant(1), cpu(), /*force_reinit=*/true);
    CHECK(values(params["0.weight"].data()) == std::vector<double>(6, 1.0));
}

TEST_CASE("set_data and load_parameters write a trainable parameter's own tensors in place",
          "[nn][initialize]") {
    const std::string path = "/tmp/plexus-in-place-" + std::to_string(::getpid()) + ".params";
    nn::Dense d(2, "", 2);
    d.initialize(nn::Initializer::Constant(1), {cpu(0), cpu(1)});
    const Tensor held = d.weight().data(), held1 = d.weight().data(cpu(1));
    d.weight().set_data(full({2, 2}, 5.0));  // a handle kept had gone on reading 1
    CHECK(values(held) == std::vector<double>(4, 5.0));
    CHECK(values(held1) == std::vector<double>(4, 5.0));
    nn::Dense other(2, "", 2);
    other.initialize(nn::Initializer::Constant(7), cpu());
    other.save_parameters(path);
    d.load_parameters(path);
    CHECK(values(held) == std::vector<double>(4, 7.0));
    CHECK(values(held1) == std::vector<double>(4, 7.0));
    // A recorded op that read the old values refuses backward, as PyTorch's in-place check.
    Tensor x = ones({1, 2});
    x.attach_grad();
    auto recording = autograd::record();
    Tensor y = d(x).sum();
    d.weight().set_data(full({2, 2}, 3.0));
    CHECK_THAT(message_of<InvalidArgumentError>([&] { y.backward(); }), Catch::Contains("written in place since"));
    std::remove(path.c_str());
}

TEST_CASE("writes autograd cannot track replace the tensors so a recorded gradient keeps the values it read",
          "[nn][initialize]") {
    // A frozen weight: its tensor has no gradient, so a write in place would go unseen by backward.
    nn::Dense d(2, "", 3, /*use_bias=*/false);
    d.initialize(nn::Initializer::Constant(2), cpu());
    d.weight().set_grad_req(nn::GradReq::null);
    Tensor x = ones({1, 3});
    x.attach_grad();
    {
        auto recording = autograd::record();
        Tensor y = d(x).sum();
        d.weight().set_data(zeros({2, 3}));  // written in place, x's gradient had been 0
        y.backward();
    }
    CHECK(values(x.grad()) == std::vector<double>(3, 4.0));  // the old weight's column sums
    CHECK(values(d.weight().data()) == std::vector<double>(6, 0.0));
    // BatchNorm's statistics, read by a prediction under record, then updated by a training pass.
    nn::BatchNorm bn;
    bn.initialize(cpu());
    const Tensor batch = array(std::vector<float>{1, 5, 2, 8}, {4, 1});
    {
        auto recording = autograd::record();
        bn(batch);  // running mean 0.1 * 4 = 0.4, variance 0.9 * 1 + 0.1 * 10 (unbiased) = 1.9
    }
    Tensor xp = array(std::vector<float>{1, 2}, {2, 1});
    xp.attach_grad();
    {
        auto recording = autograd::record();
        Tensor predicted;
        {
            auto predicting = autograd::predict_mode();
            predicted = bn(xp);
        }
        Tensor loss = predicted.sum();
        bn(array(std::vector<float>{0, 100, -100, 50}, {4, 1}));  // a training pass: new statistics
        loss.backward();
    }
    // d/dx of (x - mean) / sqrt(var + eps): with the variance the prediction used (it had read the new one).
    const double want = 1.0 / std::sqrt(1.9 + 1e-5);
    CHECK(values(xp.grad())[0] == Approx(want).epsilon(1e-5));
}

TEST_CASE("reset_ctx of a parameter never initialized makes it there when its shape is known", "[nn][initialize]") {
    nn::Dense d(2, "", 3);
    d.collect_params().reset_ctx(cpu(1));
    // It had waited for a shape it already had: initialize() said it was, the forward call that it was not.
    CHECK(d.weight().devices() == std::vector<Device>{cpu(1)});
    CHECK(d(ones({1, 3}, cpu(1))).shape() == Shape{1, 2});
}

TEST_CASE("load_parameters without devices keeps each parameter where it was initialized, as Gluon's ctx=None",
          "[nn][initialize]") {
    const std::string path = "/tmp/plexus-load-keeps-" + std::to_string(::getpid()) + ".params";
    nn::Dense saved(2, "", 2);
    saved.initialize(nn::Initializer::Constant(3), cpu());
    saved.save_parameters(path);
    nn::Dense spread(2, "", 2);
    spread.initialize(nn::Initializer::Constant(1), {cpu(0), cpu(1)});
    spread.load_parameters(path);  // had moved every parameter to cpu(0) alone
    CHECK(spread.weight().devices() == std::vector<Device>{cpu(0), cpu(1)});
    CHECK(values(spread.weight().data(cpu(1))) == std::vector<double>(4, 3.0));
    nn::Dense fresh(2, "", 2);
    fresh.load_parameters(path);
    CHECK(fresh.weight().devices() == std::vector<Device>{cpu(0)});
    nn::Dense deferred(2);  // its input size comes at the first forward call
    deferred.initialize(cpu(1));
    deferred.load_parameters(path);  // had gone to cpu(0)
    CHECK(deferred.weight().devices() == std::vector<Device>{cpu(1)});
    fresh.load_parameters(path, cpu(1));
    CHECK(fresh.weight().devices() == std::vector<Device>{cpu(1)});
    std::remove(path.c_str());
}

TEST_CASE("setting grad_req to what it is keeps the gradient and zero_grad works while recording", "[nn][freeze]") {
    nn::Parameter w("w", {2}, nn::Initializer::One(), nn::GradReq::add);
    w.initialize({cpu()});
    const Tensor x = array({1.0, 2.0}).astype(DType::float32);
    backward_through(w, x);
    w.set_grad_req(nn::GradReq::add);
    REQUIRE(values(w.grad()) == std::vector<double>{1, 2});
    {
        auto r = autograd::record();
        w.zero_grad();
    }
    REQUIRE(values(w.grad()) == std::vector<double>{0, 0});
    w.set_grad_req(nn::GradReq::null);
    w.zero_grad();  // nothing to clear
}

TEST_CASE("a grad_req outside its enumeration is refused", "[nn][freeze][errors]") {
    nn::Parameter w("w", {2});
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { w.set_grad_req(static_cast<nn::GradReq>(7)); }),
                        "w: unknown grad_req");
    REQUIRE(w.grad_req() == nn::GradReq::write);
}

TEST_CASE("set_data refuses a parameter not initialized yet and names both shapes", "[nn][errors]") {
    nn::Parameter p("w", {2, 3});
    // Its values had been dropped without a word, and initialize() made others.
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { p.set_data(ones({2, 3})); }),
                        "w: set_data: the parameter has no values yet; initialize() makes them");
    p.initialize({cpu()});
    PX_REQUIRE_MENTIONS(message_of<ShapeError>([&] { p.set_data(ones({3, 2})); }),
                        "w: new values of shape (3, 2) for a parameter of shape (2, 3)");
    p.set_data(full({2, 3}, 7.0, cpu(), DType::float32));
    REQUIRE(values(p.data()) == std::vector<double>(6, 7.0));
}
