/* Plexus plugin ABI, pure C99: the contract alone. The checks every plugin
 * runs on an op call before it reads an operand are in plexus/op_check.h.
 *
 * A plugin is a shared library that exports exactly one symbol,
 * px_plugin_get_api, returning a pointer to a static px_plugin_api table.
 *
 * Version policy
 *   - PX_PLUGIN_ABI_MAJOR changes only when something is removed or changes
 *     meaning. The host loads a plugin only when the majors are equal.
 *   - PX_PLUGIN_ABI_MINOR grows when a slot or a field is appended. Any minor
 *     is accepted: the host reads a plugin's table only as far as the
 *     plugin's struct_size reaches and its abi_minor defines slots, and uses
 *     a slot only when both cover it and the pointer is not NULL; a larger
 *     table from a newer plugin is fine.
 *   - Every struct that crosses the boundary begins with struct_size, set by
 *     whoever allocates it. A callee writes into a caller's struct only as far
 *     as the caller's struct_size reaches.
 *   - Structs and tables are append-only. Each minor's additions are fenced by
 *     a comment; nothing is inserted in the middle or reordered.
 *
 * Errors: every function returns a px_status. On failure it writes a message
 * (NUL-terminated, truncated to PX_MESSAGE_MAX) into err->message. Nothing
 * crosses the boundary as a C++ exception or an abort.
 *
 * Threads: the host may call any function from any thread. Work for one
 * device is executed in the order it was submitted. */
#ifndef PLEXUS_PLUGIN_H
#define PLEXUS_PLUGIN_H

#include "plexus/types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PX_PLUGIN_ABI_MAJOR 1
#define PX_PLUGIN_ABI_MINOR 9
#define PX_PLUGIN_ENTRY_SYMBOL "px_plugin_get_api"

#if defined(_WIN32)
#define PX_PLUGIN_EXPORT __declspec(dllexport)
#else
#define PX_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

/* Opaque to the host; defined by each plugin. */
typedef struct px_plugin_context px_plugin_context;
typedef struct px_plugin_buffer px_plugin_buffer;

/* Where a failing call writes its message. Owned by the caller. */
typedef struct px_plugin_error {
    uint32_t struct_size;
    char message[PX_MESSAGE_MAX];
} px_plugin_error;

/* One operand of an op. Shape and strides are in elements; a stride of 0
 * repeats (broadcasts) that axis. Strides are never negative. */
typedef struct px_tensor_desc {
    uint32_t struct_size;
    int32_t dtype;             /* px_dtype */
    px_plugin_buffer* buffer;  /* memory from this plugin's buffer_alloc */
    uint64_t offset;           /* bytes from the start of buffer */
    int32_t ndim;              /* 0..PX_MAX_DIMS; 0 is a scalar */
    int64_t shape[PX_MAX_DIMS];
    int64_t strides[PX_MAX_DIMS];
    /* ---- ABI 1.0 ends here; it cannot grow: px_op_call's inputs and
     * outputs are arrays of it, which an older reader steps through by its
     * own sizeof. A new fact about an operand goes in a new struct. ---- */
} px_tensor_desc;

/* attrs of the binary elementwise ops. When scalar_operand is not 0 the call
 * has one input and the other operand is `scalar`, converted to the input's
 * dtype: 1 means the scalar is the left operand (2 - x), 2 the right (x - 2). */
typedef struct px_binary_attrs {
    uint32_t struct_size;
    int32_t scalar_operand;
    double scalar;
    /* ---- ABI 1.0 ends here ---- */
} px_binary_attrs;

/* attrs of the reductions. axis is -1 for all axes, else 0..ndim-1 (the host
 * normalizes negative axes). The output is contiguous; with keepdims the
 * reduced axis has length 1, otherwise it is removed. */
typedef struct px_reduce_attrs {
    uint32_t struct_size;
    int32_t axis;
    int32_t keepdims;
    /* ---- ABI 1.0 ends here ---- */
} px_reduce_attrs;

/* attrs of matmul. allow_tf32 lets a plugin use reduced-precision float32. */
typedef struct px_matmul_attrs {
    uint32_t struct_size;
    int32_t allow_tf32;
    /* ---- ABI 1.0 ends here ---- */
} px_matmul_attrs;

