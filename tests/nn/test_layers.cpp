// nn layers, parameters, autograd rules and the trainer, checked against
// values computed by hand.
#include <catch2/catch.hpp>

#include <cmath>

#include "../support.hpp"
#include "plexus/nn.hpp"

using namespace plexus;
using pxtest::message_of;
using pxtest::values;

TEST_CASE("layers infer their input size and report their shapes", "[nn]") {
    nn::Sequential net;
    net.add(nn::Conv2D(6, 5, 1, 0, "relu"), nn::MaxPool2D(2, 2), nn::Conv2D(16, 3, 1, 0, "relu"), nn::AvgPool2D(2),
            nn::Flatten(), nn::Dropout(0.5), nn::Dense(120, "sigmoid"), nn::Dense(10, "tanh", 120));
    net.initialize(cpu());
    REQUIRE(net.collect_params().size() == 8);
    REQUIRE(net[7].weight().shape() == Shape{10, 120});
    REQUIRE(net[0].weight().initialized() == false);  // deferred until the first call
    Tensor y = net(zeros({3, 1, 28, 28}));
    REQUIRE(y.shape() == Shape{3, 10});
    REQUIRE(net[0].weight().shape() == Shape{6, 1, 5, 5});
    REQUIRE(net[6].weight().shape() == Shape{120, 400});
    REQUIRE(net[0].weight().data().device() == cpu());
    auto names = net.collect_params().items();
    REQUIRE(names[0].first == "0.weight");
    REQUIRE(names[1].first == "0.bias");
    REQUIRE(names[7].first == "7.bias");
    // Biases start at zero, weights within the Xavier bound sqrt(6 / (fan_in + fan_out)).
    for (double v : values(net[6].bias().data())) REQUIRE(v == 0);
    double bound = std::sqrt(6.0 / (400 + 120));
    auto w = values(net[6].weight().data());
    double lo = 1, hi = -1;
    for (double v : w) lo = std::min(lo, v), hi = std::max(hi, v);
    REQUIRE(lo >= -bound);
    REQUIRE(hi <= bound);
    REQUIRE(hi - lo > bound);  // spread over the range, not constant
    PX_REQUIRE_MENTIONS(net.describe(), "Conv2D(1 -> 6, kernel 5x5, relu)");
}

TEST_CASE("layer misuse is a clear error", "[nn][errors]") {
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([] { nn::Dense(10, "softmax"); }),
                        "unknown activation 'softmax' (use \"relu\", \"sigmoid\", \"tanh\", \"gelu\", \"silu\", "
                        "\"softplus\", \"softrelu\", or \"\")");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([] { nn::Dense(0); }), "units must be >= 1");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([] { nn::Conv2D(4, 0); }), "kernel height");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([] { nn::Conv2D(4, 3, 1, -1); }), "padding");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([] { nn::MaxPool2D(0); }), "pool size");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([] { nn::Dropout(1.0); }), "not in [0, 1)");
    nn::Sequential net;
    net.add(nn::Dense(4, "", 3), nn::Flatten());
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { net(zeros({2, 3})); }), "not initialized");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { net[2]; }), "no block 2");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { net[1].weight(); }), "Flatten has no weight");
    net.initialize(cpu());
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { net.initialize(cpu()); }), "force_reinit");
    net.initialize(cpu(), true);
    PX_REQUIRE_MENTIONS(message_of<ShapeError>([&] { net(zeros({2, 5})); }), "the input has 5 features, the layer takes 3");
    PX_REQUIRE_MENTIONS(message_of<ShapeError>([&] { nn::Conv2D(2, 3).forward(zeros({2, 3})); }), "got rank 2");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { net.collect_params()["nope"]; }), "no parameter named 'nope'");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { nn::Trainer(net.collect_params(), "ftrl", {}); }),
                        "unknown optimizer 'ftrl'");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { nn::Trainer(net.collect_params(), "sgd", {{"lr", 1}}); }),
                        "unknown sgd option 'lr'");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] {
                            nn::Trainer(net.collect_params(), "sgd", {{"learning_rate", -1}});
                        }), "learning_rate");
    nn::Trainer t(net.collect_params(), "sgd", {{"learning_rate", 0.1}});
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { t.step(0); }), "batch_size must be >= 1");
}

