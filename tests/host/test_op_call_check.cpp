// The ABI's own checks of an op call (api/plexus/plugin.h), against
// hand-computed extents and the exact reasons, without a plugin: the
// conformance suite then checks that every plugin applies them.
#include <catch2/catch.hpp>

#include <cstdint>
#include <set>
#include <string>

#include "plexus/op_check.h"
#include "plexus/plugin.h"
#include "plexus/plugin_kit.hpp"

struct px_plugin_buffer {
    int32_t device;
    uint64_t bytes;
};

namespace {

void facts(const px_plugin_buffer* b, int32_t* device, uint64_t* bytes) {
    *device = b->device;
    *bytes = b->bytes;
}

px_tensor_desc desc(px_plugin_buffer* b, int32_t dtype, std::initializer_list<int64_t> shape,
                    std::initializer_list<int64_t> strides, uint64_t offset = 0) {
    px_tensor_desc d{};
    d.struct_size = sizeof d;
    d.dtype = dtype;
    d.buffer = b;
    d.offset = offset;
    d.ndim = int32_t(shape.size());
    int k = 0;
    for (int64_t n : shape) d.shape[k++] = n;
    k = 0;
    for (int64_t s : strides) d.strides[k++] = s;
    return d;
}

// The end px_tensor_end gives, or -1 when it refuses the desc.
long double end_of(const px_tensor_desc& d) {
    uint64_t end = 12345;
    if (!px_tensor_end(&d, &end)) {
        REQUIRE(end == 12345);  // left alone
        return -1;
    }
    return static_cast<long double>(end);
}

}  // namespace

TEST_CASE("px_tensor_end: the byte past the last element, and every desc whose end cannot be formed",
          "[host][plugin-abi]") {
    px_plugin_buffer b{0, 0};
    // A scalar, a vector, a transposed 2x3 (strides 1, 2), a broadcast row.
    CHECK(end_of(desc(&b, PX_FLOAT64, {}, {}, 8)) == 16);
    CHECK(end_of(desc(&b, PX_FLOAT32, {5}, {1}, 4)) == 24);
    CHECK(end_of(desc(&b, PX_FLOAT32, {2, 3}, {1, 2})) == 24);  // last element at 1 + 2*2 = 5
    CHECK(end_of(desc(&b, PX_INT64, {4, 3}, {0, 1})) == 24);
    CHECK(end_of(desc(&b, PX_UINT8, {3}, {7}, 1)) == 16);       // bytes 1, 8, 15
    // No element: the offset, whatever the other axes say.
    CHECK(end_of(desc(&b, PX_FLOAT32, {0, INT64_MAX}, {INT64_MAX, INT64_MAX}, 40)) == 40);
    // Unknown dtype, negative dimension or stride.
    CHECK(end_of(desc(&b, 99, {2}, {1})) == -1);
    CHECK(end_of(desc(&b, PX_FLOAT32, {-1}, {1})) == -1);
    CHECK(end_of(desc(&b, PX_FLOAT32, {2}, {-1}, 64)) == -1);
    // The element span at the edge of 64 bits: 2 * INT64_MAX + 1 = UINT64_MAX
    // elements after the first fits as a count but not with the first added.
    CHECK(end_of(desc(&b, PX_UINT8, {3, 2}, {INT64_MAX, 1})) == -1);
    CHECK(end_of(desc(&b, PX_UINT8, {3}, {INT64_MAX})) == static_cast<long double>(UINT64_MAX));  // 2^64 - 2 + 1
    CHECK(end_of(desc(&b, PX_UINT8, {3}, {INT64_MAX}, 1)) == -1);
    CHECK(end_of(desc(&b, PX_FLOAT32, {3}, {INT64_MAX})) == -1);  // 4 bytes an element
    CHECK(end_of(desc(&b, PX_FLOAT32, {1}, {1}, UINT64_MAX - 4)) == static_cast<long double>(UINT64_MAX));
    CHECK(end_of(desc(&b, PX_FLOAT32, {1}, {1}, UINT64_MAX - 3)) == -1);
}

