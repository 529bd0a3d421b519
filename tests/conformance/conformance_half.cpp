// Conformance: float16 and bfloat16 (plugin ABI 1.6). Every one of each
// format's 65,536 patterns reads back exactly through cast; float32, float64
// and integers round to nearest even in each format, once, with IEEE's
// overflow, subnormals and signed zeros; copies keep the bits; products sum
// in float32 and round once. (Creation: conformance_data.cpp; elementwise
// ops and reductions: their files, every dtype.) The reference is written here apart from half.h: a
// pattern's value decoded with ldexp, and the nearest pattern found by
// searching the sorted values, so every plugin's bits are checked against
// one definition.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "conformance.hpp"

using namespace plexus;

namespace {

struct Format {
    DType dtype;
    int exp_bits, frac_bits;
    uint16_t quiet_nan;  // the NaN a conversion to the format gives (the sign added)
};
const Format kFormats[] = {{DType::float16, 5, 10, 0x7E00}, {DType::bfloat16, 8, 7, 0x7FC0}};

uint16_t infinity_bits(const Format& f) { return uint16_t(((1u << f.exp_bits) - 1) << f.frac_bits); }

// A pattern's value from its fields (a NaN of its sign for a NaN).
double decode(const Format& f, uint16_t bits) {
    const int bias = (1 << (f.exp_bits - 1)) - 1;
    const int e = (bits >> f.frac_bits) & ((1 << f.exp_bits) - 1);
    const double frac = bits & ((1u << f.frac_bits) - 1);
    const double sign = (bits & 0x8000) ? -1 : 1;
    if (e == (1 << f.exp_bits) - 1) return frac != 0 ? std::copysign(NAN, sign) : sign * INFINITY;
    if (e == 0) return sign * std::ldexp(frac, 1 - bias - f.frac_bits);
    return sign * std::ldexp(frac + std::ldexp(1.0, f.frac_bits), e - bias - f.frac_bits);
}

// The pattern nearest `x`, ties to the even pattern. Infinity stands where
// the next power of two would be, so that values from half an ulp above the
// largest finite one round to it, as IEEE's unbounded-exponent rule says.
uint16_t nearest(const Format& f, double x) {
    const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
    if (std::isnan(x)) return sign | f.quiet_nan;
    const uint16_t inf = infinity_bits(f);
    auto value = [&](uint16_t p) { return p == inf ? std::ldexp(1.0, 1 << (f.exp_bits - 1)) : decode(f, p); };
    const double a = std::fabs(x);
    if (a >= value(inf)) return sign | inf;
    uint16_t lo = 0, hi = inf;  // value(lo) <= a < value(hi)
    while (hi - lo > 1) {
        const uint16_t mid = uint16_t((lo + hi) / 2);
        (value(mid) <= a ? lo : hi) = mid;
    }
    const double below = a - value(lo), above = value(hi) - a;
    const uint16_t r = below < above ? lo : above < below ? hi : (lo % 2 == 0 ? lo : hi);
    return sign | r;
}

template <class H>
std::vector<uint16_t> bits_of(const Tensor& t) {
    std::vector<uint16_t> out;
    for (H h : t.to_vector<H>()) out.push_back(h.bits);
    return out;
}
std::vector<uint16_t> bits_of(const Tensor& t) {
    return t.dtype() == DType::float16 ? bits_of<float16>(t) : bits_of<bfloat16>(t);
}

template <class H>
Tensor from_bits(const std::vector<uint16_t>& bits, Device dev) {
    std::vector<H> v;
    for (uint16_t b : bits) v.push_back(H::from_bits(b));
    return array(v, {}, dev);
}
Tensor from_bits(const Format& f, const std::vector<uint16_t>& bits, Device dev) {
    return f.dtype == DType::float16 ? from_bits<float16>(bits, dev) : from_bits<bfloat16>(bits, dev);
}

template <class T>
uint64_t bits_of_value(T v) {
    uint64_t b = 0;
    std::memcpy(&b, &v, sizeof v);
    return b;
}

// Every pattern of `f` once.
std::vector<uint16_t> every_pattern() {
    std::vector<uint16_t> all(65536);
    for (size_t i = 0; i < all.size(); ++i) all[i] = uint16_t(i);
    return all;
}

// What each pattern reads as in float32 or float64 (T): its value exactly; a
// NaN stays NaN, made quiet, its payload kept in the fraction's top bits.
template <class T>
uint64_t widened_bits(const Format& f, uint16_t p) {
    const double v = decode(f, p);
    if (!std::isnan(v)) return bits_of_value(static_cast<T>(v));
    constexpr int frac = std::numeric_limits<T>::digits - 1;  // 23 or 52
    const uint64_t payload = p & ((1u << f.frac_bits) - 1);
    const uint64_t sign = uint64_t(p >> 15) << (sizeof(T) * 8 - 1);
    const uint64_t exp_all = (sizeof(T) == 4 ? uint64_t(0xFF) : uint64_t(0x7FF)) << frac;
    return sign | exp_all | (uint64_t(1) << (frac - 1)) | (payload << (frac - f.frac_bits));
}

}  // namespace

