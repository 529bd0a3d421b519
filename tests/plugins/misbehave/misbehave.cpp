// A plugin that misbehaves in one op, for plexus-conformance's own tests: the
// CPU plugin's table (the file MISBEHAVE_CPU_PLUGIN, opened here) under the
// name "misbehave", its devices reported as accel devices, and its execute
// wrapped so that the op named by $MISBEHAVE_OP ("exp"; "all": every op)
// does what $MISBEHAVE says:
//   segv     raises SIGSEGV             abort  calls abort()
//   exit     calls exit(3)              hang   never returns
//   overrun  writes one element past its first output, after computing it
//   leak     allocates a buffer of 4096 bytes and never frees it
// so that the suite's isolation, guard bytes and leak check can be shown
// to catch each. Everything else is the CPU plugin's.
#include <dlfcn.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

#include "plexus/plugin.h"

namespace {

const px_plugin_api* g_cpu = nullptr;
px_plugin_api g_api;  // the CPU plugin's table, patched

bool chosen(int32_t op) {
    const char* want = std::getenv("MISBEHAVE_OP");
    const char* name = px_op_name(op);
    return want && (std::strcmp(want, "all") == 0 || (name && std::strcmp(want, name) == 0));
}

// Bytes of a contiguous desc.
uint64_t bytes_of(const px_tensor_desc& d) {
    uint64_t n = px_dtype_size(d.dtype);
    for (int32_t k = 0; k < d.ndim; ++k) n *= uint64_t(d.shape[k]);
    return n;
}

px_status execute(px_plugin_context* ctx, const px_op_call* call, px_plugin_error* err) {
    const char* how = std::getenv("MISBEHAVE");
    if (!how || !call || !chosen(call->op)) return g_cpu->execute(ctx, call, err);
    const std::string_view what = how;
    if (what == "segv") ::raise(SIGSEGV);  // as a bad pointer would
    if (what == "abort") std::abort();
    if (what == "exit") std::exit(3);
    if (what == "hang")
        for (;;) ::pause();
    const px_status s = g_cpu->execute(ctx, call, err);
    if (s != PX_OK || call->num_outputs < 1) return s;
    px_plugin_error ignored{sizeof ignored, {0}};
    if (what == "overrun") {
        // Past the end: inside the buffer only when the caller left room
        // (the suite's guard bytes); otherwise the copy is refused.
        const px_tensor_desc& out = call->outputs[0];
        const std::vector<unsigned char> junk(px_dtype_size(out.dtype), 0x3c);
        g_cpu->copy_from_host(ctx, out.buffer, out.offset + bytes_of(out), junk.data(), junk.size(), &ignored);
    } else if (what == "leak") {
        px_plugin_buffer* lost = nullptr;
        g_cpu->buffer_alloc(ctx, call->device, 4096, &lost, &ignored);
    }
    return s;
}

px_status device_info(px_plugin_context* ctx, int32_t device, px_device_info* info, px_plugin_error* err) {
    const px_status s = g_cpu->device_info(ctx, device, info, err);
    if (s == PX_OK) info->kind = PX_DEVICE_ACCELERATOR;
    return s;
}

}  // namespace

extern "C" PX_PLUGIN_EXPORT const px_plugin_api* px_plugin_get_api(void) {
    if (g_cpu) return &g_api;
    void* lib = dlopen(MISBEHAVE_CPU_PLUGIN, RTLD_NOW | RTLD_LOCAL);
    auto get = lib ? reinterpret_cast<px_plugin_get_api_fn>(dlsym(lib, PX_PLUGIN_ENTRY_SYMBOL)) : nullptr;
    g_cpu = get ? get() : nullptr;
    if (!g_cpu) return nullptr;
    std::memcpy(&g_api, g_cpu, std::min<size_t>(sizeof g_api, g_cpu->struct_size));
    g_api.struct_size = std::min<uint32_t>(sizeof g_api, g_cpu->struct_size);
    g_api.name = "misbehave";
    g_api.execute = execute;
    g_api.device_info = device_info;
    return &g_api;
}
