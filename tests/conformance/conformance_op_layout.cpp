// Conformance at the plugin boundary: op calls whose operands are each sound
// (inside their buffers, of known dtypes) but do not fit together, or whose
// attrs hold values no op can take, as another host than Plexus's might send
// them. Each is refused with its status and reason (px_op_layout_check) and
// runs nothing; the same calls made whole are accepted.
#include <catch2/catch.hpp>

#include <initializer_list>
#include <string>
#include <vector>

#include "conformance.hpp"
#include "opened_plugin.hpp"
#include "plexus/op_check.h"

namespace {

// A call over `in` and `out`, which must outlive it.
px_op_call call_of(int32_t op, int32_t device, const std::vector<px_tensor_desc>& in,
                   const std::vector<px_tensor_desc>& out, const void* attrs) {
    return px_op_call{sizeof(px_op_call), op,       device, static_cast<int32_t>(in.size()), in.data(),
                      static_cast<int32_t>(out.size()), out.data(), attrs};
}

}  // namespace

TEST_CASE("execute refuses operands that do not fit together and attrs values no op takes",
          "[conformance][abi][R2]") {
    pxconf::Opened p;
    constexpr uint64_t bytes = 4096;
    px_plugin_buffer *src = nullptr, *dst = nullptr, *scratch = nullptr;
    REQUIRE(p.api->buffer_alloc(p.ctx, p.device, bytes, &src, &p.err) == PX_OK);
    REQUIRE(p.api->buffer_alloc(p.ctx, p.device, bytes, &dst, &p.err) == PX_OK);
    REQUIRE(p.api->buffer_alloc(p.ctx, p.device, bytes, &scratch, &p.err) == PX_OK);
    const std::vector<unsigned char> zeros(bytes, 0), marks(bytes, 0x5a);
    REQUIRE(p.api->copy_from_host(p.ctx, src, 0, zeros.data(), bytes, &p.err) == PX_OK);
    REQUIRE(p.api->copy_from_host(p.ctx, dst, 0, marks.data(), bytes, &p.err) == PX_OK);
    REQUIRE(p.api->copy_from_host(p.ctx, scratch, 0, zeros.data(), bytes, &p.err) == PX_OK);
    const int32_t dev = p.device;
    auto in = [&](int32_t dtype, std::initializer_list<int64_t> dims) { return pxconf::contiguous_desc(src, dtype, dims); };
    auto out = [&](int32_t dtype, std::initializer_list<int64_t> dims) { return pxconf::contiguous_desc(dst, dtype, dims); };

    // Refused, with this status and a message. `why` is the reason, as
    // px_op_call_check words it, shown when the check fails; a plugin's
    // own wording is its own (R2 requires a message, not these words).
    auto refused = [&](const px_op_call& call, px_status status, const std::string& why) {
        INFO(px_op_name(call.op) << " should be refused (" << why << ")");
        const px_status got = p.api->execute(p.ctx, &call, &p.err);
        INFO("the plugin said " << got << ": " << p.said());
        // A plugin that lacks the op may refuse it as unsupported first (R5).
        const int32_t dtype = call.num_inputs ? call.inputs[0].dtype : call.outputs[0].dtype;
        const bool offered = p.api->supports(p.ctx, dev, call.op, dtype) != 0;
        REQUIRE((got == status || (!offered && got == PX_ERROR_UNSUPPORTED)));
        p.require_message();
    };
    // The call made whole runs (on the scratch buffer), or is refused only as
    // unsupported where the plugin lacks the op.
    auto accepted = [&](px_op_call call) {
        std::vector<px_tensor_desc> outs(call.outputs, call.outputs + call.num_outputs);
        for (px_tensor_desc& o : outs) o.buffer = scratch;
        call.outputs = outs.data();
        const int32_t dtype = call.num_inputs ? call.inputs[0].dtype : call.outputs[0].dtype;
        const bool offered = p.api->supports(p.ctx, dev, call.op, dtype) != 0;
        const px_status got = p.api->execute(p.ctx, &call, &p.err);
        INFO(px_op_name(call.op) << " made whole; the plugin said " << got << ": " << p.said());
        p.require_not_refused_as_offered(got, call.op, dtype);
        REQUIRE(got == (offered ? PX_OK : PX_ERROR_UNSUPPORTED));
        p.err.message[0] = 0;
    };

    SECTION("elementwise ops: shapes, dtypes, the scalar form, contiguous reads") {
        const px_tensor_desc a = in(PX_FLOAT32, {2, 3}), y = out(PX_FLOAT32, {2, 3});
        accepted(call_of(PX_OP_ADD, dev, {a, a}, {y}, nullptr));
        refused(call_of(PX_OP_ADD, dev, {a, a}, {out(PX_FLOAT32, {2, 4})}, nullptr), PX_ERROR_SHAPE,
                "add: input 0 has shape (2, 3); the call needs (2, 4)");
        refused(call_of(PX_OP_ADD, dev, {a, in(PX_FLOAT32, {3})}, {y}, nullptr), PX_ERROR_SHAPE,
                "input 1 has shape (3,); the call needs (2, 3)");
        refused(call_of(PX_OP_ADD, dev, {a, in(PX_FLOAT64, {2, 3})}, {y}, nullptr), PX_ERROR_DTYPE,
                "input 1 is float64; the call needs float32");
        refused(call_of(PX_OP_LT, dev, {a, a}, {y}, nullptr), PX_ERROR_DTYPE, "output 0 is float32; the call needs uint8");
        refused(call_of(PX_OP_ADD, dev, {a}, {out(PX_INT64, {2, 3})}, nullptr), PX_ERROR_INVALID_ARGUMENT,
                "needs an attrs struct");
        const px_binary_attrs none{sizeof(px_binary_attrs), 0, 2.0}, left{sizeof(px_binary_attrs), 1, 2.0},
            bad{sizeof(px_binary_attrs), 3, 2.0};
        accepted(call_of(PX_OP_SUB, dev, {a}, {y}, &left));
        refused(call_of(PX_OP_SUB, dev, {a}, {y}, &none), PX_ERROR_INVALID_ARGUMENT,
                "1 inputs disagree with scalar_operand 0");
        refused(call_of(PX_OP_SUB, dev, {a, a}, {y}, &left), PX_ERROR_INVALID_ARGUMENT,
                "2 inputs disagree with scalar_operand 1");
        refused(call_of(PX_OP_SUB, dev, {a}, {y}, &bad), PX_ERROR_INVALID_ARGUMENT, "scalar_operand 3 is not 0, 1 or 2");
        // A broadcast view (stride 0) is read flat by unary ops, casts and the scalar form: refused.
        px_tensor_desc repeated = a;
        repeated.strides[0] = 0;
        accepted(call_of(PX_OP_ADD, dev, {repeated, a}, {y}, nullptr));  // two-input ops walk strides
        refused(call_of(PX_OP_EXP, dev, {repeated}, {y}, nullptr), PX_ERROR_INVALID_ARGUMENT,
                "exp: input 0 is not contiguous");
        refused(call_of(PX_OP_MUL, dev, {repeated}, {y}, &left), PX_ERROR_INVALID_ARGUMENT, "input 0 is not contiguous");
        refused(call_of(PX_OP_CAST, dev, {repeated}, {out(PX_FLOAT64, {2, 3})}, nullptr), PX_ERROR_INVALID_ARGUMENT,
                "cast: input 0 is not contiguous");
        refused(call_of(PX_OP_NEG, dev, {a}, {out(PX_FLOAT64, {2, 3})}, nullptr), PX_ERROR_DTYPE,
                "output 0 is float64; the call needs float32");
        // Outputs are contiguous, but for COPY's.
        px_tensor_desc gappy = out(PX_FLOAT32, {2, 3});
        gappy.strides[0] = 4;
        refused(call_of(PX_OP_ADD, dev, {a, a}, {gappy}, nullptr), PX_ERROR_INVALID_ARGUMENT,
                "output 0 is not contiguous");
        accepted(call_of(PX_OP_COPY, dev, {a}, {gappy}, nullptr));
        refused(call_of(PX_OP_COPY, dev, {a}, {out(PX_INT32, {2, 3})}, nullptr), PX_ERROR_DTYPE,
                "copy: output 0 is int32; the call needs float32");
        refused(call_of(PX_OP_COPY, dev, {a}, {out(PX_FLOAT32, {3, 2})}, nullptr), PX_ERROR_SHAPE,
                "input 0 has shape (2, 3); the call needs (3, 2)");
        const px_tensor_desc cond = in(PX_UINT8, {2, 3});
        accepted(call_of(PX_OP_WHERE, dev, {cond, a, a}, {y}, nullptr));
        refused(call_of(PX_OP_WHERE, dev, {a, a, a}, {y}, nullptr), PX_ERROR_DTYPE,
                "where: input 0 is float32; the call needs uint8");
    }
    SECTION("reductions: the axis, the output's shape and dtype, an empty maximum") {
        const px_tensor_desc a = in(PX_FLOAT32, {2, 3});
        const px_reduce_attrs rows{sizeof(px_reduce_attrs), 1, 0}, kept{sizeof(px_reduce_attrs), 1, 1},
            beyond{sizeof(px_reduce_attrs), 2, 0}, below{sizeof(px_reduce_attrs), -2, 0};
        accepted(call_of(PX_OP_SUM, dev, {a}, {out(PX_FLOAT32, {2})}, &rows));
        accepted(call_of(PX_OP_SUM, dev, {a}, {out(PX_FLOAT32, {2, 1})}, &kept));
        refused(call_of(PX_OP_SUM, dev, {a}, {out(PX_FLOAT32, {3})}, &rows), PX_ERROR_SHAPE,
                "sum: output 0 has shape (3,); the call needs (2,)");
        refused(call_of(PX_OP_SUM, dev, {a}, {out(PX_FLOAT32, {2})}, &kept), PX_ERROR_SHAPE, "the call needs (2, 1)");
        refused(call_of(PX_OP_SUM, dev, {a}, {out(PX_FLOAT32, {2})}, &beyond), PX_ERROR_INVALID_ARGUMENT,
                "axis 2 is out of range for rank 2");
        refused(call_of(PX_OP_SUM, dev, {a}, {out(PX_FLOAT32, {2})}, &below), PX_ERROR_INVALID_ARGUMENT,
                "axis -2 is out of range");
        refused(call_of(PX_OP_SUM, dev, {in(PX_INT32, {2, 3})}, {out(PX_INT32, {2})}, &rows), PX_ERROR_DTYPE,
                "output 0 is int32; the call needs int64");
        refused(call_of(PX_OP_ARGMAX, dev, {a}, {out(PX_FLOAT32, {2})}, &rows), PX_ERROR_DTYPE, "the call needs int64");
        refused(call_of(PX_OP_MAX, dev, {in(PX_FLOAT32, {2, 0})}, {out(PX_FLOAT32, {2})}, &rows), PX_ERROR_SHAPE,
                "an empty set has no max");
        px_tensor_desc transposed = in(PX_FLOAT32, {3, 2});
        transposed.strides[0] = 1, transposed.strides[1] = 3;
        refused(call_of(PX_OP_SUM, dev, {transposed}, {out(PX_FLOAT32, {3})}, &rows), PX_ERROR_INVALID_ARGUMENT,
                "input 0 is not contiguous");
    }
    SECTION("matrix products: inner and outer dimensions, ranks, rows BLAS can read") {
        const px_matmul_attrs m{sizeof(px_matmul_attrs), 0};
        const px_tensor_desc a = in(PX_FLOAT32, {1, 2, 3}), b = in(PX_FLOAT32, {1, 3, 4}), y = out(PX_FLOAT32, {1, 2, 4});
        accepted(call_of(PX_OP_MATMUL, dev, {a, b}, {y}, &m));
        refused(call_of(PX_OP_MATMUL, dev, {a, in(PX_FLOAT32, {1, 4, 4})}, {y}, &m), PX_ERROR_SHAPE,
                "matmul: input 1 has shape (1, 4, 4); the call needs (1, 3, 4)");
        refused(call_of(PX_OP_MATMUL, dev, {a, b}, {out(PX_FLOAT32, {1, 3, 4})}, &m), PX_ERROR_SHAPE,
                "input 0 has shape (1, 2, 3); the call needs (1, 3, 3)");
        refused(call_of(PX_OP_MATMUL, dev, {in(PX_FLOAT32, {2, 3}), in(PX_FLOAT32, {3, 4})}, {out(PX_FLOAT32, {2, 4})}, &m),
                PX_ERROR_SHAPE, "input 0 must be 3-D, got shape (2, 3)");
        px_tensor_desc squeezed = a;  // rows 1 element apart: they overlap
        squeezed.strides[1] = 1;
        refused(call_of(PX_OP_MATMUL, dev, {squeezed, b}, {y}, &m), PX_ERROR_INVALID_ARGUMENT,
                "input 0's rows are not stored with unit stride at least a row (3) apart");
        const px_gemm_attrs plain{sizeof(px_gemm_attrs), 0, 0, 0}, ta{sizeof(px_gemm_attrs), 1, 0, 0};
        accepted(call_of(PX_OP_GEMM, dev, {in(PX_FLOAT32, {2, 3}), in(PX_FLOAT32, {3, 4})}, {out(PX_FLOAT32, {2, 4})}, &plain));
        accepted(call_of(PX_OP_GEMM, dev, {in(PX_FLOAT32, {3, 2}), in(PX_FLOAT32, {3, 4})}, {out(PX_FLOAT32, {2, 4})}, &ta));
        refused(call_of(PX_OP_GEMM, dev, {in(PX_FLOAT32, {2, 3}), in(PX_FLOAT32, {3, 4})}, {out(PX_FLOAT32, {2, 4})}, &ta),
                PX_ERROR_SHAPE, "gemm: input 0 has shape (2, 3); the call needs (3, 2)");
        refused(call_of(PX_OP_GEMM, dev, {in(PX_FLOAT32, {2, 3}), in(PX_FLOAT32, {3, 5})}, {out(PX_FLOAT32, {2, 4})}, &plain),
                PX_ERROR_SHAPE, "input 1 has shape (3, 5); the call needs (3, 4)");
        refused(call_of(PX_OP_GEMM, dev, {in(PX_INT32, {2, 3}), in(PX_INT32, {3, 4})}, {out(PX_INT32, {2, 4})}, &plain),
                PX_ERROR_DTYPE, "input 0 is int32; the op takes float32, float64, float16, bfloat16");
    }
    SECTION("convolutions: channels, windows, strides and padding") {
        const px_conv2d_attrs one{sizeof(px_conv2d_attrs), 1, 1, 0, 0}, still{sizeof(px_conv2d_attrs), 0, 1, 0, 0};
        const px_tensor_desc x = in(PX_FLOAT32, {1, 2, 5, 5}), w = in(PX_FLOAT32, {3, 2, 3, 3});
        const px_tensor_desc y = out(PX_FLOAT32, {1, 3, 3, 3});
        accepted(call_of(PX_OP_CONV2D, dev, {x, w}, {y}, &one));
        refused(call_of(PX_OP_CONV2D, dev, {x, in(PX_FLOAT32, {3, 4, 3, 3})}, {y}, &one), PX_ERROR_SHAPE,
                "conv2d: input 1 has shape (3, 4, 3, 3); the call needs (3, 2, 3, 3)");
        refused(call_of(PX_OP_CONV2D, dev, {x, w}, {out(PX_FLOAT32, {1, 3, 4, 4})}, &one), PX_ERROR_SHAPE,
                "output 0 has shape (1, 3, 4, 4); the call needs (1, 3, 3, 3)");
        refused(call_of(PX_OP_CONV2D, dev, {x, w}, {y}, &still), PX_ERROR_INVALID_ARGUMENT, "strides 0x1 must be >= 1");
        refused(call_of(PX_OP_CONV2D, dev, {in(PX_FLOAT32, {1, 2, 2, 2}), w}, {y}, &one), PX_ERROR_SHAPE,
                "a 3-cell window with padding 0 does not fit the height of 2 cells");
        refused(call_of(PX_OP_CONV2D, dev, {in(PX_FLOAT32, {1, 0, 5, 5}), in(PX_FLOAT32, {3, 0, 3, 3})}, {y}, &one),
                PX_ERROR_SHAPE, "the weight has no channels");
        refused(call_of(PX_OP_CONV2D, dev, {x, w}, {out(PX_FLOAT64, {1, 3, 3, 3})}, &one), PX_ERROR_DTYPE,
                "output 0 is float64; the call needs float32");
        const px_tensor_desc dy = in(PX_FLOAT32, {1, 3, 3, 3});
        accepted(call_of(PX_OP_CONV2D_BACKWARD_INPUT, dev, {dy, w}, {out(PX_FLOAT32, {1, 2, 5, 5})}, &one));
        refused(call_of(PX_OP_CONV2D_BACKWARD_INPUT, dev, {dy, w}, {out(PX_FLOAT32, {1, 2, 6, 6})}, &one), PX_ERROR_SHAPE,
                "conv2d_backward_input: input 0 has shape (1, 3, 3, 3); the call needs (1, 3, 4, 4)");
        accepted(call_of(PX_OP_CONV2D_BACKWARD_WEIGHT, dev, {dy, x}, {out(PX_FLOAT32, {3, 2, 3, 3})}, &one));
        refused(call_of(PX_OP_CONV2D_BACKWARD_WEIGHT, dev, {dy, x}, {out(PX_FLOAT32, {3, 1, 3, 3})}, &one),
                PX_ERROR_SHAPE, "output 0 has shape (3, 1, 3, 3); the call needs (3, 2, 3, 3)");
    }
    SECTION("pooling: windows that hold a cell, gradients of the pooled shape, the fused ops' bias") {
        const px_pool2d_attrs two{sizeof(px_pool2d_attrs), 2, 2, 2, 2, 0, 0}, wide{sizeof(px_pool2d_attrs), 2, 2, 2, 2, 2, 0};
        const px_tensor_desc x = in(PX_FLOAT32, {1, 2, 4, 4}), pooled = out(PX_FLOAT32, {1, 2, 2, 2});
        accepted(call_of(PX_OP_MAX_POOL2D, dev, {x}, {pooled}, &two));
        refused(call_of(PX_OP_MAX_POOL2D, dev, {x}, {pooled}, &wide), PX_ERROR_INVALID_ARGUMENT,
                "padding in 0..half the window");
        refused(call_of(PX_OP_AVG_POOL2D, dev, {x}, {out(PX_FLOAT32, {1, 2, 3, 3})}, &two), PX_ERROR_SHAPE,
                "avg_pool2d: output 0 has shape (1, 2, 3, 3); the call needs (1, 2, 2, 2)");
        refused(call_of(PX_OP_MAX_POOL2D, dev, {in(PX_FLOAT32, {1, 2, 0, 4})}, {out(PX_FLOAT32, {1, 2, 0, 2})}, &two),
                PX_ERROR_SHAPE, "the input's planes are empty");
        const px_tensor_desc dy = in(PX_FLOAT32, {1, 2, 2, 2});
        accepted(call_of(PX_OP_MAX_POOL2D_BACKWARD, dev, {x, dy}, {out(PX_FLOAT32, {1, 2, 4, 4})}, &two));
        refused(call_of(PX_OP_MAX_POOL2D_BACKWARD, dev, {x, dy}, {out(PX_FLOAT32, {1, 2, 4, 5})}, &two), PX_ERROR_SHAPE,
                "output 0 has shape (1, 2, 4, 5); the call needs (1, 2, 4, 4)");
        refused(call_of(PX_OP_AVG_POOL2D_BACKWARD, dev, {dy}, {out(PX_FLOAT32, {1, 2, 6, 6})}, &two), PX_ERROR_SHAPE,
                "input 0 has shape (1, 2, 2, 2); the call needs (1, 2, 3, 3)");
        const px_tensor_desc b = in(PX_FLOAT32, {2});
        accepted(call_of(PX_OP_BIAS_RELU_MAX_POOL2D, dev, {x, b}, {pooled}, &two));
        refused(call_of(PX_OP_BIAS_RELU_MAX_POOL2D, dev, {x, in(PX_FLOAT32, {3})}, {pooled}, &two), PX_ERROR_SHAPE,
                "input 1 has shape (3,); the call needs (2,)");
        const px_tensor_desc dx = out(PX_FLOAT32, {1, 2, 4, 4});
        px_tensor_desc db = out(PX_FLOAT32, {2}), db4 = out(PX_FLOAT32, {4});
        db.offset = db4.offset = 1024;  // after dx
        accepted(call_of(PX_OP_BIAS_RELU_MAX_POOL2D_BACKWARD, dev, {x, b, dy}, {dx, db}, &two));
        refused(call_of(PX_OP_BIAS_RELU_MAX_POOL2D_BACKWARD, dev, {x, b, dy}, {dx, db4}, &two),
                PX_ERROR_SHAPE, "output 1 has shape (4,); the call needs (2,)");
    }
    SECTION("the other nn ops: bias, softmax and its labels, dropout, activation gradients") {
        const px_tensor_desc x = in(PX_FLOAT32, {4, 3}), y = out(PX_FLOAT32, {4, 3});
        accepted(call_of(PX_OP_BIAS_ADD, dev, {x, in(PX_FLOAT32, {3})}, {y}, nullptr));
        refused(call_of(PX_OP_BIAS_ADD, dev, {x, in(PX_FLOAT32, {4})}, {y}, nullptr), PX_ERROR_SHAPE,
                "bias_add: input 1 has shape (4,); the call needs (3,)");
        refused(call_of(PX_OP_BIAS_GRAD, dev, {in(PX_FLOAT32, {4})}, {out(PX_FLOAT32, {1})}, nullptr), PX_ERROR_SHAPE,
                "input 0 must be 2-D or more, got shape (4,)");
        refused(call_of(PX_OP_LOG_SOFTMAX, dev, {in(PX_FLOAT32, {4, 3, 1})}, {out(PX_FLOAT32, {4, 3, 1})}, nullptr),
                PX_ERROR_SHAPE, "input 0 must be 2-D, got shape (4, 3, 1)");
        const px_tensor_desc labels = in(PX_INT64, {4}), loss = out(PX_FLOAT32, {4});
        accepted(call_of(PX_OP_SOFTMAX_CROSS_ENTROPY, dev, {x, labels}, {loss}, nullptr));
        refused(call_of(PX_OP_SOFTMAX_CROSS_ENTROPY, dev, {x, in(PX_FLOAT32, {4})}, {loss}, nullptr), PX_ERROR_DTYPE,
                "input 1 is float32; labels are int32 or int64");
        refused(call_of(PX_OP_SOFTMAX_CROSS_ENTROPY, dev, {x, in(PX_INT64, {5})}, {loss}, nullptr), PX_ERROR_SHAPE,
                "input 1 has shape (5,); the call needs (4,)");
        refused(call_of(PX_OP_SOFTMAX_CROSS_ENTROPY, dev, {in(PX_FLOAT32, {4, 0}), labels}, {loss}, nullptr),
                PX_ERROR_SHAPE, "softmax_cross_entropy: the logits have no classes");
        refused(call_of(PX_OP_SOFTMAX_CROSS_ENTROPY_BACKWARD, dev, {x, labels, in(PX_FLOAT32, {4})}, {out(PX_FLOAT32, {4})},
                        nullptr),
                PX_ERROR_SHAPE, "output 0 has shape (4,); the call needs (4, 3)");
        const px_dropout_attrs half{sizeof(px_dropout_attrs), 1, 0, 0.5}, all{sizeof(px_dropout_attrs), 1, 0, 1.0};
        accepted(call_of(PX_OP_DROPOUT, dev, {x}, {y}, &half));
        refused(call_of(PX_OP_DROPOUT, dev, {x}, {y}, &all), PX_ERROR_INVALID_ARGUMENT,
                "the drop probability 1 is not in [0, 1)");
        accepted(call_of(PX_OP_RELU_BACKWARD, dev, {x, x}, {y}, nullptr));
        refused(call_of(PX_OP_RELU_BACKWARD, dev, {x, in(PX_FLOAT64, {4, 3})}, {y}, nullptr), PX_ERROR_DTYPE,
                "input 1 is float64; the call needs float32");
        refused(call_of(PX_OP_TANH_BACKWARD, dev, {x, in(PX_FLOAT32, {3, 4})}, {y}, nullptr), PX_ERROR_SHAPE,
                "input 1 has shape (3, 4); the call needs (4, 3)");
        px_tensor_desc transposed = in(PX_FLOAT32, {4, 3});
        transposed.strides[0] = 1, transposed.strides[1] = 4;
        refused(call_of(PX_OP_SIGMOID_BACKWARD, dev, {transposed, x}, {y}, nullptr), PX_ERROR_INVALID_ARGUMENT,
                "input 0 is not contiguous");
    }
    SECTION("a call with nothing to write is accepted and reads nothing") {
        // Empty operands at their buffers' very end, one broadcast: a kernel that
        // read "the first element" would read past the buffer.
        px_tensor_desc a = in(PX_FLOAT64, {0, 3}), b = a, y = out(PX_FLOAT64, {0, 3});
        a.offset = b.offset = y.offset = bytes;
        b.strides[0] = b.strides[1] = 0;
        const std::vector<px_tensor_desc> inputs{a, b}, outputs{y};
        const px_op_call add = call_of(PX_OP_ADD, dev, inputs, outputs, nullptr);
        const bool offered = p.api->supports(p.ctx, dev, PX_OP_ADD, PX_FLOAT64) != 0;
        const px_status got = p.api->execute(p.ctx, &add, &p.err);
        INFO("the plugin said: " << p.said());
        p.require_not_refused_as_offered(got, PX_OP_ADD, PX_FLOAT64);
        REQUIRE(got == (offered ? PX_OK : PX_ERROR_UNSUPPORTED));
        p.err.message[0] = 0;
        REQUIRE(p.api->synchronize(p.ctx, dev, &p.err) == PX_OK);
    }
    SECTION("sgd_update works in place on operands of one shape") {
        const px_sgd_attrs sgd{sizeof(px_sgd_attrs), 0.1, 0.9, 0, 1};
        const px_tensor_desc param = pxconf::contiguous_desc(scratch, PX_FLOAT32, {6}), grad = in(PX_FLOAT32, {6});
        px_tensor_desc momentum = param;
        momentum.offset = 64;
        const std::vector<px_tensor_desc> inputs{param, grad, momentum}, outputs{param, momentum};
        const px_op_call whole = call_of(PX_OP_SGD_UPDATE, dev, inputs, outputs, &sgd);
        REQUIRE(p.api->execute(p.ctx, &whole, &p.err) ==
                (p.api->supports(p.ctx, dev, PX_OP_SGD_UPDATE, PX_FLOAT32) ? PX_OK : PX_ERROR_UNSUPPORTED));
        p.err.message[0] = 0;
        refused(call_of(PX_OP_SGD_UPDATE, dev, {param, grad, momentum}, {momentum, param}, &sgd),
                PX_ERROR_INVALID_ARGUMENT, "sgd_update: output 0 is not input 0 (the update is in place)");
        refused(call_of(PX_OP_SGD_UPDATE, dev, {param, in(PX_FLOAT32, {5})}, {param}, &sgd), PX_ERROR_SHAPE,
                "input 1 has shape (5,); the call needs (6,)");
    }
    // Nothing refused ran: the refused calls' outputs keep their marks.
    REQUIRE(p.api->synchronize(p.ctx, dev, &p.err) == PX_OK);
    std::vector<unsigned char> got(bytes);
    REQUIRE(p.api->copy_to_host(p.ctx, dst, 0, got.data(), bytes, &p.err) == PX_OK);
    REQUIRE(got == marks);
    for (px_plugin_buffer* b : {src, dst, scratch}) REQUIRE(p.api->buffer_free(p.ctx, b, &p.err) == PX_OK);
}