/* attrs of fill: floating outputs take `value`, integer outputs `int_value`
 * (so int64 values above 2^53 survive), which lies within the output
 * dtype's range: Plexus's host saturates a value outside it, as cast does. */
typedef struct px_fill_attrs {
    uint32_t struct_size;
    double value;
    int64_t int_value;
    /* ---- ABI 1.0 ends here ---- */
} px_fill_attrs;

/* attrs of arange: element i of the (contiguous, any rank) output is
 * start + i * step, computed in float64 and converted to the output dtype
 * as PX_OP_CAST converts (saturating; NaN gives 0). */
typedef struct px_arange_attrs {
    uint32_t struct_size;
    double start;
    double step;
    /* ---- ABI 1.0 ends here ---- */
} px_arange_attrs;

/* attrs of the random ops. Uniform draws from [a, b), normal has mean a and
 * standard deviation b. Element i is a function of (seed, offset + i) only,
 * so results do not depend on threads or launch shapes. The reference
 * generator is Philox4x32-10 (plexus/philox.h). */
typedef struct px_random_attrs {
    uint32_t struct_size;
    uint64_t seed;
    uint64_t offset;
    double a;
    double b;
    /* ---- ABI 1.0 ends here ---- */
} px_random_attrs;

/* ---- ABI 1.1: attrs of the neural-network ops ---- */

/* attrs of GEMM: nonzero transposes that (stored, contiguous) operand. */
typedef struct px_gemm_attrs {
    uint32_t struct_size;
    int32_t trans_a;
    int32_t trans_b;
    int32_t allow_tf32;
} px_gemm_attrs;

/* attrs of CONV2D and its backward ops: OH = (H + 2*pad_h - KH) / stride_h + 1. */
typedef struct px_conv2d_attrs {
    uint32_t struct_size;
    int32_t stride_h, stride_w;
    int32_t pad_h, pad_w;
} px_conv2d_attrs;

/* attrs of the pooling ops: OH = (H + 2*pad_h - kernel_h) / stride_h + 1.
 * Padded cells never win a max. */
typedef struct px_pool2d_attrs {
    uint32_t struct_size;
    int32_t kernel_h, kernel_w;
    int32_t stride_h, stride_w;
    int32_t pad_h, pad_w;
} px_pool2d_attrs;

/* attrs of DROPOUT and DROPOUT_BACKWARD: element i is kept when the Philox
 * uniform number for (seed, offset + i) is >= p, and scaled by 1 / (1 - p). */
typedef struct px_dropout_attrs {
    uint32_t struct_size;
    uint64_t seed;
    uint64_t offset;
    double p;
} px_dropout_attrs;

/* attrs of SGD_UPDATE: g = rescale * grad + weight_decay * param;
 * with momentum, m = momentum * m + g and param -= lr * m; otherwise
 * param -= lr * g. Computed in the parameter's dtype (the settings rounded
 * to it first), each product and sum rounded on its own, never fused into
 * a multiply-add: the result is then the same bits on every plugin, so
 * replicas of a parameter on devices of two plugins stay identical. */
typedef struct px_sgd_attrs {
    uint32_t struct_size;
    double lr;
    double momentum;
    double weight_decay;
    double rescale;
} px_sgd_attrs;

/* ---- ABI 1.7: attrs of batch normalisation and of Adam ---- */

/* eps is added to the variance before its square root: finite and > 0. */
typedef struct px_batch_norm_attrs {
    uint32_t struct_size;
    double eps;
} px_batch_norm_attrs;

/* NAG_UPDATE (SGD with Nesterov momentum) takes px_sgd_attrs:
 * g = rescale * grad + weight_decay * param; m = momentum * m + g;
 * param -= lr * (g + momentum * m).
 *
 * ADAM_UPDATE, with m and v rows 0 and 1 of the state: g = rescale * grad,
 * plus weight_decay * param unless decoupled (Adam); with decoupled
 * (AdamW) param = param * decay first. Then
 * m = beta1 * m + one_minus_beta1 * g; v = beta2 * v + (one_minus_beta2 * g) * g;
 * param -= step_size * (m / (sqrt(v) / root_correction2 + eps)).
 * The host computes the figures of the settings alone in float64: decay =
 * 1 - lr * weight_decay, step_size = lr / (1 - beta1^t), root_correction2 =
 * sqrt(1 - beta2^t) at step t. As for SGD_UPDATE, a plugin rounds each
 * field once to the type its arithmetic is done in (the parameter's dtype;
 * float32 for float16 and bfloat16) and every product, quotient, sum and
 * square root on its own, in the order written, never fused: the same bits
 * on every plugin. */
