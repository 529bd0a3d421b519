// Every op, bad arguments, on every device (issue 7, item 2). One table holds
// at least three refused calls per op, each with the status it must get, and
// one valid call per op. Each row runs on every device the runtime has: the
// CPU plugin's, a GPU when there is one, and the test plugin "accept-all",
// which claims every (op, dtype) and fails any op that reaches it. A refusal
// that comes back the same from all of them, and never as "reached the
// plugin", was made by the host before dispatch, in the one routing point.
// The ops are enumerated from px_op_name, so a new op without rows fails here.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "plexus/op_rows.h"
#include "plexus/plexus.h"
#include "plugin_runtime.hpp"

namespace {

using Dims = std::vector<int64_t>;

// Tensors of zeros on the device under test (or on another one), made from
// host memory so that no op runs while the inputs are built.
struct Maker {
    px_runtime* rt;
    px_device dev, other;
    std::vector<px_tensor*> owned;
    ~Maker() {
        for (px_tensor* t : owned) px_tensor_release(t);
    }
    px_tensor* on(px_device d, px_dtype dt, const Dims& dims) {
        int64_t n = 1;
        for (int64_t x : dims) n *= x;
        std::vector<unsigned char> zeros(size_t(n) * px_dtype_size(dt));
        px_tensor* t = nullptr;
        REQUIRE(px_tensor_from_host(rt, d, dt, int32_t(dims.size()), dims.data(), zeros.data(), zeros.size(), &t) ==
                PX_OK);
        owned.push_back(t);
        return t;
    }
    px_tensor* f(const Dims& d) { return on(dev, PX_FLOAT32, d); }
    px_tensor* f64(const Dims& d) { return on(dev, PX_FLOAT64, d); }
    px_tensor* i32(const Dims& d) { return on(dev, PX_INT32, d); }
    px_tensor* u8(const Dims& d) { return on(dev, PX_UINT8, d); }
    px_tensor* far(const Dims& d) { return on(other, PX_FLOAT32, d); }  // on another device
    px_tensor* released() {
        px_tensor* t = on(dev, PX_FLOAT32, {2});
        owned.pop_back();
        px_tensor_release(t);
        return t;
    }
};

using Call = std::function<px_status(Maker&, px_tensor**)>;
struct Row {
    int32_t op;
    std::string what;
    px_status want;  // PX_OK: a valid call, which must reach the plugin
    Call call;
};


void binary_rows(std::vector<Row>& rows, int32_t op) {
    auto bin = [op](Maker&, px_tensor* a, px_tensor* b, px_tensor** o) { return px_binary(px_op(op), a, b, o); };
    rows.push_back({op, "valid", PX_OK, [=](Maker& m, px_tensor** o) { return bin(m, m.f({2, 3}), m.f({3}), o); }});
    rows.push_back({op, "shapes that do not broadcast", PX_ERROR_SHAPE,
                    [=](Maker& m, px_tensor** o) { return bin(m, m.f({2, 3}), m.f({4}), o); }});
    rows.push_back({op, "dtypes that differ (promoted)", PX_OK,
                    [=](Maker& m, px_tensor** o) { return bin(m, m.f({3}), m.i32({3}), o); }});
    rows.push_back({op, "inputs on two devices", PX_ERROR_DEVICE_MISMATCH,
                    [=](Maker& m, px_tensor** o) { return bin(m, m.f({3}), m.far({3}), o); }});
    rows.push_back({op, "given to px_unary", PX_ERROR_INVALID_ARGUMENT,
                    [=](Maker& m, px_tensor** o) { return px_unary(px_op(op), m.f({3}), o); }});
    if (op == PX_OP_POW)
    {
        rows.push_back({op, "integers", PX_ERROR_DTYPE,
                        [=](Maker& m, px_tensor** o) { return bin(m, m.i32({3}), m.i32({3}), o); }});
        rows.push_back({op, "integers of two dtypes", PX_ERROR_DTYPE,
                        [=](Maker& m, px_tensor** o) { return bin(m, m.u8({3}), m.i32({3}), o); }});
    }
}

void unary_rows(std::vector<Row>& rows, int32_t op) {
    const bool signed_ok = px_op_accepts(op, PX_INT32);  // then uint8 is the refused dtype
    rows.push_back({op, "valid", PX_OK, [=](Maker& m, px_tensor** o) { return px_unary(px_op(op), m.f({4}), o); }});
    rows.push_back({op, signed_ok ? "uint8" : "int32", PX_ERROR_DTYPE, [=](Maker& m, px_tensor** o) {
                        return px_unary(px_op(op), signed_ok ? m.u8({4}) : m.i32({4}), o);
                    }});
    rows.push_back({op, "a released tensor", PX_ERROR_INVALID_HANDLE,
                    [=](Maker& m, px_tensor** o) { return px_unary(px_op(op), m.released(), o); }});
    rows.push_back({op, "given to px_binary", PX_ERROR_INVALID_ARGUMENT, [=](Maker& m, px_tensor** o) {
                        px_tensor* a = m.f({4});
                        return px_binary(px_op(op), a, a, o);
                    }});
    rows.push_back({op, "given to px_reduce", PX_ERROR_INVALID_ARGUMENT,
                    [=](Maker& m, px_tensor** o) { return px_reduce(px_op(op), m.f({4}), 1, 0, 0, o); }});
    rows.push_back({op, "given to px_binary_scalar", PX_ERROR_INVALID_ARGUMENT,
                    [=](Maker& m, px_tensor** o) { return px_binary_scalar(px_op(op), m.f({4}), 2.0, 0, o); }});
}

void reduce_rows(std::vector<Row>& rows, int32_t op) {
    auto red = [op](px_tensor* a, int all, int axis, px_tensor** o) { return px_reduce(px_op(op), a, all, axis, 0, o); };
    rows.push_back({op, "valid", PX_OK, [=](Maker& m, px_tensor** o) { return red(m.f({2, 3}), 0, 1, o); }});
    rows.push_back({op, "axis 2 of a rank-2 tensor", PX_ERROR_INVALID_ARGUMENT,
                    [=](Maker& m, px_tensor** o) { return red(m.f({2, 3}), 0, 2, o); }});
    rows.push_back({op, "axis -3 of a rank-2 tensor", PX_ERROR_INVALID_ARGUMENT,
                    [=](Maker& m, px_tensor** o) { return red(m.f({2, 3}), 0, -3, o); }});
    rows.push_back({op, "an axis of a scalar", PX_ERROR_INVALID_ARGUMENT,
                    [=](Maker& m, px_tensor** o) { return red(m.f({}), 0, 0, o); }});
    if (op == PX_OP_MAX || op == PX_OP_MIN || op == PX_OP_ARGMAX)
        rows.push_back({op, "an empty axis", PX_ERROR_SHAPE,
                        [=](Maker& m, px_tensor** o) { return red(m.f({3, 0}), 0, 1, o); }});
}

void creation_rows(std::vector<Row>& rows) {
    const int64_t neg[2] = {2, -3}, wide[3] = {int64_t(1) << 40, int64_t(1) << 30, 1024};
    const int64_t n4 = 4, vast = int64_t(1) << 56;  // 2^56 bytes: more than any device has
    auto full = [](Maker& m, px_dtype dt, int nd, const int64_t* d, double v, px_tensor** o) {
        return px_tensor_full(m.rt, m.dev, dt, nd, d, v, o);
    };
    const int32_t F = PX_OP_FILL, A = PX_OP_ARANGE, U = PX_OP_RANDOM_UNIFORM, N = PX_OP_RANDOM_NORMAL;
    rows.push_back({F, "valid", PX_OK, [=](Maker& m, px_tensor** o) { return full(m, PX_INT32, 1, &n4, 7, o); }});
    rows.push_back({F, "a negative dimension", PX_ERROR_SHAPE,
                    [=](Maker& m, px_tensor** o) { return full(m, PX_FLOAT32, 2, neg, 1, o); }});
    rows.push_back({F, "dimensions whose product overflows 64 bits", PX_ERROR_SHAPE,
                    [=](Maker& m, px_tensor** o) { return full(m, PX_FLOAT32, 3, wide, 1, o); }});
    rows.push_back({F, "more bytes than the device has", PX_ERROR_OUT_OF_MEMORY,
                    [=](Maker& m, px_tensor** o) { return full(m, PX_UINT8, 1, &vast, 1, o); }});
    rows.push_back({F, "NaN into int32", PX_ERROR_INVALID_ARGUMENT,
                    [=](Maker& m, px_tensor** o) { return full(m, PX_INT32, 1, &n4, std::nan(""), o); }});
    rows.push_back({F, "dtype 0", PX_ERROR_DTYPE,
                    [=](Maker& m, px_tensor** o) { return full(m, px_dtype(0), 1, &n4, 1, o); }});

    auto ar = [](Maker& m, px_dtype dt, double a, double b, double s, px_tensor** o) {
        return px_tensor_arange(m.rt, m.dev, dt, a, b, s, o);
    };
    rows.push_back({A, "valid", PX_OK, [=](Maker& m, px_tensor** o) { return ar(m, PX_INT64, 0, 5, 1, o); }});
    rows.push_back({A, "step 0", PX_ERROR_INVALID_ARGUMENT,
                    [=](Maker& m, px_tensor** o) { return ar(m, PX_FLOAT32, 0, 5, 0, o); }});
    rows.push_back({A, "a NaN start", PX_ERROR_INVALID_ARGUMENT,
                    [=](Maker& m, px_tensor** o) { return ar(m, PX_FLOAT32, std::nan(""), 5, 1, o); }});
    rows.push_back({A, "1e19 elements", PX_ERROR_SHAPE,
                    [=](Maker& m, px_tensor** o) { return ar(m, PX_FLOAT32, 0, 1e19, 1, o); }});
    rows.push_back({A, "dtype 42", PX_ERROR_DTYPE, [=](Maker& m, px_tensor** o) { return ar(m, px_dtype(42), 0, 5, 1, o); }});

    for (int32_t op : {U, N}) {
        auto rnd = [op](Maker& m, px_dtype dt, int nd, const int64_t* d, double a, double b, px_tensor** o) {
            return op == PX_OP_RANDOM_UNIFORM ? px_tensor_random_uniform(m.rt, m.dev, dt, nd, d, a, b, o)
                                              : px_tensor_random_normal(m.rt, m.dev, dt, nd, d, a, b, o);
        };
        rows.push_back({op, "valid", PX_OK, [=](Maker& m, px_tensor** o) { return rnd(m, PX_FLOAT32, 1, &n4, 0, 1, o); }});
        rows.push_back({op, "int32", PX_ERROR_DTYPE, [=](Maker& m, px_tensor** o) { return rnd(m, PX_INT32, 1, &n4, 0, 1, o); }});
        rows.push_back({op, "an infinite parameter", PX_ERROR_INVALID_ARGUMENT, [=](Maker& m, px_tensor** o) {
                            return rnd(m, PX_FLOAT32, 1, &n4, 0, INFINITY, o);
                        }});
        rows.push_back({op, op == U ? "low above high" : "a negative standard deviation", PX_ERROR_INVALID_ARGUMENT,
                        [=](Maker& m, px_tensor** o) { return rnd(m, PX_FLOAT64, 1, &n4, 1, -1, o); }});
        rows.push_back({op, "a negative dimension", PX_ERROR_SHAPE,
                        [=](Maker& m, px_tensor** o) { return rnd(m, PX_FLOAT32, 2, neg, 0, 1, o); }});
    }
}

void data_movement_rows(std::vector<Row>& rows) {
    const int32_t C = PX_OP_COPY, K = PX_OP_CAST;
    rows.push_back({C, "valid (transpose)", PX_OK, [](Maker& m, px_tensor** o) { return px_transpose(m.f({2, 3}), nullptr, 0, o); }});
    rows.push_back({C, "transpose: an axis twice", PX_ERROR_INVALID_ARGUMENT, [](Maker& m, px_tensor** o) {
                        const int32_t perm[2] = {1, 1};
                        return px_transpose(m.f({2, 3}), perm, 2, o);
                    }});
    rows.push_back({C, "transpose: 3 axes for rank 2", PX_ERROR_INVALID_ARGUMENT, [](Maker& m, px_tensor** o) {
                        const int32_t perm[3] = {0, 1, 2};
                        return px_transpose(m.f({2, 3}), perm, 3, o);
                    }});
    rows.push_back({C, "slice: axis out of range", PX_ERROR_INVALID_ARGUMENT,
                    [](Maker& m, px_tensor** o) { return px_slice_axis(m.f({2, 3}), 5, 0, 1, 1, o); }});
    rows.push_back({C, "slice: a negative step", PX_ERROR_INVALID_ARGUMENT,
                    [](Maker& m, px_tensor** o) { return px_slice_axis(m.f({4}), 0, 0, 4, -1, o); }});
    rows.push_back({C, "concat: shapes differ off the axis", PX_ERROR_SHAPE, [](Maker& m, px_tensor** o) {
                        px_tensor* ts[2] = {m.f({2, 3}), m.f({2, 4})};
                        return px_concat(ts, 2, 0, o);
                    }});
    rows.push_back({C, "concat: dtypes differ", PX_ERROR_DTYPE, [](Maker& m, px_tensor** o) {
                        px_tensor* ts[2] = {m.f({2}), m.f64({2})};
                        return px_concat(ts, 2, 0, o);
                    }});
    rows.push_back({C, "concat: two devices", PX_ERROR_DEVICE_MISMATCH, [](Maker& m, px_tensor** o) {
                        px_tensor* ts[2] = {m.f({2}), m.far({2})};
                        return px_concat(ts, 2, 0, o);
                    }});
    rows.push_back({C, "concat: the joined axis overflows 64 bits", PX_ERROR_SHAPE, [](Maker& m, px_tensor** o) {
                        px_tensor* ts[2] = {m.f({0, int64_t(1) << 62}), m.f({0, int64_t(1) << 62})};  // empty
                        return px_concat(ts, 2, 1, o);
                    }});
    rows.push_back({C, "concat: scalars", PX_ERROR_SHAPE, [](Maker& m, px_tensor** o) {
                        px_tensor* ts[2] = {m.f({}), m.f({})};
                        return px_concat(ts, 2, 0, o);
                    }});
    rows.push_back({C, "copy_to: a device that does not exist", PX_ERROR_NO_DEVICE,
                    [](Maker& m, px_tensor** o) { return px_tensor_copy_to(m.f({2}), px_device{m.dev.kind, 99}, o); }});

    rows.push_back({K, "valid", PX_OK, [](Maker& m, px_tensor** o) { return px_cast(m.f({3}), PX_INT64, o); }});
    rows.push_back({K, "dtype 99", PX_ERROR_DTYPE, [](Maker& m, px_tensor** o) { return px_cast(m.f({3}), px_dtype(99), o); }});
    rows.push_back({K, "dtype 0", PX_ERROR_DTYPE, [](Maker& m, px_tensor** o) { return px_cast(m.f({3}), px_dtype(0), o); }});
    rows.push_back({K, "a released tensor", PX_ERROR_INVALID_HANDLE,
                    [](Maker& m, px_tensor** o) { return px_cast(m.released(), PX_INT32, o); }});
    rows.push_back({K, "a NULL result pointer", PX_ERROR_INVALID_ARGUMENT,
                    [](Maker& m, px_tensor**) { return px_cast(m.f({3}), PX_INT32, nullptr); }});
}

void elementwise_rows(std::vector<Row>& rows) {
    const int32_t W = PX_OP_WHERE, M = PX_OP_MATMUL;
    rows.push_back({W, "valid", PX_OK, [](Maker& m, px_tensor** o) { return px_where(m.u8({2, 1}), m.f({3}), m.f({2, 3}), o); }});
    rows.push_back({W, "a float32 condition", PX_ERROR_DTYPE,
                    [](Maker& m, px_tensor** o) { return px_where(m.f({3}), m.f({3}), m.f({3}), o); }});
    rows.push_back({W, "values of two dtypes (promoted)", PX_OK,
                    [](Maker& m, px_tensor** o) { return px_where(m.u8({3}), m.f({3}), m.i32({3}), o); }});
    rows.push_back({W, "shapes that do not broadcast", PX_ERROR_SHAPE,
                    [](Maker& m, px_tensor** o) { return px_where(m.u8({3}), m.f({3}), m.f({2}), o); }});
    rows.push_back({W, "two devices", PX_ERROR_DEVICE_MISMATCH,
                    [](Maker& m, px_tensor** o) { return px_where(m.u8({3}), m.far({3}), m.f({3}), o); }});

    rows.push_back({M, "valid", PX_OK, [](Maker& m, px_tensor** o) { return px_matmul(m.f({2, 3}), m.f({3, 4}), o); }});
    rows.push_back({M, "inner dimensions differ", PX_ERROR_SHAPE,
                    [](Maker& m, px_tensor** o) { return px_matmul(m.f({2, 3}), m.f({4, 5}), o); }});
    rows.push_back({M, "a vector", PX_ERROR_SHAPE, [](Maker& m, px_tensor** o) { return px_matmul(m.f({3}), m.f({3, 4}), o); }});
    rows.push_back({M, "batch sizes differ", PX_ERROR_SHAPE,
                    [](Maker& m, px_tensor** o) { return px_matmul(m.f({2, 3, 4}), m.f({3, 4, 5}), o); }});
    rows.push_back({M, "dtypes differ", PX_ERROR_DTYPE,
                    [](Maker& m, px_tensor** o) { return px_matmul(m.f({2, 3}), m.f64({3, 4}), o); }});
    rows.push_back({M, "two devices", PX_ERROR_DEVICE_MISMATCH,
                    [](Maker& m, px_tensor** o) { return px_matmul(m.f({2, 3}), m.far({3, 4}), o); }});
}

void nn_linear_rows(std::vector<Row>& rows) {
    const int32_t G = PX_OP_GEMM, BA = PX_OP_BIAS_ADD, BG = PX_OP_BIAS_GRAD;
    rows.push_back({G, "valid", PX_OK, [](Maker& m, px_tensor** o) { return px_gemm(m.f({3, 2}), m.f({4, 3}), 1, 1, o); }});
    rows.push_back({G, "int32", PX_ERROR_DTYPE, [](Maker& m, px_tensor** o) { return px_gemm(m.i32({2, 3}), m.i32({3, 4}), 0, 0, o); }});
    rows.push_back({G, "rank 3", PX_ERROR_SHAPE, [](Maker& m, px_tensor** o) { return px_gemm(m.f({1, 2, 3}), m.f({3, 4}), 0, 0, o); }});
    rows.push_back({G, "inner dimensions differ once transposed", PX_ERROR_SHAPE,
                    [](Maker& m, px_tensor** o) { return px_gemm(m.f({2, 3}), m.f({3, 4}), 1, 0, o); }});
    rows.push_back({G, "two devices", PX_ERROR_DEVICE_MISMATCH,
                    [](Maker& m, px_tensor** o) { return px_gemm(m.f({2, 3}), m.far({3, 4}), 0, 0, o); }});

    rows.push_back({BA, "valid", PX_OK, [](Maker& m, px_tensor** o) { return px_bias_add(m.f({2, 3, 4}), m.f({3}), o); }});
    rows.push_back({BA, "a bias of the wrong length", PX_ERROR_SHAPE,
                    [](Maker& m, px_tensor** o) { return px_bias_add(m.f({2, 3}), m.f({4}), o); }});
    rows.push_back({BA, "an input without a channel axis", PX_ERROR_SHAPE,
                    [](Maker& m, px_tensor** o) { return px_bias_add(m.f({3}), m.f({3}), o); }});
    rows.push_back({BA, "a 2-D bias", PX_ERROR_SHAPE,
                    [](Maker& m, px_tensor** o) { return px_bias_add(m.f({2, 3}), m.f({1, 3}), o); }});
    rows.push_back({BA, "dtypes differ", PX_ERROR_DTYPE,
                    [](Maker& m, px_tensor** o) { return px_bias_add(m.f({2, 3}), m.f64({3}), o); }});

    rows.push_back({BG, "valid", PX_OK, [](Maker& m, px_tensor** o) { return px_bias_grad(m.f({2, 3}), o); }});
    rows.push_back({BG, "rank 1", PX_ERROR_SHAPE, [](Maker& m, px_tensor** o) { return px_bias_grad(m.f({3}), o); }});
    rows.push_back({BG, "int32", PX_ERROR_DTYPE, [](Maker& m, px_tensor** o) { return px_bias_grad(m.i32({2, 3}), o); }});
    rows.push_back({BG, "a released tensor", PX_ERROR_INVALID_HANDLE,
                    [](Maker& m, px_tensor** o) { return px_bias_grad(m.released(), o); }});
}

void conv_rows(std::vector<Row>& rows) {
    const int32_t C = PX_OP_CONV2D, BI = PX_OP_CONV2D_BACKWARD_INPUT, BW = PX_OP_CONV2D_BACKWARD_WEIGHT;
    auto conv = [](px_tensor* x, px_tensor* w, int stride, int pad, px_tensor** o) {
        return px_conv2d(x, w, stride, stride, pad, pad, o);
    };
    rows.push_back({C, "valid", PX_OK, [=](Maker& m, px_tensor** o) { return conv(m.f({1, 2, 5, 5}), m.f({3, 2, 3, 3}), 1, 1, o); }});
    rows.push_back({C, "a 3-D input", PX_ERROR_SHAPE,
                    [=](Maker& m, px_tensor** o) { return conv(m.f({2, 5, 5}), m.f({3, 2, 3, 3}), 1, 0, o); }});
    rows.push_back({C, "channels that differ", PX_ERROR_SHAPE,
                    [=](Maker& m, px_tensor** o) { return conv(m.f({1, 2, 5, 5}), m.f({3, 4, 3, 3}), 1, 0, o); }});
    rows.push_back({C, "a kernel larger than the input", PX_ERROR_SHAPE,
                    [=](Maker& m, px_tensor** o) { return conv(m.f({1, 2, 2, 2}), m.f({3, 2, 3, 3}), 1, 0, o); }});
    rows.push_back({C, "stride 0", PX_ERROR_INVALID_ARGUMENT,
                    [=](Maker& m, px_tensor** o) { return conv(m.f({1, 2, 5, 5}), m.f({3, 2, 3, 3}), 0, 0, o); }});
    rows.push_back({C, "int32", PX_ERROR_DTYPE,
                    [=](Maker& m, px_tensor** o) { return conv(m.i32({1, 2, 5, 5}), m.i32({3, 2, 3, 3}), 1, 0, o); }});
    rows.push_back({C, "two devices", PX_ERROR_DEVICE_MISMATCH,
                    [=](Maker& m, px_tensor** o) { return conv(m.f({1, 2, 5, 5}), m.far({3, 2, 3, 3}), 1, 0, o); }});

    auto bi = [](px_tensor* dy, px_tensor* w, int64_t h, int pad, px_tensor** o) {
        return px_conv2d_backward_input(dy, w, h, h, 1, 1, pad, pad, o);
    };
    rows.push_back({BI, "valid", PX_OK, [=](Maker& m, px_tensor** o) { return bi(m.f({1, 3, 3, 3}), m.f({3, 2, 3, 3}), 5, 0, o); }});
    rows.push_back({BI, "a gradient that does not fit", PX_ERROR_SHAPE,
                    [=](Maker& m, px_tensor** o) { return bi(m.f({1, 3, 4, 4}), m.f({3, 2, 3, 3}), 5, 0, o); }});
    rows.push_back({BI, "an empty input size", PX_ERROR_SHAPE,
                    [=](Maker& m, px_tensor** o) { return bi(m.f({1, 3, 3, 3}), m.f({3, 2, 3, 3}), 0, 0, o); }});
    rows.push_back({BI, "negative padding", PX_ERROR_INVALID_ARGUMENT,
                    [=](Maker& m, px_tensor** o) { return bi(m.f({1, 3, 3, 3}), m.f({3, 2, 3, 3}), 5, -1, o); }});
    rows.push_back({BI, "dtypes differ", PX_ERROR_DTYPE,
                    [=](Maker& m, px_tensor** o) { return bi(m.f({1, 3, 3, 3}), m.f64({3, 2, 3, 3}), 5, 0, o); }});

    auto bw = [](px_tensor* dy, px_tensor* x, int64_t k, px_tensor** o) {
        return px_conv2d_backward_weight(dy, x, k, k, 1, 1, 0, 0, o);
    };
    rows.push_back({BW, "valid", PX_OK, [=](Maker& m, px_tensor** o) { return bw(m.f({1, 3, 3, 3}), m.f({1, 2, 5, 5}), 3, o); }});
    rows.push_back({BW, "a gradient that does not fit", PX_ERROR_SHAPE,
                    [=](Maker& m, px_tensor** o) { return bw(m.f({2, 3, 3, 3}), m.f({1, 2, 5, 5}), 3, o); }});
    rows.push_back({BW, "a 2-D input", PX_ERROR_SHAPE,
                    [=](Maker& m, px_tensor** o) { return bw(m.f({1, 3, 3, 3}), m.f({5, 5}), 3, o); }});
    rows.push_back({BW, "an empty kernel", PX_ERROR_SHAPE,
                    [=](Maker& m, px_tensor** o) { return bw(m.f({1, 3, 3, 3}), m.f({1, 2, 5, 5}), 0, o); }});
    rows.push_back({BW, "two devices", PX_ERROR_DEVICE_MISMATCH,
                    [=](Maker& m, px_tensor** o) { return bw(m.f({1, 3, 3, 3}), m.far({1, 2, 5, 5}), 3, o); }});
}

void pool_rows(std::vector<Row>& rows) {
    for (int32_t op : {PX_OP_MAX_POOL2D, PX_OP_AVG_POOL2D}) {
        auto pool = [op](px_tensor* x, int k, int s, int pad, px_tensor** o) {
            return px_pool2d(px_op(op), x, k, k, s, s, pad, pad, o);
        };
        rows.push_back({op, "valid", PX_OK, [=](Maker& m, px_tensor** o) { return pool(m.f({1, 2, 4, 4}), 2, 2, 0, o); }});
        rows.push_back({op, "pool size 0", PX_ERROR_INVALID_ARGUMENT,
                        [=](Maker& m, px_tensor** o) { return pool(m.f({1, 2, 4, 4}), 0, 1, 0, o); }});
        rows.push_back({op, "a 3-D input", PX_ERROR_SHAPE, [=](Maker& m, px_tensor** o) { return pool(m.f({2, 4, 4}), 2, 2, 0, o); }});
        rows.push_back({op, "a window larger than the input", PX_ERROR_SHAPE,
                        [=](Maker& m, px_tensor** o) { return pool(m.f({1, 2, 2, 2}), 3, 1, 0, o); }});
        rows.push_back({op, "padding over half the window", PX_ERROR_INVALID_ARGUMENT,
                        [=](Maker& m, px_tensor** o) { return pool(m.f({1, 2, 4, 4}), 2, 1, 2, o); }});
        rows.push_back({op, "int32", PX_ERROR_DTYPE, [=](Maker& m, px_tensor** o) { return pool(m.i32({1, 2, 4, 4}), 2, 2, 0, o); }});
        rows.push_back({op, "planes with no cells (a window of padding only)", PX_ERROR_SHAPE,
                        [=](Maker& m, px_tensor** o) { return pool(m.f({1, 2, 4, 0}), 2, 2, 1, o); }});

        const int32_t bop = op == PX_OP_MAX_POOL2D ? PX_OP_MAX_POOL2D_BACKWARD : PX_OP_AVG_POOL2D_BACKWARD;
        auto back = [op](px_tensor* x, px_tensor* dy, px_tensor** o) {
            return px_pool2d_backward(px_op(op), x, dy, 2, 2, 2, 2, 0, 0, o);
        };
        rows.push_back({bop, "valid", PX_OK, [=](Maker& m, px_tensor** o) { return back(m.f({1, 2, 4, 4}), m.f({1, 2, 2, 2}), o); }});
        rows.push_back({bop, "a gradient of the wrong shape", PX_ERROR_SHAPE,
                        [=](Maker& m, px_tensor** o) { return back(m.f({1, 2, 4, 4}), m.f({1, 2, 3, 3}), o); }});
        rows.push_back({bop, "a 3-D input", PX_ERROR_SHAPE,
                        [=](Maker& m, px_tensor** o) { return back(m.f({2, 4, 4}), m.f({1, 2, 2, 2}), o); }});
        rows.push_back({bop, "dtypes differ", PX_ERROR_DTYPE,
                        [=](Maker& m, px_tensor** o) { return back(m.f({1, 2, 4, 4}), m.f64({1, 2, 2, 2}), o); }});
        rows.push_back({bop, "two devices", PX_ERROR_DEVICE_MISMATCH,
                        [=](Maker& m, px_tensor** o) { return back(m.f({1, 2, 4, 4}), m.far({1, 2, 2, 2}), o); }});
        rows.push_back({bop, "the backward op number given as the op", PX_ERROR_INVALID_ARGUMENT, [=](Maker& m, px_tensor** o) {
                            return px_pool2d_backward(px_op(bop), m.f({1, 2, 4, 4}), m.f({1, 2, 2, 2}), 2, 2, 2, 2, 0, 0, o);
                        }});
    }
}

void fused_pool_rows(std::vector<Row>& rows) {
    const int32_t F = PX_OP_BIAS_RELU_MAX_POOL2D, FB = PX_OP_BIAS_RELU_MAX_POOL2D_BACKWARD;
    auto fwd = [](px_tensor* x, px_tensor* b, int k, int pad, px_tensor** o) {
        return px_bias_relu_max_pool2d(x, b, k, k, 2, 2, pad, pad, o);
    };
    rows.push_back({F, "valid", PX_OK, [=](Maker& m, px_tensor** o) { return fwd(m.f({1, 2, 4, 4}), m.f({2}), 2, 0, o); }});
    rows.push_back({F, "a bias of 3 values for 2 channels", PX_ERROR_SHAPE,
                    [=](Maker& m, px_tensor** o) { return fwd(m.f({1, 2, 4, 4}), m.f({3}), 2, 0, o); }});
    rows.push_back({F, "a 3-D input", PX_ERROR_SHAPE, [=](Maker& m, px_tensor** o) { return fwd(m.f({2, 4, 4}), m.f({2}), 2, 0, o); }});
    rows.push_back({F, "planes with no cells", PX_ERROR_SHAPE,
                    [=](Maker& m, px_tensor** o) { return fwd(m.f({1, 2, 0, 4}), m.f({2}), 2, 1, o); }});
    rows.push_back({F, "pool size 0", PX_ERROR_INVALID_ARGUMENT,
                    [=](Maker& m, px_tensor** o) { return fwd(m.f({1, 2, 4, 4}), m.f({2}), 0, 0, o); }});
    rows.push_back({F, "a float64 bias", PX_ERROR_DTYPE,
                    [=](Maker& m, px_tensor** o) { return fwd(m.f({1, 2, 4, 4}), m.f64({2}), 2, 0, o); }});
    rows.push_back({F, "int32", PX_ERROR_DTYPE, [=](Maker& m, px_tensor** o) { return fwd(m.i32({1, 2, 4, 4}), m.i32({2}), 2, 0, o); }});
    rows.push_back({F, "two devices", PX_ERROR_DEVICE_MISMATCH,
                    [=](Maker& m, px_tensor** o) { return fwd(m.f({1, 2, 4, 4}), m.far({2}), 2, 0, o); }});

    // dbias goes to Maker's list; a refused call must leave both outputs NULL.
    auto back = [](Maker& m, px_tensor* x, px_tensor* b, px_tensor* dy, px_tensor** o) {
        px_tensor* db = nullptr;
        px_status s = px_bias_relu_max_pool2d_backward(x, b, dy, 2, 2, 2, 2, 0, 0, o, &db);
        if (db) m.owned.push_back(db);
        CHECK((s == PX_OK) == (db != nullptr));
        return s;
    };
    rows.push_back({FB, "valid", PX_OK, [=](Maker& m, px_tensor** o) { return back(m, m.f({1, 2, 4, 4}), m.f({2}), m.f({1, 2, 2, 2}), o); }});
    rows.push_back({FB, "a gradient of the wrong shape", PX_ERROR_SHAPE,
                    [=](Maker& m, px_tensor** o) { return back(m, m.f({1, 2, 4, 4}), m.f({2}), m.f({1, 2, 3, 3}), o); }});
    rows.push_back({FB, "a bias of another length", PX_ERROR_SHAPE,
                    [=](Maker& m, px_tensor** o) { return back(m, m.f({1, 2, 4, 4}), m.f({1}), m.f({1, 2, 2, 2}), o); }});
    rows.push_back({FB, "dtypes differ", PX_ERROR_DTYPE,
                    [=](Maker& m, px_tensor** o) { return back(m, m.f({1, 2, 4, 4}), m.f({2}), m.f64({1, 2, 2, 2}), o); }});
    rows.push_back({FB, "two devices", PX_ERROR_DEVICE_MISMATCH,
                    [=](Maker& m, px_tensor** o) { return back(m, m.f({1, 2, 4, 4}), m.f({2}), m.far({1, 2, 2, 2}), o); }});
    rows.push_back({FB, "a released gradient", PX_ERROR_INVALID_HANDLE,
                    [=](Maker& m, px_tensor** o) { return back(m, m.f({1, 2, 4, 4}), m.f({2}), m.released(), o); }});
    rows.push_back({FB, "dx and dbias the same pointer", PX_ERROR_INVALID_ARGUMENT, [](Maker& m, px_tensor** o) {
                        return px_bias_relu_max_pool2d_backward(m.f({1, 2, 4, 4}), m.f({2}), m.f({1, 2, 2, 2}), 2, 2, 2,
                                                                2, 0, 0, o, o);
                    }});
    rows.push_back({FB, "a NULL dbias", PX_ERROR_INVALID_ARGUMENT, [](Maker& m, px_tensor** o) {
                        return px_bias_relu_max_pool2d_backward(m.f({1, 2, 4, 4}), m.f({2}), m.f({1, 2, 2, 2}), 2, 2, 2,
                                                                2, 0, 0, o, nullptr);
                    }});
}

void activation_and_softmax_rows(std::vector<Row>& rows) {
    std::vector<std::pair<int32_t, int32_t>> acts;  // the op table's gradients from the result
#define PX_TEST_FROM_RESULT_(forward, backward, from) \
    if ((from) == PX_GRAD_FROM_RESULT) acts.emplace_back(forward, backward);
    PX_GRADIENT_TABLE(PX_TEST_FROM_RESULT_)
#undef PX_TEST_FROM_RESULT_
    for (const auto& act : acts) {
        const int32_t fwd = act.first, bop = act.second;  // clang captures no structured binding before C++20
        auto back = [fwd](px_tensor* y, px_tensor* dy, px_tensor** o) { return px_activation_backward(px_op(fwd), y, dy, o); };
        rows.push_back({bop, "valid", PX_OK, [=](Maker& m, px_tensor** o) { return back(m.f({2, 3}), m.f({2, 3}), o); }});
        rows.push_back({bop, "shapes differ", PX_ERROR_SHAPE, [=](Maker& m, px_tensor** o) { return back(m.f({2, 3}), m.f({3, 2}), o); }});
        rows.push_back({bop, "int32", PX_ERROR_DTYPE, [=](Maker& m, px_tensor** o) { return back(m.i32({3}), m.i32({3}), o); }});
        rows.push_back({bop, "two devices", PX_ERROR_DEVICE_MISMATCH, [=](Maker& m, px_tensor** o) { return back(m.f({3}), m.far({3}), o); }});
        rows.push_back({bop, "the backward op number given as the op", PX_ERROR_INVALID_ARGUMENT, [=](Maker& m, px_tensor** o) {
                            return px_activation_backward(px_op(bop), m.f({3}), m.f({3}), o);
                        }});
    }

    const int32_t L = PX_OP_LOG_SOFTMAX, LB = PX_OP_LOG_SOFTMAX_BACKWARD;
    rows.push_back({L, "valid", PX_OK, [](Maker& m, px_tensor** o) { return px_log_softmax(m.f({2, 3}), o); }});
    rows.push_back({L, "rank 1", PX_ERROR_SHAPE, [](Maker& m, px_tensor** o) { return px_log_softmax(m.f({3}), o); }});
    rows.push_back({L, "rank 3", PX_ERROR_SHAPE, [](Maker& m, px_tensor** o) { return px_log_softmax(m.f({1, 2, 3}), o); }});
    rows.push_back({L, "int32", PX_ERROR_DTYPE, [](Maker& m, px_tensor** o) { return px_log_softmax(m.i32({2, 3}), o); }});
    rows.push_back({LB, "valid", PX_OK, [](Maker& m, px_tensor** o) { return px_log_softmax_backward(m.f({2, 3}), m.f({2, 3}), o); }});
    rows.push_back({LB, "shapes differ", PX_ERROR_SHAPE,
                    [](Maker& m, px_tensor** o) { return px_log_softmax_backward(m.f({2, 3}), m.f({2, 4}), o); }});
    rows.push_back({LB, "rank 1", PX_ERROR_SHAPE, [](Maker& m, px_tensor** o) { return px_log_softmax_backward(m.f({3}), m.f({3}), o); }});
    rows.push_back({LB, "dtypes differ", PX_ERROR_DTYPE,
                    [](Maker& m, px_tensor** o) { return px_log_softmax_backward(m.f({2, 3}), m.f64({2, 3}), o); }});
    rows.push_back({LB, "two devices", PX_ERROR_DEVICE_MISMATCH,
                    [](Maker& m, px_tensor** o) { return px_log_softmax_backward(m.f({2, 3}), m.far({2, 3}), o); }});

    const int32_t S = PX_OP_SOFTMAX_CROSS_ENTROPY, SB = PX_OP_SOFTMAX_CROSS_ENTROPY_BACKWARD;
    auto labels = [](Maker& m, int64_t n) { return m.on(m.dev, PX_INT64, {n}); };
    rows.push_back({S, "valid", PX_OK, [=](Maker& m, px_tensor** o) { return px_softmax_cross_entropy(m.f({4, 3}), labels(m, 4), o); }});
    rows.push_back({S, "float labels", PX_ERROR_DTYPE,
                    [](Maker& m, px_tensor** o) { return px_softmax_cross_entropy(m.f({4, 3}), m.f({4}), o); }});
    rows.push_back({S, "a label count that differs from the rows", PX_ERROR_SHAPE,
                    [=](Maker& m, px_tensor** o) { return px_softmax_cross_entropy(m.f({4, 3}), labels(m, 5), o); }});
    rows.push_back({S, "1-D logits", PX_ERROR_SHAPE,
                    [=](Maker& m, px_tensor** o) { return px_softmax_cross_entropy(m.f({4}), labels(m, 4), o); }});
    rows.push_back({S, "no classes", PX_ERROR_SHAPE,
                    [=](Maker& m, px_tensor** o) { return px_softmax_cross_entropy(m.f({4, 0}), labels(m, 4), o); }});
    rows.push_back({S, "int32 logits", PX_ERROR_DTYPE,
                    [=](Maker& m, px_tensor** o) { return px_softmax_cross_entropy(m.i32({4, 3}), labels(m, 4), o); }});
    rows.push_back({S, "two devices", PX_ERROR_DEVICE_MISMATCH,
                    [=](Maker& m, px_tensor** o) { return px_softmax_cross_entropy(m.far({4, 3}), labels(m, 4), o); }});
    auto sb = [](px_tensor* lg, px_tensor* lb, px_tensor* dl, px_tensor** o) {
        return px_softmax_cross_entropy_backward(lg, lb, dl, o);
    };
    rows.push_back({SB, "valid", PX_OK, [=](Maker& m, px_tensor** o) { return sb(m.f({4, 3}), labels(m, 4), m.f({4}), o); }});
    rows.push_back({SB, "a loss gradient of the wrong shape", PX_ERROR_SHAPE,
                    [=](Maker& m, px_tensor** o) { return sb(m.f({4, 3}), labels(m, 4), m.f({4, 1}), o); }});
    rows.push_back({SB, "a float64 loss gradient", PX_ERROR_DTYPE,
                    [=](Maker& m, px_tensor** o) { return sb(m.f({4, 3}), labels(m, 4), m.f64({4}), o); }});
    rows.push_back({SB, "uint8 labels", PX_ERROR_DTYPE,
                    [](Maker& m, px_tensor** o) { return px_softmax_cross_entropy_backward(m.f({4, 3}), m.u8({4}), m.f({4}), o); }});
    rows.push_back({SB, "two devices", PX_ERROR_DEVICE_MISMATCH,
                    [=](Maker& m, px_tensor** o) { return sb(m.f({4, 3}), labels(m, 4), m.far({4}), o); }});
}

void training_rows(std::vector<Row>& rows) {
    const int32_t D = PX_OP_DROPOUT, DB = PX_OP_DROPOUT_BACKWARD, U = PX_OP_SGD_UPDATE;
    auto drop = [](px_tensor* x, double p, px_tensor** o) {
        uint64_t seed = 0, offset = 0;
        return px_dropout(x, p, &seed, &offset, o);
    };
    rows.push_back({D, "valid", PX_OK, [=](Maker& m, px_tensor** o) { return drop(m.f({8}), 0.5, o); }});
    rows.push_back({D, "p = 1", PX_ERROR_INVALID_ARGUMENT, [=](Maker& m, px_tensor** o) { return drop(m.f({8}), 1.0, o); }});
    rows.push_back({D, "p = NaN", PX_ERROR_INVALID_ARGUMENT, [=](Maker& m, px_tensor** o) { return drop(m.f({8}), std::nan(""), o); }});
    rows.push_back({D, "int32", PX_ERROR_DTYPE, [=](Maker& m, px_tensor** o) { return drop(m.i32({8}), 0.5, o); }});
    rows.push_back({D, "NULL seed and offset", PX_ERROR_INVALID_ARGUMENT,
                    [](Maker& m, px_tensor** o) { return px_dropout(m.f({8}), 0.5, nullptr, nullptr, o); }});
    rows.push_back({DB, "valid", PX_OK, [](Maker& m, px_tensor** o) { return px_dropout_backward(m.f({8}), 0.5, 1, 0, o); }});
    rows.push_back({DB, "p = -0.1", PX_ERROR_INVALID_ARGUMENT,
                    [](Maker& m, px_tensor** o) { return px_dropout_backward(m.f({8}), -0.1, 1, 0, o); }});
    rows.push_back({DB, "int32", PX_ERROR_DTYPE, [](Maker& m, px_tensor** o) { return px_dropout_backward(m.i32({8}), 0.5, 1, 0, o); }});
    rows.push_back({DB, "a released tensor", PX_ERROR_INVALID_HANDLE,
                    [](Maker& m, px_tensor** o) { return px_dropout_backward(m.released(), 0.5, 1, 0, o); }});

    auto sgd = [](px_tensor* p, px_tensor* g, px_tensor* mom, double lr, double mu) {
        return px_sgd_update(p, g, mom, lr, mu, 0, 1);
    };
    rows.push_back({U, "valid", PX_OK, [=](Maker& m, px_tensor**) { return sgd(m.f({3}), m.f({3}), m.f({3}), 0.1, 0.9); }});
    rows.push_back({U, "a gradient of another shape", PX_ERROR_SHAPE,
                    [=](Maker& m, px_tensor**) { return sgd(m.f({3}), m.f({4}), nullptr, 0.1, 0); }});
    rows.push_back({U, "a momentum buffer of another shape", PX_ERROR_SHAPE,
                    [=](Maker& m, px_tensor**) { return sgd(m.f({3}), m.f({3}), m.f({2}), 0.1, 0.9); }});
    rows.push_back({U, "the parameter as its own momentum buffer", PX_ERROR_INVALID_ARGUMENT, [=](Maker& m, px_tensor**) {
                        px_tensor* p = m.f({3});
                        return sgd(p, m.f({3}), p, 0.1, 0.9);
                    }});
    rows.push_back({U, "a negative learning rate", PX_ERROR_INVALID_ARGUMENT,
                    [=](Maker& m, px_tensor**) { return sgd(m.f({3}), m.f({3}), nullptr, -0.1, 0); }});
    rows.push_back({U, "momentum 1.5", PX_ERROR_INVALID_ARGUMENT,
                    [=](Maker& m, px_tensor**) { return sgd(m.f({3}), m.f({3}), m.f({3}), 0.1, 1.5); }});
    rows.push_back({U, "int32", PX_ERROR_DTYPE, [=](Maker& m, px_tensor**) { return sgd(m.i32({3}), m.i32({3}), nullptr, 0.1, 0); }});
    rows.push_back({U, "two devices", PX_ERROR_DEVICE_MISMATCH,
                    [=](Maker& m, px_tensor**) { return sgd(m.f({3}), m.far({3}), nullptr, 0.1, 0); }});
    const int32_t NAG = PX_OP_NAG_UPDATE, A = PX_OP_ADAM_UPDATE;
    auto nag = [](px_tensor* p, px_tensor* g, px_tensor* mom, double mu) { return px_nag_update(p, g, mom, 0.1, mu, 0, 1); };
    rows.push_back({NAG, "valid", PX_OK, [=](Maker& m, px_tensor**) { return nag(m.f({3}), m.f({3}), m.f({3}), 0.9); }});
    rows.push_back({NAG, "no momentum buffer", PX_ERROR_INVALID_HANDLE,
                    [=](Maker& m, px_tensor**) { return nag(m.f({3}), m.f({3}), nullptr, 0.9); }});
    rows.push_back({NAG, "a buffer of another shape", PX_ERROR_SHAPE,
                    [=](Maker& m, px_tensor**) { return nag(m.f({3}), m.f({3}), m.f({4}), 0.9); }});
    rows.push_back({NAG, "momentum NaN", PX_ERROR_INVALID_ARGUMENT,
                    [=](Maker& m, px_tensor**) { return nag(m.f({3}), m.f({3}), m.f({3}), std::nan("")); }});
    auto adam = [](px_tensor* p, px_tensor* g, px_tensor* st, double beta1, double eps, int64_t step) {
        return px_adam_update(p, g, st, 0.001, beta1, 0.999, eps, 0, 1, step, 1);
    };
    rows.push_back({A, "valid", PX_OK, [=](Maker& m, px_tensor**) { return adam(m.f({2, 3}), m.f({2, 3}), m.f({2, 6}), 0.9, 1e-8, 1); }});
    rows.push_back({A, "a state not (2, n)", PX_ERROR_SHAPE,
                    [=](Maker& m, px_tensor**) { return adam(m.f({2, 3}), m.f({2, 3}), m.f({2, 3}), 0.9, 1e-8, 1); }});
    rows.push_back({A, "beta1 = 1", PX_ERROR_INVALID_ARGUMENT,
                    [=](Maker& m, px_tensor**) { return adam(m.f({3}), m.f({3}), m.f({2, 3}), 1.0, 1e-8, 1); }});
    rows.push_back({A, "epsilon 0", PX_ERROR_INVALID_ARGUMENT,
                    [=](Maker& m, px_tensor**) { return adam(m.f({3}), m.f({3}), m.f({2, 3}), 0.9, 0, 1); }});
    rows.push_back({A, "step 0", PX_ERROR_INVALID_ARGUMENT,
                    [=](Maker& m, px_tensor**) { return adam(m.f({3}), m.f({3}), m.f({2, 3}), 0.9, 1e-8, 0); }});
    rows.push_back({A, "a float64 state", PX_ERROR_DTYPE,
                    [=](Maker& m, px_tensor**) { return adam(m.f({3}), m.f({3}), m.f64({2, 3}), 0.9, 1e-8, 1); }});
    rows.push_back({A, "the state is the parameter", PX_ERROR_INVALID_ARGUMENT, [=](Maker& m, px_tensor**) {
                        px_tensor* p = m.f({2, 3});
                        return adam(p, m.f({2, 3}), p, 0.9, 1e-8, 1);
                    }});
}

void batch_norm_rows(std::vector<Row>& rows) {
    const int32_t S = PX_OP_BATCH_NORM_STATS, N = PX_OP_BATCH_NORM, R = PX_OP_BATCH_NORM_BACKWARD_REDUCE,
                  B = PX_OP_BATCH_NORM_BACKWARD;
    // The results beyond the first belong to the maker, which releases them.
    auto keep = [](Maker& m, px_tensor* t) {
        if (t) m.owned.push_back(t);
    };
    auto stats = [=](Maker& m, px_tensor* x, px_tensor** o) {
        px_tensor* var = nullptr;
        const px_status st = px_batch_norm_stats(x, o, &var);
        keep(m, var);
        return st;
    };
    rows.push_back({S, "valid", PX_OK, [=](Maker& m, px_tensor** o) { return stats(m, m.f({4, 3, 2}), o); }});
    rows.push_back({S, "no values per channel", PX_ERROR_SHAPE, [=](Maker& m, px_tensor** o) { return stats(m, m.f({0, 3}), o); }});
    rows.push_back({S, "rank 1", PX_ERROR_SHAPE, [=](Maker& m, px_tensor** o) { return stats(m, m.f({3}), o); }});
    rows.push_back({S, "int32", PX_ERROR_DTYPE, [=](Maker& m, px_tensor** o) { return stats(m, m.i32({4, 3}), o); }});
    auto norm = [](Maker& m, px_tensor* x, px_tensor* gamma, double eps, px_tensor** o) {
        return px_batch_norm(x, m.f({3}), m.f({3}), gamma, m.f({3}), eps, o);
    };
    rows.push_back({N, "valid", PX_OK, [=](Maker& m, px_tensor** o) { return norm(m, m.f({4, 3, 2}), m.f({3}), 1e-5, o); }});
    rows.push_back({N, "gamma of another length", PX_ERROR_SHAPE,
                    [=](Maker& m, px_tensor** o) { return norm(m, m.f({4, 3, 2}), m.f({2}), 1e-5, o); }});
    rows.push_back({N, "eps 0", PX_ERROR_INVALID_ARGUMENT,
                    [=](Maker& m, px_tensor** o) { return norm(m, m.f({4, 3}), m.f({3}), 0, o); }});
    rows.push_back({N, "eps infinite", PX_ERROR_INVALID_ARGUMENT,
                    [=](Maker& m, px_tensor** o) { return norm(m, m.f({4, 3}), m.f({3}), INFINITY, o); }});
    rows.push_back({N, "gamma on another device", PX_ERROR_DEVICE_MISMATCH,
                    [=](Maker& m, px_tensor** o) { return norm(m, m.f({4, 3}), m.far({3}), 1e-5, o); }});
    // dx (with_dx) or dgamma goes to o.
    auto grads = [=](Maker& m, px_tensor* x, px_tensor* dy, bool with_dx, px_tensor** o) {
        px_tensor *dgamma = nullptr, *dbeta = nullptr;
        const px_status st = px_batch_norm_backward(x, dy, m.f({3}), m.f({3}), m.f({3}), 1e-5, with_dx ? o : nullptr,
                                                    with_dx ? &dgamma : o, &dbeta);
        keep(m, with_dx ? dgamma : nullptr);
        keep(m, dbeta);
        return st;
    };
    for (const bool dx : {false, true}) {
        const int32_t op = dx ? B : R;
        rows.push_back({op, "valid", PX_OK, [=](Maker& m, px_tensor** o) { return grads(m, m.f({4, 3}), m.f({4, 3}), dx, o); }});
        rows.push_back({op, "dy of another shape", PX_ERROR_SHAPE,
                        [=](Maker& m, px_tensor** o) { return grads(m, m.f({4, 3}), m.f({3, 4}), dx, o); }});
        rows.push_back({op, "float64 dy", PX_ERROR_DTYPE,
                        [=](Maker& m, px_tensor** o) { return grads(m, m.f({4, 3}), m.f64({4, 3}), dx, o); }});
        rows.push_back({op, "a released x", PX_ERROR_INVALID_HANDLE,
                        [=](Maker& m, px_tensor** o) { return grads(m, m.released(), m.f({4, 3}), dx, o); }});
    }
}

// leaky_relu, and the gradients taken from the forward op's input (ABI 1.8).
void activation_with_input_rows(std::vector<Row>& rows) {
    const int32_t L = PX_OP_LEAKY_RELU;
    rows.push_back({L, "valid", PX_OK, [](Maker& m, px_tensor** o) { return px_unary_alpha(PX_OP_LEAKY_RELU, m.f({4}), 0.1, o); }});
    rows.push_back({L, "int32", PX_ERROR_DTYPE,
                    [](Maker& m, px_tensor** o) { return px_unary_alpha(PX_OP_LEAKY_RELU, m.i32({4}), 0.1, o); }});
    rows.push_back({L, "a NaN alpha", PX_ERROR_INVALID_ARGUMENT,
                    [](Maker& m, px_tensor** o) { return px_unary_alpha(PX_OP_LEAKY_RELU, m.f({4}), std::nan(""), o); }});
    rows.push_back({L, "given to px_unary", PX_ERROR_INVALID_ARGUMENT,
                    [](Maker& m, px_tensor** o) { return px_unary(PX_OP_LEAKY_RELU, m.f({4}), o); }});
    rows.push_back({L, "a released tensor", PX_ERROR_INVALID_HANDLE,
                    [](Maker& m, px_tensor** o) { return px_unary_alpha(PX_OP_LEAKY_RELU, m.released(), 0.1, o); }});
    std::vector<std::pair<int32_t, int32_t>> acts;  // the op table's gradients from the input
#define PX_TEST_FROM_INPUT_(forward, backward, from) \
    if ((from) == PX_GRAD_FROM_INPUT) acts.emplace_back(forward, backward);
    PX_GRADIENT_TABLE(PX_TEST_FROM_INPUT_)
#undef PX_TEST_FROM_INPUT_
    for (const auto& act : acts) {
        const int32_t fwd = act.first, bop = act.second;  // clang captures no structured binding before C++20
        auto back = [fwd](px_tensor* x, px_tensor* dy, px_tensor** o) {
            return px_activation_input_backward(px_op(fwd), x, dy, 0.1, o);
        };
        rows.push_back({bop, "valid", PX_OK, [=](Maker& m, px_tensor** o) { return back(m.f({2, 3}), m.f({2, 3}), o); }});
        rows.push_back({bop, "shapes differ", PX_ERROR_SHAPE, [=](Maker& m, px_tensor** o) { return back(m.f({2, 3}), m.f({3, 2}), o); }});
        rows.push_back({bop, "int32", PX_ERROR_DTYPE, [=](Maker& m, px_tensor** o) { return back(m.i32({3}), m.i32({3}), o); }});
        rows.push_back({bop, "two devices", PX_ERROR_DEVICE_MISMATCH, [=](Maker& m, px_tensor** o) { return back(m.f({3}), m.far({3}), o); }});
        rows.push_back({bop, "given to px_activation_backward", PX_ERROR_INVALID_ARGUMENT, [=](Maker& m, px_tensor** o) {
                            return px_activation_backward(px_op(fwd), m.f({3}), m.f({3}), o);
                        }});
    }
}

void take_rows(std::vector<Row>& rows) {
    const int32_t T = PX_OP_TAKE, TB = PX_OP_TAKE_BACKWARD;
    rows.push_back({T, "valid", PX_OK, [](Maker& m, px_tensor** o) { return px_take(m.f({4, 3}), m.i32({2, 5}), o); }});
    rows.push_back({T, "float indices", PX_ERROR_DTYPE, [](Maker& m, px_tensor** o) { return px_take(m.f({4, 3}), m.f({2}), o); }});
    rows.push_back({T, "a scalar table", PX_ERROR_SHAPE, [](Maker& m, px_tensor** o) { return px_take(m.f({}), m.i32({2}), o); }});
    rows.push_back({T, "two devices", PX_ERROR_DEVICE_MISMATCH,
                    [](Maker& m, px_tensor** o) { return px_take(m.f({4, 3}), m.on(m.other, PX_INT32, {2}), o); }});
    rows.push_back({TB, "valid", PX_OK, [](Maker& m, px_tensor** o) { return px_take_backward(m.f({2, 3}), m.i32({2}), 4, o); }});
    rows.push_back({TB, "negative rows", PX_ERROR_INVALID_ARGUMENT,
                    [](Maker& m, px_tensor** o) { return px_take_backward(m.f({2, 3}), m.i32({2}), -1, o); }});
    rows.push_back({TB, "dy not shaped by the indices", PX_ERROR_SHAPE,
                    [](Maker& m, px_tensor** o) { return px_take_backward(m.f({3, 3}), m.i32({2}), 4, o); }});
    rows.push_back({TB, "int32 dy", PX_ERROR_DTYPE,
                    [](Maker& m, px_tensor** o) { return px_take_backward(m.i32({2, 3}), m.i32({2}), 4, o); }});
    rows.push_back({TB, "two devices", PX_ERROR_DEVICE_MISMATCH,
                    [](Maker& m, px_tensor** o) { return px_take_backward(m.far({2, 3}), m.i32({2}), 4, o); }});
}

std::vector<Row> all_rows() {
    std::vector<Row> rows;
    for (int32_t op = 0; op < PX_OP_NUMBER_LIMIT; ++op) {
        const px_op_row* row = px_op_row_of(op);
        if (!row) continue;
        if (row->family == PX_FAMILY_BINARY) binary_rows(rows, op);
        if (row->family == PX_FAMILY_UNARY) unary_rows(rows, op);
        if (row->family == PX_FAMILY_REDUCE) reduce_rows(rows, op);
    }
    creation_rows(rows);
    data_movement_rows(rows);
    elementwise_rows(rows);
    nn_linear_rows(rows);
    conv_rows(rows);
    pool_rows(rows);
    fused_pool_rows(rows);
    activation_and_softmax_rows(rows);
    training_rows(rows);
    batch_norm_rows(rows);
    activation_with_input_rows(rows);
    take_rows(rows);
    return rows;
}

std::vector<px_device> every_device(px_runtime* rt) {
    std::vector<px_device> out;
    for (int32_t kind : {PX_DEVICE_CPU, PX_DEVICE_GPU, PX_DEVICE_ACCELERATOR}) {
        int32_t n = 0;
        REQUIRE(px_runtime_device_count(rt, kind, &n) == PX_OK);
        for (int32_t i = 0; i < n; ++i) out.push_back(px_device{kind, i});
    }
    return out;
}

std::string label(px_device d) {
    return std::string(d.kind == PX_DEVICE_CPU ? "cpu" : d.kind == PX_DEVICE_GPU ? "gpu" : "accelerator") + "(" +
           std::to_string(d.index) + ")";
}

uint64_t in_use(px_runtime* rt, px_device d) {
    REQUIRE(px_runtime_synchronize(rt, d) == PX_OK);
    px_device_info info{};
    info.struct_size = sizeof info;
    REQUIRE(px_runtime_device_info(rt, d, &info) == PX_OK);
    return info.memory_in_use;
}

}  // namespace

