// Conformance R19: an op writes every element of its output and nothing
// outside it. Each elementwise op runs once per dtype at the plugin boundary
// with its output in the middle of a larger buffer, the whole buffer filled
// with a poison pattern first: a guard byte that changed is a write out of
// bounds, an element still poison was never written. Caught here, in the op
// that did it, rather than as a corrupted neighbour in some later check.
#include <catch2/catch.hpp>

#include <vector>

#include "conformance.hpp"
#include "opened_plugin.hpp"
#include "plexus/op_rows.h"

namespace {

constexpr unsigned char kPoison = 0xa5;
constexpr uint64_t kGuard = 64;  // bytes each side of the output
constexpr int64_t kElements = 7;

// 1, 2, ... kElements as `dtype`'s bytes: positive and non-zero, which every
// elementwise op takes (log, sqrt, div), and never the poison pattern.
std::vector<unsigned char> counting(int32_t dtype) {
    std::vector<unsigned char> b(size_t(kElements) * px_dtype_size(dtype));
    for (int64_t i = 0; i < kElements; ++i) {
        const double v = double(i + 1);
        unsigned char* p = b.data() + size_t(i) * px_dtype_size(dtype);
        switch (dtype) {
        case PX_FLOAT32: { const float f = float(v); std::memcpy(p, &f, 4); break; }
        case PX_FLOAT64: std::memcpy(p, &v, 8); break;
        case PX_INT32: { const int32_t x = int32_t(v); std::memcpy(p, &x, 4); break; }
        case PX_INT64: { const int64_t x = int64_t(v); std::memcpy(p, &x, 8); break; }
        default: *p = static_cast<unsigned char>(v);
        }
    }
    return b;
}

}  // namespace

TEST_CASE("elementwise ops write every element of their output and nothing around it", "[conformance][guards][R19]") {
    pxconf::Opened p;
    for (int32_t op = 0; op < PX_OP_NUMBER_LIMIT; ++op) {
        const px_op_row* row = px_op_row_of(op);
        if (!row || (row->family != PX_FAMILY_BINARY && row->family != PX_FAMILY_UNARY)) continue;
        for (int32_t dtype = 1; dtype < 16; ++dtype) {
            if (!px_op_accepts(op, dtype) || !p.api->supports(p.ctx, p.device, op, dtype)) continue;
            DYNAMIC_SECTION(px_op_name(op) << " " << px_dtype_name(dtype)) {
                const int32_t out_dtype = px_op_result_dtype(op, dtype);
                const uint64_t in_bytes = uint64_t(kElements) * px_dtype_size(dtype);
                const uint64_t out_bytes = uint64_t(kElements) * px_dtype_size(out_dtype);
                px_plugin_buffer *in = nullptr, *out = nullptr;
                REQUIRE(p.api->buffer_alloc(p.ctx, p.device, in_bytes, &in, &p.err) == PX_OK);
                REQUIRE(p.api->buffer_alloc(p.ctx, p.device, out_bytes + 2 * kGuard, &out, &p.err) == PX_OK);
                const std::vector<unsigned char> values = counting(dtype);
                std::vector<unsigned char> poison(out_bytes + 2 * kGuard, kPoison), got(poison.size());
                REQUIRE(p.api->copy_from_host(p.ctx, in, 0, values.data(), in_bytes, &p.err) == PX_OK);
                REQUIRE(p.api->copy_from_host(p.ctx, out, 0, poison.data(), poison.size(), &p.err) == PX_OK);
                const std::vector<px_tensor_desc> inputs(size_t(row->inputs_most), pxconf::vector_desc(in, dtype, kElements));
                px_tensor_desc result = pxconf::vector_desc(out, out_dtype, kElements);
                result.offset = kGuard;
                px_binary_attrs binary{sizeof(px_binary_attrs), 0, 0};  // two tensor operands
                const px_op_call call{sizeof(px_op_call), op, p.device, int32_t(inputs.size()), inputs.data(), 1,
                                      &result, row->family == PX_FAMILY_BINARY ? &binary : nullptr};
                const px_status executed = p.api->execute(p.ctx, &call, &p.err);
                INFO("the plugin said: " << p.said());  // INFO reads its words now: after the call
                p.require_not_refused_as_offered(executed, op, dtype);  // R5, not R19
                REQUIRE(executed == PX_OK);
                REQUIRE(p.api->synchronize(p.ctx, p.device, &p.err) == PX_OK);
                REQUIRE(p.api->copy_to_host(p.ctx, out, 0, got.data(), got.size(), &p.err) == PX_OK);
                uint64_t before = 0, after = 0, unwritten = 0;
                for (uint64_t i = 0; i < kGuard; ++i) {
                    before += got[i] != kPoison;
                    after += got[kGuard + out_bytes + i] != kPoison;
                }
                const size_t size = px_dtype_size(out_dtype);
                for (int64_t e = 0; e < kElements; ++e)
                    unwritten += std::memcmp(got.data() + kGuard + size_t(e) * size, poison.data(), size) == 0;
                INFO(kElements << " elements of " << px_dtype_name(out_dtype) << " at byte " << kGuard << " of a "
                               << poison.size() << "-byte buffer filled with 0x" << std::hex << int(kPoison));
                CHECK(before == 0);      // bytes changed before the output
                CHECK(after == 0);       // bytes changed after its end
                CHECK(unwritten == 0);   // elements still holding the poison
                CHECK(p.api->buffer_free(p.ctx, in, &p.err) == PX_OK);
                CHECK(p.api->buffer_free(p.ctx, out, &p.err) == PX_OK);
            }
        }
    }
}
