// The trainer's optimizers (sgd, nag, adam, adamw) and its saved state: a
// run stopped and resumed from saved parameters and states ends where an
// unbroken one does, bit for bit.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "../support.hpp"
#include "nn/param_file.hpp"
#include "plexus/nn.hpp"

using namespace plexus;
using pxtest::message_of;
using pxtest::values;
using pxtest::same_values;

namespace {
// A network with every kind of state: Adam's moments, BatchNorm's running
// statistics, and dropout's draws from the random stream.
nn::Sequential small_net() {
    nn::Sequential net;
    net.add(nn::Dense(8, "relu", 4), nn::BatchNorm(0.9, 1e-5, 8), nn::Dropout(0.3), nn::Dense(3, "", 8));
    return net;
}

Tensor batch_x(int step) {
    std::vector<double> v(24);
    for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(double(i) * 0.7 + step);
    return array(v, {6, 4}).astype(DType::float32);
}
Tensor batch_y(int step) {
    std::vector<int32_t> v(6);
    for (size_t i = 0; i < v.size(); ++i) v[i] = int32_t((i + size_t(step)) % 3);
    return array(v, {6});
}

void train(nn::Sequential& net, nn::Trainer& trainer, int from, int to) {
    loss::SoftmaxCrossEntropyLoss loss_fn;
    for (int step = from; step < to; ++step) {
        Tensor l;
        {
            auto r = autograd::record();
            l = loss_fn(net(batch_x(step)), batch_y(step));
        }
        l.backward();
        trainer.step(6);
    }
}

std::vector<std::vector<double>> all_values(nn::Sequential& net) {
    std::vector<std::vector<double>> out;
    for (auto& [name, p] : net.collect_params()) out.push_back(values(p->data()));
    return out;
}
}  // namespace

TEST_CASE("adam's first step moves each parameter by the learning rate, against the gradient's sign", "[nn][optimizers]") {
    nn::Parameter w("w", {3});
    w.initialize({cpu()});
    w.set_data(array(std::vector<double>{1, 1, 1}, {3}).astype(DType::float32));
    nn::ParameterDict params;
    params.add("w", &w);
    nn::Trainer trainer(params, "adam", {{"learning_rate", 0.1}});
    Tensor x = array(std::vector<double>{0.001, -50, 2}, {3}).astype(DType::float32);
    Tensor l;
    {
        auto r = autograd::record();
        l = (w.data() * x).sum();  // the gradient is x
    }
    l.backward();
    trainer.step(1);
    PX_REQUIRE_CLOSE(values(w.data()), (std::vector<double>{0.9, 1.1, 0.9}), 1e-5);
    REQUIRE(trainer.num_update() == 1);
    REQUIRE(nn::Trainer(params, "Adam", {}).optimizer() == "adam");  // any case, as MXNet's registry
}

