// C API: runtimes, plugins, devices.
#include <cstdio>
#include <cstring>
#include <optional>

#include "device_kinds.hpp"
#include "objects.hpp"
#include "plugin_loader.hpp"
#include "trace.hpp"

using namespace px;

extern "C" {

px_status px_runtime_create(const px_runtime_options* options, px_runtime** out) {
    return guard("px_runtime_create", [&] {
        need_out(out);
        limit_live_tensors_from_environment();
        auto rt = std::make_shared<Runtime>();
        load_plugins(*rt, options);
        rt->tracer = std::make_shared<Tracer>();
        for (auto& list : rt->devices)
            for (auto& d : list) d->runtime = rt, d->tracer = rt->tracer;
        trace_from_environment(rt->tracer, every_device(*rt));
        auto* holder = new std::shared_ptr<Runtime>(std::move(rt));
        try {
            *out = reinterpret_cast<px_runtime*>(runtime_table().insert(holder));
        } catch (...) {
            delete holder;
            throw;
        }
    });
}

px_status px_runtime_destroy(px_runtime* runtime) {
    return guard("px_runtime_destroy", [&] {
        Runtime& rt = get_runtime(runtime);
        auto h = reinterpret_cast<uint64_t>(runtime);
        auto* holder = runtime_table().lookup(h);
        runtime_table().remove(h);
        // Wait for queued work. The runtime goes whatever the wait finds, so
        // a failure there is not reported: PX_OK says it is gone (plexus.h);
        // nor is a trace's (PLEXUS_TRACE's), which is written on the way.
        if (rt.tracer->on()) {
            try {
                rt.tracer->end();
            } catch (const Failure& f) {
                std::fprintf(stderr, "plexus: the trace of a runtime being destroyed: %s\n", f.message.c_str());
            }
        }
        for (auto& list : rt.devices)
            for (auto& d : list) {
                try {
                    d->synchronize();
                } catch (...) {  // NOLINT(bugprone-empty-catch): see above
                }
            }
        delete holder;
    });
}

px_status px_runtime_plugin_count(px_runtime* runtime, int32_t* out) {
    return guard("px_runtime_plugin_count", [&] {
        Runtime& rt = get_runtime(runtime);
        *need_out(out) = static_cast<int32_t>(rt.records.size());
    });
}

px_status px_runtime_plugin_info(px_runtime* runtime, int32_t index, px_plugin_info* out) {
    return guard("px_runtime_plugin_info", [&] {
        Runtime& rt = get_runtime(runtime);
        need_out(out);
        if (index < 0 || static_cast<size_t>(index) >= rt.records.size())
            fail(PX_ERROR_INVALID_ARGUMENT, "plugin index ", index, " is outside 0..", rt.records.size(), "-1");
        if (out->struct_size < sizeof(px_plugin_info))
            fail(PX_ERROR_INVALID_ARGUMENT, "out->struct_size ", out->struct_size, " is smaller than px_plugin_info (",
                 sizeof(px_plugin_info), "); set it to sizeof(px_plugin_info)");
        const PluginRecord& r = rt.records[index];
        out->file = r.file.c_str();
        out->name = r.name.c_str();
        out->version = r.version.c_str();
        out->abi_major = r.abi_major;
        out->abi_minor = r.abi_minor;
        out->loaded = r.loaded ? 1 : 0;
        out->message = r.message.c_str();
        out->num_devices = r.num_devices;
    });
}

px_status px_runtime_device_count(px_runtime* runtime, int32_t kind, int32_t* out) {
    return guard("px_runtime_device_count", [&] {
        Runtime& rt = get_runtime(runtime);
        need_out(out);
        *out = static_cast<int32_t>(rt.devices_of(kind).size());
    });
}

const char* px_device_kind_label(int32_t kind) { return kind_label(kind); }

px_status px_runtime_parse_device(px_runtime* runtime, const char* text, px_device* out) {
    return guard("px_runtime_parse_device", [&] {
        const Runtime& rt = get_runtime(runtime);
        need_out(out);
        if (!text) fail(PX_ERROR_INVALID_ARGUMENT, "text is NULL");
        const ParsedDevice p = parse_device_text(text);
        if (!p.problem.empty())
            fail(PX_ERROR_INVALID_ARGUMENT, "'", text, "' does not name a device: ", p.problem,
                 " (write kind:index, kind(index) or a kind alone, e.g. cpu:0, gpu(1), naive)");
        const int32_t kind = kind_called(p.kind);
        if (!kind || (kind >= PX_DEVICE_KIND_NAMED_FIRST && !rt.named.count(kind)))
            fail(PX_ERROR_NO_DEVICE, "'", text, "': no plugin of this runtime gives '", p.kind,
                 "' devices (it has ", rt.kind_names(), "; plexus-smi lists the plugins found and why any was skipped)");
        *out = px_device{kind, p.index};
    });
}

px_status px_runtime_resolve_device(px_runtime* runtime, px_device device, px_device* out) {
    return guard("px_runtime_resolve_device", [&] {
        const Runtime& rt = get_runtime(runtime);
        need_out(out);
        *out = rt.device(device)->id;
    });
}

px_status px_runtime_device_info(px_runtime* runtime, px_device device, px_device_info* out) {
    return guard("px_runtime_device_info", [&] {
        Runtime& rt = get_runtime(runtime);
        need_out(out);
        if (out->struct_size < offsetof(px_device_info, kind) + sizeof(int32_t))
            fail(PX_ERROR_INVALID_ARGUMENT, "out->struct_size ", out->struct_size, " is too small; set it to sizeof(px_device_info)");
        const auto& dev = rt.device(device);
        const auto& p = *dev->plugin;
        px_device_info info;
        std::memset(&info, 0, sizeof info);
        info.struct_size = sizeof info;
        p.call([&] { return cat("reading the info of ", dev->label); },
               [&](px_plugin_error* e) { return p.api->device_info(p.context, dev->local, &info, e); });
        info.name[sizeof info.name - 1] = '\0';
        uint32_t caller_size = out->struct_size;
        std::memcpy(out, &info, std::min<size_t>(caller_size, sizeof info));
        out->struct_size = caller_size;
    });
}

px_status px_runtime_device_plugin(px_runtime* runtime, px_device device, const char** out) {
    return guard("px_runtime_device_plugin", [&] {
        Runtime& rt = get_runtime(runtime);
        *need_out(out) = rt.device(device)->plugin->name.c_str();
    });
}

px_status px_runtime_device_supports(px_runtime* runtime, px_device device, int32_t op, px_dtype dtype,
                                     int32_t* out) {
    return guard("px_runtime_device_supports", [&] {
        Runtime& rt = get_runtime(runtime);
        *need_out(out) = rt.device(device)->supports(op, dtype) ? 1 : 0;
    });
}

px_status px_runtime_synchronize(px_runtime* runtime, px_device device) {
    return guard("px_runtime_synchronize", [&] { get_runtime(runtime).device(device)->synchronize(); });
}

px_status px_runtime_synchronize_all(px_runtime* runtime) {
    return guard("px_runtime_synchronize_all", [&] {
        Runtime& rt = get_runtime(runtime);
        // Every device is waited for; the first failure is reported, the
        // others named after it.
        std::optional<Failure> first;
        for (auto& list : rt.devices)
            for (auto& d : list) {
                try {
                    d->synchronize();
                } catch (const Failure& f) {
                    if (!first) first = f;
                    else first->message += " (and on " + d->label + ": " + f.message + ")";
                }
            }
        if (first) throw *first;
    });
}

px_status px_runtime_synchronize_timeout(px_runtime* runtime, px_device device, double seconds) {
    return guard("px_runtime_synchronize_timeout", [&] {
        if (!(seconds > 0) || seconds > 1e9)
            fail(PX_ERROR_INVALID_ARGUMENT, "seconds ", seconds, " is not above 0 (and at most 1e9)");
        get_runtime(runtime).device(device)->synchronize_within(seconds);
    });
}

px_status px_runtime_poll(px_runtime* runtime, px_device device, double seconds, int32_t* finished) {
    return guard("px_runtime_poll", [&] {
        Runtime& rt = get_runtime(runtime);
        if (!finished) fail(PX_ERROR_INVALID_ARGUMENT, "'finished' is NULL");
        *finished = 0;
        if (!(seconds >= 0) || seconds > 1e9)
            fail(PX_ERROR_INVALID_ARGUMENT, "seconds ", seconds, " is not between 0 and 1e9");
        const DeviceImpl& d = *rt.device(device);
        *finished = d.finished_within(seconds) ? 1 : 0;
        if (*finished != 0) d.settle();  // a waiting point now: the work's failure, once
    });
}

px_status px_runtime_seed(px_runtime* runtime, uint64_t seed) {
    return guard("px_runtime_seed", [&] {
        Runtime& rt = get_runtime(runtime);
        rt.seed = seed;
        rt.rng_offset = 0;
    });
}

px_status px_runtime_random_state(px_runtime* runtime, uint64_t* seed, uint64_t* offset) {
    return guard("px_runtime_random_state", [&] {
        Runtime& rt = get_runtime(runtime);
        need_out(seed, "seed");
        need_out(offset, "offset");
        *seed = rt.seed.load();
        *offset = rt.rng_offset.load();
    });
}

px_status px_runtime_set_random_state(px_runtime* runtime, uint64_t seed, uint64_t offset) {
    return guard("px_runtime_set_random_state", [&] {
        Runtime& rt = get_runtime(runtime);
        rt.seed = seed;
        rt.rng_offset = offset;
    });
}

px_status px_runtime_allow_tf32(px_runtime* runtime, int32_t allow) {
    return guard("px_runtime_allow_tf32", [&] { get_runtime(runtime).allow_tf32 = allow != 0; });
}

}  // extern "C"
