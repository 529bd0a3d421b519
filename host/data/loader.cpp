// DataLoader: shuffled batches, normalized on the host and copied to the
// device one batch ahead on another thread.
#include <algorithm>
#include <numeric>
#include <random>

#include "plexus/data.hpp"

namespace plexus::data {

DataLoader::DataLoader(const ImageDataset& dataset, int64_t batch_size, bool shuffle, Device device, uint64_t seed,
                       double mean, double std)
    : dataset_(dataset), batch_size_(batch_size), shuffle_(shuffle), device_(device), seed_(seed), mean_(mean), std_(std) {
    if (batch_size < 1)
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "DataLoader: batch_size must be >= 1, got " + std::to_string(batch_size));
    if (!(std > 0)) throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "DataLoader: the normalizing std must be > 0");
    if (dataset.images.size() != size_t(dataset.count * dataset.rows * dataset.cols) || dataset.labels.size() != size_t(dataset.count))
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "DataLoader: the dataset's sizes are inconsistent");
    begin_epoch(0);
}

DataLoader::~DataLoader() {
    if (pending_.valid()) pending_.wait();
}

void DataLoader::begin_epoch(uint64_t epoch) {
    if (pending_.valid()) pending_.wait();
    pending_ = {};
    order_.resize(size_t(dataset_.count));
    std::iota(order_.begin(), order_.end(), int64_t(0));
    if (shuffle_) {
        std::mt19937_64 g(seed_ * 0x9E3779B97F4A7C15ull + epoch);
        std::shuffle(order_.begin(), order_.end(), g);
    }
    next_ = 0;
    prefetch(0);
}

void DataLoader::shard(int rank, int shards) {
    if (shards < 1 || rank < 0 || rank >= shards)
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "DataLoader::shard: rank " + std::to_string(rank) +
                                                                  " of " + std::to_string(shards) + " shards");
    rank_ = rank;
    shards_ = shards;
    begin_epoch(0);
}

Batch DataLoader::make(int64_t index) const {
    const int64_t first = index * batch_size_, global = std::min(batch_size_, dataset_.count - first);
    if (global < shards_)
        throw ShapeError(PX_ERROR_SHAPE, "DataLoader: batch " + std::to_string(index) + " has " + std::to_string(global) +
                                             " rows, fewer than the " + std::to_string(shards_) + " shards");
    // This shard's rows, as split_and_load cuts them.
    const int64_t lo = first + rank_ * (global / shards_) + std::min<int64_t>(rank_, global % shards_);
    const int64_t n = global / shards_ + (rank_ < global % shards_ ? 1 : 0);
    const int64_t pixels = dataset_.rows * dataset_.cols;
    std::vector<float> x(size_t(n * pixels));
    std::vector<int32_t> y(static_cast<size_t>(n));
    const float scale = float(1.0 / (255.0 * std_)), shift = float(mean_ / std_);
    for (int64_t i = 0; i < n; ++i) {
        int64_t src = order_[size_t(lo + i)];
        const uint8_t* img = dataset_.images.data() + src * pixels;
        float* dst = x.data() + i * pixels;
        for (int64_t p = 0; p < pixels; ++p) dst[p] = float(img[p]) * scale - shift;
        y[size_t(i)] = dataset_.labels[size_t(src)];
    }
    Batch b;
    b.size = n;
    b.global_size = global;
    b.data = array(x, {n, 1, dataset_.rows, dataset_.cols}, device_);
    b.label = array(y, {n}, device_);
    return b;
}

void DataLoader::prefetch(int64_t index) {
    if (index < num_batches()) pending_ = std::async(std::launch::async, [this, index] { return make(index); });
}

bool DataLoader::next(Batch& out) {
    if (next_ >= num_batches() || !pending_.valid()) return false;
    out = pending_.get();  // rethrows a failure of the preparing thread
    ++next_;
    prefetch(next_);
    return true;
}

}  // namespace plexus::data
