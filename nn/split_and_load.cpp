// split_and_load: one part of a batch per device, as in the seeds' Gluon.
#include <algorithm>

#include "plexus/nn.hpp"

namespace plexus::nn {

std::vector<Tensor> split_and_load(const Tensor& batch, const std::vector<Device>& devices, int batch_axis,
                                   bool even_split) {
    if (devices.empty()) throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "split_and_load: no devices given");
    if (batch.ndim() < 1)
        throw ShapeError(PX_ERROR_SHAPE, "split_and_load: a scalar has no first axis to split");
    if (batch_axis < -batch.ndim() || batch_axis >= batch.ndim())
        throw ShapeError(PX_ERROR_SHAPE, "split_and_load: batch_axis " + std::to_string(batch_axis) +
                                             " is not an axis of a tensor of shape " + str(batch.shape()));
    const int axis = batch_axis < 0 ? batch_axis + batch.ndim() : batch_axis;
    const int64_t rows = batch.shape()[size_t(axis)];
    if (devices.size() == 1) return {batch.as_in_context(devices[0])};  // as Gluon's, any number of rows
    if (even_split && rows % int64_t(devices.size()) != 0)
        throw ShapeError(PX_ERROR_SHAPE, "split_and_load: a batch of " + std::to_string(rows) + " rows along axis " +
                                             std::to_string(axis) + " does not split evenly over " +
                                             std::to_string(devices.size()) +
                                             " devices; use a batch size that is a multiple of " +
                                             std::to_string(devices.size()) + " or even_split (false; False in Python)");
    // Uneven, fewer rows than devices: one part of one row per device on the first ones, as Gluon's.
    const int64_t n = even_split ? int64_t(devices.size()) : std::min(rows, int64_t(devices.size()));
    std::vector<Tensor> parts;
    int64_t start = 0;
    for (int64_t i = 0; i < n; ++i) {
        int64_t size = rows / n + (i < rows % n ? 1 : 0);
        const Tensor part = axis == 0 ? batch.slice(start, start + size) : batch.slice_axis(axis, start, start + size);
        parts.push_back(part.as_in_context(devices[size_t(i)]));
        start += size;
    }
    return parts;
}

}  // namespace plexus::nn
