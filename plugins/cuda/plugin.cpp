// The CUDA plugin's entry points: one device per visible GPU, each with its
// own stream, memory pool and cuBLAS handle (device.hpp). Ops are queued and
// return at once; errors found on the GPU come back at the next wait. With no
// driver or no GPU the plugin still loads and says why it has no devices.
#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <string_view>
#include <vector>

#include "plexus/plugin_kit.hpp"

#include "collective.hpp"
#include "cuda_check.hpp"
#include "device.hpp"
#include "probe.hpp"
#include "process_group.hpp"
#include "shutdown.hpp"
#include "test_hook.hpp"
#include "trace_events.hpp"

#ifndef PLEXUS_CUDA_PLUGIN_VERSION
#define PLEXUS_CUDA_PLUGIN_VERSION "0.1.0"
#endif

struct px_plugin_context {
    std::vector<std::unique_ptr<pxcuda::Device>> devices;
    std::vector<std::unique_ptr<pxcuda::EventTrace>> traces;  // one per device (ABI 1.8); destroyed before them
    bool test_hooks = false;  // PLEXUS_CUDA_TEST_HOOKS=1 at creation (test_hook.hpp)
    std::string no_devices_reason;  // why there are none, when there are none
    pxcuda::Collectives collectives;  // declared after devices: destroyed before them
    // Wrapped (foreign) buffers not yet freed (ABI 1.5): destroy releases them.
    std::mutex foreign_mutex;
    std::vector<px_plugin_buffer*> foreign;
};

// A process group as the host holds it (plugin ABI 1.3).
struct px_plugin_group {
    std::unique_ptr<pxcuda::ProcessGroup> impl;
};