TEST_CASE("adagrad, rmsprop and adadelta follow MXNet's formulas, against float64 by hand", "[nn][optimizers]") {
    const std::vector<double> w0{1.0, -2.0, 0.5}, x{0.3, -1.5, 2.0};  // the gradient of sum(w * x) is x
    struct Case {
        const char* name;
        std::map<std::string, double> options;
    };
    for (const Case& c : {Case{"adagrad", {{"learning_rate", 0.1}, {"wd", 0.01}}},
                          Case{"rmsprop", {{"learning_rate", 0.01}, {"gamma1", 0.8}, {"wd", 0.01}}},
                          Case{"adadelta", {{"rho", 0.9}, {"wd", 0.01}}}}) {
        DYNAMIC_SECTION(c.name) {
            nn::Parameter w("w", {3});
            w.initialize({cpu()});
            w.set_data(array(w0, {3}));  // float64
            nn::ParameterDict params;
            params.add("w", &w);
            nn::Trainer trainer(params, c.name, c.options);
            std::vector<double> want = w0, s(3, 0.0), dx(3, 0.0);
            const std::string name = c.name;
            for (int step = 0; step < 3; ++step) {
                Tensor l;
                {
                    auto r = autograd::record();
                    l = (w.data() * array(x, {3})).sum();
                }
                l.backward();
                trainer.step(1);
                for (size_t i = 0; i < 3; ++i) {
                    const double g = x[i], wd = 0.01;
                    if (name == "adagrad") {  // MXNet's eps 1e-7
                        s[i] += g * g;
                        want[i] -= 0.1 * (g / std::sqrt(s[i] + 1e-7) + wd * want[i]);
                    } else if (name == "rmsprop") {  // eps 1e-8
                        const double gw = g + wd * want[i];
                        s[i] = 0.8 * s[i] + 0.2 * gw * gw;
                        want[i] -= 0.01 * gw / std::sqrt(s[i] + 1e-8);
                    } else {  // adadelta: eps 1e-5, rate 1
                        const double gw = g + wd * want[i];
                        s[i] = 0.9 * s[i] + 0.1 * gw * gw;
                        const double step_i = std::sqrt(dx[i] + 1e-5) / std::sqrt(s[i] + 1e-5) * gw;
                        dx[i] = 0.9 * dx[i] + 0.1 * step_i * step_i;
                        want[i] -= step_i;
                    }
                }
                PX_REQUIRE_CLOSE(values(w.data()), want, 2e-6);  // the parameter is float32
            }
        }
    }
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([] {
                            nn::ParameterDict none;
                            nn::Trainer(none, "rmsprop", {{"gamma1", 1.0}});
                        }),
                        "gamma1 and rho must be in [0, 1)");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([] {
                            nn::ParameterDict none;
                            nn::Trainer(none, "adagrad", {{"momentum", 0.9}});
                        }),
                        "unknown adagrad option 'momentum' (learning_rate, epsilon, wd)");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([] {
                            nn::ParameterDict none;
                            nn::Trainer(none, "lamb", {});
                        }),
                        "unknown optimizer 'lamb' (sgd, nag, adam, adamw, adagrad, rmsprop, adadelta)");
}

TEST_CASE("every optimizer resumes exactly from saved parameters and states", "[nn][optimizers]") {
    for (const char* opt : {"sgd", "nag", "adam", "adamw", "adagrad", "rmsprop", "adadelta"}) {
        DYNAMIC_SECTION(opt) {
            std::map<std::string, double> options{{"learning_rate", 0.05}, {"wd", 0.01}};
            if (std::string(opt) == "sgd" || std::string(opt) == "nag") options["momentum"] = 0.9;
            seed(7);
            nn::Sequential unbroken = small_net();
            unbroken.initialize(cpu());
            nn::Trainer t1(unbroken.collect_params(), opt, options);
            train(unbroken, t1, 0, 3);
            const std::string params = std::string("test_resume_") + opt + ".params",
                              states = std::string("test_resume_") + opt + ".states";
            unbroken.save_parameters(params);
            t1.save_states(states);
            train(unbroken, t1, 3, 6);

            // A new process's worth: another network and trainer, another seed.
            seed(12345);
            nn::Sequential resumed = small_net();
            resumed.initialize(cpu());
            resumed.load_parameters(params);
            nn::Trainer t2(resumed.collect_params(), opt, options);
            t2.load_states(states);
            REQUIRE(t2.num_update() == 3);
            train(resumed, t2, 3, 6);
            REQUIRE(all_values(resumed) == all_values(unbroken));
            std::remove(params.c_str());
            std::remove(states.c_str());
        }
    }
}

TEST_CASE("a trainer's states move with its parameters to another device (reset_ctx)", "[nn][optimizers]") {
    for (const char* opt : {"nag", "adam"}) {
        DYNAMIC_SECTION(opt) {
            std::map<std::string, double> options{{"learning_rate", 0.05}};
            if (std::string(opt) == "nag") options["momentum"] = 0.9;
            auto run = [&](bool move) {
                seed(7);
                nn::Sequential net;
                net.add(nn::Dense(8, "relu", 4), nn::Dense(3, "", 8));
                net.initialize(cpu(0));
                nn::Trainer trainer(net.collect_params(), opt, options);
                loss::SoftmaxCrossEntropyLoss loss_fn;
                Device at = cpu(0);
                for (int step = 0; step < 6; ++step) {
                    if (move && step == 3) net.collect_params().reset_ctx(at = cpu(1));
                    Tensor l;
                    {
                        auto r = autograd::record();
                        l = loss_fn(net(batch_x(step).as_in_context(at)), batch_y(step).as_in_context(at));
                    }
                    l.backward();
                    trainer.step(6);  // it had refused: "px_adam_update: inputs are on different devices"
                }
                REQUIRE(net.collect_params()["0.weight"].data().device() == at);
                return all_values(net);
            };
            REQUIRE(run(true) == run(false));
        }
    }
}

