// plexus-threads: an example Plexus plugin, written against the installed
// headers only. Each device is one worker thread with its own arena of
// memory; see README.md for the walkthrough.
//
//   PLEXUS_THREADS_DEVICES   how many devices (1..16, default 2)
//   PLEXUS_THREADS_MEMORY_MB each device's arena in MiB (1..65536, default 256)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "plexus/plugin_kit.hpp"

#include "arena.hpp"
#include "kernels.hpp"
#include "worker.hpp"

namespace threads_plugin {

struct Device {
    Arena arena;
    Worker worker;  // declared after the arena: it is stopped (drained) first
    explicit Device(uint64_t bytes) : arena(bytes) {}
};

}  // namespace threads_plugin

struct px_plugin_context {
    std::vector<std::unique_ptr<threads_plugin::Device>> devices;
    uint64_t generation = plexus::kit::fork_generation();  // the process it was made in
};

namespace {

using threads_plugin::Device;

px_status fail(px_plugin_error* err, px_status status, const std::string& message) {
    return plexus::kit::report(err, status, "threads plugin: " + message);
}

// No exception crosses the boundary (the kit's guard).
template <class F>
px_status guarded(px_plugin_error* err, F&& body) noexcept {
    return plexus::kit::guard(err, std::forward<F>(body));
}

Device* device_at(px_plugin_context* ctx, int32_t index) {
    if (!ctx || index < 0 || static_cast<size_t>(index) >= ctx->devices.size()) return nullptr;
    return ctx->devices[index].get();
}

// A forked child of the process that made `ctx`: its workers stayed in the
// parent (plugin_kit.hpp, "fork()"), so its devices refuse work here.
bool forked(const px_plugin_context* ctx) { return ctx && ctx->generation != plexus::kit::fork_generation(); }
px_status refuse_in_child(px_plugin_error* err) { return plexus::kit::refuse_in_child(err, "threads"); }

// A positive integer from the environment, or `fallback`; false when malformed.
bool env_number(const char* name, long lo, long hi, long fallback, long& out) {
    out = fallback;
    const char* text = std::getenv(name);
    if (!text) return true;
    char* end = nullptr;
    out = std::strtol(text, &end, 10);
    return end != text && *end == '\0' && out >= lo && out <= hi;
}

px_status create(px_plugin_context** out, px_plugin_error* err) {
    return guarded(err, [&] {
        if (!out) return fail(err, PX_ERROR_INVALID_ARGUMENT, "create: out is NULL");
        if (const px_status st = threads_plugin::refuse_wrong_kernel_list(err)) return st;
        long count = 0, mib = 0;
        if (!env_number("PLEXUS_THREADS_DEVICES", 1, 16, 2, count))
            return fail(err, PX_ERROR_INVALID_ARGUMENT, "PLEXUS_THREADS_DEVICES must be a number in 1..16");
        if (!env_number("PLEXUS_THREADS_MEMORY_MB", 1, 65536, 256, mib))
            return fail(err, PX_ERROR_INVALID_ARGUMENT, "PLEXUS_THREADS_MEMORY_MB must be a number in 1..65536");
        auto ctx = std::make_unique<px_plugin_context>();
        for (long i = 0; i < count; ++i) ctx->devices.push_back(std::make_unique<Device>(uint64_t(mib) << 20));
        *out = ctx.release();
        return PX_OK;
    });
}

void destroy(px_plugin_context* ctx) {
    if (!forked(ctx)) delete ctx;  // in a child it goes with the process: its workers cannot be joined there
}

px_status device_count(px_plugin_context* ctx, int32_t* count, px_plugin_error* err) {
    if (!ctx || !count) return fail(err, PX_ERROR_INVALID_ARGUMENT, "device_count: NULL argument");
    *count = static_cast<int32_t>(ctx->devices.size());
    return PX_OK;
}

px_status device_info(px_plugin_context* ctx, int32_t index, px_device_info* info, px_plugin_error* err) {
    return guarded(err, [&] {
        Device* dev = device_at(ctx, index);
        if (!dev) return fail(err, PX_ERROR_NO_DEVICE, "no device " + std::to_string(index));
        if (forked(ctx)) return refuse_in_child(err);  // (the arena's lock may be held in the parent)
        px_device_info mine{};
        mine.struct_size = sizeof mine;
        const uint64_t in_use = dev->arena.in_use();
        mine.kind = PX_DEVICE_ACCELERATOR;
        std::snprintf(mine.name, sizeof mine.name, "worker thread %d (%llu MiB arena)", index,
                      static_cast<unsigned long long>(dev->arena.capacity() >> 20));
        mine.memory_total = dev->arena.capacity();
        mine.memory_free = dev->arena.capacity() - in_use;
        mine.memory_in_use = in_use;
        mine.memory_reserved = in_use;
        mine.memory_peak = dev->arena.peak();
        // As far as the caller's struct_size reaches: an older, smaller struct too.
        return plexus::kit::copy_device_info(mine, info, err);
    });
}

int32_t supports(px_plugin_context* ctx, int32_t index, int32_t op, int32_t dtype) {
    return device_at(ctx, index) && threads_plugin::supported(op, dtype) ? 1 : 0;
}

px_status buffer_alloc(px_plugin_context* ctx, int32_t index, uint64_t bytes, px_plugin_buffer** out,
                       px_plugin_error* err) {
    return guarded(err, [&] {
        Device* dev = device_at(ctx, index);
        if (!dev) return fail(err, PX_ERROR_NO_DEVICE, "no device " + std::to_string(index));
        if (!out) return fail(err, PX_ERROR_INVALID_ARGUMENT, "buffer_alloc: out is NULL");
        if (forked(ctx)) return refuse_in_child(err);  // (the arena's lock may be held in the parent)
        char* data = dev->arena.allocate(bytes);
        if (!data)
            return fail(err, PX_ERROR_OUT_OF_MEMORY,
                        "out of memory on device " + std::to_string(index) + ": asked for " + std::to_string(bytes) +
                            " bytes; " + std::to_string(dev->arena.in_use()) + " of " +
                            std::to_string(dev->arena.capacity()) + " in use, largest free range " +
                            std::to_string(dev->arena.largest_free()));
        *out = new px_plugin_buffer{data, bytes, index};
        return PX_OK;
    });
}

px_status buffer_free(px_plugin_context* ctx, px_plugin_buffer* buffer, px_plugin_error* err) {
    return guarded(err, [&] {
        if (!buffer) return fail(err, PX_ERROR_INVALID_ARGUMENT, "buffer_free: buffer is NULL");
        Device* dev = device_at(ctx, buffer->device);
        if (!dev) return fail(err, PX_ERROR_INVALID_ARGUMENT, "buffer_free: not a buffer of this plugin");
        if (forked(ctx)) return PX_OK;  // the parent's memory: it goes with the child
        // Ordered after the work already queued that may still read it.
        dev->worker.submit([dev, buffer] {
            dev->arena.release(buffer->data);
            delete buffer;
            return std::string();
        });
        return PX_OK;
    });
}

// A range of a buffer, checked without overflow.
bool range_ok(const px_plugin_buffer* b, uint64_t offset, uint64_t bytes) {
    return b && offset <= b->bytes && bytes <= b->bytes - offset;
}

px_status device_failed(px_plugin_error* err, const std::string& failure) {
    return fail(err, PX_ERROR_DEVICE, failure);
}

px_status copy_from_host(px_plugin_context* ctx, px_plugin_buffer* dst, uint64_t dst_offset, const void* src,
                         uint64_t bytes, px_plugin_error* err) {
    return guarded(err, [&] {
        if (!range_ok(dst, dst_offset, bytes) || (!src && bytes))
            return fail(err, PX_ERROR_INVALID_ARGUMENT, "copy_from_host: NULL pointer or range outside the buffer");
        Device* dev = device_at(ctx, dst->device);
        if (!dev) return fail(err, PX_ERROR_INVALID_ARGUMENT, "copy_from_host: not a buffer of this plugin");
        if (forked(ctx)) return refuse_in_child(err);
        // Staged, so `src` may be reused as soon as we return.
        auto staged = std::make_shared<std::vector<char>>(static_cast<const char*>(src),
                                                          static_cast<const char*>(src) + bytes);
        dev->worker.submit([dst, dst_offset, staged] {
            if (!staged->empty()) std::memcpy(dst->data + dst_offset, staged->data(), staged->size());
            return std::string();
        });
        return PX_OK;
    });
}

px_status copy_to_host(px_plugin_context* ctx, px_plugin_buffer* src, uint64_t src_offset, void* dst,
                       uint64_t bytes, px_plugin_error* err) {
    return guarded(err, [&] {
        if (!range_ok(src, src_offset, bytes) || (!dst && bytes))
            return fail(err, PX_ERROR_INVALID_ARGUMENT, "copy_to_host: NULL pointer or range outside the buffer");
        Device* dev = device_at(ctx, src->device);
        if (!dev) return fail(err, PX_ERROR_INVALID_ARGUMENT, "copy_to_host: not a buffer of this plugin");
        if (forked(ctx)) return refuse_in_child(err);
        std::string failure = dev->worker.wait();
        if (!failure.empty()) return device_failed(err, failure);
        if (bytes) std::memcpy(dst, src->data + src_offset, bytes);
        return PX_OK;
    });
}

px_status copy_device(px_plugin_context* ctx, px_plugin_buffer* src, uint64_t src_offset, px_plugin_buffer* dst,
                      uint64_t dst_offset, uint64_t bytes, px_plugin_error* err) {
    return guarded(err, [&] {
        if (!range_ok(src, src_offset, bytes) || !range_ok(dst, dst_offset, bytes))
            return fail(err, PX_ERROR_INVALID_ARGUMENT, "copy_device: NULL buffer or range outside a buffer");
        Device* from = device_at(ctx, src->device);
        Device* to = device_at(ctx, dst->device);
        if (!from || !to) return fail(err, PX_ERROR_INVALID_ARGUMENT, "copy_device: not a buffer of this plugin");
        if (forked(ctx)) return refuse_in_child(err);
        // Both queues drain, so the copy sees every earlier write and comes
        // before every later op on either device. The source's failure is
        // reported instead of copying (the values it spoiled would reach a
        // device whose waits cannot tell); the destination's stays for its
        // next synchronize.
        const std::string failure = from->worker.wait();
        if (!failure.empty()) return device_failed(err, failure);
        if (to != from) to->worker.drain();
        if (bytes) std::memmove(dst->data + dst_offset, src->data + src_offset, bytes);
        return PX_OK;
    });
}

void buffer_facts(const px_plugin_buffer* b, int32_t* device, uint64_t* bytes) {
    *device = b->device;
    *bytes = b->bytes;
}

px_status execute(px_plugin_context* ctx, const px_op_call* call, px_plugin_error* err) {
    return guarded(err, [&] {
        // The ABI's own check of the call's form, before any operand is read.
        const px_status form = px_op_call_check(call, ctx ? int32_t(ctx->devices.size()) : 0, buffer_facts, err);
        if (form != PX_OK) return form;
        Device* dev = device_at(ctx, call->device);
        const threads_plugin::Refusal refusal = threads_plugin::check_call(*call);
        if (refusal.status != PX_OK) return fail(err, refusal.status, refusal.why);
        if (px_op_call_writes_nothing(call)) return PX_OK;  // nothing to compute
        if (forked(ctx)) return refuse_in_child(err);
        auto work = std::make_shared<threads_plugin::Work>(threads_plugin::capture(*call));
        dev->worker.submit([work] {
            try {
                threads_plugin::run(*work);
            } catch (const std::exception& e) {
                threads_plugin::fill_failed_outputs(*work);
                return std::string(px_op_name(work->op)) + " failed: " + e.what();
            }
            return std::string();
        });
        return PX_OK;
    });
}

px_status synchronize(px_plugin_context* ctx, int32_t index, px_plugin_error* err) {
    return guarded(err, [&] {
        Device* dev = device_at(ctx, index);
        if (!dev) return fail(err, PX_ERROR_NO_DEVICE, "no device " + std::to_string(index));
        if (forked(ctx)) return refuse_in_child(err);
        std::string failure = dev->worker.wait();
        return failure.empty() ? PX_OK : device_failed(err, failure);
    });
}

const px_plugin_api table = {
    sizeof(px_plugin_api), PX_PLUGIN_ABI_MAJOR, PX_PLUGIN_ABI_MINOR, "threads", "1.0.0",
    create, destroy, device_count, device_info, supports,
    buffer_alloc, buffer_free, copy_from_host, copy_to_host, copy_device,
    execute, synchronize,
    nullptr,  // all_reduce (ABI 1.2): not offered; the host falls back to copies and adds
    nullptr, nullptr, nullptr, nullptr,  // process groups (ABI 1.3): not offered
    nullptr, nullptr,  // buffer_memory, buffer_wrap (ABI 1.5): not offered; DLPack copies
    nullptr, nullptr, nullptr,  // trace slots (ABI 1.8): not offered; a trace shows the host's side
};

}  // namespace

extern "C" PX_PLUGIN_EXPORT const px_plugin_api* px_plugin_get_api(void) { return &table; }
