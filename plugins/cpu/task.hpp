// What a CPU device's queue holds: an op with its operands resolved to host
// pointers, or a plain memory copy. Copied by value: the host's call struct
// dies when execute() returns.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "plexus/op_rows.h"
#include "plexus/plugin.h"
#include "plexus/plugin_kit.hpp"

namespace pxcpu {

class ScratchBudget;  // scratch_pool.hpp

struct Operand {
    int32_t dtype = 0;
    char* data = nullptr;  // buffer base + offset
    int32_t ndim = 0;
    // Only the first ndim entries are set (left uninitialized past that: a
    // task is built for every op, so it stays cheap).
    int64_t shape[PX_MAX_DIMS];
    int64_t strides[PX_MAX_DIMS];

    int64_t numel() const {
        int64_t n = 1;
        for (int i = 0; i < ndim; ++i) n *= shape[i];
        return n;
    }
    bool contiguous() const {
        int64_t st = 1;
        for (int i = ndim - 1; i >= 0; --i) {
            if (shape[i] != 1 && strides[i] != st) return false;
            st *= shape[i];
        }
        return true;
    }
};

union Attrs {
    px_binary_attrs binary;
    px_reduce_attrs reduce;
    px_matmul_attrs matmul;
    px_fill_attrs fill;
    px_arange_attrs arange;
    px_random_attrs random;
    px_gemm_attrs gemm;
    px_conv2d_attrs conv;
    px_pool2d_attrs pool;
    px_dropout_attrs dropout;
    px_sgd_attrs sgd;
    px_batch_norm_attrs batch_norm;
    px_adam_attrs adam;
    px_alpha_attrs alpha;
};

struct OpTask {
    int32_t op = 0;
    int32_t num_inputs = 0;
    Operand in[plexus::kit::kMostOpInputs];
    Operand out;
    Operand out2;  // the second output (an optimizer step's momentum or state, the fused pool gradient's db), when num_outputs is 2
    int32_t num_outputs = 1;
    Attrs attrs;  // valid when has_attrs
    bool has_attrs = false;
    ScratchBudget* scratch = nullptr;  // what the op's scratch is charged to: its device's allocator
};

struct Task {
    enum Kind { op, copy } kind = op;
    OpTask op_task;
    // copy: bytes from src to dst; staging (if set) is freed after.
    const void* src = nullptr;
    void* dst = nullptr;
    uint64_t bytes = 0;
    void* staging = nullptr;
};
// Tasks are copied into the queue's ring and out of it, never moved from.
static_assert(std::is_trivially_copyable_v<Task>, "a Task must stay trivially copyable");

// Thrown by kernels for a failure found while running (e.g. integer division by zero).
struct KernelError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Runs one op, by the kernel table (kernels.cpp).
void run_op(const OpTask& t);
// Whether the CPU kernels implement (op, dtype).
bool kernel_supports(int32_t op, int32_t dtype);
// PX_OK, or the refusal create() gives when a kernel list names an op twice
// or one the op table lacks.
px_status refuse_wrong_kernel_lists(px_plugin_error* err);

// Elements per thread below which kernels stay on one thread.
constexpr int64_t parallel_grain = 1 << 15;

// A task cheap enough to run on the caller's thread when the queue is idle:
// a few thousand elements (or a small matrix product).
inline bool small_task(const Task& t) {
    if (t.kind != Task::op) return false;
    const OpTask& op = t.op_task;
    const int32_t family = px_op_row_of(op.op)->family;
    if (family == PX_FAMILY_MATMUL) return op.out.numel() * op.in[0].shape[2] <= (1 << 14);
    // Work per element is not bounded for these: never inline.
    if (family == PX_FAMILY_GEMM || (family >= PX_FAMILY_CONV2D && family <= PX_FAMILY_CONV2D_BACKWARD_WEIGHT))
        return false;
    int64_t n = op.out.numel();
    for (int i = 0; i < op.num_inputs; ++i) n = n > op.in[i].numel() ? n : op.in[i].numel();
    return n <= 4096;
}

}  // namespace pxcpu
