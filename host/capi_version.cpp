// C API: the library's version, and the inline helpers' answers for the
// exported copies (capi_names_export.cpp).
#include "ffi_names.hpp"
#include "plexus/dlpack.h"
#include "plexus/plexus.h"
#include "plexus/plugin.h"  // PX_PLUGIN_ABI_MAJOR/MINOR

static_assert(PLEXUS_VERSION_MAJOR == PLEXUS_PROJECT_VERSION_MAJOR &&
                  PLEXUS_VERSION_MINOR == PLEXUS_PROJECT_VERSION_MINOR &&
                  PLEXUS_VERSION_PATCH == PLEXUS_PROJECT_VERSION_PATCH,
              "plexus.h's PLEXUS_VERSION_* must match project(Plexus VERSION ...) in CMakeLists.txt");

#define PX_STRINGIFY2(x) #x
#define PX_STRINGIFY(x) PX_STRINGIFY2(x)

namespace {

const px_version_info version_info = {
    sizeof(px_version_info),
    PLEXUS_VERSION_MAJOR,
    PLEXUS_VERSION_MINOR,
    PLEXUS_VERSION_PATCH,
    PLEXUS_PROJECT_SOVERSION,
    PX_PLUGIN_ABI_MAJOR,
    PX_PLUGIN_ABI_MINOR,
    PX_STRINGIFY(PLEXUS_VERSION_MAJOR) "." PX_STRINGIFY(PLEXUS_VERSION_MINOR) "." PX_STRINGIFY(PLEXUS_VERSION_PATCH),
    DLPACK_MAJOR_VERSION,
    DLPACK_MINOR_VERSION,
};

}  // namespace

extern "C" const px_version_info* px_version(void) { return &version_info; }

namespace px::ffi {

const char* dtype_name(int32_t dtype) noexcept { return px_dtype_name(dtype); }
size_t dtype_size(int32_t dtype) noexcept { return px_dtype_size(dtype); }
int32_t dtype_promote(int32_t a, int32_t b) noexcept { return px_dtype_promote(a, b); }
const char* op_name(int32_t op) noexcept { return px_op_name(op); }
const char* device_kind_name(int32_t kind) noexcept { return px_device_kind_name(kind); }

}  // namespace px::ffi
