// The op-call fuzz target's body: bytes decoded into one px_op_call over four
// buffers of a plugin, executed and waited for, as a host other than
// Plexus's might send it. What it holds the plugin to: every operand either
// passes px_op_call_check or the call is refused with a message, and nothing
// reads or writes outside a buffer (ASan's redzones sit at each buffer's end:
// the sizes are the CPU allocator's size classes, so nothing pads them, and
// the CUDA emulator allocates exactly what is asked).
// Shared by the libFuzzer executables (plexus-fuzz-op-call on the CPU plugin,
// plexus-fuzz-op-call-gpu on the CUDA plugin over the CUDA emulator, each
// built with ASan and UBSan) and by the replay of their corpus in every build.
//
// Input layout (tests/fuzz/README.md; make_op_call_seeds.py writes seeds):
//   byte 0   op: kOps[byte % count]
//   byte 1   bits 0-1: inputs (0..3); bit 2: two outputs; bit 3: no attrs
//   then 8 bytes per operand (inputs, then outputs):
//     dtype kDtypes[b % 5] | buffer (b & 3), offset (b >> 2) * 4 bytes |
//     ndim ((b & 0x7f) % 5), explicit strides when bit 7 is set | four dims (b & 7);
//     bit 6 of the first: the operand ends where its buffer ends, whatever
//     the offset byte says | strides, 2 bits per axis (0..3), used when explicit
//   the rest (up to 64 bytes): the attrs struct's bytes, with struct_size
//   set to the size of the op's attrs struct.
#pragma once

#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "plexus/op_check.h"
#include "plexus/plugin.h"

namespace plexus::fuzz {

constexpr uint64_t kBufferBytes[4] = {64, 256, 1024, 4096};
constexpr int32_t kDtypes[5] = {PX_FLOAT32, PX_FLOAT64, PX_INT32, PX_INT64, PX_UINT8};
constexpr int32_t kOps[] = {
    PX_OP_ADD, PX_OP_SUB, PX_OP_MUL, PX_OP_DIV, PX_OP_POW, PX_OP_EQ, PX_OP_LT, PX_OP_GE, PX_OP_NEG, PX_OP_EXP,
    PX_OP_LOG, PX_OP_SQRT, PX_OP_ABS, PX_OP_RELU, PX_OP_SIGMOID, PX_OP_TANH, PX_OP_WHERE, PX_OP_SUM, PX_OP_MEAN,
    PX_OP_MAX, PX_OP_MIN, PX_OP_ARGMAX, PX_OP_MATMUL, PX_OP_COPY, PX_OP_CAST, PX_OP_FILL, PX_OP_ARANGE,
    PX_OP_RANDOM_UNIFORM, PX_OP_RANDOM_NORMAL, PX_OP_GEMM, PX_OP_CONV2D, PX_OP_CONV2D_BACKWARD_INPUT,
    PX_OP_CONV2D_BACKWARD_WEIGHT, PX_OP_BIAS_ADD, PX_OP_BIAS_GRAD, PX_OP_MAX_POOL2D, PX_OP_AVG_POOL2D,
    PX_OP_MAX_POOL2D_BACKWARD, PX_OP_AVG_POOL2D_BACKWARD, PX_OP_BIAS_RELU_MAX_POOL2D,
    PX_OP_BIAS_RELU_MAX_POOL2D_BACKWARD, PX_OP_RELU_BACKWARD, PX_OP_SIGMOID_BACKWARD, PX_OP_TANH_BACKWARD,
    PX_OP_LOG_SOFTMAX, PX_OP_LOG_SOFTMAX_BACKWARD, PX_OP_SOFTMAX_CROSS_ENTROPY,
    PX_OP_SOFTMAX_CROSS_ENTROPY_BACKWARD, PX_OP_DROPOUT, PX_OP_DROPOUT_BACKWARD, PX_OP_SGD_UPDATE};
constexpr size_t kOperandBytes = 8;
constexpr size_t kAttrsBytes = 64;

[[noreturn]] inline void op_call_invariant_broken(const char* what, const char* message) {
    std::fprintf(stderr, "fuzz invariant broken: %s (%s)\n", what, message);
    std::abort();
}

// The table of the plugin in `file`, loaded for the process (the runtime
// keeps its plugins until exit too), or NULL with the reason in `why`.
inline const px_plugin_api* open_plugin(const char* file, std::string& why) {
    void* lib = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        why = dlerror();
        return nullptr;
    }
    auto get = reinterpret_cast<px_plugin_get_api_fn>(dlsym(lib, PX_PLUGIN_ENTRY_SYMBOL));
    const px_plugin_api* api = get ? get() : nullptr;
    if (!api) why = std::string(file) + " has no plugin table";
    return api;
}

