// C API: DLPack export and import (plexus.h, "DLPack"). Memory is shared
// where the device's plugin gives its buffers' addresses (plugin ABI 1.5's
// buffer_memory) and takes memory it did not allocate (buffer_wrap); a
// plugin without those slots, a layout Plexus cannot describe, or a
// read-only DLPack tensor goes through a copy in host memory instead, and a
// caller that asked for no copy is told why.
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

// The refusal of COPY_NEVER: what was asked, why it cannot be shared, and
// whether a copy would do (not for memory the host cannot read).
[[noreturn]] void refuse_sharing(const char* direction, const DeviceImpl& device, const std::string& why,
                                 bool copyable = true) {
    fail(PX_ERROR_UNSUPPORTED, "PX_DLPACK_COPY_NEVER: ", direction, " ", device.label, " without a copy: ", why,
         copyable ? "; pass PX_DLPACK_COPY_IF_NEEDED to copy"
                  : "; nor can it be copied (the host cannot read GPU memory): give compact row-major memory "
                    "(e.g. x.contiguous() in PyTorch)");
}

// Why `device`'s plugin cannot share: it lacks `slot` (plugin ABI 1.5).
std::string lacks_slot(const DeviceImpl& device, const char* slot, const char* what) {
    const PluginInstance& p = *device.plugin;
    const uint32_t minor = p.table->abi_minor;
    return cat("its plugin '", p.name, "' (plugin ABI ", p.table->abi_major, ".", minor, ") lacks the slot ", slot,
               " (plugin ABI 1.5), which ", what, minor < 5 ? "; the plugin was built before 1.5" : "");
}

// Each Plexus dtype's DLPack type, one lane.
struct DlType {
    px_dtype dtype;
    uint8_t code, bits;
};
constexpr DlType kDlTypes[] = {{PX_FLOAT32, kDLFloat, 32}, {PX_FLOAT64, kDLFloat, 64}, {PX_INT32, kDLInt, 32},
                               {PX_INT64, kDLInt, 64},     {PX_UINT8, kDLUInt, 8},     {PX_FLOAT16, kDLFloat, 16},
                               {PX_BFLOAT16, kDLBfloat, 16}};

