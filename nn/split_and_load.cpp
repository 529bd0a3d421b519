// split_and_load: one part of a batch per device, as in the seeds' Gluon.
#include "plexus/nn.hpp"

namespace plexus::nn {

std::vector<Tensor> split_and_load(const Tensor& batch, const std::vector<Device>& devices) {
    if (devices.empty()) throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "split_and_load: no devices given");
    if (batch.ndim() < 1)
        throw ShapeError(PX_ERROR_SHAPE, "split_and_load: a scalar has no first axis to split");
    const int64_t rows = batch.shape()[0];
    const int64_t n = int64_t(devices.size());
    if (rows < n)
        throw ShapeError(PX_ERROR_SHAPE, "split_and_load: a batch of " + std::to_string(rows) + " rows cannot be split over " +
                                             std::to_string(n) + " devices (each needs at least one row)");
    std::vector<Tensor> parts;
    int64_t start = 0;
    for (int64_t i = 0; i < n; ++i) {
        int64_t size = rows / n + (i < rows % n ? 1 : 0);
        parts.push_back(batch.slice(start, start + size).as_in_context(devices[size_t(i)]));
        start += size;
    }
    return parts;
}

}  // namespace plexus::nn
