/* Plexus application C API, pure C99.
 *
 * Handles are opaque. A released handle, a handle of another kind, or NULL
 * passed where a handle is expected returns PX_ERROR_INVALID_HANDLE (handles
 * carry a generation and a kind, so reuse is detected, never dereferenced).
 *
 * Every function returns a px_status. On failure, px_last_error() returns a
 * message for the calling thread that names the function and the problem;
 * out-pointers are left untouched. A call that succeeds clears the thread's
 * last error (see "the last error" below).
 *
 * Ownership: a px_tensor* returned through an out-pointer is owned by the
 * caller, who releases it with px_tensor_release. Strings returned inside
 * info structs live as long as the runtime.
 *
 * Asynchrony: ops return before the device has computed them. Reading values
 * (px_tensor_to_host), copying from a device to another (the copy reads its
 * source; between two GPUs of the CUDA plugin it is queued instead) and the
 * synchronize calls wait. A failure on the device is returned by the next
 * call that waits on that device, naming the op that failed (and any other
 * op that failed since the previous wait). A failed op does not stop the
 * ops queued after it: they run; the failed op's result holds unspecified
 * values. A call that waits and meets a failure does not do its own work: no
 * values are read, and a copy or a sum is not made (its message says so), so
 * that values a failure spoiled never reach a device whose waits cannot
 * report it.
 *
 * Threads: a runtime and its tensors may be used from several threads; a
 * handle must not be released while another thread still uses it. */
#ifndef PLEXUS_PLEXUS_H
#define PLEXUS_PLEXUS_H

#include "plexus/types.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PLEXUS_VERSION_MAJOR 0
#define PLEXUS_VERSION_MINOR 1
#define PLEXUS_VERSION_PATCH 0

/* Marks the functions libplexus exports; everything else in it is hidden. */
#if defined(_WIN32)
#if defined(PLEXUS_BUILDING_LIBRARY)
#define PX_API __declspec(dllexport)
#else
#define PX_API __declspec(dllimport)
#endif
#else
#define PX_API __attribute__((visibility("default")))
#endif

typedef struct px_runtime px_runtime;
typedef struct px_tensor px_tensor;

/* ---- errors ---- */

/* The last error: every function that returns a px_status sets it for the
 * calling thread. One that returns PX_OK clears it (px_last_status() is then
 * PX_OK and px_last_error() ""); one that fails replaces it. The functions
 * that return no status (px_last_error, px_last_status, px_status_name,
 * px_version, px_fork_generation, and the name helpers) leave it alone, so
 * it is read after the failing call, before the next call with a status. */

/* The message of the calling thread's last call that returned a status: ""
 * when it succeeded. Valid until the thread's next call that returns a
 * status. Never NULL. */
PX_API const char* px_last_error(void);
/* The status of the calling thread's last call that returned a status (PX_OK
 * when it succeeded, or when there was none). */
PX_API px_status px_last_status(void);
/* "PX_ERROR_SHAPE" and so on; "unknown status" for other numbers. */
PX_API const char* px_status_name(px_status status);

/* ---- runtime ---- */

typedef struct px_runtime_options {
    uint32_t struct_size;
    /* Extra plugin files or folders, searched before PLEXUS_PLUGIN_PATH and
     * the default folder. May be NULL when num_plugin_paths is 0. */
    const char* const* plugin_paths;
    int32_t num_plugin_paths;
    /* Nonzero: ignore PLEXUS_PLUGIN_PATH and the default folder. */
    int32_t only_given_paths;
    /* ---- fields below: read only when struct_size reaches them ---- */
    /* Seconds one plugin may take to load (its entry point, create,
     * device_count, device_info and supports): one that has not finished by
     * then is listed as skipped, naming the call it is stuck in, and its
     * thread is left to it. 0: PLEXUS_PLUGIN_TIMEOUT (a number, or none),
     * else 60. Below 0, like PLEXUS_PLUGIN_TIMEOUT=none: no time-out, and
     * the load runs on the calling thread. */
    double plugin_timeout_s;
} px_runtime_options;

/* options may be NULL. Plugins that fail to load are listed with the reason
 * and do not make this fail, except for memory running out while one loads
 * (the host's, or a plugin's create/device_count/device_info reporting
 * PX_ERROR_OUT_OF_MEMORY): that fails it with PX_ERROR_OUT_OF_MEMORY, rather
 * than give a runtime quietly short of a device. A malformed setting in the
 * environment fails it too, naming the variable (PLEXUS_TRACE naming a file
 * that cannot be written: PX_ERROR_INVALID_ARGUMENT). */
PX_API px_status px_runtime_create(const px_runtime_options* options, px_runtime** out);
/* Waits for queued work, then destroys the runtime. PX_OK means the runtime
 * is gone; any other status means it was not destroyed and nothing changed
 * (a handle that is not a live runtime: PX_ERROR_INVALID_HANDLE). So the
 * status never reports an error once the runtime is gone: a failure of
 * queued work that this wait finds is not reported here; call
 * px_runtime_synchronize_all first to see it. Tensors still alive keep
 * their plugin loaded. */
