// C API: process groups (plugin ABI 1.3). The host checks ranks, sizes,
// time-outs and ids before a plugin sees them; the plugin does the rest.
#include <cmath>
#include <cstdio>
#include <cstring>

#include "router.hpp"

using namespace px;

namespace {

bool offers_groups(const PluginInstance& p) {
    const px_plugin_api& a = *p.api;
    return a.group_make_id && a.group_join && a.group_all_reduce && a.group_leave;
}

const std::shared_ptr<DeviceImpl>& group_device(Runtime& rt, px_device device) {
    const auto& dev = rt.device(device);
    if (!offers_groups(*dev->plugin))
        fail(PX_ERROR_UNSUPPORTED, dev->label, "'s plugin (", dev->plugin->name,
             ") offers no process groups (the group slots of plugin ABI 1.3)");
    return dev;
}

// The plugin name an id carries, or why it carries none.
std::string id_plugin(const px_group_id& id) {
    const void* end = std::memchr(id.plugin, '\0', sizeof id.plugin);
    if (!end || id.plugin[0] == '\0')
        fail(PX_ERROR_INVALID_ARGUMENT, "id->plugin does not hold a plugin name; make the id with px_group_make_id");
    return id.plugin;
}

}  // namespace

GroupObj::~GroupObj() {
    const auto& p = *device->plugin;
    try {
        p.api->group_leave(p.context, handle);
    } catch (...) {  // forbidden by the ABI, and a destructor must not throw
        std::fprintf(stderr, "plexus: plugin %s let a C++ exception escape group_leave()\n", p.name.c_str());
    }
}

extern "C" {

px_status px_group_supported(px_runtime* runtime, px_device device, int32_t* out) {
    return guard("px_group_supported", [&] {
        Runtime& rt = get_runtime(runtime);
        *need_out(out) = offers_groups(*rt.device(device)->plugin) ? 1 : 0;
    });
}

px_status px_group_make_id(px_runtime* runtime, px_device device, px_group_id* out) {
    return guard("px_group_make_id", [&] {
        Runtime& rt = get_runtime(runtime);
        need_out(out);
        if (out->struct_size < sizeof(px_group_id))
            fail(PX_ERROR_INVALID_ARGUMENT, "out->struct_size ", out->struct_size, " is smaller than px_group_id (",
                 sizeof(px_group_id), "); set it to sizeof(px_group_id)");
        const auto& dev = group_device(rt, device);
        const auto& p = *dev->plugin;
        px_group_id id;
        std::memset(&id, 0, sizeof id);
        id.struct_size = sizeof id;
        p.call([&] { return cat("making a group id on ", dev->label); },
               [&](px_plugin_error* e) { return p.api->group_make_id(p.context, dev->local, &id, e); });
        id.struct_size = out->struct_size;
        std::snprintf(id.plugin, sizeof id.plugin, "%s", p.name.c_str());  // the host's field, whatever the plugin wrote
        std::memcpy(out, &id, sizeof id);
    });
}

px_status px_group_join(px_runtime* runtime, px_device device, const px_group_id* id, int32_t rank, int32_t size,
                        double timeout_seconds, px_group** out) {
    return guard("px_group_join", [&] {
        Runtime& rt = get_runtime(runtime);
        need_out(out);
        if (!id) fail(PX_ERROR_INVALID_ARGUMENT, "'id' is NULL");
        if (id->struct_size < sizeof(px_group_id))
            fail(PX_ERROR_INVALID_ARGUMENT, "id->struct_size ", id->struct_size, " is smaller than px_group_id (",
                 sizeof(px_group_id), ")");
        if (size < 1) fail(PX_ERROR_INVALID_ARGUMENT, "size is ", size, "; a group has at least 1 process");
        if (rank < 0 || rank >= size)
            fail(PX_ERROR_INVALID_ARGUMENT, "rank ", rank, " is outside 0..", size - 1, " for a group of ", size);
        if (!std::isfinite(timeout_seconds) || !(timeout_seconds > 0))
            fail(PX_ERROR_INVALID_ARGUMENT, "timeout_seconds is ", timeout_seconds, "; give a finite number > 0");
        const auto& dev = group_device(rt, device);
        const auto& p = *dev->plugin;
        const std::string maker = id_plugin(*id);
        if (maker != p.name)
            fail(PX_ERROR_INVALID_ARGUMENT, "the id was made by plugin ", maker, ", but ", dev->label, " is from plugin ",
                 p.name, "; every member must be on a device of the plugin that made the id");
        px_plugin_group* handle = nullptr;
        p.call([&] { return cat("joining a group of ", size, " as rank ", rank, " on ", dev->label); },
               [&](px_plugin_error* e) {
                   return p.api->group_join(p.context, dev->local, id, rank, size, timeout_seconds, &handle, e);
               });
        if (!handle) fail(PX_ERROR_PLUGIN, "plugin ", p.name, " joined a group but returned a NULL group");
        auto group = std::make_unique<GroupObj>(dev, handle, rank, size);
        *out = reinterpret_cast<px_group*>(group_table().insert(group.get()));
        static_cast<void>(group.release());  // the table owns it now
    });
}

px_status px_group_all_reduce_sum(px_group* group, px_tensor* const* tensors, int32_t count) {
    return guard("px_group_all_reduce_sum", [&] {
        GroupObj& g = get_group(group);
        if (count < 1) fail(PX_ERROR_INVALID_ARGUMENT, "count is ", count, "; at least one tensor is needed");
        if (!tensors) fail(PX_ERROR_INVALID_ARGUMENT, "'tensors' is NULL");
        std::vector<TensorObj*> parts;
        parts.reserve(size_t(count));
        for (int32_t i = 0; i < count; ++i) {
            std::string arg = cat("tensors[", i, "]");
            parts.push_back(&get_tensor(tensors[i], arg.c_str()));
        }
        router::group_all_reduce_sum(g, parts);
    });
}

px_status px_group_release(px_group* group) {
    return guard("px_group_release", [&] {
        GroupObj& g = get_group(group);
        group_table().remove(reinterpret_cast<uint64_t>(group));
        delete &g;
    });
}

}  // extern "C"
