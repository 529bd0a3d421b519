// --data: Fashion-MNIST's folder, or a user's .npz whose images and labels
// go through the same loader with the same ToTensor and Normalize.
#include "train_data.hpp"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace plexus::train {
namespace {

bool ends_with(const std::string& s, const std::string& end) {
    return s.size() >= end.size() && s.compare(s.size() - end.size(), end.size(), end) == 0;
}

[[noreturn]] void bad(const std::string& path, const std::string& why) {
    throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, path + ": " + why);
}

// x (N, H, W) or (N, C, H, W) images and y (N) class numbers 0..9 as int32.
data::ArrayDataset images_and_labels(const std::string& path, const char* x_name, const char* y_name) {
    data::Array x = data::read_npz(path, x_name), y = data::read_npz(path, y_name);
    if (x.shape.size() == 3) x.shape.insert(x.shape.begin() + 1, 1);  // one channel
    if (x.shape.size() != 4)
        bad(path, std::string(x_name) + " is " + str(x.shape) + "; images are (N, H, W) or (N, C, H, W)");
    // The networks compute in float32 (--dtype on top): other float images are read as float32 here.
    if (x.dtype == DType::float64 || x.dtype == DType::float16 || x.dtype == DType::bfloat16)
        x = data::to_array(data::to_tensor(x).astype(DType::float32));
    else if (x.dtype != DType::uint8 && x.dtype != DType::float32)
        bad(path, std::string(x_name) + " is " + name(x.dtype) + "; images are uint8 (0..255) or floats");
    if (y.shape.size() != 1) bad(path, std::string(y_name) + " is " + str(y.shape) + "; labels are (N)");
    if (y.dtype != DType::int32 && y.dtype != DType::int64 && y.dtype != DType::uint8)
        bad(path, std::string(y_name) + " is " + name(y.dtype) + "; labels are integers");
    data::Array labels{DType::int32, y.shape, std::vector<uint8_t>(size_t(y.size()) * 4)};
    const size_t es = px_dtype_size(static_cast<int32_t>(y.dtype));
    for (int64_t i = 0; i < y.size(); ++i) {
        int64_t v = 0;
        if (y.dtype == DType::uint8) v = y.bytes[size_t(i)];
        else if (y.dtype == DType::int32) { int32_t w; std::memcpy(&w, &y.bytes[size_t(i) * es], 4); v = w; }
        else std::memcpy(&v, &y.bytes[size_t(i) * es], 8);
        if (v < 0 || v > 9)
            bad(path, std::string(y_name) + "[" + std::to_string(i) + "] is " + std::to_string(v) +
                          ", not a class 0..9 (the networks have 10 outputs)");
        const auto w = int32_t(v);
        std::memcpy(&labels.bytes[size_t(i) * 4], &w, 4);
    }
    return data::ArrayDataset(std::move(x), std::move(labels));
}

// 64-bit FNV-1a, continued from `h` over `n` bytes.
uint64_t fnv1a(uint64_t h, const void* bytes, size_t n) {
    const auto* p = static_cast<const uint8_t*>(bytes);
    for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}

}  // namespace

TrainData::TrainData(const std::string& data) {
    if (ends_with(data, ".npz")) {
        what = data;
        train_.emplace(images_and_labels(data, "x_train", "y_train"));
        test_.emplace(images_and_labels(data, "x_test", "y_test"));
        if (Shape(train_->data.shape.begin() + 1, train_->data.shape.end()) !=
            Shape(test_->data.shape.begin() + 1, test_->data.shape.end()))
            bad(data, "x_train's images are " + str(train_->data.shape) + ", x_test's " + str(test_->data.shape));
        return;
    }
    what = "Fashion-MNIST from " + data;
    try {
        fm_train_.emplace(data::fashion_mnist(true, data));
        fm_test_.emplace(data::fashion_mnist(false, data));
    } catch (const std::exception& e) {  // the library names the files; the hint, where they are missing, is the tool's
        std::error_code none;
        const bool installed = std::filesystem::exists(data + "/train-images-idx3-ubyte.gz", none) ||
                               std::filesystem::exists(data + "/train-images-idx3-ubyte", none);
        if (installed) throw;
        throw std::runtime_error(std::string(e.what()) + " (is the data set installed? see --data)");
    }
}

std::unique_ptr<data::DataLoader> TrainData::loader(bool train, int64_t batch_size, bool shuffle, Device device,
                                                    uint64_t seed) const {
    if (fm_train_) return std::make_unique<data::DataLoader>(train ? *fm_train_ : *fm_test_, batch_size, shuffle, device, seed);
    const data::ArrayDataset& d = train ? *train_ : *test_;
    std::vector<data::Transform> t;
    if (d.data.dtype == DType::uint8) t = {data::transforms::ToTensor(), data::transforms::Normalize({0.13}, {0.31})};
    return std::make_unique<data::DataLoader>(d, batch_size, shuffle, device, seed, t);
}

int64_t TrainData::count(bool train) const {
    if (fm_train_) return (train ? fm_train_ : fm_test_)->count;
    return (train ? train_ : test_)->size();
}

Shape TrainData::image() const {
    if (fm_train_) return {1, fm_train_->rows, fm_train_->cols};
    return Shape(train_->data.shape.begin() + 1, train_->data.shape.end());
}

std::string TrainData::contents() const {
    uint64_t h = 0xcbf29ce484222325ULL;
    for (bool train : {true, false}) {
        if (fm_train_) {
            const data::ImageDataset& d = train ? *fm_train_ : *fm_test_;
            h = fnv1a(h, d.images.data(), d.images.size());
            h = fnv1a(h, d.labels.data(), d.labels.size() * sizeof(int32_t));
        } else {
            const data::ArrayDataset& d = train ? *train_ : *test_;
            h = fnv1a(h, d.data.bytes.data(), d.data.bytes.size());
            h = fnv1a(h, d.label.bytes.data(), d.label.bytes.size());
        }
    }
    char sum[17];
    std::snprintf(sum, sizeof sum, "%016llx", static_cast<unsigned long long>(h));
    return std::to_string(count(true)) + " training and " + std::to_string(count(false)) + " test images of " +
           str(image()) + ", checksum " + sum;
}

}  // namespace plexus::train
