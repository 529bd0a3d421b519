// The IDX reader and the DataLoader, on small files written here.
#include <catch2/catch.hpp>

#include <unistd.h>
#include <zlib.h>

#include <random>

#include <cstdio>
#include <set>
#include <sys/resource.h>
#include <sys/stat.h>

#include "../support.hpp"
#include "plexus/data.hpp"

using namespace plexus;
using pxtest::message_of;

namespace {

std::string temp_dir() {
    std::string d = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") + "/plexus-idx-" +
                    std::to_string(::getpid());
    ::mkdir(d.c_str(), 0755);
    return d;
}

std::vector<unsigned char> idx_bytes(const std::vector<uint32_t>& dims, const std::vector<uint8_t>& values) {
    std::vector<unsigned char> b{0, 0, 0x08, static_cast<unsigned char>(dims.size())};
    for (uint32_t d : dims)
        for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<unsigned char>(d >> s));
    b.insert(b.end(), values.begin(), values.end());
    return b;
}

void write_gz(const std::string& path, const std::vector<unsigned char>& b) {
    gzFile f = gzopen(path.c_str(), "wb");
    REQUIRE(f);
    if (!b.empty()) gzwrite(f, b.data(), unsigned(b.size()));
    gzclose(f);
}

// A tiny Fashion-MNIST look-alike: n images of 2x3 pixels, image i filled with i, label i % 10.
std::string tiny_dataset(int n) {
    std::string dir = temp_dir();
    std::vector<uint8_t> px, lab;
    for (int i = 0; i < n; ++i) {
        for (int p = 0; p < 6; ++p) px.push_back(uint8_t(i));
        lab.push_back(uint8_t(i % 10));
    }
    write_gz(dir + "/train-images-idx3-ubyte.gz", idx_bytes({uint32_t(n), 2, 3}, px));
    write_gz(dir + "/train-labels-idx1-ubyte.gz", idx_bytes({uint32_t(n)}, lab));
    return dir;
}

}  // namespace

TEST_CASE("IDX files are read, and bad ones rejected with the reason", "[data]") {
    std::string dir = temp_dir(), path = dir + "/a.gz";
    write_gz(path, idx_bytes({2, 3}, {1, 2, 3, 4, 5, 6}));
    auto a = data::read_idx(path);
    REQUIRE(a.dims == std::vector<int64_t>{2, 3});
    REQUIRE(a.values == std::vector<uint8_t>{1, 2, 3, 4, 5, 6});
    auto rejects = [&](const std::vector<unsigned char>& b, const std::string& why, uint64_t max = uint64_t(1) << 32) {
        write_gz(path, b);
        PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { data::read_idx(path, max); }), why);
    };
    rejects({}, "truncated: the header");
    rejects({1, 0, 8, 1}, "bad magic");
    rejects({0, 0, 0x0D, 1}, "IDX type 13");
    rejects({0, 0, 8, 0}, "rank 0");
    rejects({0, 0, 8, 2, 0, 0}, "truncated: the dimensions");
    rejects(idx_bytes({2, 3}, {1, 2, 3}), "the values needs 6 bytes, the file ends after 3");
    rejects(idx_bytes({2, 3}, {1, 2, 3, 4, 5, 6, 7}), "bytes after the values");
    rejects(idx_bytes({0xFFFFFFFF, 0xFFFFFFFF}, {}), "refusing to read it");
    rejects(idx_bytes({100, 100}, {}), "refusing", 1000);
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { data::read_idx(dir + "/none.gz"); }),
                        "cannot open: No such file or directory");
    // Damaged compression: a gzip header followed by garbage.
    {
        std::FILE* f = std::fopen(path.c_str(), "wb");
        const unsigned char junk[] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
        std::fwrite(junk, 1, sizeof junk, f);
        std::fclose(f);
        PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { data::read_idx(path); }), "corrupt compressed data");
    }
    // Whole values, but the gzip trailer's checksum does not match them
    // (zlib checks it on the read that reaches the stream's end).
    for (unsigned n : {6u, 1u << 20}) {
        std::vector<uint8_t> v(n);
        std::mt19937 rng(7);
        for (auto& x : v) x = uint8_t(rng());  // incompressible: the file is as large as the values
        write_gz(path, idx_bytes({n}, v));
        std::FILE* f = std::fopen(path.c_str(), "r+b");
        std::fseek(f, -8, SEEK_END);  // the trailer: CRC-32, then the length
        const int crc = std::fgetc(f);
        std::fseek(f, -8, SEEK_END);
        std::fputc(crc ^ 0xFF, f);
        std::fclose(f);
        std::string msg = message_of<InvalidArgumentError>([&] { data::read_idx(path); });
        PX_REQUIRE_MENTIONS(msg, "corrupt compressed data");
        PX_REQUIRE_MENTIONS(msg, "incorrect data check");
    }
    // A whole first gzip member, then a damaged second one (gzip files may
    // hold several, and zlib reads on into the next).
    {
        write_gz(path, idx_bytes({2, 3}, {1, 2, 3, 4, 5, 6}));
        std::FILE* f = std::fopen(path.c_str(), "ab");
        const unsigned char junk[] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
        std::fwrite(junk, 1, sizeof junk, f);
        std::fclose(f);
        PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { data::read_idx(path); }),
                            "corrupt compressed data after the values");
    }
    // Plain (uncompressed) IDX files are read too.
    {
        auto b = idx_bytes({1, 2}, {7, 8});
        std::FILE* f = std::fopen(path.c_str(), "wb");
        std::fwrite(b.data(), 1, b.size(), f);
        std::fclose(f);
        REQUIRE(data::read_idx(path).values == std::vector<uint8_t>{7, 8});
    }
}