DLDataType to_dl(px_dtype dtype) {
    for (const DlType& t : kDlTypes)
        if (t.dtype == dtype) return DLDataType{t.code, t.bits, 1};
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
    std::string have;
    for (const DlType& d : kDlTypes) {
        if (t.lanes == 1 && t.code == d.code && t.bits == d.bits) return d.dtype;
        have += cat(have.empty() ? "" : ", ", px_dtype_name(d.dtype));
    }
    fail(PX_ERROR_DTYPE, "DLPack dtype ", dl_code_name(t.code), static_cast<int>(t.bits),
         t.lanes == 1 ? "" : cat(" x", t.lanes, " lanes"), " (code ", static_cast<int>(t.code),
         ") has no Plexus dtype; Plexus has ", have);
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

// Fills an export's DLPack tensor (compact row-major strides written out,
// byte_offset 0) and hands it to the consumer, whose deleter frees `e`.
template <class E>
auto finish_export(std::unique_ptr<E> e, const TensorObj& t, void* data, DLDevice device, DLDataType dtype,
                   uint64_t flags) {
    for (int i = 0; i < t.shape.ndim; ++i) e->shape[i] = t.shape.dims[i];
    contiguous_strides(t.shape, e->strides);
    DLTensor& d = e->managed.dl_tensor;
    d.data = data;
    d.device = device;
    d.ndim = t.shape.ndim;
    d.dtype = dtype;
    d.shape = e->shape;
    d.strides = e->strides;
    d.byte_offset = 0;
    e->managed.manager_ctx = e.get();
    e->managed.deleter = &E::deleter;
    if constexpr (std::is_same_v<decltype(e->managed), DLManagedTensorVersioned>) {
        e->managed.version = DLPackVersion{DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
        e->managed.flags = flags;
    } else {
        static_cast<void>(flags);  // the unversioned form has none
    }
    return &e.release()->managed;
}

// One exported tensor sharing the tensor's memory: the buffer stays alive
// (and with it the plugin's context and library, objects.hpp) until the
// consumer's deleter runs, whether or not the tensor or the runtime still are.
template <class Managed>
struct SharedExport {
    Managed managed{};
    int64_t shape[PX_MAX_DIMS] = {};
    int64_t strides[PX_MAX_DIMS] = {};
    std::shared_ptr<Buffer> buffer;
    uint64_t offset = 0;  // the tensor's, into `buffer`, whose bytes start at managed.dl_tensor.data - offset
    px_dtype dtype = PX_FLOAT32;

    static void deleter(Managed* self) { delete static_cast<SharedExport*>(self->manager_ctx); }
};

// Where `t`'s buffer lives, if its plugin says (PX_OK); else why not (the
// copy's reason). A plugin failure other than PX_ERROR_UNSUPPORTED throws.
bool buffer_memory_of(const TensorObj& t, px_buffer_memory& mem, std::string& why) {
    const DeviceImpl& dev = t.device();
    const PluginInstance& p = *dev.plugin;
    if (!p.api->buffer_memory) {
        why = lacks_slot(dev, "buffer_memory", "gives a buffer's address");
        return false;
    }
    std::memset(&mem, 0, sizeof mem);
    mem.struct_size = sizeof mem;
    px_plugin_error err;
    err.struct_size = sizeof err;
    err.message[0] = '\0';
    px_status s = PX_ERROR_PLUGIN;
    try {
        s = p.api->buffer_memory(p.context, t.buffer->handle, &mem, &err);
    } catch (...) {
        p.escaped(cat("buffer_memory on ", dev.label));
    }
    if (s == PX_ERROR_UNSUPPORTED) {
        err.message[PX_MESSAGE_MAX - 1] = '\0';
        why = cat("its plugin '", p.name, "' does not share this buffer: ", err.message);
        return false;
    }
    if (s != PX_OK) p.raise(s, cat("asking for the address of a buffer on ", dev.label), err);
    if (mem.memory_kind == PX_MEMORY_HOST) return true;
    if (mem.memory_kind == PX_MEMORY_CUDA) return true;
    why = cat("its plugin '", p.name, "' gave memory of kind ", mem.memory_kind, ", which DLPack cannot name");
    return false;
}

template <class Managed>
Managed* export_shared(const TensorObj& t, const px_buffer_memory& mem) {
    const DLDataType dtype = to_dl(t.dtype);
    if (t.bytes() > 0 && (!mem.address || t.offset > mem.bytes || t.bytes() > mem.bytes - t.offset))
        fail(PX_ERROR_PLUGIN, "plugin ", t.device().plugin->name, " gave ", mem.bytes, " bytes at ", mem.address,
             " for a buffer that holds ", t.offset + t.bytes(), " [buffer_memory]");
    // Complete before the consumer reads: the device's queue has run the
    // work that makes t (for CUDA: every stream the consumer may name waits
    // trivially). A failure of that work is reported here.
    t.device().synchronize();
    auto e = std::make_unique<SharedExport<Managed>>();
    e->buffer = t.buffer;
    e->offset = t.offset;
    e->dtype = t.dtype;
    // The view's offset goes into data, byte_offset stays 0: PyTorch 1.13
    // ignores byte_offset, and PyTorch's own exports do the same.
    void* data = mem.address ? static_cast<char*>(mem.address) + t.offset : nullptr;
    const DLDevice device = mem.memory_kind == PX_MEMORY_CUDA ? DLDevice{kDLCUDA, mem.device_id} : DLDevice{kDLCPU, 0};
    return finish_export(std::move(e), t, data, device, dtype, 0);  // flags 0: shared and writable
}

template <class Managed>
Managed* export_copy(const TensorObj& t) {
    const DLDataType dtype = to_dl(t.dtype);
    auto e = std::make_unique<Export<Managed>>();
    const uint64_t bytes = t.bytes();
    // Never NULL, even for no elements: some consumers read the pointer.
    e->data.reset(::operator new(bytes ? bytes : kDataAlignment, std::align_val_t(kDataAlignment)));
    router::to_host(t, e->data.get(), bytes);  // waits for the work that makes t; reports its failure
    void* data = e->data.get();
    return finish_export(std::move(e), t, data, DLDevice{kDLCPU, 0}, dtype, DLPACK_FLAG_BITMASK_IS_COPIED);
}

template <class Managed>
Managed* export_tensor(const TensorObj& t, int32_t copy) {
    check_copy_policy(copy);
    if (copy != PX_DLPACK_COPY_ALWAYS && t.bytes() > 0) {  // no elements: nothing to share, a copy of nothing
        px_buffer_memory mem;
        std::string why;
        if (buffer_memory_of(t, mem, why)) return export_shared<Managed>(t, mem);
        if (copy == PX_DLPACK_COPY_NEVER) refuse_sharing("sharing the memory of a tensor on", t.device(), why);
    }
    return export_copy<Managed>(t);
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

// A DLPack tensor a wrapped buffer holds: release is what the plugin calls
// once when the buffer is freed (plugin ABI 1.5's buffer_wrap), and hands
// `in` back to its producer unless the import failed after the wrap (then
// `in` is still the caller's, and `in` is NULL here).
template <class Managed>
struct Hold {
    Managed* in = nullptr;
    static void release(void* context) {
        auto* h = static_cast<Hold*>(context);
        if (h->in && h->in->deleter) h->in->deleter(h->in);
        delete h;
    }
};

// Whether `t`'s elements are compact row-major from data + byte_offset
// (axes of length 1 may have any stride), which a Plexus tensor describes.
bool compact_layout(const DLTensor& t, const Shape& shape) {
    if (!t.strides) return true;
    int64_t compact[PX_MAX_DIMS];
    contiguous_strides(shape, compact);
    for (int i = 0; i < t.ndim; ++i)
        if (shape.dims[i] > 1 && t.strides[i] != compact[i]) return false;
    return true;
}

// t's device type as a number: a producer may send one no DLDeviceType
// names, and loading that as the enum is undefined.
int32_t dl_device_type(const DLTensor& t) {
    int32_t type = 0;
    static_assert(sizeof type == sizeof t.device.device_type, "DLDeviceType is 32 bits");
    std::memcpy(&type, &t.device.device_type, sizeof type);
    return type;
}

// The memory `t` lies in, as a plugin takes it; false (with why) when DLPack's device has no such kind.
bool dl_memory_kind(const DLTensor& t, px_buffer_memory& mem, std::string& why) {
    switch (dl_device_type(t)) {
    case kDLCPU:
    case kDLCUDAHost:
        mem.memory_kind = PX_MEMORY_HOST, mem.device_id = 0;
        return true;
    case kDLCUDA:
        mem.memory_kind = PX_MEMORY_CUDA, mem.device_id = t.device.device_id;
        return true;
    default:
        why = cat("the tensor is on ", dl_device_name(dl_device_type(t)), ", which no plugin takes");
        return false;
    }
}

// A tensor over the producer's memory, when `dev`'s plugin takes it; else
// nullptr with the reason in `why`. On success `in` is the plugin's: it
// calls in's deleter when the last tensor using the buffer is gone.
template <class Managed>
TensorObj* import_shared(const std::shared_ptr<DeviceImpl>& dev, Managed* in, px_dtype dtype, const Shape& shape,
                         Hold<Managed>*& hold, std::string& why) {
    const DLTensor& t = in->dl_tensor;
    if constexpr (std::is_same_v<Managed, DLManagedTensorVersioned>) {
        if (in->flags & DLPACK_FLAG_BITMASK_READ_ONLY) {
            why = "the tensor is read-only (DLPACK_FLAG_BITMASK_READ_ONLY), and a Plexus tensor may be written";
            return nullptr;
        }
    }
    if (!compact_layout(t, shape)) {
        why = "its strides are not compact row-major, which a Plexus tensor cannot describe";
        return nullptr;
    }
    px_buffer_memory mem;
    std::memset(&mem, 0, sizeof mem);
    mem.struct_size = sizeof mem;
    if (!dl_memory_kind(t, mem, why)) return nullptr;
    const uint64_t bytes = byte_size(shape, dtype);
    mem.address = bytes ? static_cast<char*>(t.data) + t.byte_offset : nullptr;
    mem.bytes = bytes;
    const size_t element = px_dtype_size(dtype);  // from_dl gives a Plexus dtype: never 0
    if (element == 0 || reinterpret_cast<uintptr_t>(mem.address) % element != 0) {
        why = cat("data + byte_offset is not aligned to the ", element, " bytes of ", px_dtype_name(dtype));
        return nullptr;
    }
    const PluginInstance& p = *dev->plugin;
    if (!p.api->buffer_wrap) {
        why = lacks_slot(*dev, "buffer_wrap", "takes memory the plugin did not allocate");
        return nullptr;
    }
    auto held = std::make_unique<Hold<Managed>>();
    held->in = in;
    mem.release = &Hold<Managed>::release;
    mem.release_context = held.get();
    auto made = std::make_unique<TensorObj>();  // before the wrap: nothing may fail after it
    made->dtype = dtype;
    made->shape = shape;
    made->buffer = std::make_shared<Buffer>(dev, nullptr, bytes, Buffer::Adopt{});  // no handle: frees nothing
    px_plugin_buffer* handle = nullptr;
    px_plugin_error err;
    err.struct_size = sizeof err;
    err.message[0] = '\0';
    px_status s = PX_ERROR_PLUGIN;
    try {
        s = p.api->buffer_wrap(p.context, dev->local, &mem, &handle, &err);
    } catch (...) {
        p.escaped(cat("buffer_wrap on ", dev->label));
    }
    if (s == PX_ERROR_UNSUPPORTED) {
        err.message[PX_MESSAGE_MAX - 1] = '\0';
        why = cat("its plugin '", p.name, "' does not take this memory: ", err.message);
        return nullptr;
    }
    if (s != PX_OK) p.raise(s, cat("wrapping ", bytes, " bytes of the producer's memory on ", dev->label), err);
    if (!handle) fail(PX_ERROR_PLUGIN, "plugin ", p.name, " returned a NULL buffer from buffer_wrap");
    hold = held.release();  // the plugin's now: it calls release exactly once
    made->buffer->handle = handle;
    return made.release();
}

// A tensor this Plexus exported itself (export_shared), back onto its own
// device: a tensor over the same buffer, so that writes through either
// count together (px_tensor_version) and nothing is wrapped; nullptr when
// `in` is another producer's, or moved, retyped or grown since.
template <class Managed>
TensorObj* import_own(const std::shared_ptr<DeviceImpl>& dev, const Managed* in, px_dtype dtype, const Shape& shape) {
    if (in->deleter != &SharedExport<Managed>::deleter) return nullptr;
    const auto* e = static_cast<const SharedExport<Managed>*>(in->manager_ctx);
    const DLTensor& t = in->dl_tensor;
    const uint64_t bytes = byte_size(shape, dtype);
    if (e->buffer->device != dev || t.data != e->managed.dl_tensor.data || t.byte_offset != 0 || dtype != e->dtype ||
        !compact_layout(t, shape) || e->offset > e->buffer->bytes || bytes > e->buffer->bytes - e->offset)
        return nullptr;
    auto made = std::make_unique<TensorObj>();
    made->buffer = e->buffer;
    made->offset = e->offset;
    made->dtype = dtype;
    made->shape = shape;
    return made.release();
}

// The values of `t`, copied onto `dev`.
// (`why`: why it was not shared, for the refusal; empty when not tried.)
TensorObj* import_copy(const std::shared_ptr<DeviceImpl>& dev, const DLTensor& t, px_dtype dtype, const Shape& shape,
                       const std::string& why) {
    const uint64_t bytes = byte_size(shape, dtype);
    if (bytes == 0) return router::from_host(dev, dtype, shape, nullptr, 0);  // nothing to read, wherever it is
    const int32_t type = dl_device_type(t);
    if (type != kDLCPU && type != kDLCUDAHost)
        fail(PX_ERROR_UNSUPPORTED, "the tensor is on ", dl_device_name(type), " (", type, ", id ", t.device.device_id,
             "), which the host cannot read to copy; Plexus copies memory of kDLCPU and kDLCUDAHost, and shares "
             "kDLCUDA memory of a GPU of the 'cuda' plugin when imported onto that GPU",
             why.empty() ? std::string() : cat(" (not shared onto ", dev->label, ": ", why, ")"));
    const auto* base = static_cast<const unsigned char*>(t.data) + t.byte_offset;
    if (compact_layout(t, shape)) return router::from_host(dev, dtype, shape, base, bytes);
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

// Imports `in` onto `device`, sharing where it can. Publishes the tensor;
// `in` is Plexus's from then on (a copy hands it back at once, a shared
// tensor when its buffer goes). On a failure `in` is still the caller's.
template <class Managed>
void import_tensor(Runtime& rt, px_device device, Managed* in, int32_t copy, px_tensor** out) {
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
    const px_dtype dtype = from_dl(t.dtype);
    if (t.ndim < 0 || t.ndim > PX_MAX_DIMS)
        fail(PX_ERROR_SHAPE, "the tensor's rank ", t.ndim, " is outside 0..", PX_MAX_DIMS);
    if (t.ndim > 0 && !t.shape) fail(PX_ERROR_INVALID_ARGUMENT, "the tensor's shape is NULL for rank ", t.ndim);
    const Shape shape = make_shape(t.ndim, t.shape, "the tensor's shape");
    const uint64_t bytes = byte_size(shape, dtype);
    if (bytes > 0 && !t.data) fail(PX_ERROR_INVALID_ARGUMENT, "the tensor's data is NULL for ", numel(shape), " elements");
    std::string why;
    if (copy != PX_DLPACK_COPY_ALWAYS && bytes > 0) {  // no elements: nothing to share, a copy of nothing
        if (TensorObj* own = import_own(dev, in, dtype, shape)) {
            *out = publish(own);
            in->deleter(in);  // its buffer lives on in the new tensor
            return;
        }
        Hold<Managed>* hold = nullptr;
        if (TensorObj* shared = import_shared(dev, in, dtype, shape, hold, why)) {
            std::unique_ptr<TensorObj> owned(shared);
            uint64_t handle = 0;
            try {
                handle = tensor_table().insert(shared);
            } catch (...) {
                hold->in = nullptr;  // `in` stays the caller's; the buffer goes with `owned`
                throw;
            }
            static_cast<void>(owned.release());  // the table owns it now
            *out = reinterpret_cast<px_tensor*>(handle);
            return;
        }
        if (copy == PX_DLPACK_COPY_NEVER)
            refuse_sharing("importing memory onto", *dev, why,
                           dl_device_type(t) == kDLCPU || dl_device_type(t) == kDLCUDAHost);
    }
    *out = publish(import_copy(dev, t, dtype, shape, why));
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
            *device_type = kDLExtDev, *device_id = d.accel_index >= 0 ? d.accel_index : d.id.index;
        }
    });
}

px_status px_tensor_to_dlpack(px_tensor* tensor, int32_t copy, DLManagedTensorVersioned** out) {
    return guard("px_tensor_to_dlpack", [&] {
        const TensorObj& t = get_tensor(tensor);
        need_out(out);
        *out = export_tensor<DLManagedTensorVersioned>(t, copy);
    });
}

px_status px_tensor_to_dlpack_unversioned(px_tensor* tensor, int32_t copy, DLManagedTensor** out) {
    return guard("px_tensor_to_dlpack_unversioned", [&] {
        const TensorObj& t = get_tensor(tensor);
        need_out(out);
        *out = export_tensor<DLManagedTensor>(t, copy);
    });
}

px_status px_tensor_from_dlpack(px_runtime* runtime, px_device device, DLManagedTensorVersioned* in, int32_t copy,
                                px_tensor** out) {
    return guard("px_tensor_from_dlpack", [&] {
        Runtime& rt = get_runtime(runtime);
        need_out(out);
        import_tensor(rt, device, in, copy, out);
    });
}

px_status px_tensor_from_dlpack_unversioned(px_runtime* runtime, px_device device, DLManagedTensor* in, int32_t copy,
                                            px_tensor** out) {
    return guard("px_tensor_from_dlpack_unversioned", [&] {
        Runtime& rt = get_runtime(runtime);
        need_out(out);
        import_tensor(rt, device, in, copy, out);
    });
}

}  // extern "C"