TEST_CASE("parameters live where they were initialized and move with reset_ctx", "[nn]") {
    nn::Dense d(3, "", 2);
    d.initialize(cpu(1));
    REQUIRE(d.weight().data().device() == cpu(1));
    auto msg = message_of<DeviceMismatchError>([&] { d(zeros({4, 2}, cpu(0))); });
    PX_REQUIRE_MENTIONS(msg, "lives on cpu(1), not on cpu(0)");
    auto before = values(d.weight().data());
    d.collect_params().reset_ctx(cpu(0));
    REQUIRE(d.weight().data().device() == cpu(0));
    REQUIRE(values(d.weight().data()) == before);
    REQUIRE(d(zeros({4, 2}, cpu(0))).device() == cpu(0));
}

// Run by nn.parameters_on_a_device_a_plugin_names with the misbehave test
// plugin (the CPU plugin under that name, with accelerators) loaded.
TEST_CASE("parameters initialized on accel(0) are found by it and by the plugin's name", "[.named]") {
    REQUIRE(num_devices(PX_DEVICE_ACCELERATOR) >= 1);
    const Device own = parse_device("misbehave:0");
    REQUIRE(resolve(accel(0)) == own);
    nn::Dense d(3, "", 2);
    d.initialize(accel(0));
    REQUIRE(d.weight().data().device() == own);  // by its own name
    REQUIRE(d.weight().data(accel(0)).device() == own);
    REQUIRE(d.weight().data(own).device() == own);
    REQUIRE(d(zeros({4, 2}, accel(0))).device() == own);
    auto msg = message_of<DeviceMismatchError>([&] { d(zeros({4, 2}, cpu(0))); });
    PX_REQUIRE_MENTIONS(msg, "lives on misbehave(0), not on cpu(0)");
}

TEST_CASE("a Dense layer's SGD step matches the hand computation", "[nn][trainer]") {
    // y = x W^T + b, loss = sum(y) over a batch of 2; dW = sum of rows of x, db = 2.
    nn::Dense d(2, "", 3);
    d.initialize(cpu());
    d.weight().set_data(array({1, 2, 3, 4, 5, 6}, {2, 3}));
    d.bias().set_data(array({0.5, -0.5}, {2}));
    Tensor x = array({1, 0, 2, 3, 1, 1}, {2, 3});
    nn::Trainer trainer(d.collect_params(), "sgd", {{"learning_rate", 0.1}, {"momentum", 0.5}, {"wd", 0.01}});
    std::vector<double> w{1, 2, 3, 4, 5, 6}, b{0.5, -0.5}, mw(6, 0), mb(2, 0);
    const double gx[3] = {4, 1, 3};  // column sums of x
    for (int step = 0; step < 2; ++step) {
        Tensor y;
        {
            auto scope = autograd::record();
            y = d(x).sum();
        }
        y.backward();
        REQUIRE(values(d.weight().grad()) == std::vector<double>{4, 1, 3, 4, 1, 3});
        trainer.step(2);
        for (int i = 0; i < 6; ++i) {
            double g = gx[i % 3] / 2 + 0.01 * w[i];
            mw[i] = 0.5 * mw[i] + g;
            w[i] -= 0.1 * mw[i];
        }
        for (int i = 0; i < 2; ++i) {
            double g = 2.0 / 2 + 0.01 * b[i];
            mb[i] = 0.5 * mb[i] + g;
            b[i] -= 0.1 * mb[i];
        }
        PX_REQUIRE_CLOSE(values(d.weight().data()), w, 1e-6);
        PX_REQUIRE_CLOSE(values(d.bias().data()), b, 1e-6);
    }
}