typedef struct px_adam_attrs {
    uint32_t struct_size;
    int32_t decoupled;
    double beta1, beta2;
    double eps;
    double weight_decay;
    double rescale;
    double one_minus_beta1, one_minus_beta2;
    double decay;
    double step_size;
    double root_correction2;
} px_adam_attrs;

/* ---- ABI 1.8: attrs of the activations with a parameter ---- */

/* leaky_relu's slope below zero (its forward and backward ops): finite. */
typedef struct px_alpha_attrs {
    uint32_t struct_size;
    double alpha;
} px_alpha_attrs;

/* One op to queue on one device.
 *
 * Layout the host guarantees (the router validates before it dispatches;
 * px_op_call_check checks it again in the plugin, see op_layout.h):
 *   - every offset is a whole number of elements from the buffer's start.
 *   - outputs are freshly allocated or views the op may write; for every op
 *     but COPY they are contiguous. No output is empty of elements.
 *   - binary ops with two inputs, WHERE: every input has the output's ndim
 *     and shape after broadcasting; broadcast axes have stride 0. The unary
 *     ops, the binary ops' scalar form and CAST read their one input flat:
 *     it is contiguous, of the output's shape.
 *   - reductions: the input is contiguous.
 *   - MATMUL: inputs and output are 3-D (batch, rows, cols); the inputs'
 *     batch stride may be 0 (one matrix shared by the batch); the last axis
 *     is contiguous and rows are at least a row apart.
 *   - COPY: any strides on both sides, same shape and dtype.
 *   - the ABI 1.1 ops and later: every input and output is contiguous; SGD_UPDATE
 *     writes its outputs in place (they are its param and momentum inputs).
 *
 * The call, its descs and its attrs live only until execute returns; a
 * plugin copies what it keeps. Buffers stay alive until the plugin has run
 * every op queued before their buffer_free. */
typedef struct px_op_call {
    uint32_t struct_size;
    int32_t op;      /* px_op */
    int32_t device;  /* this plugin's device index */
    int32_t num_inputs;
    const px_tensor_desc* inputs;
    int32_t num_outputs;               /* 1, or 2 for SGD_UPDATE with momentum and for
                                        * BIAS_RELU_MAX_POOL2D_BACKWARD (dx, db) */
    const px_tensor_desc* outputs;
    const void* attrs; /* the op family's attrs struct (struct_size first), or NULL */
    /* ---- ABI 1.0 ends here ---- */
} px_op_call;

/* What is wrong with one operand desc of a call (NULL when nothing is): too
 * small for this ABI's desc, no buffer, or a rank out of 0..PX_MAX_DIMS. The
 * host never sends such a desc; a plugin checks every operand with it before
 * reading one, as other hosts may. */
static inline const char* px_tensor_desc_problem(const px_tensor_desc* t) {
    if (!t || t->struct_size < sizeof(px_tensor_desc)) return "a tensor desc is NULL or too small";
    if (!t->buffer) return "a tensor desc has no buffer";
    if (t->ndim < 0 || t->ndim > PX_MAX_DIMS) return "a rank is out of range";
    return 0;
}

/* ---- ABI 1.2: collectives ---- */

/* How a collective combines the tensors. */
typedef PX_ENUM(px_collective_op) {
    PX_COLLECTIVE_SUM = 1
} px_collective_op;

/* One all-reduce over `count` tensors, one per device, all of this plugin.
 *
 * Layout the host guarantees: count >= 1; the devices are distinct and each
 * tensors[i] lives on devices[i]; every tensor is contiguous with the same
 * shape and a dtype of float32, float64, int32 or int64.
 *
 * Afterwards every tensor holds the elementwise result, bit-identical on
 * every device (the order of the sum is the plugin's choice, but the same
 * for every device). The all-reduce is
 * ordered after the work queued before it on each of the devices, and work
 * queued on them later sees its result. As with execute, an error found while
 * queuing returns at once; one found while running is reported by the next
 * wait on an involved device. */
typedef struct px_collective_call {
    uint32_t struct_size;
    int32_t op;     /* px_collective_op */
    int32_t count;
    const int32_t* devices;          /* count device indices of this plugin */
    const px_tensor_desc* tensors;   /* count tensors, read and written in place */
} px_collective_call;