TEST_CASE("an IDX file that declares 4 GiB but holds none costs its size, not the declared one", "[data][errors]") {
    std::string path = temp_dir() + "/liar.idx";
    std::FILE* f = std::fopen(path.c_str(), "wb");
    const unsigned char head[] = {0, 0, 8, 2, 0, 1, 0, 0, 0, 0, 0xFF, 0xFF};  // 65536 x 65535 values declared
    std::fwrite(head, 1, sizeof head, f);
    std::fclose(f);
    rusage before{}, after{};
    getrusage(RUSAGE_SELF, &before);
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { data::read_idx(path, uint64_t(1) << 32); }),
                        "the values needs 4294901760 bytes, the file ends after 0");
    getrusage(RUSAGE_SELF, &after);
    CHECK(after.ru_maxrss - before.ru_maxrss < 256 * 1024);  // KiB: one 16 MiB slice, not 4 GiB
    std::remove(path.c_str());
}

namespace {

void write_plain(const std::string& path, const std::vector<unsigned char>& b) {
    std::FILE* f = std::fopen(path.c_str(), "wb");
    REQUIRE(f);
    REQUIRE(std::fwrite(b.data(), 1, b.size(), f) == b.size());
    std::fclose(f);
}

}  // namespace

TEST_CASE("fashion_mnist reads a folder of uncompressed IDX files and prefers .gz where both are", "[data]") {
    const std::string dir = temp_dir() + "/plain";
    ::mkdir(dir.c_str(), 0755);
    write_plain(dir + "/t10k-images-idx3-ubyte", idx_bytes({2, 1, 2}, {1, 2, 3, 4}));
    write_plain(dir + "/t10k-labels-idx1-ubyte", idx_bytes({2}, {7, 8}));
    data::ImageDataset ds = data::fashion_mnist(false, dir);
    CHECK(ds.count == 2);
    CHECK(ds.images == std::vector<uint8_t>{1, 2, 3, 4});
    CHECK(ds.labels == std::vector<int32_t>{7, 8});
    // Both there: the .gz, as the data set ships; each file chosen alone.
    write_gz(dir + "/t10k-labels-idx1-ubyte.gz", idx_bytes({2}, {5, 6}));
    ds = data::fashion_mnist(false, dir);
    CHECK(ds.labels == std::vector<int32_t>{5, 6});
    CHECK(ds.images == std::vector<uint8_t>{1, 2, 3, 4});
    // Neither: the message names both files and the folder, and no tool's options.
    const std::string msg = message_of<InvalidArgumentError>([&] { data::fashion_mnist(true, dir); });
    PX_REQUIRE_MENTIONS(msg, dir + "/train-images-idx3-ubyte.gz: cannot open: No such file or directory (fashion_mnist "
                                   "looked in " + dir + " for train-images-idx3-ubyte.gz, then train-images-idx3-ubyte)");
    CHECK(msg.find("--data") == std::string::npos);
    for (const char* f : {"t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte", "t10k-labels-idx1-ubyte.gz"})
        std::remove((dir + "/" + f).c_str());
    ::rmdir(dir.c_str());
}

TEST_CASE("a data set whose files disagree is rejected", "[data]") {
    std::string dir = tiny_dataset(5);
    write_gz(dir + "/train-labels-idx1-ubyte.gz", idx_bytes({4}, {0, 1, 2, 3}));
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { data::fashion_mnist(true, dir); }), "4 labels for 5 images");
    write_gz(dir + "/train-labels-idx1-ubyte.gz", idx_bytes({5}, {0, 1, 12, 3, 4}));
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { data::fashion_mnist(true, dir); }), "label 12 at 2");
    write_gz(dir + "/train-labels-idx1-ubyte.gz", idx_bytes({5, 1}, {0, 1, 2, 3, 4}));
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { data::fashion_mnist(true, dir); }), "1 dimension");
    write_gz(dir + "/train-images-idx3-ubyte.gz", idx_bytes({5, 6}, std::vector<uint8_t>(30, 0)));
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { data::fashion_mnist(true, dir); }), "3 dimensions");
}