TEST_CASE("trainer options and state files that do not fit are refused, naming why", "[nn][optimizers][errors]") {
    nn::Sequential net = small_net();
    net.initialize(cpu());
    auto params = net.collect_params();
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { nn::Trainer(params, "ftrl", {}); }),
                        "unknown optimizer 'ftrl' (sgd, nag, adam, adamw, adagrad, rmsprop, adadelta)");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { nn::Trainer(params, "sgd", {{"beta1", 0.9}}); }),
                        "unknown sgd option 'beta1' (learning_rate, momentum, wd)");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { nn::Trainer(params, "adam", {{"beta2", 1.0}}); }),
                        "beta1 and beta2 must be in [0, 1)");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { nn::Trainer(params, "adam", {{"epsilon", 0}}); }),
                        "epsilon must be finite and > 0");
    nn::Trainer adam(params, "adam", {});
    train(net, adam, 0, 1);
    const std::string path = "test_states_refused.states";
    adam.save_states(path);
    nn::Trainer sgd(params, "sgd", {{"momentum", 0.9}});
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { sgd.load_states(path); }),
                        "holds the state of optimizer 'adam', this trainer's is 'sgd'");
    nn::Sequential other;
    other.add(nn::Dense(5, "", 4));
    other.initialize(cpu());
    nn::Trainer narrow(other.collect_params(), "adam", {});
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { narrow.load_states(path); }), "0.weight.state has shape (2, 32)");
    net.save_parameters(path);
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { adam.load_states(path); }), "is not a trainer state file");
    std::remove(path.c_str());
    REQUIRE_THROWS_AS(adam.load_states("no-such-file.states"), Error);
    REQUIRE(adam.num_update() == 1);  // nothing changed
}

TEST_CASE("learning-rate schedules give the rates computed by hand", "[nn][optimizers]") {
    nn::FactorScheduler factor(2, 0.5, 1.0);
    std::vector<double> got;
    for (int64_t n = 0; n < 6; ++n) got.push_back(factor(n));
    // MXNet 1.x's FactorScheduler: `while num_update > count + step: count += step; base_lr *= factor`.
    REQUIRE(got == std::vector<double>{1, 1, 1, 0.5, 0.5, 0.25});
    nn::FactorScheduler warm(2, 0.5, 1.0, 1e-8, 4, 0.2);
    CHECK(warm(0) == Approx(0.2));
    CHECK(warm(2) == Approx(0.6));
    CHECK(warm(4) == Approx(0.5));
    CHECK(nn::FactorScheduler(1, 0.5, 1.0, 0.3)(5) == Approx(0.3));  // never below stop_factor_lr
    // d2l's MultiFactorScheduler(step=[15, 30], factor=0.5, base_lr=0.5), plotted
    // over range(num_epochs): 0.5 through 15, 0.25 through 30, then 0.125.
    nn::MultiFactorScheduler d2l({15, 30}, 0.5, 0.5);
    for (int64_t t = 0; t < 50; ++t) CHECK(d2l(t) == Approx(t <= 15 ? 0.5 : t <= 30 ? 0.25 : 0.125));
    nn::MultiFactorScheduler multi({2, 4}, 0.1, 1.0);
    CHECK(multi(2) == 1.0);
    CHECK(multi(3) == Approx(0.1));
    CHECK(multi(5) == Approx(0.01));
    nn::CosineScheduler cosine(10, 1.0, 0.0);
    CHECK(cosine(0) == 1.0);
    CHECK(cosine(5) == Approx(0.5));
    CHECK(cosine(10) == 0.0);
    CHECK(cosine(50) == 0.0);
    nn::CosineScheduler cosine_warm(12, 1.0, 0.1, 2);
    CHECK(cosine_warm(1) == Approx(0.5));
    CHECK(cosine_warm(7) == Approx(0.55));
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([] { nn::CosineScheduler(5, 1.0, 0.0, 5); }),
                        "max_update must be above warmup_steps");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([] { nn::MultiFactorScheduler({3, 2}, 0.5, 1.0); }),
                        "increasing");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([] { nn::FactorScheduler(0, 0.5, 1.0); }), "step must be >= 1");

    // A trainer follows its schedule, one rate per update.
    nn::Sequential net = small_net();
    net.initialize(cpu());
    nn::Trainer trainer(net.collect_params(), "sgd", {{"learning_rate", 1.0}});
    trainer.set_lr_scheduler(std::make_shared<nn::MultiFactorScheduler>(std::vector<int64_t>{2}, 0.1, 0.5));
    train(net, trainer, 0, 3);
    CHECK(trainer.learning_rate() == Approx(0.05));
    // The first update is number 1: a warm-up from 0 over 4 updates starts at
    // a quarter of the rate, not at 0 (an update that changed nothing).
    nn::Trainer warming(net.collect_params(), "sgd", {{"learning_rate", 1.0}});
    warming.set_lr_scheduler(std::make_shared<nn::CosineScheduler>(10, 0.8, 0.0, 4));
    CHECK(warming.learning_rate() == 0.0);  // before any update: the schedule's first rate, not the option's 1.0
    train(net, warming, 0, 1);
    CHECK(warming.learning_rate() == Approx(0.2));
    // A rate set by hand would be overridden at the next step: refused, as Gluon's.
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { warming.set_learning_rate(7); }),
                        "a learning-rate schedule sets the rate of every update");
    warming.set_lr_scheduler(nullptr);
    warming.set_learning_rate(7);
    CHECK(warming.learning_rate() == 7.0);
}