// For the fuzzers, before a plugin loads: one thread per pool. The inputs
// are tiny, and spinning OpenMP and OpenBLAS workers (the CPU plugin's, the
// emulated cuBLAS's) would cost more than they compute (unless the caller
// says else).
inline void one_thread_per_pool() {
    setenv("OMP_NUM_THREADS", "1", 0);
    setenv("OPENBLAS_NUM_THREADS", "1", 0);
}

// open_plugin for the fuzzers, which stop where a plugin does not load.
inline const px_plugin_api* plugin_or_abort(const char* file) {
    std::string why;
    const px_plugin_api* api = open_plugin(file, why);
    if (!api) op_call_invariant_broken("a plugin did not load", why.c_str());
    return api;
}

// What the buffers hold at the start: buffer 0 int64 words 0, 1, 2, 0, ...
// (labels in range, uint8 conditions, small int32s), the others float32
// words in [-2, 2] in steps of 1/8 (as float64 they read as moderate
// values), so that ops compute something other than zeros.
inline const unsigned char* buffer_pattern(int buffer) {
    static const auto patterns = [] {
        static unsigned char bytes[4][4096];
        for (int64_t i = 0; i < 512; ++i) {
            const int64_t label = i % 3;
            std::memcpy(bytes[0] + 8 * i, &label, 8);
        }
        for (int b = 1; b < 4; ++b)
            for (int i = 0; i < 1024; ++i) {
                const float v = float((i * 37 + b * 11) % 33 - 16) / 8.0f;
                std::memcpy(bytes[b] + 4 * i, &v, 4);
            }
        return bytes;
    }();
    return patterns[buffer];
}

// The plugin's context and its four buffers, made once per plugin.
struct OpCallSession {
    const px_plugin_api* api = nullptr;
    px_plugin_context* ctx = nullptr;
    px_plugin_buffer* buffers[4] = {};

    explicit OpCallSession(const px_plugin_api* plugin) : api(plugin) {
        px_plugin_error err{sizeof err, {0}};
        if (api->create(&ctx, &err) != PX_OK) op_call_invariant_broken("the plugin did not start", err.message);
        for (int i = 0; i < 4; ++i)
            if (api->buffer_alloc(ctx, 0, kBufferBytes[i], &buffers[i], &err) != PX_OK)
                op_call_invariant_broken("a buffer could not be made", err.message);
        refill();
    }
    // Puts the starting pattern back in every buffer.
    void refill() {
        px_plugin_error err{sizeof err, {0}};
        for (int i = 0; i < 4; ++i)
            if (api->copy_from_host(ctx, buffers[i], 0, buffer_pattern(i), kBufferBytes[i], &err) != PX_OK)
                op_call_invariant_broken("a buffer could not be filled", err.message);
    }
    ~OpCallSession() {
        for (px_plugin_buffer* b : buffers) api->buffer_free(ctx, b, nullptr);
        api->destroy(ctx);
    }
    OpCallSession(const OpCallSession&) = delete;
    OpCallSession& operator=(const OpCallSession&) = delete;
};

// The size of the attrs struct `op` reads, whatever its input count.
inline uint32_t op_attrs_struct_size(int32_t op) {
    if (op >= PX_OP_ADD && op <= PX_OP_GE) return sizeof(px_binary_attrs);
    if (op == PX_OP_MATMUL) return sizeof(px_matmul_attrs);
    return px_op_attrs_size(op, 1);
}

// The bytes from an operand's first element to the end of its last (0 when
// it is empty), as px_op_call_check measures them. px_tensor_end cannot
// refuse a decoded operand: its dims and strides are small and never negative.
inline uint64_t operand_bytes(px_tensor_desc d) {
    d.offset = 0;
    uint64_t end = 0;
    px_tensor_end(&d, &end);
    return end;
}

// The offset that makes `d` end at its buffer's last byte, so that a read or
// write one element past it lands in ASan's redzone (coverage does not lead
// the fuzzer there: the offset byte alone would take luck). An operand
// larger than its buffer keeps offset 0, to be refused.
inline uint64_t offset_at_end(const px_tensor_desc& d, uint64_t buffer_bytes) {
    const uint64_t bytes = operand_bytes(d);
    return bytes <= buffer_bytes ? buffer_bytes - bytes : 0;
}