TEST_CASE("px_op_call_check: each refusal's status and reason, and a message only where the caller's struct holds one",
          "[host][plugin-abi]") {
    px_plugin_buffer mine{1, 16}, other{0, 64};
    const px_tensor_desc in = desc(&mine, PX_FLOAT32, {4}, {1}), out = in;
    px_plugin_error err{sizeof err, {0}};
    auto check = [&](px_op_call c) {
        err.message[0] = 0;
        const px_status s = px_op_call_check(&c, 2, facts, &err);
        return std::make_pair(s, std::string(err.message));
    };
    using Result = std::pair<px_status, std::string>;
    const px_op_call copy{sizeof(px_op_call), PX_OP_COPY, 1, 1, &in, 1, &out, nullptr};
    CHECK(check(copy) == Result{PX_OK, ""});
    CHECK(px_op_call_check(nullptr, 2, facts, &err) == PX_ERROR_INVALID_ARGUMENT);
    CHECK(std::string(err.message) == "call is NULL or too small");
    px_op_call c = copy;
    c.struct_size = 8;
    CHECK(check(c) == Result{PX_ERROR_INVALID_ARGUMENT, "call is NULL or too small"});
    c = copy, c.device = 2;
    CHECK(check(c) == Result{PX_ERROR_NO_DEVICE, "copy: no device 2 (the plugin has 2)"});
    c = copy, c.op = 7777;
    CHECK(check(c) == Result{PX_ERROR_UNSUPPORTED, "unknown op 7777"});
    c = copy, c.outputs = nullptr;
    CHECK(check(c) == Result{PX_ERROR_INVALID_ARGUMENT, "copy: bad operand counts"});
    c = copy, c.inputs = nullptr;
    CHECK(check(c) == Result{PX_ERROR_INVALID_ARGUMENT, "copy: bad operand counts"});

    const px_tensor_desc elsewhere = desc(&other, PX_FLOAT32, {4}, {1});
    c = copy, c.outputs = &elsewhere;
    CHECK(check(c) == Result{PX_ERROR_INVALID_ARGUMENT, "copy: output 0: its buffer belongs to another device"});
    c.outputs = &out;
    // Without facts the plugin vouches for its buffers itself.
    CHECK(px_op_call_check(&c, 2, nullptr, &err) == PX_OK);
    const px_tensor_desc too_long = desc(&mine, PX_FLOAT32, {5}, {1});
    c.inputs = &too_long;
    CHECK(check(c) == Result{PX_ERROR_INVALID_ARGUMENT, "copy: input 0: it reaches past the end of its buffer"});
    px_tensor_desc no_buffer = in;
    no_buffer.buffer = nullptr;
    c.inputs = &no_buffer;
    CHECK(check(c) == Result{PX_ERROR_INVALID_ARGUMENT, "copy: input 0: a tensor desc has no buffer"});

    // Attrs: the scalar form of a binary op needs px_binary_attrs; a struct
    // that says it is smaller is refused with both sizes.
    px_op_call add{sizeof(px_op_call), PX_OP_ADD, 1, 1, &in, 1, &out, nullptr};
    CHECK(check(add) == Result{PX_ERROR_INVALID_ARGUMENT, "add: needs an attrs struct of " +
                                                              std::to_string(sizeof(px_binary_attrs)) + " bytes, got none"});
    px_binary_attrs small{};
    small.struct_size = 4;
    add.attrs = &small;
    CHECK(check(add) == Result{PX_ERROR_INVALID_ARGUMENT, "add: needs an attrs struct of " +
                                                              std::to_string(sizeof(px_binary_attrs)) + " bytes, got 4 bytes"});

    // An error struct too old for a message is left alone; a NULL one is no crash.
    px_plugin_error tiny{sizeof(uint32_t), {0}};
    tiny.message[0] = 'Z';
    c = copy, c.device = -3;
    CHECK(px_op_call_check(&c, 2, facts, &tiny) == PX_ERROR_NO_DEVICE);
    CHECK(tiny.message[0] == 'Z');
    CHECK(px_op_call_check(&c, 2, facts, nullptr) == PX_ERROR_NO_DEVICE);
}