TEST_CASE("clip_global_norm scales every gradient by one factor", "[nn][optimizers]") {
    std::vector<Tensor> g{array(std::vector<double>{3, 4}, {2}).astype(DType::float32),
                          array(std::vector<double>{12}, {1}).astype(DType::float32)};
    const Tensor alias = g[0];  // another handle to the first gradient: scaled in place, it sees the new values
    REQUIRE(nn::clip_global_norm(g, 6.5) == Approx(13));
    REQUIRE(values(g[0]) == std::vector<double>{1.5, 2});
    REQUIRE(values(alias) == std::vector<double>{1.5, 2});
    REQUIRE(values(g[1]) == std::vector<double>{6});
    REQUIRE(nn::clip_global_norm(g, 100) == Approx(6.5));  // under the bound: unchanged
    REQUIRE(values(g[1]) == std::vector<double>{6});
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { nn::clip_global_norm(g, 0); }), "max_norm");
}

TEST_CASE("the regression and binary losses give the values computed by hand, and their gradients", "[nn][loss]") {
    Tensor pred = array(std::vector<double>{1, 2, 3, 4}, {2, 2}), label = array(std::vector<double>{0, 0, 3, 2}, {2, 2});
    REQUIRE(values(loss::L2Loss()(pred, label)) == std::vector<double>{1.25, 1.0});
    REQUIRE(values(loss::L1Loss()(pred, label)) == std::vector<double>{1.5, 1.0});
    // x = 0 too, where relu and abs have kinks the loss does not: the gradient is 0.5 - y there.
    Tensor x = array(std::vector<double>{0.5, 100, -100, -0.5, 0, 0}, {6}),
           y = array(std::vector<double>{1, 0, 0, 0, 1, 0.25}, {6});
    const auto bce = values(loss::SigmoidBinaryCrossEntropyLoss()(x, y));
    const double half = std::log1p(std::exp(-0.5)), sig = 1 / (1 + std::exp(-0.5));
    CHECK(bce[0] == Approx(half));
    CHECK(bce[1] == Approx(100));
    CHECK(bce[2] == Approx(0).margin(1e-40));
    CHECK(bce[3] == Approx(half));
    CHECK(bce[4] == Approx(std::log(2.0)));
    CHECK(bce[5] == Approx(std::log(2.0)));
    x.attach_grad();
    y.attach_grad();
    Tensor l;
    {
        auto r = autograd::record();
        l = loss::SigmoidBinaryCrossEntropyLoss()(x, y).sum();
    }
    l.backward();
    // sigmoid(x) - y, and -x for the label
    PX_REQUIRE_CLOSE(values(x.grad()), (std::vector<double>{sig - 1, 1, 0, 1 - sig, -0.5, 0.25}), 1e-12);
    PX_REQUIRE_CLOSE(values(y.grad()), (std::vector<double>{-0.5, -100, 100, 0.5, 0, 0}), 1e-12);
    PX_REQUIRE_MENTIONS(message_of<ShapeError>([&] { loss::L2Loss()(pred, y); }), "the label has shape (6,)");
}