PX_API px_status px_runtime_destroy(px_runtime* runtime);
/* 0 in the process that loaded libplexus, one more in each child forked
 * since. A child cannot compute on the CPU devices of a runtime made before
 * the fork (their worker threads stayed in the parent; such calls fail with
 * PX_ERROR_DEVICE): it makes a runtime of its own, as the C++ frontend does
 * when this number changes. */
PX_API uint64_t px_fork_generation(void);

typedef struct px_plugin_info {
    uint32_t struct_size;
    const char* file;     /* the path tried */
    const char* name;     /* "" when it did not load far enough to say */
    const char* version;  /* "" likewise */
    uint32_t abi_major;   /* 0 when unknown */
    uint32_t abi_minor;
    int32_t loaded;       /* nonzero when loaded */
    const char* message;  /* why it was skipped, or why it has no devices */
    int32_t num_devices;
} px_plugin_info;

PX_API px_status px_runtime_plugin_count(px_runtime* runtime, int32_t* out);
PX_API px_status px_runtime_plugin_info(px_runtime* runtime, int32_t index, px_plugin_info* out);

/* Devices of one kind, over all plugins. */
PX_API px_status px_runtime_device_count(px_runtime* runtime, int32_t kind, int32_t* out);

/* Kinds that plugins name: the devices of an accelerator plugin called
 * "naive" are naive(0), naive(1)... (and accel(i) as well, counted over all
 * accelerator plugins in load order); tensors report them by that name. A
 * plugin's name names devices when it is a lower-case letter and then up to
 * 30 of a-z, 0-9, '_' and '-', and not cpu, gpu or accel. The numbers are
 * the process's, the same in each runtime, given from
 * PX_DEVICE_KIND_NAMED_FIRST as names are first loaded: look them up by
 * name (px_runtime_parse_device) rather than keep them. */
#define PX_DEVICE_KIND_NAMED_FIRST 64
#define PX_DEVICE_KIND_NAME_MAX 31 /* characters */
/* "cpu", "gpu", "accel" or the name of a kind a plugin named; NULL for a
 * number that names no kind (the named ones are consecutive: a loop from
 * PX_DEVICE_KIND_NAMED_FIRST to the first NULL visits each). Static storage. */
PX_API const char* px_device_kind_label(int32_t kind);
/* The device that `text` names in `runtime`: "naive:0", "naive(0)",
 * "gpu:1", or a kind alone ("cpu": index 0). The kind must be cpu, gpu,
 * accel or one of the runtime's plugins names; whether the index exists is
 * for the call that uses the device to say. */
PX_API px_status px_runtime_parse_device(px_runtime* runtime, const char* text, px_device* out);
/* The name `device` has of its own: naive(0) for the accel(i) of the plugin
 * naive; `device` itself when that is its own. PX_ERROR_NO_DEVICE when it
 * does not exist. */
PX_API px_status px_runtime_resolve_device(px_runtime* runtime, px_device device, px_device* out);
/* Fills `out` as far as out->struct_size reaches. */
PX_API px_status px_runtime_device_info(px_runtime* runtime, px_device device, px_device_info* out);
/* The name of the plugin that provides `device` (valid as long as the runtime). */
PX_API px_status px_runtime_device_plugin(px_runtime* runtime, px_device device, const char** out);
/* *out = 1 when `device` runs `op` on inputs of `dtype` (the output's dtype
 * for creation ops), else 0; the same answer the router acts on. */
PX_API px_status px_runtime_device_supports(px_runtime* runtime, px_device device, int32_t op, px_dtype dtype,
                                            int32_t* out);
/* Waits for every op queued on `device`. */
PX_API px_status px_runtime_synchronize(px_runtime* runtime, px_device device);
/* Waits for every device, each one even after another's failure; the
 * first failure is returned, the others named after it. */
PX_API px_status px_runtime_synchronize_all(px_runtime* runtime);
/* px_runtime_synchronize, but waiting at most `seconds` (above 0, at most
 * 1e9; else PX_ERROR_INVALID_ARGUMENT): work
 * still running then gives PX_ERROR_DEVICE, saying so, instead of blocking
 * for ever (a device that hangs). The wait goes on beside the caller; the
 * next call that waits on that device (a synchronize, a read of values, a
 * copy from it) reports a failure it finds. One background wait per device
 * serves the timed waits: one made while it still runs is served by its next
 * wait, which also waits for work other threads queued in the meantime. A
 * device with nothing queued since a wait that ended without a failure is
 * idle: PX_OK at once, however short the time (polling works). */