/* What is wrong with one tensor a collective sums in place (NULL when
 * nothing is): px_tensor_desc_problem's, a dtype that is not summed, a
 * negative dimension, a layout that is not contiguous, or an
 * element count that overflows. */
static inline const char* px_summed_tensor_problem(const px_tensor_desc* t) {
    int32_t k;
    int64_t stride = 1;
    const char* problem = px_tensor_desc_problem(t);
    if (problem) return problem;
    if (t->dtype != PX_FLOAT32 && t->dtype != PX_FLOAT64 && t->dtype != PX_INT32 && t->dtype != PX_INT64)
        return "the dtype is not float32, float64, int32 or int64";
    for (k = t->ndim - 1; k >= 0; --k) {
        if (t->shape[k] < 0) return "a dimension is negative";
        if (t->shape[k] != 1 && t->strides[k] != stride) return "a tensor is not contiguous";
        if (t->shape[k] > 0 && stride > INT64_MAX / t->shape[k]) return "the element count overflows";
        stride *= t->shape[k];
    }
    return 0;
}

/* What is wrong with `c` for a plugin of `device_count` devices (NULL when
 * nothing is): the layout above, checked once here for every plugin. Whether
 * each buffer belongs to its device and holds the tensor is the plugin's to
 * check. */
static inline const char* px_collective_call_problem(const px_collective_call* c, int32_t device_count) {
    int32_t i, j, k;
    if (!c || c->struct_size < sizeof(px_collective_call)) return "the call is NULL or too small";
    if (c->op != PX_COLLECTIVE_SUM) return "unknown collective op";
    if (c->count < 1 || c->count > device_count) return "count is not in 1..the number of devices";
    if (!c->devices || !c->tensors) return "devices or tensors is NULL";
    for (i = 0; i < c->count; ++i) {
        const px_tensor_desc* t = &c->tensors[i];
        const px_tensor_desc* t0 = &c->tensors[0];
        const char* problem = px_summed_tensor_problem(t);
        if (c->devices[i] < 0 || c->devices[i] >= device_count) return "a device index is out of range";
        for (j = 0; j < i; ++j)
            if (c->devices[j] == c->devices[i]) return "a device appears twice";
        if (problem) return problem;
        if (t->dtype != t0->dtype || t->ndim != t0->ndim) return "the tensors differ in dtype or rank";
        for (k = 0; k < t->ndim; ++k)
            if (t->shape[k] != t0->shape[k]) return "the tensors differ in shape";
    }
    return 0;
}

/* ---- ABI 1.3: collectives across processes (px_group_id: types.h) ---- */

/* A process's membership of a group; opaque to the host. */
typedef struct px_plugin_group px_plugin_group;

/* One all-reduce across the processes of a group: `count` tensors on the
 * group's device, each summed in place with the same-numbered tensor of
 * every other process.
 *
 * Layout the host guarantees: count >= 1; every tensor lives on the group's
 * device, is contiguous, has a dtype of float32, float64, int32 or int64,
 * and does not overlap another; every process passes the same count, and
 * tensors of the same shapes and dtypes in the same order (the host of one
 * process cannot check the others: a mismatch is the application's bug and
 * may fail or time out on the device).
 *
 * Ordered like execute on the group's device; afterwards every process holds
 * the same bits. An error found while queuing returns at once; one found
 * while running, a process that never arrives included, is reported by the
 * next wait on the device, within the group's time-out. */
typedef struct px_group_call {
    uint32_t struct_size;
    int32_t op;                    /* px_collective_op */
    int32_t count;
    const px_tensor_desc* tensors; /* count tensors, read and written in place */
} px_group_call;

/* What is wrong with `c` (NULL when nothing is): the layout above as far as
 * one process can see it, checked once here for every plugin. */
static inline const char* px_group_call_problem(const px_group_call* c) {
    int32_t i;
    if (!c || c->struct_size < sizeof(px_group_call)) return "the call is NULL or too small";
    if (c->op != PX_COLLECTIVE_SUM) return "unknown collective op";
    if (c->count < 1) return "count is less than 1";
    if (!c->tensors) return "tensors is NULL";
    for (i = 0; i < c->count; ++i) {
        const char* problem = px_summed_tensor_problem(&c->tensors[i]);
        if (problem) return problem;
    }
    return 0;
}

