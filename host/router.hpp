// The one routing point. Every op passes here: inputs must share a device,
// dtypes must fit the op, shapes must broadcast and fit in 64 bits; then the
// output is allocated on that device and the device's plugin is called.
// Each function returns a new tensor owned by the caller (one reference).
#pragma once

#include <vector>

#include "objects.hpp"

namespace px::router {

TensorObj* from_host(const std::shared_ptr<DeviceImpl>& dev, px_dtype dtype, const Shape& shape,
                     const void* data, uint64_t bytes);
void to_host(const TensorObj& t, void* dst, uint64_t bytes);
TensorObj* copy_to(const TensorObj& t, const std::shared_ptr<DeviceImpl>& dev);

TensorObj* full(const std::shared_ptr<DeviceImpl>& dev, px_dtype dtype, const Shape& shape, double value);
TensorObj* arange(const std::shared_ptr<DeviceImpl>& dev, px_dtype dtype, double start, double stop, double step);
TensorObj* random(Runtime& rt, px_op op, const std::shared_ptr<DeviceImpl>& dev, px_dtype dtype,
                  const Shape& shape, double a, double b);

TensorObj* binary(px_op op, const TensorObj& a, const TensorObj& b);
TensorObj* binary_scalar(px_op op, const TensorObj& a, double scalar, bool scalar_first);
TensorObj* unary(px_op op, const TensorObj& a);
TensorObj* where(const TensorObj& cond, const TensorObj& a, const TensorObj& b);
TensorObj* reduce(px_op op, const TensorObj& a, bool all_axes, int32_t axis, bool keepdims);
TensorObj* matmul(const TensorObj& a, const TensorObj& b);
TensorObj* transpose(const TensorObj& a, const int32_t* perm, int32_t nperm);
TensorObj* slice_axis(const TensorObj& a, int32_t axis, int64_t start, int64_t stop, int64_t step);
TensorObj* concat(const std::vector<const TensorObj*>& parts, int32_t axis);
TensorObj* cast(const TensorObj& a, px_dtype dtype);

}  // namespace px::router
