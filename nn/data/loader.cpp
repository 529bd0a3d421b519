// DataLoader: shuffled batches, normalized on the host and copied to the
// device one batch ahead on another thread.
#include <algorithm>
#include <numeric>
#include <random>
#include <system_error>

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

DataLoader::~DataLoader() { wait_for_prefetch(); }

void DataLoader::wait_for_prefetch() noexcept {
    if (pending_.valid()) pending_.wait();
}

std::vector<int64_t> DataLoader::order_of(uint64_t epoch) const {
    std::vector<int64_t> order(size_t(dataset_.count));
    std::iota(order.begin(), order.end(), int64_t(0));
    if (shuffle_) {
        std::mt19937_64 g(seed_ * 0x9E3779B97F4A7C15ull + epoch);
        std::shuffle(order.begin(), order.end(), g);
    }
    return order;
}

// Only after the prefetch thread is done (it reads order_, rank_, shards_).
void DataLoader::start(std::vector<int64_t> order) noexcept {
    pending_ = {};
    order_.swap(order);
    next_ = 0;
    prefetch();
}

void DataLoader::begin_epoch(uint64_t epoch) {
    wait_for_prefetch();
    start(order_of(epoch));  // order_of may run out of memory: then nothing has changed
}

void DataLoader::shard(int rank, int shards) {
    if (shards < 1 || rank < 0 || rank >= shards)
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "DataLoader::shard: rank " + std::to_string(rank) +
                                                                  " of " + std::to_string(shards) + " shards");
    wait_for_prefetch();
    std::vector<int64_t> order = order_of(0);
    rank_ = rank;
    shards_ = shards;
    start(std::move(order));
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

// Starts making batch next_ on another thread. Where no thread or memory for
// one can be had, pending_ stays empty and next() makes the batch itself.
void DataLoader::prefetch() noexcept {
    if (next_ >= num_batches()) return;
    try {
        pending_ = std::async(std::launch::async, [this, index = next_] { return make(index); });
    } catch (const std::bad_alloc&) {
    } catch (const std::system_error&) {  // resource_unavailable_try_again: no thread
    }
}

bool DataLoader::next(Batch& out) {
    if (next_ >= num_batches()) return false;
    // get() rethrows a failure of the preparing thread and empties pending_,
    // so a call after a failure makes that same batch again.
    Batch b = pending_.valid() ? pending_.get() : make(next_);
    ++next_;
    out = std::move(b);
    prefetch();
    return true;
}

}  // namespace plexus::data
