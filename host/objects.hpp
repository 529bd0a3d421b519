// The host's object model: a loaded plugin, a device it provides, a buffer of
// device memory, a tensor (a typed, shaped window on a buffer) and the
// runtime that owns the lists. Ownership runs tensor -> buffer -> device ->
// plugin, so a plugin's library stays loaded while anything it made lives.
#pragma once

#include <atomic>
#include <bitset>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <boost/dll/shared_library.hpp>

#include "error.hpp"
#include "handles.hpp"
#include "plexus/plexus.h"
#include "plexus/plugin.h"
#include "refcount.hpp"
#include "shape.hpp"

namespace px {

struct PluginInstance {
    boost::dll::shared_library library;  // first member: unloaded last
    std::unique_ptr<px_plugin_api> table;  // our copy, zero past the plugin's struct_size
    const px_plugin_api* api = nullptr;    // == table.get() once create() succeeded
    px_plugin_context* context = nullptr;
    std::string name, version, file;

    PluginInstance() = default;
    PluginInstance(const PluginInstance&) = delete;
    PluginInstance& operator=(const PluginInstance&) = delete;
    ~PluginInstance();

    // Calls a plugin slot with an error struct; a failure becomes a Failure
    // whose message starts with context() (built only on failure, so the
    // fast path formats nothing) and ends with the plugin's words.
    template <class Context, class F>
    void call(Context&& context, F&& slot) const {
        px_plugin_error err;
        err.struct_size = sizeof err;
        err.message[0] = '\0';
        px_status s;
        try {
            s = slot(&err);
        } catch (...) {  // the ABI forbids it, but a C++ plugin may still let one escape
            escaped(context());
        }
        if (s != PX_OK) raise(s, context(), err);
    }
    [[noreturn]] void raise(px_status s, const std::string& context, px_plugin_error& err) const;
    // Inside a catch: the escaped exception as a PX_ERROR_PLUGIN failure.
    [[noreturn]] void escaped(const std::string& context) const;
};

// What the loader learned about one file, loaded or not.
struct PluginRecord {
    std::string file, name, version, message;
    uint32_t abi_major = 0, abi_minor = 0;
    bool loaded = false;
    int32_t num_devices = 0;
};

struct Runtime;
class Tracer;  // trace.hpp

struct DeviceImpl {
    std::shared_ptr<PluginInstance> plugin;
    std::weak_ptr<Runtime> runtime;  // tensors may outlive their runtime
    int32_t local = 0;  // the plugin's own index
    px_device id{};     // its own name: naive(0) for an accelerator its plugin names
    int32_t accel_index = -1;  // i of accel(i), for an accelerator
    std::string label;  // "cpu(0)"
    std::shared_ptr<Tracer> tracer;  // its runtime's (trace.hpp); every device of a runtime shares it
    uint64_t memory_total = 0;  // from device_info at load; 0 when the plugin does not say
    // (op, dtype) pairs, read once at load: kDtypeSlots bits per op.
    static constexpr int kDtypeSlots = 8;
    static_assert(PX_BFLOAT16 < kDtypeSlots, "a dtype past the table's slots: widen kDtypeSlots");
    std::bitset<size_t(PX_OP_NUMBER_LIMIT) * kDtypeSlots> supported;

    bool supports(int32_t op, int32_t dtype) const {
        return op >= 0 && op < PX_OP_NUMBER_LIMIT && dtype >= 0 && dtype < kDtypeSlots &&
               supported[size_t(op) * kDtypeSlots + size_t(dtype)];
    }
    DeviceImpl() = default;
    DeviceImpl(const DeviceImpl&) = delete;
    DeviceImpl& operator=(const DeviceImpl&) = delete;
    ~DeviceImpl();  // waits for the timed waits' background thread (bounded by the device's work)

    // The waiting points (device_wait.cpp). Every failure of queued work
    // reaches the application exactly once: at the wait that takes it from
    // the plugin, or, when the host's own wait took it (a timed wait's
    // background wait, the trace's end), kept and given to the next waiting
    // point, which waits for such host waits in flight first.

