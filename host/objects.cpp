#include "objects.hpp"

#include <pthread.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "device_kinds.hpp"

namespace px {

PluginInstance::~PluginInstance() {
    if (context && api) {
        try {
            api->destroy(context);
        } catch (...) {  // forbidden by the ABI, and a destructor must not throw
            std::fprintf(stderr, "plexus: plugin %s let a C++ exception escape destroy()\n", name.c_str());
        }
    }
}

void PluginInstance::raise(px_status s, const std::string& context_text, px_plugin_error& err) const {
    err.message[PX_MESSAGE_MAX - 1] = '\0';
    std::string words = err.message[0] ? err.message : "(the plugin gave no message)";
    // A plugin may only return statuses the ABI defines.
    if (s < PX_ERROR_INVALID_ARGUMENT || s > PX_ERROR_INTERNAL) {
        words = cat("returned the unknown status ", static_cast<int>(s), ": ", words);
        s = PX_ERROR_PLUGIN;
    }
    fail(s, context_text, ": ", words, " [plugin ", name, "]");
}

void PluginInstance::escaped(const std::string& context_text) const {
    std::string what = "an exception that is not a std::exception";
    try {
        throw;
    } catch (const std::exception& e) {
        what = cat("a C++ exception (", e.what(), ")");
    } catch (...) {
    }
    fail(PX_ERROR_PLUGIN, context_text, ": the plugin let ", what,
         " escape through the C ABI, which forbids it [plugin ", name, "]");
}

std::shared_ptr<DeviceImpl> DeviceImpl::runtime_device(const std::shared_ptr<DeviceImpl>& self, px_device d) {
    auto rt = self->runtime.lock();
    if (rt) return rt->device(d);
    const bool own = (d.kind == self->id.kind && d.index == self->id.index) ||
                     (d.kind == PX_DEVICE_ACCELERATOR && d.index == self->accel_index);
    if (!own)
        fail(PX_ERROR_NO_DEVICE, "the runtime of this tensor (on ", self->label,
             ") was destroyed; other devices can no longer be looked up");
    return self;
}

Buffer::Buffer(std::shared_ptr<DeviceImpl> d, uint64_t n) : device(std::move(d)), bytes(n) {
    // More than the device has in all is refused here, so no plugin is asked
    // for (and no driver tries to map) an impossible size.
    if (device->memory_total > 0 && n > device->memory_total)
        fail(PX_ERROR_OUT_OF_MEMORY, "asked for ", n, " bytes on ", device->label, ", which has ",
             device->memory_total, " bytes in all");
    const auto& p = *device->plugin;
    px_plugin_buffer* out = nullptr;
    p.call([&] { return cat("allocating ", n, " bytes on ", device->label); },
           [&](px_plugin_error* e) { return p.api->buffer_alloc(p.context, device->local, n, &out, e); });
    if (!out) fail(PX_ERROR_PLUGIN, "plugin ", p.name, " returned a NULL buffer for ", n, " bytes");
    handle = out;
}

Buffer::~Buffer() {
    if (!handle) return;  // adopted, and the plugin never made it (capi_dlpack.cpp)
    const auto& p = *device->plugin;
    px_plugin_error err;
    err.struct_size = sizeof err;
    err.message[0] = '\0';
    px_status s = PX_ERROR_PLUGIN;
    try {
        s = p.api->buffer_free(p.context, handle, &err);
    } catch (...) {
        std::snprintf(err.message, sizeof err.message, "a C++ exception escaped buffer_free");
    }
    if (s != PX_OK) {
        err.message[PX_MESSAGE_MAX - 1] = '\0';
        std::fprintf(stderr, "plexus: freeing a buffer on %s failed: %s [plugin %s]\n",
                     device->label.c_str(), err.message, p.name.c_str());
    }
}

px_tensor_desc TensorObj::desc() const {
    px_tensor_desc d;  // hot path: plugins read shape/strides only up to ndim (plugin.h)
    fill_desc(d, shape.ndim);
    for (int i = 0; i < shape.ndim; ++i) d.shape[i] = shape.dims[i];
    contiguous_strides(shape, d.strides);
    return d;
}

bool may_share_memory(const TensorObj& a, const TensorObj& b) {
    if (a.buffer == b.buffer)  // tensors are contiguous: their byte ranges tell
        return a.offset < b.offset + b.bytes() && b.offset < a.offset + a.bytes();
    return a.buffer->device == b.buffer->device && (a.buffer->adopted || b.buffer->adopted);
}

void TensorObj::fill_desc(px_tensor_desc& d, int32_t ndim) const {
    d.struct_size = sizeof d;
    d.dtype = dtype;
    d.buffer = buffer->handle;
    d.offset = offset;
    d.ndim = ndim;
    for (int i = ndim; i < PX_MAX_DIMS; ++i) d.shape[i] = 0, d.strides[i] = 0;
}

const std::vector<std::shared_ptr<DeviceImpl>>& Runtime::devices_of(int32_t kind) const {
    if (px_device_kind_name(kind)) return devices[kind];
    if (!kind_label(kind))
        fail(PX_ERROR_INVALID_ARGUMENT, "device kind ", kind,
             " is not a px_device_kind, nor one a plugin named (px_runtime_parse_device finds a kind by name)");
    static const std::vector<std::shared_ptr<DeviceImpl>> none;
    const auto it = named.find(kind);
    return it == named.end() ? none : it->second;
}

std::string Runtime::kind_names() const {
    std::string out;
    for (int32_t k = PX_DEVICE_CPU; k <= PX_DEVICE_ACCELERATOR; ++k)
        if (!devices[k].empty()) out += cat(out.empty() ? "" : ", ", px_device_kind_name(k));
    for (const auto& [k, list] : named) out += cat(out.empty() ? "" : ", ", kind_label(k));
    return out.empty() ? "none" : out;
}

const std::shared_ptr<DeviceImpl>& Runtime::device(px_device d) const {
    const auto& list = devices_of(d.kind);
    const char* kind = kind_label(d.kind);
    if (d.index >= 0 && static_cast<size_t>(d.index) < list.size()) return list[d.index];
    if (list.empty()) {
        std::string found;
        for (const auto& r : records) {
            found += cat(found.empty() ? "" : "; ", r.name.empty() ? r.file : r.name, " (",
                         r.loaded ? cat("loaded, ", r.num_devices, " devices") : "skipped",
                         r.message.empty() ? "" : ": " + r.message, ")");
        }
        fail(PX_ERROR_NO_DEVICE, kind, "(", d.index, ") does not exist: no loaded plugin provides ",
             kind, " devices; plugins found: ", found.empty() ? "none" : found);
    }
    fail(PX_ERROR_NO_DEVICE, kind, "(", d.index, ") does not exist: there ",
         list.size() == 1 ? "is 1 " : cat("are ", list.size(), " "), kind, " device",
         list.size() == 1 ? "" : "s", " (", kind, "(0)..", kind, "(", list.size() - 1, "))");
}

uint32_t library_tag() {
    // pthread keys are process-wide and no two held at once are equal; this
    // copy of libplexus holds one for good, so no other copy gets its tag.
    // (glibc has 1024 keys, which fit the tag's bits.)
    static const uint32_t tag = [] {
        pthread_key_t key;
        if (pthread_key_create(&key, nullptr) != 0) {  // all keys taken: a tag that differs by chance only
            static const char here = 0;
            return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(&here) >> 12);
        }
        return static_cast<uint32_t>(key);
    }();
    return tag % HandleBits::tags;
}

