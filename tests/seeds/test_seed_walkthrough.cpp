// The seeds' walkthrough (seeds 000, 001, 003) as a test. Where the seeds use
// gpu(0) and gpu(1), this uses the GPUs when there are two and otherwise
// cpu(0) and cpu(1) (PLEXUS_CPU_DEVICES=2), so it runs on any machine.
#include <catch2/catch.hpp>

#include <cstdlib>
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

TEST_CASE("tensors print their values as NumPy does: integers, scientific notation, summaries, long rows",
          "[seeds][format]") {
    // Each expected text is what NumPy 2.4.6 printed for the same array.
    auto text = [](const Tensor& t) { return values_string(t); };
    CHECK(text(array(std::vector<int32_t>{1, -20, 300}, {3})) == "[  1 -20 300]");
    CHECK(text(array(std::vector<uint8_t>{0, 255, 7, 8}, {2, 2})) == "[[  0 255]\n [  7   8]]");
    CHECK(text(full({}, 7, cpu(), DType::int32)) == "7");
    CHECK(text(full({}, 2.5, cpu(), DType::float64)) == "2.5");
    CHECK(text(array(std::vector<double>{1e-5, 1.0, 12345.0}, {3})) == "[1.0000e-05 1.0000e+00 1.2345e+04]");
    CHECK(text(array(std::vector<double>{1e-5, 1.0, 12345.0}, {3}).astype(DType::float32)) ==
          "[1.0000e-05 1.0000e+00 1.2345e+04]");
    // nan and inf take the finite values' width, which they widen when longer.
    const double nan = NAN, inf = INFINITY;
    CHECK(text(array(std::vector<double>{1.5, nan, -inf}, {3})) == "[ 1.5  nan -inf]");
    CHECK(text(array(std::vector<double>{1.5, nan}, {2})) == "[1.5 nan]");
    CHECK(text(array(std::vector<double>{1.0, nan}, {2})) == "[ 1. nan]");
    CHECK(text(array(std::vector<double>{nan, -inf}, {2})) == "[ nan -inf]");
    CHECK(text(array(std::vector<double>{100.25, inf}, {2})) == "[100.25    inf]");
    CHECK(text(array(std::vector<double>{1e-5, nan, 1e5}, {3})) == "[1.e-05    nan 1.e+05]");
    CHECK(text(array(std::vector<double>{-1e-5, -inf, 12345.0}, {3}).astype(DType::float32)) ==
          "[-1.0000e-05        -inf  1.2345e+04]");
    // Over 1000 elements: three at each end of every axis.
    CHECK(text(arange(0, 2000, 1, cpu(), DType::int64)) == "[   0    1    2 ... 1997 1998 1999]");
    CHECK(text(arange(0, 2000).reshape({10, 200})) ==
          "[[0.000e+00 1.000e+00 2.000e+00 ... 1.970e+02 1.980e+02 1.990e+02]\n"
          " [2.000e+02 2.010e+02 2.020e+02 ... 3.970e+02 3.980e+02 3.990e+02]\n"
          " [4.000e+02 4.010e+02 4.020e+02 ... 5.970e+02 5.980e+02 5.990e+02]\n"
          " ...\n"
          " [1.400e+03 1.401e+03 1.402e+03 ... 1.597e+03 1.598e+03 1.599e+03]\n"
          " [1.600e+03 1.601e+03 1.602e+03 ... 1.797e+03 1.798e+03 1.799e+03]\n"
          " [1.800e+03 1.801e+03 1.802e+03 ... 1.997e+03 1.998e+03 1.999e+03]]");
    // arange(stop) counts from 0, as nd.arange(12) does.
    CHECK(text(arange(4)) == "[0. 1. 2. 3.]");
    CHECK(text(arange(3, cpu(), DType::int32)) == "[0 1 2]");
    CHECK(arange(12).reshape({3, 4}).shape() == Shape{3, 4});
    // Rows longer than 75 characters wrap.
    CHECK(text(arange(0, 30, 1, cpu(), DType::float64) * 1.5) ==
          "[ 0.   1.5  3.   4.5  6.   7.5  9.  10.5 12.  13.5 15.  16.5 18.  19.5\n"
          " 21.  22.5 24.  25.5 27.  28.5 30.  31.5 33.  34.5 36.  37.5 39.  40.5\n"
          " 42.  43.5]");
}

TEST_CASE("seeds: the GPUs that PLEXUS_TEST_GPUS asks for are there", "[seeds]") {
    // Set where the walkthrough must take its GPU paths (on the CUDA
    // emulator, on a GPU machine), so a plugin that failed to load does not
    // pass by running everything on the CPU.
    const char* wanted = std::getenv("PLEXUS_TEST_GPUS");
    if (!wanted) return;
    INFO("PLEXUS_TEST_GPUS=" << wanted);
    REQUIRE(num_gpus() >= std::atoi(wanted));
}

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
        Tensor frobenius = norm(c);
        one_at_a_time.push_back(frobenius.item<float>());  // waits every time
        log.push_back(frobenius.reshape({1}));             // stays on the device
    }
    auto kept = concat(log).to_vector<float>();  // one transfer
    REQUIRE(kept == one_at_a_time);
}
