// plexus C++ frontend: Device values and the process's default runtime.
#pragma once

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <ostream>
#include <string>
#include <vector>

#include "plexus/cpp/errors.hpp"

namespace plexus {

// A device name: cpu(0), gpu(1), naive(0) (a kind a plugin names: plexus.h,
// and parse_device below). Cheap to copy; checked when used.
struct Device {
    px_device_kind kind = PX_DEVICE_CPU;
    int index = 0;

    static Device of(px_device d) { return Device{static_cast<px_device_kind>(d.kind), d.index}; }
    px_device raw() const { return px_device{kind, index}; }
    // "cpu", "gpu", "accel" or a plugin's name ("kind<N>" for a number no kind has).
    std::string kind_name() const {
        const char* k = px_device_kind_label(kind);
        return k ? std::string(k) : "kind" + std::to_string(int(kind));
    }
    std::string str() const { return kind_name() + "(" + std::to_string(index) + ")"; }
    bool operator==(const Device& o) const { return kind == o.kind && index == o.index; }
    bool operator!=(const Device& o) const { return !(*this == o); }
};

inline std::ostream& operator<<(std::ostream& os, const Device& d) { return os << d.str(); }

inline Device cpu(int i = 0) { return Device{PX_DEVICE_CPU, i}; }
inline Device gpu(int i = 0) { return Device{PX_DEVICE_GPU, i}; }
inline Device accel(int i = 0) { return Device{PX_DEVICE_ACCELERATOR, i}; }

// The runtime the frontend uses, created at first use with the default
// plugin search (PLEXUS_PLUGIN_PATH, then the folder next to libplexus).
// Plugins that fail to load do not make this fail; see plexus-smi. A child
// forked since gets one of its own at its first use there: the parent's
// CPU devices cannot compute in a child (docs/thread-safety.md), and its
// tensors stay the parent's. Never destroyed: tensors may outlive statics.
inline px_runtime* runtime() {
    static std::atomic<px_runtime*> made{nullptr};
    static std::atomic<uint64_t> made_in{0};  // the px_fork_generation it was made in
    static std::mutex& making = *new std::mutex;
    // made is stored before made_in: a made_in of this generation means made is of it too.
    const uint64_t now = px_fork_generation();
    auto current = [&]() -> px_runtime* {
        return made_in.load(std::memory_order_acquire) == now ? made.load(std::memory_order_acquire) : nullptr;
    };
    if (px_runtime* rt = current()) return rt;
    std::lock_guard<std::mutex> lock(making);
    if (px_runtime* rt = current()) return rt;
    px_runtime* fresh = nullptr;
    check(px_runtime_create(nullptr, &fresh));
    made.store(fresh, std::memory_order_release);
    made_in.store(now, std::memory_order_release);
    return fresh;
}

// The device "naive:0", "naive(0)", "gpu:1" or "cpu" names in the default
// runtime; the kind must be cpu, gpu, accel or one its plugins name.
inline Device parse_device(const std::string& text) {
    px_device d{};
    check(px_runtime_parse_device(runtime(), text.c_str(), &d));
    return Device::of(d);
}

inline int num_devices(px_device_kind kind) {
    int32_t n = 0;
    check(px_runtime_device_count(runtime(), kind, &n));
    return n;
}

// The name `d` has of its own: naive(0) for accel(i) of the plugin naive.
inline Device resolve(Device d) {
    px_device own{};
    check(px_runtime_resolve_device(runtime(), d.raw(), &own));
    return Device::of(own);
}

// Every device of the default runtime once, by its own name: cpu, gpu,
// the accelerators without a name of their own, then the named kinds.
inline std::vector<Device> all_devices() {
    std::vector<Device> out;
    auto add_kind = [&out](int32_t kind) {
        for (int i = 0; i < num_devices(static_cast<px_device_kind>(kind)); ++i) {
            const Device d{static_cast<px_device_kind>(kind), i};
            if (resolve(d) == d) out.push_back(d);
        }
    };
    for (int32_t k = PX_DEVICE_CPU; k <= PX_DEVICE_ACCELERATOR; ++k) add_kind(k);
    for (int32_t k = PX_DEVICE_KIND_NAMED_FIRST; px_device_kind_label(k); ++k) add_kind(k);
    return out;
}

inline int num_gpus() { return num_devices(PX_DEVICE_GPU); }

// gpu(i) if it exists, otherwise cpu().
inline Device try_gpu(int i = 0) { return num_gpus() >= i + 1 ? gpu(i) : cpu(); }

// All GPUs, or {cpu()} when there is none.
inline std::vector<Device> try_all_gpus() {
    const int n = num_gpus();
    std::vector<Device> out;
    out.reserve(size_t(n > 0 ? n : 1));
    for (int i = 0; i < n; ++i) out.push_back(gpu(i));
    if (out.empty()) out.push_back(cpu());
    return out;
}

// Memory and name of a device.
inline px_device_info device_info(Device d) {
    px_device_info info{};
    info.struct_size = sizeof info;
    check(px_runtime_device_info(runtime(), d.raw(), &info));
    return info;
}

// Every plugin the runtime tried: file, name, version, ABI, loaded or why not.
inline std::vector<px_plugin_info> plugins() {
    int32_t n = 0;
    check(px_runtime_plugin_count(runtime(), &n));
    std::vector<px_plugin_info> out(size_t(n), px_plugin_info{});
    for (int32_t i = 0; i < n; ++i) {
        out[size_t(i)].struct_size = sizeof(px_plugin_info);
        check(px_runtime_plugin_info(runtime(), i, &out[size_t(i)]));
    }
    return out;
}

// The name of the plugin that provides `d`.
inline std::string plugin_of(Device d) {
    const char* name = nullptr;
    check(px_runtime_device_plugin(runtime(), d.raw(), &name));
    return name;
}

// Whether `d` runs `op` on inputs of `dtype` (see px_runtime_device_supports).
inline bool supports(Device d, px_op op, px_dtype dtype) {
    int32_t yes = 0;
    check(px_runtime_device_supports(runtime(), d.raw(), op, dtype, &yes));
    return yes != 0;
}

// Waits for all work queued on `d` (or on every device).
inline void synchronize(Device d) { check(px_runtime_synchronize(runtime(), d.raw())); }
inline void synchronize_all() { check(px_runtime_synchronize_all(runtime())); }
// Waits at most `seconds`: a DeviceError says when the work is still running.
inline void synchronize(Device d, double seconds) { check(px_runtime_synchronize_timeout(runtime(), d.raw(), seconds)); }

// Seeds the random stream; the same seed gives the same tensors.
inline void seed(uint64_t s) { check(px_runtime_seed(runtime(), s)); }
// The random stream's seed and next offset, to save and restore (a checkpoint).
struct RandomState {
    uint64_t seed = 0, offset = 0;
};
inline RandomState random_state() {
    RandomState r;
    check(px_runtime_random_state(runtime(), &r.seed, &r.offset));
    return r;
}
inline void set_random_state(const RandomState& r) { check(px_runtime_set_random_state(runtime(), r.seed, r.offset)); }

// Lets float32 matrix products use TF32 tensor cores (faster, less precise); off by default.
inline void allow_tf32(bool on) { check(px_runtime_allow_tf32(runtime(), on ? 1 : 0)); }

}  // namespace plexus