TEST_CASE("every float16 and bfloat16 value reads back exactly and converts back to itself",
          "[conformance][cast][half][R13]") {
    Device dev = pxtest::device_under_test();
    const std::vector<uint16_t> all = every_pattern();
    for (const Format& f : kFormats) {
        PX_OP_SECTION(PX_OP_CAST, f.dtype) {
            PX_NEEDS({PX_OP_CAST, DType::float32});
            const Tensor t = from_bits(f, all, dev);
            const std::vector<float> as32 = t.astype(DType::float32).to_vector<float>();
            const std::vector<double> as64 = t.astype(DType::float64).to_vector<double>();
            size_t wrong32 = 0, wrong64 = 0, first32 = 0, first64 = 0;
            for (size_t i = 0; i < all.size(); ++i) {
                if (bits_of_value(as32[i]) != widened_bits<float>(f, all[i]) && !wrong32++) first32 = i;
                if (bits_of_value(as64[i]) != widened_bits<double>(f, all[i]) && !wrong64++) first64 = i;
            }
            INFO(name(f.dtype) << " pattern 0x" << std::hex << first32 << " as float32, 0x" << first64
                               << " as float64 (the first wrong)");
            CHECK(wrong32 == 0);
            CHECK(wrong64 == 0);
            // Back from float32 and float64: each value is its own pattern; a NaN the quiet NaN of its sign.
            std::vector<uint16_t> back(all.size());
            for (size_t i = 0; i < all.size(); ++i) back[i] = nearest(f, decode(f, all[i]));
            CHECK(bits_of(t.astype(DType::float32).astype(f.dtype)) == back);
            CHECK(bits_of(t.astype(DType::float64).astype(f.dtype)) == back);
            CHECK(bits_of(t.astype(f.dtype)) == back);
        }
    }
}