PX_API px_status px_runtime_synchronize_timeout(px_runtime* runtime, px_device device, double seconds);
/* px_runtime_synchronize_timeout for a caller that waits in slices and
 * stays responsive meanwhile (Python's Ctrl-C): *finished is 1 once the
 * work queued on `device` has all run (and a failure of it is returned,
 * once, as by px_runtime_synchronize), 0 while some still runs after
 * waiting at most `seconds` (0 to 1e9; 0 looks without waiting), PX_OK:
 * the waiting goes on beside the caller, and a failure it finds is kept for
 * the device's next wait. */
PX_API px_status px_runtime_poll(px_runtime* runtime, px_device device, double seconds, int32_t* finished);
/* Seeds the runtime's random stream (the default seed is 0). */
PX_API px_status px_runtime_seed(px_runtime* runtime, uint64_t seed);
/* The runtime's random stream as a checkpoint holds it: its seed and the
 * offset of the next number it gives; setting both resumes the stream where
 * it was (px_runtime_seed(s) is setting s and offset 0). */
PX_API px_status px_runtime_random_state(px_runtime* runtime, uint64_t* seed, uint64_t* offset);
PX_API px_status px_runtime_set_random_state(px_runtime* runtime, uint64_t seed, uint64_t offset);
/* Nonzero lets float32 matrix products (matmul, gemm) use reduced-precision
 * tensor-core math (TF32: 10-bit mantissa inputs) where a plugin has it.
 * Off by default: results then match float32 within the usual tolerance. */
PX_API px_status px_runtime_allow_tf32(px_runtime* runtime, int32_t allow);

/* ---- tensors: creation ---- */

/* Uninitialized contents. shape may be NULL when ndim is 0. */
PX_API px_status px_tensor_empty(px_runtime* runtime, px_device device, px_dtype dtype, int32_t ndim,
                          const int64_t* shape, px_tensor** out);
/* `bytes` must equal the tensor's size in bytes. */
PX_API px_status px_tensor_from_host(px_runtime* runtime, px_device device, px_dtype dtype,
                              int32_t ndim, const int64_t* shape, const void* data,
                              uint64_t bytes, px_tensor** out);
PX_API px_status px_tensor_full(px_runtime* runtime, px_device device, px_dtype dtype, int32_t ndim,
                         const int64_t* shape, double value, px_tensor** out);
/* start, start+step, ... while < stop (> stop for a negative step). */
PX_API px_status px_tensor_arange(px_runtime* runtime, px_device device, px_dtype dtype, double start,
                           double stop, double step, px_tensor** out);
/* From the runtime's seeded stream; float32 and float64. */
PX_API px_status px_tensor_random_uniform(px_runtime* runtime, px_device device, px_dtype dtype,
                                   int32_t ndim, const int64_t* shape, double low, double high,
                                   px_tensor** out);
PX_API px_status px_tensor_random_normal(px_runtime* runtime, px_device device, px_dtype dtype,
                                  int32_t ndim, const int64_t* shape, double mean, double stddev,
                                  px_tensor** out);

/* ---- tensors: handles and properties ---- */

PX_API px_status px_tensor_retain(px_tensor* tensor);
PX_API px_status px_tensor_release(px_tensor* tensor);
PX_API px_status px_tensor_device(px_tensor* tensor, px_device* out);
PX_API px_status px_tensor_dtype(px_tensor* tensor, px_dtype* out);
PX_API px_status px_tensor_ndim(px_tensor* tensor, int32_t* out);
/* Writes ndim values; `capacity` is the length of `out`. */
PX_API px_status px_tensor_shape(px_tensor* tensor, int64_t* out, int32_t capacity);
PX_API px_status px_tensor_numel(px_tensor* tensor, int64_t* out);
/* How many writes in place Plexus has made to the memory this tensor shares
 * with its views (px_tensor_assign, px_tensor_assign_region,
 * px_all_reduce_sum, px_group_all_reduce_sum and the optimizer steps),
 * counted over every handle to that memory; it only grows. A new tensor
 * starts at 0; a write by another framework into memory shared through
 * DLPack is not counted, nor, on an import, a write through another
 * import of the same memory (each import counts its own).
 * Autograd compares it to refuse a gradient that would read values written
 * after they were recorded. */
PX_API px_status px_tensor_version(px_tensor* tensor, uint64_t* out);

/* Waits for the tensor's device, then copies its values; `bytes` must equal
 * the tensor's size in bytes. */
PX_API px_status px_tensor_to_host(px_tensor* tensor, void* dst, uint64_t bytes);

/* ---- tensors: moving and viewing ---- */

/* Always a new tensor with its own memory, even on the same device. */
PX_API px_status px_tensor_copy_to(px_tensor* tensor, px_device device, px_tensor** out);
/* The same tensor (retained, *out == tensor) when already on `device`,
 * otherwise a copy. */