TEST_CASE("the DataLoader shuffles per epoch, keeps the remainder and normalizes", "[data]") {
    std::string dir = tiny_dataset(23);
    data::ImageDataset ds = data::fashion_mnist(true, dir);
    REQUIRE(ds.count == 23);
    data::DataLoader loader(ds, 5, true, cpu(1), 3, 0.13, 0.31);
    REQUIRE(loader.num_batches() == 5);
    auto epoch_order = [&](uint64_t e) {
        loader.begin_epoch(e);
        std::vector<int> seen;
        data::Batch b;
        std::vector<int64_t> sizes;
        while (loader.next(b)) {
            REQUIRE(b.data.device() == cpu(1));
            REQUIRE(b.data.shape() == Shape{b.size, 1, 2, 3});
            sizes.push_back(b.size);
            auto x = b.data.to_vector<float>();
            auto y = b.label.to_vector<int32_t>();
            for (int64_t i = 0; i < b.size; ++i) {
                // Pixel value v becomes (v / 255 - 0.13) / 0.31; image i holds i everywhere.
                int v = int(std::lround((x[size_t(i * 6)] * 0.31 + 0.13) * 255));
                REQUIRE(x[size_t(i * 6)] == Approx((v / 255.0 - 0.13) / 0.31).epsilon(1e-5));
                REQUIRE(y[size_t(i)] == v % 10);
                seen.push_back(v);
            }
        }
        REQUIRE(sizes == std::vector<int64_t>{5, 5, 5, 5, 3});
        return seen;
    };
    auto e0 = epoch_order(0), e1 = epoch_order(1), e0_again = epoch_order(0);
    REQUIRE(std::set<int>(e0.begin(), e0.end()).size() == 23);  // every image once
    REQUIRE(e0 != e1);                                             // reshuffled
    REQUIRE(e0 == e0_again);                                       // reproducible
    data::DataLoader in_order(ds, 10, false, cpu(0));
    data::Batch b;
    REQUIRE(in_order.next(b));
    REQUIRE(b.label.to_vector<int32_t>() == std::vector<int32_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { data::DataLoader(ds, 0, false, cpu()); }), "batch_size");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { data::DataLoader(ds, 4, false, cpu(), 0, 0.1, 0); }),
                        "std must be > 0");
    data::ImageDataset broken = ds;
    broken.labels.pop_back();
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { data::DataLoader(broken, 4, false, cpu()); }),
                        "sizes are inconsistent");
}

TEST_CASE("a sharded DataLoader gives each rank its part of every batch", "[data]") {
    std::string dir = tiny_dataset(23);
    data::ImageDataset ds = data::fashion_mnist(true, dir);
    data::DataLoader whole(ds, 5, true, cpu(0), 3), first(ds, 5, true, cpu(0), 3), second(ds, 5, true, cpu(0), 3);
    first.shard(0, 2);
    second.shard(1, 2);
    data::Batch w, a, b;
    int64_t batches = 0;
    while (whole.next(w)) {
        REQUIRE(first.next(a));
        REQUIRE(second.next(b));
        // The shards of a batch are its rows cut as split_and_load cuts them.
        CHECK(a.global_size == w.size);
        CHECK(b.global_size == w.size);
        CHECK(a.size == (w.size + 1) / 2);
        CHECK(a.size + b.size == w.size);
        CHECK(concat({a.label, b.label}).to_vector<int32_t>() == w.label.to_vector<int32_t>());
        ++batches;
    }
    CHECK(batches == 5);  // 23 images: the last batch has 3 rows, 2 and 1 per shard
    CHECK_THROWS_WITH(first.shard(2, 2), Catch::Contains("rank 2 of 2 shards"));
    CHECK_THROWS_AS(first.shard(0, 0), InvalidArgumentError);
    data::DataLoader too_many(ds, 5, false, cpu(0));
    too_many.shard(3, 4);  // the last batch has 3 rows: fewer than 4 shards, so it is left out
    CHECK(too_many.num_batches() == 4);
    data::Batch x;
    int64_t global_rows = 0;
    for (int i = 0; i < 4; ++i) {
        REQUIRE(too_many.next(x));
        global_rows += x.global_size;
    }
    CHECK_FALSE(too_many.next(x));  // the epoch ends: every rank ends it alike
    CHECK(global_rows == 20);
    // A new epoch starts over, and so does a shard call (which refuses bad ranks before changing anything).
    too_many.begin_epoch(1);
    REQUIRE(too_many.next(x));
    CHECK(x.global_size == 5);
    CHECK_THROWS_AS(too_many.shard(4, 4), InvalidArgumentError);
    REQUIRE(too_many.next(x));
    CHECK(x.size == 1);  // still shard 3 of 4: 5 rows are split 2, 1, 1, 1
    // A device that does not exist is refused when the loader is made.
    CHECK_THROWS_WITH(data::DataLoader(ds, 5, false, cpu(7)), Catch::Contains("cpu(7)"));
    // Batches smaller than the shards could never be split: refused at once.
    CHECK_THROWS_WITH(too_many.shard(0, 6), Catch::Contains("batches of 5 rows cannot be split over 6 shards"));
    too_many.shard(0, 1);
    int64_t rows = 0;
    while (too_many.next(x)) rows += x.size;
    CHECK(rows == 23);
}

