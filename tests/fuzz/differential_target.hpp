// The differential op-call target's body: each input, decoded as the op-call
// target decodes it (op_call_target.hpp), runs on two plugins from the same
// buffer contents, and the two must agree: both refuse it with the same
// status, or both run it and fail (or not) alike while running, and then
// their outputs hold the same values (floats within a tolerance that allows
// a different order of summation; integers exactly). A plugin may lack an
// (op, dtype): a call either refuses as unsupported is skipped. A call
// whose results the ABI leaves open is compared only as far as its refusal:
// one with an output over another operand (an in-place SGD update
// excepted) or writing an element twice.
//
// Shared by plexus-fuzz-op-call-diff (the CPU plugin against the CUDA plugin
// on the CUDA emulator), the replay of its corpus in every build, and
// plexus-op-call-agree (any two plugins, e.g. the CPU plugin and the real
// CUDA plugin on a GPU machine).
#pragma once

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "op_call_target.hpp"

namespace plexus::fuzz {

// The byte offset of every element of `d`, in row-major order.
inline std::vector<uint64_t> element_offsets(const px_tensor_desc& d) {
    std::vector<uint64_t> out;
    int64_t count = 1;
    for (int k = 0; k < d.ndim; ++k) count *= d.shape[k];
    const uint64_t size = px_dtype_size(d.dtype);
    for (int64_t i = 0; i < count; ++i) {
        uint64_t at = d.offset;
        for (int64_t k = d.ndim - 1, rest = i; k >= 0; --k) {
            at += uint64_t(rest % d.shape[k]) * uint64_t(d.strides[k]) * size;
            rest /= d.shape[k];
        }
        out.push_back(at);
    }
    return out;
}

inline bool same_layout(const px_tensor_desc& a, const px_tensor_desc& b) {
    if (a.buffer != b.buffer || a.offset != b.offset || a.dtype != b.dtype || a.ndim != b.ndim) return false;
    for (int k = 0; k < a.ndim; ++k)
        if (a.shape[k] != b.shape[k] || a.strides[k] != b.strides[k]) return false;
    return true;
}

inline bool overlap(const px_tensor_desc& a, const px_tensor_desc& b) {
    const uint64_t a_end = a.offset + operand_bytes(a), b_end = b.offset + operand_bytes(b);
    return a.buffer == b.buffer && a.offset < b_end && b.offset < a_end;
}

// Whether the ABI fixes what the outputs of `c` hold after the call: no
// output overlaps another operand (an in-place SGD update excepted; an
// output written over an input changes what the other outputs read), and
// none writes an element twice.
inline bool outputs_determined(const DecodedCall& c) {
    for (int32_t o = c.num_inputs; o < c.num_inputs + c.num_outputs; ++o) {
        const px_tensor_desc& out = c.operands[o];
        for (int32_t i = 0; i < c.num_inputs + c.num_outputs; ++i) {
            const bool in_place = c.op == PX_OP_SGD_UPDATE && same_layout(out, c.operands[i]);
            if (i != o && overlap(out, c.operands[i]) && !in_place) return false;
        }
        std::vector<uint64_t> at = element_offsets(out);
        std::sort(at.begin(), at.end());
        if (std::adjacent_find(at.begin(), at.end()) != at.end()) return false;
    }
    return true;
}

// Two elements of `dtype` agree: floats both NaN, equal, or within the
// tolerance; integers bit for bit.
inline bool same_value(int32_t dtype, const unsigned char* a, const unsigned char* b) {
    if (dtype != PX_FLOAT32 && dtype != PX_FLOAT64) return std::memcmp(a, b, px_dtype_size(dtype)) == 0;
    double x, y, tolerance;
    if (dtype == PX_FLOAT32) {
        float fx, fy;
        std::memcpy(&fx, a, 4);
        std::memcpy(&fy, b, 4);
        x = fx, y = fy, tolerance = 1e-4;
    } else {
        std::memcpy(&x, a, 8);
        std::memcpy(&y, b, 8);
        tolerance = 1e-9;
    }
    if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y);
    return x == y || std::fabs(x - y) <= tolerance * (1 + std::max(std::fabs(x), std::fabs(y)));
}