TEST_CASE("px_op_input_counts: every op's inputs, the scalar binary form and SGD's momentum", "[host][plugin-abi]") {
    auto counts = [](int32_t op) {
        int32_t least = -1, most = -1;
        px_op_input_counts(op, &least, &most);
        return std::make_pair(least, most);
    };
    using Counts = std::pair<int32_t, int32_t>;
    CHECK(counts(PX_OP_ADD) == Counts{1, 2});
    CHECK(counts(PX_OP_GE) == Counts{1, 2});
    CHECK(counts(PX_OP_EXP) == Counts{1, 1});
    CHECK(counts(PX_OP_SUM) == Counts{1, 1});
    CHECK(counts(PX_OP_CAST) == Counts{1, 1});
    CHECK(counts(PX_OP_DROPOUT_BACKWARD) == Counts{1, 1});
    CHECK(counts(PX_OP_FILL) == Counts{0, 0});
    CHECK(counts(PX_OP_RANDOM_NORMAL) == Counts{0, 0});
    CHECK(counts(PX_OP_MATMUL) == Counts{2, 2});
    CHECK(counts(PX_OP_CONV2D_BACKWARD_WEIGHT) == Counts{2, 2});
    CHECK(counts(PX_OP_BIAS_RELU_MAX_POOL2D) == Counts{2, 2});
    CHECK(counts(PX_OP_WHERE) == Counts{3, 3});
    CHECK(counts(PX_OP_SOFTMAX_CROSS_ENTROPY_BACKWARD) == Counts{3, 3});
    CHECK(counts(PX_OP_BIAS_RELU_MAX_POOL2D_BACKWARD) == Counts{3, 3});
    CHECK(counts(PX_OP_SGD_UPDATE) == Counts{2, 3});
}

namespace {
int contiguous(const px_tensor_desc& d) { return px_tensor_contiguous(&d); }
}  // namespace

TEST_CASE("px_tensor_contiguous, px_window_out and px_op_result_dtype: hand-computed values", "[host][abi]") {
    px_plugin_buffer big{0, 1 << 20};
    // Row-major without gaps; an axis of length 1 may have any stride; an empty tensor is contiguous.
    CHECK(contiguous(desc(&big, PX_FLOAT32, {2, 3}, {3, 1})) == 1);
    CHECK(contiguous(desc(&big, PX_FLOAT32, {2, 1, 3}, {3, 99, 1})) == 1);
    CHECK(contiguous(desc(&big, PX_FLOAT32, {}, {})) == 1);
    CHECK(contiguous(desc(&big, PX_FLOAT32, {0, 5}, {7, 3})) == 1);
    CHECK(contiguous(desc(&big, PX_FLOAT32, {2, 3}, {1, 2})) == 0);  // transposed
    CHECK(contiguous(desc(&big, PX_FLOAT32, {2, 3}, {4, 1})) == 0);  // a gap after each row
    CHECK(contiguous(desc(&big, PX_FLOAT32, {2, 3}, {0, 1})) == 0);  // broadcast rows
    // (in + 2 pad - kernel) / stride + 1, or -1 when the window does not fit.
    CHECK(px_window_out(28, 5, 1, 2) == 28);
    CHECK(px_window_out(28, 2, 2, 0) == 14);
    CHECK(px_window_out(5, 3, 2, 0) == 2);
    CHECK(px_window_out(1, 3, 1, 1) == 1);  // one cell and its two pads
    CHECK(px_window_out(0, 3, 1, 1) == -1);  // two pads hold no 3-cell window
    CHECK(px_window_out(2, 3, 1, 0) == -1);
    CHECK(px_window_out(5, 0, 1, 0) == -1);
    CHECK(px_window_out(5, 3, 0, 0) == -1);
    CHECK(px_window_out(5, 3, 1, -1) == -1);
    CHECK(px_window_out(INT64_MAX - 1, 3, 1, 1) == -1);  // the padded span overflows
    // What each op writes.
    CHECK(px_op_result_dtype(PX_OP_LT, PX_FLOAT64) == PX_UINT8);
    CHECK(px_op_result_dtype(PX_OP_SUM, PX_INT32) == PX_INT64);
    CHECK(px_op_result_dtype(PX_OP_SUM, PX_FLOAT32) == PX_FLOAT32);
    CHECK(px_op_result_dtype(PX_OP_MEAN, PX_UINT8) == PX_FLOAT64);
    CHECK(px_op_result_dtype(PX_OP_ARGMAX, PX_FLOAT32) == PX_INT64);
    CHECK(px_op_result_dtype(PX_OP_ADD, PX_INT32) == PX_INT32);
}