    // Waits for all queued work; a device failure becomes PX_ERROR_DEVICE.
    void synchronize() const;
    // The same, waiting at most `seconds`; work still running then is a
    // PX_ERROR_DEVICE saying so, and a wait goes on in the background, its
    // failure kept for a later waiting point.
    void synchronize_within(double seconds) const;
    // Whether the queued work has all run, waiting at most `seconds` (a
    // background wait as synchronize_within's); a failure is kept for the
    // next waiting point (settle() then reports it), never thrown here.
    bool finished_within(double seconds) const;
    // A wait of the host's own: any failure it finds is kept (never thrown).
    void drain() const;
    // Ends a waiting point that did its own wait or read (`own`, its
    // failure if it had one): once the host's waits in flight have ended,
    // throws the kept failure (with `own` named after it), else `own`.
    void settle(const Failure* own = nullptr) const;
    // A waiting point that waits or reads by itself (a read, a copy): runs
    // `wait_or_read`, then settles with its failure, if any.
    template <class F>
    void settled(F&& wait_or_read) const {
        try {
            wait_or_read();
        } catch (const Failure& own) {
            settle(&own);
        }
        settle();
    }
    // `d` in the runtime of `self` (this device, for copies). Once the
    // runtime is gone only `self`'s own name resolves (to `self`); any other
    // fails, naming why.
    static std::shared_ptr<DeviceImpl> runtime_device(const std::shared_ptr<DeviceImpl>& self, px_device d);
    // Counts a call that queued work on this device (an op, a copy, a
    // collective), once the plugin has it: a timed wait after a wait that
    // covered every such call finds the device idle without a thread.
    void note_submitted() const;
    // note_submitted() when it ends, however the plugin call ends.
    struct Submitting {
        const DeviceImpl& device;
        ~Submitting() { device.note_submitted(); }
    };

    struct Waits;  // shared with the background wait, which may outlive the device

private:
    void report_kept(std::unique_lock<std::mutex>& lock, const Failure* own) const;  // settle's end
    bool finished_within(std::unique_lock<std::mutex>& lock, double seconds) const;  // (lock: waits_'s)
    std::shared_ptr<Waits> waits_ = make_waits();
    static std::shared_ptr<Waits> make_waits();
};

struct Buffer {
    std::shared_ptr<DeviceImpl> device;
    px_plugin_buffer* handle = nullptr;
    uint64_t bytes = 0;
    // Writes in place made through Plexus to this memory, counted for every
    // tensor that shares it (px_tensor_version).
    std::atomic<uint64_t> writes{0};
    // Memory Plexus did not allocate (a DLPack import): another buffer, or
    // another import of it, may hold the same bytes.
    const bool adopted = false;

    Buffer(std::shared_ptr<DeviceImpl> d, uint64_t n);  // allocates
    struct Adopt {};
    // Takes `wrapped` as it is (plugin ABI 1.5's buffer_wrap made it); freed like any other.
    Buffer(std::shared_ptr<DeviceImpl> d, px_plugin_buffer* wrapped, uint64_t n, Adopt) noexcept
        : device(std::move(d)), handle(wrapped), bytes(n), adopted(true) {}
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
    ~Buffer();  // frees, ordered after queued work
};

struct TensorObj;
// Whether a and b may hold some of the same bytes: overlapping parts of
// one buffer, or an imported buffer beside another on the same device.
bool may_share_memory(const TensorObj& a, const TensorObj& b);

struct TensorObj {
    RefCount refs;
    std::shared_ptr<Buffer> buffer;
    uint64_t offset = 0;  // bytes into buffer
    px_dtype dtype = PX_FLOAT32;
    Shape shape;