/* ---- ABI 1.5: memory shared with other runtimes (DLPack) ---- */

/* What an address points at (px_buffer_memory.memory_kind). */
#define PX_MEMORY_HOST 1 /* memory of this process that the host's threads read and write */
#define PX_MEMORY_CUDA 2 /* CUDA device memory of the CUDA device `device_id` (its ordinal) */

/* Where a buffer's bytes are, filled by buffer_memory, or memory the plugin
 * did not allocate, given to buffer_wrap. Owned by whoever allocates it. */
typedef struct px_buffer_memory {
    uint32_t struct_size;
    int32_t memory_kind;  /* PX_MEMORY_HOST or PX_MEMORY_CUDA */
    int32_t device_id;    /* CUDA: the ordinal the memory belongs to; host: 0 */
    void* address;        /* the first byte; may be NULL when bytes is 0 */
    uint64_t bytes;       /* how many bytes from address belong to the buffer */
    /* buffer_wrap only (buffer_memory leaves them as it finds them): called
     * by the plugin exactly once, with release_context, when the wrapped
     * buffer is freed (see buffer_wrap); may be NULL. */
    void (*release)(void* release_context);
    void* release_context;
} px_buffer_memory;

/* ---- ABI 1.8: a trace of when work ran (px_plugin_api.trace_*) ---- */

/* One op or copy as it ran on a device, reported by trace_take. Times are
 * nanoseconds of CLOCK_MONOTONIC (std::chrono::steady_clock on Linux), the
 * clock the host stamps its own side with: a device with a clock of its own
 * maps its times onto this one. */
typedef struct px_trace_span {
    uint32_t struct_size;
    int32_t op;          /* px_op; 0 for a copy */
    uint64_t trace_id;   /* the op's id from execute_traced; 0 for a copy */
    uint64_t bytes;      /* a copy's size; 0 for an op */
    int64_t start_ns;    /* when the device began it */
    int64_t end_ns;      /* when it was done; >= start_ns */
} px_trace_span;