namespace {

// Sets an environment variable for one scope, then puts the old value back.
struct EnvSet {
    std::string name, old;
    bool had;
    EnvSet(const char* n, const char* v) : name(n), had(std::getenv(n) != nullptr) {
        if (had) old = std::getenv(n);
        ::setenv(n, v, 1);
    }
    ~EnvSet() { had ? (void)::setenv(name.c_str(), old.c_str(), 1) : (void)::unsetenv(name.c_str()); }
};

}  // namespace

TEST_CASE("a gzip bomb is refused by the data limit, which PLEXUS_MAX_DATA_BYTES raises", "[data][errors]") {
    // 1 GiB of values declared; 64 MiB of zeros really inside, about 64 kB compressed.
    std::string path = temp_dir() + "/bomb.gz";
    {
        gzFile f = gzopen(path.c_str(), "wb9");
        REQUIRE(f);
        auto head = idx_bytes({1024, 1024, 1024}, {});
        gzwrite(f, head.data(), unsigned(head.size()));
        std::vector<unsigned char> zeros(1 << 20, 0);
        for (int i = 0; i < 64; ++i) gzwrite(f, zeros.data(), unsigned(zeros.size()));
        gzclose(f);
    }
    struct stat st {};
    REQUIRE(::stat(path.c_str(), &st) == 0);
    REQUIRE(st.st_size < (1 << 20));
    rusage before{}, after{};
    getrusage(RUSAGE_SELF, &before);
    {
        EnvSet unset("PLEXUS_MAX_DATA_BYTES", "");
        REQUIRE(data::default_max_data_bytes() == uint64_t(256) << 20);
        std::string msg = message_of<InvalidArgumentError>([&] { data::read_idx(path); });
        PX_REQUIRE_MENTIONS(msg, "declares more than 268435456 bytes of values; refusing to read it");
        PX_REQUIRE_MENTIONS(msg, "PLEXUS_MAX_DATA_BYTES");
    }
    getrusage(RUSAGE_SELF, &after);
    CHECK(after.ru_maxrss - before.ru_maxrss < 32 * 1024);  // KiB: refused from the header, nothing inflated
    {
        // Raised past the declared size: read in slices up to what the file really holds.
        EnvSet raised("PLEXUS_MAX_DATA_BYTES", "2147483648");
        REQUIRE(data::default_max_data_bytes() == uint64_t(1) << 31);
        PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { data::read_idx(path); }),
                            "the values needs 1073741824 bytes, the file ends after 67108864");
    }
    {
        EnvSet lowered("PLEXUS_MAX_DATA_BYTES", "1000");
        auto small = temp_dir() + "/small.gz";
        write_gz(small, idx_bytes({10, 100}, std::vector<uint8_t>(1000, 3)));
        REQUIRE(data::read_idx(small).values == std::vector<uint8_t>(1000, 3));
        write_gz(small, idx_bytes({10, 101}, std::vector<uint8_t>(1010, 3)));
        PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { data::read_idx(small); }),
                            "declares more than 1000 bytes");
        std::remove(small.c_str());
    }
    for (const char* badv : {"abc", "12x", "-5", "99999999999999999999"}) {
        EnvSet bad("PLEXUS_MAX_DATA_BYTES", badv);
        PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { data::read_idx(path); }),
                            "PLEXUS_MAX_DATA_BYTES: '" + std::string(badv) + "' is not a byte count");
    }
    {
        EnvSet zero("PLEXUS_MAX_DATA_BYTES", "0");
        PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { data::read_idx(path); }),
                            "PLEXUS_MAX_DATA_BYTES: 0 bytes would refuse every data file");
    }
    std::remove(path.c_str());
}
