/* Plexus plugin ABI: the checks of an op call every plugin runs first in
 * execute, pure C99. Other hosts than Plexus's may
 * send anything; these checks keep a plugin from reading or writing outside
 * its buffers whatever they send, in one place for every plugin. */
#ifndef PLEXUS_OP_CHECK_H
#define PLEXUS_OP_CHECK_H

#include <stdio.h> /* snprintf, for the messages */

#include "plexus/op_layout.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Sets *end to the byte, from its buffer's start, just past the last element
 * `t` reaches (its offset when it has no element). Returns 0, leaving *end,
 * when the dtype is unknown, a dimension or a stride is negative, or the
 * figure overflows 64 bits; else 1. */
static inline int px_tensor_end(const px_tensor_desc* t, uint64_t* end) {
    const uint64_t size = px_dtype_size(t->dtype);
    uint64_t last = 0; /* elements from the first to the last */
    int32_t k;
    int empty = 0;
    if (!size) return 0;
    for (k = 0; k < t->ndim; ++k) {
        if (t->shape[k] < 0 || t->strides[k] < 0) return 0;
        empty |= t->shape[k] == 0;
    }
    if (empty) {
        *end = t->offset;
        return 1;
    }
    for (k = 0; k < t->ndim; ++k) {
        const uint64_t reach = (uint64_t)(t->shape[k] - 1), stride = (uint64_t)t->strides[k];
        if (stride && reach > (UINT64_MAX - last) / stride) return 0;
        last += reach * stride;
    }
    if (last + 1 == 0 || last + 1 > (UINT64_MAX - t->offset) / size) return 0;
    *end = t->offset + (last + 1) * size;
    return 1;
}

/* What a plugin knows of one of its buffers, for px_op_call_check: the index
 * of the device it belongs to, and its size in bytes. */
typedef void (*px_buffer_facts_fn)(const px_plugin_buffer* buffer, int32_t* device, uint64_t* bytes);

/* Why operand `i` of `c` (inputs first, then outputs) cannot be read, written
 * to `why`, and the status to return; PX_OK when it can. */
static inline px_status px_operand_check(const px_op_call* c, int32_t i, px_buffer_facts_fn facts, char* why,
                                         size_t why_size) {
    const int input = i < c->num_inputs;
    const px_tensor_desc* t = input ? &c->inputs[i] : &c->outputs[i - c->num_inputs];
    const char* problem = px_tensor_desc_problem(t);
    px_status status = PX_ERROR_INVALID_ARGUMENT;
    int32_t device = c->device;
    uint64_t bytes = UINT64_MAX, end = 0;
    if (!problem && !px_dtype_size(t->dtype)) {
        problem = "its dtype is not one this ABI defines";
        status = PX_ERROR_UNSUPPORTED;
    }
    /* Kernels load whole elements (a GPU faults on a misaligned one); the
     * host's offsets are whole elements from a buffer's aligned start. */
    if (!problem && t->offset % px_dtype_size(t->dtype)) problem = "its offset is not a multiple of its element size";
    if (!problem && !px_tensor_end(t, &end)) problem = "a dimension or a stride is negative, or its extent overflows";
    if (!problem && facts) facts(t->buffer, &device, &bytes);
    if (!problem && device != c->device) problem = "its buffer belongs to another device";
    if (!problem && end > bytes) problem = "it reaches past the end of its buffer";
    if (!problem) return PX_OK;
    snprintf(why, why_size, "%s %d: %s", input ? "input" : "output", (int)(input ? i : i - c->num_inputs), problem);
    return status;
}

/* The dtype a call runs on, the one the host asks supports() about: the
 * first input's; where's `a` (its first input is the uint8 condition); the
 * output's for an op without inputs (creation). 0 when the call has no
 * operand to tell (px_op_call_check refuses such a call). */
static inline int32_t px_op_call_dtype(const px_op_call* c) {
    const px_op_row* row = px_op_row_of(c->op);
    if (c->num_inputs > 1 && c->inputs && row && row->family == PX_FAMILY_WHERE) return c->inputs[1].dtype;
    if (c->num_inputs > 0 && c->inputs) return c->inputs[0].dtype;
    return c->num_outputs > 0 && c->outputs ? c->outputs[0].dtype : 0;
}