/* The function table. Pointers in it are valid while the library is loaded. */
typedef struct px_plugin_api {
    uint32_t struct_size;
    uint32_t abi_major;   /* PX_PLUGIN_ABI_MAJOR the plugin was built with */
    uint32_t abi_minor;   /* PX_PLUGIN_ABI_MINOR the plugin was built with */
    const char* name;     /* short, e.g. "cpu"; static storage */
    const char* version;  /* the plugin's own version, e.g. "0.1.0"; static */

    /* ---- ABI 1.0 ---- */

    /* Starts the plugin. A plugin may be created more than once per process
     * (one per runtime); each context is independent. The host calls the
     * entry point, create, device_count, device_info and supports of a load
     * on a thread of its own, which it stops waiting for after a time-out
     * (the plugin is then skipped and that thread left to it): a plugin keeps
     * no per-thread state from them for the calls that follow. On PX_OK,
     * *out is the context every later call gets: never NULL (the host
     * skips a plugin whose create gives none). */
    px_status (*create)(px_plugin_context** out, px_plugin_error* err);
    /* Waits for all queued work, frees everything. Never fails. The host
     * waits for it without a time-out (px_runtime_destroy returns when it
     * does): work that never ends is the plugin's to bound. */
    void (*destroy)(px_plugin_context* ctx);

    /* How many devices, 0..4096. With zero, a plugin may put the reason in
     * err->message ("no CUDA driver") and still return PX_OK. A count
     * outside 0..4096 gets the plugin skipped with the figure as reason. */
    px_status (*device_count)(px_plugin_context* ctx, int32_t* count, px_plugin_error* err);
    px_status (*device_info)(px_plugin_context* ctx, int32_t device, px_device_info* info,
                             px_plugin_error* err);
    /* Nonzero when `op` on inputs of `dtype` runs on `device`: the first
     * input's dtype, except a's (the second input) for PX_OP_WHERE and the
     * output's for creation ops. Never fails. */
    int32_t (*supports)(px_plugin_context* ctx, int32_t device, int32_t op, int32_t dtype);

    /* Memory. A buffer of 0 bytes is valid. buffer_free is ordered after all
     * work queued before it on the buffer's device, so the host may free a
     * buffer that queued ops still read. */
    px_status (*buffer_alloc)(px_plugin_context* ctx, int32_t device, uint64_t bytes,
                              px_plugin_buffer** out, px_plugin_error* err);
    px_status (*buffer_free)(px_plugin_context* ctx, px_plugin_buffer* buffer,
                             px_plugin_error* err);

    /* Copies. copy_from_host returns once `src` may be reused; the write is
     * ordered after earlier work on the device. copy_to_host waits for the
     * device's earlier work, reports its failure if it failed, and returns
     * once `dst` holds the bytes. copy_device copies between two buffers of
     * this plugin, on one device or two, ordered after earlier work on both.
     * One that waits for the source's work (the CPU plugin) reports its
     * failure instead of copying, as copy_to_host does; one that queues the
     * copy (CUDA) leaves it to the next synchronize. A failure of the
     * destination's earlier work stays for that device's next wait. */
    px_status (*copy_from_host)(px_plugin_context* ctx, px_plugin_buffer* dst, uint64_t dst_offset,
                                const void* src, uint64_t bytes, px_plugin_error* err);
    px_status (*copy_to_host)(px_plugin_context* ctx, px_plugin_buffer* src, uint64_t src_offset,
                              void* dst, uint64_t bytes, px_plugin_error* err);
    px_status (*copy_device)(px_plugin_context* ctx, px_plugin_buffer* src, uint64_t src_offset,
                             px_plugin_buffer* dst, uint64_t dst_offset, uint64_t bytes,
                             px_plugin_error* err);

    /* Queues one op and returns, normally before it has run. An error found
     * while queuing returns here; an error found while running is kept and
     * returned by the next synchronize or copy_to_host on that device, with a
     * message that names the op. A failed op does not stop the work queued
     * after it: every later op and copy runs and computes from what its
     * inputs hold. A failed op still writes every element of each output it
     * does not update in place: NaN (a float dtype) or 0 where it could not
     * compute (px_failed_element, op_rows.h), never the bytes the memory
     * held before; an output updated in place keeps its values. */
    px_status (*execute)(px_plugin_context* ctx, const px_op_call* call, px_plugin_error* err);
    /* Waits until every op queued on `device` has run; returns the first
     * failure among them (then forgets them all): PX_ERROR_DEVICE, or
     * PX_ERROR_OUT_OF_MEMORY when an op ran out of memory for its workspace.
     * When more than one op failed, the message names the first failure and
     * then every other op that failed (as far as PX_MESSAGE_MAX allows). */
    px_status (*synchronize)(px_plugin_context* ctx, int32_t device, px_plugin_error* err);

    /* ---- ABI 1.0 ends here; later minors append below ---- */

    /* ---- ABI 1.2 ---- */

    /* Optional (NULL: the host copies the tensors to the first device, adds
     * them there and copies the sum back). See px_collective_call. A plugin
     * that cannot do a call it was given (e.g. its collective library is
     * missing) returns PX_ERROR_UNSUPPORTED, and the host falls back the same
     * way. */
    px_status (*all_reduce)(px_plugin_context* ctx, const px_collective_call* call, px_plugin_error* err);

    /* ---- ABI 1.3 ---- */

    /* Collectives across processes, optional: all four or none (the host
     * skips a plugin that sets some). See px_group_id and px_group_call. */

    /* Fills id->bytes with a new group's name, for members on `device`. */
    px_status (*group_make_id)(px_plugin_context* ctx, int32_t device, px_group_id* id, px_plugin_error* err);
    /* Joins the group `id` names as `rank` of `size` (0 <= rank < size, the
     * host checks), with `device` as this process's member. Returns once
     * every rank has joined, or fails once `timeout_seconds` have passed. The
     * time-out also bounds every later wait on the group's work: a process
     * that never arrives makes the wait fail (PX_ERROR_DEVICE, naming the
     * group) instead of hanging, and leaves the group unusable. It bounds a
     * wait without progress: while collectives keep finishing, a wait on a
     * long queue of them is not failed. */
    px_status (*group_join)(px_plugin_context* ctx, int32_t device, const px_group_id* id, int32_t rank,
                            int32_t size, double timeout_seconds, px_plugin_group** out, px_plugin_error* err);
    /* Queues one all-reduce on the group's device (see px_group_call). */
    px_status (*group_all_reduce)(px_plugin_context* ctx, px_plugin_group* group, const px_group_call* call,
                                  px_plugin_error* err);
    /* Leaves the group and frees it, after its queued work has run or
     * failed. Never fails. */
    void (*group_leave)(px_plugin_context* ctx, px_plugin_group* group);

    /* ---- ABI 1.5: memory shared with other runtimes (DLPack) ---- */

    /* Both optional (NULL, or a table that ends before them: the host copies
     * through copy_to_host and copy_from_host instead, and a caller that
     * asked for no copy gets an error naming the plugin and the slot).
     *
     * Fills mem->memory_kind, device_id, address and bytes with where
     * `buffer`'s bytes are: host memory the host may read and write directly,
     * or CUDA device memory another runtime on that device may use. The
     * address stays valid and the bytes stay put until buffer_free (the
     * plugin never moves them). Does not wait for queued work: the host
     * synchronizes the device before anyone reads. PX_ERROR_UNSUPPORTED when
     * this buffer's memory cannot be shared (the host then copies). */
    px_status (*buffer_memory)(px_plugin_context* ctx, px_plugin_buffer* buffer, px_buffer_memory* mem,
                               px_plugin_error* err);
    /* A buffer on `device` over memory the plugin did not allocate: `bytes`
     * bytes at `address`, of `memory_kind` (host memory, or CUDA memory of
     * this device's ordinal). The host has made sure the memory's producer
     * has finished writing it before the first op that reads it (for CUDA:
     * work ordered before the legacy default stream's current point, which a
     * plugin with its own streams waits for here). The buffer is used like
     * any other (ops, copies, buffer_memory); buffer_free is ordered after
     * the work queued before it, after which the plugin calls
     * mem->release(mem->release_context) exactly once, from any thread,
     * holding none of its own locks (so release may call back into Plexus).
     * destroy releases the wrapped buffers the host never freed. The plugin
     * never caches, reuses or frees the memory itself, and never releases on
     * failure: then the memory is still the caller's. The host passes an
     * address aligned to the size of the dtype its tensors read there.
     * PX_ERROR_UNSUPPORTED for memory the plugin cannot use (another kind,
     * another device), with the reason. */
    px_status (*buffer_wrap)(px_plugin_context* ctx, int32_t device, const px_buffer_memory* mem,
                             px_plugin_buffer** out, px_plugin_error* err);

    /* ---- ABI 1.6: the dtypes float16 and bfloat16 (types.h, half.h); no
     * slot. The host asks supports() before it queues an op in them, and a
     * plugin of an older minor, which knows no such dtype, answers 0. ---- */

    /* ---- ABI 1.8 ---- */

    /* A trace of when work ran, optional: all three or none (with none the
     * host traces its own side alone: when each call was made, not when the
     * device ran it; it skips a plugin that sets some). While recording is on for a device, the plugin keeps a
     * px_trace_span for every op and copy it runs there, in the order they
     * ran, until trace_take collects them; while off it costs nothing
     * measurable.
     *
     * Turns recording on (on != 0; spans kept before are dropped) or off
     * (spans kept so far stay for trace_take). Turning it on waits for the
     * work queued on the device so far, keeping its failures for the next
     * wait: that work gets no span (the host matches copies, which carry no
     * id, to its own calls in order). */
    px_status (*trace_enable)(px_plugin_context* ctx, int32_t device, int32_t on, px_plugin_error* err);
    /* execute, with the id the op's span carries (nonzero). The host calls
     * it instead of execute while it traces the call's device. */
    px_status (*execute_traced)(px_plugin_context* ctx, const px_op_call* call, uint64_t trace_id,
                                px_plugin_error* err);
    /* Moves up to `capacity` spans of finished work on `device`, oldest
     * first, into `spans` and says how many in *count; the host calls it
     * again while *count == capacity. Work still running stays for a later
     * call (the host synchronizes first). The elements are
     * spans[0].struct_size bytes each, as the host set it; the plugin writes
     * each as far as that size reaches. */
    px_status (*trace_take)(px_plugin_context* ctx, int32_t device, px_trace_span* spans, int32_t capacity,
                            int32_t* count, px_plugin_error* err);
} px_plugin_api;

/* The one symbol a plugin exports. */
typedef const px_plugin_api* (*px_plugin_get_api_fn)(void);

#ifdef __cplusplus
}
#endif

#endif /* PLEXUS_PLUGIN_H */
