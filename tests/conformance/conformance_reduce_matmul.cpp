// Conformance: reductions and matrix products against float64 host references.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <random>

#include "conformance.hpp"
#include "plexus/op_rows.h"

using namespace plexus;
using pxtest::values;

namespace {

std::vector<double> sample(int n, unsigned seed) {
    std::mt19937 g(seed);
    std::uniform_int_distribution<int> u(0, 50);
    std::vector<double> v;
    for (int i = 0; i < n; ++i) v.push_back(u(g));
    return v;
}

// Reference reduction of a 3-D array over `axis` (-1: all).
std::vector<double> reduce_ref(const std::vector<double>& v, int axis, px_op op, std::array<int, 3> shape = {2, 3, 4}) {
    auto finish = [&](std::vector<double> xs) -> double {
        switch (op) {
        case PX_OP_SUM: { double s = 0; for (double x : xs) s += x; return s; }
        case PX_OP_MEAN: { double s = 0; for (double x : xs) s += x; return s / double(xs.size()); }
        case PX_OP_MAX: return *std::max_element(xs.begin(), xs.end());
        case PX_OP_MIN: return *std::min_element(xs.begin(), xs.end());
        default: return double(std::max_element(xs.begin(), xs.end()) - xs.begin());
        }
    };
    if (axis < 0) return {finish(v)};
    std::vector<double> out;
    int outer = 1, inner = 1;
    for (int i = 0; i < axis; ++i) outer *= shape[i];
    for (int i = axis + 1; i < 3; ++i) inner *= shape[i];
    for (int o = 0; o < outer; ++o)
        for (int j = 0; j < inner; ++j) {
            std::vector<double> xs;
            for (int k = 0; k < shape[axis]; ++k) xs.push_back(v[(o * shape[axis] + k) * inner + j]);
            out.push_back(finish(xs));
        }
    return out;
}

const DType kReducedDtypes[] = {DType::float32, DType::float64, DType::int32,   DType::int64,
                                DType::uint8,   DType::float16, DType::bfloat16};

// A reduction's reference as its result dtype holds it: float16's sum of 66,000
// values of up to 50 is infinity, as float64's sum rounded once is.
std::vector<double> rounded(std::vector<double> v, DType d) {
    for (double& x : v) x = pxtest::rounded_to(x, d);
    return v;
}

// Integer-valued samples: sums exact in float32 and wider; float16 and
// bfloat16 accumulate in float32 or wider and round once (R11).
double reduce_tolerance(DType d) { return std::max(1e-6, pxtest::tolerance(d)); }

}  // namespace

TEST_CASE("reductions over all axes and each axis, every dtype", "[conformance][reduce][R11]") {
    Device dev = pxtest::device_under_test();
    auto v = sample(24, 1);
    for (DType d : kReducedDtypes)
        for (px_op op : {PX_OP_SUM, PX_OP_MEAN, PX_OP_MAX, PX_OP_MIN, PX_OP_ARGMAX})
            PX_OP_SECTION(op, d) {
                for (int axis : {-1, 0, 1, 2}) {
                    INFO("axis " << axis);
                    Tensor t = array(v, {2, 3, 4}, dev).astype(d);
                    Tensor r = axis < 0 ? t.reduce(op) : t.reduce(op, axis);
                    bool is_float = is_floating(d);
                    DType want_dtype = op == PX_OP_ARGMAX ? DType::int64
                                       : op == PX_OP_SUM && !is_float ? DType::int64
                                       : op == PX_OP_MEAN && !is_float ? DType::float64
                                                                       : d;
                    REQUIRE(r.dtype() == want_dtype);
                    PX_REQUIRE_CLOSE(values(r), rounded(reduce_ref(v, axis, op), want_dtype), reduce_tolerance(d));
                }
            }
}

TEST_CASE("large reductions (a device's parallel paths) match the reference, every dtype", "[conformance][reduce][R11]") {
    // 66,000 values: every axis, and all of them, is enough work for a CPU's
    // threads or a GPU's many blocks. Integers 0..50 with many ties: the
    // sums are exact in every dtype and argmax must still pick the first.
    Device dev = pxtest::device_under_test();
    const std::array<int, 3> shape{40, 50, 33};
    auto v = sample(40 * 50 * 33, 2);
    for (DType d : kReducedDtypes)
        for (px_op op : {PX_OP_SUM, PX_OP_MEAN, PX_OP_MAX, PX_OP_MIN, PX_OP_ARGMAX})
            PX_OP_SECTION(op, d) {
                Tensor t = array(v, {40, 50, 33}, dev).astype(d);
                for (int axis : {-1, 0, 1, 2}) {
                    INFO("axis " << axis);
                    Tensor r = axis < 0 ? t.reduce(op) : t.reduce(op, axis);
                    PX_REQUIRE_CLOSE(values(r), rounded(reduce_ref(v, axis, op, shape), r.dtype()),
                                     reduce_tolerance(d));
                }
            }
}

