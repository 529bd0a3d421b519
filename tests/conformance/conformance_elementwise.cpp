// Conformance: elementwise ops on every dtype they take, with broadcasting
// and scalars, against float64 references computed on the host.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <functional>

#include "conformance.hpp"
#include "opened_plugin.hpp"

using namespace plexus;
using pxtest::values;

namespace {

const std::vector<DType> all_dtypes = {DType::float32, DType::float64, DType::int32, DType::int64,
                                       DType::uint8,   DType::float16, DType::bfloat16};
const std::vector<DType> float_dtypes = {DType::float32, DType::float64, DType::float16, DType::bfloat16};

// Deterministic test data that every dtype can hold.
std::vector<double> data_a(int n) {
    std::vector<double> v;
    for (int i = 0; i < n; ++i) v.push_back(double((i * 7) % 11) + 1);
    return v;
}
std::vector<double> data_b(int n) {
    std::vector<double> v;
    for (int i = 0; i < n; ++i) v.push_back(double((i * 5) % 7) + 1);
    return v;
}

Tensor make(const std::vector<double>& v, const Shape& s, DType d, Device dev) {
    return array(v, s, dev).astype(d);
}

double cast_to(double v, DType d) {
    switch (d) {
    case DType::int32: case DType::int64: return std::trunc(v);
    case DType::uint8: return double(uint8_t(v));
    default: return pxtest::rounded_to(v, d);
    }
}

using Ref2 = std::function<double(double, double)>;

void check_binary(px_op op, const Ref2& ref, const std::vector<DType>& dtypes, bool comparison) {
    Device dev = pxtest::device_under_test();
    for (DType d : dtypes) {
        PX_OP_SECTION(op, d) {
            // (2,3,4) with (3,1), (4,), a scalar tensor, and a Python-style scalar.
            auto av = data_a(24), bv = data_b(3), cv = data_b(4);
            Tensor a = make(av, {2, 3, 4}, d, dev), b = make(bv, {3, 1}, d, dev), c = make(cv, {4}, d, dev);
            Tensor r1 = a.binary_op(op, b), r2 = a.binary_op(op, c), r3 = b.binary_op(op, a);
            REQUIRE(r1.shape() == Shape{2, 3, 4});
            REQUIRE(r1.device() == dev);
            REQUIRE(r1.dtype() == (comparison ? DType::uint8 : d));
            std::vector<double> w1, w2, w3, w4, w5;
            for (int i = 0; i < 2; ++i)
                for (int j = 0; j < 3; ++j)
                    for (int k = 0; k < 4; ++k) {
                        double x = av[(i * 3 + j) * 4 + k];
                        w1.push_back(cast_to(ref(x, bv[j]), comparison ? DType::float64 : d));
                        w2.push_back(cast_to(ref(x, cv[k]), comparison ? DType::float64 : d));
                        w3.push_back(cast_to(ref(bv[j], x), comparison ? DType::float64 : d));
                        w4.push_back(cast_to(ref(x, 2), comparison ? DType::float64 : d));
                        w5.push_back(cast_to(ref(3, x), comparison ? DType::float64 : d));
                    }
            double tol = pxtest::tolerance(d);
            PX_REQUIRE_CLOSE(values(r1), w1, tol);
            PX_REQUIRE_CLOSE(values(r2), w2, tol);
            PX_REQUIRE_CLOSE(values(r3), w3, tol);
            PX_REQUIRE_CLOSE(values(a.scalar_op(op, 2, false)), w4, tol);
            PX_REQUIRE_CLOSE(values(a.scalar_op(op, 3, true)), w5, tol);
        }
    }
}

}  // namespace

TEST_CASE("add, sub, mul broadcast on every dtype", "[conformance][elementwise][R10]") {
    check_binary(PX_OP_ADD, [](double x, double y) { return x + y; }, all_dtypes, false);
    check_binary(PX_OP_SUB, [](double x, double y) { return x - y; },
                 {DType::float32, DType::float64, DType::int32, DType::int64, DType::float16, DType::bfloat16}, false);
    check_binary(PX_OP_MUL, [](double x, double y) { return x * y; }, all_dtypes, false);
}