PX_API px_status px_tensor_as_on(px_tensor* tensor, px_device device, px_tensor** out);
/* Writes src's values into dst's memory, in place: the same dtype and
 * shape, any two devices. It is queued after the work already queued on
 * dst's device, so ops queued before it read the old values; every holder of
 * dst, its views (reshape, slice) and memory shared through DLPack see the
 * new ones, and so does the tensor dst is a view of. A copy made of dst
 * before keeps its own. src and dst may be the same memory, not
 * overlapping parts of one. */
PX_API px_status px_tensor_assign(px_tensor* dst, px_tensor* src);
/* Writes src's values into the elements of dst that a basic NumPy index
 * names (dst[start:start+count*step:step] along each axis), in place and
 * queued as px_tensor_assign: start, step and count hold one value per axis
 * of dst (NULL for a scalar), step at least 1, the places inside the axis.
 * src has dst's dtype, may be on any device and broadcasts to the region's
 * shape (count) as NumPy's; values that share dst's memory (a view of it,
 * or memory imported through DLPack) are read whole before any is
 * overwritten (x[1:] = x[:-1]). */
PX_API px_status px_tensor_assign_region(px_tensor* dst, const int64_t* start, const int64_t* step,
                                         const int64_t* count, px_tensor* src);
/* A view with another shape and the same elements; one -1 is inferred. */
PX_API px_status px_tensor_reshape(px_tensor* tensor, int32_t ndim, const int64_t* shape,
                            px_tensor** out);
/* A view of rows [start, stop) of the first axis. */
PX_API px_status px_tensor_slice(px_tensor* tensor, int64_t start, int64_t stop, px_tensor** out);

/* ---- ops: the result is on the inputs' device ---- */

/* An op of family PX_FAMILY_BINARY (op_table.h: add, sub, ..., ge), NumPy
 * broadcasting. */
PX_API px_status px_binary(px_op op, px_tensor* a, px_tensor* b, px_tensor** out);
/* Tensor with a scalar; scalar_first nonzero computes (scalar op a). A
 * scalar the tensor's dtype holds computes in that dtype; one it cannot hold
 * is never changed to fit: a fraction, an infinity or a NaN computes in
 * float64 (int32 * 0.5 is float64), a whole number beyond the dtype's range
 * in int64 (uint8 + 300), as NumPy promotes (docs/semantics.md). A float
 * tensor keeps its dtype: a scalar beyond its range is its infinity there
 * (float32 zeros * 1e300 are NaN, where NumPy 1.24 promotes to float64). */
PX_API px_status px_binary_scalar(px_op op, px_tensor* a, double scalar, int32_t scalar_first,
                           px_tensor** out);
/* An op of family PX_FAMILY_UNARY (op_table.h: neg, exp, ..., tanh). */
PX_API px_status px_unary(px_op op, px_tensor* a, px_tensor** out);
/* cond (uint8) ? a : b, broadcasting over all three. */
PX_API px_status px_where(px_tensor* cond, px_tensor* a, px_tensor* b, px_tensor** out);
/* An op of family PX_FAMILY_REDUCE (sum, mean, max, min, argmax) over one axis (negative counts from the end) or
 * over all axes when all_axes is nonzero. sum of integers gives int64
 * (wrapping like two's complement), mean of integers float64 (summed in
 * float64, as NumPy's), argmax int64. */
PX_API px_status px_reduce(px_op op, px_tensor* a, int32_t all_axes, int32_t axis, int32_t keepdims,
                    px_tensor** out);
/* (m,k)x(k,n), or batched (b,m,k)x(b,k,n); a 2-D operand is shared by the batch. */
PX_API px_status px_matmul(px_tensor* a, px_tensor* b, px_tensor** out);
/* perm may be NULL to reverse the axes. */
PX_API px_status px_transpose(px_tensor* a, const int32_t* perm, int32_t nperm, px_tensor** out);
/* Elements [start, stop) with `step` > 0 along `axis`, as a new tensor. */
PX_API px_status px_slice_axis(px_tensor* a, int32_t axis, int64_t start, int64_t stop, int64_t step,
                        px_tensor** out);
/* Joins tensors of one dtype and device along `axis`. */
PX_API px_status px_concat(px_tensor* const* tensors, int32_t count, int32_t axis, px_tensor** out);
PX_API px_status px_cast(px_tensor* a, px_dtype dtype, px_tensor** out);

/* ---- collectives ---- */

/* Sums `count` tensors of one shape and dtype (float32, float64, int32,
 * int64), each on a different device, and writes the sum into every one of
 * them: afterwards all hold the same bits. Runs as the devices' own
 * collective (e.g. NCCL) when they share a plugin that has one, otherwise
 * through copies and adds on tensors[0]'s device. Ordered after the work
 * queued on every device involved. */
PX_API px_status px_all_reduce_sum(px_tensor* const* tensors, int32_t count);

/* ---- process groups: collectives across processes ---- */