inline std::string value_text(int32_t dtype, const unsigned char* v) {
    char text[40];
    switch (dtype) {
    case PX_FLOAT32: { float f; std::memcpy(&f, v, 4); std::snprintf(text, sizeof text, "%.9g", double(f)); break; }
    case PX_FLOAT64: { double f; std::memcpy(&f, v, 8); std::snprintf(text, sizeof text, "%.17g", f); break; }
    case PX_INT32: { int32_t i; std::memcpy(&i, v, 4); std::snprintf(text, sizeof text, "%d", i); break; }
    case PX_INT64: { int64_t i; std::memcpy(&i, v, 8); std::snprintf(text, sizeof text, "%lld", (long long)i); break; }
    default: std::snprintf(text, sizeof text, "%u", unsigned(*v));
    }
    return text;
}

inline std::vector<unsigned char> buffer_bytes(OpCallSession& s, const px_tensor_desc& d) {
    int index = 0;
    while (s.buffers[index] != d.buffer) ++index;
    std::vector<unsigned char> bytes(kBufferBytes[index]);
    px_plugin_error err{sizeof err, {0}};
    if (s.api->copy_to_host(s.ctx, d.buffer, 0, bytes.data(), bytes.size(), &err) != PX_OK)
        op_call_invariant_broken("an output could not be read back", err.message);
    return bytes;
}

// What one input gave: how many output elements were compared, and where
// the plugins disagreed (empty when they agree).
struct Comparison {
    size_t compared = 0;
    std::string disagreement;
};

inline Comparison disagree(const DecodedCall& c, const std::string& what) {
    return Comparison{0, std::string(px_op_name(c.op)) + ": " + what};
}

inline std::string outcome_text(px_status status, const std::string& message) {
    return "status " + std::to_string(status) + (message.empty() ? "" : " ('" + message + "')");
}

// Runs one input on `ref` and on `dut`, each from the starting buffers, and
// compares what they did (the first difference only).
inline Comparison differential(OpCallSession& ref, OpCallSession& dut, const uint8_t* data, size_t size) {
    DecodedCall a, b;
    if (!decode_call(ref, data, size, a) || !decode_call(dut, data, size, b)) return {};
    ref.refill();
    dut.refill();
    const CallOutcome x = run_call(ref, a), y = run_call(dut, b);
    if (x.executed == PX_ERROR_UNSUPPORTED || y.executed == PX_ERROR_UNSUPPORTED) return {};
    if (x.executed != y.executed)
        return disagree(a, "execute returned " + outcome_text(x.executed, x.message) + " and " +
                               outcome_text(y.executed, y.message));
    // An output over an input changes the values the rest of the call reads,
    // so what it computes, and whether it fails, is left open.
    if (x.executed != PX_OK || !outputs_determined(a)) return {};
    if ((x.finished == PX_OK) != (y.finished == PX_OK))
        return disagree(a, "running it gave " + outcome_text(x.finished, x.message) + " and " +
                               outcome_text(y.finished, y.message));
    if (x.finished != PX_OK) return {};
    Comparison result;
    for (int32_t o = 0; o < a.num_outputs; ++o) {
        const px_tensor_desc& out = a.operands[a.num_inputs + o];
        const std::vector<unsigned char> p = buffer_bytes(ref, out), q = buffer_bytes(dut, b.operands[b.num_inputs + o]);
        const std::vector<uint64_t> at = element_offsets(out);
        for (size_t e = 0; e < at.size(); ++e, ++result.compared)
            if (!same_value(out.dtype, p.data() + at[e], q.data() + at[e]))
                return disagree(a, "output " + std::to_string(o) + " element " + std::to_string(e) + " is " +
                                       value_text(out.dtype, p.data() + at[e]) + " and " +
                                       value_text(out.dtype, q.data() + at[e]));
    }
    return result;
}

}  // namespace plexus::fuzz