TEST_CASE("a block added twice shares its parameters: listed, initialized and updated once", "[nn][trainer]") {
    // y = W (W x + b) + b, loss = sum(y): h = W x + b = (3.5, 6.5); dW = 1 h^T + (W^T 1) x^T
    // = [[3.5, 6.5], [3.5, 6.5]] + [[4, 4], [6, 6]]; db = 1 + W^T 1 = (5, 7).
    auto d = std::make_shared<nn::Dense>(2, "", 2);
    nn::Sequential net;
    net.add_shared(d);
    net.add_shared(d);
    net.initialize(cpu());  // once per parameter: a second initialize of one would throw
    nn::ParameterDict params = net.collect_params();
    REQUIRE(params.size() == 2);
    CHECK(params.items()[0].first == "0.weight");
    CHECK(params.items()[1].first == "0.bias");
    d->weight().set_data(array({1, 2, 3, 4}, {2, 2}));
    d->bias().set_data(array({0.5, -0.5}, {2}));
    nn::Trainer trainer(params, "sgd", {{"learning_rate", 0.1}});
    Tensor loss;
    {
        auto scope = autograd::record();
        loss = net(array({1, 1}, {1, 2})).sum();
    }
    loss.backward();
    PX_REQUIRE_CLOSE(values(d->weight().grad()), (std::vector<double>{7.5, 10.5, 9.5, 12.5}), 1e-6);
    PX_REQUIRE_CLOSE(values(d->bias().grad()), (std::vector<double>{5, 7}), 1e-6);
    trainer.step(1);  // one update, not one per place the block is used
    PX_REQUIRE_CLOSE(values(d->weight().data()), (std::vector<double>{0.25, 0.95, 2.05, 2.75}), 1e-6);
    PX_REQUIRE_CLOSE(values(d->bias().data()), (std::vector<double>{0, -1.2}), 1e-6);
}

TEST_CASE("autograd keeps nothing outside record() and says what went wrong", "[nn][autograd]") {
    Tensor x = array({1, 2, 3});
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { x.grad(); }), "attach_grad");
    x.attach_grad();
    Tensor outside = (x * x).sum();
    REQUIRE(outside.autograd_meta() == nullptr);  // not recorded
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { outside.backward(); }), "nothing was recorded");
    Tensor y;
    {
        auto scope = autograd::record();
        REQUIRE(autograd::is_recording());
        REQUIRE(autograd::is_training());
        y = (x * x).sum();
        {
            auto paused = autograd::pause();
            REQUIRE(!autograd::is_recording());
            REQUIRE((x * 2.0).autograd_meta() == nullptr);
        }
        REQUIRE(x.slice_axis(0, 0, 1).autograd_meta() != nullptr);  // recorded, with a gradient
        REQUIRE(x.max().autograd_meta() != nullptr);
        REQUIRE(x.detach().max().item<float>() == 3);
    }
    REQUIRE(!autograd::is_recording());
    y.backward();
    REQUIRE(values(x.grad()) == std::vector<double>{2, 4, 6});
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { y.backward(); }), "only once");
    PX_REQUIRE_MENTIONS(message_of<DTypeError>([] { array(std::vector<int32_t>{1}).attach_grad(); }), "floating dtype");
    // A gradient reaching a tensor along two paths is summed.
    Tensor z;
    {
        auto scope = autograd::record();
        Tensor a = x * 3.0;
        z = (a + a * x).sum();
    }
    z.backward();
    REQUIRE(values(x.grad()) == std::vector<double>{9, 15, 21});  // 3 + 6x
}

TEST_CASE("two losses through one result: the second backward is refused unless the first retains the graph",
          "[nn][autograd]") {
    Tensor x = array({1, 2, 3});
    x.attach_grad();
    auto losses = [&] {
        auto scope = autograd::record();
        Tensor h = x * 2.0;
        return std::pair<Tensor, Tensor>{h.sum(), (h * 3.0).sum()};
    };
    const auto first = losses();  // (named pairs: clang's C++17 captures no structured binding)
    const Tensor l1 = first.first, l2 = first.second;
    l1.backward();
    REQUIRE(values(x.grad()) == std::vector<double>{2, 2, 2});
    // h's record was freed by the first backward (it had crashed here); nothing is written.
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { l2.backward(); }),
                        "part of this graph was freed by an earlier backward()");
    REQUIRE(values(x.grad()) == std::vector<double>{2, 2, 2});
    const auto second = losses();
    const Tensor m1 = second.first, m2 = second.second;
    m1.backward(Tensor(), true);
    m2.backward();
    REQUIRE(values(x.grad()) == std::vector<double>{6, 6, 6});  // the second wrote its own: 3 * 2
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { m1.backward(); }), "freed by an earlier backward()");
}

