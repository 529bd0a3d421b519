// plexus data (libplexus-nn): files read into host arrays (IDX through zlib,
// NumPy's .npy and .npz through libzip, CSV), datasets of arrays, and one
// DataLoader that shuffles per epoch, shards, transforms (ToTensor,
// Normalize, random crops and flips) and prepares the next batch on the
// training device on another thread while the current one computes.
// The formats, limits and errors: docs/data-files.md; the loader: docs/nn.md.
#pragma once

#include <cstdint>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "plexus/plexus.hpp"

namespace plexus::data {

// ---- files ----

// The most bytes of values a reader accepts by default: $PLEXUS_MAX_DATA_BYTES
// (decimal bytes) when set, else 256 MiB (Fashion-MNIST's largest file holds
// 47 MB). A bad value is an InvalidArgumentError naming the variable.
uint64_t default_max_data_bytes();

// An IDX file's contents: unsigned bytes with their dimensions.
struct IdxArray {
    std::vector<int64_t> dims;
    std::vector<uint8_t> values;
};
// Reads an IDX file of unsigned bytes (gzip-compressed or not). A wrong
// magic, a truncated or oversized body, or trailing bytes are errors that
// name the file. A header declaring more than `max_bytes` values is refused
// before any is read, and the values are read in slices as they arrive, so a
// gzip bomb (1 MB that inflates to 1 GiB) costs at most min(declared size,
// max_bytes, what it really inflates to) (docs/data-files.md).
IdxArray read_idx(const std::string& path, uint64_t max_bytes = default_max_data_bytes());

// An array on the host: row-major values in this machine's byte order.
struct Array {
    DType dtype = DType::float32;
    Shape shape;                 // () holds one value
    std::vector<uint8_t> bytes;  // size() * the dtype's size
    int64_t size() const;        // the number of values
};
// A tensor of the array's values on `device`.
Tensor to_tensor(const Array& a, Device device = cpu());
// A tensor's values on the host (waits for them).
Array to_array(const Tensor& t);

// Reads a NumPy .npy file (format 1.0, 2.0 or 3.0) of float16, float32,
// float64, int32, int64, uint8 or bool (read as uint8 0/1), either byte
// order (big-endian values are swapped) and either layout (Fortran order is
// reordered to C order). bfloat16 has no NumPy code, so no .npy holds it.
// Any other dtype, a bad header, truncated values, trailing bytes, or values
// over `max_bytes` (refused before a value is read) are InvalidArgumentErrors
// that name the file and what is wrong.
Array read_npy(const std::string& path, uint64_t max_bytes = default_max_data_bytes());
// The arrays of a NumPy .npz file (np.savez, stored, or np.savez_compressed,
// deflated; Zip64 too), by name without ".npy". Each member is read as
// read_npy reads a file; `max_bytes` bounds all of them together, and a member
// is never inflated past the size the zip declares for it.
std::map<std::string, Array> read_npz(const std::string& path, uint64_t max_bytes = default_max_data_bytes());
// One array of an .npz file (the others are not inflated); an error listing
// the file's arrays when it has none named `name`.
Array read_npz(const std::string& path, const std::string& name, uint64_t max_bytes = default_max_data_bytes());

struct CsvOptions {
    char delimiter = ',';
    int64_t skip_rows = 0;         // lines skipped first (a header)
    std::vector<int64_t> columns;  // the columns kept, in this order (0 the first, -1 the last); empty: all
    DType dtype = DType::float32;  // float32, float64, int32 or int64
    char comment = '#';            // it and the rest of its line are ignored ('\0': none); blank lines are skipped
    uint64_t max_bytes = default_max_data_bytes();  // of the file, and of the values
};
// A 2-D array (rows, columns) of the numbers in a CSV file, parsed the same
// whatever the locale. A field that is not a number of `dtype`, a row with
// another number of fields, a column outside the rows or a file without
// rows are InvalidArgumentErrors naming the file, line and column.
Array read_csv(const std::string& path, const CsvOptions& options = {});

// ---- datasets ----

// Fashion-MNIST: images (N, rows, cols) as bytes and labels 0..9.
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

// A user's samples: data (N, ...) of uint8, float16, bfloat16, float32 or
// float64, and labels (N, ...) of any dtype, row i labelling sample i.
// Images for the transforms are (N, C, H, W) or (N, H, W) (one channel).
struct ArrayDataset {
    ArrayDataset(Array data, Array label);  // checks the shapes, dtypes and sizes
    int64_t size() const { return data.shape[0]; }
    Array data, label;
};

// ---- transforms, run by the loader on each sample as its batch is prepared ----

namespace transforms {
// A crop of height x width at a random place in the image with `padding`
// zeros around it, as torchvision's RandomCrop(size, padding).
struct RandomCrop {
    RandomCrop(int64_t size, int64_t padding = 0) : height(size), width(size), padding(padding) {}
    RandomCrop(int64_t height, int64_t width, int64_t padding) : height(height), width(width), padding(padding) {}
    int64_t height, width, padding;
};
// The image mirrored left to right with probability p.
struct RandomHorizontalFlip {
    explicit RandomHorizontalFlip(double p = 0.5) : p(p) {}
    double p;
};
// uint8 values scaled to [0, 1] (v / 255) as float32; float data unchanged.
struct ToTensor {};
// (v - mean[c]) / std[c] per channel c (one value: every channel).
struct Normalize {
    Normalize(std::vector<double> mean, std::vector<double> std) : mean(std::move(mean)), std(std::move(std)) {}
    std::vector<double> mean, std;
};
}  // namespace transforms
// The crops and flips act on the raw values, so they come before ToTensor
// and Normalize (a padded zero is a raw zero, as torchvision pads its PIL
// images). Random choices depend on (seed, epoch, place in the epoch) only:
// a resumed run, a sharded one and a re-run see the same batches.
using Transform = std::variant<transforms::RandomCrop, transforms::RandomHorizontalFlip, transforms::ToTensor,
                               transforms::Normalize>;

// What the random transforms chose for one sample.
struct Augmentation {
    int64_t top = 0, left = 0;  // the crop's corner in the padded image
    bool flipped = false;
};

struct Batch {
    Tensor data;    // (n, ...): Fashion-MNIST's (n, 1, rows, cols) float32 (pixel / 255 - mean) / std
    Tensor label;   // (n, ...) in the labels' dtype (int32 for Fashion-MNIST)
    int64_t size = 0;         // n, the rows here
    int64_t global_size = 0;  // the rows of the whole batch over every shard (== size unsharded)
    std::vector<int64_t> rows;               // the dataset's rows, in the batch's order
    std::vector<Augmentation> augmentations;  // per row, where a transform is random
};

namespace detail {
struct Pipeline;  // the checked transforms (nn/data/transforms.hpp)
}

// What an epoch does with the rows that do not fill a last batch, as Gluon's
// DataLoader(last_batch=...): `keep` makes a smaller last batch, `discard`
// leaves them out, `rollover` puts them first in the next epoch's order.
enum class LastBatch { keep, discard, rollover };

// Batches of a dataset on `device`. Each epoch (begin_epoch) reshuffles with
// a generator seeded by (seed, epoch), so runs repeat; the last batch keeps
// the remainder unless set_last_batch says otherwise. While the caller computes on one batch, the next one is
// gathered, transformed and copied to the device on another thread.
// A batch that fails (out of memory on the device, say) is reported by the
// next() that wanted it, and the next call tries that batch again: an error
// never ends an epoch early or skips a batch. Where no thread can be started
// ahead, next() makes its batch itself. A begin_epoch() or shard() that
// fails leaves the loader as it was. The dataset must outlive the loader.
class DataLoader {
public:
    // Fashion-MNIST: ToTensor, then Normalize(mean, std).
    DataLoader(const ImageDataset& dataset, int64_t batch_size, bool shuffle, Device device, uint64_t seed = 0,
               double mean = 0.13, double std = 0.31);
    // Bad transforms (a crop larger than the padded image, p outside [0, 1],
    // std <= 0, as many means as channels) are InvalidArgumentErrors here.
    DataLoader(const ArrayDataset& dataset, int64_t batch_size, bool shuffle, Device device, uint64_t seed = 0,
               const std::vector<Transform>& transforms = {});
    ~DataLoader();
    DataLoader(const DataLoader&) = delete;
    DataLoader& operator=(const DataLoader&) = delete;