TEST_CASE("div: true division for floats, truncation for integers", "[conformance][elementwise][R10]") {
    check_binary(PX_OP_DIV, [](double x, double y) { return x / y; }, float_dtypes, false);
    check_binary(PX_OP_DIV, [](double x, double y) { return std::trunc(x / y); },
                 {DType::int32, DType::int64, DType::uint8}, false);
}

TEST_CASE("pow on floats", "[conformance][elementwise][R10]") {
    check_binary(PX_OP_POW, [](double x, double y) { return std::pow(x, y); }, float_dtypes, false);
}

TEST_CASE("comparisons give uint8 0/1 on every dtype", "[conformance][elementwise][R10]") {
    check_binary(PX_OP_EQ, [](double x, double y) { return double(x == y); }, all_dtypes, true);
    check_binary(PX_OP_NE, [](double x, double y) { return double(x != y); }, all_dtypes, true);
    check_binary(PX_OP_LT, [](double x, double y) { return double(x < y); }, all_dtypes, true);
    check_binary(PX_OP_LE, [](double x, double y) { return double(x <= y); }, all_dtypes, true);
    check_binary(PX_OP_GT, [](double x, double y) { return double(x > y); }, all_dtypes, true);
    check_binary(PX_OP_GE, [](double x, double y) { return double(x >= y); }, all_dtypes, true);
}

TEST_CASE("unary math on floats", "[conformance][elementwise][R10]") {
    Device dev = pxtest::device_under_test();
    std::vector<double> v = {-2.5, -1, -0.25, 0, 0.5, 1, 3, 7.75};
    std::vector<double> pos = {0.25, 0.5, 1, 2, 3, 10, 100, 1e-3};
    struct Case { px_op op; double (*f)(double); bool positive; };
    const Case cases[] = {
        {PX_OP_NEG, [](double x) { return -x; }, false},
        {PX_OP_EXP, [](double x) { return std::exp(x); }, false},
        {PX_OP_LOG, [](double x) { return std::log(x); }, true},
        {PX_OP_SQRT, [](double x) { return std::sqrt(x); }, true},
        {PX_OP_ABS, [](double x) { return std::fabs(x); }, false},
        {PX_OP_RELU, [](double x) { return x > 0 ? x : 0; }, false},
        {PX_OP_SIGMOID, [](double x) { return 1 / (1 + std::exp(-x)); }, false},
        {PX_OP_TANH, [](double x) { return std::tanh(x); }, false},
    };
    for (DType d : float_dtypes)
        for (const Case& c : cases) {
            PX_OP_SECTION(c.op, d) {
                const auto& in = c.positive ? pos : v;
                Tensor t = make(in, {2, 4}, d, dev).unary(c.op);
                std::vector<double> want;
                for (double x : in) want.push_back(c.f(cast_to(x, d)));
                REQUIRE(t.shape() == Shape{2, 4});
                PX_REQUIRE_CLOSE(values(t), want, pxtest::tolerance(d) * 4);
            }
        }
}

TEST_CASE("neg, abs, relu on signed integers", "[conformance][elementwise][R10]") {
    Device dev = pxtest::device_under_test();
    for (DType d : {DType::int32, DType::int64}) {
        PX_OP_SECTION(PX_OP_NEG, d) { REQUIRE(values(-make({-3, -1, 0, 2, 5}, {5}, d, dev)) == std::vector<double>{3, 1, 0, -2, -5}); }
        PX_OP_SECTION(PX_OP_ABS, d) { REQUIRE(values(make({-3, -1, 0, 2, 5}, {5}, d, dev).abs()) == std::vector<double>{3, 1, 0, 2, 5}); }
        PX_OP_SECTION(PX_OP_RELU, d) { REQUIRE(values(make({-3, -1, 0, 2, 5}, {5}, d, dev).relu()) == std::vector<double>{0, 0, 0, 2, 5}); }
    }
}