TEST_CASE("keepdims keeps the reduced axis with length 1", "[conformance][reduce][R11]") {
    PX_NEEDS({PX_OP_ARANGE, DType::float32}, {PX_OP_SUM, DType::float32}, {PX_OP_MAX, DType::float32});
    Device dev = pxtest::device_under_test();
    Tensor t = arange(0, 24, 1, dev).reshape({2, 3, 4});
    REQUIRE(t.sum(1, true).shape() == Shape{2, 1, 4});
    REQUIRE(t.sum(-1).shape() == Shape{2, 3});
    REQUIRE(t.max().shape() == Shape{});
    REQUIRE(t.max().item<float>() == 23);
}

TEST_CASE("a long sum is accurate (float64 accumulation)", "[conformance][reduce][R11]") {
    PX_NEEDS({PX_OP_FILL, DType::float32}, {PX_OP_SUM, DType::float32}, {PX_OP_MEAN, DType::float32});
    Device dev = pxtest::device_under_test();
    const int64_t n = 1 << 22;
    Tensor t = full({n}, 0.1, dev);
    REQUIRE(t.sum().item<float>() == Approx(0.1 * double(n)).epsilon(1e-6));
    REQUIRE(t.mean().item<float>() == Approx(0.1).epsilon(1e-6));
}

// A mean of integers is summed in float64, as NumPy's is: an int64 sum
// would wrap (2^62 four times is 0 modulo 2^64) and give a mean of 0. The
// long case reaches the devices' parallel paths; 70,000 * 2^62 is exact in
// float64.
TEST_CASE("a mean of integers is summed in float64 and does not wrap", "[conformance][reduce][R11]") {
    PX_NEEDS({PX_OP_MEAN, DType::int64}, {PX_OP_MEAN, DType::int32});
    Device dev = pxtest::device_under_test();
    constexpr int64_t big = int64_t(1) << 62;
    Tensor four = array(std::vector<int64_t>{big, big, big, big}, {2, 2}, dev);
    CHECK(values(four.mean()) == std::vector<double>{4611686018427387904.0});
    CHECK(values(four.reduce(PX_OP_MEAN, 0)) == std::vector<double>{4611686018427387904.0, 4611686018427387904.0});
    CHECK(values(four.reduce(PX_OP_MEAN, 1)) == std::vector<double>{4611686018427387904.0, 4611686018427387904.0});
    Tensor extremes = array(std::vector<int64_t>{INT64_MAX, INT64_MAX, INT64_MIN}, {}, dev);
    CHECK(values(extremes.mean()) == std::vector<double>{(2.0 * 9223372036854775807.0 - 9223372036854775808.0) / 3});
    Tensor many = array(std::vector<int64_t>(70000, big), {}, dev);
    CHECK(values(many.mean()) == std::vector<double>{4611686018427387904.0});
    Tensor wide = array(std::vector<int64_t>(2 * 70000, big), {2, 70000}, dev);
    CHECK(values(wide.reduce(PX_OP_MEAN, 1)) == std::vector<double>{4611686018427387904.0, 4611686018427387904.0});
    CHECK(values(array(std::vector<int32_t>{INT32_MIN, INT32_MIN}, {}, dev).mean()) == std::vector<double>{-2147483648.0});
}

