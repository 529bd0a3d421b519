// A plugin that misbehaves in one op, for plexus-conformance's own tests: the
// CPU plugin's table (the file MISBEHAVE_CPU_PLUGIN, opened here) under the
// name "misbehave", its devices reported as accel devices, and its execute
// wrapped so that the op named by $MISBEHAVE_OP ("exp"; "all": every op)
// does what $MISBEHAVE says:
//   segv     raises SIGSEGV             abort  calls abort()
//   exit     calls exit(3)              hang   never returns
//   overrun  writes one element past its first output, after computing it
//   leak     allocates a buffer of 4096 bytes and never frees it
//   throw    lets a C++ exception escape execute (the ABI forbids it)
//   wrong    overwrites the first element of its first output with junk
//   unterminated  fails with PX_ERROR_DEVICE and a message that fills
//            err->message to its last byte, with no terminating NUL
//   fork     create() fails in a process forked from one where it made a
//            context, as CUDA's does (only a fresh program may)
//   hang_create, hang_info   create() or device_info() never returns
//   main_thread   create() fails unless called on the process's main thread
//   slow_sync   synchronize() sleeps $MISBEHAVE_SECONDS (default 2), then
//               fails with PX_ERROR_DEVICE
// so that the suite's isolation, guard bytes and leak check can be shown
// to catch each. $MISBEHAVE_UNSUPPORTED ("cast", "copy,matmul:int32")
// takes ops, or (op, dtype) pairs, out of supports(), and execute refuses
// them as a truthful plugin would: a plugin that lacks them, for the
// suite's skips. Everything else is the CPU plugin's.
#include <dlfcn.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "plexus/op_check.h"
#include "plexus/plugin.h"

namespace {

const px_plugin_api* g_cpu = nullptr;
px_plugin_api g_api;  // the CPU plugin's table, patched

bool chosen(int32_t op) {
    const char* want = std::getenv("MISBEHAVE_OP");
    const char* name = px_op_name(op);
    return want && (std::strcmp(want, "all") == 0 || (name && std::strcmp(want, name) == 0));
}

// Whether $MISBEHAVE_UNSUPPORTED takes `op` on `dtype` away: an entry
// "name" for every dtype, "name:dtype" for one.
bool withheld(int32_t op, int32_t dtype) {
    const char* list = std::getenv("MISBEHAVE_UNSUPPORTED");
    const char* name = px_op_name(op);
    const char* dname = px_dtype_name(dtype);
    if (!list || !name) return false;
    const std::string_view all = list;
    for (size_t start = 0; start <= all.size();) {
        const size_t end = std::min(all.find(',', start), all.size());
        const std::string_view entry = all.substr(start, end - start);
        const size_t colon = entry.find(':');
        if (entry.substr(0, colon) == name &&
            (colon == std::string_view::npos || (dname && entry.substr(colon + 1) == dname)))
            return true;
        start = end + 1;
    }
    return false;
}

// The process that made the first context: memory a fork copies, and exec
// starts afresh.
pid_t g_created_in = 0;

bool misbehaving(const char* way) {
    const char* how = std::getenv("MISBEHAVE");
    return how && std::string_view(how) == way;
}

[[noreturn]] void hang() {
    for (;;) ::pause();
}

px_status create(px_plugin_context** out, px_plugin_error* err) {
    if (misbehaving("hang_create")) hang();
    if (misbehaving("main_thread") && ::gettid() != ::getpid()) {
        if (err && err->struct_size >= sizeof *err)
            std::snprintf(err->message, sizeof err->message, "create() called off the main thread (MISBEHAVE=main_thread)");
        return PX_ERROR_PLUGIN;
    }
    const char* how = std::getenv("MISBEHAVE");
    if (how && std::string_view(how) == "fork" && g_created_in != 0 && g_created_in != ::getpid()) {
        if (err && err->struct_size >= sizeof *err)
            std::snprintf(err->message, sizeof err->message,
                          "initialization error: this process was forked from one that made a context (MISBEHAVE=fork)");
        return PX_ERROR_PLUGIN;
    }
    const px_status s = g_cpu->create(out, err);
    if (s == PX_OK && g_created_in == 0) g_created_in = ::getpid();
    return s;
}

int32_t supports(px_plugin_context* ctx, int32_t device, int32_t op, int32_t dtype) {
    return withheld(op, dtype) ? 0 : g_cpu->supports(ctx, device, op, dtype);
}

// Bytes of a contiguous desc.
uint64_t bytes_of(const px_tensor_desc& d) {
    uint64_t n = px_dtype_size(d.dtype);
    for (int32_t k = 0; k < d.ndim; ++k) n *= uint64_t(d.shape[k]);
    return n;
}

px_status execute(px_plugin_context* ctx, const px_op_call* call, px_plugin_error* err) {
    const char* how = std::getenv("MISBEHAVE");
    if (call && withheld(call->op, px_op_call_dtype(call))) {
        const char* dname = px_dtype_name(px_op_call_dtype(call));
        if (err && err->struct_size >= sizeof *err)
            std::snprintf(err->message, sizeof err->message, "%s on %s is withheld here (MISBEHAVE_UNSUPPORTED)",
                          px_op_name(call->op), dname ? dname : "an unknown dtype");
        return PX_ERROR_UNSUPPORTED;
    }
    if (!how || !call || !chosen(call->op)) return g_cpu->execute(ctx, call, err);
    const std::string_view what = how;
    if (what == "segv") ::raise(SIGSEGV);  // as a bad pointer would
    if (what == "abort") std::abort();
    if (what == "exit") std::exit(3);
    if (what == "hang")
        for (;;) ::pause();
    if (what == "throw") throw std::runtime_error("misbehave: an exception through the C ABI");
    if (what == "unterminated") {
        if (err && err->struct_size >= sizeof *err) std::memset(err->message, 'z', sizeof err->message);
        return PX_ERROR_DEVICE;
    }
    const px_status s = g_cpu->execute(ctx, call, err);
    if (s != PX_OK || call->num_outputs < 1) return s;
    px_plugin_error ignored{sizeof ignored, {0}};
    if (what == "wrong") {
        const px_tensor_desc& out = call->outputs[0];
        const std::vector<unsigned char> junk(px_dtype_size(out.dtype), 0x3c);
        if (bytes_of(out) > 0) g_cpu->copy_from_host(ctx, out.buffer, out.offset, junk.data(), junk.size(), &ignored);
    } else if (what == "overrun") {
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
    if (misbehaving("hang_info")) hang();
    const px_status s = g_cpu->device_info(ctx, device, info, err);
    if (s == PX_OK) info->kind = PX_DEVICE_ACCELERATOR;
    return s;
}

px_status synchronize(px_plugin_context* ctx, int32_t device, px_plugin_error* err) {
    if (!misbehaving("slow_sync")) return g_cpu->synchronize(ctx, device, err);
    const char* seconds = std::getenv("MISBEHAVE_SECONDS");
    ::usleep(useconds_t((seconds ? std::atof(seconds) : 2.0) * 1e6));
    if (err && err->struct_size >= sizeof *err)
        std::snprintf(err->message, sizeof err->message, "slow_sync: failed after its sleep (MISBEHAVE=slow_sync)");
    return PX_ERROR_DEVICE;
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
    g_api.create = create;
    g_api.execute = execute;
    g_api.device_info = device_info;
    g_api.synchronize = synchronize;
    g_api.supports = supports;
    return &g_api;
}
