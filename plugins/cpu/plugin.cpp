// The CPU plugin's entry points: PLEXUS_CPU_DEVICES devices, each with its own
// queue and allocator, sharing the machine's cores (OpenMP + OpenBLAS).
#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <system_error>
#include <string_view>
#include <thread>
#include <unordered_set>
#include <vector>

#include <omp.h>

#include "plexus/plugin_kit.hpp"
#include "plexus/plugin_kit_trace.hpp"

#include "allocator.hpp"
#include "conv_direct.hpp"
#include "device_queue.hpp"
#include "fork_guard.hpp"
#include "pinned_libraries.hpp"
#include "kernel_util.hpp"
#include "openblas.hpp"

#ifndef PLEXUS_CPU_PLUGIN_VERSION
#define PLEXUS_CPU_PLUGIN_VERSION "0.1.0"
#endif

namespace pxcpu {

struct Device {
    Allocator allocator;
    DeviceQueue queue;
    Device(int32_t index, uint64_t limit, int threads)
        : allocator(index, limit, &queue), queue(index, threads) {}  // the queue is used only once made
};

}  // namespace pxcpu

struct px_plugin_context {
    std::vector<std::unique_ptr<pxcpu::Device>> devices;
    bool fused_ops = true;  // PLEXUS_CPU_FUSED=off hides the fused ops of ABI 1.4
    uint64_t generation = 0;  // the fork generation it was made in (fork_guard.hpp)
    int threads = 0;          // each device's OpenMP team (0: every core)
    // Wrapped (foreign) buffers not yet freed, released by destroy if the host never frees them.
    std::mutex foreign_mutex;
    std::unordered_set<px_plugin_buffer*> foreign;
};