TEST_CASE("a result whose record backward freed is a constant to what is recorded after it (MXNet)", "[nn][autograd]") {
    // d2l's RNN: the state from one batch's graph feeds the next batch's (it had been refused at the second
    // backward as part of a freed graph).
    Tensor w = array({2.0, 3.0});
    w.attach_grad();
    Tensor h = array({1.0, 1.0});
    for (int step = 0; step < 3; ++step) {
        Tensor l;
        {
            auto scope = autograd::record();
            h = h * w;
            l = h.sum();
        }
        l.backward();
        // dl/dw = the state that came in, a constant: 1, then w, then w^2.
        const double in0 = std::pow(2.0, step), in1 = std::pow(3.0, step);
        REQUIRE(values(w.grad()) == std::vector<double>{in0, in1});
    }
    CHECK_FALSE(h.autograd_meta()->node);  // (freed; not a leaf either)
}

TEST_CASE("free_with frees a second result's record with the first's as one op's outputs", "[nn][autograd]") {
    Tensor x = array({1.0, 2.0});
    x.attach_grad();
    const auto made = [&](bool tied) {
        auto scope = autograd::record();
        Tensor h = x * 3.0;
        Tensor out = h * 2.0, state = h + 1.0;  // a recurrent layer's output and its final state
        if (tied) autograd::free_with(out, {state});
        return std::pair<Tensor, Tensor>{out.sum(), state};
    };
    for (bool tied : {false, true}) {
        const auto pair = made(tied);
        const Tensor loss = pair.first, state = pair.second;
        loss.backward();  // frees h: the state's record goes back into it
        REQUIRE(values(x.grad()) == std::vector<double>{6, 6});
        Tensor next;
        {
            auto scope = autograd::record();
            next = (state * x).sum();  // the state carried into the next batch
        }
        if (!tied) {  // its record still there, through a freed one: refused, nothing written
            PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { next.backward(); }), "freed by an earlier");
            continue;
        }
        next.backward();  // a constant: dnext/dx is the state's values (3x + 1)
        CHECK(values(x.grad()) == std::vector<double>{4, 7});
    }
}

TEST_CASE("a record of 300000 ops in a chain is let go without recursing", "[nn][autograd]") {
    // (It had overflowed the stack when dropped without backward(): a recurrent layer over 60,000 steps.)
    Tensor x = array({1.0});
    x.attach_grad();
    Tensor y = x;
    {
        auto scope = autograd::record();
        for (int i = 0; i < 300000; ++i) y = y * 1.0;
    }
    CHECK(y.autograd_meta()->node);
    y = Tensor();  // the whole chain goes here
    CHECK(values(x * 2.0) == std::vector<double>{2});
}

TEST_CASE("backward refuses a leaf written in place after a recorded op read it", "[nn][autograd]") {
    Tensor w = array({1, 2, 3});
    w.attach_grad();
    Tensor y;
    {
        auto scope = autograd::record();
        y = (w * w).sum();
    }
    w.assign(array({10, 20, 30}));
    // The gradient would have been 2 * the new values (20 40 60), not 2 4 6.
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { y.backward(); }),
                        "a tensor that mul read while recording has been written in place since");
    REQUIRE(values(w.grad()) == std::vector<double>{0, 0, 0});  // nothing written
    {
        auto scope = autograd::record();
        y = (w * w).sum();
    }
    y.backward();  // recorded after the write
    REQUIRE(values(w.grad()) == std::vector<double>{20, 40, 60});
    // A trainer's update writes its parameters in place too.
    nn::Dense d(1, "", 2);
    d.initialize(cpu());
    nn::Trainer trainer(d.collect_params(), "sgd", {{"learning_rate", 0.1}});
    Tensor l;
    {
        auto scope = autograd::record();
        l = d(ones({1, 2})).sum();
    }
    l.backward(Tensor(), true);
    trainer.step(1);
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { l.backward(); }), "written in place since");
}

