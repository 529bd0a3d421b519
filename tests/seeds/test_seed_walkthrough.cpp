// The seeds' walkthrough (seeds 000, 001, 003) as a test. Where the seeds use
// gpu(0) and gpu(1), this uses the GPUs when there are two and otherwise
// cpu(0) and cpu(1) (PLEXUS_CPU_DEVICES=2), so it runs on any machine.
#include <catch2/catch.hpp>

#include <sstream>

#include "../support.hpp"

using namespace plexus;

namespace {
Device first() { return num_gpus() >= 1 ? gpu(0) : cpu(0); }
Device second() { return num_gpus() >= 2 ? gpu(1) : cpu(1); }
std::string printed(const Tensor& t) {
    std::ostringstream os;
    os << t;
    return os.str();
}
}  // namespace

TEST_CASE("seed 000/001: devices print as cpu(0), gpu(0), gpu(1)", "[seeds]") {
    std::ostringstream os;
    os << cpu() << ", " << gpu() << ", " << gpu(1);
    REQUIRE(os.str() == "cpu(0), gpu(0), gpu(1)");
    REQUIRE(gpu() == gpu(0));
    REQUIRE(cpu(0) != gpu(0));
}

TEST_CASE("seed 001: tensors are made on the CPU and print their values and device", "[seeds]") {
    Tensor x = array({1, 2, 3});
    REQUIRE(x.device() == cpu(0));
    REQUIRE(printed(x) == "[1. 2. 3.]\n<Tensor 3 @cpu(0)>");
    Tensor a = array({1, 2, 3}, first());
    REQUIRE(printed(a) == "[1. 2. 3.]\n<Tensor 3 @" + first().str() + ">");
    Tensor b = random_uniform({2, 3}, 0, 1, second());
    REQUIRE(b.device() == second());
    REQUIRE(b.shape() == Shape{2, 3});
}

TEST_CASE("seed 001: copyto and as_in_context, and (z + 2).exp() + y", "[seeds]") {
    Tensor x = array({1, 2, 3});
    Tensor y = x.copyto(first());
    Tensor z = x.as_in_context(first());
    REQUIRE(printed(y) == "[1. 2. 3.]\n<Tensor 3 @" + first().str() + ">");
    REQUIRE(y.as_in_context(first()).is(y));
    REQUIRE_FALSE(y.copyto(first()).is(y));
    // The printed output of seed 001, In [14].
    REQUIRE(printed((z + 2).exp() + y) == "[ 21.085537  56.59815  151.41316 ]\n<Tensor 3 @" + first().str() + ">");
    // Seed 000 writes the same expression with *.
    auto v = ((z + 2).exp() * y).to_vector<float>();
    REQUIRE(v[2] == Approx(std::exp(5.0) * 3).epsilon(1e-6));
}

TEST_CASE("seed 000: inputs on different devices are an error, not a silent copy", "[seeds]") {
    Tensor x = array({1, 2, 3});
    Tensor y = x.copyto(second());
    REQUIRE_THROWS_AS(x + y, DeviceMismatchError);
    // Moving one explicitly works.
    REQUIRE((x.copyto(second()) + y).device() == second());
}

TEST_CASE("seed 003: try_gpu, try_all_gpus, num_gpus", "[seeds]") {
    int n = num_gpus();
    REQUIRE(try_gpu() == (n >= 1 ? gpu(0) : cpu()));
    REQUIRE(try_gpu(10) == cpu());
    auto all = try_all_gpus();
    if (n == 0) REQUIRE(all == std::vector<Device>{cpu()});
    else REQUIRE(all.size() == size_t(n));
}

TEST_CASE("seed 003: X on one device, Y on another, Z = X.copyto(Y's), Y + Z", "[seeds]") {
    Tensor X = ones({2, 3}, first());
    REQUIRE(printed(X) == "[[1. 1. 1.]\n [1. 1. 1.]]\n<Tensor 2x3 @" + first().str() + ">");
    Tensor Y = random_uniform({2, 3}, 0, 1, second());
    Tensor Z = X.copyto(second());
    REQUIRE(Z.device() == second());
    Tensor S = Y + Z;
    auto yv = Y.to_vector<float>(), sv = S.to_vector<float>();
    for (size_t i = 0; i < 6; ++i) REQUIRE(sv[i] == yv[i] + 1);
    REQUIRE(Z.as_in_context(second()).is(Z));
}

TEST_CASE("seed 003 exercise: 1000 100x100 products logging the norm on the device", "[seeds]") {
    Device dev = first();
    Tensor a = random_normal({100, 100}, 0, 0.1, dev), b = random_normal({100, 100}, 0, 0.1, dev);
    std::vector<float> one_at_a_time;
    std::vector<Tensor> log;
    for (int i = 0; i < 20; ++i) {
        Tensor c = matmul(a, b) * double(i + 1);
        Tensor norm = (c * c).sum().sqrt();
        one_at_a_time.push_back(norm.item<float>());  // waits every time
        log.push_back(norm.reshape({1}));             // stays on the device
    }
    auto kept = concat(log).to_vector<float>();  // one transfer
    REQUIRE(kept == one_at_a_time);
}
