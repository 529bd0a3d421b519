/* A small plugin in plain C99 for the fault tests, built once per FAULT_*
 * variant. Its one "accelerator" device (two for FAULT_COLLECTIVE) keeps
 * buffers in host memory and supports add, fill and copy on float32; each
 * variant breaks one rule. FAULT_ACCEPT_ALL claims every (op, dtype) and
 * fails every op it is handed, so a call the host should have refused
 * shows up as "reached the plugin"; with FAULT_CRASH_IN_EXECUTE set it
 * crashes there instead (SIGSEGV), for the tools' crash reports.
 * FAULT_GROUP adds the process-group slots of group_slots.c.
 * FAULT_OLDER_MINOR is FAULT_ACCEPT_ALL built as if for ABI 1.7: the host
 * must not ask it about the ops 1.8 added. */
#ifdef FAULT_OLDER_MINOR
#define FAULT_ACCEPT_ALL
#endif
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plexus/plugin.h"

#ifndef FAULT_NAME
#define FAULT_NAME "fault"
#endif

/* A failure found while "running", kept for the next wait (empty: none). */
struct px_plugin_context { char failure[256]; };

#ifdef FAULT_THROWS
/* fault_throw.cpp: throws a std::runtime_error through this C code, from
 * the slot FAULT_THROW_IN names (default: execute). */
extern void fault_throw(const char* what);
static void throw_in(const char* slot) {
    const char* where = getenv("FAULT_THROW_IN");
    if (strcmp(where ? where : "execute", slot) == 0) fault_throw(slot);
}
#define THROW_IN(slot) throw_in(slot)
#else
#define THROW_IN(slot) ((void)0)
#endif
struct px_plugin_buffer { unsigned char* data; uint64_t bytes; };

static px_status say(px_plugin_error* err, px_status s, const char* msg) {
    if (err) snprintf(err->message, sizeof err->message, "%s", msg);
    return s;
}