TEST_CASE("float32, float64 and integers round to nearest even in float16 and bfloat16, once",
          "[conformance][cast][half][R13]") {
    Device dev = pxtest::device_under_test();
    for (const Format& f : kFormats) {
        PX_OP_SECTION(PX_OP_CAST, f.dtype) {
            PX_NEEDS({PX_OP_CAST, DType::float32}, {PX_OP_CAST, DType::float64}, {PX_OP_CAST, DType::int32},
                     {PX_OP_CAST, DType::int64});
            // Edge cases: each value's two neighbours in the format and the
            // points halfway between, nudged by one float32 and float64 ulp
            // either way; then the overflow threshold, the subnormals, zeros,
            // infinities and NaNs.
            std::vector<double> cases = {0.0, -0.0, INFINITY, -INFINITY, NAN, -NAN, 1.0 / 3, -1.0 / 3, 1e-30,
                                         3.4028234663852886e38, 1e300, -1e300, 5e-324};
            for (uint16_t p : {0x0000, 0x0001, 0x0002, 0x0003, 0x03FF, 0x0400, 0x3C00, 0x3C01, 0x4000, 0x7BFE,
                               0x7BFF, 0x7F7E, 0x7F7F, 0x3F80, 0x3F81, 0x0080, 0x007F}) {
                const double lo = decode(f, uint16_t(p)), hi = decode(f, uint16_t(p + 1));
                if (!std::isfinite(lo)) continue;
                const double mid = std::isfinite(hi) ? (lo + hi) / 2 : lo + (lo - decode(f, uint16_t(p - 1))) / 2;
                for (double v : {lo, mid, hi}) {
                    if (!std::isfinite(v)) continue;
                    for (double s : {1.0, -1.0}) {
                        cases.push_back(s * v);
                        cases.push_back(s * std::nextafter(v, INFINITY));
                        cases.push_back(s * std::nextafter(v, -INFINITY));
                        cases.push_back(s * double(std::nextafterf(float(v), INFINITY)));
                        cases.push_back(s * double(std::nextafterf(float(v), -INFINITY)));
                    }
                }
            }
            std::vector<float> as_float;
            for (double v : cases) as_float.push_back(float(v));
            std::vector<uint16_t> want64, want32;
            for (double v : cases) want64.push_back(nearest(f, v));
            for (float v : as_float) want32.push_back(nearest(f, v));
            CHECK(bits_of(array(cases, {}, dev).astype(f.dtype)) == want64);
            CHECK(bits_of(array(as_float, {}, dev).astype(f.dtype)) == want32);
            // Rounded once: 1 + 2^-11 + 2^-40 is above float16's halfway point
            // 1 + 2^-11, which float32 would round it to first (and then to 1).
            const double over_half = 1 + std::ldexp(1.0, f.frac_bits == 10 ? -11 : -8) + std::ldexp(1.0, -40);
            CHECK(bits_of(array(std::vector<double>{over_half}, {}, dev).astype(f.dtype)) ==
                  std::vector<uint16_t>{uint16_t(f.frac_bits == 10 ? 0x3C01 : 0x3F81)});
            // Integers: rounded as their exact values (each below is a float64,
            // or rounds there to what it rounds to in both formats).
            const std::vector<int64_t> ints = {0, 1, -1, 2049, 2051, 65504, 65519, 65520, -65520, 1 << 24,
                                               INT64_MAX, INT64_MIN};
            std::vector<uint16_t> want_ints;
            for (int64_t v : ints) want_ints.push_back(nearest(f, double(v)));
            CHECK(bits_of(array(ints, {}, dev).astype(f.dtype)) == want_ints);
            // 2^60 + 2^52 + 1 is just above bfloat16's halfway point between
            // 2^60 (0x5D80) and 2^60 + 2^53 (0x5D81); float64 would hold it as
            // 2^60 + 2^52, exactly half way, and round it to even, down.
            const int64_t above_half = (int64_t(1) << 60) + (int64_t(1) << 52) + 1;
            CHECK(bits_of(array(std::vector<int64_t>{above_half, -above_half}, {}, dev).astype(f.dtype)) ==
                  (f.frac_bits == 7 ? std::vector<uint16_t>{0x5D81, 0xDD81} : std::vector<uint16_t>{0x7C00, 0xFC00}));
            std::vector<int32_t> ints32 = {0, 7, -7, 2049, 65519, 65520, INT32_MAX, INT32_MIN};
            std::vector<uint16_t> want32s;
            for (int32_t v : ints32) want32s.push_back(nearest(f, double(v)));
            CHECK(bits_of(array(ints32, {}, dev).astype(f.dtype)) == want32s);
        }
    }
}

TEST_CASE("float16 and bfloat16 convert to integers toward zero, saturating, NaN to 0",
          "[conformance][cast][half][R13]") {
    Device dev = pxtest::device_under_test();
    for (const Format& f : kFormats) {
        PX_OP_SECTION(PX_OP_CAST, f.dtype) {
            PX_NEEDS({PX_OP_CAST, DType::int32}, {PX_OP_CAST, DType::int64}, {PX_OP_CAST, DType::uint8});
            const uint16_t inf = infinity_bits(f);
            // 2.5, -2.5, 300, infinity, -infinity, NaN
            std::vector<uint16_t> p = {nearest(f, 2.5), nearest(f, -2.5), nearest(f, 300), inf, uint16_t(inf | 0x8000),
                                       f.quiet_nan};
            const Tensor t = from_bits(f, p, dev);
            CHECK(t.astype(DType::int32).to_vector<int32_t>() ==
                  std::vector<int32_t>{2, -2, 300, INT32_MAX, INT32_MIN, 0});
            CHECK(t.astype(DType::int64).to_vector<int64_t>() ==
                  std::vector<int64_t>{2, -2, 300, INT64_MAX, INT64_MIN, 0});
            CHECK(t.astype(DType::uint8).to_vector<uint8_t>() == std::vector<uint8_t>{2, 0, 255, 255, 0, 0});
        }
    }
}

