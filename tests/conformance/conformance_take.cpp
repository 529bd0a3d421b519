// Conformance: take and take_backward (ABI 1.8), the embedding lookup and
// its gradient: rows of every dtype, int32 and int64 indices of any shape,
// repeated indices summed in the indices' order (the same bits on every
// plugin), an index outside the table reported at the next wait.
#include <catch2/catch.hpp>

#include "conformance.hpp"
#include "nn_reference.hpp"

using namespace plexus;
using pxtest::random_values;
using pxtest::values;

TEST_CASE("take picks rows of every dtype by int32 and int64 indices", "[conformance][nn][take][R15]") {
    Device dev = pxtest::device_under_test();
    const int64_t v = 7, d = 3;
    std::vector<double> table(size_t(v * d));
    for (size_t i = 0; i < table.size(); ++i) table[i] = double(i % 100) - 20;  // exact in every dtype but uint8
    const std::vector<int64_t> idx{6, 0, 3, 3, 1, 6};
    for (DType dt : {DType::float32, DType::float64, DType::int32, DType::int64, DType::uint8, DType::float16,
                     DType::bfloat16}) {
        PX_OP_SECTION(PX_OP_TAKE, dt) {
            std::vector<double> t = table;
            if (dt == DType::uint8)
                for (double& x : t) x += 20;
            Tensor tt = array(t, {v, d}, dev).astype(dt);
            for (DType it : {DType::int32, DType::int64}) {
                Tensor ti = array(idx, {2, 3}, dev).astype(it);
                Tensor out = take(tt, ti);
                REQUIRE(out.shape() == Shape{2, 3, d});
                REQUIRE(out.dtype() == dt);
                std::vector<double> want;
                for (int64_t k : idx)
                    for (int64_t c = 0; c < d; ++c) want.push_back(t[size_t(k * d + c)]);
                REQUIRE(values(out) == want);
            }
            // A scalar index gives one row; rows of a 1-D table are scalars.
            REQUIRE(take(tt, array(std::vector<int32_t>{2}, {}, dev).reshape(Shape{})).shape() == Shape{d});
            REQUIRE(values(take(tt.reshape({v * d}), array(std::vector<int32_t>{4, 0}, {}, dev))) ==
                    std::vector<double>{t[4], t[0]});
        }
    }
}

TEST_CASE("take_backward adds repeated rows in the indices' order", "[conformance][nn][take][R15]") {
    Device dev = pxtest::device_under_test();
    // 3000 indices into 50 rows of 40: many repeats, enough for parallel paths.
    const int64_t n = 3000, rows = 50, d = 40;
    const auto dy0 = random_values(size_t(n * d), 90, -1, 1);
    std::vector<int64_t> idx(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) idx[size_t(i)] = (i * 37 + i / 7) % (rows - 2);  // rows 48 and 49 get nothing
    // A few indices too, of odd counts, all or most picking one row, as int32.
    std::vector<std::vector<int64_t>> few;
    for (int64_t m : {1, 2, 3, 7, 33}) {
        std::vector<int64_t> f(size_t(m), 5);
        for (int64_t i = 1; i < m; i += 3) f[size_t(i)] = m % 2 ? 0 : rows - 1;
        few.push_back(f);
    }
    for (DType dt : pxtest::float_dtypes()) {
        PX_OP_SECTION(PX_OP_TAKE_BACKWARD, dt) {
            const auto dy_all = pxtest::rounded_to(dy0, dt);
            auto check = [&](const std::vector<int64_t>& ix, DType index_dtype) {
                const int64_t m = int64_t(ix.size());
                const std::vector<double> dy(dy_all.begin(), dy_all.begin() + m * d);
                Tensor tdy = array(dy, {m, d}, dev).astype(dt);
                Tensor ti = index_dtype == DType::int64 ? array(ix, {m}, dev)
                                                        : array(std::vector<int32_t>(ix.begin(), ix.end()), {m}, dev);
                Tensor out = Tensor::wrap([&](px_tensor** o) { return px_take_backward(tdy.handle(), ti.handle(), rows, o); });
                REQUIRE(out.shape() == Shape{rows, d});
                // The device's own order, added here in the same order and precision.
                std::vector<double> want(size_t(rows * d), 0.0);
                std::vector<float> want32(size_t(rows * d), 0.0f);
                for (int64_t i = 0; i < m; ++i)
                    for (int64_t c = 0; c < d; ++c) {
                        want[size_t(ix[size_t(i)] * d + c)] += dy[size_t(i * d + c)];
                        want32[size_t(ix[size_t(i)] * d + c)] += float(dy[size_t(i * d + c)]);
                    }
                INFO(m << " indices");
                const auto got = values(out);
                if (dt == DType::float64) {
                    REQUIRE(got == want);
                } else if (dt == DType::float32) {
                    REQUIRE(got == std::vector<double>(want32.begin(), want32.end()));
                } else {  // summed in float32, rounded once
                    REQUIRE(got == pxtest::rounded_to(std::vector<double>(want32.begin(), want32.end()), dt));
                }
            };
            check(idx, DType::int64);
            for (const auto& f : few) check(f, DType::int32);
            // No index: zeros.
            Tensor none = Tensor::wrap([&](px_tensor** o) {
                return px_take_backward(zeros({0, d}, dev, dt).handle(), zeros({0}, dev, DType::int32).handle(), 3, o);
            });
            REQUIRE(values(none) == std::vector<double>(size_t(3 * d), 0.0));
        }
    }
}

