// Operands of two dtypes (docs/semantics.md, "operands of two dtypes"):
// px_dtype_promote against a table written out by hand, and px_binary and
// px_where computing every pair in the promoted dtype with the right values.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>
#include <vector>

#include "plexus/plexus.h"

namespace {

const px_dtype kAll[] = {PX_FLOAT32, PX_FLOAT64, PX_INT32, PX_INT64, PX_UINT8, PX_FLOAT16, PX_BFLOAT16};

// The rule written out (rows and columns in kAll's order): a float with an
// integer is the float, the wider of two floats or two integers, float16 with
// bfloat16 float32.
px_dtype expected(px_dtype a, px_dtype b) {
    const px_dtype f32 = PX_FLOAT32, f64 = PX_FLOAT64, i32 = PX_INT32, i64 = PX_INT64, u8 = PX_UINT8, f16 = PX_FLOAT16,
                   bf = PX_BFLOAT16;
    const px_dtype table[7][7] = {
        /*          f32  f64  i32  i64  u8   f16  bf16 */
        /* f32  */ {f32, f64, f32, f32, f32, f32, f32},
        /* f64  */ {f64, f64, f64, f64, f64, f64, f64},
        /* i32  */ {f32, f64, i32, i64, i32, f16, bf},
        /* i64  */ {f32, f64, i64, i64, i64, f16, bf},
        /* u8   */ {f32, f64, i32, i64, u8, f16, bf},
        /* f16  */ {f32, f64, f16, f16, f16, f16, f32},
        /* bf16 */ {f32, f64, bf, bf, bf, f32, bf},
    };
    auto index = [](px_dtype d) {
        for (int i = 0; i < 7; ++i)
            if (kAll[i] == d) return i;
        FAIL("not a dtype");
        return 0;
    };
    return table[index(a)][index(b)];
}

struct Runtime {
    px_runtime* rt = nullptr;
    std::vector<px_tensor*> held;
    Runtime() {
        ::setenv("PLEXUS_CPU_DEVICES", "2", 1);  // read as the runtime loads the CPU plugin
        REQUIRE(px_runtime_create(nullptr, &rt) == PX_OK);
        ::unsetenv("PLEXUS_CPU_DEVICES");
    }
    ~Runtime() {
        for (px_tensor* t : held) px_tensor_release(t);
        px_runtime_destroy(rt);
    }
    px_tensor* keep(px_tensor* t) {
        held.push_back(t);
        return t;
    }
    px_tensor* full(px_dtype d, std::vector<int64_t> shape, double v, int device = 0) {
        px_tensor* t = nullptr;
        REQUIRE(px_tensor_full(rt, px_device{PX_DEVICE_CPU, device}, d, int32_t(shape.size()), shape.data(), v, &t) ==
                PX_OK);
        return keep(t);
    }
};

px_dtype dtype_of(px_tensor* t) {
    px_dtype d{};
    REQUIRE(px_tensor_dtype(t, &d) == PX_OK);
    return d;
}

std::vector<double> values(px_tensor* t) {
    px_tensor* wide = nullptr;
    REQUIRE(px_cast(t, PX_FLOAT64, &wide) == PX_OK);
    int64_t n = 0;
    REQUIRE(px_tensor_numel(wide, &n) == PX_OK);
    std::vector<double> out(static_cast<size_t>(n));
    REQUIRE(px_tensor_to_host(wide, out.data(), out.size() * sizeof(double)) == PX_OK);
    px_tensor_release(wide);
    return out;
}

bool is_float(px_dtype d) { return px_dtype_class(d) == PX_DTYPE_CLASS_FLOAT; }

}  // namespace

TEST_CASE("px_dtype_promote gives the table's dtype for every pair, in either order, and 0 for a non-dtype",
          "[capi][dtypes]") {
    for (px_dtype a : kAll)
        for (px_dtype b : kAll) {
            INFO(px_dtype_name(a) << " with " << px_dtype_name(b));
            CHECK(px_dtype_promote(a, b) == expected(a, b));
            CHECK(px_dtype_promote(a, b) == px_dtype_promote(b, a));
        }
    CHECK(px_dtype_promote(PX_FLOAT32, 0) == 0);
    CHECK(px_dtype_promote(99, PX_INT32) == 0);
    CHECK(px_dtype_promote(-1, -1) == 0);
}