namespace {

using namespace pxcuda;

// Pinned sources at least this large are copied directly (no staging memcpy).
constexpr uint64_t kDirectPinnedCopy = uint64_t(1) << 20;

using plexus::kit::report;

Device* device_at(px_plugin_context* ctx, int32_t index) {
    if (!ctx || index < 0 || static_cast<size_t>(index) >= ctx->devices.size()) return nullptr;
    return ctx->devices[index].get();
}

Device* device_of(px_plugin_context* ctx, const px_plugin_buffer* b) { return b ? device_at(ctx, b->device) : nullptr; }

// The trace events of `d` (ABI 1.8); used under its lock.
EventTrace& trace_of(px_plugin_context* ctx, const Device& d) { return *ctx->traces[size_t(d.ordinal)]; }

px_status bad_device(px_plugin_error* err, int32_t index) { return plexus::kit::no_device(err, "cuda", index); }

// Turns what a body throws into a status; no exception crosses the boundary.
// A CUDA error that loses the context marks the device failed (on_error).
// Runs the body even after CUDA has shut down at exit (a free must still
// forget its buffer): see guarded().
template <class F>
px_status guarded_at_exit_too(px_plugin_error* err, Device* d, F&& body) noexcept {
    // The plugin's own exceptions; the kit's guard takes the rest.
    auto translate = [d](px_plugin_error* e) -> px_status {
        try {
            throw;
        } catch (const CudaError& x) {
            // The thread's last error is cleared whatever it was, or the next
            // launch check (on any device) would take it for its own.
            cudaGetLastError();
            if (x.code == cudaErrorMemoryAllocation) return report(e, PX_ERROR_OUT_OF_MEMORY, x.what());
            if (!d) return report(e, PX_ERROR_DEVICE, x.what());
            try {
                return report(e, PX_ERROR_DEVICE, d->on_error(x.code, "cuda plugin: " + x.function));
            } catch (const std::bad_alloc&) {  // no memory for the words: the device is still marked
                d->on_error_without_memory(x.code);
                return report(e, PX_ERROR_DEVICE, x.what());
            }
        } catch (const OutOfMemory& x) {
            return report(e, PX_ERROR_OUT_OF_MEMORY, x.what());
        } catch (const Unsupported& x) {
            return report(e, PX_ERROR_UNSUPPORTED, x.what());
        } catch (const DeviceFailure& x) {
            return report(e, PX_ERROR_DEVICE, x.what());
        }
    };
    return plexus::kit::guard(err, std::forward<F>(body), translate);
}

// guarded_at_exit_too, refused once CUDA has shut down at exit (shutdown.hpp).
template <class F>
px_status guarded(px_plugin_error* err, Device* d, F&& body) noexcept {
    if (cuda_unusable()) return report(err, PX_ERROR_DEVICE, cuda_unusable_reason());
    return guarded_at_exit_too(err, d, std::forward<F>(body));
}

// Contexts made with PLEXUS_CUDA_TEST_HOOKS=1, newest last (test_hook.hpp).
std::mutex& hooked_mutex() {
    static std::mutex m;
    return m;
}
std::vector<px_plugin_context*>& hooked_contexts() {
    static std::vector<px_plugin_context*> list;
    return list;
}

// Runs body(d) with d locked, current, and not failed.
// The lock outlives guarded(), so an error is handled while it is held.
template <class F>
px_status on_device(Device* d, px_plugin_error* err, F&& body) noexcept {
    std::unique_lock<std::mutex> lock(d->mutex, std::defer_lock);
    return guarded(err, d, [&] {
        lock.lock();
        if (!d->failed().empty()) return report(err, PX_ERROR_DEVICE, d->failed());
        DeviceScope scope(d->ordinal);
        return body(*d);
    });
}

px_status create(px_plugin_context** out, px_plugin_error* err) {
    return guarded_at_exit_too(err, nullptr, [&] {
        if (!out) return report(err, PX_ERROR_INVALID_ARGUMENT, "out is NULL");
        if (const px_status st = refuse_wrong_kernel_lists(err)) return st;
        auto ctx = std::make_unique<px_plugin_context>();
        int count = 0;
        // A runtime made by a static destructor at exit, or in a forked
        // child: CUDA is gone, and so are its GPUs (but the runtime, and the
        // CPU, still work).
        if (cuda_unusable()) {
            ctx->no_devices_reason = cuda_unusable_reason();
            *out = ctx.release();
            return PX_OK;
        }
        const cudaError_t e = cudaGetDeviceCount(&count);
        watch_for_exit();  // after CUDA's first call: its exit handler is registered first
        if (shut_down_by(e)) {
            ctx->no_devices_reason = cuda_unusable_reason();
            *out = ctx.release();
            return PX_OK;
        }
        if (e != cudaSuccess || count <= 0) {
            int driver = 0, runtime = 0;
            cudaDriverGetVersion(&driver);
            cudaRuntimeGetVersion(&runtime);
            ctx->no_devices_reason = no_device_reason(e, driver, runtime, cudaGetErrorString(e));
            cudaGetLastError();
            count = 0;
        }
        for (int i = 0; i < count; ++i) {
            ctx->traces.push_back(std::make_unique<EventTrace>());
            try {
                ctx->devices.push_back(std::make_unique<Device>(i));
            } catch (const std::bad_alloc&) {
                throw;  // out of host memory, not a broken device (guarded() reports it)
            } catch (const std::exception& x) {
                return report(err, PX_ERROR_DEVICE, "CUDA device " + std::to_string(i) + " could not be set up: " + x.what());
            }
        }
        // Direct copies between GPUs where the hardware allows them.
        for (int i = 0; i < count; ++i)
            for (int j = 0; j < count; ++j) {
                int can = 0;
                if (i == j || cudaDeviceCanAccessPeer(&can, i, j) != cudaSuccess || !can) continue;
                DeviceScope scope(i);
                cudaDeviceEnablePeerAccess(j, 0);  // "already enabled" by another runtime is fine
                cudaGetLastError();
            }
        const char* hooks = std::getenv("PLEXUS_CUDA_TEST_HOOKS");
        ctx->test_hooks = hooks && std::string(hooks) == "1";
        if (ctx->test_hooks) {
            std::lock_guard<std::mutex> lock(hooked_mutex());
            hooked_contexts().push_back(ctx.get());
        }
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
    if (forked_since_cuda() && !ctx->devices.empty()) return;  // the parent's, in a forked child: it goes with the process
    if (ctx->test_hooks) {
        std::lock_guard<std::mutex> lock(hooked_mutex());
        auto& list = hooked_contexts();
        list.erase(std::remove(list.begin(), list.end(), ctx), list.end());
    }
    for (auto& d : ctx->devices) {
        std::lock_guard<std::mutex> lock(d->mutex);
        // wait() gives up on a collective whose peer cannot arrive, where a plain sync would hang.
        if (!cuda_unusable() && d->failed().empty() && cudaSetDevice(d->ordinal) == cudaSuccess) d->wait();
    }
    for (px_plugin_buffer* b : ctx->foreign) release_foreign(b);  // wrapped, never freed by the host
    delete ctx;
}

px_status device_count(px_plugin_context* ctx, int32_t* count, px_plugin_error* err) {
    if (!ctx || !count) return report(err, PX_ERROR_INVALID_ARGUMENT, "NULL argument");
    *count = static_cast<int32_t>(ctx->devices.size());
    if (ctx->devices.empty()) report(err, PX_OK, ctx->no_devices_reason);
    return PX_OK;
}

px_status device_info(px_plugin_context* ctx, int32_t index, px_device_info* info, px_plugin_error* err) {
    Device* d = device_at(ctx, index);
    if (!d) return bad_device(err, index);
    if (!info) return report(err, PX_ERROR_INVALID_ARGUMENT, "info is NULL");
    return guarded(err, d, [&] {
        std::lock_guard<std::mutex> lock(d->mutex);
        px_device_info mine;
        std::memset(&mine, 0, sizeof mine);
        mine.struct_size = sizeof mine;
        mine.kind = PX_DEVICE_GPU;
        std::snprintf(mine.name, sizeof mine.name, "%s%s", d->name().c_str(), d->failed().empty() ? "" : " [failed]");
        if (d->failed().empty()) {
            DeviceScope scope(d->ordinal);
            MemoryFigures f = d->figures();
            mine.memory_total = f.total, mine.memory_free = f.free, mine.memory_in_use = f.in_use;
            mine.memory_reserved = f.reserved, mine.memory_peak = f.peak;
        }
        return plexus::kit::copy_device_info(mine, info, err);
    });
}

int32_t supports(px_plugin_context* ctx, int32_t device, int32_t op, int32_t dtype) {
    return device_at(ctx, device) && kernel_supports(op, dtype) ? 1 : 0;
}

px_status buffer_alloc(px_plugin_context* ctx, int32_t device, uint64_t bytes, px_plugin_buffer** out,
                       px_plugin_error* err) {
    Device* d = device_at(ctx, device);
    if (!d) return bad_device(err, device);
    if (!out) return report(err, PX_ERROR_INVALID_ARGUMENT, "out is NULL");
    return on_device(d, err, [&](Device& dev) {
        std::string why;
        px_plugin_buffer* b = dev.allocate(bytes, why);
        if (!b) return report(err, PX_ERROR_OUT_OF_MEMORY, why);
        *out = b;
        return PX_OK;
    });
}

px_status buffer_free(px_plugin_context* ctx, px_plugin_buffer* buffer, px_plugin_error* err) {
    Device* d = device_of(ctx, buffer);
    if (!d) return report(err, PX_ERROR_INVALID_ARGUMENT, "not a buffer of this plugin");
    if (forked_since_cuda()) return PX_OK;  // the parent's memory: it goes with the child (shutdown.hpp)
    if (buffer->foreign) {
        {
            std::lock_guard<std::mutex> lock(ctx->foreign_mutex);
            auto it = std::find(ctx->foreign.begin(), ctx->foreign.end(), buffer);
            if (it == ctx->foreign.end()) return report(err, PX_ERROR_INVALID_ARGUMENT, "not a buffer of this plugin");
            ctx->foreign.erase(it);
        }
        {
            std::lock_guard<std::mutex> lock(d->mutex);  // the work queued before this free reads it
            DeviceScope scope(d->ordinal);
            d->settle();
        }
        release_foreign(buffer);  // none of our locks held: the owner's release may call back
        return PX_OK;
    }
    return guarded_at_exit_too(err, d, [&] {
        std::lock_guard<std::mutex> lock(d->mutex);
        if (d->failed().empty() && !cuda_unusable()) {
            DeviceScope scope(d->ordinal);
            d->release(buffer);
        } else {
            d->release(buffer);  // the context (or CUDA) is gone: only the bookkeeping is left to undo
        }
        return PX_OK;
    });
}

// ABI 1.5: a buffer's bytes are device memory of its CUDA ordinal.
px_status buffer_memory(px_plugin_context* ctx, px_plugin_buffer* buffer, px_buffer_memory* mem, px_plugin_error* err) {
    Device* d = device_of(ctx, buffer);
    if (!d) return report(err, PX_ERROR_INVALID_ARGUMENT, "not a buffer of this plugin");
    if (!mem || mem->struct_size < offsetof(px_buffer_memory, release))
        return report(err, PX_ERROR_INVALID_ARGUMENT, "mem is NULL or smaller than ABI 1.5's px_buffer_memory");
    mem->memory_kind = PX_MEMORY_CUDA;
    mem->device_id = d->ordinal;
    mem->address = buffer->data;
    mem->bytes = buffer->bytes;
    return PX_OK;
}

// ABI 1.5: device memory of another runtime on the same device as a buffer.
px_status buffer_wrap(px_plugin_context* ctx, int32_t device, const px_buffer_memory* mem, px_plugin_buffer** out,
                      px_plugin_error* err) {
    Device* d = device_at(ctx, device);
    if (!d) return bad_device(err, device);
    if (!out) return report(err, PX_ERROR_INVALID_ARGUMENT, "out is NULL");
    if (!mem || mem->struct_size < sizeof(px_buffer_memory))
        return report(err, PX_ERROR_INVALID_ARGUMENT, "mem is NULL or smaller than ABI 1.5's px_buffer_memory");
    if (mem->memory_kind != PX_MEMORY_CUDA || mem->device_id != d->ordinal)
        return report(err, PX_ERROR_UNSUPPORTED,
                      "memory of kind " + std::to_string(mem->memory_kind) + " on device " + std::to_string(mem->device_id) +
                          " is not CUDA memory (PX_MEMORY_CUDA) of CUDA device " + std::to_string(d->ordinal));
    if (mem->bytes && !mem->address) return report(err, PX_ERROR_INVALID_ARGUMENT, "address is NULL");
    return on_device(d, err, [&](Device& dev) {
        std::string why;
        px_plugin_buffer* b = dev.wrap(mem->address, mem->bytes, why);
        if (!b) return report(err, PX_ERROR_UNSUPPORTED, why);
        b->release = mem->release;
        b->release_context = mem->release_context;
        std::unique_ptr<px_plugin_buffer> owned(b);
        std::lock_guard<std::mutex> lock(ctx->foreign_mutex);
        ctx->foreign.push_back(b);
        *out = owned.release();
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

char* at(const px_plugin_buffer* b, uint64_t offset) { return static_cast<char*>(b->data) + offset; }

bool is_pinned(const void* p) {
    cudaPointerAttributes a{};
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        cudaGetLastError();
        return false;
    }
    return a.type == cudaMemoryTypeHost;
}

px_status copy_from_host(px_plugin_context* ctx, px_plugin_buffer* dst, uint64_t offset, const void* src,
                         uint64_t bytes, px_plugin_error* err) {
    Device* d = device_of(ctx, dst);
    if (!d) return report(err, PX_ERROR_INVALID_ARGUMENT, "not a buffer of this plugin");
    if (!in_bounds(dst, offset, bytes)) return out_of_bounds(err, dst, offset, bytes);
    if (bytes && !src) return report(err, PX_ERROR_INVALID_ARGUMENT, "src is NULL");
    if (!bytes) return PX_OK;
    return on_device(d, err, [&](Device& dev) {
        const char* from = static_cast<const char*>(src);
        TracedWork traced(trace_of(ctx, dev), dev.stream(), 0, 0, bytes);
        const bool direct = bytes >= kDirectPinnedCopy && is_pinned(src);
        const uint64_t staged = direct ? 0 : dev.staging().to_device(at(dst, offset), from, bytes, dev.stream());
        if (staged < bytes) {
            // Page-locked already (one DMA at full speed), or no pinned memory
            // left to stage through: straight from src, waited for so that
            // src may be reused.
            PX_CUDA(cudaMemcpyAsync(at(dst, offset + staged), from + staged, bytes - staged, cudaMemcpyHostToDevice,
                                    dev.stream()));
            dev.fence();
        }
        return PX_OK;
    });
}

px_status copy_to_host(px_plugin_context* ctx, px_plugin_buffer* src, uint64_t offset, void* dst, uint64_t bytes,
                       px_plugin_error* err) {
    Device* d = device_of(ctx, src);
    if (!d) return report(err, PX_ERROR_INVALID_ARGUMENT, "not a buffer of this plugin");
    if (!in_bounds(src, offset, bytes)) return out_of_bounds(err, src, offset, bytes);
    if (bytes && !dst) return report(err, PX_ERROR_INVALID_ARGUMENT, "dst is NULL");
    return on_device(d, err, [&](Device& dev) {
        if (bytes) {
            TracedWork traced(trace_of(ctx, dev), dev.stream(), 0, 0, bytes);
            PX_CUDA(cudaMemcpyAsync(dst, at(src, offset), bytes, cudaMemcpyDeviceToHost, dev.stream()));
        }
        std::string failure = dev.wait();
        if (!failure.empty()) return report(err, PX_ERROR_DEVICE, failure);
        return PX_OK;
    });
}

px_status copy_device(px_plugin_context* ctx, px_plugin_buffer* src, uint64_t src_offset, px_plugin_buffer* dst,
                      uint64_t dst_offset, uint64_t bytes, px_plugin_error* err) {
    Device* from = device_of(ctx, src);
    Device* to = device_of(ctx, dst);
    if (!from || !to) return report(err, PX_ERROR_INVALID_ARGUMENT, "not a buffer of this plugin");
    if (!in_bounds(src, src_offset, bytes)) return out_of_bounds(err, src, src_offset, bytes);
    if (!in_bounds(dst, dst_offset, bytes)) return out_of_bounds(err, dst, dst_offset, bytes);
    if (!bytes) return PX_OK;
    if (from == to)
        return on_device(to, err, [&](Device& dev) {
            TracedWork traced(trace_of(ctx, dev), dev.stream(), 0, 0, bytes);
            PX_CUDA(cudaMemcpyAsync(at(dst, dst_offset), at(src, src_offset), bytes, cudaMemcpyDeviceToDevice,
                                    dev.stream()));
            return PX_OK;
        });
    std::unique_lock<std::mutex> lock_from(from->mutex, std::defer_lock), lock_to(to->mutex, std::defer_lock);
    // An error here is not pinned on either device: a lost context shows up
    // again at that device's next call, which then marks it failed.
    return guarded(err, nullptr, [&] {
        std::lock(lock_from, lock_to);
        if (!from->failed().empty()) return report(err, PX_ERROR_DEVICE, from->failed());
        if (!to->failed().empty()) return report(err, PX_ERROR_DEVICE, to->failed());
        // The copy runs on the destination's stream after the source's queued
        // work; the source's later work (a free of src) waits for the copy.
        // Peer-to-peer where enabled; the driver stages through the host otherwise.
        DeviceScope scope(to->ordinal);
        to->wait_for(*from);
        {
            TracedWork traced(trace_of(ctx, *to), to->stream(), 0, 0, bytes);
            PX_CUDA(cudaMemcpyPeerAsync(at(dst, dst_offset), to->ordinal, at(src, src_offset), from->ordinal, bytes,
                                        to->stream()));
        }
        DeviceScope back(from->ordinal);
        from->wait_for(*to);
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
    o.data = static_cast<char*>(d.buffer->data) + d.offset;
    o.ndim = d.ndim;
    for (int i = 0; i < d.ndim; ++i) o.shape[i] = d.shape[i], o.strides[i] = d.strides[i];
}

// Whether the call's kernel can find a failure in the data (see DeviceStatus):
// its row checks the values of integer inputs, and it has one.
bool may_report(const OpArgs& t) {
    const px_op_row* row = px_op_row_of(t.op);
    if (!row || !(row->flags & PX_OP_FLAG_CHECKS_VALUES)) return false;
    for (int32_t i = 0; i < t.num_inputs; ++i)
        if (px_dtype_class(t.in[i].dtype) != PX_DTYPE_CLASS_FLOAT) return true;
    return false;
}

// execute, and ABI 1.8's execute_traced with the op's trace id.
px_status submit(px_plugin_context* ctx, const px_op_call* call, uint64_t trace_id, px_plugin_error* err) {
    const px_status form = px_op_call_check(call, ctx ? int32_t(ctx->devices.size()) : 0, buffer_facts, err);
    if (form != PX_OK) return form;
    Device* d = device_at(ctx, call->device);
    if (!d) return bad_device(err, call->device);  // checked above; says so to the analyzer too
    OpArgs t;
    t.op = call->op;
    t.num_inputs = call->num_inputs;
    for (int i = 0; i < call->num_inputs; ++i) to_operand(call->inputs[i], t.in[i]);
    t.num_outputs = call->num_outputs;
    to_operand(call->outputs[0], t.out);
    if (t.num_outputs == 2) to_operand(call->outputs[1], t.out2);
    if (call->attrs) {
        const uint32_t size = *static_cast<const uint32_t*>(call->attrs);
        std::memcpy(&t.attrs, call->attrs, size < sizeof t.attrs ? size : sizeof t.attrs);
        t.has_attrs = true;
    }
    const int32_t dtype = px_op_call_dtype(call);
    if (!kernel_supports(call->op, dtype))
        return report(err, PX_ERROR_UNSUPPORTED,
                      std::string(px_op_name(call->op)) + " on " + px_dtype_name(dtype) + " is not implemented");
    if (px_op_call_writes_nothing(call)) return PX_OK;
    return on_device(d, err, [&](Device& dev) {
        TracedWork traced(trace_of(ctx, dev), dev.stream(), t.op, trace_id, 0);
        run_op(t, dev.launch());
        dev.queued(t.op, may_report(t));
        return PX_OK;
    });
}

px_status execute(px_plugin_context* ctx, const px_op_call* call, px_plugin_error* err) {
    return submit(ctx, call, 0, err);
}

px_status synchronize(px_plugin_context* ctx, int32_t device, px_plugin_error* err) {
    Device* d = device_at(ctx, device);
    if (!d) return bad_device(err, device);
    return on_device(d, err, [&](Device& dev) {
        std::string failure = dev.wait();
        if (!failure.empty()) return report(err, PX_ERROR_DEVICE, failure);
        return PX_OK;
    });
}

px_status all_reduce(px_plugin_context* ctx, const px_collective_call* call, px_plugin_error* err) {
    if (!ctx) return report(err, PX_ERROR_INVALID_ARGUMENT, "ctx is NULL");
    if (const char* problem = px_collective_call_problem(call, int32_t(ctx->devices.size())))
        return report(err, PX_ERROR_INVALID_ARGUMENT, std::string("all_reduce: ") + problem);
    std::vector<Device*> devices;
    std::vector<void*> data;
    uint64_t count = 1;
    for (int32_t k = 0; k < call->tensors[0].ndim; ++k) count *= uint64_t(call->tensors[0].shape[k]);
    for (int32_t i = 0; i < call->count; ++i) {
        const px_tensor_desc& t = call->tensors[i];
        if (t.buffer->device != call->devices[i])
            return report(err, PX_ERROR_INVALID_ARGUMENT, "all_reduce: tensor " + std::to_string(i) +
                                                              " is not on device " + std::to_string(call->devices[i]));
        const uint64_t bytes = count * px_dtype_size(t.dtype);
        if (!in_bounds(t.buffer, t.offset, bytes)) return out_of_bounds(err, t.buffer, t.offset, bytes);
        devices.push_back(ctx->devices[call->devices[i]].get());
        data.push_back(at(t.buffer, t.offset));
    }
    // Every involved device locked, in one global order (no deadlock with
    // another all_reduce or a copy between two of them).
    std::vector<Device*> order = devices;
    std::sort(order.begin(), order.end(), [](Device* a, Device* b) { return a->ordinal < b->ordinal; });
    std::vector<std::unique_lock<std::mutex>> locks;
    return guarded(err, nullptr, [&] {
        for (Device* d : order) locks.emplace_back(d->mutex);
        for (Device* d : order)
            if (!d->failed().empty()) return report(err, PX_ERROR_DEVICE, d->failed());
        // One device is its own sum: no NCCL needed (a machine without it
        // still answers), and the work queued on it already orders it.
        if (count == 0 || devices.size() == 1) return PX_OK;
        try {
            ctx->collectives.all_reduce_sum(devices, data, count, call->tensors[0].dtype);
        } catch (const Unsupported&) {
            throw;
        } catch (const CudaError&) {
            throw;
        } catch (const std::runtime_error& e) {
            return report(err, PX_ERROR_DEVICE, std::string("all_reduce over ") + std::to_string(devices.size()) +
                                                    " GPUs: " + e.what());
        }
        return PX_OK;
    });
}

// ---- process groups (ABI 1.3): NCCL across processes ----

static_assert(sizeof(ncclUniqueId) == PX_GROUP_ID_BYTES, "an ncclUniqueId must fill px_group_id.bytes");

px_status group_make_id(px_plugin_context* ctx, int32_t device, px_group_id* id, px_plugin_error* err) {
    if (!ctx || !id) return report(err, PX_ERROR_INVALID_ARGUMENT, "group_make_id: ctx or id is NULL");
    if (!device_at(ctx, device)) return bad_device(err, device);
    return guarded(err, nullptr, [&] {
        const NcclApi& nccl = ctx->collectives.api();  // Unsupported when NCCL is missing
        ncclUniqueId unique;
        ncclResult_t r = nccl.get_unique_id(&unique);
        if (r != ncclSuccess) return report(err, PX_ERROR_DEVICE, std::string("ncclGetUniqueId: ") + nccl.error_string(r));
        std::memcpy(id->bytes, &unique, sizeof unique);
        return PX_OK;
    });
}

px_status group_join(px_plugin_context* ctx, int32_t device, const px_group_id* id, int32_t rank, int32_t size,
                     double timeout_seconds, px_plugin_group** out, px_plugin_error* err) {
    if (!ctx || !id || !out) return report(err, PX_ERROR_INVALID_ARGUMENT, "group_join: ctx, id or out is NULL");
    if (size < 1 || rank < 0 || rank >= size || !(timeout_seconds > 0))
        return report(err, PX_ERROR_INVALID_ARGUMENT, "group_join: bad rank, size or time-out");
    Device* d = device_at(ctx, device);
    if (!d) return bad_device(err, device);
    return guarded(err, nullptr, [&] {
        if (!d->failed().empty()) return report(err, PX_ERROR_DEVICE, d->failed());
        const NcclApi& nccl = ctx->collectives.api();
        ncclUniqueId unique;
        std::memcpy(&unique, id->bytes, sizeof unique);
        auto group = std::make_unique<px_plugin_group>();
        group->impl = std::make_unique<ProcessGroup>(nccl, *d, unique, rank, size, timeout_seconds);
        {
            std::lock_guard<std::mutex> lock(d->mutex);
            d->add_watch(group->impl.get());
        }
        *out = group.release();
        return PX_OK;
    });
}

px_status group_all_reduce(px_plugin_context* ctx, px_plugin_group* group, const px_group_call* call,
                           px_plugin_error* err) {
    if (!ctx || !group) return report(err, PX_ERROR_INVALID_ARGUMENT, "group_all_reduce: ctx or group is NULL");
    if (const char* problem = px_group_call_problem(call))
        return report(err, PX_ERROR_INVALID_ARGUMENT, std::string("group_all_reduce: ") + problem);
    Device& dev = group->impl->device();
    for (int32_t i = 0; i < call->count; ++i) {
        const px_tensor_desc& t = call->tensors[i];
        if (device_of(ctx, t.buffer) != &dev)
            return report(err, PX_ERROR_INVALID_ARGUMENT, "group_all_reduce: tensor " + std::to_string(i) +
                                                              " is not on the group's device");
        uint64_t bytes = px_dtype_size(t.dtype);
        for (int32_t k = 0; k < t.ndim; ++k) bytes *= uint64_t(t.shape[k]);
        if (!in_bounds(t.buffer, t.offset, bytes)) return out_of_bounds(err, t.buffer, t.offset, bytes);
    }
    return on_device(&dev, err, [&](Device&) {
        group->impl->all_reduce_sum(*call);
        return PX_OK;
    });
}

void group_leave(px_plugin_context* ctx, px_plugin_group* group) {
    (void)ctx;
    if (!group || forked_since_cuda()) return;  // the parent's group: it goes with the child
    {
        Device& dev = group->impl->device();
        std::lock_guard<std::mutex> lock(dev.mutex);
        group->impl->leave();
    }
    delete group;
}

// ---- ABI 1.8: when each op and copy ran, for the host's trace (trace_events.hpp) ----

px_status trace_enable(px_plugin_context* ctx, int32_t device, int32_t on, px_plugin_error* err) {
    Device* d = device_at(ctx, device);
    if (!d) return bad_device(err, device);
    return on_device(d, err, [&](Device& dev) {
        trace_of(ctx, dev).enable(on != 0, dev.stream());
        return PX_OK;
    });
}

px_status execute_traced(px_plugin_context* ctx, const px_op_call* call, uint64_t trace_id, px_plugin_error* err) {
    return submit(ctx, call, trace_id, err);
}

px_status trace_take(px_plugin_context* ctx, int32_t device, px_trace_span* spans, int32_t capacity, int32_t* count,
                     px_plugin_error* err) {
    Device* d = device_at(ctx, device);
    if (!d) return bad_device(err, device);
    return on_device(d, err, [&](Device& dev) { return trace_of(ctx, dev).take(spans, capacity, count, err); });
}

const px_plugin_api api_table = {
    sizeof(px_plugin_api),
    PX_PLUGIN_ABI_MAJOR,
    PX_PLUGIN_ABI_MINOR,
    "cuda",
    PLEXUS_CUDA_PLUGIN_VERSION,
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
    group_make_id,
    group_join,
    group_all_reduce,
    group_leave,
    buffer_memory,
    buffer_wrap,
    trace_enable,
    execute_traced,
    trace_take,
};

}  // namespace

extern "C" PX_PLUGIN_EXPORT const px_plugin_api* px_plugin_get_api(void) { return &api_table; }

// Test builds only (test_hook.hpp, test_hook_export.cpp); not exported.
int pxcuda::queue_on_hooked_device(int32_t ordinal, int32_t op, void (*launch)(cudaStream_t)) {
    std::lock_guard<std::mutex> lock(hooked_mutex());
    if (hooked_contexts().empty()) return -1;
    px_plugin_context* ctx = hooked_contexts().back();
    if (ordinal < 0 || ordinal >= int32_t(ctx->devices.size())) return -1;
    px_plugin_error err{sizeof(px_plugin_error), {0}};
    px_status s = on_device(ctx->devices[size_t(ordinal)].get(), &err, [&](pxcuda::Device& dev) {
        launch(dev.stream());
        dev.queued(op, false);
        return PX_OK;
    });
    return s == PX_OK ? 0 : -1;
}
