// Sizes and indices the router derives must fit in 64 bits (issue 37, item
// 5): an empty axis hides huge others, so a rule's result may not fit where
// its input did; and a slice's step may be as large as INT64_MAX. The
// expected shapes and values are NumPy's, except that Plexus takes an empty
// shape whose other axes overflow (NumPy refuses those as too big).
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "plexus/plexus.h"

namespace {

const px_device cpu0{PX_DEVICE_CPU, 0};
constexpr int64_t big = std::numeric_limits<int64_t>::max();

bool says(const std::string& needle) { return std::string(px_last_error()).find(needle) != std::string::npos; }

struct Rt {
    px_runtime* rt = nullptr;
    std::vector<px_tensor*> owned;
    Rt() { REQUIRE(px_runtime_create(nullptr, &rt) == PX_OK); }
    ~Rt() {
        for (px_tensor* t : owned) px_tensor_release(t);
        px_runtime_destroy(rt);
    }
    px_tensor* keep(px_tensor* t) { return owned.push_back(t), t; }
    px_tensor* zeros(std::vector<int64_t> dims) {
        px_tensor* t = nullptr;
        REQUIRE(px_tensor_full(rt, cpu0, PX_FLOAT32, int32_t(dims.size()), dims.data(), 0.0, &t) == PX_OK);
        return keep(t);
    }
    px_tensor* arange(int64_t n) {
        px_tensor* t = nullptr;
        REQUIRE(px_tensor_arange(rt, cpu0, PX_INT64, 0, double(n), 1, &t) == PX_OK);
        return keep(t);
    }
};

std::vector<int64_t> shape_of(px_tensor* t) {
    int32_t nd = 0;
    REQUIRE(px_tensor_ndim(t, &nd) == PX_OK);
    std::vector<int64_t> s(size_t(nd), -7);
    REQUIRE(px_tensor_shape(t, s.data(), nd) == PX_OK);
    return s;
}

std::vector<int64_t> values(px_tensor* t) {
    int64_t n = 1;
    for (int64_t d : shape_of(t)) n *= d;
    std::vector<int64_t> v(static_cast<size_t>(n));
    REQUIRE(px_tensor_to_host(t, v.data(), v.size() * sizeof(int64_t)) == PX_OK);
    return v;
}

}  // namespace

TEST_CASE("a reduction whose result has more elements than 64 bits hold is refused, naming op and shapes",
          "[capi][sizes]") {
    Rt r;
    const int64_t g = int64_t(1) << 32;
    px_tensor* a = r.zeros({0, g, g});  // empty, so it fits
    px_tensor* out = nullptr;
    for (int keepdims : {0, 1}) {
        CHECK(px_reduce(PX_OP_SUM, a, 0, 0, keepdims, &out) == PX_ERROR_SHAPE);
        CHECK(out == nullptr);
        CHECK(says("px_reduce: sum: reducing (0, 4294967296, 4294967296) over axis 0 gives "));
        CHECK(says(keepdims ? "(1, 4294967296, 4294967296), which has more elements than fit in 64 bits"
                            : "(4294967296, 4294967296), which has more elements than fit in 64 bits"));
    }
    // Over an axis that leaves the empty one, the result is empty and fine.
    REQUIRE(px_reduce(PX_OP_SUM, a, 0, 2, 0, &out) == PX_OK);
    r.keep(out);
    CHECK(shape_of(out) == std::vector<int64_t>{0, g});
    REQUIRE(px_reduce(PX_OP_SUM, a, 1, 0, 0, &out) == PX_OK);  // all axes: one zero
    r.keep(out);
    CHECK(shape_of(out).empty());
    float sum = -1;
    REQUIRE(px_tensor_to_host(out, &sum, sizeof sum) == PX_OK);
    CHECK(sum == 0.0f);
}