static px_status create(px_plugin_context** out, px_plugin_error* err) {
    THROW_IN("create");
#ifdef FAULT_CREATE_FAILS
    (void)out;
    return say(err, PX_ERROR_PLUGIN, "simulated init failure: no such hardware");
#else
    if (!out) return say(err, PX_ERROR_INVALID_ARGUMENT, "out is NULL");
#ifdef FAULT_NULL_CONTEXT
    *out = NULL; /* "succeeds" without a context */
    return PX_OK;
#endif
    *out = (px_plugin_context*)calloc(1, sizeof(px_plugin_context));
    return *out ? PX_OK : PX_ERROR_OUT_OF_MEMORY;
#endif
}
static void destroy(px_plugin_context* ctx) {
    free(ctx);
    THROW_IN("destroy");
}
static px_status device_count(px_plugin_context* ctx, int32_t* n, px_plugin_error* err) {
    THROW_IN("device_count");
    (void)ctx, (void)err;
#if defined(FAULT_COUNT_FAILS)
    (void)n;
    return say(err, PX_ERROR_DEVICE, "simulated: the driver does not answer");
#elif defined(FAULT_COUNT_OOM)
    (void)n;
    return say(err, PX_ERROR_OUT_OF_MEMORY, "simulated: out of host memory counting devices");
#elif defined(FAULT_COLLECTIVE)
    *n = 2;
#elif defined(FAULT_COUNT_HUGE)
    *n = INT32_MAX;  /* asking each for its info would take the host gigabytes */
#elif defined(FAULT_COUNT_NEGATIVE)
    *n = -5;  /* PX_OK, and no message */
#else
    *n = 1;
#endif
    return PX_OK;
}
static px_status device_info(px_plugin_context* ctx, int32_t d, px_device_info* info, px_plugin_error* err) {
    (void)ctx, (void)d, (void)err;
#ifdef FAULT_INFO_OOM
    (void)info;
    return say(err, PX_ERROR_OUT_OF_MEMORY, "simulated: out of host memory describing a device");
#endif
    uint32_t size = info->struct_size;
    memset(info, 0, size);
    info->struct_size = size;
#ifdef FAULT_INFO_FAILS
    return say(err, PX_ERROR_PLUGIN, "simulated: the device does not answer");
#endif
#ifdef FAULT_BAD_INFO
    info->kind = 99; /* not a kind the ABI defines */
#else
    info->kind = PX_DEVICE_ACCELERATOR;
#endif
    snprintf(info->name, sizeof info->name, "%s test device", FAULT_NAME);
    info->memory_total = 1u << 20;
    return PX_OK;
}
static int32_t supports(px_plugin_context* ctx, int32_t d, int32_t op, int32_t dtype) {
    THROW_IN("supports");
    (void)ctx, (void)d;
#ifdef FAULT_ACCEPT_ALL
    (void)op, (void)dtype;
    return 1;
#else
    return dtype == PX_FLOAT32 && (op == PX_OP_ADD || op == PX_OP_FILL || op == PX_OP_COPY);
#endif
}
static px_status buffer_alloc(px_plugin_context* ctx, int32_t d, uint64_t bytes, px_plugin_buffer** out,
                              px_plugin_error* err) {
    (void)ctx, (void)d;
    px_plugin_buffer* b = (px_plugin_buffer*)malloc(sizeof *b);
    if (!b) return say(err, PX_ERROR_OUT_OF_MEMORY, "no memory");
    b->data = (unsigned char*)malloc(bytes ? bytes : 1);
    b->bytes = bytes;
    if (!b->data) {
        free(b);
        return say(err, PX_ERROR_OUT_OF_MEMORY, "no memory");
    }
    *out = b;
    return PX_OK;
}
static px_status buffer_free(px_plugin_context* ctx, px_plugin_buffer* b, px_plugin_error* err) {
    (void)ctx, (void)err;
    free(b->data);
    free(b);
    THROW_IN("buffer_free"); /* after freeing, so only the rule is broken, not memory */
    return PX_OK;
}
static px_status copy_from_host(px_plugin_context* ctx, px_plugin_buffer* dst, uint64_t off, const void* src,
                                uint64_t bytes, px_plugin_error* err) {
    (void)ctx, (void)err;
    memcpy(dst->data + off, src, bytes);
    return PX_OK;
}
static px_status take_failure(px_plugin_context* ctx, px_plugin_error* err) {
    if (!ctx->failure[0]) return PX_OK;
    px_status s = say(err, PX_ERROR_DEVICE, ctx->failure);
    ctx->failure[0] = '\0';
    return s;
}
void fault_fail_later(px_plugin_context* ctx, const char* message) {
    if (!ctx->failure[0]) snprintf(ctx->failure, sizeof ctx->failure, "%s", message);
}
void* fault_tensor_data(const px_tensor_desc* t) { return t->buffer->data + t->offset; }
static px_status copy_to_host(px_plugin_context* ctx, px_plugin_buffer* src, uint64_t off, void* dst, uint64_t bytes,
                              px_plugin_error* err) {
    px_status s = take_failure(ctx, err);
    if (s != PX_OK) return s;
    memcpy(dst, src->data + off, bytes);
    return PX_OK;
}
static px_status copy_device(px_plugin_context* ctx, px_plugin_buffer* src, uint64_t so, px_plugin_buffer* dst,
                             uint64_t doff, uint64_t bytes, px_plugin_error* err) {
    (void)ctx, (void)err;
    memcpy(dst->data + doff, src->data + so, bytes);
    return PX_OK;
}
static px_status execute(px_plugin_context* ctx, const px_op_call* call, px_plugin_error* err) {
#if defined(FAULT_OP_ERROR)
    (void)ctx, (void)call;
    return say(err, PX_ERROR_DEVICE, "simulated op failure");
#elif defined(FAULT_ODD_STATUS)
    (void)ctx, (void)call;
    return say(err, (px_status)77, "simulated status outside the ABI");
#elif defined(FAULT_THROWS)
    (void)ctx, (void)call, (void)err;
    THROW_IN("execute"); /* breaks the rule: nothing may cross as an exception */
    return PX_OK;
#elif defined(FAULT_ACCEPT_ALL)
    char msg[64];
    (void)ctx;
    if (getenv("FAULT_CRASH_IN_EXECUTE")) raise(SIGSEGV);
    snprintf(msg, sizeof msg, "%s reached the plugin", px_op_name(call->op));
    return say(err, PX_ERROR_DEVICE, msg);
#else
    const px_tensor_desc* o = &call->outputs[0];
    int64_t n = 1;
    for (int i = 0; i < o->ndim; ++i) n *= o->shape[i];
    float* out = (float*)(o->buffer->data + o->offset);
#ifdef FAULT_ASYNC
    snprintf(ctx->failure, sizeof ctx->failure, "%s failed on the device: simulated asynchronous failure",
             px_op_name(call->op));
    (void)n, (void)out, (void)err;
    return PX_OK;
#else
    (void)ctx, (void)err;
    if (call->op == PX_OP_FILL) {
        const px_fill_attrs* a = (const px_fill_attrs*)call->attrs;
        for (int64_t i = 0; i < n; ++i) out[i] = (float)a->value;
    } else if (call->op == PX_OP_ADD) { /* same shapes only in these tests */
        const float* x = (const float*)(call->inputs[0].buffer->data + call->inputs[0].offset);
        const float* y = (const float*)(call->inputs[1].buffer->data + call->inputs[1].offset);
        for (int64_t i = 0; i < n; ++i) out[i] = x[i] + y[i];
    } else if (call->op == PX_OP_COPY) {
        memcpy(out, call->inputs[0].buffer->data + call->inputs[0].offset, (size_t)n * 4);
    }
    return PX_OK;
#endif
#endif
}
static px_status synchronize(px_plugin_context* ctx, int32_t d, px_plugin_error* err) {
    (void)d;
    return take_failure(ctx, err);
}

#ifdef FAULT_COLLECTIVE
/* An all_reduce slot that cannot run (its "library" is missing) unless the
 * tensors have 3 rows, when it fails on the device. */
