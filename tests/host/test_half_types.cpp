// float16 and bfloat16 in the frontend and the host: plexus::float16 and
// plexus::bfloat16 against values worked out by hand, the dtypes' names,
// sizes and ABI minor, tensors made from and read as them, printing, the
// errors a wrong element type gets, and DLPack's types for them. The
// conversions on every device are the conformance suite's
// (conformance_half.cpp).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "plexus/dlpack.h"
#include "plexus/op_rows.h"
#include "plexus/plexus.hpp"

using namespace plexus;

namespace {
uint32_t bits_of(float v) {
    uint32_t b = 0;
    std::memcpy(&b, &v, sizeof b);
    return b;
}
}  // namespace

TEST_CASE("float16 rounds to nearest even, once, as worked out by hand", "[half]") {
    CHECK(float16(1.0f).bits == 0x3C00);
    CHECK(float16(1.0 / 3).bits == 0x3555);  // 0x555 / 1024 = 0.3330..., 0x556 is farther
    CHECK(float16(-2.0).bits == 0xC000);
    CHECK(float16(65504.0f).bits == 0x7BFF);           // the largest finite
    CHECK(float16(65519.99).bits == 0x7BFF);           // below half an ulp (16) above it
    CHECK(float16(65520.0).bits == 0x7C00);            // half an ulp above: to infinity, as IEEE says
    CHECK(float16(-1e9f).bits == 0xFC00);
    CHECK(float16(std::ldexp(1.0, -14)).bits == 0x0400);  // the least normal
    CHECK(float16(std::ldexp(1.0, -24)).bits == 0x0001);  // the least subnormal, kept
    CHECK(float16(std::ldexp(1.0, -25)).bits == 0x0000);  // half of it: a tie, to even (zero)
    CHECK(float16(std::ldexp(1.5, -25)).bits == 0x0001);
    CHECK(float16(std::ldexp(3.0, -25)).bits == 0x0002);  // 1.5 subnormal ulps: a tie, to even (2)
    CHECK(float16(-0.0f).bits == 0x8000);
    CHECK(float16(1 + std::ldexp(1.0, -11)).bits == 0x3C00);   // a tie, to even
    CHECK(float16(1 + 3 * std::ldexp(1.0, -11)).bits == 0x3C02);  // a tie, to even (up)
    CHECK(float16(2049).bits == 0x6800);                        // an integer: 2048, by the tie
    CHECK(float16(std::numeric_limits<float>::infinity()).bits == 0x7C00);
    CHECK(float16(std::nanf("")).bits == 0x7E00);
    CHECK(float16(-std::numeric_limits<double>::quiet_NaN()).bits == 0xFE00);
    // Read back exactly; a NaN keeps its payload, made quiet.
    CHECK(float(float16::from_bits(0x3555)) == 0.333251953125f);
    CHECK(float(float16::from_bits(0x0001)) == std::ldexp(1.0f, -24));
    CHECK(double(float16::from_bits(0x7BFF)) == 65504.0);
    CHECK(bits_of(float16::from_bits(0x7C01)) == 0x7FC02000u);  // signalling, payload 1
    CHECK(bits_of(float16::from_bits(0xFE00)) == 0xFFC00000u);
    CHECK(std::signbit(float(float16::from_bits(0x8000))));
}

TEST_CASE("bfloat16 rounds to nearest even, once, as worked out by hand", "[half]") {
    CHECK(bfloat16(1.0f).bits == 0x3F80);
    CHECK(bfloat16(1 + std::ldexp(1.0, -8)).bits == 0x3F80);      // a tie, to even
    CHECK(bfloat16(1 + 3 * std::ldexp(1.0, -8)).bits == 0x3F82);  // a tie, to even (up)
    CHECK(bfloat16(1.0 / 3).bits == 0x3EAB);
    CHECK(bfloat16(std::numeric_limits<float>::max()).bits == 0x7F80);  // above half an ulp past bfloat16's largest
    CHECK(bfloat16(3.3895313892515355e38).bits == 0x7F7F);               // its largest
    CHECK(bfloat16(1e-40f).bits == 0x0001);                              // a float32 subnormal, kept
    CHECK(bfloat16(1e-45).bits == 0x0000);
    CHECK(bfloat16(-0.0).bits == 0x8000);
    CHECK(bfloat16(std::nan("")).bits == 0x7FC0);
    // 2^60 + 2^52 + 1 lies just above the tie between 0x5D80 and 0x5D81;
    // float64 cannot hold it, and through float64 it would round down.
    CHECK(bfloat16((int64_t(1) << 60) + (int64_t(1) << 52) + 1).bits == 0x5D81);
    CHECK(bfloat16((int64_t(1) << 60) + (int64_t(1) << 52)).bits == 0x5D80);
    // Unsigned integers by their own value: 2^63 and above are no negative int64.
    CHECK(bfloat16(uint64_t(1) << 63).bits == 0x5F00);
    CHECK(bfloat16((uint64_t(1) << 63) + (uint64_t(1) << 55) + 1).bits == 0x5F01);
    CHECK(float16(UINT64_MAX).bits == 0x7C00);
    CHECK(float16(uint8_t(255)).bits == 0x5BF8);
    CHECK(float(bfloat16::from_bits(0x3EAB)) == 0.333984375f);
    CHECK(bits_of(bfloat16::from_bits(0x7F81)) == 0x7FC10000u);  // signalling, made quiet, payload kept
    // One format from the other: the exact value, rounded once.
    CHECK(bfloat16(float16::from_bits(0x3555)).bits == 0x3EAB);
    CHECK(float16(bfloat16::from_bits(0x7F7F)).bits == 0x7C00);
}