TEST_CASE("slice_axis with steps up to INT64_MAX gives NumPy's shapes and values", "[capi][sizes]") {
    Rt r;
    px_tensor* a = r.arange(10);
    struct Case {
        int64_t start, stop, step;
        std::vector<int64_t> want;  // numpy.arange(10)[start:stop:step]
    };
    const Case cases[] = {
        {0, 10, big, {0}},
        {1, big, big, {1}},
        {-3, big, big, {7}},
        {std::numeric_limits<int64_t>::min(), big, big - 1, {0}},
        {9, 10, big, {9}},
        {3, 2, big, {}},
        {10, big, big, {}},
        {0, 10, 9, {0, 9}},
        {0, 10, 10, {0}},
        {2, 9, 3, {2, 5, 8}},
    };
    for (const Case& c : cases) {
        INFO("[" << c.start << ":" << c.stop << ":" << c.step << "]");
        px_tensor* out = nullptr;
        REQUIRE(px_slice_axis(a, 0, c.start, c.stop, c.step, &out) == PX_OK);
        r.keep(out);
        CHECK(shape_of(out) == std::vector<int64_t>{int64_t(c.want.size())});
        CHECK(values(out) == c.want);
    }
}

TEST_CASE("slice_axis with a huge step on an empty tensor gives a non-negative shape", "[capi][sizes]") {
    Rt r;
    px_tensor* out = nullptr;
    // numpy.zeros((2, 0))[0::2**63-1].shape == (1, 0); it was (-1, 0).
    REQUIRE(px_slice_axis(r.zeros({2, 0}), 0, 0, big, big, &out) == PX_OK);
    r.keep(out);
    CHECK(shape_of(out) == std::vector<int64_t>{1, 0});
    // An empty axis before huge ones: the offsets of a late start do not fit,
    // and an empty result reads nothing.
    const int64_t g = int64_t(1) << 32;
    REQUIRE(px_slice_axis(r.zeros({0, g, g}), 1, g - 1, g, 1, &out) == PX_OK);
    r.keep(out);
    CHECK(shape_of(out) == std::vector<int64_t>{0, 1, g});
}

TEST_CASE("a window whose extent and padding overflow 64 bits is refused, naming op and sizes", "[capi][sizes]") {
    Rt r;
    px_tensor* x = r.zeros({0, 1, big, 1});  // an empty batch allows a huge height
    px_tensor* w = r.zeros({1, 1, 1, 1});
    px_tensor* out = nullptr;
    CHECK(px_conv2d(x, w, 1, 1, 1, 0, &out) == PX_ERROR_SHAPE);
    CHECK(out == nullptr);
    CHECK(says("px_conv2d: conv2d: the height extent 9223372036854775807 with padding 1 has more cells than fit "
               "in 64 bits"));
    // Without padding the same input is fine, and the result is empty.
    REQUIRE(px_conv2d(x, w, 1, 1, 0, 0, &out) == PX_OK);
    r.keep(out);
    CHECK(shape_of(out) == std::vector<int64_t>{0, 1, big, 1});
}

TEST_CASE("concat of empty tensors with huge axes computes no offset past 64 bits", "[capi][sizes]") {
    Rt r;
    const int64_t g = int64_t(1) << 32;
    px_tensor* parts[] = {r.zeros({0, g, g}), r.zeros({0, g, g})};
    px_tensor* out = nullptr;
    REQUIRE(px_concat(parts, 2, 1, &out) == PX_OK);  // the second part starts at row 2^32 of stride 2^32
    r.keep(out);
    CHECK(shape_of(out) == std::vector<int64_t>{0, 2 * g, g});
}

// A batch of none hides matrices whose element count overflows 64 bits: their
// strides in the batch (rows * cols) overflowed, which UBSan reported.
TEST_CASE("matmul of a batch of none whose matrices overflow 64 bits gives NumPy's empty shapes", "[host][overflow]") {
    Rt r;
    const int64_t huge = int64_t(1) << 32;
    px_tensor* out = nullptr;
    REQUIRE(px_matmul(r.zeros({0, huge, huge}), r.zeros({0, huge, 1}), &out) == PX_OK);
    CHECK(shape_of(r.keep(out)) == std::vector<int64_t>{0, huge, 1});
    REQUIRE(px_matmul(r.zeros({0, huge, 0}), r.zeros({0, 0, huge}), &out) == PX_OK);
    CHECK(shape_of(r.keep(out)) == std::vector<int64_t>{0, huge, huge});
    REQUIRE(px_matmul(r.zeros({0, huge, huge}), r.zeros({huge, 0}), &out) == PX_OK);  // the 2-D operand shared
    CHECK(shape_of(r.keep(out)) == std::vector<int64_t>{0, huge, 0});
}

