// plexus C++ frontend: plexus::float16 and plexus::bfloat16, the host-side
// element types of DType::float16 and DType::bfloat16. Each holds its format's
// 16-bit pattern; it is made from a number by rounding once to nearest even
// and reads back as a float exactly (half.h), so arithmetic on them is
// float32 arithmetic, rounded again only when stored. Usable in CUDA device
// code as well.
#pragma once

#include <cstdint>
#include <type_traits>

#include "plexus/half.h"

#if defined(__CUDACC__)
#define PLEXUS_HALF_HD __host__ __device__
#else
#define PLEXUS_HALF_HD
#endif

namespace plexus {
namespace detail {

// A 16-bit format of ExpBits exponent and FracBits fraction bits; every
// conversion by bits (half.h): a GPU's float conversions would make every
// NaN one canonical NaN.
template <int ExpBits, int FracBits>
struct half_format {
    static PLEXUS_HALF_HD uint16_t from_float(float v) {
        if constexpr (ExpBits == 8) return px_float_to_bfloat16(v);  // branch-free: loops of it vectorize
        else return px_half_round_(px_half_float_as_double_bits_(v), ExpBits, FracBits);
    }
    static PLEXUS_HALF_HD uint16_t from_double(double v) {
        return px_half_round_(px_half_double_bits_(v), ExpBits, FracBits);
    }
    static PLEXUS_HALF_HD uint16_t from_int64(int64_t v) { return from_double(px_half_int64_to_odd_double_(v)); }
    static PLEXUS_HALF_HD uint16_t from_uint64(uint64_t v) { return from_double(px_half_uint64_to_odd_double_(v)); }
    static PLEXUS_HALF_HD float to_float(uint16_t bits) {
        if constexpr (ExpBits == 8) return px_bfloat16_to_float(bits);
        else return px_half_widen_float_(bits, ExpBits, FracBits);
    }
    static PLEXUS_HALF_HD double to_double(uint16_t bits) { return px_half_widen_double_(bits, ExpBits, FracBits); }
};
using float16_format = half_format<5, 10>;
using bfloat16_format = half_format<8, 7>;

// A 16-bit floating-point value of `Format`. Made from a number only
// explicitly (a narrowing that rounds); reads as float implicitly (exact).
template <class Format>
struct half_value {
    uint16_t bits;  // trivial, as a float is: half_value{} is zero, and CUDA's __shared__ arrays may hold it

    half_value() = default;
    PLEXUS_HALF_HD explicit half_value(float v) : bits(Format::from_float(v)) {}
    PLEXUS_HALF_HD explicit half_value(double v) : bits(Format::from_double(v)) {}
    // An integer by its exact value, rounded once.
    template <class I, std::enable_if_t<std::is_integral_v<I> && std::is_signed_v<I>, int> = 0>
    PLEXUS_HALF_HD explicit half_value(I v) : bits(Format::from_int64(static_cast<int64_t>(v))) {}
    template <class I, std::enable_if_t<std::is_integral_v<I> && !std::is_signed_v<I>, int> = 0>
    PLEXUS_HALF_HD explicit half_value(I v) : bits(Format::from_uint64(static_cast<uint64_t>(v))) {}
    // No long double: half.h rounds from float64, and through it a long double would round twice.
    explicit half_value(long double) = delete;
    // One 16-bit format from the other: through float, exact, then rounded once.
    template <class Other, std::enable_if_t<!std::is_same_v<Other, Format>, int> = 0>
    PLEXUS_HALF_HD explicit half_value(half_value<Other> v) : bits(Format::from_float(float(v))) {}

    PLEXUS_HALF_HD operator float() const { return Format::to_float(bits); }
    PLEXUS_HALF_HD explicit operator double() const { return Format::to_double(bits); }

    static PLEXUS_HALF_HD half_value from_bits(uint16_t b) {
        half_value h;
        h.bits = b;
        return h;
    }
};

}  // namespace detail

// IEEE 754 binary16: 5 exponent bits, 10 fraction bits; largest 65504.
using float16 = detail::half_value<detail::float16_format>;
// bfloat16: float32's sign, 8 exponent bits and top 7 fraction bits.
using bfloat16 = detail::half_value<detail::bfloat16_format>;

static_assert(sizeof(float16) == 2 && sizeof(bfloat16) == 2, "a 16-bit value is its pattern alone");

}  // namespace plexus