TEST_CASE("load_states refuses a file with a state missing or a bad count, changing nothing", "[nn][optimizers][errors]") {
    nn::Sequential net = small_net();
    net.initialize(cpu());
    nn::Trainer adam(net.collect_params(), "adam", {});
    train(net, adam, 0, 2);
    const std::string path = "test_states_edited.states";
    adam.save_states(path);
    auto entries = nn::param_file::decode(nn::param_file::read_file(path).data(), nn::param_file::read_file(path).size(), path);
    auto edited = [&](const std::function<void(std::vector<nn::param_file::Entry>&)>& edit) {
        auto copy = entries;
        edit(copy);
        nn::param_file::write_atomically(path, nn::param_file::encode(copy));
    };
    nn::Trainer fresh(net.collect_params(), "adam", {});
    edited([](auto& es) {
        es.erase(std::remove_if(es.begin(), es.end(), [](auto& e) { return e.name == "3.bias.state"; }), es.end());
    });
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { fresh.load_states(path); }),
                        "holds an update count for 3.bias without its state");
    edited([](auto& es) {
        for (auto& e : es)
            if (e.name == "3.bias.updates") e.data.assign(8, 0), e.data[0] = 3;  // more than the trainer's 2
    });
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { fresh.load_states(path); }),
                        "3.bias has 3 updates, outside [0, 2]");
    edited([](auto& es) {
        for (auto& e : es)
            if (e.name == "3.bias.updates") e.dtype = PX_INT32, e.data.resize(4);
    });
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { fresh.load_states(path); }),
                        "3.bias.updates is not one int64");
    edited([](auto& es) {
        for (auto& e : es)
            if (e.name == "trainer.updates") e.data.assign(8, 0xff);  // -1
    });
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { fresh.load_states(path); }), "negative update count");
    edited([](auto& es) {
        for (auto& e : es)
            if (e.name == "trainer.updates") e.dtype = PX_FLOAT64;
    });
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { fresh.load_states(path); }), "not a trainer state file");
    REQUIRE(fresh.num_update() == 0);
    nn::Trainer plain(net.collect_params(), "sgd", {});
    edited([](auto& es) {
        for (auto& e : es)
            if (e.name == "trainer.optimizer") e.data.assign({'s', 'g', 'd'}), e.shape = {3};
    });
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { plain.load_states(path); }),
                        "which this trainer (no momentum) does not keep");
    std::remove(path.c_str());
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { nn::Trainer(net.collect_params(), "nag", {}); }),
                        "nag needs a momentum above 0");
}

TEST_CASE("grad_req add sums the gradients of several backward passes", "[nn][autograd]") {
    Tensor x = array(std::vector<double>{1, 2});
    x.attach_grad("add");
    for (int pass = 0; pass < 3; ++pass) {
        Tensor y;
        {
            auto r = autograd::record();
            y = (x * x).sum();
        }
        y.backward();
    }
    REQUIRE(values(x.grad()) == std::vector<double>{6, 12});  // 3 passes of 2x
    Tensor w = array(std::vector<double>{1, 2});
    w.attach_grad();  // "write": the last pass only
    for (int pass = 0; pass < 2; ++pass) {
        Tensor y;
        {
            auto r = autograd::record();
            y = (w * 3.0).sum();
        }
        y.backward();
    }
    REQUIRE(values(w.grad()) == std::vector<double>{3, 3});
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { w.attach_grad("null"); }), "grad_req 'null'");
}

TEST_CASE("an integer tensor with a fractional scalar computes in float64, as NumPy promotes", "[nn][autograd]") {
    Tensor i = array(std::vector<int32_t>{1, 2, -3}, {3});
    Tensor half = i * 0.5;
    REQUIRE(half.dtype() == DType::float64);
    REQUIRE(values(half) == std::vector<double>{0.5, 1, -1.5});
    REQUIRE(values(i < 1.5) == std::vector<double>{1, 0, 1});
    REQUIRE(values(0.5 + i) == std::vector<double>{1.5, 2.5, -2.5});
    REQUIRE((i * 2.0).dtype() == DType::int32);  // a whole number keeps the dtype
    REQUIRE((i * std::nan("")).dtype() == DType::float64);
}