/* A process's membership of a group of processes (one device each) whose
 * plugin sums tensors among them itself, e.g. NCCL between the GPUs of
 * several processes or machines. The processes find each other through an
 * id that one of them makes and the application sends to the rest (e.g.
 * with MPI_Bcast); plexus::mpi::World does all of this for training. */
typedef struct px_group px_group;

/* *out = 1 when `device`'s plugin offers process groups (plugin ABI 1.3). */
PX_API px_status px_group_supported(px_runtime* runtime, px_device device, int32_t* out);
/* Makes a new group's id, for members on devices of `device`'s plugin. Made
 * once, by one process; out->struct_size must be sizeof(px_group_id). */
PX_API px_status px_group_make_id(px_runtime* runtime, px_device device, px_group_id* out);
/* Joins the group `id` names as `rank` of `size` processes (0 <= rank <
 * size), with `device` as this process's member. Every process calls it
 * with the same id and size and its own rank; it returns once all have
 * joined, or fails after `timeout_seconds`. The time-out also bounds every
 * later wait on the group's work: a process that dies or never arrives makes
 * the wait fail with PX_ERROR_DEVICE instead of hanging. It bounds the time
 * without progress: a slow process whose collectives keep finishing does not. */
PX_API px_status px_group_join(px_runtime* runtime, px_device device, const px_group_id* id, int32_t rank,
                               int32_t size, double timeout_seconds, px_group** out);
/* Sums each of `count` tensors on the group's device with the same-numbered
 * tensor of every other process, in place (float32, float64, int32, int64;
 * distinct, non-overlapping tensors). Every process must pass tensors of the
 * same shapes and dtypes in the same order. Queued on the device like an op;
 * a failure, a process that never arrives included, is reported by the next
 * wait on the device. */
PX_API px_status px_group_all_reduce_sum(px_group* group, px_tensor* const* tensors, int32_t count);
/* Leaves the group once its queued work has run, and releases the handle. */
PX_API px_status px_group_release(px_group* group);

/* ---- neural-network ops (float32, float64); shapes are NCHW ---- */

/* op(a) x op(b) of 2-D tensors, where a nonzero trans_a / trans_b uses the
 * transpose of that operand without copying it. */
PX_API px_status px_gemm(px_tensor* a, px_tensor* b, int32_t trans_a, int32_t trans_b, px_tensor** out);
/* x (N,C,H,W) with weight w (O,C,KH,KW) -> (N,O,OH,OW), where
 * OH = (H + 2*pad_h - KH) / stride_h + 1. No bias: see px_bias_add. */
PX_API px_status px_conv2d(px_tensor* x, px_tensor* w, int32_t stride_h, int32_t stride_w, int32_t pad_h,
                    int32_t pad_w, px_tensor** out);
/* The gradient for conv2d's input (N,C,in_h,in_w) from dy (N,O,OH,OW). */
PX_API px_status px_conv2d_backward_input(px_tensor* dy, px_tensor* w, int64_t in_h, int64_t in_w,
                                   int32_t stride_h, int32_t stride_w, int32_t pad_h, int32_t pad_w,
                                   px_tensor** out);
/* The gradient for conv2d's weight (O,C,kernel_h,kernel_w), summed over the batch. */
PX_API px_status px_conv2d_backward_weight(px_tensor* dy, px_tensor* x, int64_t kernel_h, int64_t kernel_w,
                                    int32_t stride_h, int32_t stride_w, int32_t pad_h, int32_t pad_w,
                                    px_tensor** out);
/* op is max_pool2d or avg_pool2d (family PX_FAMILY_POOL2D); padding at most half the
 * window. Average pooling divides by the whole window. */
PX_API px_status px_pool2d(px_op op, px_tensor* x, int32_t kernel_h, int32_t kernel_w, int32_t stride_h,
                    int32_t stride_w, int32_t pad_h, int32_t pad_w, px_tensor** out);
/* The gradient for the pooling input x, from dy; op is the forward op. */
PX_API px_status px_pool2d_backward(px_op op, px_tensor* x, px_tensor* dy, int32_t kernel_h, int32_t kernel_w,
                             int32_t stride_h, int32_t stride_w, int32_t pad_h, int32_t pad_w,
                             px_tensor** out);
/* relu(max_pool2d(x) + bias) of x (N,C,H,W) and bias (C), in one pass: the
 * values of px_pool2d(MAX, relu(bias_add(x, bias))). An optional op of plugin
 * ABI 1.4: PX_ERROR_UNSUPPORTED on a device whose plugin lacks
 * the op bias_relu_max_pool2d (see px_runtime_device_supports). */
PX_API px_status px_bias_relu_max_pool2d(px_tensor* x, px_tensor* bias, int32_t kernel_h, int32_t kernel_w,
                                         int32_t stride_h, int32_t stride_w, int32_t pad_h, int32_t pad_w,
                                         px_tensor** out);
