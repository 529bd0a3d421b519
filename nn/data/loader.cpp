// DataLoader: shuffled batches, transformed on the host and copied to the
// device one batch ahead on another thread. Fashion-MNIST is one dataset of
// arrays among others: its images are (1, rows, cols) uint8 samples under
// ToTensor and Normalize.
#include <algorithm>
#include <cstring>
#include <new>
#include <numeric>
#include <random>
#include <system_error>

#include "plexus/data.hpp"
#include "transforms.hpp"

namespace plexus::data {
namespace {

int64_t elements(const Shape& s) {
    int64_t n = 1;
    for (int64_t d : s) n *= d;
    return n;
}

int64_t byte_size(DType d) { return int64_t(px_dtype_size(static_cast<int32_t>(d))); }

const ImageDataset& checked(const ImageDataset& d) {
    if (d.images.size() != size_t(d.count * d.rows * d.cols) || d.labels.size() != size_t(d.count))
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "DataLoader: the dataset's sizes are inconsistent");
    return d;
}

}  // namespace

DataLoader::DataLoader(const ImageDataset& dataset, int64_t batch_size, bool shuffle, Device device, uint64_t seed,
                       double mean, double std)
    : DataLoader(Source{DType::uint8, DType::int32, {1, checked(dataset).rows, dataset.cols}, {},
                        dataset.images.data(), reinterpret_cast<const uint8_t*>(dataset.labels.data())},
                 dataset.count, batch_size, shuffle, device, seed,
                 {transforms::ToTensor{}, transforms::Normalize({mean}, {std})}) {}

DataLoader::DataLoader(const ArrayDataset& dataset, int64_t batch_size, bool shuffle, Device device, uint64_t seed,
                       const std::vector<Transform>& transforms)
    : DataLoader(Source{dataset.data.dtype, dataset.label.dtype,
                        Shape(dataset.data.shape.begin() + 1, dataset.data.shape.end()),
                        Shape(dataset.label.shape.begin() + 1, dataset.label.shape.end()), dataset.data.bytes.data(),
                        dataset.label.bytes.data()},
                 dataset.size(), batch_size, shuffle, device, seed, transforms) {}

DataLoader::DataLoader(Source source, int64_t count, int64_t batch_size, bool shuffle, Device device, uint64_t seed,
                       const std::vector<Transform>& transforms)
    : source_(std::move(source)), count_(count), batch_size_(batch_size), shuffle_(shuffle), device_(device),
      seed_(seed) {
    if (batch_size < 1)
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "DataLoader: batch_size must be >= 1, got " + std::to_string(batch_size));
    device_info(device);  // a device that does not exist is refused here, naming what exists, not at the first batch
    pipeline_ = detail::Pipeline::make(transforms, source_.dtype, source_.sample);
    begin_epoch(0);
}

DataLoader::~DataLoader() { wait_for_prefetch(); }

void DataLoader::wait_for_prefetch() noexcept {
    forget_parents_prefetch();
    if (pending_.valid()) pending_.wait();
}

void DataLoader::forget_parents_prefetch() noexcept {
    if (!pending_.valid() || pending_made_in_ == px_fork_generation()) return;
    // Left to the process, never destroyed: destroying the future would wait
    // for a thread this child does not have. (Without memory for it, raw
    // static storage takes it, over an earlier one never destroyed either.)
    if (!new (std::nothrow) std::future<Batch>(std::move(pending_))) {
        alignas(std::future<Batch>) static unsigned char raw[sizeof(std::future<Batch>)];
        new (raw) std::future<Batch>(std::move(pending_));
    }
    pending_ = {};  // NOLINT(clang-analyzer-cplusplus.NewDeleteLeaks): the leak is the point
}

std::vector<int64_t> DataLoader::shuffled(uint64_t epoch) const {
    std::vector<int64_t> order(static_cast<size_t>(count_));
    std::iota(order.begin(), order.end(), int64_t(0));
    if (shuffle_) {
        std::mt19937_64 g(seed_ * 0x9E3779B97F4A7C15ull + epoch);
        std::shuffle(order.begin(), order.end(), g);
    }
    return order;
}

std::vector<int64_t> DataLoader::order_of(uint64_t epoch) const {
    if (last_batch_ != LastBatch::rollover || epoch == 0) return shuffled(epoch);
    // Epoch e - 1 ran (e * count) % batch_size rows past its last whole batch
    // (each epoch carries the remainder of the rows before it): fewer than
    // count, so they are all from its own shuffled order's end.
    const uint64_t b = uint64_t(batch_size_);  // below 2^32 rows in any batch that fits in memory
    const auto carried = int64_t((epoch % b) * (uint64_t(count_) % b) % b);
    std::vector<int64_t> before = shuffled(epoch - 1), order = shuffled(epoch);
    order.insert(order.begin(), before.end() - carried, before.end());
    return order;
}

