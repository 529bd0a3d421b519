/* The CPU plugin as a plugin built against an older minor of the ABI would
 * show itself, for the version-skew tests (issue 41, item 5): compiled once
 * per minor (SKEW_MINOR 0..5), its table is the CPU plugin's cut off where
 * that minor's table ended, with that struct_size and abi_minor, and its
 * supports() knows no op added after that minor. It passes dtypes through
 * (today's CPU plugin offers float16 on copy): the host must not ask a
 * plugin about a dtype newer than its minor. The table lies at the very end of a page whose next page is
 * inaccessible, so a host that reads one byte past struct_size faults. */
#include <dlfcn.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "plexus/op_rows.h"
#include "plexus/plugin.h"

#if SKEW_MINOR <= 1
#define SKEW_TABLE_END (offsetof(px_plugin_api, synchronize) + sizeof(void*))
#elif SKEW_MINOR == 2
#define SKEW_TABLE_END (offsetof(px_plugin_api, all_reduce) + sizeof(void*))
#elif SKEW_MINOR <= 4
#define SKEW_TABLE_END (offsetof(px_plugin_api, group_leave) + sizeof(void*))
#elif SKEW_MINOR == 5
#define SKEW_TABLE_END (offsetof(px_plugin_api, buffer_wrap) + sizeof(void*))
#else
#error "SKEW_MINOR is 0..5: the plugins of earlier minors"
#endif

#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_(x)

static const px_plugin_api* cpu;

static int32_t supports(px_plugin_context* ctx, int32_t device, int32_t op, int32_t dtype) {
    const px_op_row* row = px_op_row_of(op);
    if (!row || row->abi_minor > SKEW_MINOR) return 0;
    return cpu->supports(ctx, device, op, dtype);
}

PX_PLUGIN_EXPORT const px_plugin_api* px_plugin_get_api(void) {
    static px_plugin_api* table;
    if (table) return table;
    void* lib = dlopen(PLEXUS_CPU_PLUGIN_FILE, RTLD_NOW | RTLD_LOCAL);
    px_plugin_get_api_fn get = lib ? (px_plugin_get_api_fn)dlsym(lib, PX_PLUGIN_ENTRY_SYMBOL) : NULL;
    cpu = get ? get() : NULL;
    if (!cpu) return NULL;
    const size_t page = (size_t)sysconf(_SC_PAGESIZE);
    char* pages = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (pages == MAP_FAILED || mprotect(pages + page, page, PROT_NONE) != 0) return NULL;
    /* Aligned for the pointers in it, and ending at the guard page. */
    px_plugin_api* t = (px_plugin_api*)(pages + page - SKEW_TABLE_END);
    memcpy(t, cpu, SKEW_TABLE_END);
    t->struct_size = (uint32_t)SKEW_TABLE_END;
    t->abi_minor = SKEW_MINOR;
    t->name = "cpu-abi-1." STRINGIFY(SKEW_MINOR);
    t->supports = supports;
    table = t;
    return table;
}