/* Its gradients for x and bias from dy (N,C,OH,OW), two new tensors. */
PX_API px_status px_bias_relu_max_pool2d_backward(px_tensor* x, px_tensor* bias, px_tensor* dy, int32_t kernel_h,
                                                  int32_t kernel_w, int32_t stride_h, int32_t stride_w, int32_t pad_h,
                                                  int32_t pad_w, px_tensor** dx, px_tensor** dbias);
/* x (N,C,...) + bias (C) along axis 1; px_bias_grad sums dy over every axis but 1. */
PX_API px_status px_bias_add(px_tensor* x, px_tensor* bias, px_tensor** out);
PX_API px_status px_bias_grad(px_tensor* dy, px_tensor** out);
/* The gradient of relu, sigmoid or tanh (op is the forward op) from its result y. */
PX_API px_status px_activation_backward(px_op op, px_tensor* y, px_tensor* dy, px_tensor** out);
/* leaky_relu (PX_OP_LEAKY_RELU, the ops of PX_FAMILY_UNARY_ALPHA): x > 0 ? x : alpha * x, alpha finite. */
PX_API px_status px_unary_alpha(px_op op, px_tensor* x, double alpha, px_tensor** out);
/* The gradient of an activation whose gradient reads its input x (op is the forward op: gelu,
 * silu, leaky_relu, softplus; the op table's PX_GRADIENT_TABLE lists them); alpha is
 * leaky_relu's (the others ignore it). */
PX_API px_status px_activation_input_backward(px_op op, px_tensor* x, px_tensor* dy, double alpha, px_tensor** out);
/* Rows of table (V, ...) picked by indices (int32 or int64, any shape): out has the indices' shape
 * followed by the table's trailing axes. An index outside [0, V) fails on the device: the next wait
 * on out reports it. px_take_backward adds the rows of dy back into a (rows, ...) table, in the
 * indices' order (an embedding's gradient; the same bits on every plugin). */
PX_API px_status px_take(px_tensor* table, px_tensor* indices, px_tensor** out);
PX_API px_status px_take_backward(px_tensor* dy, px_tensor* indices, int64_t rows, px_tensor** out);
/* Over the last axis of a 2-D tensor; the backward takes the forward result y. */
PX_API px_status px_log_softmax(px_tensor* x, px_tensor** out);
PX_API px_status px_log_softmax_backward(px_tensor* y, px_tensor* dy, px_tensor** out);
/* Per-row loss -log softmax(logits)[label] of logits (N,C) and labels (N)
 * of int32 or int64 classes; a label outside [0, C) fails on the device and
 * is reported at the next wait. */
PX_API px_status px_softmax_cross_entropy(px_tensor* logits, px_tensor* labels, px_tensor** out);
PX_API px_status px_softmax_cross_entropy_backward(px_tensor* logits, px_tensor* labels, px_tensor* dloss,
                                            px_tensor** out);
/* Zeroes each element with probability p (0 <= p < 1) and scales the rest by
 * 1/(1-p). The mask comes from the runtime's random stream; *seed and
 * *offset receive its key, which px_dropout_backward takes to apply the
 * same mask to a gradient. */
PX_API px_status px_dropout(px_tensor* x, double p, uint64_t* seed, uint64_t* offset, px_tensor** out);
PX_API px_status px_dropout_backward(px_tensor* dy, double p, uint64_t seed, uint64_t offset, px_tensor** out);
/* One SGD step, in place on param (and momentum_buffer, which may be NULL):
 * g = rescale * grad + weight_decay * param; with a momentum buffer
 * m = momentum * m + g and param -= learning_rate * m, else param -= learning_rate * g. */
PX_API px_status px_sgd_update(px_tensor* param, px_tensor* grad, px_tensor* momentum_buffer,
                        double learning_rate, double momentum, double weight_decay, double rescale);
/* SGD with Nesterov momentum, in place on param and momentum_buffer (both
 * needed): g = rescale * grad + weight_decay * param; m = momentum * m + g;
 * param -= learning_rate * (g + momentum * m). */
PX_API px_status px_nag_update(px_tensor* param, px_tensor* grad, px_tensor* momentum_buffer, double learning_rate,
                               double momentum, double weight_decay, double rescale);
/* One Adam step (AdamW when decoupled is nonzero), in place on param and
 * state, a (2, n) tensor of param's dtype holding m and v for param's n
 * values (zeros before the first step); step counts the updates from 1.
 * The formula is px_adam_attrs' in plugin.h; beta1 and beta2 in [0, 1),
 * epsilon > 0. */
PX_API px_status px_adam_update(px_tensor* param, px_tensor* grad, px_tensor* state, double learning_rate,
                                double beta1, double beta2, double epsilon, double weight_decay, double rescale,
                                int64_t step, int32_t decoupled);