namespace {

using namespace pxcpu;

using plexus::kit::report;

// The kernels, less the optional (fused) ops when PLEXUS_CPU_FUSED=off (so
// that the frontend's unfused path is tested and timed on the same machine).
bool offers(const px_plugin_context* ctx, int32_t op, int32_t dtype) {
    if (!kernel_supports(op, dtype)) return false;
    return ctx->fused_ops || !(px_op_row_of(op)->flags & PX_OP_FLAG_OPTIONAL);
}

// Every entry point runs inside this: no exception crosses the boundary.
template <class F>
px_status safely(px_plugin_error* err, F&& body) noexcept {
    return plexus::kit::guard(err, std::forward<F>(body));
}

// Whether ctx's devices can work in this process (fork_guard.hpp): not
// when made before a fork (their workers and locks are the parent's).
bool usable_here(const px_plugin_context* ctx) { return !ctx || ctx->generation == fork_generation(); }

px_status refuse_forked(px_plugin_error* err) { return plexus::kit::refuse_in_child(err, "cpu"); }

Device* device_at(px_plugin_context* ctx, int32_t index) {
    if (!ctx || index < 0 || static_cast<size_t>(index) >= ctx->devices.size()) return nullptr;
    return ctx->devices[index].get();
}

px_status bad_device(px_plugin_error* err, int32_t index) { return plexus::kit::no_device(err, "cpu", index); }

px_status create(px_plugin_context** out, px_plugin_error* err) {
    return safely(err, [&] {
        if (!out) return report(err, PX_ERROR_INVALID_ARGUMENT, "out is NULL");
        if (const px_status st = refuse_wrong_kernel_lists(err)) return st;
        int count = 1;
        if (const char* env = std::getenv("PLEXUS_CPU_DEVICES")) {
            char* end = nullptr;
            long v = std::strtol(env, &end, 10);
            if (*env < '0' || *env > '9' || *end != '\0' || v < 1 || v > 64)  // digits only, as for the limit
                return report(err, PX_ERROR_INVALID_ARGUMENT,
                              std::string("PLEXUS_CPU_DEVICES='") + env + "' is not a number of devices in 1..64");
            count = static_cast<int>(v);
        }
        uint64_t limit = 0;
        if (const char* env = std::getenv("PLEXUS_CPU_MEMORY_LIMIT")) {
            bool ok = false;
            limit = parse_bytes(env, ok);
            if (!ok)
                return report(err, PX_ERROR_INVALID_ARGUMENT,
                              std::string("PLEXUS_CPU_MEMORY_LIMIT='") + env + "' is not a size (e.g. 512M, 2G, 1048576)");
        }
        auto ctx = std::make_unique<px_plugin_context>();
        ctx->generation = fork_generation();
        std::string why;
        const char* isa = std::getenv("PLEXUS_CPU_ISA");
        if (!select_direct_conv_isa(isa ? isa : "", why)) return report(err, PX_ERROR_INVALID_ARGUMENT, why);
        const char* conv = std::getenv("PLEXUS_CPU_CONV");
        if (!select_conv_path(conv ? conv : "", why)) return report(err, PX_ERROR_INVALID_ARGUMENT, why);
        if (const char* fused = std::getenv("PLEXUS_CPU_FUSED")) {
            const std::string v = fused;
            if (v != "on" && v != "off")
                return report(err, PX_ERROR_INVALID_ARGUMENT, "PLEXUS_CPU_FUSED='" + v + "' is not on or off");
            ctx->fused_ops = v == "on";
        }
        if (!pin_runtime_libraries(why)) return report(err, PX_ERROR_INTERNAL, why);
        if (const px_status s = load_openblas(why)) return report(err, s, why);
        // With several devices each gets its share of the cores; one device gets them all.
        const int threads = count > 1 ? std::max(1, omp_get_max_threads() / count) : 0;
        ctx->threads = threads;
        // OpenBLAS sizes its teams from its own global setting, not the
        // calling thread's: left at every core, each device's products start
        // a team of all cores whose spinning threads take the cores the other
        // devices compute on (a two-device LeNet epoch: 4.0 s, 2.5 s with this).
        if (const px_status s = openblas_use_threads(threads > 0 ? threads : omp_get_max_threads(), why))
            return report(err, s, why);
        for (int i = 0; i < count; ++i) ctx->devices.push_back(std::make_unique<Device>(i, limit, threads));
        *out = ctx.release();
        return PX_OK;
    });
}

// Hands a wrapped buffer's memory back to its owner, once (ABI 1.5).
void release_foreign(px_plugin_buffer* b) noexcept {
    if (b->release) b->release(b->release_context);
    delete b;
}

void destroy(px_plugin_context* ctx) {
    if (!ctx) return;
    // Made before a fork: its workers are in the parent, and joining or
    // waiting for them would hang; the child's copy goes with the child.
    if (ctx->generation != fork_generation()) return;
    for (auto& d : ctx->devices) d->queue.wait();
    for (px_plugin_buffer* b : ctx->foreign) release_foreign(b);  // never freed by the host
    delete ctx;
}

px_status device_count(px_plugin_context* ctx, int32_t* count, px_plugin_error* err) {
    if (!ctx || !count) return report(err, PX_ERROR_INVALID_ARGUMENT, "NULL argument");
    *count = static_cast<int32_t>(ctx->devices.size());
    return PX_OK;
}

px_status device_info(px_plugin_context* ctx, int32_t index, px_device_info* info, px_plugin_error* err) {
    return safely(err, [&] {
        Device* d = device_at(ctx, index);
        if (!d) return bad_device(err, index);
        if (!info) return report(err, PX_ERROR_INVALID_ARGUMENT, "info is NULL");
        if (!usable_here(ctx)) return refuse_forked(err);  // the allocator's lock may be held in the parent
        px_device_info mine;
        std::memset(&mine, 0, sizeof mine);
        mine.struct_size = sizeof mine;
        mine.kind = PX_DEVICE_CPU;
        // The threads this device computes with: its share of the cores when there are several.
        const int threads = ctx->threads > 0 ? ctx->threads : omp_get_max_threads();
        std::snprintf(mine.name, sizeof mine.name, "CPU (%d thread%s, %s loops, %s)", threads, threads == 1 ? "" : "s",
                      direct_conv_isa().name, openblas().get_config());
        MemoryFigures f = d->allocator.figures();
        mine.memory_total = f.total;
        mine.memory_free = f.free;
        mine.memory_in_use = f.in_use;
        mine.memory_reserved = f.reserved;
        mine.memory_peak = f.peak;
        return plexus::kit::copy_device_info(mine, info, err);
    });
}

int32_t supports(px_plugin_context* ctx, int32_t device, int32_t op, int32_t dtype) {
    if (!device_at(ctx, device)) return 0;
    return offers(ctx, op, dtype) ? 1 : 0;
}

px_status buffer_alloc(px_plugin_context* ctx, int32_t device, uint64_t bytes, px_plugin_buffer** out,
                       px_plugin_error* err) {
    return safely(err, [&] {
        Device* d = device_at(ctx, device);
        if (!d) return bad_device(err, device);
        if (!out) return report(err, PX_ERROR_INVALID_ARGUMENT, "out is NULL");
        if (!usable_here(ctx)) return refuse_forked(err);
        std::string why;
        px_plugin_buffer* b = d->allocator.allocate(bytes, why);
        if (!b) return report(err, PX_ERROR_OUT_OF_MEMORY, why);
        *out = b;
        return PX_OK;
    });
}

px_status buffer_free(px_plugin_context* ctx, px_plugin_buffer* buffer, px_plugin_error* err) {
    Device* d = buffer ? device_at(ctx, buffer->device) : nullptr;
    if (!d) return report(err, PX_ERROR_INVALID_ARGUMENT, "not a buffer of this plugin");
    if (ctx->generation != fork_generation()) return PX_OK;  // the parent's: goes with the child
    if (buffer->foreign) {
        {
            std::lock_guard<std::mutex> lock(ctx->foreign_mutex);
            if (ctx->foreign.erase(buffer) == 0) return report(err, PX_ERROR_INVALID_ARGUMENT, "not a buffer of this plugin");
        }
        // Never cached: the memory goes back to its owner once the ops queued
        // before this free have run (waited for here; no lock of ours is held).
        d->queue.wait_until_completed(d->queue.queued());
        release_foreign(buffer);
        return PX_OK;
    }
    d->allocator.release(buffer);  // cached at once, freed after its ops: see allocator.hpp
    return PX_OK;
}

// ABI 1.5: a buffer's bytes are host memory, shared as they are.
px_status buffer_memory(px_plugin_context* ctx, px_plugin_buffer* buffer, px_buffer_memory* mem, px_plugin_error* err) {
    Device* d = buffer ? device_at(ctx, buffer->device) : nullptr;
    if (!d) return report(err, PX_ERROR_INVALID_ARGUMENT, "not a buffer of this plugin");
    if (!mem || mem->struct_size < offsetof(px_buffer_memory, release))
        return report(err, PX_ERROR_INVALID_ARGUMENT, "mem is NULL or smaller than ABI 1.5's px_buffer_memory");
    mem->memory_kind = PX_MEMORY_HOST;
    mem->device_id = 0;
    mem->address = buffer->data;
    mem->bytes = buffer->bytes;
    return PX_OK;
}

// ABI 1.5: host memory of another runtime as a buffer, never cached.
px_status buffer_wrap(px_plugin_context* ctx, int32_t device, const px_buffer_memory* mem, px_plugin_buffer** out,
                      px_plugin_error* err) {
    return safely(err, [&] {
        if (!device_at(ctx, device)) return bad_device(err, device);
        if (!out) return report(err, PX_ERROR_INVALID_ARGUMENT, "out is NULL");
        if (!mem || mem->struct_size < sizeof(px_buffer_memory))
            return report(err, PX_ERROR_INVALID_ARGUMENT, "mem is NULL or smaller than ABI 1.5's px_buffer_memory");
        if (mem->memory_kind != PX_MEMORY_HOST)
            return report(err, PX_ERROR_UNSUPPORTED, "memory of kind " + std::to_string(mem->memory_kind) +
                                                         " is not host memory (PX_MEMORY_HOST), the only kind a CPU device reads");
        if (mem->bytes && !mem->address) return report(err, PX_ERROR_INVALID_ARGUMENT, "address is NULL");
        if (!usable_here(ctx)) return refuse_forked(err);
        auto b = std::make_unique<px_plugin_buffer>();
        b->data = static_cast<char*>(mem->address);
        b->bytes = mem->bytes;
        b->class_size = 0;
        b->device = device;
        b->released_at = 0;
        b->foreign = true;
        b->release = mem->release;
        b->release_context = mem->release_context;
        std::lock_guard<std::mutex> lock(ctx->foreign_mutex);
        ctx->foreign.insert(b.get());
        *out = b.release();
        return PX_OK;
    });
}

bool in_bounds(const px_plugin_buffer* b, uint64_t offset, uint64_t bytes) {
    return offset <= b->bytes && bytes <= b->bytes - offset;
}

px_status out_of_bounds(px_plugin_error* err, const px_plugin_buffer* b, uint64_t offset, uint64_t bytes) {
    return report(err, PX_ERROR_INVALID_ARGUMENT,
                  "copy of " + std::to_string(bytes) + " bytes at offset " + std::to_string(offset) +
                      " runs past a buffer of " + std::to_string(b->bytes) + " bytes");
}

px_status copy_from_host(px_plugin_context* ctx, px_plugin_buffer* dst, uint64_t offset, const void* src,
                         uint64_t bytes, px_plugin_error* err) {
    return safely(err, [&] {
        Device* d = dst ? device_at(ctx, dst->device) : nullptr;
        if (!d) return report(err, PX_ERROR_INVALID_ARGUMENT, "not a buffer of this plugin");
        if (!in_bounds(dst, offset, bytes)) return out_of_bounds(err, dst, offset, bytes);
        if (bytes && !src) return report(err, PX_ERROR_INVALID_ARGUMENT, "src is NULL");
        if (!usable_here(ctx)) return refuse_forked(err);
        if (d->queue.idle()) {  // nothing queued can touch dst: copy now
            plexus::kit::TraceStamp stamp(d->queue.trace(), 0, 0, bytes);
            std::memcpy(dst->data + offset, src, bytes);
            return PX_OK;
        }
        // Work is queued: stage the bytes so `src` may be reused at once.
        void* staging = std::malloc(bytes ? bytes : 1);
        if (!staging) return report(err, PX_ERROR_OUT_OF_MEMORY, "no host memory to stage " + std::to_string(bytes) + " bytes");
        std::memcpy(staging, src, bytes);
        Task t;
        t.kind = Task::copy;
        t.src = staging;
        t.dst = dst->data + offset;
        t.bytes = bytes;
        t.staging = staging;
        d->queue.push(t);
        return PX_OK;
    });
}

px_status wait_device(Device* d, px_plugin_error* err) {
    char failure[PX_MESSAGE_MAX];
    const px_status status = d->queue.wait(failure, sizeof failure);
    return status == PX_OK ? PX_OK : report(err, status, failure);
}

px_status copy_to_host(px_plugin_context* ctx, px_plugin_buffer* src, uint64_t offset, void* dst, uint64_t bytes,
                       px_plugin_error* err) {
    return safely(err, [&] {
        Device* d = src ? device_at(ctx, src->device) : nullptr;
        if (!d) return report(err, PX_ERROR_INVALID_ARGUMENT, "not a buffer of this plugin");
        if (!in_bounds(src, offset, bytes)) return out_of_bounds(err, src, offset, bytes);
        if (bytes && !dst) return report(err, PX_ERROR_INVALID_ARGUMENT, "dst is NULL");
        if (!usable_here(ctx)) return refuse_forked(err);
        px_status s = wait_device(d, err);
        if (s != PX_OK) return s;
        plexus::kit::TraceStamp stamp(d->queue.trace(), 0, 0, bytes);
        std::memcpy(dst, src->data + offset, bytes);
        return PX_OK;
    });
}

px_status copy_device(px_plugin_context* ctx, px_plugin_buffer* src, uint64_t src_offset, px_plugin_buffer* dst,
                      uint64_t dst_offset, uint64_t bytes, px_plugin_error* err) {
    return safely(err, [&] {
        Device* from = src ? device_at(ctx, src->device) : nullptr;
        Device* to = dst ? device_at(ctx, dst->device) : nullptr;
        if (!from || !to) return report(err, PX_ERROR_INVALID_ARGUMENT, "not a buffer of this plugin");
        if (!in_bounds(src, src_offset, bytes)) return out_of_bounds(err, src, src_offset, bytes);
        if (!in_bounds(dst, dst_offset, bytes)) return out_of_bounds(err, dst, dst_offset, bytes);
        if (!usable_here(ctx)) return refuse_forked(err);
        Task t;
        t.kind = Task::copy;
        t.src = src->data + src_offset;
        t.dst = dst->data + dst_offset;
        t.bytes = bytes;
        if (from == to) {
            to->queue.push(t);
            return PX_OK;
        }
        // Two devices: the source must be complete, and the source's later
        // frees must not overtake the copy, so copy now after both drain.
        // The source's wait reports its failure instead of copying: the
        // values it spoiled would reach a device whose waits cannot tell. The
        // destination's failure stays for its own next wait.
        if (const px_status s = wait_device(from, err)) return s;
        to->queue.drain();
        plexus::kit::TraceStamp stamp(to->queue.trace(), 0, 0, bytes);
        std::memcpy(t.dst, t.src, bytes);
        return PX_OK;
    });
}

void buffer_facts(const px_plugin_buffer* b, int32_t* device, uint64_t* bytes) {
    *device = b->device;
    *bytes = b->bytes;
}

// Reads a desc px_op_call_check has passed.
void to_operand(const px_tensor_desc& d, Operand& o) {
    o.dtype = d.dtype;
    o.data = d.buffer->data + d.offset;
    o.ndim = d.ndim;
    for (int i = 0; i < d.ndim; ++i) o.shape[i] = d.shape[i], o.strides[i] = d.strides[i];
}

// execute, and ABI 1.8's execute_traced with the op's trace id.
px_status submit(px_plugin_context* ctx, const px_op_call* call, uint64_t trace_id, px_plugin_error* err) {
    return safely(err, [&] {
        const px_status form = px_op_call_check(call, ctx ? int32_t(ctx->devices.size()) : 0, buffer_facts, err);
        if (form != PX_OK) return form;
        Device* d = device_at(ctx, call->device);
        if (!d) return bad_device(err, call->device);  // checked above; says so to the analyzer too
        Task t;
        OpTask& op = t.op_task;
        op.op = call->op;
        op.scratch = &d->allocator;
        op.num_inputs = call->num_inputs;
        for (int i = 0; i < call->num_inputs; ++i) to_operand(call->inputs[i], op.in[i]);
        op.num_outputs = call->num_outputs;
        to_operand(call->outputs[0], op.out);
        if (op.num_outputs == 2) to_operand(call->outputs[1], op.out2);
        if (call->attrs) {
            const uint32_t size = *static_cast<const uint32_t*>(call->attrs);
            std::memcpy(&op.attrs, call->attrs, size < sizeof op.attrs ? size : sizeof op.attrs);
            op.has_attrs = true;
        }
        const int32_t dtype = px_op_call_dtype(call);
        if (!offers(ctx, call->op, dtype))
            return report(err, PX_ERROR_UNSUPPORTED,
                          std::string(px_op_name(call->op)) + " on " + px_dtype_name(dtype) + " is not implemented");
        if (px_op_call_writes_nothing(call)) return PX_OK;
        if (!usable_here(ctx)) return refuse_forked(err);
        d->queue.push(t, trace_id);
        return PX_OK;
    });
}

px_status execute(px_plugin_context* ctx, const px_op_call* call, px_plugin_error* err) {
    return submit(ctx, call, 0, err);
}

px_status synchronize(px_plugin_context* ctx, int32_t device, px_plugin_error* err) {
    return safely(err, [&] {
        Device* d = device_at(ctx, device);
        if (!d) return bad_device(err, device);
        if (!usable_here(ctx)) return refuse_forked(err);
        return wait_device(d, err);
    });
}

// Every device drains, then the sum is formed in device order and written to
// every tensor, so all of them hold the same bits. Synchronous, like a copy
// between two devices: a CPU device has nothing to overlap it with.
px_status all_reduce(px_plugin_context* ctx, const px_collective_call* call, px_plugin_error* err) {
    return safely(err, [&] {
        if (!ctx) return report(err, PX_ERROR_INVALID_ARGUMENT, "ctx is NULL");
        if (const char* problem = px_collective_call_problem(call, int32_t(ctx->devices.size())))
            return report(err, PX_ERROR_INVALID_ARGUMENT, std::string("all_reduce: ") + problem);
        std::vector<Operand> parts(call->count);
        for (int32_t i = 0; i < call->count; ++i) {
            const px_tensor_desc& t = call->tensors[i];
            if (t.buffer->device != call->devices[i])
                return report(err, PX_ERROR_INVALID_ARGUMENT, "all_reduce: tensor " + std::to_string(i) +
                                                                  " is not on device " + std::to_string(call->devices[i]));
            to_operand(t, parts[i]);
            uint64_t size = uint64_t(parts[i].numel()) * px_dtype_size(t.dtype);
            if (!in_bounds(t.buffer, t.offset, size)) return out_of_bounds(err, t.buffer, t.offset, size);
        }
        if (!usable_here(ctx)) return refuse_forked(err);
        // Every device's earlier work done, and a failure of it reported
        // instead of summing (each tensor is a source: a spoiled value would
        // reach every device). The sum writes nothing until then.
        for (int32_t i = 0; i < call->count; ++i)
            if (const px_status s = wait_device(ctx->devices[call->devices[i]].get(), err)) return s;
        const int64_t n = parts[0].numel();
        // On the caller's thread, with a device's team as it runs (not the
        // caller's OpenMP setting): one thread each when devices share the
        // cores, which also keeps a forked child off its parent's stale team.
        const int team = n >= parallel_grain ? (ctx->threads > 0 ? ctx->threads : omp_get_max_threads()) : 1;
        with_dtype(parts[0].dtype, [&](auto zero) {
            using T = decltype(zero);
#pragma omp parallel for schedule(static) num_threads(team) if (team > 1)
            for (int64_t k = 0; k < n; ++k) {
                T acc = reinterpret_cast<const T*>(parts[0].data)[k];
                for (size_t i = 1; i < parts.size(); ++i) acc += reinterpret_cast<const T*>(parts[i].data)[k];
                for (auto& p : parts) reinterpret_cast<T*>(p.data)[k] = acc;
            }
        });
        return PX_OK;
    });
}

// ---- ABI 1.8: when each op and copy ran, for the host's trace ----

px_status trace_enable(px_plugin_context* ctx, int32_t device, int32_t on, px_plugin_error* err) {
    return safely(err, [&] {
        Device* d = device_at(ctx, device);
        if (!d) return bad_device(err, device);
        if (!usable_here(ctx)) return refuse_forked(err);  // (its drain would wait for the parent's workers)
        if (on) d->queue.drain();  // work queued before the trace began gets no span (plugin.h)
        d->queue.trace().enable(on != 0);
        return PX_OK;
    });
}

px_status execute_traced(px_plugin_context* ctx, const px_op_call* call, uint64_t trace_id, px_plugin_error* err) {
    return submit(ctx, call, trace_id, err);
}

px_status trace_take(px_plugin_context* ctx, int32_t device, px_trace_span* spans, int32_t capacity, int32_t* count,
                     px_plugin_error* err) {
    return safely(err, [&] {
        Device* d = device_at(ctx, device);
        if (!d) return bad_device(err, device);
        if (!usable_here(ctx)) return refuse_forked(err);  // (the trace's lock may be held in the parent)
        return d->queue.trace().take(spans, capacity, count, err);
    });
}

const px_plugin_api api_table = {
    sizeof(px_plugin_api),
    PX_PLUGIN_ABI_MAJOR,
    PX_PLUGIN_ABI_MINOR,
    "cpu",
    PLEXUS_CPU_PLUGIN_VERSION,
    create,
    destroy,
    device_count,
    device_info,
    supports,
    buffer_alloc,
    buffer_free,
    copy_from_host,
    copy_to_host,
    copy_device,
    execute,
    synchronize,
    all_reduce,
    // ABI 1.3 process groups: not offered. Between processes on CPUs,
    // libplexus-mpi sums through MPI on host memory, which is what a CPU
    // group would do anyway.
    nullptr,
    nullptr,
    nullptr,
    nullptr,
    // ABI 1.5: DLPack shares CPU tensors' memory as it is.
    buffer_memory,
    buffer_wrap,
    // ABI 1.8: the trace slots.
    trace_enable,
    execute_traced,
    trace_take,
};

}  // namespace

extern "C" PX_PLUGIN_EXPORT const px_plugin_api* px_plugin_get_api(void) { return &api_table; }
