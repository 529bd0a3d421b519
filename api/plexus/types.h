/* Plexus: the value types shared by the application C API (plexus.h) and the
 * plugin ABI (plugin.h). Pure C99. Every enum value here is part of the ABI:
 * values are assigned once and never renumbered; new values are appended. */
#ifndef PLEXUS_TYPES_H
#define PLEXUS_TYPES_H

#include <stddef.h>
#include <stdint.h>

#include "plexus/op_table.h"

#ifdef __cplusplus
extern "C" {
#endif

/* In C++ the enums below have int32_t as their fixed underlying type, so a
 * value a C caller may pass that has no name (a dtype 99, to be refused with
 * an error) is still a valid value of the type, not undefined behaviour. In C
 * they are plain enums; both are 4 bytes. */
#ifdef __cplusplus
#define PX_ENUM(name) enum name : int32_t
#else
#define PX_ENUM(name) enum name
#endif

/* Largest rank a tensor may have. */
#define PX_MAX_DIMS 8

/* Size of the message buffer in px_plugin_error (bytes, NUL included). */
#define PX_MESSAGE_MAX 512

typedef PX_ENUM(px_status) {
    PX_OK = 0,
    PX_ERROR_INVALID_ARGUMENT = 1, /* a NULL pointer, a bad value, an out-of-range axis */
    PX_ERROR_INVALID_HANDLE = 2,   /* NULL, released, or of the wrong kind */
    PX_ERROR_DEVICE_MISMATCH = 3,  /* inputs live on different devices */
    PX_ERROR_SHAPE = 4,            /* shapes that do not fit the op, or overflow */
    PX_ERROR_DTYPE = 5,            /* dtypes that do not fit the op */
    PX_ERROR_OUT_OF_MEMORY = 6,
    PX_ERROR_UNSUPPORTED = 7,      /* the device's plugin lacks this (op, dtype) */
    PX_ERROR_NO_DEVICE = 8,        /* no such device, or no plugin provides it */
    PX_ERROR_PLUGIN = 9,           /* a plugin broke its contract or failed to load */
    PX_ERROR_DEVICE = 10,          /* work queued on a device failed */
    PX_ERROR_INTERNAL = 11
} px_status;

/* The dtype table: every dtype is one row, and its enumerator, name, size
 * and class come from it. X(enumerator, number, name, bytes, class, ABI
 * minor it came in). uint8 is also the result of comparisons (0 or 1);
 * float16 is IEEE binary16, bfloat16 float32's top half (half.h). */
#define PX_DTYPE_CLASS_FLOAT 1
#define PX_DTYPE_CLASS_SIGNED 2   /* signed integers */
#define PX_DTYPE_CLASS_UNSIGNED 3 /* unsigned integers */
#define PX_DTYPE_TABLE(X)                                  \
    X(PX_FLOAT32, 1, float32, 4, PX_DTYPE_CLASS_FLOAT, 0)    \
    X(PX_FLOAT64, 2, float64, 8, PX_DTYPE_CLASS_FLOAT, 0)    \
    X(PX_INT32, 3, int32, 4, PX_DTYPE_CLASS_SIGNED, 0)       \
    X(PX_INT64, 4, int64, 8, PX_DTYPE_CLASS_SIGNED, 0)       \
    X(PX_UINT8, 5, uint8, 1, PX_DTYPE_CLASS_UNSIGNED, 0)     \
    X(PX_FLOAT16, 6, float16, 2, PX_DTYPE_CLASS_FLOAT, 6)    \
    X(PX_BFLOAT16, 7, bfloat16, 2, PX_DTYPE_CLASS_FLOAT, 6)

#define PX_DTYPE_ENUMERATOR_(dtype, number, ...) dtype = number,
typedef PX_ENUM(px_dtype) {
    PX_DTYPE_TABLE(PX_DTYPE_ENUMERATOR_)
} px_dtype;
#undef PX_DTYPE_ENUMERATOR_

typedef PX_ENUM(px_device_kind) {
    PX_DEVICE_CPU = 1,
    PX_DEVICE_GPU = 2,
    PX_DEVICE_ACCELERATOR = 3 /* anything else a plugin offers */
} px_device_kind;

/* A device as applications name it: cpu(0), gpu(1), naive(0). The index
 * counts the devices of that kind over all loaded plugins, in load order.
 * An accelerator's kind is its plugin's name where that can name devices
 * (plexus.h, PX_DEVICE_KIND_NAMED_FIRST); accel(i) names it as well. */
typedef struct px_device {
    int32_t kind;  /* a px_device_kind, or a kind a plugin names (plexus.h) */
    int32_t index;
} px_device;

/* Op numbers: stable forever. Plugins receive these in px_op_call. Each op
 * is a row of the op table (op_table.h), which says what it means. */
#define PX_OP_ENUMERATOR_(op, number, ...) op = number,
typedef PX_ENUM(px_op) {
    PX_OP_TABLE(PX_OP_ENUMERATOR_)
} px_op;
#undef PX_OP_ENUMERATOR_

/* One past the largest op number; a table indexed by op may use this size. */
#define PX_OP_NUMBER_LIMIT 256

/* Names for messages; NULL for a number that is not an op. */
#define PX_OP_NAME_CASE_(op, number, name, ...) \
    case op: return #name;
static inline const char* px_op_name(int32_t op) {
    switch (op) {
    PX_OP_TABLE(PX_OP_NAME_CASE_)
    default: return NULL;
    }
}
#undef PX_OP_NAME_CASE_

/* The row that computes elementwise `op`'s gradient (PX_GRADIENT_TABLE),
 * with the forward operand it reads (PX_GRAD_FROM_*) in *from when from is
 * not NULL; 0 (and *from 0) for an op without one. */
#define PX_OP_BACKWARD_CASE_(op, backward, operand) \
    case op:                                        \
        if (from) *from = operand;                  \
        return backward;
static inline int32_t px_op_backward(int32_t op, int32_t* from) {
    switch (op) {
    PX_GRADIENT_TABLE(PX_OP_BACKWARD_CASE_)
    default:
        if (from) *from = 0;
        return 0;
    }
}
#undef PX_OP_BACKWARD_CASE_

/* Whether autograd gives `op` a zero gradient: piecewise constant
 * (PX_OP_FLAG_ZERO_GRADIENT: floor, sign, ...). The rows' flags are
 * constants, so this folds to a comparison per flagged row. */
#define PX_OP_ZERO_GRADIENT_OR_(op, number, name, family, in_least, in_most, out_least, out_most, attrs, dtypes, \
                                result, flags, minor)                                                            \
    || (which == (op) && ((flags) & PX_OP_FLAG_ZERO_GRADIENT) != 0)
