// IDX files (the MNIST family's format) through zlib, which reads gzip and
// plain files alike. Header: 0x00 0x00, type 0x08 (unsigned byte), rank,
// then one big-endian uint32 per dimension, then the values.
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <cstdlib>
#include <memory>

#include "file_errors.hpp"
#include "plexus/data.hpp"
#include "regular_file.hpp"

namespace plexus::data {
using detail::bad;
namespace {

struct GzCloser {
    void operator()(gzFile f) const { gzclose(f); }
};
using Gz = std::unique_ptr<std::remove_pointer_t<gzFile>, GzCloser>;

// Reads up to n bytes, fewer only where the file ends; corrupt compressed
// data is an error naming `what`.
size_t read_some(gzFile f, unsigned char* dst, size_t n, const std::string& path, const char* what) {
    size_t done = 0;
    while (done < n) {
        unsigned chunk = static_cast<unsigned>(std::min<size_t>(n - done, 1u << 30));
        int got = gzread(f, dst + done, chunk);
        if (got < 0) {
            int code = 0;
            bad(path, std::string("corrupt compressed data while reading ") + what + " (" + gzerror(f, &code) + ")");
        }
        if (got == 0) break;
        done += size_t(got);
    }
    return done;
}

[[noreturn]] void truncated(const std::string& path, const char* what, uint64_t need, uint64_t have) {
    bad(path, std::string("truncated: ") + what + " needs " + std::to_string(need) + " bytes, the file ends after " +
                  std::to_string(have));
}

void read_exactly(gzFile f, unsigned char* dst, size_t n, const std::string& path, const char* what) {
    size_t got = read_some(f, dst, n, path, what);
    if (got < n) truncated(path, what, n, got);
}

}  // namespace

uint64_t default_max_data_bytes() {
    const char* env = std::getenv("PLEXUS_MAX_DATA_BYTES");
    if (!env || !*env) return uint64_t(256) << 20;
    uint64_t v = 0;
    for (const char* c = env; *c; ++c) {
        if (*c < '0' || *c > '9' || __builtin_mul_overflow(v, 10u, &v) || __builtin_add_overflow(v, unsigned(*c - '0'), &v))
            bad("PLEXUS_MAX_DATA_BYTES", "'" + std::string(env) + "' is not a byte count (decimal digits, below 2^64)");
    }
    if (v == 0) bad("PLEXUS_MAX_DATA_BYTES", "0 bytes would refuse every data file");
    return v;
}

IdxArray read_idx(const std::string& path, uint64_t max_bytes) {
    struct stat st {};
    const int fd = detail::open_data_file(path, st);
    errno = 0;
    Gz f(gzdopen(fd, "rb"));
    if (!f) {
        const int err = errno;  // zlib leaves malloc's errno
        ::close(fd);
        bad(path, std::string("cannot read") + (err ? std::string(": ") + std::strerror(err) : std::string()));
    }
    unsigned char head[4];
    read_exactly(f.get(), head, 4, path, "the header");
    if (head[0] != 0 || head[1] != 0) bad(path, "not an IDX file (bad magic)");
    if (head[2] != 0x08) bad(path, "IDX type " + std::to_string(head[2]) + " is not unsigned bytes (0x08)");
    if (head[3] < 1 || head[3] > 4) bad(path, "IDX rank " + std::to_string(head[3]) + " is outside 1..4");
    IdxArray out;
    uint64_t total = 1;
    for (int i = 0; i < head[3]; ++i) {
        unsigned char b[4];
        read_exactly(f.get(), b, 4, path, "the dimensions");
        uint64_t d = (uint64_t(b[0]) << 24) | (uint64_t(b[1]) << 16) | (uint64_t(b[2]) << 8) | b[3];
        if (__builtin_mul_overflow(total, d, &total) || total > max_bytes)
            bad(path, detail::over_limit(max_bytes));
        out.dims.push_back(int64_t(d));
    }
    // The values are read in slices and the array grows as they arrive, so a
    // short file that declares a huge array costs its real size, not the
    // declared one, before it is refused as truncated.
    const size_t slice = size_t(1) << 24;
    while (out.values.size() < total) {
        size_t done = out.values.size(), n = std::min<size_t>(slice, size_t(total) - done);
        out.values.resize(done + n);
        size_t got = read_some(f.get(), out.values.data() + done, n, path, "the values");
        if (got < n) truncated(path, "the values", total, done + got);
    }
    unsigned char extra;
    int more = gzread(f.get(), &extra, 1);
    if (more < 0) {
        int code = 0;
        bad(path, std::string("corrupt compressed data after the values (") + gzerror(f.get(), &code) + ")");
    }
    if (more > 0) bad(path, "has bytes after the values its header declares");
    return out;
}

std::string default_fashion_mnist_folder() {
    const char* env = std::getenv("PLEXUS_FASHION_MNIST");
    return env && *env ? env : "/usr/share/datasets/fashion-mnist";
}

namespace {

// The path of Fashion-MNIST's file `name` in `folder`: name.gz (as the data
// set ships) when it is there, else name (as many downloads unpack it), else
// an error naming both and the folder.
std::string data_set_file(const std::string& folder, const std::string& name) {
    std::string plain = folder + "/" + name, gz = plain + ".gz";  // not const: returned by move
    struct stat st {};
    if (::stat(gz.c_str(), &st) == 0) return gz;
    if (::stat(plain.c_str(), &st) == 0) return plain;
    const int err = errno;
    bad(gz, std::string("cannot open: ") + std::strerror(err) + " (fashion_mnist looked in " + folder + " for " + name +
                ".gz, then " + name + ")");
}

}  // namespace

ImageDataset fashion_mnist(bool train, const std::string& folder) {
    const std::string set = train ? "train" : "t10k";
    const std::string ipath = data_set_file(folder, set + "-images-idx3-ubyte");
    const std::string lpath = data_set_file(folder, set + "-labels-idx1-ubyte");
    IdxArray images = read_idx(ipath), labels = read_idx(lpath);
    if (images.dims.size() != 3) bad(ipath, "images must have 3 dimensions (count, rows, cols)");
    if (labels.dims.size() != 1) bad(lpath, "labels must have 1 dimension");
    if (images.dims[0] != labels.dims[0])
        bad(lpath, "has " + std::to_string(labels.dims[0]) + " labels for " + std::to_string(images.dims[0]) + " images");
    ImageDataset d;
    d.count = images.dims[0], d.rows = images.dims[1], d.cols = images.dims[2];
    d.images = std::move(images.values);
    d.labels.reserve(labels.values.size());
    for (size_t i = 0; i < labels.values.size(); ++i) {
        if (labels.values[i] > 9) bad(lpath, "label " + std::to_string(labels.values[i]) + " at " + std::to_string(i) + " is not a class 0..9");
        d.labels.push_back(labels.values[i]);
    }
    return d;
}

}  // namespace plexus::data