TEST_CASE("tensors of two dtypes compute in the promoted one and each gradient comes back in its own dtype",
          "[nn][autograd]") {
    Tensor f = array(std::vector<double>{0.5, -2, 3}, {3}).astype(DType::float32);
    Tensor i = array(std::vector<int32_t>{1, 2, -3}, {3});
    REQUIRE((f + i).dtype() == DType::float32);
    REQUIRE(values(f + i) == std::vector<double>{1.5, 0, 0});
    REQUIRE(values(i - f) == std::vector<double>{0.5, 4, -6});
    REQUIRE(values(f * (f > 0.0)) == std::vector<double>{0.5, 0, 3});  // a comparison's uint8 as a mask
    REQUIRE(values(i < f) == std::vector<double>{0, 0, 1});             // compared in float32
    REQUIRE((i + i.astype(DType::int64)).dtype() == DType::int64);
    REQUIRE((f.astype(DType::float16) * f.astype(DType::bfloat16)).dtype() == DType::float32);
    const Tensor w = where(f > 0.0, f, i);
    REQUIRE(w.dtype() == DType::float32);
    REQUIRE(values(w) == std::vector<double>{0.5, 2, 3});
    REQUIRE(values(maximum(i, f)) == std::vector<double>{1, 2, 3});

    Tensor h = array(std::vector<double>{1, 2}, {2}).astype(DType::float16);
    Tensor g = array(std::vector<double>{3, 4}, {2}).astype(DType::float32);
    Tensor b = array(std::vector<double>{-1, 5}, {2}).astype(DType::bfloat16);
    for (Tensor* t : {&h, &g, &b}) t->attach_grad();
    Tensor y;
    {
        auto r = autograd::record();
        y = (h * g + where(g > 3.5, b, h)).sum();  // float32; where's float16 and bfloat16 meet in float32
    }
    REQUIRE(y.dtype() == DType::float32);
    y.backward();
    REQUIRE(h.grad().dtype() == DType::float16);
    REQUIRE(g.grad().dtype() == DType::float32);
    REQUIRE(b.grad().dtype() == DType::bfloat16);
    REQUIRE(values(h.grad()) == std::vector<double>{4, 4});  // g + (where's pick of h: the first element)
    REQUIRE(values(g.grad()) == std::vector<double>{1, 2});
    REQUIRE(values(b.grad()) == std::vector<double>{0, 1});
}

TEST_CASE("pick chooses one class per row and refuses an index outside the classes", "[nn][autograd]") {
    Tensor data = array(std::vector<double>{1, 2, 3, 4, 5, 6}, {2, 3});
    REQUIRE(values(pick(data, array(std::vector<int32_t>{2, 0}, {2}))) == std::vector<double>{3, 4});
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { pick(data, array(std::vector<int32_t>{3, 0}, {2})); }),
                        "outside [0, 3)");
    // A float index: NaN and fractions had picked nothing (0 0).
    REQUIRE(values(pick(data, array(std::vector<float>{1, 2}, {2}))) == std::vector<double>{2, 6});
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { pick(data, array(std::vector<float>{NAN, 1}, {2})); }),
                        "outside [0, 3): found nan");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { pick(data, array(std::vector<float>{0, 1.5}, {2})); }),
                        "pick: an index is not a whole number");
    PX_REQUIRE_MENTIONS(message_of<ShapeError>([&] { pick(data, array(std::vector<int32_t>{0}, {1})); }), "wants data (N, C)");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { data.sum({1, -1}); }), "axis -1 is given twice");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { data.sum({0, 2}); }), "axis 2 is out of range for rank 2");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { data.argmax(std::vector<int>{0, 1}); }), "one axis at a time");
}

TEST_CASE("pick reads the chosen value whatever the row's other values are and keeps the data's dtype",
          "[nn][autograd]") {
    // Infinities and NaN beside the chosen class (log-probabilities that
    // underflowed): picked by a one-hot product they had made it NaN.
    Tensor data = array(std::vector<float>{0.5f, -INFINITY, 0.1f, NAN, 2, 3, 1, 2, INFINITY}, {3, 3});
    const Tensor index = array(std::vector<int32_t>{0, 2, 2}, {3});
    CHECK(same_values(values(pick(data, index)), {0.5, 3, INFINITY}));
    data.attach_grad();
    {
        auto recording = autograd::record();
        pick(data, index).sum().backward();
    }
    CHECK(values(data.grad()) == std::vector<double>{1, 0, 0, 0, 0, 1, 0, 0, 1});
    const Tensor counts = pick(array(std::vector<int32_t>{7, -8, 2147483647, 5}, {2, 2}), array(std::vector<int64_t>{1, 0}, {2}));
    CHECK(counts.dtype() == DType::int32);  // the sum had widened it to int64
    CHECK(values(counts) == std::vector<double>{-8, 2147483647});
}