static inline int px_op_zero_gradient(int32_t which) { return 0 PX_OP_TABLE(PX_OP_ZERO_GRADIENT_OR_); }
#undef PX_OP_ZERO_GRADIENT_OR_

/* Names for messages; NULL for a number that is not a dtype. */
#define PX_DTYPE_NAME_CASE_(dtype, number, name, ...) \
    case dtype: return #name;
static inline const char* px_dtype_name(int32_t dtype) {
    switch (dtype) {
    PX_DTYPE_TABLE(PX_DTYPE_NAME_CASE_)
    default: return NULL;
    }
}
#undef PX_DTYPE_NAME_CASE_

/* Bytes per element; 0 for a number that is not a dtype. (These look the
 * table up with one `if` per row: dtypes share sizes and classes, which a
 * switch would have as repeated branches.) */
#define PX_DTYPE_SIZE_IF_(dtype_, number, name, bytes, ...) \
    if (dtype == (dtype_)) return (bytes);
static inline size_t px_dtype_size(int32_t dtype) {
    PX_DTYPE_TABLE(PX_DTYPE_SIZE_IF_)
    return 0;
}
#undef PX_DTYPE_SIZE_IF_

/* The plugin ABI minor that added `dtype` (0 for 1.0's); -1 for a number
 * that is not a dtype. A plugin of an older minor knows nothing of it. */