TEST_CASE("while recording a tensor outside every graph may be written and a leaf or values needing a gradient may "
          "not",
          "[nn][autograd]") {
    Tensor w = array({1, 2, 3});
    w.attach_grad();
    Tensor z;
    {
        auto scope = autograd::record();
        // d2l's SSD labels its anchors inside record(): tensors no recorded op depends on (MXNet allows it).
        Tensor labels = full({3}, -1.0);
        labels.slice(0, 1).assign(2.0);
        labels.assign_region({2}, {1}, {1}, array({5}));
        REQUIRE(values(labels) == std::vector<double>{2, -1, 5});
        PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { w.assign(0.0); }),
                            "a tensor with attach_grad() cannot be written in place while autograd records");
        PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { labels.assign(w * 2.0); }),
                            "the values need a gradient");
        PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { labels.assign_region({0}, {1}, {1}, w.slice(0, 1)); }),
                            "the values need a gradient");
        PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { labels.assign_region({0, 0}, {1}, {1}, array({1})); }),
                            "start, step and count must each hold one value per axis of the tensor (1); they hold 2, "
                            "1 and 1");
        REQUIRE(values(labels) == std::vector<double>{2, -1, 5});  // the refusals wrote nothing
        // A tensor a recorded rule reads, written after: backward() refuses, naming the op.
        z = (w * labels).sum();
        labels.assign(0.0);
    }
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { z.backward(); }),
                        "a tensor that mul read while recording has been written in place since");
    REQUIRE(values(w) == std::vector<double>{1, 2, 3});
}

TEST_CASE("backward refuses values its rules read once written through a view, a detach or another handle",
          "[nn][autograd]") {
    Tensor w = array({1, 2, 3}), c = array({4, 5, 6});
    w.attach_grad();
    auto recorded = [&](auto f) {
        auto scope = autograd::record();
        return f();
    };
    const char* refused = "has been written in place since";
    // Through a view of the leaf: mul's rule reads w.
    Tensor y = recorded([&] { return (w * w).sum(); });
    w.slice(0, 1).assign(10.0);
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { y.backward(); }), refused);
    // Through the leaf's detach(), which shares its memory.
    y = recorded([&] { return (w * w).sum(); });
    w.detach().assign(array({1, 2, 3}));
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { y.backward(); }), refused);
    // A constant operand the rule reads (w's gradient is c).
    y = recorded([&] { return (w * c).sum(); });
    c.assign(array({7, 8, 9}));
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { y.backward(); }), "a tensor that mul read");
    // A recorded result its own rule reads (exp's gradient is its result).
    Tensor e;
    y = recorded([&] {
        e = w.exp();
        return e.sum();
    });
    e.detach().assign(0.0);
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { y.backward(); }), "a tensor that exp read");
    REQUIRE(values(w.grad()) == std::vector<double>{0, 0, 0});  // nothing was written by the refusals
    // A constant that no rule reads may change: add's gradient is 1 whatever c holds.
    y = recorded([&] { return (w + c).sum(); });
    c.assign(array({0, 0, 0}));
    y.backward();
    REQUIRE(values(w.grad()) == std::vector<double>{1, 1, 1});
    // Written before recording: the rule reads what the op read.
    c.assign(array({2, 2, 2}));
    y = recorded([&] { return (w * c).sum(); });
    y.backward();
    REQUIRE(values(w.grad()) == std::vector<double>{2, 2, 2});
}

TEST_CASE("each leaf's gradient is its own tensor even where a rule passes one through", "[nn][autograd]") {
    Tensor a = array({1, 2}), b = array({3, 4}), x = array({5, 6});
    a.attach_grad();
    b.attach_grad();
    Tensor head = array({1, 1});
    Tensor y;
    {
        auto scope = autograd::record();
        y = x * (a + b);  // add's rule gives d to both a and b
    }
    y.backward(head);
    REQUIRE(!a.grad().is(b.grad()));
    a.grad().assign(0.0);  // as zero_grad or a trainer's all-reduce in place
    REQUIRE(values(b.grad()) == std::vector<double>{5, 6});
    Tensor c = array({7, 8});
    c.attach_grad();
    {
        auto scope = autograd::record();
        y = c + 1.0;  // the head itself reaches c
    }
    y.backward(head);
    c.grad().assign(0.0);
    REQUIRE(values(head) == std::vector<double>{1, 1});
}

