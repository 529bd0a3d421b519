// plexus data: the Fashion-MNIST reader (IDX files, gzip through zlib) and a
// DataLoader that shuffles per epoch, applies ToTensor + Normalize, and
// prepares the next batch on the training device while the current one
// computes (libplexus-nn).
#pragma once

#include <cstdint>
#include <future>
#include <string>
#include <vector>

#include "plexus/plexus.hpp"

namespace plexus::data {

// An IDX file's contents: unsigned bytes with their dimensions.
struct IdxArray {
    std::vector<int64_t> dims;
    std::vector<uint8_t> values;
};
// The most bytes of values read_idx accepts by default: $PLEXUS_MAX_DATA_BYTES
// (decimal bytes) when set, else 256 MiB (Fashion-MNIST's largest file holds
// 47 MB). A bad value is an InvalidArgumentError naming the variable.
uint64_t default_max_data_bytes();
// Reads an IDX file of unsigned bytes (gzip-compressed or not). A wrong
// magic, a truncated or oversized body, or trailing bytes are errors that
// name the file. A header declaring more than `max_bytes` values is refused
// before any is read, and the values are read in slices as they arrive, so a
// gzip bomb (1 MB that inflates to 1 GiB) costs at most min(declared size,
// max_bytes, what it really inflates to) (docs/data-files.md).
IdxArray read_idx(const std::string& path, uint64_t max_bytes = default_max_data_bytes());

// Images (N, 28, 28) as bytes and labels 0..9.
struct ImageDataset {
    int64_t count = 0, rows = 0, cols = 0;
    std::vector<uint8_t> images;
    std::vector<int32_t> labels;
};

// /usr/share/datasets/fashion-mnist (Debian's dataset-fashion-mnist), or
// $PLEXUS_FASHION_MNIST when set.
std::string default_fashion_mnist_folder();
// The training (60000) or test (10000) set from `folder`.
ImageDataset fashion_mnist(bool train, const std::string& folder = default_fashion_mnist_folder());

struct Batch {
    Tensor data;    // (n, 1, rows, cols) float32: (pixel / 255 - mean) / std
    Tensor label;   // (n) int32
    int64_t size = 0;         // n, the rows here
    int64_t global_size = 0;  // the rows of the whole batch over every shard (== size unsharded)
};

// Batches of a dataset on `device`. Each epoch (begin_epoch) reshuffles with
// a generator seeded by (seed, epoch), so runs repeat; the last batch keeps
// the remainder. While the caller computes on one batch, the next one is
// gathered, normalized and copied to the device on another thread.
// A batch that fails (out of memory on the device, say) is reported by the
// next() that wanted it, and the next call tries that batch again: an error
// never ends an epoch early or skips a batch. Where no thread can be started
// ahead, next() makes its batch itself. A begin_epoch() or shard() that
// fails leaves the loader as it was.
class DataLoader {
public:
    DataLoader(const ImageDataset& dataset, int64_t batch_size, bool shuffle, Device device, uint64_t seed = 0,
               double mean = 0.13, double std = 0.31);
    ~DataLoader();
    DataLoader(const DataLoader&) = delete;
    DataLoader& operator=(const DataLoader&) = delete;

    int64_t num_batches() const { return (dataset_.count + batch_size_ - 1) / batch_size_; }
    int64_t batch_size() const { return batch_size_; }
    // Makes every batch this shard's part of the global batch, for data
    // parallelism across processes: with the same seed every shard sees the
    // same shuffled order and takes its rows as split_and_load would (part
    // sizes differ by at most one; a batch with fewer rows than shards is an
    // error). Restarts at epoch 0.
    void shard(int rank, int shards);
    // Starts an epoch (the first one is 0).
    void begin_epoch(uint64_t epoch);
    // The next batch of the epoch; false at its end.
    bool next(Batch& out);

private:
    Batch make(int64_t index) const;
    std::vector<int64_t> order_of(uint64_t epoch) const;
    void wait_for_prefetch() noexcept;
    void start(std::vector<int64_t> order) noexcept;
    void prefetch() noexcept;

    const ImageDataset& dataset_;
    int64_t batch_size_;
    bool shuffle_;
    Device device_;
    uint64_t seed_;
    double mean_, std_;
    int rank_ = 0, shards_ = 1;
    std::vector<int64_t> order_;
    int64_t next_ = 0;
    std::future<Batch> pending_;
};

}  // namespace plexus::data