// docs/semantics.md, "Numbers": C's integer division, not NumPy's floor
// (whose // gives -4 for -7 // 2), and relu(NaN) 0 where NumPy and PyTorch
// give NaN. check_binary's operands are all positive, so neither showed.
TEST_CASE("integer division truncates toward zero, and relu(NaN) is 0", "[conformance][elementwise][R10]") {
    Device dev = pxtest::device_under_test();
    for (DType d : {DType::int32, DType::int64}) {
        PX_OP_SECTION(PX_OP_DIV, d) {
            Tensor a = make({-7, 7, -7, 7, -1, 5, -6}, {7}, d, dev), b = make({2, -2, -2, 2, 3, -3, 3}, {7}, d, dev);
            REQUIRE(values(a / b) == std::vector<double>{-3, -3, 3, 3, 0, -1, -2});
        }
    }
    for (DType d : {DType::float32, DType::float64}) {
        PX_OP_SECTION(PX_OP_RELU, d) {
            const std::vector<double> got = values(make({NAN, -NAN, -1, -0.0, 0.5}, {5}, d, dev).relu());
            REQUIRE(got == std::vector<double>{0, 0, 0, 0, 0.5});
            REQUIRE_FALSE(std::signbit(got[3]));  // relu(-0.0) is +0.0
        }
    }
}

TEST_CASE("where selects with a broadcast uint8 condition", "[conformance][elementwise][R10]") {
    Device dev = pxtest::device_under_test();
    for (DType d : all_dtypes) {
        PX_OP_SECTION(PX_OP_WHERE, d) {
            Tensor a = make(data_a(6), {2, 3}, d, dev), b = make({9, 8, 7}, {3}, d, dev);
            std::vector<uint8_t> above;
            for (double x : data_a(6)) above.push_back(x > 4);
            Tensor cond = array(above, {2, 3}, dev);
            Tensor r = where(cond, a, b);
            auto av = data_a(6);
            std::vector<double> want;
            for (int i = 0; i < 6; ++i) want.push_back(av[i] > 4 ? av[i] : std::vector<double>{9, 8, 7}[i % 3]);
            REQUIRE(values(r) == want);
            // Every operand laid out like the output (a device's flat path).
            const std::vector<double> other{9, 8, 7, 6, 5, 4};
            std::vector<double> want_flat;
            for (int i = 0; i < 6; ++i) want_flat.push_back(av[i] > 4 ? av[i] : other[size_t(i)]);
            REQUIRE(values(where(cond, a, make(other, {2, 3}, d, dev))) == want_flat);
        }
    }
}

TEST_CASE("large elementwise ops use many threads and stay exact", "[conformance][elementwise][R10]") {
    PX_NEEDS({PX_OP_ARANGE, DType::float32}, {PX_OP_FILL, DType::float32}, {PX_OP_ADD, DType::float32},
             {PX_OP_MUL, DType::float32});
    Device dev = pxtest::device_under_test();
    const int64_t n = 1 << 20;  // above the parallel grain
    Tensor a = arange(0, double(n), 1, dev), b = full({n}, 0.5, dev);
    auto got = ((a + b) * 2.0).to_vector<float>();
    for (int64_t i = 0; i < n; i += 4099) REQUIRE(got[size_t(i)] == float((double(i) + 0.5) * 2));
    REQUIRE(got[size_t(n - 1)] == float((double(n - 1) + 0.5) * 2));
    // Many rows of a broadcast: (600, 257) + (257) and (600, 1) * (600, 257).
    Tensor m = arange(0, 600 * 257, 1, dev).reshape({600, 257}), row = arange(0, 257, 1, dev) * 1000.0,
           col = arange(0, 600, 1, dev).reshape({600, 1});
    auto sum = (m + row).to_vector<float>(), prod = (col * m).to_vector<float>();
    for (int64_t i = 0; i < 600; ++i)
        for (int64_t j = 0; j < 257; ++j) {
            const size_t k = size_t(i * 257 + j);
            INFO("row " << i << ", column " << j);
            REQUIRE(sum[k] == float(double(k) + 1000.0 * double(j)));
            REQUIRE(prod[k] == float(double(i) * double(k)));
        }
}