TEST_CASE("autograd through casts and past comparisons", "[nn][autograd]") {
    // A cast passes the gradient back in the input's dtype.
    Tensor x = array(std::vector<double>{1, -2, 3});
    x.attach_grad();
    Tensor y, mask;
    {
        auto scope = autograd::record();
        Tensor h = x.astype(DType::float32);
        mask = h > 0.0;                                           // uint8: records nothing
        y = (h * h * mask.astype(DType::float32) + x.astype(DType::float32) * 2.0).sum();
        REQUIRE(mask.autograd_meta() == nullptr);
        REQUIRE((h < x.astype(DType::float32)).autograd_meta() == nullptr);  // tensor-tensor comparison
        REQUIRE((h >= 1.0).autograd_meta() == nullptr);                      // tensor-scalar comparison
    }
    y.backward();
    REQUIRE(x.grad().dtype() == DType::float64);
    REQUIRE(values(x.grad()) == std::vector<double>{4, 2, 8});  // 2x where x > 0, plus 2
    // Casting to an integer dtype ends the graph there.
    Tensor n;
    {
        auto scope = autograd::record();
        n = x.astype(DType::int32);
    }
    REQUIRE(n.autograd_meta() == nullptr);
}

TEST_CASE("reading values back checks the dtype and the size", "[nn][frontend]") {
    Tensor f = array({1, 2, 3});
    PX_REQUIRE_MENTIONS(message_of<DTypeError>([&] { f.to_vector<double>(); }), "to_vector: the tensor is float32");
    PX_REQUIRE_MENTIONS(message_of<ShapeError>([&] { f.item<float>(); }), "item: the tensor has 3 elements, not 1");
    REQUIRE(f.slice_axis(0, 1, 2).item<float>() == 2);
    REQUIRE(f.to_vector<float>() == std::vector<float>{1, 2, 3});
    // item converts as astype does (LibTorch's loss.item<double>() of a float32 loss).
    REQUIRE(array({0.1f}).item<double>() == double(0.1f));
    REQUIRE(array({2.7f}).item<int32_t>() == 2);
    REQUIRE(array(std::vector<int32_t>{7}).item<double>() == 7.0);
}

TEST_CASE("a small network learns on every CPU device", "[nn][trainer]") {
    for (Device dev : {cpu(0), cpu(1)}) {
        seed(7);
        // Two separable classes: the sign of the first feature.
        Tensor x = random_normal({64, 4}, 0, 1, dev);
        Tensor label = (x.slice_axis(1, 0, 1).reshape({64}) > 0.0).astype(DType::int32);
        nn::Sequential net;
        net.add(nn::Dense(16, "relu"), nn::Dense(2));
        net.initialize(dev);
        nn::Trainer trainer(net.collect_params(), "sgd", {{"learning_rate", 0.5}});
        loss::SoftmaxCrossEntropyLoss loss_fn;
        double first = 0, last = 0;
        for (int step = 0; step < 60; ++step) {
            Tensor l;
            {
                auto scope = autograd::record();
                l = loss_fn(net(x), label);
            }
            l.backward();
            trainer.step(64);
            double mean = l.mean().item<float>();
            if (step == 0) first = mean;
            last = mean;
        }
        INFO(dev << ": loss " << first << " -> " << last);
        REQUIRE(last < 0.25 * first);
        REQUIRE(net[0].weight().grad().device() == dev);
    }
}

