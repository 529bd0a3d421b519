// Host arrays: to and from tensors, and datasets made of them.
#include "plexus/data.hpp"

namespace plexus::data {
namespace {

[[noreturn]] void bad(const std::string& why) { throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, why); }

// Checks that the bytes hold the shape's values.
void check_bytes(const Array& a, const char* what) {
    if (a.shape.size() > PX_MAX_DIMS) bad(std::string(what) + " has more than " + std::to_string(PX_MAX_DIMS) + " dimensions");
    for (int64_t d : a.shape)
        if (d < 0) bad(std::string(what) + " has a negative dimension: " + str(a.shape));
    const size_t es = px_dtype_size(static_cast<int32_t>(a.dtype));
    if (es == 0) bad(std::string(what) + " has no Plexus dtype");
    if (a.bytes.size() != size_t(a.size()) * es)
        bad(std::string(what) + " holds " + std::to_string(a.bytes.size()) + " bytes, not the " +
            std::to_string(size_t(a.size()) * es) + " of " + str(a.shape) + " " + name(a.dtype));
}

}  // namespace

int64_t Array::size() const {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return n;
}

Tensor to_tensor(const Array& a, Device device) {
    check_bytes(a, "to_tensor: the array");
    return Tensor::wrap([&](px_tensor** o) {
        return px_tensor_from_host(runtime(), device.raw(), static_cast<px_dtype>(a.dtype), int32_t(a.shape.size()),
                                   a.shape.data(), a.bytes.data(), a.bytes.size(), o);
    });
}

Array to_array(const Tensor& t) {
    Array a;
    a.dtype = t.dtype();
    a.shape = t.shape();
    a.bytes.resize(size_t(t.size()) * px_dtype_size(static_cast<int32_t>(a.dtype)));
    check(px_tensor_to_host(t.need(), a.bytes.data(), a.bytes.size()));
    return a;
}

ArrayDataset::ArrayDataset(Array data_, Array label_) : data(std::move(data_)), label(std::move(label_)) {
    check_bytes(data, "ArrayDataset: the data");
    check_bytes(label, "ArrayDataset: the labels");
    if (data.shape.empty() || label.shape.empty())
        throw ShapeError(PX_ERROR_SHAPE, "ArrayDataset: the data and labels need a first axis of samples, got " +
                                             str(data.shape) + " and " + str(label.shape));
    if (data.shape[0] != label.shape[0])
        throw ShapeError(PX_ERROR_SHAPE, "ArrayDataset: " + std::to_string(label.shape[0]) + " labels for " +
                                             std::to_string(data.shape[0]) + " samples");
    if (data.dtype != DType::uint8 && !is_floating(data.dtype))
        throw DTypeError(PX_ERROR_DTYPE, std::string("ArrayDataset: the data are ") + name(data.dtype) +
                                             "; samples are uint8, float16, bfloat16, float32 or float64 (labels may be integers)");
}

}  // namespace plexus::data