TEST_CASE("px_binary and px_where compute operands of two dtypes in the promoted dtype, broadcasting as one",
          "[capi][dtypes]") {
    Runtime r;
    for (px_dtype da : kAll)
        for (px_dtype db : kAll) {
            INFO(px_dtype_name(da) << " with " << px_dtype_name(db));
            // A fraction where the dtype has one: it must survive into the result.
            const double va = is_float(da) ? 2.5 : 3, vb = is_float(db) ? -0.5 : 2;
            px_tensor *a = r.full(da, {2, 3}, va), *b = r.full(db, {3}, vb), *out = nullptr;
            REQUIRE(px_binary(PX_OP_ADD, a, b, &out) == PX_OK);
            r.keep(out);
            CHECK(dtype_of(out) == expected(da, db));
            CHECK(values(out) == std::vector<double>(6, va + vb));
            REQUIRE(px_binary(PX_OP_MUL, b, a, &out) == PX_OK);  // the other order
            r.keep(out);
            CHECK(dtype_of(out) == expected(da, db));
            CHECK(values(out) == std::vector<double>(6, va * vb));
            // Comparisons compare in the promoted dtype: 3 > 2.5 is not lost to 3 > 2.
            REQUIRE(px_binary(PX_OP_GT, a, b, &out) == PX_OK);
            r.keep(out);
            CHECK(dtype_of(out) == PX_UINT8);
            CHECK(values(out) == std::vector<double>(6, va > vb ? 1 : 0));
            px_tensor* cond = r.full(PX_UINT8, {2, 1}, 1);
            REQUIRE(px_where(cond, b, a, &out) == PX_OK);
            r.keep(out);
            CHECK(dtype_of(out) == expected(da, db));
            CHECK(values(out) == std::vector<double>(6, vb));
        }
    // An integer tensor with a float one never loses the fraction (as int32 * 0.5 never did).
    px_tensor *i = r.full(PX_INT32, {2}, 3), *half = r.full(PX_FLOAT32, {2}, 0.5), *out = nullptr;
    REQUIRE(px_binary(PX_OP_MUL, i, half, &out) == PX_OK);
    CHECK(values(r.keep(out)) == std::vector<double>{1.5, 1.5});
    REQUIRE(px_binary(PX_OP_DIV, half, i, &out) == PX_OK);
    CHECK(dtype_of(r.keep(out)) == PX_FLOAT32);
}

TEST_CASE("operands of two dtypes are still refused for two devices or shapes that do not broadcast, nothing made",
          "[capi][dtypes]") {
    Runtime r;
    px_tensor *f = r.full(PX_FLOAT32, {2, 3}, 1), *i = r.full(PX_INT32, {4}, 1), *far = r.full(PX_INT32, {3}, 1, 1);
    px_tensor* out = nullptr;
    CHECK(px_binary(PX_OP_ADD, f, i, &out) == PX_ERROR_SHAPE);
    CHECK(std::string(px_last_error()).find("shapes (2, 3) and (4,) cannot be broadcast") != std::string::npos);
    CHECK(px_binary(PX_OP_ADD, f, far, &out) == PX_ERROR_DEVICE_MISMATCH);
    CHECK(px_where(r.full(PX_UINT8, {3}, 1), f, far, &out) == PX_ERROR_DEVICE_MISMATCH);
    CHECK(px_where(r.full(PX_UINT8, {3}, 1), f, i, &out) == PX_ERROR_SHAPE);
    CHECK(out == nullptr);
    // pow takes floats only: an integer pair is refused in the dtype it would compute in.
    CHECK(px_binary(PX_OP_POW, r.full(PX_UINT8, {3}, 2), r.full(PX_INT32, {3}, 2), &out) == PX_ERROR_DTYPE);
    CHECK(std::string(px_last_error()).find("int32") != std::string::npos);
    CHECK(out == nullptr);
}
