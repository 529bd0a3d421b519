// px_dtype_name, px_dtype_size, px_dtype_promote, px_op_name and
// px_device_kind_name, which plexus/types.h gives C and C++ callers as static
// inline functions, exported from libplexus under the same names as well, for
// callers that cannot use a C header: ctypes, cffi, other languages' FFIs (dlsym finds them). This file
// must not include plexus/types.h, whose inline functions of the same names
// would clash with these definitions; the answers come from those inline
// functions through capi_version.cpp, so the two never disagree.
#include "ffi_names.hpp"

#define PX_EXPORTED __attribute__((visibility("default")))

extern "C" {

PX_EXPORTED const char* px_dtype_name(int32_t dtype);
PX_EXPORTED size_t px_dtype_size(int32_t dtype);
PX_EXPORTED int32_t px_dtype_promote(int32_t a, int32_t b);
PX_EXPORTED const char* px_op_name(int32_t op);
PX_EXPORTED const char* px_device_kind_name(int32_t kind);

const char* px_dtype_name(int32_t dtype) { return px::ffi::dtype_name(dtype); }
size_t px_dtype_size(int32_t dtype) { return px::ffi::dtype_size(dtype); }
int32_t px_dtype_promote(int32_t a, int32_t b) { return px::ffi::dtype_promote(a, b); }
const char* px_op_name(int32_t op) { return px::ffi::op_name(op); }
const char* px_device_kind_name(int32_t kind) { return px::ffi::device_kind_name(kind); }

}  // extern "C"