/* Batch normalisation over every axis but 1: x is (N,C,...), every other
 * tensor (C), all of x's dtype. px_batch_norm_stats gives each channel's
 * mean and biased variance (it needs at least one value per channel);
 * px_batch_norm computes (x - mean) / sqrt(var + eps) * gamma + beta, with
 * eps finite and > 0, for any mean and var (a batch's, or running
 * statistics). px_batch_norm_backward gives the gradients of px_batch_norm
 * when mean and var are x's own statistics (training): dgamma, dbeta, and
 * dx unless dx is NULL. */
PX_API px_status px_batch_norm_stats(px_tensor* x, px_tensor** mean, px_tensor** var);
PX_API px_status px_batch_norm(px_tensor* x, px_tensor* mean, px_tensor* var, px_tensor* gamma, px_tensor* beta,
                               double eps, px_tensor** out);
PX_API px_status px_batch_norm_backward(px_tensor* x, px_tensor* dy, px_tensor* mean, px_tensor* var,
                                        px_tensor* gamma, double eps, px_tensor** dx, px_tensor** dgamma,
                                        px_tensor** dbeta);

/* ---- versions, and what FFI callers need ---- */

/* What px_version() describes. Fields are appended, never moved: read a
 * field only when struct_size covers it. */
typedef struct px_version_info {
    uint32_t struct_size;      /* sizeof(px_version_info) in the library */
    uint32_t major;            /* libplexus's version: PLEXUS_VERSION_MAJOR it was built with */
    uint32_t minor;
    uint32_t patch;
    uint32_t abi;              /* the C API's ABI (libplexus.so.<abi>): a program built
                                  against another number cannot use this library */
    uint32_t plugin_abi_major; /* the plugin ABI it loads: plugins of this major, any minor */
    uint32_t plugin_abi_minor;
    const char* text;          /* "0.1.0"; static storage */
    uint32_t dlpack_major;     /* the DLPack version px_tensor_to_dlpack writes, and whose */
    uint32_t dlpack_minor;     /* major px_tensor_from_dlpack reads */
} px_version_info;

/* The running library's versions. Never NULL, never fails; the struct is
 * static. A program compares it with the PLEXUS_VERSION_* it was built with. */
PX_API const px_version_info* px_version(void);

/* libplexus also exports px_dtype_name, px_dtype_size, px_dtype_promote,
 * px_op_name and px_device_kind_name (types.h) as symbols of those names, with the same
 * answers as the inline functions, for callers that cannot use a C header
 * (ctypes, cffi): look them up with dlsym. */

/* ---- DLPack: tensors exchanged with other runtimes ----
 *
 * The DLPack structs are in plexus/dlpack.h (DLPack 1.1, as its
 * specification defines them); here they are named as structs only, so this
 * header needs neither that one nor the official one. The versioned
 * functions speak DLPack 1.x (DLManagedTensorVersioned: version, flags), the
 * unversioned ones DLPack 0.x (DLManagedTensor), which NumPy before 2.0 and
 * PyTorch before 2.4 speak.
 *
 * Every Plexus dtype is carried (float32, float64, int32, int64, uint8 as
 * DLPack's float/int/uint of those widths, float16 as kDLFloat 16 and
 * bfloat16 as kDLBfloat 16, one lane); any other is refused with
 * PX_ERROR_DTYPE naming it.
 *
 * Sharing memory: where the device's plugin gives its buffers' addresses and
 * takes memory it did not allocate (plugin ABI 1.5: the CPU plugin, and the
 * CUDA plugin for device memory of the same GPU), an export is the tensor's
 * own memory and an import wraps the producer's. Copied instead (and refused
 * with PX_ERROR_UNSUPPORTED saying why under PX_DLPACK_COPY_NEVER): a plugin
 * without those slots; an import whose strides are not compact row-major
 * (axes of length 1 aside), whose data + byte_offset is not aligned to its
 * dtype, or that is read-only (DLPACK_FLAG_BITMASK_READ_ONLY: Plexus has no
 * read-only tensors, and an in-place op such as px_sgd_update would write
 * the producer's memory); and no elements (nothing to share; never refused).
 * PX_DLPACK_COPY_ALWAYS always copies. */
struct DLManagedTensor;
struct DLManagedTensorVersioned;

#define PX_DLPACK_COPY_IF_NEEDED 0 /* share the memory where it can be shared, else copy */
#define PX_DLPACK_COPY_NEVER 1     /* share, or fail with PX_ERROR_UNSUPPORTED saying why */
#define PX_DLPACK_COPY_ALWAYS 2    /* always a copy */

/* The DLPack device (a DLDeviceType: kDLCPU 1, kDLCUDA 2, kDLExtDev 12)
 * and device id the tensor lives on, as the array API's __dlpack_device__
 * gives them: cpu(i) is (kDLCPU, 0); a GPU of the "cuda" plugin is
 * (kDLCUDA, its CUDA ordinal); any other device is (kDLExtDev, its index). */