static px_status all_reduce(px_plugin_context* ctx, const px_collective_call* call, px_plugin_error* err) {
    const char* problem = px_collective_call_problem(call, 2);
    (void)ctx;
    if (problem) return say(err, PX_ERROR_INVALID_ARGUMENT, problem);
    if (call->tensors[0].ndim == 1 && call->tensors[0].shape[0] == 3)
        return say(err, PX_ERROR_DEVICE, "simulated collective failure");
    return say(err, PX_ERROR_UNSUPPORTED, "simulated: the collective library is missing");
}
#endif

#if defined(FAULT_GROUP) || defined(FAULT_PART_GROUP)
#include "group_slots.h"
#endif

#ifdef FAULT_PART_TRACE
static px_status trace_take(px_plugin_context* ctx, int32_t d, px_trace_span* spans, int32_t capacity,
                            int32_t* count, px_plugin_error* err) {
    (void)ctx, (void)d, (void)spans, (void)capacity, (void)err;
    *count = 0;
    return PX_OK;
}
#endif

#ifdef FAULT_NEWER_MINOR
/* A plugin built against a future minor: one more slot at the end. */
typedef struct {
    px_plugin_api base;
    px_status (*future_slot)(px_plugin_context*);
} newer_api;
static px_status future_slot(px_plugin_context* ctx) { (void)ctx; return PX_OK; }
#endif

#ifdef FAULT_NO_SYMBOL
__attribute__((unused))
#endif
static px_plugin_api table = {
    sizeof(px_plugin_api), PX_PLUGIN_ABI_MAJOR, PX_PLUGIN_ABI_MINOR, FAULT_NAME, "9.9.9",
    create, destroy, device_count, device_info, supports, buffer_alloc, buffer_free,
    copy_from_host, copy_to_host, copy_device, execute, synchronize,
    NULL, /* all_reduce (ABI 1.2): set by FAULT_COLLECTIVE */
    NULL, NULL, NULL, NULL, /* the process-group slots (ABI 1.3): set by FAULT_GROUP */
    NULL, NULL,             /* buffer_memory, buffer_wrap (ABI 1.5): DLPack copies */
    NULL, NULL, NULL,       /* trace_enable, execute_traced, trace_take (ABI 1.8): the host traces alone */
};

#ifndef FAULT_NO_SYMBOL
PX_PLUGIN_EXPORT const px_plugin_api* px_plugin_get_api(void) {
    THROW_IN("entry");
#if defined(FAULT_OTHER_MAJOR)
    table.abi_major = PX_PLUGIN_ABI_MAJOR + 1;
#elif defined(FAULT_NULL_TABLE)
    return NULL;
#elif defined(FAULT_SMALL_TABLE)
    table.struct_size = offsetof(px_plugin_api, execute);
#elif defined(FAULT_TINY_TABLE)
    table.struct_size = 4; /* not even the size, majors and minors */
#elif defined(FAULT_NO_NAME)
    table.name = "";
#elif defined(FAULT_RESERVED_NAME)
    table.name = "gpu"; /* its accelerators cannot be gpu(i) */
#elif defined(FAULT_ODD_NAME)
    table.name = "Odd Name 1.0"; /* nor Odd Name 1.0(i) */
#elif defined(FAULT_NULL_SLOT)
    table.copy_device = NULL;
#elif defined(FAULT_COLLECTIVE)
    table.all_reduce = all_reduce;
#elif defined(FAULT_GROUP)
    table.group_make_id = fault_group_make_id;
    table.group_join = fault_group_join;
    table.group_all_reduce = fault_group_all_reduce;
    table.group_leave = fault_group_leave;
#elif defined(FAULT_PART_GROUP)
    table.group_make_id = fault_group_make_id; /* one of the four */
#elif defined(FAULT_PART_TRACE)
    table.trace_take = trace_take; /* one of the three */
#elif defined(FAULT_OLDER_MINOR)
    table.abi_minor = 7;
#elif defined(FAULT_OLD_TABLE_JUNK)
    /* A 1.0 table that claims the whole size: what lies past its 1.0 slots
     * is not slots (here bytes that would crash a call through them). */
    table.abi_minor = 0;
    memset(&table.all_reduce, 0x01, sizeof table - offsetof(px_plugin_api, all_reduce));
#elif defined(FAULT_NEWER_MINOR)
    static newer_api bigger;
    bigger.base = table;
    bigger.base.struct_size = sizeof bigger;
    bigger.base.abi_minor = PX_PLUGIN_ABI_MINOR + 1;
    bigger.future_slot = future_slot;
    return &bigger.base;
#endif
    return &table;
}
#else
PX_PLUGIN_EXPORT int not_the_entry_symbol(void) { return 0; }
#endif

#ifdef FAULT_MISSING_DEP
extern int plexus_fault_dependency(void);
PX_PLUGIN_EXPORT int use_dependency(void) { return plexus_fault_dependency(); }
#endif