#define PX_DTYPE_MINOR_IF_(dtype_, number, name, bytes, class_, minor) \
    if (dtype == (dtype_)) return (minor);
static inline int32_t px_dtype_abi_minor(int32_t dtype) {
    PX_DTYPE_TABLE(PX_DTYPE_MINOR_IF_)
    return -1;
}
#undef PX_DTYPE_MINOR_IF_

/* PX_DTYPE_CLASS_*; 0 for a number that is not a dtype. */
#define PX_DTYPE_CLASS_IF_(dtype_, number, name, bytes, class_, ...) \
    if (dtype == (dtype_)) return (class_);
static inline int32_t px_dtype_class(int32_t dtype) {
    PX_DTYPE_TABLE(PX_DTYPE_CLASS_IF_)
    return 0;
}
#undef PX_DTYPE_CLASS_IF_

/* The dtype that operands of two dtypes compute in (an elementwise op, where;
 * docs/semantics.md, "operands of two dtypes"), as PyTorch, JAX and MXNet's
 * NumPy interface promote: a float with an integer gives the float (never
 * losing a fraction), two floats the wider (float16 with bfloat16, neither of
 * which holds the other, float32), two integers the wider (uint8 with int32
 * is int32). 0 when either number is not a dtype. */
static inline int32_t px_dtype_promote(int32_t a, int32_t b) {
    const int32_t class_a = px_dtype_class(a), class_b = px_dtype_class(b);
    if (class_a == 0 || class_b == 0) return 0;
    if (a == b) return a;
    if ((class_a == PX_DTYPE_CLASS_FLOAT) != (class_b == PX_DTYPE_CLASS_FLOAT))
        return class_a == PX_DTYPE_CLASS_FLOAT ? a : b;
    if (px_dtype_size(a) != px_dtype_size(b)) return px_dtype_size(a) > px_dtype_size(b) ? a : b;
    return class_a == PX_DTYPE_CLASS_FLOAT ? PX_FLOAT32 : 0; /* float16 and bfloat16 */
}

/* "cpu", "gpu", "accel"; NULL for any other number (px_device_kind_label,
 * plexus.h, also knows the kinds plugins name). */
static inline const char* px_device_kind_name(int32_t kind) {
    switch (kind) {
    case PX_DEVICE_CPU: return "cpu";
    case PX_DEVICE_GPU: return "gpu";
    case PX_DEVICE_ACCELERATOR: return "accel";
    default: return NULL;
    }
}

/* Structs the application API and the plugin ABI share (recorded in
 * api/abi/plugin_abi.layout with plugin.h's). */

/* Filled by device_info and px_runtime_device_info. Owned by the caller. */
typedef struct px_device_info {
    uint32_t struct_size;
    int32_t kind;              /* px_device_kind */
    char name[128];            /* e.g. "CPU (2 cores, OpenBLAS 0.3.21)" */
    uint64_t memory_total;     /* bytes the device has */
    uint64_t memory_free;      /* bytes still available on the device */
    uint64_t memory_in_use;    /* bytes in live buffers of this runtime */
    uint64_t memory_reserved;  /* in use + kept in the plugin's cache */
    uint64_t memory_peak;      /* the highest memory_in_use seen */
    /* ---- ABI 1.0 ends here ---- */
} px_device_info;

/* (ABI 1.3) Names a process group before it exists. One process makes it (the
 * group_make_id slot, through px_group_make_id); the application carries it
 * to the others (e.g. with MPI_Bcast), and every process joins with it. */
#define PX_GROUP_ID_BYTES 128
typedef struct px_group_id {
    uint32_t struct_size;
    char plugin[32];                        /* the host writes the maker's name; joins check it */
    unsigned char bytes[PX_GROUP_ID_BYTES]; /* the plugin's (e.g. an ncclUniqueId) */
} px_group_id;

#ifdef __cplusplus
}
#endif

#endif /* PLEXUS_TYPES_H */