TEST_CASE("px_op_layout_check names the operand and both shapes, and the first problem wins", "[host][abi]") {
    px_plugin_buffer buf{0, 1 << 20};
    char why[256] = "";
    const px_tensor_desc in[2] = {desc(&buf, PX_FLOAT32, {2, 3, 4, 5, 6, 7, 8, 9}, {0, 0, 0, 0, 0, 0, 0, 0}),
                                  desc(&buf, PX_FLOAT64, {1}, {1})};
    const px_tensor_desc out = desc(&buf, PX_FLOAT32, {2, 3, 4, 5, 6, 7, 8, 9}, {181440, 60480, 15120, 3024, 504, 72, 9, 1});
    px_op_call call{sizeof call, PX_OP_ADD, 0, 2, in, 1, &out, nullptr};
    // Input 1's shape is wrong and so is its dtype: the shape, found first, is reported.
    REQUIRE(px_op_layout_check(&call, why, sizeof why) == PX_ERROR_SHAPE);
    CHECK(std::string(why) == "input 1 has shape (1,); the call needs (2, 3, 4, 5, 6, 7, 8, 9)");
    // A message longer than its buffer is cut, and still ends.
    char small[16];
    REQUIRE(px_op_layout_check(&call, small, sizeof small) == PX_ERROR_SHAPE);
    CHECK(std::string(small) == "input 1 has sha");
    const px_tensor_desc scalar_in[2] = {in[0], desc(&buf, PX_FLOAT32, {}, {})};
    const px_tensor_desc scalar_out = desc(&buf, PX_FLOAT32, {}, {});
    call.inputs = scalar_in;
    call.outputs = &scalar_out;
    REQUIRE(px_op_layout_check(&call, why, sizeof why) == PX_ERROR_SHAPE);
    CHECK(std::string(why) == "input 0 has shape (2, 3, 4, 5, 6, 7, 8, 9); the call needs ()");
    call.inputs = scalar_in + 1;
    call.num_inputs = 1;
    const px_binary_attrs right{sizeof right, 2, 1.5};
    call.attrs = &right;
    REQUIRE(px_op_layout_check(&call, why, sizeof why) == PX_OK);
}

TEST_CASE("px_op_call_writes_nothing: every output empty, not just one", "[host][abi]") {
    px_plugin_buffer buf{0, 4096};
    const px_tensor_desc full = desc(&buf, PX_FLOAT32, {2, 3}, {3, 1}), empty = desc(&buf, PX_FLOAT32, {2, 0}, {0, 1});
    const px_tensor_desc scalar = desc(&buf, PX_FLOAT32, {}, {});
    px_tensor_desc outs[2] = {empty, empty};
    px_op_call call{sizeof call, PX_OP_BIAS_RELU_MAX_POOL2D_BACKWARD, 0, 1, &full, 2, outs, nullptr};
    CHECK(px_op_call_writes_nothing(&call) == 1);
    outs[1] = full;  // dx empty, db not: there is work
    CHECK(px_op_call_writes_nothing(&call) == 0);
    call.num_outputs = 1;
    CHECK(px_op_call_writes_nothing(&call) == 1);
    outs[0] = scalar;  // a 0-D tensor holds one element
    CHECK(px_op_call_writes_nothing(&call) == 0);
}

