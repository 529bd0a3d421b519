// The answers of types.h's inline name and size helpers, reachable from a
// file that must not include types.h (capi_names_export.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

namespace px::ffi {

const char* dtype_name(int32_t dtype) noexcept;
size_t dtype_size(int32_t dtype) noexcept;
int32_t dtype_promote(int32_t a, int32_t b) noexcept;
const char* op_name(int32_t op) noexcept;
const char* device_kind_name(int32_t kind) noexcept;

}  // namespace px::ffi