TEST_CASE("take's gradient matches finite differences", "[conformance][nn][take][grad][R15]") {
    PX_NEEDS({PX_OP_TAKE, DType::float64}, {PX_OP_TAKE_BACKWARD, DType::float64}, {PX_OP_MUL, DType::float64},
             {PX_OP_SUM, DType::float64});
    Device dev = pxtest::device_under_test();
    Tensor idx = array(std::vector<int32_t>{2, 0, 2, 4, 2}, {}, dev);
    const std::vector<double> w = random_values(10, 91);
    pxtest::check_gradients(dev, {{{5, 2}, random_values(10, 92)}}, [&](const std::vector<Tensor>& t) {
        return (take(t[0], idx) * array(w, {5, 2}, dev)).sum();
    });
}

TEST_CASE("an index outside the table fails at the next wait", "[conformance][nn][take][errors][R5]") {
    PX_NEEDS({PX_OP_TAKE, DType::float32}, {PX_OP_TAKE_BACKWARD, DType::float32}, {PX_OP_FILL, DType::float32});
    Device dev = pxtest::device_under_test();
    Tensor table = ones({4, 2}, dev);
    for (int32_t bad : {4, -1}) {
        Tensor idx = array(std::vector<int32_t>{0, 3, bad, 1}, {}, dev);
        PX_REQUIRE_MENTIONS(pxtest::message_of<Error>([&] { take(table, idx).to_vector<float>(); }),
                            "index " + std::to_string(bad) + " at position 2 is outside [0, 4) (the table's rows)");
        Tensor g = Tensor::wrap([&](px_tensor** o) {
            return px_take_backward(ones({4, 2}, dev).handle(), idx.handle(), 4, o);
        });
        PX_REQUIRE_MENTIONS(pxtest::message_of<Error>([&] { g.to_vector<float>(); }), "is outside [0, 4)");
    }
    // The device goes on working.
    REQUIRE(values(take(table, array(std::vector<int32_t>{1}, {}, dev))) == std::vector<double>{1, 1});
}

TEST_CASE("take refuses bad arguments before queuing anything", "[conformance][nn][take][errors][R5]") {
    PX_NEEDS({PX_OP_TAKE, DType::float32}, {PX_OP_TAKE_BACKWARD, DType::float32}, {PX_OP_FILL, DType::float32},
             {PX_OP_FILL, DType::int32}, {PX_OP_FILL, DType::int64});
    Device dev = pxtest::device_under_test();
    Tensor table = ones({4, 2}, dev);
    PX_REQUIRE_MENTIONS(pxtest::message_of<DTypeError>([&] { take(table, ones({2}, dev)); }),
                        "the indices (input 1) are float32; indices are int32 or int64");
    PX_REQUIRE_MENTIONS(pxtest::message_of<ShapeError>([&] { take(ones({}, dev), zeros({2}, dev, DType::int32)); }),
                        "the table (input 0) must be 1-D or more");
    PX_REQUIRE_MENTIONS(pxtest::message_of<ShapeError>([&] {
                            take(ones({2, 1, 1, 1, 1}, dev), zeros({1, 1, 1, 1, 1}, dev, DType::int32));
                        }),
                        "the result would have 9 axes; at most 8");
    px_tensor* out = nullptr;
    // Made first: releasing a temporary would clear the last error.
    Tensor idx = zeros({3}, dev, DType::int64), dy = ones({3, 2}, dev), short_dy = ones({2, 2}, dev);
    REQUIRE(px_take_backward(dy.handle(), idx.handle(), -1, &out) == PX_ERROR_INVALID_ARGUMENT);
    PX_REQUIRE_MENTIONS(px_last_error(), "rows -1 is negative");
    REQUIRE(px_take_backward(short_dy.handle(), idx.handle(), 4, &out) == PX_ERROR_SHAPE);
    PX_REQUIRE_MENTIONS(px_last_error(), "the output gradient (input 0) has shape (2, 2); the call needs (3, 2)");
    REQUIRE(px_take_backward(ones({3, 2}, dev, DType::int32).handle(), idx.handle(), 4, &out) == PX_ERROR_DTYPE);
    REQUIRE(out == nullptr);
}