inline px_tensor_desc decode_operand(const OpCallSession& s, const uint8_t* b) {
    px_tensor_desc d{};
    d.struct_size = sizeof d;
    d.dtype = kDtypes[b[0] % 5];
    d.buffer = s.buffers[b[1] & 3];
    d.offset = uint64_t(b[1] >> 2) * 4;
    d.ndim = (b[2] & 0x7f) % 5;
    const bool explicit_strides = (b[2] & 0x80) != 0;
    int64_t stride = 1;
    for (int k = d.ndim - 1; k >= 0; --k) {
        d.shape[k] = b[3 + k] & 7;
        d.strides[k] = explicit_strides ? (b[7] >> (2 * k)) & 3 : stride;
        stride *= d.shape[k];
    }
    if (b[3] & 0x40) d.offset = offset_at_end(d, kBufferBytes[b[1] & 3]);
    return d;
}

// One input decoded for a session: the call points into this struct, so it
// is valid while the struct lives (and is not copied).
struct DecodedCall {
    int32_t op = 0, num_inputs = 0, num_outputs = 0;
    px_tensor_desc operands[5] = {};
    alignas(8) unsigned char attrs[kAttrsBytes] = {};
    bool has_attrs = false;

    px_op_call call() const {
        return px_op_call{sizeof(px_op_call), op, 0, num_inputs, operands, num_outputs, operands + num_inputs,
                          has_attrs ? attrs : nullptr};
    }
};

// Decodes `data` over the buffers of `s`; false for an input too short.
inline bool decode_call(const OpCallSession& s, const uint8_t* data, size_t size, DecodedCall& c) {
    if (size < 2) return false;
    c.op = kOps[data[0] % (sizeof kOps / sizeof kOps[0])];
    c.num_inputs = data[1] & 3;
    c.num_outputs = 1 + ((data[1] >> 2) & 1);
    const bool no_attrs = (data[1] >> 3) & 1;
    size_t at = 2;
    for (int32_t i = 0; i < c.num_inputs + c.num_outputs; ++i, at += kOperandBytes) {
        if (at + kOperandBytes > size) return false;
        c.operands[i] = decode_operand(s, data + at);
    }
    std::memcpy(c.attrs, data + at, size - at < kAttrsBytes ? size - at : kAttrsBytes);
    const uint32_t attrs_size = op_attrs_struct_size(c.op);
    std::memcpy(c.attrs, &attrs_size, sizeof attrs_size);
    c.has_attrs = !no_attrs && attrs_size != 0;
    return true;
}

// What became of a call: execute's status, then (when it was queued) the
// wait's: an op can fail while running (a label outside its classes, an
// integer division by zero).
struct CallOutcome {
    px_status executed = PX_ERROR_INVALID_ARGUMENT;
    px_status finished = PX_ERROR_INVALID_ARGUMENT;
    std::string message;  // the plugin's, where it refused or failed
};

// Executes the call and waits; aborts when a refusal or failure leaves no
// message. Out-of-bounds accesses are ASan's to report.
inline CallOutcome run_call(OpCallSession& s, const DecodedCall& c) {
    CallOutcome outcome;
    const px_op_call call = c.call();
    px_plugin_error err{sizeof err, {0}};
    outcome.executed = s.api->execute(s.ctx, &call, &err);
    if (outcome.executed != PX_OK) {
        if (!err.message[0]) op_call_invariant_broken("a refused call left no message", px_op_name(c.op));
        outcome.message = err.message;
        return outcome;
    }
    outcome.finished = s.api->synchronize(s.ctx, 0, &err);
    if (outcome.finished != PX_OK && !err.message[0])
        op_call_invariant_broken("a failed op left no message", px_op_name(c.op));
    if (outcome.finished != PX_OK) outcome.message = err.message;
    return outcome;
}

// Runs one input from the starting pattern (so that it does the same
// whatever ran before) and returns what execute said
// (PX_ERROR_INVALID_ARGUMENT for an input too short to decode), else what
// the wait said, or aborts on a broken invariant.
inline px_status op_call_status(OpCallSession& s, const uint8_t* data, size_t size) {
    DecodedCall c;
    if (!decode_call(s, data, size, c)) return PX_ERROR_INVALID_ARGUMENT;
    s.refill();
    const CallOutcome outcome = run_call(s, c);
    return outcome.executed != PX_OK ? outcome.executed : outcome.finished;
}

// libFuzzer's convention: 0 for every input that did not abort.
inline int op_call_input(OpCallSession& s, const uint8_t* data, size_t size) {
    op_call_status(s, data, size);
    return 0;
}

}  // namespace plexus::fuzz