TEST_CASE("every op has a valid call and at least three refused calls in the table", "[host][errors][ops]") {
    std::map<int32_t, int> refused, valid;
    for (const Row& r : all_rows()) (r.want == PX_OK ? valid : refused)[r.op]++;
    int ops = 0;
    for (int32_t op = 0; op < PX_OP_NUMBER_LIMIT; ++op) {
        if (!px_op_name(op)) continue;
        ++ops;
        INFO("op " << px_op_name(op));
        CHECK(valid[op] >= 1);
        CHECK(refused[op] >= 3);
    }
    CHECK(ops >= 68);  // the ops of ABI 1.8 at least: the loop above saw the whole table
}

TEST_CASE("every op refuses bad arguments with the same status on every device, before dispatch",
          "[host][errors][ops]") {
    // The default plugins (cpu, and cuda when it finds a GPU) plus accept-all.
    pxtest::Runtime r({pxtest::fault("accept-all")}, false);
    const std::vector<px_device> devices = every_device(r.rt);
    REQUIRE(devices.size() >= 2);
    const px_device accept_all = devices.back();
    REQUIRE(accept_all.kind == PX_DEVICE_ACCELERATOR);
    const std::vector<Row> rows = all_rows();
    int refusals = 0;
    for (px_device dev : devices) {
        const px_device other = dev.kind == PX_DEVICE_CPU ? accept_all : px_device{PX_DEVICE_CPU, 0};
        const bool is_accept_all = dev.kind == accept_all.kind && dev.index == accept_all.index;
        const uint64_t before = in_use(r.rt, dev);
        for (const Row& row : rows) {
            INFO(label(dev) << ", " << px_op_name(row.op) << ": " << row.what);
            Maker m{r.rt, dev, other, {}};
            px_tensor* out = nullptr;
            const px_status got = row.call(m, &out);
            const std::string message = got == PX_OK ? "" : px_last_error();
            INFO("status " << px_status_name(got) << ": " << message);
            if (row.want == PX_OK && is_accept_all) {
                // Valid calls pass the host's checks and do reach the plugin,
                // so the refusals below could have reached it too.
                CHECK(got == PX_ERROR_DEVICE);
                CHECK(message.find("reached the plugin") != std::string::npos);
            } else {
                CHECK(got == row.want);
                if (row.want != PX_OK) {
                    ++refusals;
                    CHECK(out == nullptr);
                    CHECK(!message.empty());
                    CHECK(message.find("reached the plugin") == std::string::npos);
                }
            }
            if (out) px_tensor_release(out);
        }
        CHECK(in_use(r.rt, dev) == before);  // nothing a refused call made is left behind
    }
    CHECK(refusals >= 3 * 54 * int(devices.size()));
}