TEST_CASE("float16 and bfloat16 are dtypes of the table, with names, sizes and the minor that added them",
          "[half]") {
    CHECK(std::string(px_dtype_name(PX_FLOAT16)) == "float16");
    CHECK(std::string(px_dtype_name(PX_BFLOAT16)) == "bfloat16");
    CHECK(px_dtype_size(PX_FLOAT16) == 2);
    CHECK(px_dtype_size(PX_BFLOAT16) == 2);
    CHECK(px_dtype_abi_minor(PX_FLOAT16) == 6);
    CHECK(px_dtype_abi_minor(PX_FLOAT32) == 0);
    CHECK(px_dtype_abi_minor(99) == -1);
    CHECK(is_floating(DType::float16));
    CHECK(is_floating(DType::bfloat16));
    CHECK(!is_floating(DType::int32));
    CHECK(std::string(name(DType::bfloat16)) == "bfloat16");
    CHECK(px_op_result_dtype(PX_OP_SUM, PX_BFLOAT16) == PX_BFLOAT16);  // a float: its own dtype
    CHECK(px_op_result_dtype(PX_OP_MEAN, PX_FLOAT16) == PX_FLOAT16);
}

TEST_CASE("tensors of float16 and bfloat16 are made, read, cast and printed on the CPU", "[half]") {
    const std::vector<float16> h = {float16(0.1f), float16(0.5f), float16(2.0f)};
    Tensor t = array(h);
    CHECK(t.dtype() == DType::float16);
    const std::vector<float16> back = t.to_vector<float16>();
    REQUIRE(back.size() == 3);
    for (size_t i = 0; i < 3; ++i) CHECK(back[i].bits == h[i].bits);
    // NumPy prints float16(0.1) as 0.1: the shortest digits that round to it in float16.
    CHECK(values_string(t) == "[0.1 0.5 2. ]");
    CHECK(describe(t) == "<Tensor 3 float16 @cpu(0)>");
    CHECK(t.astype(DType::float32).to_vector<float>() == std::vector<float>{0.0999755859375f, 0.5f, 2.0f});
    Tensor b = array(std::vector<double>{1.0 / 3, 300.0, -1e-40}).astype(DType::bfloat16);
    CHECK(b.dtype() == DType::bfloat16);
    const std::vector<bfloat16> bv = b.to_vector<bfloat16>();
    CHECK(bv[0].bits == 0x3EAB);
    CHECK(bv[1].bits == 0x4396);  // 300 = 1.171875 x 2^8, exact
    CHECK(bv[2].bits == 0x8001);  // a subnormal, kept
    CHECK(values_string(b.slice(0, 2)) == "[  0.334 300.   ]");
    // The wrong element type is refused, naming both.
    CHECK_THROWS_WITH(t.to_vector<float>(),
                      Catch::Contains("to_vector: the tensor is float16, not float32; use astype() first"));
    CHECK_THROWS_WITH(b.to_vector<float16>(), Catch::Contains("the tensor is bfloat16, not float16"));
    // Gradients take the 16-bit floats as floating dtypes.
    Tensor g = zeros({2}, cpu(), DType::bfloat16);
    g.attach_grad();
    CHECK(g.grad().dtype() == DType::bfloat16);
}

TEST_CASE("DLPack names float16 and bfloat16 by their DLPack types, both ways", "[half][dlpack]") {
    for (auto [dtype, code] : {std::pair{PX_FLOAT16, uint8_t(kDLFloat)}, std::pair{PX_BFLOAT16, uint8_t(kDLBfloat)}}) {
        INFO(px_dtype_name(dtype));
        const std::vector<uint16_t> bits = {0x3C00, 0x8001, 0x7E00};
        const int64_t shape[1] = {3};
        px_tensor* t = nullptr;
        REQUIRE(px_tensor_from_host(runtime(), cpu().raw(), dtype, 1, shape, bits.data(), 6, &t) == PX_OK);
        DLManagedTensorVersioned* dl = nullptr;
        REQUIRE(px_tensor_to_dlpack(t, PX_DLPACK_COPY_NEVER, &dl) == PX_OK);
        CHECK(dl->dl_tensor.dtype.code == code);
        CHECK(dl->dl_tensor.dtype.bits == 16);
        CHECK(dl->dl_tensor.dtype.lanes == 1);
        px_tensor* back = nullptr;
        REQUIRE(px_tensor_from_dlpack(runtime(), cpu().raw(), dl, PX_DLPACK_COPY_NEVER, &back) == PX_OK);  // takes dl
        px_dtype got{};
        REQUIRE(px_tensor_dtype(back, &got) == PX_OK);
        CHECK(got == dtype);
        std::vector<uint16_t> read(3);
        REQUIRE(px_tensor_to_host(back, read.data(), 6) == PX_OK);
        CHECK(read == bits);
        px_tensor_release(back);
        px_tensor_release(t);
    }
}
