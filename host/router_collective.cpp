// The collectives. The all-reduce sums tensors on several devices in place:
// the router checks everything first; the devices' plugin does it with its
// own collective (ABI 1.2, e.g. NCCL) when all tensors are on one plugin that
// offers one; otherwise the host sums on the first device and copies back.
// The group all-reduce sums tensors with their peers in other processes,
// always through the plugin (ABI 1.3); there is nothing to fall back to.
#include <memory>

#include "dispatch.hpp"
#include "router.hpp"

namespace px::router {
namespace {

using Owned = std::unique_ptr<TensorObj>;

void check_summable(px_dtype dtype, const std::string& what) {
    if (dtype != PX_FLOAT32 && dtype != PX_FLOAT64 && dtype != PX_INT32 && dtype != PX_INT64)
        fail(PX_ERROR_DTYPE, what, " is ", px_dtype_name(dtype), ", which is not summed (float32, float64, int32 and int64 are)");
}

void check_collective(const std::vector<TensorObj*>& ts) {
    const TensorObj& first = *ts[0];
    auto rt = first.device().runtime.lock();
    for (size_t i = 0; i < ts.size(); ++i) {
        const TensorObj& t = *ts[i];
        if (t.device().runtime.lock() != rt)
            fail(PX_ERROR_DEVICE_MISMATCH, "all_reduce: tensors[", i, "] belongs to another runtime than tensors[0]");
        for (size_t j = 0; j < i; ++j)
            if (&ts[j]->device() == &t.device())
                fail(PX_ERROR_DEVICE_MISMATCH, "all_reduce: tensors[", j, "] and tensors[", i, "] are both on ",
                     t.device().label, "; give one tensor per device");
        if (t.dtype != first.dtype)
            fail(PX_ERROR_DTYPE, "all_reduce: tensors[", i, "] is ", px_dtype_name(t.dtype), ", tensors[0] is ",
                 px_dtype_name(first.dtype));
        if (t.shape != first.shape)
            fail(PX_ERROR_SHAPE, "all_reduce: tensors[", i, "] has shape ", to_string(t.shape), ", tensors[0] has ",
                 to_string(first.shape));
    }
    check_summable(first.dtype, "all_reduce: tensors[0]");
}

bool plugin_collective(const std::vector<TensorObj*>& ts) {
    const auto& plugin = ts[0]->device().plugin;
    if (!plugin->api->all_reduce) return false;
    for (const TensorObj* t : ts)
        if (t->device().plugin != plugin) return false;
    std::vector<px_tensor_desc> descs;
    std::vector<int32_t> devices;
    for (const TensorObj* t : ts) {
        descs.push_back(t->desc());
        devices.push_back(t->device().local);
    }
    px_collective_call call{sizeof(px_collective_call), PX_COLLECTIVE_SUM, int32_t(ts.size()), devices.data(),
                            descs.data()};
    struct Queued {  // on every device, however the call ends (DeviceImpl::Submitting)
        const std::vector<TensorObj*>& ts;
        ~Queued() {
            for (const TensorObj* t : ts) t->device().note_submitted();
        }
    } queued{ts};
    // UNSUPPORTED (e.g. its collective library is missing) means: copy and add.
    px_status s = PX_OK;
    plugin->call([&] { return cat("all_reduce over ", ts.size(), " devices of plugin ", plugin->name); },
                 [&](px_plugin_error* e) {
                     s = plugin->api->all_reduce(plugin->context, &call, e);
                     return s == PX_ERROR_UNSUPPORTED ? PX_OK : s;
                 });
    return s != PX_ERROR_UNSUPPORTED;
}

}  // namespace

void all_reduce_sum(const std::vector<TensorObj*>& ts) {
    if (ts.empty()) fail(PX_ERROR_INVALID_ARGUMENT, "all_reduce: no tensors");
    check_collective(ts);
    if (ts.size() == 1 || numel(ts[0]->shape) == 0) return;
    const auto written = [&] {  // once the sum is queued (px_tensor_version)
        for (TensorObj* t : ts) t->note_write();
    };
    try {
        if (plugin_collective(ts)) return written();
    } catch (const Failure& f) {  // (a device's earlier failure, which the CPU plugin reports instead of summing)
        throw Failure(f.status, cat(f.message, "; the sum was not made"));
    }
    // The fallback: the same order as the plugins' (tensors[0] + tensors[1] + ...).
    const std::shared_ptr<DeviceImpl>& home = ts[0]->buffer->device;
    // Its copies between devices are waiting points that report a failure
    // instead of copying: every device waits first, so that one refuses the
    // whole sum before any tensor is written.
    try {
        for (const TensorObj* t : ts) t->device().synchronize();
    } catch (const Failure& f) {
        throw Failure(f.status, cat(f.message, "; the sum was not made (no tensor was written)"));
    }
    Owned total(copy_to(*ts[0], home));
    for (size_t i = 1; i < ts.size(); ++i) {
        Owned part(copy_to(*ts[i], home));
        total.reset(binary(PX_OP_ADD, *total, *part));
    }
    for (TensorObj* t : ts) copy_into(*total, *t);
    written();
}

void group_all_reduce_sum(const GroupObj& group, const std::vector<TensorObj*>& ts) {
    const DeviceImpl& home = *group.device;
    std::vector<px_tensor_desc> descs;
    for (size_t i = 0; i < ts.size(); ++i) {
        const TensorObj& t = *ts[i];
        if (&t.device() != &home)
            fail(PX_ERROR_DEVICE_MISMATCH, "group all_reduce: tensors[", i, "] is on ", t.device().label,
                 t.device().runtime.lock() == home.runtime.lock() ? "" : " of another runtime",
                 "; this process's member of the group is ", home.label);
        check_summable(t.dtype, cat("group all_reduce: tensors[", i, "]"));
        // Summed in place, so one element in two tensors would be summed twice.
        for (size_t j = 0; j < i; ++j) {
            const TensorObj& u = *ts[j];
            if (u.buffer == t.buffer && t.bytes() > 0 && u.bytes() > 0 && u.offset < t.offset + t.bytes() &&
                t.offset < u.offset + u.bytes())
                fail(PX_ERROR_INVALID_ARGUMENT, "group all_reduce: tensors[", j, "] and tensors[", i,
                     "] share memory; give distinct tensors");
        }
        // Empty tensors have nothing to sum (and the same shapes on every process).
        if (t.bytes() > 0) descs.push_back(t.desc());
    }
    if (descs.empty()) return;
    const auto& plugin = home.plugin;
    const DeviceImpl::Submitting queued{home};
    px_group_call call{sizeof(px_group_call), PX_COLLECTIVE_SUM, int32_t(descs.size()), descs.data()};
    plugin->call([&] { return cat("group all_reduce of ", descs.size(), " tensors on ", home.label, " (rank ", group.rank,
                                  " of ", group.size, ")"); },
                 [&](px_plugin_error* e) { return plugin->api->group_all_reduce(plugin->context, group.handle, &call, e); });
    for (TensorObj* t : ts) t->note_write();
}

}  // namespace px::router
