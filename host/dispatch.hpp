// Shared by the router's files: the checks every op makes and the one place
// that calls a plugin's execute. Each check throws (fail) with a message
// naming the op.
#pragma once

#include <initializer_list>

#include "objects.hpp"

namespace px::router {

const char* name_of(int32_t op);
// Whether `op` is a row of the op table in `family` (PX_FAMILY_*).
bool in_family(int32_t op, int32_t family);
// Whether `op`'s row carries `flag` (PX_OP_FLAG_*).
bool has_flag(int32_t op, uint32_t flag);
// The dtype `op` writes for inputs of `dtype` (the op table's result rule).
px_dtype result_dtype(int32_t op, px_dtype dtype);
// PX_ERROR_DTYPE unless `op` means something on `dtype`.
void check_accepts(int32_t op, px_dtype dtype);
// PX_ERROR_DEVICE_MISMATCH naming both devices and how to move one.
void check_same_device(int32_t op, std::initializer_list<const TensorObj*> ts);
void check_same_dtype(int32_t op, const TensorObj& a, const TensorObj& b);
// Whether the device's runtime lets float32 products use TF32 (px_runtime_allow_tf32).
int32_t tf32_allowed(const DeviceImpl& dev);
// PX_ERROR_UNSUPPORTED unless `dev`'s plugin offers `op` on `dtype`.
void check_supported(const DeviceImpl& dev, int32_t op, px_dtype dtype);
// Queues `op` on `dev` after checking that its plugin supports it; with
// nonempty false only the check runs (an empty result has nothing to compute).
void dispatch(const DeviceImpl& dev, int32_t op, px_dtype dtype, const px_tensor_desc* in, int32_t nin,
              const px_tensor_desc* out, int32_t nout, const void* attrs, bool nonempty = true);

}  // namespace px::router