    // Batches in this epoch. Sharded, a last batch with fewer rows than
    // shards is left out of the epoch (every shard needs a row; every rank
    // leaves it out alike).
    int64_t num_batches() const {
        const int64_t rows = int64_t(order_.size());
        if (last_batch_ != LastBatch::keep) return rows / batch_size_;
        const int64_t n = (rows + batch_size_ - 1) / batch_size_;
        return n > 0 && rows - (n - 1) * batch_size_ < shards_ ? n - 1 : n;
    }
    int64_t batch_size() const { return batch_size_; }
    // Restarts at epoch 0. With rollover, epoch e begins with the rows epoch
    // e - 1 left over (the last (e * size) % batch_size of its shuffled
    // order), so begin_epoch(e) gives the same batches whether or not the
    // epochs before it ran; rollover needs batch_size <= the dataset's size.
    void set_last_batch(LastBatch last_batch);
    LastBatch last_batch() const { return last_batch_; }
    // Makes every batch this shard's part of the global batch, for data
    // parallelism across processes: with the same seed every shard sees the
    // same shuffled order and takes its rows as split_and_load would (part
    // sizes differ by at most one). A last batch with fewer rows than shards
    // is left out, as Gluon's last_batch="discard" would; a batch size below
    // the shard count is refused. Restarts at epoch 0.
    void shard(int rank, int shards);
    // Starts an epoch (the first one is 0).
    void begin_epoch(uint64_t epoch);
    // The next batch of the epoch; false at its end.
    bool next(Batch& out);

private:
    // Where the samples are: a dataset's arrays, never copied.
    struct Source {
        DType dtype, label_dtype;
        Shape sample, label_sample;  // one row's shape
        const uint8_t *data, *labels;
    };
    DataLoader(Source source, int64_t count, int64_t batch_size, bool shuffle, Device device, uint64_t seed,
               const std::vector<Transform>& transforms);
    Batch make(int64_t index) const;
    std::vector<int64_t> order_of(uint64_t epoch) const;
    std::vector<int64_t> shuffled(uint64_t epoch) const;  // the dataset's rows, in epoch's order
    void wait_for_prefetch() noexcept;
    void start(std::vector<int64_t> order, uint64_t epoch) noexcept;
    void prefetch() noexcept;
    // In a forked child the prefetch thread stayed in the parent: its batch
    // is given up (never waited for; the child makes the batch itself).
    void forget_parents_prefetch() noexcept;

    Source source_;
    int64_t count_;
    int64_t batch_size_;
    bool shuffle_;
    Device device_;
    uint64_t seed_;
    std::shared_ptr<const detail::Pipeline> pipeline_;
    int rank_ = 0, shards_ = 1;
    LastBatch last_batch_ = LastBatch::keep;
    uint64_t epoch_ = 0;
    std::vector<int64_t> order_;
    int64_t next_ = 0;
    std::future<Batch> pending_;
    uint64_t pending_made_in_ = 0;  // the px_fork_generation() it was started in
};

}  // namespace plexus::data
