/* The CPU plugin as a plugin built before ABI 1.5 would show it: its own
 * table cut off before buffer_memory (struct_size and abi_minor 4), under
 * another name. The DLPack tests load it to prove that a plugin without the
 * 1.5 slots gets the copying path, and that a caller who asked for no copy is
 * told which plugin lacks what. The CPU plugin's library stays open. */
#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

#include "plexus/plugin.h"

static px_plugin_api table;

PX_PLUGIN_EXPORT const px_plugin_api* px_plugin_get_api(void) {
    void* lib = dlopen(PLEXUS_CPU_PLUGIN_FILE, RTLD_NOW | RTLD_LOCAL);
    px_plugin_get_api_fn get = lib ? (px_plugin_get_api_fn)dlsym(lib, PX_PLUGIN_ENTRY_SYMBOL) : NULL;
    const px_plugin_api* cpu = get ? get() : NULL;
    if (!cpu) return NULL;
    memcpy(&table, cpu, offsetof(px_plugin_api, buffer_memory));
    table.struct_size = (uint32_t)offsetof(px_plugin_api, buffer_memory);
    table.abi_minor = 4;
    table.name = "cpu-abi-1.4";
    return &table;
}