TEST_CASE("parameter, trainer and backward misuse is a clear error", "[nn][errors]") {
    nn::Parameter p("w", {2, 3});
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { p.initialize({}); }), "w: initialize() needs a device");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { p.data(); }), "parameter w is not initialized");
    p.initialize({cpu()});
    PX_REQUIRE_MENTIONS(message_of<ShapeError>([&] { p.set_data(zeros({3, 2})); }),
                        "new values of shape (3, 2) for a parameter of shape");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { p.reset_ctx({}); }), "reset_ctx() needs a device");
    nn::Dense lazy(4);
    lazy.initialize(cpu());
    nn::Trainer early(lazy.collect_params(), "sgd", {{"learning_rate", 0.1}});
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { early.step(1); }), "run a forward pass first");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] {
                            nn::Trainer(lazy.collect_params(), "sgd", {{"momentum", 1.5}});
                        }), "momentum must be in [0, 1]");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] {
                            nn::Trainer(lazy.collect_params(), "sgd", {{"wd", -1}});
                        }), "wd must be finite");
    Tensor x = array({1, 2, 3});
    x.attach_grad();
    Tensor y;
    {
        auto scope = autograd::record();
        y = x * 2.0;
    }
    PX_REQUIRE_MENTIONS(message_of<ShapeError>([&] { y.backward(ones({2})); }), "head gradient's shape");
    // A head of another dtype or device is refused before the graph is used: backward works after it.
    PX_REQUIRE_MENTIONS(message_of<DTypeError>([&] { y.backward(ones({3}, cpu(), DType::float64)); }),
                        "backward: the head gradient is float64 and the tensor float32");
    PX_REQUIRE_MENTIONS(message_of<DeviceMismatchError>([&] { y.backward(ones({3}, cpu(1))); }),
                        "backward: the head gradient is on cpu(1) and the tensor on cpu(0)");
    y.backward(ones({3}));
    REQUIRE(values(x.grad()) == std::vector<double>{2, 2, 2});
    // dropout refuses a bad probability when predicting too, not only when training.
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { dropout(x, 1.0); }), "the drop probability 1");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { dropout(x, -0.1); }), "is not in [0, 1)");
    // Layers: a vector is not a batch; a pooling layer has no weights.
    PX_REQUIRE_MENTIONS(message_of<ShapeError>([&] { lazy(array({1, 2, 3})); }),
                        "Dense: the input must be (batch, features), got rank 1");
    // An input whose features differ from the layer's in_units is named in the layer's words, not the product's.
    nn::Dense two_in(3, "relu", 2);
    two_in.initialize(cpu());
    PX_REQUIRE_MENTIONS(message_of<ShapeError>([&] { two_in(array({1, 2, 3}, {1, 3})); }),
                        "Dense(2 -> 3, relu): the input has 3 features, the layer takes 2");
    nn::MaxPool2D pool(2, 2);
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { pool.bias(); }), "has no bias");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { pool.weight(); }), "has no weight");
}

TEST_CASE("initializers: ones, zeros and normal with its scale", "[nn]") {
    seed(11);
    nn::Parameter one("one", {2, 3}, {nn::Initializer::ones}), zero("zero", {4}, {nn::Initializer::zeros}),
        normal("normal", {100, 100}, {nn::Initializer::normal, 0.5});
    for (auto* p : {&one, &zero, &normal}) p->initialize({cpu()});
    REQUIRE(values(one.data()) == std::vector<double>(6, 1.0));
    REQUIRE(values(zero.data()) == std::vector<double>(4, 0.0));
    auto v = values(normal.data());
    double mean = 0, var = 0;
    for (double x : v) mean += x / double(v.size());
    for (double x : v) var += (x - mean) * (x - mean) / double(v.size() - 1);
    // 10,000 draws: the mean's standard error is 0.005, the deviation's about 0.0035.
    CHECK(std::abs(mean) < 0.02);
    CHECK(std::sqrt(var) == Approx(0.5).margin(0.015));
}

TEST_CASE("reset_ctx before the shape is known moves the replicas the first call makes", "[nn]") {
    nn::Dense d(3);  // input size inferred at the first call
    d.initialize(cpu(0));
    d.collect_params().reset_ctx(cpu(1));
    REQUIRE(!d.weight().initialized());
    Tensor y = d(ones({2, 5}, cpu(1)));
    REQUIRE(y.device() == cpu(1));
    REQUIRE(d.weight().devices() == std::vector<Device>{cpu(1)});
    REQUIRE(d.weight().shape() == Shape{3, 5});
}