// An empty tensor is empty whichever axis is 0: the count of (2^32, 2^32, 0)
// was checked axis by axis from the left, so the transpose of a legal
// (0, 2^32, 2^32) passed unchecked (UBSan: signed overflow in numel) and the
// ops on it were refused as "more elements than fit in 64 bits"; where() was
// refused or not by the order of its operands (found by an audit, issue 37).
TEST_CASE("an empty tensor is empty whichever axis is 0: transpose, reshape, add, concat and where accept it",
          "[capi][sizes]") {
    Rt r;
    const int64_t g = int64_t(1) << 32;
    px_tensor* t = nullptr;
    const int32_t perm[] = {1, 2, 0};
    REQUIRE(px_transpose(r.zeros({0, g, g}), perm, 3, &t) == PX_OK);
    r.keep(t);
    CHECK(shape_of(t) == std::vector<int64_t>{g, g, 0});
    int64_t n = -1;
    REQUIRE(px_tensor_numel(t, &n) == PX_OK);
    CHECK(n == 0);
    px_tensor* out = nullptr;
    REQUIRE(px_binary(PX_OP_ADD, t, t, &out) == PX_OK);
    CHECK(shape_of(r.keep(out)) == std::vector<int64_t>{g, g, 0});
    const int64_t same[] = {g, g, 0};
    REQUIRE(px_tensor_reshape(t, 3, same, &out) == PX_OK);
    CHECK(shape_of(r.keep(out)) == std::vector<int64_t>{g, g, 0});
    px_tensor* both[] = {t, t};
    REQUIRE(px_concat(both, 2, 2, &out) == PX_OK);
    CHECK(shape_of(r.keep(out)) == std::vector<int64_t>{g, g, 0});
    REQUIRE(r.zeros({g, g, 0}) != nullptr);  // made directly too
    // Still refused: a non-empty count past 64 bits, and inferring an axis beside a 0.
    CHECK(px_tensor_full(r.rt, cpu0, PX_FLOAT32, 2, same, 0.0, &out) == PX_ERROR_SHAPE);  // (2^32, 2^32)
    const int64_t inferred[] = {-1, 0};
    CHECK(px_tensor_reshape(t, 2, inferred, &out) == PX_ERROR_SHAPE);
    // where over (1, 2^32, 1, 1), (1, 1, 2^32, 1) and (0, 1, 1, 1): the broadcast of all three is
    // (0, 2^32, 2^32, 1), in either order of the two value operands (a pair alone would not fit).
    // (NumPy refuses all of these: it wants the product of the nonzero axes to fit.)
    // One 4 GiB uint8 block serves as the condition and, reshaped, as a value
    // (two float32 blocks had the test page through 20 GiB for 30-50 s). It
    // is left unwritten: the result is empty, so nothing reads it, and
    // filling it took 100 s under ASan.
    px_tensor *c = nullptr, *a = nullptr, *b = nullptr;
    const int64_t cs[] = {1, g, 1, 1}, as[] = {1, 1, g, 1}, bs[] = {0, 1, 1, 1};
    REQUIRE(px_tensor_empty(r.rt, cpu0, PX_UINT8, 4, cs, &c) == PX_OK);
    r.keep(c);
    REQUIRE(px_tensor_reshape(c, 4, as, &a) == PX_OK);
    r.keep(a);
    REQUIRE(px_tensor_full(r.rt, cpu0, PX_UINT8, 4, bs, 0.0, &b) == PX_OK);
    r.keep(b);
    REQUIRE(px_where(c, a, b, &out) == PX_OK);
    CHECK(shape_of(r.keep(out)) == std::vector<int64_t>{0, g, g, 1});
    REQUIRE(px_where(c, b, a, &out) == PX_OK);
    CHECK(shape_of(r.keep(out)) == std::vector<int64_t>{0, g, g, 1});
}
