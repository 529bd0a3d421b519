/* Plexus plugin ABI: the op table (op_table.h) as data, pure C99, for
 * plugins and hosts: one row per op, looked up by number, and the facts
 * every check derives from a row. */
#ifndef PLEXUS_OP_ROWS_H
#define PLEXUS_OP_ROWS_H

#include <stdio.h>
#include <string.h>

#include "plexus/plugin.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One row of the op table; see PX_OP_TABLE for what each field means. */
typedef struct px_op_row {
    int32_t op;
    const char* name;
    int32_t family;                      /* PX_FAMILY_* */
    int32_t inputs_least, inputs_most;   /* how many inputs a call has */
    int32_t outputs_least, outputs_most; /* how many outputs */
    uint32_t attrs_size;                 /* the attrs struct a call needs; 0: none */
    uint32_t dtypes;                     /* PX_DTYPE_BIT of each dtype the op means something on */
    int32_t result;                      /* PX_RESULT_* */
    uint32_t flags;                      /* PX_OP_FLAG_* */
    int32_t abi_minor;                   /* the ABI 1.x minor that added it */
} px_op_row;

/* The row of `op`, or NULL for a number that is not an op. */
#define PX_OP_ROW_CASE_(op_, number, name, family, in_least, in_most, out_least, out_most, attrs, dtypes, result, \
                        flags, minor)                                                                            \
    case op_: {                                                                                                  \
        static const px_op_row row = {op_,     #name,  family,    in_least, in_most,                             \
                                      out_least, out_most, (uint32_t)(attrs), dtypes, result, flags, minor};    \
        return &row;                                                                                             \
    }
static inline const px_op_row* px_op_row_of(int32_t op) {
    switch (op) {
    PX_OP_TABLE(PX_OP_ROW_CASE_)
    default: return NULL;
    }
}
#undef PX_OP_ROW_CASE_

/* Nonzero when `op` means something on inputs of `dtype` (the output's for
 * creation ops): the dtype is one this ABI defines and the row lists it. */
static inline int px_op_accepts(int32_t op, int32_t dtype) {
    const px_op_row* row = px_op_row_of(op);
    return row && px_dtype_size(dtype) && (row->dtypes & PX_DTYPE_BIT(dtype)) != 0;
}

/* Writes the dtypes `op` takes, "float32, float64", to `text`, for messages. */
static inline const char* px_op_accepted_dtypes(int32_t op, char* text, size_t size) {
    const px_op_row* row = px_op_row_of(op);
    size_t used = 0;
    int32_t d;
    if (size) text[0] = 0;
    for (d = 1; row && d < 32 && used < size; ++d) {
        int n;
        if (!px_dtype_name(d) || !(row->dtypes & PX_DTYPE_BIT(d))) continue;
        n = snprintf(text + used, size - used, "%s%s", used ? ", " : "", px_dtype_name(d));
        if (n < 0) break;
        used += (size_t)n;
    }
    return text;
}

/* The dtype `op` writes for inputs of `dtype`: uint8 for comparisons, int64
 * for argmax and for sums of integers, float64 for means of integers, the
 * input's dtype otherwise (and for cast and creation ops, whose output dtype
 * the caller chooses). */
static inline int32_t px_op_result_dtype(int32_t op, int32_t dtype) {
    const px_op_row* row = px_op_row_of(op);
    const int is_float = px_dtype_class(dtype) == PX_DTYPE_CLASS_FLOAT;
    switch (row ? row->result : PX_RESULT_SAME) {
    case PX_RESULT_UINT8: return PX_UINT8;
    case PX_RESULT_INT64: return PX_INT64;
    case PX_RESULT_SUM: return is_float ? dtype : PX_INT64;
    case PX_RESULT_MEAN: return is_float ? dtype : PX_FLOAT64;
    default: return dtype;
    }
}

/* The size of the attrs struct an op cannot run without (0: none needed);
 * the binary family needs px_binary_attrs only in its scalar form (one
 * input). A plugin rejects a call whose attrs are missing or smaller. */
static inline uint32_t px_op_attrs_size(int32_t op, int32_t num_inputs) {
    const px_op_row* row = px_op_row_of(op);
    if (!row) return 0;
    if (row->family == PX_FAMILY_BINARY && num_inputs != 1) return 0;
    return row->attrs_size;
}

/* How many inputs and outputs a call of `op` has; a plugin rejects a call
 * outside [*least, *most]. An unknown op: 1 of each. */
static inline void px_op_input_counts(int32_t op, int32_t* least, int32_t* most) {
    const px_op_row* row = px_op_row_of(op);
    *least = row ? row->inputs_least : 1;
    *most = row ? row->inputs_most : 1;
}
static inline void px_op_output_counts(int32_t op, int32_t* least, int32_t* most) {
    const px_op_row* row = px_op_row_of(op);
    *least = row ? row->outputs_least : 1;
    *most = row ? row->outputs_most : 1;
}

/* What an op that fails while it runs leaves where it could not compute
 * (plugin.h, R9: never the bytes the memory held before): the bits of a
 * quiet NaN of a float dtype, in its px_dtype_size low bytes; 0 for an
 * integer dtype. */
static inline uint64_t px_failed_element_bits(int32_t dtype) {
    switch (dtype) {
    case PX_FLOAT32: return 0x7fc00000u;
    case PX_FLOAT64: return 0x7ff8000000000000ull;
    case PX_FLOAT16: return 0x7e00u;
    case PX_BFLOAT16: return 0x7fc0u;
    default: return 0;
    }
}

/* Writes px_failed_element_bits(dtype) to `element` as one element of
 * `dtype` (px_dtype_size bytes, in the host's byte order). */
static inline void px_failed_element(int32_t dtype, void* element) {
    const uint64_t bits = px_failed_element_bits(dtype);
    const uint8_t b8 = (uint8_t)bits;
    const uint16_t b16 = (uint16_t)bits;
    const uint32_t b32 = (uint32_t)bits;
    switch (px_dtype_size(dtype)) {
    case 1: memcpy(element, &b8, 1); break;
    case 2: memcpy(element, &b16, 2); break;
    case 4: memcpy(element, &b32, 4); break;
    case 8: memcpy(element, &bits, 8); break;
    default: break;
    }
}

#ifdef __cplusplus
}
#endif

#endif /* PLEXUS_OP_ROWS_H */
