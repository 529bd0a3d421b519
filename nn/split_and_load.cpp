// split_and_load: one part of a batch per device, as in the seeds' Gluon.
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
    const int64_t n = int64_t(devices.size());
    if (rows < n)
        throw ShapeError(PX_ERROR_SHAPE, "split_and_load: a batch of " + std::to_string(rows) + " rows cannot be split over " +
                                             std::to_string(n) + " devices (each needs at least one row)");
    if (even_split && rows % n != 0)
        throw ShapeError(PX_ERROR_SHAPE, "split_and_load: a batch of " + std::to_string(rows) + " rows along axis " +
                                             std::to_string(axis) + " does not split evenly over " + std::to_string(n) +
                                             " devices; use a batch size that is a multiple of " + std::to_string(n) +
                                             " or even_split=false");
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