TEST_CASE("max, min and argmax propagate NaN like NumPy", "[conformance][reduce][R11]") {
    PX_NEEDS({PX_OP_MAX, DType::float32}, {PX_OP_MIN, DType::float32}, {PX_OP_ARGMAX, DType::float32});
    Device dev = pxtest::device_under_test();
    Tensor t = array({1.0f, NAN, 3.0f}, dev);
    REQUIRE(std::isnan(t.max().item<float>()));
    REQUIRE(std::isnan(t.min().item<float>()));
    REQUIRE(t.argmax().item<int64_t>() == 1);
    // Along an outer axis too, column by column: the first NaN wins, and a
    // column without one gives its first extreme.
    Tensor m = array({1.0f, 5.0f, 0.0f, NAN, NAN, 7.0f, 3.0f, NAN, 7.0f}, {3, 3}, dev);
    const std::vector<double> mx = values(m.reduce(PX_OP_MAX, 0)), mn = values(m.reduce(PX_OP_MIN, 0));
    CHECK((std::isnan(mx[0]) && std::isnan(mx[1]) && mx[2] == 7));
    CHECK((std::isnan(mn[0]) && std::isnan(mn[1]) && mn[2] == 0));
    CHECK(values(m.argmax(0)) == std::vector<double>{1, 1, 1});
    // Long enough for a device's parallel paths (conformance.cpu0.four_threads
    // runs the CPU plugin's): the first NaN wins over a
    // later one and over a larger value before it; without NaN, the first
    // of two equal maxima (one in each half) wins.
    std::vector<float> many(70000, 0.0f);
    many[100] = 5.0f, many[50000] = NAN, many[60000] = NAN, many[69999] = 7.0f;
    Tensor with_nan = array(many, {}, dev);
    CHECK(with_nan.argmax().item<int64_t>() == 50000);
    CHECK(std::isnan(with_nan.max().item<float>()));
    CHECK(std::isnan(with_nan.min().item<float>()));
    many[50000] = many[60000] = 0.0f, many[69999] = 5.0f, many[200] = -1.0f, many[65000] = -1.0f;
    Tensor ties = array(many, {}, dev);
    CHECK(ties.argmax().item<int64_t>() == 100);
    CHECK(ties.max().item<float>() == 5.0f);
    CHECK(ties.min().item<float>() == -1.0f);
}

// Along rows of every length a device may split into lanes, blocks or a
// tail: values from a few with many ties (0.0 and -0.0 among them, which
// compare equal) and NaN in some rows, anywhere. The reference is one pass:
// the first NaN, else the first extreme.
TEST_CASE("argmax max and min along rows: the first NaN or the first extreme wherever it falls", "[conformance][reduce][R11]") {
    Device dev = pxtest::device_under_test();
    const std::array<double, 6> pool{-2.0, -1.0, -0.0, 0.0, 1.0, 2.0};
    std::mt19937 g(7);
    for (DType d : {DType::float32, DType::float64, DType::float16, DType::bfloat16})
        for (px_op op : {PX_OP_ARGMAX, PX_OP_MAX, PX_OP_MIN})
            PX_OP_SECTION(op, d) {
                for (int len : {1, 5, 16, 31, 32, 33, 47, 64, 100, 1000, 4099}) {
                    const int rows = 40;
                    std::vector<double> v(size_t(rows) * size_t(len));
                    for (double& x : v) x = pool[g() % pool.size()];
                    for (int r = 0; r < rows; ++r) {
                        const int nans = r % 4 == 0 ? 0 : int(r % 3);  // none, one or two
                        for (int k = 0; k < nans; ++k) v[size_t(r) * size_t(len) + g() % size_t(len)] = NAN;
                    }
                    std::vector<double> want;
                    for (int r = 0; r < rows; ++r) {
                        const double* row = v.data() + size_t(r) * size_t(len);
                        int best = 0;
                        for (int i = 1; i < len && !std::isnan(row[best]); ++i)
                            if (std::isnan(row[i]) || (op == PX_OP_MIN ? row[i] < row[best] : row[i] > row[best]))
                                best = i;
                        want.push_back(op == PX_OP_ARGMAX ? best : row[best]);
                    }
                    INFO("rows of " << len);
                    const std::vector<double> got = values(array(v, {rows, len}, dev).astype(d).reduce(op, 1));
                    REQUIRE(got.size() == want.size());
                    for (size_t r = 0; r < want.size(); ++r) {
                        INFO("row " << r);
                        if (std::isnan(want[r])) CHECK(std::isnan(got[r]));
                        else CHECK(got[r] == want[r]);
                    }
                }
            }
}