TEST_CASE("a step refuses a gradient backward did not write, as Gluon does, and ignore_stale_grad skips it",
          "[nn][optimizers]") {
    // Two parameters; the loss uses `used` alone.
    nn::Parameter used("used", {2}), unused("unused", {2});
    for (nn::Parameter* p : {&used, &unused}) {
        p->initialize({cpu(0), cpu(1)});
        p->set_data(array(std::vector<double>{1, 2}, {2}).astype(DType::float32));
    }
    nn::ParameterDict params;
    params.add("used", &used);
    params.add("unused", &unused);
    nn::Trainer trainer(params, "sgd", {{"learning_rate", 0.5}});
    auto backward_on = [&](std::initializer_list<nn::Parameter*> ps, double slope = 3.0) {
        for (nn::Parameter* p : ps)
            for (const Tensor& replica : p->list_data()) {
                Tensor l;
                {
                    auto r = autograd::record();
                    l = (replica * slope).sum();  // the gradient is the slope per element
                }
                l.backward();
            }
    };
    backward_on({&used});
    std::string msg = message_of<InvalidArgumentError>([&] { trainer.step(1); });
    REQUIRE(msg.find("Trainer::step: the gradient of parameter unused on cpu(0) was not written by backward() since "
                     "the last step") != std::string::npos);
    REQUIRE(msg.find("ignore_stale_grad") != std::string::npos);
    REQUIRE(values(used.data(cpu(0))) == std::vector<double>{1, 2});  // nothing changed
    REQUIRE(trainer.num_update() == 0);

    trainer.step(1, true);  // `used` moves by 0.5 * (3 + 3), the replicas' sum; `unused` stays
    for (const Device& d : {cpu(0), cpu(1)}) {
        PX_REQUIRE_CLOSE(values(used.data(d)), (std::vector<double>{-2, -1}), 1e-6);
        REQUIRE(values(unused.data(d)) == std::vector<double>{1, 2});
    }
    // The step used the gradients: a second step without backward() is refused.
    REQUIRE_THAT(message_of<InvalidArgumentError>([&] { trainer.step(1); }), Catch::Contains("parameter used on cpu(0)"));
    // One replica's gradient alone is stale too.
    for (const Tensor& replica : {used.data(cpu(0))}) {
        Tensor l;
        {
            auto r = autograd::record();
            l = (replica * 3.0).sum();
        }
        l.backward();
    }
    backward_on({&unused});
    REQUIRE_THAT(message_of<InvalidArgumentError>([&] { trainer.step(1); }), Catch::Contains("parameter used on cpu(1)"));
    backward_on({&used, &unused});
    trainer.step(1);
    PX_REQUIRE_CLOSE(values(unused.data(cpu(1))), (std::vector<double>{-2, -1}), 1e-6);
    // step_if_finite checks alike, and its skipped step uses the gradients too.
    REQUIRE_THAT(message_of<InvalidArgumentError>([&] { trainer.step_if_finite(1); }),
                 Catch::Contains("Trainer::step_if_finite: the gradient of parameter used"));
    backward_on({&used, &unused}, std::nan(""));  // overflowed
    REQUIRE_FALSE(trainer.step_if_finite(1));
    REQUIRE_THAT(message_of<InvalidArgumentError>([&] { trainer.step_if_finite(1); }), Catch::Contains("parameter used"));
}

