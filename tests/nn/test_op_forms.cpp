// The frontend's forms that come from the op table's rows alone
// (cpp/tensor.hpp): every binary row is a method with a tensor or a scalar,
// three functions (tensor and tensor, tensor and scalar, scalar and tensor),
// and C++'s operators are those functions. Values worked by hand.
#include <catch2/catch.hpp>

#include "../support.hpp"
#include "plexus/plexus.hpp"

using namespace plexus;
using pxtest::values;

TEST_CASE("each binary row of the op table is a method and three functions with its name", "[nn][op_forms]") {
    const Tensor a = array({1.f, 2.f, 4.f}), b = array({4.f, 2.f, 1.f});
    CHECK(values(a.add(b)) == std::vector<double>{5, 4, 5});
    CHECK(values(a.sub(1.0)) == std::vector<double>{0, 1, 3});
    CHECK(values(sub(10.0, a)) == std::vector<double>{9, 8, 6});
    CHECK(values(mul(a, b)) == std::vector<double>{4, 4, 4});
    CHECK(values(div(a, 2.0)) == std::vector<double>{0.5, 1, 2});
    CHECK(values(div(8.0, a)) == std::vector<double>{8, 4, 2});
    CHECK(values(a.pow(b)) == std::vector<double>{1, 4, 4});
    CHECK(values(pow(2.0, a)) == std::vector<double>{2, 4, 16});
    CHECK(values(pow(a, 2.0)) == std::vector<double>{1, 4, 16});
    // Comparisons give uint8 0/1; the scalar-first form compares the scalar with each element.
    CHECK(a.lt(b).dtype() == DType::uint8);
    CHECK(values(a.lt(b)) == std::vector<double>{1, 0, 0});
    CHECK(values(le(a, b)) == std::vector<double>{1, 1, 0});
    CHECK(values(gt(2.0, a)) == std::vector<double>{1, 0, 0});
    CHECK(values(ge(a, 2.0)) == std::vector<double>{0, 1, 1});
    CHECK(values(a.eq(2.0)) == std::vector<double>{0, 1, 0});
    CHECK(values(ne(a, b)) == std::vector<double>{1, 0, 1});
}

TEST_CASE("the arithmetic operators are the binary rows' functions, gradients included", "[nn][op_forms]") {
    const Tensor a = array({1.f, 2.f, 4.f}), b = array({4.f, 2.f, 1.f});
    CHECK(values(a + b) == values(add(a, b)));
    CHECK(values(3.0 - a) == values(sub(3.0, a)));
    CHECK(values(a * 0.5) == values(mul(a, 0.5)));
    CHECK(values(1.0 / a) == values(div(1.0, a)));
    CHECK(values(a >= b) == values(ge(a, b)));
    CHECK(values(equal(a, b)) == values(eq(a, b)));
    Tensor x = array({1.f, 2.f, 3.f});
    x.attach_grad();
    {
        auto recording = autograd::record();
        Tensor y = x.mul(x).add(div(1.0, x)).sum();  // sum(x^2 + 1/x): gradient 2x - 1/x^2
        y.backward();
    }
    const std::vector<double> grad = values(x.grad());
    REQUIRE(grad.size() == 3);
    CHECK(grad[0] == Approx(2 - 1.0));
    CHECK(grad[1] == Approx(4 - 0.25));
    CHECK(grad[2] == Approx(6 - 1.0 / 9));
}