TEST_CASE("float16 and bfloat16 convert to each other through their exact values, rounded once",
          "[conformance][cast][half][R13]") {
    Device dev = pxtest::device_under_test();
    const std::vector<uint16_t> all = every_pattern();
    for (const Format& from : kFormats) {
        const Format& to = &from == &kFormats[0] ? kFormats[1] : kFormats[0];
        PX_OP_SECTION(PX_OP_CAST, from.dtype) {
            PX_NEEDS({PX_OP_CAST, to.dtype});
            std::vector<uint16_t> want;
            for (uint16_t p : all) want.push_back(nearest(to, decode(from, p)));
            CHECK(bits_of(from_bits(from, all, dev).astype(to.dtype)) == want);
        }
    }
}

TEST_CASE("copies of float16 and bfloat16 keep every bit", "[conformance][copy][half][R13]") {
    Device dev = pxtest::device_under_test();
    for (const Format& f : kFormats) {
        PX_OP_SECTION(PX_OP_COPY, f.dtype) {
            // A transpose (a strided copy) of every pattern, signalling NaNs included.
            std::vector<uint16_t> all = every_pattern();
            const Tensor t = from_bits(f, all, dev).reshape({256, 256});
            const std::vector<uint16_t> moved = bits_of(t.transpose().copyto(dev));
            size_t wrong = 0;
            for (size_t r = 0; r < 256; ++r)
                for (size_t c = 0; c < 256; ++c) wrong += moved[r * 256 + c] != all[c * 256 + r];
            CHECK(wrong == 0);
            CHECK(bits_of(t.copyto(cpu(0)).reshape({65536})) == all);
        }
    }
}

TEST_CASE("matmul and gemm in float16 and bfloat16: products summed in float32, each result rounded once",
          "[conformance][matmul][half][R12]") {
    Device dev = pxtest::device_under_test();
    // Integers -8..8 and a long inner dimension: every product and sum is
    // exact in float32, so each result is the exact one rounded once.
    const int M = 5, K = 300, N = 6;
    std::vector<double> av(size_t(M) * K), bv(size_t(K) * N);
    for (size_t i = 0; i < av.size(); ++i) av[i] = double(int(i * 7 % 17) - 8);
    for (size_t i = 0; i < bv.size(); ++i) bv[i] = double(int(i * 5 % 17) - 8);
    auto exact = [&](int i, int j) {
        double s = 0;
        for (int k = 0; k < K; ++k) s += av[size_t(i) * K + k] * bv[size_t(k) * N + j];
        return s;
    };
    // A matrix stored transposed: its (rows x cols) logical values, column by column.
    auto transposed = [](const std::vector<double>& v, int rows, int cols) {
        std::vector<double> t(v.size());
        for (int r = 0; r < rows; ++r)
            for (int c = 0; c < cols; ++c) t[size_t(c) * rows + r] = v[size_t(r) * cols + c];
        return t;
    };
    for (const Format& f : kFormats) {
        std::vector<uint16_t> want;
        for (int i = 0; i < M; ++i)
            for (int j = 0; j < N; ++j) want.push_back(nearest(f, exact(i, j)));
        PX_OP_SECTION(PX_OP_MATMUL, f.dtype) {
            const Tensor a = array(av, {M, K}, dev).astype(f.dtype), b = array(bv, {K, N}, dev).astype(f.dtype);
            CHECK(bits_of(matmul(a.reshape({1, M, K}), b.reshape({1, K, N}))) == want);
        }
        PX_OP_SECTION(PX_OP_GEMM, f.dtype) {
            for (bool ta : {false, true})
                for (bool tb : {false, true}) {
                    INFO("trans_a " << ta << ", trans_b " << tb);
                    const Tensor a = ta ? array(transposed(av, M, K), {K, M}, dev) : array(av, {M, K}, dev);
                    const Tensor b = tb ? array(transposed(bv, K, N), {N, K}, dev) : array(bv, {K, N}, dev);
                    CHECK(bits_of(gemm(a.astype(f.dtype), b.astype(f.dtype), ta, tb)) == want);
                }
        }
    }
}