    DeviceImpl& device() const { return *buffer->device; }
    // Counts a write in place, once it is queued, for px_tensor_version.
    void note_write() const { buffer->writes.fetch_add(1); }
    uint64_t bytes() const { return numel(shape) * px_dtype_size(dtype); }
    // A desc of the whole tensor, contiguous.
    px_tensor_desc desc() const;
    // Sets every field but shape/strides[0..ndim) (which the caller fills).
    void fill_desc(px_tensor_desc& d, int32_t ndim) const;
};

struct Runtime {
    std::vector<PluginRecord> records;
    std::vector<std::shared_ptr<PluginInstance>> plugins;
    // By px_device_kind: every device once (accel: every accelerator, named or not).
    std::vector<std::shared_ptr<DeviceImpl>> devices[4];
    // By a kind a plugin named (device_kinds.hpp): the same accelerators again.
    std::map<int32_t, std::vector<std::shared_ptr<DeviceImpl>>> named;
    std::atomic<uint64_t> seed{0};
    std::atomic<uint64_t> rng_offset{0};
    std::atomic<bool> allow_tf32{false};  // px_runtime_allow_tf32
    std::shared_ptr<Tracer> tracer;       // px_trace_begin, PLEXUS_TRACE (trace.hpp)

    // The device, or PX_ERROR_NO_DEVICE naming what exists and why.
    const std::shared_ptr<DeviceImpl>& device(px_device d) const;
    // The devices of `kind` (built in or named); PX_ERROR_INVALID_ARGUMENT
    // for a number that is no kind. Empty for a kind this runtime lacks.
    const std::vector<std::shared_ptr<DeviceImpl>>& devices_of(int32_t kind) const;
    // The kinds this runtime has, as "cpu, gpu, naive".
    std::string kind_names() const;
    // Reserves `count` counters of the random stream; returns the first.
    // The stream's next `count` draws; refused rather than wrapped past 2^64,
    // where the stream would repeat itself.
    uint64_t take_random_offset(uint64_t count) {
        uint64_t at = rng_offset.load();
        do {
            if (count > UINT64_MAX - at)
                fail(PX_ERROR_INVALID_ARGUMENT, "the random stream's offset ", at, " has no room for ", count,
                     " more draws before 2^64; give another seed (px_runtime_seed) or state");
        } while (!rng_offset.compare_exchange_weak(at, at + count));
        return at;
    }
};

// A process's membership of a process group (plugin ABI 1.3), on one device.
struct GroupObj {
    std::shared_ptr<DeviceImpl> device;  // keeps the plugin loaded
    px_plugin_group* handle = nullptr;
    int32_t rank = 0, size = 1;

    GroupObj(std::shared_ptr<DeviceImpl> d, px_plugin_group* h, int32_t r, int32_t n)
        : device(std::move(d)), handle(h), rank(r), size(n) {}
    GroupObj(const GroupObj&) = delete;
    GroupObj& operator=(const GroupObj&) = delete;
    ~GroupObj();  // leaves the group (the plugin waits for its queued work)
};

using RuntimeTable = HandleTable<std::shared_ptr<Runtime>, HandleKind::runtime>;
using TensorTable = HandleTable<TensorObj, HandleKind::tensor>;
using GroupTable = HandleTable<GroupObj, HandleKind::group>;
// This copy of libplexus's handle tag, unique among the copies in the process.
uint32_t library_tag();
RuntimeTable& runtime_table();
TensorTable& tensor_table();
// PLEXUS_MAX_LIVE_TENSORS caps the process's live tensor handles (a leak
// fails fast as out-of-memory instead of exhausting the host); unset, the
// table's capacity. Read at each px_runtime_create; a bad value fails it.
void limit_live_tensors_from_environment();
GroupTable& group_table();

// Handle <-> object, with messages naming the argument.
Runtime& get_runtime(px_runtime* handle, const char* arg = "runtime");
TensorObj& get_tensor(px_tensor* handle, const char* arg = "tensor");
GroupObj& get_group(px_group* handle, const char* arg = "group");
px_tensor* publish(TensorObj* tensor);  // takes ownership of one reference
void release(px_tensor* handle);

// A new tensor on `device` with fresh memory.
TensorObj* new_tensor(const std::shared_ptr<DeviceImpl>& device, px_dtype dtype, const Shape& shape);
// A view of `base` sharing its buffer.
TensorObj* new_view(const TensorObj& base, uint64_t offset, const Shape& shape);

void check_dtype(int32_t dtype, const char* what = "dtype");

}  // namespace px