// Integers wrap like two's complement, as in NumPy and PyTorch. C++ (and
// CUDA) leave signed overflow undefined, so a kernel must not simply add.
TEST_CASE("integer add, sub, mul, neg, abs and sum wrap like two's complement", "[conformance][elementwise][R10]") {
    PX_NEEDS({PX_OP_ADD, DType::int32}, {PX_OP_SUB, DType::int32}, {PX_OP_MUL, DType::int32}, {PX_OP_NEG, DType::int32},
             {PX_OP_ABS, DType::int32}, {PX_OP_ADD, DType::int64}, {PX_OP_SUM, DType::int64}, {PX_OP_SUM, DType::int32});
    Device dev = pxtest::device_under_test();
    constexpr int32_t top = INT32_MAX, bottom = INT32_MIN;
    Tensor a = array(std::vector<int32_t>{top, bottom, 65536, -7}, {}, dev);
    Tensor b = array(std::vector<int32_t>{1, 1, 65536, 3}, {}, dev);
    CHECK(a.binary_op(PX_OP_ADD, b).to_vector<int32_t>() == std::vector<int32_t>{bottom, bottom + 1, 131072, -4});
    CHECK(a.binary_op(PX_OP_SUB, b).to_vector<int32_t>() == std::vector<int32_t>{top - 1, top, 0, -10});
    CHECK(a.binary_op(PX_OP_MUL, b).to_vector<int32_t>() == std::vector<int32_t>{top, bottom, 0, -21});  // 2^32 wraps to 0
    CHECK(a.neg().to_vector<int32_t>() == std::vector<int32_t>{bottom + 1, bottom, -65536, 7});
    CHECK(a.abs().to_vector<int32_t>() == std::vector<int32_t>{top, bottom, 65536, 7});
    // int32 sums are made in int64 and do not wrap; int64 sums wrap.
    CHECK(array(std::vector<int32_t>{top, top}, {}, dev).sum().to_vector<int64_t>() == std::vector<int64_t>{4294967294LL});
    Tensor big = array(std::vector<int64_t>{INT64_MAX, 1, 2}, {}, dev);
    CHECK(big.sum().to_vector<int64_t>() == std::vector<int64_t>{INT64_MIN + 2});
    CHECK(big.binary_op(PX_OP_ADD, big).to_vector<int64_t>() == std::vector<int64_t>{-2, 2, 4});
}

namespace {

// `op` of a vector of `values` (as `dtype`) and `scalar` (first when
// scalar_first), called on the plugin itself: the host promotes an integer
// tensor whose dtype cannot hold the scalar before it calls a plugin, so
// only a direct call reaches the plugin's conversion of it.
template <class T>
std::vector<T> scalar_op_on_the_plugin(int32_t op, int32_t dtype, const std::vector<T>& values, double scalar,
                                       bool scalar_first) {
    pxconf::Opened p;
    const uint64_t bytes = values.size() * sizeof(T);
    px_plugin_buffer *in = nullptr, *out = nullptr;
    REQUIRE(p.api->buffer_alloc(p.ctx, p.device, bytes, &in, &p.err) == PX_OK);
    REQUIRE(p.api->buffer_alloc(p.ctx, p.device, bytes, &out, &p.err) == PX_OK);
    REQUIRE(p.api->copy_from_host(p.ctx, in, 0, values.data(), bytes, &p.err) == PX_OK);
    const px_tensor_desc a = pxconf::vector_desc(in, dtype, int64_t(values.size()));
    const px_tensor_desc y = pxconf::vector_desc(out, dtype, int64_t(values.size()));
    const px_binary_attrs attrs{sizeof(px_binary_attrs), scalar_first ? 1 : 2, scalar};
    const px_op_call call{sizeof(px_op_call), op, p.device, 1, &a, 1, &y, &attrs};
    const px_status executed = p.api->execute(p.ctx, &call, &p.err);
    INFO("the plugin said: " << p.said());  // INFO reads its words now: after the call
    REQUIRE(executed == PX_OK);
    REQUIRE(p.api->synchronize(p.ctx, p.device, &p.err) == PX_OK);
    std::vector<T> got(values.size());
    REQUIRE(p.api->copy_to_host(p.ctx, out, 0, got.data(), bytes, &p.err) == PX_OK);
    REQUIRE(p.api->buffer_free(p.ctx, in, &p.err) == PX_OK);
    REQUIRE(p.api->buffer_free(p.ctx, out, &p.err) == PX_OK);
    return got;
}

}  // namespace