void DataLoader::set_last_batch(LastBatch last_batch) {
    if (last_batch != LastBatch::keep && last_batch != LastBatch::discard && last_batch != LastBatch::rollover)
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "DataLoader: unknown last_batch");
    if (last_batch == LastBatch::rollover && batch_size_ > count_)
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT,
                                   "DataLoader: last_batch rollover needs batch_size (" + std::to_string(batch_size_) +
                                       ") at most the dataset's size (" + std::to_string(count_) + ")");
    wait_for_prefetch();
    const LastBatch before = last_batch_;
    last_batch_ = last_batch;
    try {
        start(order_of(0), 0);
    } catch (...) {
        last_batch_ = before;
        throw;
    }
}

// Only after the prefetch thread is done (it reads order_, epoch_, rank_, shards_).
void DataLoader::start(std::vector<int64_t> order, uint64_t epoch) noexcept {
    pending_ = {};
    order_.swap(order);
    epoch_ = epoch;
    next_ = 0;
    prefetch();
}

void DataLoader::begin_epoch(uint64_t epoch) {
    wait_for_prefetch();
    start(order_of(epoch), epoch);  // order_of may run out of memory: then nothing has changed
}

void DataLoader::shard(int rank, int shards) {
    if (shards < 1 || rank < 0 || rank >= shards)
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "DataLoader::shard: rank " + std::to_string(rank) +
                                                                  " of " + std::to_string(shards) + " shards");
    if (batch_size_ < shards)
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "DataLoader::shard: batches of " +
                                                                  std::to_string(batch_size_) + " rows cannot be split over " +
                                                                  std::to_string(shards) +
                                                                  " shards: every shard needs a row of each batch");
    wait_for_prefetch();
    std::vector<int64_t> order = order_of(0);
    rank_ = rank;
    shards_ = shards;
    start(std::move(order), 0);
}

Batch DataLoader::make(int64_t index) const {
    // num_batches() leaves out a last batch with fewer rows than shards.
    const int64_t first = index * batch_size_, global = std::min(batch_size_, int64_t(order_.size()) - first);
    // This shard's rows, as split_and_load cuts them.
    const int64_t lo = first + rank_ * (global / shards_) + std::min<int64_t>(rank_, global % shards_);
    const int64_t n = global / shards_ + (rank_ < global % shards_ ? 1 : 0);
    const detail::Pipeline& p = *pipeline_;
    const int64_t in_bytes = elements(source_.sample) * byte_size(source_.dtype);
    const int64_t out_bytes = elements(p.out_sample) * byte_size(p.out_dtype);
    const int64_t label_bytes = elements(source_.label_sample) * byte_size(source_.label_dtype);
    std::vector<uint8_t> x(size_t(n * out_bytes)), y(size_t(n * label_bytes));
    Batch b;
    b.rows.reserve(size_t(n));
    if (p.random) b.augmentations.reserve(size_t(n));
    for (int64_t i = 0; i < n; ++i) {
        const int64_t src = order_[size_t(lo + i)];
        // Keyed by the place in the epoch, which every shard agrees on.
        const Augmentation a = p.apply(source_.data + src * in_bytes, x.data() + i * out_bytes,
                                       detail::sample_key(seed_, epoch_, lo + i));
        if (p.random) b.augmentations.push_back(a);
        if (label_bytes > 0) std::memcpy(y.data() + i * label_bytes, source_.labels + src * label_bytes, size_t(label_bytes));
        b.rows.push_back(src);
    }
    Shape xs{n}, ys{n};
    xs.insert(xs.end(), p.out_sample.begin(), p.out_sample.end());
    ys.insert(ys.end(), source_.label_sample.begin(), source_.label_sample.end());
    b.size = n;
    b.global_size = global;
    b.data = to_tensor(Array{p.out_dtype, xs, std::move(x)}, device_);
    b.label = to_tensor(Array{source_.label_dtype, ys, std::move(y)}, device_);
    return b;
}

// Starts making batch next_ on another thread. Where no thread or memory for
// one can be had, pending_ stays empty and next() makes the batch itself.
void DataLoader::prefetch() noexcept {
    if (next_ >= num_batches()) return;
    try {
        pending_ = std::async(std::launch::async, [this, index = next_] { return make(index); });
        pending_made_in_ = px_fork_generation();
    } catch (const std::bad_alloc&) {
    } catch (const std::system_error&) {  // resource_unavailable_try_again: no thread
    }
}

bool DataLoader::next(Batch& out) {
    if (next_ >= num_batches()) return false;
    // get() rethrows a failure of the preparing thread and empties pending_,
    // so a call after a failure makes that same batch again.
    forget_parents_prefetch();
    Batch b = pending_.valid() ? pending_.get() : make(next_);
    ++next_;
    out = std::move(b);
    prefetch();
    return true;
}

}  // namespace plexus::data