TEST_CASE("float16 and bfloat16 + - * / and sqrt are correctly rounded, subnormals and signed zeros kept",
          "[conformance][elementwise][half][R10]") {
    Device dev = pxtest::device_under_test();
    for (const Format& f : kFormats) {
        // Zeros, subnormals, the least normal, values about 1, the largest
        // finite, infinities, a NaN, and patterns spread over the rest.
        const uint16_t inf = infinity_bits(f), max = uint16_t(inf - 1), least_normal = uint16_t(1u << f.frac_bits);
        std::vector<uint16_t> p = {0x0000, 0x8000, 0x0001, 0x8003, uint16_t(least_normal - 1), least_normal,
                                   nearest(f, 1.0), uint16_t(nearest(f, 1.0) + 1), nearest(f, 1.5), nearest(f, 3.0),
                                   nearest(f, 1.0 / 3), max, uint16_t(max | 0x8000), inf, uint16_t(inf | 0x8000),
                                   f.quiet_nan};
        for (uint32_t x = 12345; p.size() < 48;) {
            x = x * 1103515245u + 12345u;
            const uint16_t v = uint16_t(x >> 16);
            if (!std::isnan(decode(f, v))) p.push_back(v);
        }
        // Every pair, flat (a[i], b[i]) and broadcast (a column against a row).
        std::vector<uint16_t> a, b;
        for (uint16_t x : p)
            for (uint16_t y : p) a.push_back(x), b.push_back(y);
        const int64_t n = int64_t(p.size());
        // The exact result's nearest pattern: a float64 result rounded again is
        // rounded right, float64 having more than twice these formats' digits.
        struct Op { px_op op; double (*exact)(double, double); };
        const Op ops[] = {{PX_OP_ADD, [](double x, double y) { return x + y; }},
                          {PX_OP_SUB, [](double x, double y) { return x - y; }},
                          {PX_OP_MUL, [](double x, double y) { return x * y; }},
                          {PX_OP_DIV, [](double x, double y) { return x / y; }}};
        auto agrees = [&](const std::vector<uint16_t>& got, const std::vector<uint16_t>& want) {
            size_t wrong = 0, first = 0;
            for (size_t i = 0; i < want.size(); ++i) {
                const bool nan = std::isnan(decode(f, want[i]));  // a NaN's sign may differ between devices
                if (nan ? !std::isnan(decode(f, got[i])) : got[i] != want[i]) {
                    if (!wrong++) first = i;
                }
            }
            INFO(wrong << " wrong; the first: element " << first << ", got 0x" << std::hex << got[first] << ", want 0x"
                       << want[first]);
            CHECK(wrong == 0);
        };
        for (const Op& op : ops) {
            PX_OP_SECTION(op.op, f.dtype) {
                std::vector<uint16_t> want;
                for (size_t i = 0; i < a.size(); ++i) want.push_back(nearest(f, op.exact(decode(f, a[i]), decode(f, b[i]))));
                const Tensor ta = from_bits(f, a, dev), tb = from_bits(f, b, dev);
                agrees(bits_of(ta.binary_op(op.op, tb)), want);
                const Tensor column = from_bits(f, p, dev).reshape({n, 1}), row = from_bits(f, p, dev).reshape({1, n});
                agrees(bits_of(column.binary_op(op.op, row).reshape({n * n})), want);
            }
        }
        PX_OP_SECTION(PX_OP_SQRT, f.dtype) {
            std::vector<uint16_t> want;
            for (uint16_t x : p) want.push_back(nearest(f, std::sqrt(decode(f, x))));
            agrees(bits_of(from_bits(f, p, dev).sqrt()), want);
        }
    }
}
