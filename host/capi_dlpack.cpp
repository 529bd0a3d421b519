// C API: DLPack export and import (plexus.h, "DLPack"). No plugin gives the
// host its buffers' addresses or takes foreign memory yet, so both
// directions copy through host memory: an export is a compact row-major
// host copy owned by the DLPack tensor; an import reads the producer's
// memory (any strides) and copies it onto the device.
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <type_traits>
#include <vector>

#include "plexus/dlpack.h"
#include "plexus/plugin.h"  // PX_PLUGIN_ABI_MAJOR/MINOR, for the refusals
#include "router.hpp"

using namespace px;

namespace {

// Alignment of exported data: a cache line, more than any dtype needs.
constexpr std::size_t kDataAlignment = 64;

const char* copy_policy_name(int32_t copy) {
    switch (copy) {
    case PX_DLPACK_COPY_IF_NEEDED: return "PX_DLPACK_COPY_IF_NEEDED";
    case PX_DLPACK_COPY_NEVER: return "PX_DLPACK_COPY_NEVER";
    case PX_DLPACK_COPY_ALWAYS: return "PX_DLPACK_COPY_ALWAYS";
    default: return nullptr;
    }
}

void check_copy_policy(int32_t copy) {
    if (!copy_policy_name(copy))
        fail(PX_ERROR_INVALID_ARGUMENT, "copy ", copy,
             " is not PX_DLPACK_COPY_IF_NEEDED (0), PX_DLPACK_COPY_NEVER (1) or PX_DLPACK_COPY_ALWAYS (2)");
}

// Why memory cannot be shared today, worded for the refusal of COPY_NEVER.
[[noreturn]] void refuse_sharing(const char* direction, const DeviceImpl* device) {
    if (device)
        fail(PX_ERROR_UNSUPPORTED, "PX_DLPACK_COPY_NEVER: ", direction, " ", device->label,
             " without a copy needs its plugin '", device->plugin->name,
             "' to share buffer memory, which the plugin ABI (", PX_PLUGIN_ABI_MAJOR, ".", PX_PLUGIN_ABI_MINOR,
             ") has no slot for yet; pass PX_DLPACK_COPY_IF_NEEDED to copy");
    fail(PX_ERROR_UNSUPPORTED, "PX_DLPACK_COPY_NEVER: ", direction,
         " without a copy needs the device's plugin to take foreign memory, which the plugin ABI (",
         PX_PLUGIN_ABI_MAJOR, ".", PX_PLUGIN_ABI_MINOR, ") has no slot for yet; pass PX_DLPACK_COPY_IF_NEEDED to copy");
}

DLDataType to_dl(px_dtype dtype) {
    switch (dtype) {
    case PX_FLOAT32: return DLDataType{kDLFloat, 32, 1};
    case PX_FLOAT64: return DLDataType{kDLFloat, 64, 1};
    case PX_INT32: return DLDataType{kDLInt, 32, 1};
    case PX_INT64: return DLDataType{kDLInt, 64, 1};
    case PX_UINT8: return DLDataType{kDLUInt, 8, 1};
    }
    fail(PX_ERROR_DTYPE, "dtype ", static_cast<int32_t>(dtype), " has no DLPack type");
}

const char* dl_code_name(uint8_t code) {
    switch (code) {
    case kDLInt: return "int";
    case kDLUInt: return "uint";
    case kDLFloat: return "float";
    case kDLOpaqueHandle: return "opaque handle";
    case kDLBfloat: return "bfloat";
    case kDLComplex: return "complex";
    case kDLBool: return "bool";
    default: return "unknown code";
    }
}

px_dtype from_dl(const DLDataType& t) {
    if (t.lanes == 1) {
        if (t.code == kDLFloat && t.bits == 32) return PX_FLOAT32;
        if (t.code == kDLFloat && t.bits == 64) return PX_FLOAT64;
        if (t.code == kDLInt && t.bits == 32) return PX_INT32;
        if (t.code == kDLInt && t.bits == 64) return PX_INT64;
        if (t.code == kDLUInt && t.bits == 8) return PX_UINT8;
    }
    fail(PX_ERROR_DTYPE, "DLPack dtype ", dl_code_name(t.code), static_cast<int>(t.bits),
         t.lanes == 1 ? "" : cat(" x", t.lanes, " lanes"), " (code ", static_cast<int>(t.code),
         ") has no Plexus dtype; Plexus has float32, float64, int32, int64 and uint8");
}

const char* dl_device_name(int32_t type) {
    switch (type) {
    case kDLCPU: return "kDLCPU";
    case kDLCUDA: return "kDLCUDA";
    case kDLCUDAHost: return "kDLCUDAHost";
    case kDLOpenCL: return "kDLOpenCL";
    case kDLVulkan: return "kDLVulkan";
    case kDLMetal: return "kDLMetal";
    case kDLVPI: return "kDLVPI";
    case kDLROCM: return "kDLROCM";
    case kDLROCMHost: return "kDLROCMHost";
    case kDLExtDev: return "kDLExtDev";
    case kDLCUDAManaged: return "kDLCUDAManaged";
    case kDLOneAPI: return "kDLOneAPI";
    case kDLWebGPU: return "kDLWebGPU";
    case kDLHexagon: return "kDLHexagon";
    case kDLMAIA: return "kDLMAIA";
    default: return "an unknown device type";
    }
}

// ---- export ----

struct AlignedFree {
    void operator()(void* p) const noexcept { ::operator delete(p, std::align_val_t(kDataAlignment)); }
};

// One exported tensor: the managed struct the consumer holds, its shape and
// strides, and the host copy of the values. The deleter frees it all; it
// touches nothing of the runtime, so it may run after the runtime is gone.
template <class Managed>
struct Export {
    Managed managed{};
    int64_t shape[PX_MAX_DIMS] = {};
    int64_t strides[PX_MAX_DIMS] = {};
    std::unique_ptr<void, AlignedFree> data;