TEST_CASE("loss options as Gluon's: class axis and dense labels and from_logits and weights", "[nn][losses]") {
    // pred (1, 2, 2), classes on axis 1: at position j the logits are (pred[0][0][j], pred[0][1][j]).
    const Tensor pred = array(std::vector<double>{0.0, 1.0, std::log(3.0), 1.0}, {1, 2, 2});
    const Tensor label = array(std::vector<int32_t>{1, 0}, {1, 2});
    // j = 0: logits (0, ln 3), label 1: -log(3/4); j = 1: logits (1, 1), label 0: log 2.
    const double l0 = -std::log(0.75), l1 = std::log(2.0);
    PX_REQUIRE_CLOSE(values(loss::SoftmaxCrossEntropyLoss(1)(pred, label)), (std::vector<double>{(l0 + l1) / 2}), 1e-12);
    // The same through sample weights of the loss's shape (1, 1, 2), and a global weight.
    const Tensor w = array(std::vector<double>{2.0, 0.0}, {1, 1, 2});
    PX_REQUIRE_CLOSE(values(loss::SoftmaxCrossEntropyLoss(1, true, false, 3)(pred, label, w)),
                     (std::vector<double>{3 * (2 * l0) / 2}), 1e-12);
    // Dense labels: one-hot gives the sparse values; (0.5, 0.5) at j = 0 gives the mean of both log-probabilities.
    const Tensor dense = array(std::vector<double>{0.5, 1.0, 0.5, 0.0}, {1, 2, 2});
    const double half = -(std::log(0.25) + std::log(0.75)) / 2;
    PX_REQUIRE_CLOSE(values(loss::SoftmaxCrossEntropyLoss(1, false)(pred, dense)), (std::vector<double>{(half + l1) / 2}),
                     1e-12);
    // from_logits picks -pred[label].
    const Tensor logp = array(std::vector<double>{-1.0, -2.0, -0.5, -3.0}, {2, 2});
    PX_REQUIRE_CLOSE(values(loss::SoftmaxCrossEntropyLoss(-1, true, true)(logp, array(std::vector<int32_t>{1, 0}, {2}))),
                     (std::vector<double>{2.0, 0.5}), 1e-12);
    // Probabilities for binary cross-entropy: -log(0.8) and -log(1 - 0.25).
    PX_REQUIRE_CLOSE(values(loss::SigmoidBinaryCrossEntropyLoss(true)(array(std::vector<double>{0.8, 0.25}, {2, 1}), array(std::vector<double>{1.0, 0.0}, {2, 1}))),
                     (std::vector<double>{-std::log(0.8), -std::log(0.75)}), 1e-9);
    PX_REQUIRE_CLOSE(values(loss::L1Loss(0.5)(array({1.0, -1.0}, {1, 2}), array({0.0, 0.0}, {1, 2}))),
                     (std::vector<double>{0.5}), 1e-12);
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { loss::SoftmaxCrossEntropyLoss(-4)(pred, label); }),
                        "axis -4 is out of range for a prediction of rank 3");
    PX_REQUIRE_MENTIONS(message_of<ShapeError>([&] { loss::SoftmaxCrossEntropyLoss()(array({1.0, 2.0}), label); }),
                        "the prediction must be (batch, ..., classes), got (2,)");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([] { loss::L2Loss{INFINITY}; }), "L2Loss: weight must be finite");
}

TEST_CASE("a trainer holds the parameters it updates: its network may go first", "[nn][optimizers]") {
    std::unique_ptr<nn::Trainer> trainer;
    Tensor weight, grad;  // handles on the parameter's values and gradient, which the step writes in place
    std::vector<double> before;
    {
        nn::Sequential net;
        net.add(nn::Dense(2, "", 3, /*use_bias=*/false));
        net.initialize(cpu());
        Tensor l;
        {
            auto r = autograd::record();
            l = net(array(std::vector<double>{1, 2, 3}, {1, 3}).astype(DType::float32)).sum();
        }
        l.backward();
        trainer = std::make_unique<nn::Trainer>(net.collect_params(), "sgd", std::map<std::string, double>{
                                                                                 {"learning_rate", 0.5}});
        nn::Parameter& w = *net.collect_params().begin()->second;
        weight = w.data();
        grad = w.grad();
        before = values(weight);
    }  // the network, and its blocks' references to the parameter, are gone
    trainer->step(1);  // (it had written into freed memory: ASan's heap-use-after-free)
    std::vector<double> want = before;
    const std::vector<double> g = values(grad);
    for (size_t i = 0; i < want.size(); ++i) want[i] -= 0.5 * g[i];
    PX_REQUIRE_CLOSE(values(weight), want, 1e-6);
    REQUIRE(g == std::vector<double>{1, 2, 3, 1, 2, 3});
}