TEST_CASE("the op table: numbers and names unique, counts ordered, every family known, the dtypes as documented",
          "[host][plugin-abi]") {
    std::set<int32_t> numbers;
    std::set<std::string> names;
    int rows = 0;
#define PX_TEST_ROW_(op, number, name, family, in_least, in_most, out_least, out_most, attrs, dtypes, result, flags, \
                     minor)                                                                                        \
    CHECK(numbers.insert(number).second);                                                                          \
    CHECK(names.insert(#name).second);                                                                              \
    CHECK(op == number);                                                                                           \
    ++rows;
    PX_OP_TABLE(PX_TEST_ROW_)
#undef PX_TEST_ROW_
    CHECK(rows >= 68);  // ABI 1.8's at least; the build's ABI check holds the recorded list of every op
    for (int32_t op = -1; op <= PX_OP_NUMBER_LIMIT; ++op) {
        const px_op_row* row = px_op_row_of(op);
        INFO("op " << op);
        REQUIRE((row != nullptr) == (numbers.count(op) == 1));
        if (!row) continue;
        CHECK(op < PX_OP_NUMBER_LIMIT);
        CHECK(std::string(row->name) == px_op_name(op));
        CHECK(row->family >= PX_FAMILY_BINARY);
        CHECK(row->family <= PX_FAMILY_TAKE);
        CHECK((0 <= row->inputs_least && row->inputs_least <= row->inputs_most && row->inputs_most <= 7));
        CHECK(row->inputs_most <= plexus::kit::kMostOpInputs);
        CHECK((1 <= row->outputs_least && row->outputs_least <= row->outputs_most && row->outputs_most <= 2));
        CHECK(row->dtypes != 0);
        CHECK((row->dtypes & ~uint32_t(PX_ACCEPTS_ALL)) == 0);
        CHECK((row->abi_minor == 0 || row->abi_minor == 1 || row->abi_minor == 4 || row->abi_minor == 7 ||
               row->abi_minor == 8 || row->abi_minor == 9));
    }
    // What each op means something on, as op_table.h's rows and docs/semantics.md say.
    CHECK(px_op_accepts(PX_OP_ADD, PX_UINT8));
    CHECK_FALSE(px_op_accepts(PX_OP_NEG, PX_UINT8));
    CHECK(px_op_accepts(PX_OP_NEG, PX_INT64));
    CHECK_FALSE(px_op_accepts(PX_OP_EXP, PX_INT32));
    CHECK_FALSE(px_op_accepts(PX_OP_CONV2D, PX_INT32));
    CHECK(px_op_accepts(PX_OP_CONV2D, PX_FLOAT64));
    CHECK_FALSE(px_op_accepts(PX_OP_ADD, 0));
    CHECK(px_op_accepts(PX_OP_ADD, PX_FLOAT16));
    CHECK(px_op_accepts(PX_OP_CONV2D, PX_BFLOAT16));
    CHECK_FALSE(px_op_accepts(PX_OP_ADD, 8));  // no such dtype
    CHECK_FALSE(px_op_accepts(9999, PX_FLOAT32));
    char text[96];
    CHECK(std::string(px_op_accepted_dtypes(PX_OP_RELU, text, sizeof text)) ==
          "float32, float64, int32, int64, float16, bfloat16");
    CHECK(std::string(px_op_accepted_dtypes(PX_OP_WHERE, text, sizeof text)) ==
          "float32, float64, int32, int64, uint8, float16, bfloat16");
    CHECK(std::string(px_op_accepted_dtypes(PX_OP_SQRT, text, 12)) == "float32, fl");  // cut to the buffer
    CHECK(std::string(px_op_accepted_dtypes(-4, text, sizeof text)).empty());
    // Attrs: the binary family's only in the scalar form; matmul's are optional.
    CHECK(px_op_attrs_size(PX_OP_MUL, 2) == 0);
    CHECK(px_op_attrs_size(PX_OP_MUL, 1) == sizeof(px_binary_attrs));
    CHECK(px_op_attrs_size(PX_OP_MATMUL, 2) == 0);
    CHECK(px_op_attrs_size(PX_OP_CONV2D_BACKWARD_WEIGHT, 2) == sizeof(px_conv2d_attrs));
    CHECK(px_op_attrs_size(PX_OP_SGD_UPDATE, 3) == sizeof(px_sgd_attrs));
    CHECK(px_op_attrs_size(9999, 1) == 0);
    int32_t least = 0, most = 0;
    px_op_output_counts(PX_OP_BIAS_RELU_MAX_POOL2D_BACKWARD, &least, &most);
    CHECK((least == 2 && most == 2));
    px_op_output_counts(PX_OP_SGD_UPDATE, &least, &most);
    CHECK((least == 1 && most == 2));
}

TEST_CASE("px_op_layout_check called alone refuses a call without the attrs its rule reads", "[host][abi]") {
    px_plugin_buffer buf{0, 1 << 20};
    const px_tensor_desc x = desc(&buf, PX_FLOAT32, {1, 1, 4, 4}, {16, 16, 4, 1});
    const px_tensor_desc w = desc(&buf, PX_FLOAT32, {1, 1, 3, 3}, {9, 9, 3, 1});
    const px_tensor_desc y = desc(&buf, PX_FLOAT32, {1, 1, 2, 2}, {4, 4, 2, 1});
    const px_tensor_desc v = desc(&buf, PX_FLOAT32, {4}, {1});
    const px_tensor_desc scalar = desc(&buf, PX_FLOAT32, {}, {});
    const px_tensor_desc mat = desc(&buf, PX_FLOAT32, {2, 2}, {2, 1});
    const px_tensor_desc conv_in[2] = {x, w}, gemm_in[2] = {mat, mat};
    for (const px_op_call& c :
         {px_op_call{sizeof(px_op_call), PX_OP_SUM, 0, 1, &v, 1, &scalar, nullptr},
          px_op_call{sizeof(px_op_call), PX_OP_CONV2D, 0, 2, conv_in, 1, &y, nullptr},
          px_op_call{sizeof(px_op_call), PX_OP_MAX_POOL2D, 0, 1, &x, 1, &y, nullptr},
          px_op_call{sizeof(px_op_call), PX_OP_GEMM, 0, 2, gemm_in, 1, &mat, nullptr},
          px_op_call{sizeof(px_op_call), PX_OP_DROPOUT, 0, 1, &v, 1, &v, nullptr}}) {
        char why[256] = "";
        INFO(px_op_name(c.op));
        CHECK(px_op_layout_check(&c, why, sizeof why) == PX_ERROR_INVALID_ARGUMENT);
        CHECK(std::string(why) == "needs an attrs struct, got none");
    }
    const px_op_call unknown{sizeof unknown, 4242, 0, 1, &v, 1, &v, nullptr};
    char why[64] = "";
    CHECK(px_op_layout_check(&unknown, why, sizeof why) == PX_ERROR_UNSUPPORTED);
    CHECK(std::string(why) == "unknown op 4242");
}

TEST_CASE("the gradient table: each activation's backward row reads what px_op_backward says it does", "[host][abi]") {
    int rows = 0;
#define PX_TEST_GRADIENT_(forward, backward, from)                                                                  \
    {                                                                                                              \
        INFO(#forward);                                                                                            \
        const px_op_row* f = px_op_row_of(forward);                                                                \
        const px_op_row* b = px_op_row_of(backward);                                                               \
        REQUIRE((f && b));                                                                                         \
        CHECK((f->family == PX_FAMILY_UNARY || f->family == PX_FAMILY_UNARY_ALPHA));                               \
        CHECK(b->family == PX_FAMILY_POINTWISE_GRAD);                                                              \
        CHECK((b->inputs_least == 2 && b->inputs_most == 2));                                                      \
        CHECK(b->attrs_size == f->attrs_size); /* the forward op's settings, if any, again */                    \
        CHECK((b->dtypes & ~f->dtypes) == 0);                                                                      \
        CHECK((from == PX_GRAD_FROM_RESULT || from == PX_GRAD_FROM_INPUT));                                        \
        int32_t read = -1;                                                                                         \
        CHECK(px_op_backward(forward, &read) == backward);                                                         \
        CHECK(read == from);                                                                                       \
        CHECK(px_op_backward(forward, nullptr) == backward);                                                       \
        ++rows;                                                                                                    \
    }
    PX_GRADIENT_TABLE(PX_TEST_GRADIENT_)
#undef PX_TEST_GRADIENT_
    CHECK(rows >= 6);
    // Every gradient row is some activation's: one left out of the table would
    // have no autograd and its first operand misnamed by the layout rule.
    std::set<int32_t> listed;
#define PX_TEST_LISTED_(forward, backward, from) listed.insert(backward);
    PX_GRADIENT_TABLE(PX_TEST_LISTED_)
#undef PX_TEST_LISTED_
    for (int32_t op = 0; op < PX_OP_NUMBER_LIMIT; ++op) {
        const px_op_row* row = px_op_row_of(op);
        INFO("op " << op);
        if (row && row->family == PX_FAMILY_POINTWISE_GRAD) CHECK(listed.count(op) == 1);
    }
    int32_t read = -1;
    CHECK(px_op_backward(PX_OP_EXP, &read) == 0);  // its gradient is composed in the frontend
    CHECK(read == 0);
    CHECK(px_op_backward(PX_OP_RELU_BACKWARD, &read) == 0);
    CHECK(px_op_backward(9999, nullptr) == 0);
}

TEST_CASE("px_op_call_dtype: the dtype supports() is asked with, where's a and a creation op's output",
          "[host][plugin-abi]") {
    px_plugin_buffer buf{0, 64};
    const px_tensor_desc cond = desc(&buf, PX_UINT8, {2}, {1}), a = desc(&buf, PX_FLOAT32, {2}, {1}),
                         b = desc(&buf, PX_FLOAT32, {2}, {1}), i64 = desc(&buf, PX_INT64, {2}, {1});
    const px_tensor_desc where_in[3] = {cond, a, b};
    const px_op_call where{sizeof(px_op_call), PX_OP_WHERE, 0, 3, where_in, 1, &a, nullptr};
    CHECK(px_op_call_dtype(&where) == PX_FLOAT32);  // a plugin had been asked about uint8, the condition's
    const px_op_call fill{sizeof(px_op_call), PX_OP_FILL, 0, 0, nullptr, 1, &i64, nullptr};
    CHECK(px_op_call_dtype(&fill) == PX_INT64);
    const px_tensor_desc eq_in[2] = {i64, i64};
    const px_op_call eq{sizeof(px_op_call), PX_OP_EQ, 0, 2, eq_in, 1, &cond, nullptr};
    CHECK(px_op_call_dtype(&eq) == PX_INT64);  // the inputs', not the uint8 result's
}