    static void deleter(Managed* self) { delete static_cast<Export*>(self->manager_ctx); }
};

template <class Managed>
Managed* export_copy(const TensorObj& t, int32_t copy) {
    check_copy_policy(copy);
    if (copy == PX_DLPACK_COPY_NEVER) refuse_sharing("sharing the memory of a tensor on", &t.device());
    const DLDataType dtype = to_dl(t.dtype);
    auto e = std::make_unique<Export<Managed>>();
    const uint64_t bytes = t.bytes();
    // Never NULL, even for no elements: some consumers read the pointer.
    e->data.reset(::operator new(bytes ? bytes : kDataAlignment, std::align_val_t(kDataAlignment)));
    router::to_host(t, e->data.get(), bytes);  // waits for the work that makes t; reports its failure
    for (int i = 0; i < t.shape.ndim; ++i) e->shape[i] = t.shape.dims[i];
    contiguous_strides(t.shape, e->strides);
    DLTensor& d = e->managed.dl_tensor;
    d.data = e->data.get();
    d.device = DLDevice{kDLCPU, 0};
    d.ndim = t.shape.ndim;
    d.dtype = dtype;
    d.shape = e->shape;
    d.strides = e->strides;
    d.byte_offset = 0;
    e->managed.manager_ctx = e.get();
    e->managed.deleter = &Export<Managed>::deleter;
    if constexpr (std::is_same_v<Managed, DLManagedTensorVersioned>) {
        e->managed.version = DLPackVersion{DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
        e->managed.flags = DLPACK_FLAG_BITMASK_IS_COPIED;
    }
    return &e.release()->managed;
}

// ---- import ----

// Copies `count` elements of `elem` bytes each, laid out by `strides`, into
// `dst` in row-major order. Axis `axis` of `shape` is walked.
void gather(const unsigned char* src, const int64_t* shape, const int64_t* strides, int32_t ndim, int32_t axis,
            uint64_t elem, unsigned char*& dst) {
    const int64_t n = shape[axis];
    const int64_t step = strides[axis] * static_cast<int64_t>(elem);
    if (axis == ndim - 1) {
        if (strides[axis] == 1) {
            std::memcpy(dst, src, static_cast<size_t>(n) * elem);
            dst += static_cast<size_t>(n) * elem;
            return;
        }
        for (int64_t i = 0; i < n; ++i, dst += elem) std::memcpy(dst, src + i * step, elem);
        return;
    }
    for (int64_t i = 0; i < n; ++i) gather(src + i * step, shape, strides, ndim, axis + 1, elem, dst);
}

template <class Managed>
TensorObj* import_copy(Runtime& rt, px_device device, Managed* in, int32_t copy) {
    if (!in) fail(PX_ERROR_INVALID_ARGUMENT, "'in' is NULL");
    check_copy_policy(copy);
    if constexpr (std::is_same_v<Managed, DLManagedTensorVersioned>) {
        if (in->version.major != DLPACK_MAJOR_VERSION)
            fail(PX_ERROR_UNSUPPORTED, "the tensor is DLPack ", in->version.major, ".", in->version.minor,
                 "; this Plexus reads DLPack ", DLPACK_MAJOR_VERSION, ".x (", DLPACK_MAJOR_VERSION, ".",
                 DLPACK_MINOR_VERSION, " and older minors)");
    }
    const DLTensor& t = in->dl_tensor;
    const auto& dev = rt.device(device);
    if (t.device.device_type != kDLCPU && t.device.device_type != kDLCUDAHost)
        fail(PX_ERROR_UNSUPPORTED, "the tensor is on ", dl_device_name(t.device.device_type), " (",
             static_cast<int32_t>(t.device.device_type), ", id ", t.device.device_id,
             "), which the host cannot read; Plexus imports memory of kDLCPU and kDLCUDAHost");
    const px_dtype dtype = from_dl(t.dtype);
    if (t.ndim < 0 || t.ndim > PX_MAX_DIMS)
        fail(PX_ERROR_SHAPE, "the tensor's rank ", t.ndim, " is outside 0..", PX_MAX_DIMS);
    if (t.ndim > 0 && !t.shape) fail(PX_ERROR_INVALID_ARGUMENT, "the tensor's shape is NULL for rank ", t.ndim);
    const Shape shape = make_shape(t.ndim, t.shape, "the tensor's shape");
    const uint64_t bytes = byte_size(shape, dtype);
    if (bytes > 0 && !t.data) fail(PX_ERROR_INVALID_ARGUMENT, "the tensor's data is NULL for ", numel(shape), " elements");
    if (copy == PX_DLPACK_COPY_NEVER) refuse_sharing("importing memory onto", dev.get());
    const auto* base = static_cast<const unsigned char*>(t.data) + t.byte_offset;
    int64_t compact[PX_MAX_DIMS];
    contiguous_strides(shape, compact);
    bool is_compact = true;
    for (int i = 0; i < t.ndim; ++i)
        if (t.strides && shape.dims[i] > 1 && t.strides[i] != compact[i]) is_compact = false;
    if (is_compact || bytes == 0) return router::from_host(dev, dtype, shape, base, bytes);
    // Every element's offset in bytes must fit in 64 bits before anything is read.
    const uint64_t elem = px_dtype_size(dtype);
    for (int i = 0; i < t.ndim; ++i) {
        int64_t span = 0;
        if (__builtin_mul_overflow(t.strides[i], shape.dims[i] - 1, &span) ||
            __builtin_mul_overflow(span, static_cast<int64_t>(elem), &span))
            fail(PX_ERROR_SHAPE, "stride ", t.strides[i], " of axis ", i, " overflows 64 bits over ", shape.dims[i],
                 " elements");
    }
    std::vector<unsigned char> packed(bytes);
    unsigned char* cursor = packed.data();
    gather(base, shape.dims, t.strides, t.ndim, 0, elem, cursor);
    return router::from_host(dev, dtype, shape, packed.data(), bytes);
}

// Publishes the copy, then hands `in` back to its producer: on a failure
// before this point `in` is still the caller's.
template <class Managed>
void finish_import(TensorObj* made, Managed* in, px_tensor** out) {
    *out = publish(made);
    if (in->deleter) in->deleter(in);
}

}  // namespace

extern "C" {

px_status px_tensor_dlpack_device(px_tensor* tensor, int32_t* device_type, int32_t* device_id) {
    return guard("px_tensor_dlpack_device", [&] {
        const TensorObj& t = get_tensor(tensor);
        need_out(device_type, "device_type");
        need_out(device_id, "device_id");
        const DeviceImpl& d = t.device();
        if (d.id.kind == PX_DEVICE_CPU) {
            *device_type = kDLCPU, *device_id = 0;
        } else if (d.id.kind == PX_DEVICE_GPU && d.plugin->name == "cuda") {
            *device_type = kDLCUDA, *device_id = d.local;
        } else {
            *device_type = kDLExtDev, *device_id = d.id.index;
        }
    });
}

px_status px_tensor_to_dlpack(px_tensor* tensor, int32_t copy, DLManagedTensorVersioned** out) {
    return guard("px_tensor_to_dlpack", [&] {
        const TensorObj& t = get_tensor(tensor);
        need_out(out);
        *out = export_copy<DLManagedTensorVersioned>(t, copy);
    });
}

px_status px_tensor_to_dlpack_unversioned(px_tensor* tensor, int32_t copy, DLManagedTensor** out) {
    return guard("px_tensor_to_dlpack_unversioned", [&] {
        const TensorObj& t = get_tensor(tensor);
        need_out(out);
        *out = export_copy<DLManagedTensor>(t, copy);
    });
}

px_status px_tensor_from_dlpack(px_runtime* runtime, px_device device, DLManagedTensorVersioned* in, int32_t copy,
                                px_tensor** out) {
    return guard("px_tensor_from_dlpack", [&] {
        Runtime& rt = get_runtime(runtime);
        need_out(out);
        finish_import(import_copy(rt, device, in, copy), in, out);
    });
}

px_status px_tensor_from_dlpack_unversioned(px_runtime* runtime, px_device device, DLManagedTensor* in, int32_t copy,
                                            px_tensor** out) {
    return guard("px_tensor_from_dlpack_unversioned", [&] {
        Runtime& rt = get_runtime(runtime);
        need_out(out);
        finish_import(import_copy(rt, device, in, copy), in, out);
    });
}

}  // extern "C"