RuntimeTable& runtime_table() {
    static RuntimeTable* table = new RuntimeTable(library_tag());  // never destroyed: handles may outlive statics
    return *table;
}

TensorTable& tensor_table() {
    static TensorTable* table = new TensorTable(library_tag());
    return *table;
}

void limit_live_tensors_from_environment() {
    constexpr const char* var = "PLEXUS_MAX_LIVE_TENSORS";
    const char* text = std::getenv(var);
    if (!text) return tensor_table().set_limit(TensorTable::capacity, nullptr);
    char* end = nullptr;
    errno = 0;
    const unsigned long long n = std::strtoull(text, &end, 10);
    if (text[0] < '0' || text[0] > '9' || *end || errno || n < 1 || n > TensorTable::capacity)
        fail(PX_ERROR_INVALID_ARGUMENT, var, "='", text, "' is not a whole number in [1, ", TensorTable::capacity, "]");
    tensor_table().set_limit(static_cast<uint32_t>(n), var);
}

GroupTable& group_table() {
    static GroupTable* table = new GroupTable(library_tag());
    return *table;
}

Runtime& get_runtime(px_runtime* handle, const char* arg) {
    auto h = reinterpret_cast<uint64_t>(handle);
    auto* rt = runtime_table().lookup(h);
    if (!rt) fail(PX_ERROR_INVALID_HANDLE, "'", arg, "' is not a live runtime handle (", runtime_table().diagnose(h), ")");
    return **rt;
}

TensorObj& get_tensor(px_tensor* handle, const char* arg) {
    auto h = reinterpret_cast<uint64_t>(handle);
    auto* t = tensor_table().lookup(h);
    if (!t) fail(PX_ERROR_INVALID_HANDLE, "'", arg, "' is not a live tensor handle (", tensor_table().diagnose(h), ")");
    return *t;
}

GroupObj& get_group(px_group* handle, const char* arg) {
    auto h = reinterpret_cast<uint64_t>(handle);
    auto* g = group_table().lookup(h);
    if (!g) fail(PX_ERROR_INVALID_HANDLE, "'", arg, "' is not a live group handle (", group_table().diagnose(h), ")");
    return *g;
}

px_tensor* publish(TensorObj* tensor) {
    std::unique_ptr<TensorObj> owned(tensor);
    auto h = tensor_table().insert(tensor);
    static_cast<void>(owned.release());  // the table owns it now
    return reinterpret_cast<px_tensor*>(h);
}

void release(px_tensor* handle) {
    TensorObj& t = get_tensor(handle);
    if (t.refs.release()) {
        tensor_table().remove(reinterpret_cast<uint64_t>(handle));
        delete &t;
    }
}

TensorObj* new_tensor(const std::shared_ptr<DeviceImpl>& device, px_dtype dtype, const Shape& shape) {
    uint64_t bytes = byte_size(shape, dtype);
    auto t = std::make_unique<TensorObj>();
    t->buffer = std::make_shared<Buffer>(device, bytes);
    t->dtype = dtype;
    t->shape = shape;
    return t.release();
}

TensorObj* new_view(const TensorObj& base, uint64_t offset, const Shape& shape) {
    auto t = std::make_unique<TensorObj>();
    t->buffer = base.buffer;
    t->offset = offset;
    t->dtype = base.dtype;
    t->shape = shape;
    return t.release();
}

void check_dtype(int32_t dtype, const char* what) {
    if (!px_dtype_name(dtype)) fail(PX_ERROR_DTYPE, what, " ", dtype, " is not a px_dtype");
}

}  // namespace px
