// Libraries the CUDA plugin opens when it first needs them (cuBLAS at the
// first device, NCCL at the first all-reduce) instead of linking them, so
// the plugin loads where they are missing or unneeded.
#pragma once

#include <dlfcn.h>

#include <initializer_list>
#include <string>

namespace pxcuda {

// The first of `names` that dlopen opens (kept open), or nullptr with each
// name and the loader's reason in `tried`.
inline void* open_first(std::initializer_list<const char*> names, std::string& tried) {
    tried.clear();
    for (const char* name : names) {
        if (void* lib = dlopen(name, RTLD_NOW | RTLD_LOCAL)) return lib;
        const char* why = dlerror();
        tried += std::string(tried.empty() ? "" : "; ") + name + ": " + (why ? why : "not found");
    }
    return nullptr;
}

// Looks `name` up in `lib` as a function pointer of `out`'s type; false when absent.
template <class F>
bool find(void* lib, const char* name, F& out) {
    out = reinterpret_cast<F>(dlsym(lib, name));
    return out != nullptr;
}

}  // namespace pxcuda
