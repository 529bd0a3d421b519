#include "raw_blas.hpp"

#include <dlfcn.h>

#include <stdexcept>
#include <string>

#include "plexus/plexus.hpp"

namespace pxbench {

decltype(&cblas_sgemm) raw_sgemm() {
    static const auto sgemm = [] {
        (void)plexus::runtime();  // its CPU plugin loads OpenBLAS
        void* library = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_NOLOAD);
        if (!library) library = dlopen("libopenblas.so.0", RTLD_NOW);
        void* f = library ? dlsym(library, "cblas_sgemm") : nullptr;
        if (!f) throw std::runtime_error(std::string("no OpenBLAS for the raw baselines: ") + dlerror());
        return reinterpret_cast<decltype(&cblas_sgemm)>(f);
    }();
    return sgemm;
}

}  // namespace pxbench