TEST_CASE("matmul 2-D and batched against a float64 reference", "[conformance][matmul][R12]") {
    Device dev = pxtest::device_under_test();
    // Integers 0..50: every product and sum is exact in float32, so a float16
    // or bfloat16 result is the reference rounded once.
    for (DType d : {DType::float32, DType::float64, DType::float16, DType::bfloat16}) {
        const double tol = reduce_tolerance(d);
        PX_OP_SECTION(PX_OP_MATMUL, d) {
            const int B = 3, M = 5, K = 7, N = 4;
            auto av = sample(B * M * K, 2), bv = sample(B * K * N, 3);
            Tensor a = array(av, {B, M, K}, dev).astype(d), b = array(bv, {B, K, N}, dev).astype(d);
            auto ref = [&](int bi, bool shared_b) {
                std::vector<double> c;
                for (int i = 0; i < M; ++i)
                    for (int j = 0; j < N; ++j) {
                        double s = 0;
                        for (int k = 0; k < K; ++k) s += av[(bi * M + i) * K + k] * bv[((shared_b ? 0 : bi) * K + k) * N + j];
                        c.push_back(s);
                    }
                return c;
            };
            Tensor c = matmul(a, b);
            REQUIRE(c.shape() == Shape{B, M, N});
            std::vector<double> want;
            for (int bi = 0; bi < B; ++bi) for (double x : ref(bi, false)) want.push_back(x);
            PX_REQUIRE_CLOSE(values(c), rounded(want, d), tol);
            // A 2-D right operand is shared by the whole batch.
            Tensor b0 = b.slice(0, 1).reshape({K, N});
            want.clear();
            for (int bi = 0; bi < B; ++bi) for (double x : ref(bi, true)) want.push_back(x);
            PX_REQUIRE_CLOSE(values(matmul(a, b0)), rounded(want, d), tol);
            // Plain 2-D.
            Tensor a0 = a.slice(0, 1).reshape({M, K});
            PX_REQUIRE_CLOSE(values(matmul(a0, b0)), rounded(ref(0, true), d), tol);
        }
    }
}

TEST_CASE("matmul with an empty inner dimension gives zeros", "[conformance][matmul][R12]") {
    PX_NEEDS({PX_OP_FILL, DType::float32}, {PX_OP_MATMUL, DType::float32});
    Device dev = pxtest::device_under_test();
    Tensor c = matmul(zeros({2, 0}, dev), zeros({0, 3}, dev));
    REQUIRE(c.shape() == Shape{2, 3});
    REQUIRE(values(c) == std::vector<double>(6, 0.0));
    // Batched too. Ones of the result's size made and freed first, so a
    // caching allocator hands the product a block that is not already zero.
    REQUIRE(values(ones({2, 2, 3}, dev)) == std::vector<double>(12, 1.0));
    Tensor batched = matmul(zeros({2, 2, 0}, dev), zeros({2, 0, 3}, dev));
    REQUIRE(batched.shape() == Shape{2, 2, 3});
    REQUIRE(values(batched) == std::vector<double>(12, 0.0));
}

// The pair refused is one the op table defines and the device lacks,
// whichever that is (the inputs are made without any op: empty()).
TEST_CASE("an op the device lacks is refused by the host, named clearly", "[conformance][errors][R5]") {
    Device dev = pxtest::device_under_test();
    for (int32_t op = 0; op < PX_OP_NUMBER_LIMIT; ++op) {
        const px_op_row* row = px_op_row_of(op);
        if (!row || (row->family != PX_FAMILY_UNARY && row->family != PX_FAMILY_BINARY &&
                     row->family != PX_FAMILY_REDUCE && row->family != PX_FAMILY_MATMUL))
            continue;
        for (int32_t d = 1; d < 16; ++d) {
            if (!px_op_accepts(op, d) || pxconf::device_has(px_op(op), DType(d))) continue;
            INFO(px_op_name(op) << " on " << px_dtype_name(d));
            Tensor a = empty({2, 2}, dev, DType(d));
            std::string m = pxtest::message_of<UnsupportedError>([&] {
                switch (row->family) {
                case PX_FAMILY_UNARY: a.unary(px_op(op)); break;
                case PX_FAMILY_BINARY: a.binary_op(px_op(op), a); break;
                case PX_FAMILY_REDUCE: a.reduce(px_op(op)); break;
                default: matmul(a, a);
                }
            });
            PX_REQUIRE_MENTIONS(m, std::string(px_op_name(op)) + " on " + px_dtype_name(d) + " is not supported on " +
                                       dev.str() + " by plugin");
            return;
        }
    }
    pxconf::record().skipped = "the device offers every elementwise, reduction and matmul pair the op table defines";
}