// A whole-number scalar operand becomes the tensor's dtype as CAST would
// make it: out of range it saturates (converting it plainly is undefined).
TEST_CASE("a scalar operand is converted to the tensor's dtype, saturating", "[conformance][elementwise][R10]") {
    PX_NEEDS({PX_OP_MUL, DType::int32}, {PX_OP_SUB, DType::uint8});
    const std::vector<int32_t> a{1, -1};
    CHECK(scalar_op_on_the_plugin(PX_OP_MUL, PX_INT32, a, 1e300, false) == std::vector<int32_t>{INT32_MAX, -INT32_MAX});
    // -INT32_MIN wraps
    CHECK(scalar_op_on_the_plugin(PX_OP_MUL, PX_INT32, a, -1e300, false) == std::vector<int32_t>{INT32_MIN, INT32_MIN});
    const std::vector<uint8_t> u{200, 7};
    CHECK(scalar_op_on_the_plugin(PX_OP_SUB, PX_UINT8, u, 1e300, false) == std::vector<uint8_t>{201, 8});  // u - 255
    CHECK(scalar_op_on_the_plugin(PX_OP_SUB, PX_UINT8, u, -5.0, true) == std::vector<uint8_t>{56, 249});   // 0 - u
}

// Through the host, an integer tensor with a scalar its dtype cannot hold
// computes in a dtype that can: int64 for a whole number, float64 for a
// fraction, an infinity or a NaN, or a whole number beyond int64.
TEST_CASE("an integer tensor with a scalar its dtype cannot hold computes in one that can", "[conformance][elementwise][R10]") {
    PX_NEEDS({PX_OP_MUL, DType::int64}, {PX_OP_ADD, DType::int64}, {PX_OP_SUB, DType::int64}, {PX_OP_GT, DType::int64},
             {PX_OP_MUL, DType::float64}, {PX_OP_CAST, DType::int64}, {PX_OP_CAST, DType::float64});
    Device dev = pxtest::device_under_test();
    Tensor a = array(std::vector<int32_t>{1, -1}, {}, dev);
    const Tensor big = a * 1e10, huge = a * 1e300, nan = a * std::nan("");
    CHECK(big.dtype() == DType::int64);
    CHECK(big.to_vector<int64_t>() == std::vector<int64_t>{10000000000LL, -10000000000LL});
    CHECK(huge.dtype() == DType::float64);
    CHECK(huge.to_vector<double>() == std::vector<double>{1e300, -1e300});
    CHECK(nan.dtype() == DType::float64);
    CHECK(std::isnan(nan.to_vector<double>()[0]));
    Tensor u = array(std::vector<uint8_t>{200, 7}, {}, dev);
    CHECK((u + 300.0).to_vector<int64_t>() == std::vector<int64_t>{500, 307});
    CHECK((-5.0 - u).to_vector<int64_t>() == std::vector<int64_t>{-205, -12});
    CHECK((u > 300.0).to_vector<uint8_t>() == std::vector<uint8_t>{0, 0});
    // A scalar the dtype holds keeps it: the edges of int32 and uint8.
    CHECK((a * 2147483647.0).dtype() == DType::int32);
    CHECK((a + -2147483648.0).to_vector<int32_t>() == std::vector<int32_t>{-2147483647, 2147483647});  // wraps
    CHECK((u + 255.0).dtype() == DType::uint8);
    CHECK((a * 2147483648.0).dtype() == DType::int64);
}