// Sequential runs Conv2D(relu) followed by MaxPool2D as one fused op where
// the device offers it (bias_relu_max_pool2d); the tests run once more with
// PLEXUS_CPU_FUSED=off, where the same code takes the unfused ops.
TEST_CASE("Sequential's fused Conv2D(relu) + MaxPool2D gives the layers' own outputs and gradients", "[nn][fused]") {
    Device dev = cpu();
    INFO("the device offers the fused op: " << supports(dev, PX_OP_BIAS_RELU_MAX_POOL2D, PX_FLOAT32));
    nn::Sequential net;
    // Fused pairs: (0, 1) with 2x2 windows, (2, 3) with overlapping padded
    // windows. Not fused: a Conv2D with tanh (4) and the average pool after it.
    net.add(nn::Conv2D(4, 3, 1, 1, "relu"), nn::MaxPool2D(2, 2), nn::Conv2D(3, 3, 1, 0, "relu"),
            nn::MaxPool2D(3, 2, 1), nn::Conv2D(3, 1, 1, 0, "tanh"), nn::AvgPool2D(2, 1), nn::Dense(5));
    net.initialize(dev);
    Tensor x = random_normal({3, 2, 10, 10}, 0, 1, dev);
    net(x);  // infers every input size
    // Biases away from zero, so that relu cuts some windows and passes others.
    for (size_t i : {0, 2, 4}) {
        const int64_t n = net[i].bias().shape()[0];
        net[i].bias().set_data(random_uniform({n}, -0.5, 0.5, dev));
    }
    Tensor w = random_normal({3, 5}, 0, 1, dev);
    auto run = [&](bool whole) {
        Tensor loss;
        {
            auto scope = autograd::record();
            Tensor y = x;
            if (whole) y = net(x);
            else
                for (size_t i = 0; i < net.size(); ++i) y = net[i](y);  // each layer on its own: never fused
            loss = (y * w).sum();
        }
        loss.backward();
        std::vector<std::vector<double>> out{values(loss)};
        for (auto& [name, p] : net.collect_params()) out.push_back(values(p->grad()));
        return out;
    };
    auto fused = run(true), layered = run(false);
    REQUIRE(fused.size() == layered.size());
    CHECK(fused[0] == layered[0]);  // the loss, bit for bit
    for (size_t k = 1; k < fused.size(); ++k) {
        INFO("gradient " << k - 1 << " of collect_params()");
        PX_REQUIRE_CLOSE(fused[k], layered[k], 1e-5);  // the bias gradients are summed in another order
    }
    // A weight gradient behind the fused pair is exact: dx matches bit for bit.
    CHECK(fused[1] == layered[1]);
    // forward_max_pooled on a Conv2D that does not fuse (tanh) pools its forward.
    auto& tanh_conv = static_cast<nn::Conv2D&>(net[4]);
    REQUIRE_FALSE(tanh_conv.fuses_max_pool());
    Tensor h = random_normal({2, 3, 4, 4}, 0, 1, dev);
    CHECK(values(tanh_conv.forward_max_pooled(h, nn::MaxPool2D(2, 2))) == values(max_pool2d(tanh_conv(h), 2, 2)));
}

TEST_CASE("an Activation layer runs the op its name gives and takes Gluon's softrelu for softplus", "[nn]") {
    const Tensor x = array({-2.0, 0.0, 3.0});
    const auto softplus_values = x.softplus().to_vector<float>();
    CHECK(nn::Activation("softrelu")(x).to_vector<float>() == softplus_values);
    CHECK(nn::Activation("softplus")(x).to_vector<float>() == softplus_values);
    CHECK(softplus_values[1] == Approx(std::log(2.0)));
    CHECK(nn::Activation("tanh")(x).to_vector<float>() == x.tanh().to_vector<float>());
    CHECK(nn::Dense(2, "softrelu").describe().find("softrelu") != std::string::npos);
}
