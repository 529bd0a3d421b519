// The checks every routed op shares, and the one call into a plugin's execute.
#include "dispatch.hpp"

#include "plexus/op_rows.h"
#include "trace.hpp"

namespace px::router {

const char* name_of(int32_t op) { return px_op_name(op); }

bool in_family(int32_t op, int32_t family) {
    const px_op_row* row = px_op_row_of(op);
    return row && row->family == family;
}

bool has_flag(int32_t op, uint32_t flag) {
    const px_op_row* row = px_op_row_of(op);
    return row && (row->flags & flag) != 0;
}

px_dtype result_dtype(int32_t op, px_dtype dtype) { return static_cast<px_dtype>(px_op_result_dtype(op, dtype)); }

void check_accepts(int32_t op, px_dtype dtype) {
    char takes[96];
    if (!px_op_accepts(op, dtype))
        fail(PX_ERROR_DTYPE, name_of(op), ": does not take ", px_dtype_name(dtype), " (it takes ",
             px_op_accepted_dtypes(op, takes, sizeof takes), "); cast the input first");
}

int32_t tf32_allowed(const DeviceImpl& dev) {
    auto rt = dev.runtime.lock();
    return rt && rt->allow_tf32.load(std::memory_order_relaxed) ? 1 : 0;
}

void check_same_device(int32_t op, std::initializer_list<const TensorObj*> ts) {
    const TensorObj* first = *ts.begin();
    for (const TensorObj* t : ts) {
        if (&t->device() != &first->device()) {
            const std::string& a = first->device().label;
            const std::string& b = t->device().label;
            if (a == b)  // one name, two runtimes (say a tensor made before a fork() and one made after)
                fail(PX_ERROR_DEVICE_MISMATCH, name_of(op), ": inputs are on ", a,
                     " of two different runtimes; a tensor works only with its own runtime's tensors "
                     "(copy one through the host: px_tensor_to_host and px_tensor_from_host in C, "
                     "to_vector() and array() in C++, asnumpy() and array() in Python)");
            fail(PX_ERROR_DEVICE_MISMATCH, name_of(op), ": inputs are on different devices, ", a, " and ", b,
                 "; move one explicitly: px_tensor_copy_to in C, x.copyto(", a, ") or x.as_in_context(", a,
                 ") in C++ and Python (Plexus never copies between devices implicitly)");
        }
    }
}

void check_same_dtype(int32_t op, const TensorObj& a, const TensorObj& b) {
    if (a.dtype == b.dtype) return;
    // The cast suggested: to the float dtype where one is an integer (integer
    // data into a float layer), else to the first input's.
    const bool to_b = px_dtype_class(b.dtype) == PX_DTYPE_CLASS_FLOAT && px_dtype_class(a.dtype) != PX_DTYPE_CLASS_FLOAT;
    const char* to = px_dtype_name(to_b ? b.dtype : a.dtype);
    fail(PX_ERROR_DTYPE, name_of(op), ": dtypes differ, ", px_dtype_name(a.dtype), " and ", px_dtype_name(b.dtype),
         "; cast one: px_cast in C, x.astype(DType::", to, ") in C++, x.astype('", to, "') in Python");
}

// Queues `op` on `dev` after checking that its plugin supports it.
void check_supported(const DeviceImpl& dev, int32_t op, px_dtype dtype) {
    if (!dev.supports(op, dtype))
        fail(PX_ERROR_UNSUPPORTED, name_of(op), " on ", px_dtype_name(dtype), " is not supported on ", dev.label,
             " by plugin '", dev.plugin->name, "'");
}

void dispatch(const DeviceImpl& dev, int32_t op, px_dtype dtype, const px_tensor_desc* in, int32_t nin,
              const px_tensor_desc* out, int32_t nout, const void* attrs, bool nonempty) {
    check_supported(dev, op, dtype);
    if (!nonempty) return;  // nothing to compute, but an unsupported op is still an error
    px_op_call call;
    call.struct_size = sizeof call;
    call.op = op;
    call.device = dev.local;
    call.num_inputs = nin;
    call.inputs = in;
    call.num_outputs = nout;
    call.outputs = out;
    call.attrs = attrs;
    const auto& p = *dev.plugin;
    const DeviceImpl::Submitting queued{dev};
    auto context = [&] { return cat(name_of(op), " on ", dev.label); };
    Tracer* tracer = dev.tracer.get();
    if (tracer && tracer->on()) {  // all that tracing costs while it is off
        const int64_t queued = trace_now_ns();
        const uint64_t id = tracer->op_id(dev);  // 0: the plugin does not report spans
        p.call(context, [&](px_plugin_error* e) {
            return id ? p.api->execute_traced(p.context, &call, id, e) : p.api->execute(p.context, &call, e);
        });
        tracer->op_called(dev, op, dtype, in, nin, out, nout, id, queued);
        return;
    }
    p.call(context, [&](px_plugin_error* e) { return p.api->execute(p.context, &call, e); });
}

}  // namespace px::router
