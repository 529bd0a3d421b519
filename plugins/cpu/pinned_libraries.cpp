#include "pinned_libraries.hpp"

#include <dlfcn.h>
#include <omp.h>

// The plugin's OpenMP wait policy (openmp_policy.c): chosen once, before libgomp's start.
extern "C" const char* pxcpu_openmp_wait_policy(void);

namespace pxcpu {

bool pin_library_holding(const void* symbol, const char* what, std::string& why) {
    Dl_info info{};
    if (!dladdr(symbol, &info) || !info.dli_fname) {
        why = std::string("the dynamic loader cannot say which file holds ") + what;
        return false;
    }
    // The handle is kept on purpose: with RTLD_NODELETE the library stays either way.
    if (!dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE)) {
        const char* e = dlerror();
        why = std::string("cannot keep ") + what + " (" + info.dli_fname + ") loaded: " + (e ? e : "no reason given");
        return false;
    }
    return true;
}

bool pin_runtime_libraries(std::string& why) {
    return pin_library_holding(reinterpret_cast<const void*>(&omp_get_max_threads), "the OpenMP runtime", why) &&
           pin_library_holding(reinterpret_cast<const void*>(&pxcpu_openmp_wait_policy), "the OpenMP wait policy", why);
}

}  // namespace pxcpu