PX_API px_status px_tensor_dlpack_device(px_tensor* tensor, int32_t* device_type, int32_t* device_id);

/* The tensor as a new DLPack tensor. Shared: the tensor's memory (kDLCPU, id
 * 0, or kDLCUDA and the CUDA ordinal), data pointing at its first element
 * (byte_offset 0), compact row-major strides written out, versioned flags 0;
 * the tensor's buffer (with its plugin) lives until the deleter runs, and
 * writes through either side are seen by the other. Copied: a compact
 * row-major host copy (kDLCPU, id 0) that the consumer owns, versioned flags
 * DLPACK_FLAG_BITMASK_IS_COPIED. Either way it is complete when this returns
 * (this waits for the tensor's device, a waiting point: a failure of work
 * queued there, the work that made it or other, is returned here and no
 * tensor is given), never READ_ONLY, and *out is the caller's: its
 * deleter may be called from any thread, at any time, even after the tensor
 * is released and the runtime destroyed. The versioned one has version 1.1. */
PX_API px_status px_tensor_to_dlpack(px_tensor* tensor, int32_t copy, struct DLManagedTensorVersioned** out);
PX_API px_status px_tensor_to_dlpack_unversioned(px_tensor* tensor, int32_t copy, struct DLManagedTensor** out);

/* A new tensor on `device` over (shared) or with (copied) the DLPack tensor
 * `in`, which must have a dtype Plexus has. Shared when `device`'s plugin
 * takes its memory (see above; host memory onto a CPU device, kDLCUDA memory
 * onto the GPU of that ordinal); else copied, which needs memory the host can
 * read (kDLCPU or kDLCUDAHost) with any strides (in elements; negative and
 * zero ones too; NULL for compact row-major) and byte_offset. The producer's
 * work on it must be done before this is called (for host memory DLPack has
 * no stream to wait on; for CUDA memory, work ordered before the legacy
 * default stream is waited for). On PX_OK, `in` belongs to Plexus: a copy
 * calls its deleter at once; a shared one when the last tensor using the
 * memory (views too) is released, after the work queued on it, from any
 * thread, even after the runtime is destroyed. On failure it is still the
 * caller's and its deleter has not been called. The versioned one refuses a
 * tensor of another DLPack major version (PX_ERROR_UNSUPPORTED) without
 * reading past its version. */
PX_API px_status px_tensor_from_dlpack(px_runtime* runtime, px_device device, struct DLManagedTensorVersioned* in,
                                       int32_t copy, px_tensor** out);
PX_API px_status px_tensor_from_dlpack_unversioned(px_runtime* runtime, px_device device, struct DLManagedTensor* in,
                                                   int32_t copy, px_tensor** out);

/* ---- trace: where the time goes (docs/performance.md) ---- */

/* Starts a trace of `runtime`: every op call and copy made through it from
 * now on that queues work is recorded (op, shapes, dtype, device, when the
 * call queued it and, on devices whose plugin reports it, when the device
 * began and finished it; a call refused before it queued anything is not,
 * and a run that failed on the device shows as it ran), until px_trace_end
 * writes it; work queued before is left out (the
 * trace starts once it has run). `path`
 * (relative to the current folder now) is created now, so an unwritable
 * path fails here (PX_ERROR_INVALID_ARGUMENT naming it and the system's
 * reason). PX_ERROR_INVALID_ARGUMENT too when this runtime's trace is already
 * running. Tracing never changes results. PLEXUS_TRACE=path does the same
 * for the first runtime a process makes, from its creation until it is
 * destroyed or the process exits. */
PX_API px_status px_trace_begin(px_runtime* runtime, const char* path);
/* Waits for the runtime's devices, stops the trace and writes it: a Chrome
 * trace JSON at the path px_trace_begin took (ui.perfetto.dev and
 * chrome://tracing open it), and a table of time per op beside it (the path
 * with ".json" replaced by, or else followed by, ".summary.txt"). A failure
 * to write is returned naming the file; the trace has stopped either way. A
 * failure of queued work its wait finds is not its own: the application's
 * next wait on that device reports it, as without the trace.
 * PX_ERROR_INVALID_ARGUMENT when no trace of this runtime is running. */
PX_API px_status px_trace_end(px_runtime* runtime);
/* Marks a stretch of the calling thread's work (a training step) in the
 * trace, as a span holding the calls made in it; regions nest. Ends the
 * innermost region this thread opened; either does nothing while no trace
 * runs, and an end with no region of this thread open does nothing (its
 * begin may have come before the trace began). `name` is copied. */
PX_API px_status px_trace_region_begin(px_runtime* runtime, const char* name);
PX_API px_status px_trace_region_end(px_runtime* runtime);

#ifdef __cplusplus
}
#endif

#endif /* PLEXUS_PLEXUS_H */
