#!/usr/bin/env python3
"""Writes tests/fuzz/corpus/op-call/: one whole op call per file, in the input
layout op_call_target.hpp decodes, so the fuzzer starts from calls a plugin
runs and mutates them into ones it must refuse. The op and dtype tables are
read from op_call_target.hpp, so the two cannot drift apart. Run it again
after changing that layout."""
import pathlib
import re
import struct

HERE = pathlib.Path(__file__).resolve().parent
TARGET = (HERE / "op_call_target.hpp").read_text()
OPS = re.findall(r"PX_OP_\w+", TARGET[TARGET.index("kOps[] = {"):TARGET.index("};", TARGET.index("kOps[] = {"))])
DTYPES = re.findall(r"PX_\w+", TARGET[TARGET.index("kDtypes[5] = {"):TARGET.index("};", TARGET.index("kDtypes[5] = {"))])
F32, F64, I32, I64, U8 = (DTYPES.index(d) for d in ("PX_FLOAT32", "PX_FLOAT64", "PX_INT32", "PX_INT64", "PX_UINT8"))
OFFSET_LIMIT = 252  # (255 >> 2) * 4 bytes


def operand(dtype, buffer, offset, dims, strides=None):
    assert 0 <= buffer < 4 and offset % 4 == 0 and offset <= OFFSET_LIMIT and len(dims) <= 4
    assert all(0 <= d <= 7 for d in dims) and (strides is None or all(0 <= s <= 3 for s in strides))
    packed = sum(s << (2 * k) for k, s in enumerate(strides or []))
    flags = len(dims) | (0x80 if strides is not None else 0)
    return bytes([dtype, buffer | (offset // 4) << 2, flags] + list(dims) + [0] * (4 - len(dims)) + [packed])


def call(op, inputs, outputs, attrs=b"", no_attrs=False):
    assert len(inputs) <= 3 and len(outputs) in (1, 2)
    head = bytes([OPS.index(op), len(inputs) | (len(outputs) == 2) << 2 | no_attrs << 3])
    return head + b"".join(inputs) + b"".join(outputs) + attrs


def f32(buffer, offset, *dims, strides=None):
    return operand(F32, buffer, offset, dims, strides)


# Buffers: 0 holds 64 bytes, 1 256, 2 1024, 3 4096; buffer 0 starts as int64s 0, 1, 2, 0, ...
# (labels, conditions), the others as float32s in [-2, 2] (op_call_target.hpp).
x4, w, y = f32(2, 0, 1, 2, 5, 5), f32(2, 252, 3, 2, 3, 3), f32(3, 0, 1, 3, 3, 3)
conv = struct.pack("<Iiiii", 0, 1, 1, 0, 0)
pool = struct.pack("<Iiiiiii", 0, 2, 2, 2, 2, 0, 0)
conv_s2p1 = struct.pack("<Iiiii", 0, 2, 2, 1, 1)
pool_3s1p1 = struct.pack("<Iiiiiii", 0, 3, 3, 1, 1, 1, 1)
pool_2s2p1 = struct.pack("<Iiiiiii", 0, 2, 2, 2, 2, 1, 1)
px, pb, pdy, pdx = f32(2, 0, 1, 2, 4, 4), f32(1, 0, 2), f32(1, 64, 1, 2, 2, 2), f32(3, 0, 1, 2, 4, 4)
logits, labels, rows = f32(2, 0, 4, 3), operand(I64, 0, 0, (4,)), f32(1, 64, 4)
SEEDS = {
    "add": call("PX_OP_ADD", [f32(2, 0, 2, 3), f32(2, 24, 2, 3)], [f32(3, 0, 2, 3)], no_attrs=True),
    "add-broadcast": call("PX_OP_ADD", [f32(2, 0, 2, 3), f32(1, 0, 2, 3, strides=(0, 1))], [f32(3, 0, 2, 3)],
                          no_attrs=True),
    "sub-scalar": call("PX_OP_SUB", [f32(2, 0, 2, 3)], [f32(3, 0, 2, 3)], struct.pack("<Iid", 0, 1, 2.5)),
    "lt-int": call("PX_OP_LT", [operand(I32, 2, 0, (6,)), operand(I32, 2, 24, (6,))], [operand(U8, 0, 0, (6,))],
                   no_attrs=True),
    "exp": call("PX_OP_EXP", [f32(2, 0, 4)], [f32(3, 0, 4)]),
    "where": call("PX_OP_WHERE", [operand(U8, 0, 0, (2, 3)), f32(2, 0, 2, 3), f32(2, 24, 2, 3, strides=(0, 1))],
                  [f32(3, 0, 2, 3)]),
    "sum-rows": call("PX_OP_SUM", [f32(2, 0, 2, 3)], [f32(3, 0, 2)], struct.pack("<Iii", 0, 1, 0)),
    "argmax-all": call("PX_OP_ARGMAX", [f32(2, 0, 2, 3)], [operand(I64, 3, 0, (1, 1))], struct.pack("<Iii", 0, -1, 1)),
    "matmul": call("PX_OP_MATMUL", [f32(2, 0, 1, 2, 3), f32(2, 24, 1, 3, 4)], [f32(3, 0, 1, 2, 4)],
                   struct.pack("<Ii", 0, 0)),
    "copy-transposed": call("PX_OP_COPY", [f32(2, 0, 3, 2, strides=(1, 3))], [f32(3, 0, 3, 2)]),
    "cast": call("PX_OP_CAST", [f32(2, 0, 2, 3)], [operand(I32, 3, 0, (2, 3))]),
    "fill": call("PX_OP_FILL", [], [operand(I64, 3, 0, (2, 3))], struct.pack("<I4xdq", 0, 1.5, 7)),
    "arange": call("PX_OP_ARANGE", [], [operand(F64, 3, 0, (5,))], struct.pack("<I4xdd", 0, 1.0, 0.5)),
    "random-normal": call("PX_OP_RANDOM_NORMAL", [], [f32(3, 0, 4, 4)], struct.pack("<I4xQQdd", 0, 42, 0, 0.0, 1.0)),
    "gemm-ta": call("PX_OP_GEMM", [f32(2, 0, 3, 2), f32(2, 24, 3, 4)], [f32(3, 0, 2, 4)],
                    struct.pack("<Iiii", 0, 1, 0, 0)),
    "conv2d": call("PX_OP_CONV2D", [x4, w], [y], conv),
    "conv2d-backward-input": call("PX_OP_CONV2D_BACKWARD_INPUT", [f32(2, 0, 1, 3, 3, 3), w],
                                  [f32(3, 252, 1, 2, 5, 5)], conv),
    "conv2d-backward-weight": call("PX_OP_CONV2D_BACKWARD_WEIGHT", [f32(1, 0, 1, 3, 3, 3), x4],
                                   [f32(3, 0, 3, 2, 3, 3)], conv),
    "max-pool2d": call("PX_OP_MAX_POOL2D", [px], [f32(3, 0, 1, 2, 2, 2)], pool),
    "avg-pool2d-padded": call("PX_OP_AVG_POOL2D", [px], [f32(3, 0, 1, 2, 3, 3)],
                              pool_2s2p1),
    "max-pool2d-backward": call("PX_OP_MAX_POOL2D_BACKWARD", [px, pdy], [pdx], pool),
    "avg-pool2d-backward": call("PX_OP_AVG_POOL2D_BACKWARD", [pdy], [pdx], pool),
    "bias-relu-max-pool2d": call("PX_OP_BIAS_RELU_MAX_POOL2D", [px, pb], [f32(3, 0, 1, 2, 2, 2)], pool),
    "bias-relu-max-pool2d-backward": call("PX_OP_BIAS_RELU_MAX_POOL2D_BACKWARD", [px, pb, pdy],
                                          [pdx, f32(3, 252, 2)], pool),
    "bias-add": call("PX_OP_BIAS_ADD", [f32(2, 0, 4, 3), f32(1, 0, 3)], [f32(3, 0, 4, 3)]),
    "bias-grad": call("PX_OP_BIAS_GRAD", [f32(2, 0, 2, 3, 2, 2)], [f32(3, 0, 3)]),
    "relu-backward": call("PX_OP_RELU_BACKWARD", [f32(2, 0, 2, 3), f32(2, 24, 2, 3)], [f32(3, 0, 2, 3)]),
    "log-softmax-backward": call("PX_OP_LOG_SOFTMAX_BACKWARD", [logits, f32(2, 48, 4, 3)], [f32(3, 0, 4, 3)]),
    "softmax-cross-entropy": call("PX_OP_SOFTMAX_CROSS_ENTROPY", [logits, labels], [f32(3, 0, 4)]),
    "softmax-cross-entropy-backward": call("PX_OP_SOFTMAX_CROSS_ENTROPY_BACKWARD", [logits, labels, rows],
                                           [f32(3, 0, 4, 3)]),
    "dropout": call("PX_OP_DROPOUT", [f32(2, 0, 4, 3)], [f32(3, 0, 4, 3)], struct.pack("<I4xQQd", 0, 7, 0, 0.5)),
    "sgd-momentum": call("PX_OP_SGD_UPDATE", [f32(3, 0, 6), f32(2, 0, 6), f32(3, 64, 6)],
                         [f32(3, 0, 6), f32(3, 64, 6)], struct.pack("<I4xdddd", 0, 0.1, 0.9, 0.0, 1.0)),
    # The other ops of kOps, each once, and reductions along every kind of
    # axis (a kernel's outer, middle and last): seeds are how the fuzzer
    # reaches a path, then mutates it.
    "mul-int64": call("PX_OP_MUL", [operand(I64, 2, 0, (2, 3)), operand(I64, 2, 48, (2, 3))],
                      [operand(I64, 3, 0, (2, 3))], no_attrs=True),
    "div-float64": call("PX_OP_DIV", [operand(F64, 2, 0, (1, 3)), operand(F64, 2, 24, (1, 3), strides=(0, 1))],
                        [operand(F64, 3, 0, (1, 3))], no_attrs=True),
    "pow-scalar": call("PX_OP_POW", [f32(2, 0, 2, 3)], [f32(3, 0, 2, 3)], struct.pack("<Iid", 0, 2, 3.0)),
    "eq-uint8": call("PX_OP_EQ", [operand(U8, 0, 0, (6,)), operand(U8, 0, 8, (6,))], [operand(U8, 1, 0, (6,))],
                     no_attrs=True),
    "ge-scalar-left": call("PX_OP_GE", [operand(I32, 2, 0, (2, 3))], [operand(U8, 3, 0, (2, 3))],
                           struct.pack("<Iid", 0, 1, 4.0)),
    "neg-int32": call("PX_OP_NEG", [operand(I32, 2, 0, (2, 3))], [operand(I32, 3, 0, (2, 3))]),
    "abs-float64": call("PX_OP_ABS", [operand(F64, 2, 0, (5,))], [operand(F64, 3, 0, (5,))]),
    **{name: call("PX_OP_" + name.upper(), [f32(2, 0, 2, 3)], [f32(3, 0, 2, 3)])
       for name in ("log", "sqrt", "relu", "sigmoid", "tanh")},
    "mean-cols": call("PX_OP_MEAN", [f32(2, 0, 2, 3)], [f32(3, 0, 3)], struct.pack("<Iii", 0, 0, 0)),
    "max-middle-keepdims": call("PX_OP_MAX", [f32(2, 0, 2, 3, 2)], [f32(3, 0, 2, 1, 2)], struct.pack("<Iii", 0, 1, 1)),
    "min-int32-cols": call("PX_OP_MIN", [operand(I32, 2, 0, (3, 2))], [operand(I32, 3, 0, (2,))],
                           struct.pack("<Iii", 0, 0, 0)),
    "sum-int32-cols": call("PX_OP_SUM", [operand(I32, 2, 0, (4, 3))], [operand(I64, 3, 0, (3,))],
                           struct.pack("<Iii", 0, 0, 0)),
    "argmax-last-axis": call("PX_OP_ARGMAX", [operand(F64, 2, 0, (2, 3, 2))], [operand(I64, 3, 0, (2, 3))],
                             struct.pack("<Iii", 0, 2, 0)),
    "random-uniform": call("PX_OP_RANDOM_UNIFORM", [], [operand(F64, 3, 0, (3, 3))],
                           struct.pack("<I4xQQdd", 0, 9, 4, -1.0, 1.0)),
    "sigmoid-backward": call("PX_OP_SIGMOID_BACKWARD", [f32(2, 0, 2, 3), f32(2, 24, 2, 3)], [f32(3, 0, 2, 3)]),
    "tanh-backward": call("PX_OP_TANH_BACKWARD", [f32(2, 0, 2, 3), f32(2, 24, 2, 3)], [f32(3, 0, 2, 3)]),
    "log-softmax": call("PX_OP_LOG_SOFTMAX", [logits], [f32(3, 0, 4, 3)]),
    "dropout-backward": call("PX_OP_DROPOUT_BACKWARD", [f32(2, 0, 4, 3)], [f32(3, 0, 4, 3)],
                             struct.pack("<I4xQQd", 0, 7, 0, 0.5)),
    # Windows with stride and padding, through every conv and pooling path,
    # and the products' other forms.
    "conv2d-stride2-pad1": call("PX_OP_CONV2D", [x4, w], [y], conv_s2p1),
    "conv2d-backward-input-stride2-pad1": call("PX_OP_CONV2D_BACKWARD_INPUT", [f32(1, 0, 1, 3, 3, 3), w],
                                               [f32(3, 0, 1, 2, 5, 5)], conv_s2p1),
    "conv2d-backward-weight-stride2-pad1": call("PX_OP_CONV2D_BACKWARD_WEIGHT", [f32(1, 0, 1, 3, 3, 3), x4],
                                                [f32(3, 0, 3, 2, 3, 3)], conv_s2p1),
    "max-pool2d-3x3-pad1": call("PX_OP_MAX_POOL2D", [px], [f32(3, 0, 1, 2, 4, 4)], pool_3s1p1),
    "max-pool2d-backward-3x3-pad1": call("PX_OP_MAX_POOL2D_BACKWARD", [px, f32(1, 0, 1, 2, 4, 4)],
                                         [f32(3, 0, 1, 2, 4, 4)], pool_3s1p1),
    "avg-pool2d-backward-padded": call("PX_OP_AVG_POOL2D_BACKWARD", [f32(1, 0, 1, 2, 3, 3)],
                                       [f32(3, 0, 1, 2, 4, 4)], pool_2s2p1),
    "bias-relu-max-pool2d-3x3-stride2-pad1": call("PX_OP_BIAS_RELU_MAX_POOL2D", [x4, pb], [f32(3, 0, 1, 2, 3, 3)],
                                                  struct.pack("<Iiiiiii", 0, 3, 3, 2, 2, 1, 1)),
    "gemm-tb": call("PX_OP_GEMM", [f32(2, 0, 2, 3), f32(2, 24, 4, 3)], [f32(3, 0, 2, 4)],
                    struct.pack("<Iiii", 0, 0, 1, 0)),
    "matmul-batched": call("PX_OP_MATMUL", [f32(2, 0, 2, 2, 3), f32(2, 48, 2, 3, 2)], [f32(3, 0, 2, 2, 2)],
                           struct.pack("<Ii", 0, 0)),
    "softmax-cross-entropy-int32-labels": call("PX_OP_SOFTMAX_CROSS_ENTROPY", [logits, operand(I32, 0, 0, (4,))],
                                               [f32(3, 0, 4)]),
}


def at_end(data):
    """The same call with every operand moved to its buffer's end (bit 6 of
    its first dim byte), where a kernel's step past it meets ASan's redzone."""
    b = bytearray(data)
    count = (b[1] & 3) + 1 + (b[1] >> 2 & 1)
    for i in range(count):
        b[2 + 8 * i + 3] |= 0x40
    return bytes(b)


SEEDS.update({name + "-at-end": at_end(data) for name, data in list(SEEDS.items())})

if __name__ == "__main__":
    out = HERE / "corpus" / "op-call"
    out.mkdir(parents=True, exist_ok=True)
    for name, data in SEEDS.items():
        (out / name).write_bytes(data)
    print(f"wrote {len(SEEDS)} seeds to {out}")