/* Nonzero when no output of a call px_op_call_check has accepted holds an
 * element: the op has nothing to compute, and a plugin returns PX_OK without
 * running it (as the host never sends such a call; a kernel could read the
 * first element of an empty input that sits at its buffer's end). */
static inline int px_op_call_writes_nothing(const px_op_call* c) {
    int32_t i, k;
    for (i = 0; i < c->num_outputs; ++i) {
        int empty = 0;
        for (k = 0; k < c->outputs[i].ndim; ++k) empty |= c->outputs[i].shape[k] == 0;
        if (!empty) return 0;
    }
    return 1;
}

/* Checks an op call before a plugin reads any operand, in one place for every
 * plugin, as other hosts than Plexus's may send anything: the call's size,
 * its device (PX_ERROR_NO_DEVICE outside 0..device_count - 1), the op
 * (PX_ERROR_UNSUPPORTED when no ABI defines it), the operand counts,
 * each operand desc (px_tensor_desc_problem, its dtype, an offset of whole
 * elements, its extent) and, when
 * `facts` is given, that its buffer belongs to the call's device and holds
 * it, and the attrs the op needs; then how the operands relate and the
 * attrs' values (px_op_layout_check: the layout the host guarantees, above
 * px_op_call). Returns PX_OK, or the status with the reason ("conv2d: input
 * 1: ...") written to err as far as its struct_size allows. What an
 * operand's values mean (a label outside its classes, an integer division
 * by zero) is found as the op runs. */
static inline px_status px_op_call_check(const px_op_call* c, int32_t device_count, px_buffer_facts_fn facts,
                                         px_plugin_error* err) {
    char why[256];
    const px_op_row* row = c && c->struct_size >= sizeof(px_op_call) ? px_op_row_of(c->op) : NULL;
    const char* name = row ? row->name : NULL;
    px_status status = PX_ERROR_INVALID_ARGUMENT;
    int32_t in_least, in_most, out_least, out_most, i;
    uint32_t need, size;
    why[0] = 0;
    if (!c || c->struct_size < sizeof(px_op_call)) {
        snprintf(why, sizeof why, "call is NULL or too small");
    } else if (c->device < 0 || c->device >= device_count) {
        snprintf(why, sizeof why, "no device %d (the plugin has %d)", (int)c->device, (int)device_count);
        status = PX_ERROR_NO_DEVICE;
    } else if (!row) {
        snprintf(why, sizeof why, "unknown op %d", (int)c->op);
        status = PX_ERROR_UNSUPPORTED;
    } else {
        px_op_input_counts(c->op, &in_least, &in_most);
        px_op_output_counts(c->op, &out_least, &out_most);
        if (c->num_inputs < in_least || c->num_inputs > in_most || c->num_outputs < out_least ||
            c->num_outputs > out_most ||
            ((row->family == PX_FAMILY_SGD || row->family == PX_FAMILY_ADAM) && c->num_outputs != c->num_inputs - 1) ||
            (c->num_inputs && !c->inputs) || !c->outputs)
            snprintf(why, sizeof why, "bad operand counts");
        for (i = 0; !why[0] && i < c->num_inputs + c->num_outputs; ++i) {
            const px_status operand = px_operand_check(c, i, facts, why, sizeof why);
            if (operand != PX_OK) status = operand;
        }
        need = px_op_attrs_size(c->op, c->num_inputs);
        size = c->attrs ? *(const uint32_t*)c->attrs : 0;
        if (!why[0] && size < need) {
            if (c->attrs) snprintf(why, sizeof why, "needs an attrs struct of %u bytes, got %u bytes", need, size);
            else snprintf(why, sizeof why, "needs an attrs struct of %u bytes, got none", need);
        }
        if (!why[0]) status = px_op_layout_check(c, why, sizeof why);
    }
    if (!why[0]) return PX_OK;
    if (err && err->struct_size >= sizeof(px_plugin_error)) {
        if (name) snprintf(err->message, sizeof err->message, "%s: %s", name, why);
        else snprintf(err->message, sizeof err->message, "%s", why);
    }
    return status;
}

#ifdef __cplusplus
}
#endif

#endif /* PLEXUS_OP_CHECK_H */
