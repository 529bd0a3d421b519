// ArrayDataset and the DataLoader's transforms: batches checked value by
// value against a reference that applies the crop and flip the loader says
// it chose.
#include <catch2/catch.hpp>

#include <cstring>
#include <set>

#include "../support.hpp"
#include "plexus/data.hpp"

using namespace plexus;
using pxtest::message_of;
namespace tf = plexus::data::transforms;

namespace {

template <class T>
data::Array array_of(const std::vector<T>& v, const Shape& shape) {
    data::Array a;
    a.dtype = dtype_of<T>();
    a.shape = shape;
    a.bytes.resize(v.size() * sizeof(T));
    std::memcpy(a.bytes.data(), v.data(), a.bytes.size());
    return a;
}

// n images (C, H, W) of uint8, none 0 (so a 0 is padding), labelled i % 10 as int64.
data::ArrayDataset images(int64_t n, int64_t c, int64_t h, int64_t w) {
    std::vector<uint8_t> px;
    std::vector<int64_t> labels;
    for (int64_t i = 0; i < n; ++i) {
        for (int64_t k = 0; k < c * h * w; ++k) px.push_back(uint8_t((i * 61 + k * 7) % 250 + 1));
        labels.push_back(i % 10);
    }
    return data::ArrayDataset(array_of(px, {n, c, h, w}), array_of(labels, {n}));
}

// The value at (ch, y, x) of sample `row` after a crop (h x w with `pad` at
// `a`'s corner) and `a`'s flip, or 0 in the padding.
double reference(const data::ArrayDataset& d, int64_t row, const data::Augmentation& a, int64_t pad, int64_t w_out,
                 int64_t ch, int64_t y, int64_t x) {
    const int64_t c = d.data.shape[1], h = d.data.shape[2], w = d.data.shape[3];
    const int64_t sx = (a.flipped ? w_out - 1 - x : x) + a.left - pad, sy = y + a.top - pad;
    if (sy < 0 || sy >= h || sx < 0 || sx >= w) return 0;
    return d.data.bytes[size_t(((row * c + ch) * h + sy) * w + sx)];
}

}  // namespace

TEST_CASE("an ArrayDataset's batches are its rows, in its dtypes, without transforms", "[data][loader]") {
    std::vector<double> x;
    std::vector<float> y;
    for (int i = 0; i < 7; ++i) {
        x.insert(x.end(), {i + 0.1, i + 0.2, i + 0.3});
        y.insert(y.end(), {float(i), float(-i)});
    }
    data::ArrayDataset ds(array_of(x, {7, 3}), array_of(y, {7, 2}));
    data::DataLoader loader(ds, 3, true, cpu(1), 5);
    REQUIRE(loader.num_batches() == 3);
    data::Batch b;
    std::set<int64_t> seen;
    while (loader.next(b)) {
        CHECK(b.data.dtype() == DType::float64);
        CHECK(b.data.device() == cpu(1));
        CHECK(b.label.dtype() == DType::float32);
        CHECK(b.label.shape() == Shape{b.size, 2});
        CHECK(b.augmentations.empty());
        const auto xs = b.data.to_vector<double>();
        const auto ys = b.label.to_vector<float>();
        REQUIRE(b.rows.size() == size_t(b.size));
        for (size_t i = 0; i < b.rows.size(); ++i) {
            const int64_t r = b.rows[i];
            CHECK(xs[3 * i] == x[size_t(3 * r)]);
            CHECK(xs[3 * i + 2] == x[size_t(3 * r + 2)]);
            CHECK(ys[2 * i + 1] == -float(r));
            seen.insert(r);
        }
    }
    CHECK(seen.size() == 7);
}

TEST_CASE("Fashion-MNIST's loader is the general one with ToTensor and Normalize, bit for bit as before", "[data][loader]") {
    data::ImageDataset fm;
    fm.count = 4;
    fm.rows = 2;
    fm.cols = 3;
    for (int i = 0; i < 24; ++i) fm.images.push_back(uint8_t(i * 11));
    fm.labels = {3, 1, 4, 1};
    data::DataLoader loader(fm, 4, false, cpu(0), 0, 0.13, 0.31);
    data::Batch b;
    REQUIRE(loader.next(b));
    CHECK(b.data.shape() == Shape{4, 1, 2, 3});
    CHECK(b.label.to_vector<int32_t>() == std::vector<int32_t>{3, 1, 4, 1});
    // The loader's arithmetic before it was general: one float multiply and subtract.
    const float scale = float(1.0 / (255.0 * 0.31)), shift = float(0.13 / 0.31);
    const auto v = b.data.to_vector<float>();
    for (size_t i = 0; i < v.size(); ++i) CHECK(v[i] == float(fm.images[i]) * scale - shift);
}

TEST_CASE("random crops with padding and flips follow the choices the batch reports", "[data][loader][augment]") {
    const data::ArrayDataset ds = images(24, 2, 5, 6);
    const std::vector<double> mean{0.5, 0.25}, sd{0.5, 0.2};
    const std::vector<data::Transform> train{tf::RandomCrop(4, 5, 2), tf::RandomHorizontalFlip(), tf::ToTensor(),
                                             tf::Normalize(mean, sd)};
    data::DataLoader loader(ds, 8, true, cpu(0), 11, train);
    std::set<int64_t> tops, lefts;
    int flips = 0, rows = 0;
    for (uint64_t epoch : {0, 1}) {
        loader.begin_epoch(epoch);
        data::Batch b;
        while (loader.next(b)) {
            REQUIRE(b.data.shape() == Shape{b.size, 2, 4, 5});
            REQUIRE(b.data.dtype() == DType::float32);
            REQUIRE(b.augmentations.size() == size_t(b.size));
            const auto v = b.data.to_vector<float>();
            const auto labels = b.label.to_vector<int64_t>();
            for (int64_t i = 0; i < b.size; ++i) {
                const data::Augmentation& a = b.augmentations[size_t(i)];
                CHECK(labels[size_t(i)] == b.rows[size_t(i)] % 10);
                for (int64_t ch = 0; ch < 2; ++ch)
                    for (int64_t y = 0; y < 4; ++y)
                        for (int64_t x = 0; x < 5; ++x) {
                            const double want = (reference(ds, b.rows[size_t(i)], a, 2, 5, ch, y, x) / 255 -
                                                 mean[size_t(ch)]) / sd[size_t(ch)];
                            CHECK(v[size_t(((i * 2 + ch) * 4 + y) * 5 + x)] == Approx(want).margin(1e-6));
                        }
                tops.insert(a.top);
                lefts.insert(a.left);
                flips += a.flipped;
                ++rows;
            }
        }
    }
    // Every corner the padded 9x10 image allows for a 4x5 crop, and about half flipped.
    CHECK(tops == std::set<int64_t>{0, 1, 2, 3, 4, 5});
    CHECK(lefts == std::set<int64_t>{0, 1, 2, 3, 4, 5});
    CHECK(flips > rows / 4);
    CHECK(flips < 3 * rows / 4);
}

TEST_CASE("augmentations repeat for a (seed, epoch, batch), in shards too, and differ elsewhere", "[data][loader][augment]") {
    const data::ArrayDataset ds = images(10, 1, 4, 4);
    const std::vector<data::Transform> train{tf::RandomCrop(4, 1), tf::RandomHorizontalFlip(0.5)};
    auto epoch_of = [&](data::DataLoader& l, uint64_t e) {
        l.begin_epoch(e);
        std::vector<uint8_t> out;
        data::Batch b;
        while (l.next(b)) {
            CHECK(b.data.dtype() == DType::uint8);  // no ToTensor: the raw values, cropped and flipped
            auto v = b.data.to_vector<uint8_t>();
            out.insert(out.end(), v.begin(), v.end());
        }
        return out;
    };
    data::DataLoader a(ds, 4, true, cpu(0), 3, train), again(ds, 4, true, cpu(0), 3, train),
        other_seed(ds, 4, true, cpu(0), 4, train);
    const auto e0 = epoch_of(a, 0), e1 = epoch_of(a, 1);
    CHECK(e0 == epoch_of(again, 0));  // a resumed run begins its epoch the same way
    CHECK(e1 == epoch_of(again, 1));
    CHECK(e0 != e1);
    CHECK(e0 != epoch_of(other_seed, 0));
    // Two shards of each batch hold the rows of the whole one, augmented alike.
    data::DataLoader whole(ds, 4, true, cpu(0), 3, train), s0(ds, 4, true, cpu(0), 3, train),
        s1(ds, 4, true, cpu(1), 3, train);
    s0.shard(0, 2);
    s1.shard(1, 2);
    for (uint64_t e : {0, 1}) {
        whole.begin_epoch(e);
        s0.begin_epoch(e);
        s1.begin_epoch(e);
        data::Batch w, p, q;
        while (whole.next(w)) {
            REQUIRE(s0.next(p));
            REQUIRE(s1.next(q));
            auto joined = p.data.to_vector<uint8_t>(), second = q.data.to_vector<uint8_t>();
            joined.insert(joined.end(), second.begin(), second.end());
            CHECK(joined == w.data.to_vector<uint8_t>());
        }
    }
    // p = 0 never flips, p = 1 always does.
    for (double p : {0.0, 1.0}) {
        data::DataLoader l(ds, 10, true, cpu(0), 1, {tf::RandomHorizontalFlip(p)});
        data::Batch b;
        REQUIRE(l.next(b));
        for (const auto& aug : b.augmentations) CHECK(aug.flipped == (p == 1.0));
    }
}

TEST_CASE("transforms of float images pad with zeros, normalize per channel and keep the dtype", "[data][loader][augment]") {
    std::vector<float> x;
    for (int i = 0; i < 2 * 3 * 3; ++i) x.push_back(float(i + 1));
    data::ArrayDataset ds(array_of(x, {2, 3, 3}), array_of(std::vector<int32_t>{0, 1}, {2}));  // (N, H, W): one channel
    data::DataLoader l(ds, 2, false, cpu(0), 0, {tf::RandomCrop(3, 1), tf::ToTensor(), tf::Normalize({1}, {2})});
    data::Batch b;
    REQUIRE(l.next(b));
    CHECK(b.data.shape() == Shape{2, 3, 3});
    CHECK(b.data.dtype() == DType::float32);
    const auto v = b.data.to_vector<float>();
    for (int64_t i = 0; i < 2; ++i) {
        const auto& a = b.augmentations[size_t(i)];
        for (int64_t y = 0; y < 3; ++y)
            for (int64_t xx = 0; xx < 3; ++xx) {
                const int64_t sy = y + a.top - 1, sx = xx + a.left - 1;
                const float raw = sy < 0 || sy >= 3 || sx < 0 || sx >= 3 ? 0.0f : x[size_t((i * 3 + sy) * 3 + sx)];
                CHECK(v[size_t((i * 3 + y) * 3 + xx)] == (raw - 1) / 2);  // ToTensor leaves floats as they are
            }
    }
    std::vector<double> d(2 * 4, 3.0);
    data::ArrayDataset doubles(array_of(d, {2, 4}), array_of(std::vector<uint8_t>{1, 0}, {2}));
    data::DataLoader dl(doubles, 2, false, cpu(0), 0, {tf::Normalize({1}, {4})});
    REQUIRE(dl.next(b));
    CHECK(b.data.dtype() == DType::float64);
    CHECK(b.data.to_vector<double>() == std::vector<double>(8, 0.5));
    CHECK(b.label.to_vector<uint8_t>() == std::vector<uint8_t>{1, 0});
}

TEST_CASE("bad datasets and transforms are refused with the reason", "[data][loader][errors]") {
    const std::vector<float> six(6, 1.0f);
    PX_REQUIRE_MENTIONS(message_of<ShapeError>([&] {
        data::ArrayDataset(array_of(six, {2, 3}), array_of(std::vector<int32_t>{1, 2, 3}, {3}));
    }), "ArrayDataset: 3 labels for 2 samples");
    PX_REQUIRE_MENTIONS(message_of<ShapeError>([&] {
        data::ArrayDataset(array_of(std::vector<float>{1}, {}), array_of(std::vector<int32_t>{1}, {1}));
    }), "need a first axis of samples");
    PX_REQUIRE_MENTIONS(message_of<DTypeError>([&] {
        data::ArrayDataset(array_of(std::vector<int32_t>{1, 2}, {2}), array_of(std::vector<int32_t>{1, 2}, {2}));
    }), "the data are int32");
    data::Array short_labels = array_of(std::vector<int32_t>{1, 2}, {2});
    short_labels.bytes.pop_back();
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { data::ArrayDataset(array_of(six, {2, 3}), short_labels); }),
                        "the labels holds 7 bytes, not the 8 of (2,) int32");

    const data::ArrayDataset ds = images(4, 2, 5, 6), flat(array_of(six, {2, 3}), array_of(std::vector<int32_t>{0, 1}, {2}));
    auto refused = [](const data::ArrayDataset& d, std::vector<data::Transform> t) {
        return message_of<InvalidArgumentError>([&] { data::DataLoader(d, 2, true, cpu(0), 0, t); });
    };
    PX_REQUIRE_MENTIONS(refused(ds, {tf::RandomCrop(7)}), "RandomCrop: a 7x7 crop does not fit in a 5x6 image padded by 0");
    PX_REQUIRE_MENTIONS(refused(ds, {tf::RandomCrop(10, 1)}), "a 10x10 crop does not fit in a 5x6 image padded by 1");
    CHECK_NOTHROW(data::DataLoader(ds, 2, true, cpu(0), 0, {tf::RandomCrop(9, 10, 2)}));  // the padded image itself
    PX_REQUIRE_MENTIONS(refused(ds, {tf::RandomCrop(0)}), "the size must be at least 1x1 and the padding >= 0");
    PX_REQUIRE_MENTIONS(refused(ds, {tf::RandomCrop(3, -1)}), "got 3x3 with padding -1");
    PX_REQUIRE_MENTIONS(refused(flat, {tf::RandomCrop(2)}), "RandomCrop needs images (C, H, W) or (H, W); the samples are (3,)");
    PX_REQUIRE_MENTIONS(refused(flat, {tf::RandomHorizontalFlip()}), "RandomHorizontalFlip needs images");
    PX_REQUIRE_MENTIONS(refused(ds, {tf::RandomHorizontalFlip(1.5)}), "RandomHorizontalFlip: p must be in [0, 1], got 1.5");
    PX_REQUIRE_MENTIONS(refused(ds, {tf::RandomHorizontalFlip(-0.1)}), "p must be in [0, 1]");
    PX_REQUIRE_MENTIONS(refused(ds, {tf::Normalize({0.5}, {0})}), "Normalize: std must be > 0 and finite, got 0 for channel 0");
    PX_REQUIRE_MENTIONS(refused(ds, {tf::Normalize({0.5, 0.5}, {1, -1})}), "got -1 for channel 1");
    PX_REQUIRE_MENTIONS(refused(ds, {tf::Normalize({0.5}, {INFINITY})}), "std must be > 0 and finite, got inf");
    PX_REQUIRE_MENTIONS(refused(ds, {tf::Normalize({NAN}, {1})}), "the mean of channel 0 is not finite");
    PX_REQUIRE_MENTIONS(refused(ds, {tf::Normalize({1, 2, 3}, {1, 1, 1})}),
                        "Normalize: 3 means and 3 stds for samples (2, 5, 6) of 2 channel(s)");
    PX_REQUIRE_MENTIONS(refused(ds, {tf::Normalize({1, 2}, {1})}), "2 means and 1 stds");
    PX_REQUIRE_MENTIONS(refused(ds, {tf::ToTensor(), tf::RandomCrop(3)}),
                        "RandomCrop after ToTensor: crops and flips act on the raw values, so they come first");
    PX_REQUIRE_MENTIONS(refused(ds, {tf::Normalize({0}, {1}), tf::RandomHorizontalFlip()}), "RandomHorizontalFlip after Normalize");
    PX_REQUIRE_MENTIONS(refused(ds, {tf::ToTensor(), tf::ToTensor()}), "ToTensor after ToTensor: ToTensor comes once, before Normalize");
    PX_REQUIRE_MENTIONS(refused(ds, {tf::Normalize({0}, {1}), tf::ToTensor()}), "ToTensor after Normalize");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { data::DataLoader(ds, 0, true, cpu(0)); }), "batch_size must be >= 1");
}

namespace {
// Each batch's rows, for epochs begun one after another from `first`.
std::vector<std::vector<int64_t>> batches_of(data::DataLoader& loader, uint64_t epoch) {
    loader.begin_epoch(epoch);
    std::vector<std::vector<int64_t>> out;
    data::Batch b;
    while (loader.next(b)) {
        REQUIRE(b.label.to_vector<int64_t>().size() == b.rows.size());
        out.push_back(b.rows);
    }
    return out;
}
using Rows = std::vector<std::vector<int64_t>>;
}  // namespace

TEST_CASE("last_batch keeps a smaller last batch or discards it or rolls its rows into the next epoch as Gluon's",
          "[data][loader]") {
    const data::ArrayDataset ds = images(10, 1, 2, 2);
    data::DataLoader loader(ds, 4, false, cpu());
    REQUIRE(loader.last_batch() == data::LastBatch::keep);
    REQUIRE(batches_of(loader, 0) == Rows{{0, 1, 2, 3}, {4, 5, 6, 7}, {8, 9}});
    loader.set_last_batch(data::LastBatch::discard);
    REQUIRE(loader.num_batches() == 2);
    REQUIRE(batches_of(loader, 0) == Rows{{0, 1, 2, 3}, {4, 5, 6, 7}});
    loader.set_last_batch(data::LastBatch::rollover);
    REQUIRE(batches_of(loader, 0) == Rows{{0, 1, 2, 3}, {4, 5, 6, 7}});
    // Epoch 1 starts with 8 and 9; 20 rows so far make 5 batches and leave none.
    REQUIRE(batches_of(loader, 1) == Rows{{8, 9, 0, 1}, {2, 3, 4, 5}, {6, 7, 8, 9}});
    REQUIRE(batches_of(loader, 2) == Rows{{0, 1, 2, 3}, {4, 5, 6, 7}});
    REQUIRE(batches_of(loader, 3) == Rows{{8, 9, 0, 1}, {2, 3, 4, 5}, {6, 7, 8, 9}});
    PX_REQUIRE_MENTIONS(
        message_of<InvalidArgumentError>([&] { loader.set_last_batch(static_cast<data::LastBatch>(5)); }),
        "unknown last_batch");
    REQUIRE(loader.last_batch() == data::LastBatch::rollover);
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([] {
                            const data::ArrayDataset three = images(3, 1, 2, 2);
                            data::DataLoader big(three, 4, false, cpu());
                            big.set_last_batch(data::LastBatch::rollover);
                        }),
                        "rollover needs batch_size (4) at most the dataset's size (3)");
}

TEST_CASE("rolled over rows are the shuffled order's last and every row is seen once per epoch's worth",
          "[data][loader]") {
    const data::ArrayDataset ds = images(10, 1, 2, 2);
    data::DataLoader loader(ds, 3, true, cpu(), 9);
    loader.set_last_batch(data::LastBatch::rollover);
    std::vector<int64_t> seen(10, 0);
    std::vector<int64_t> previous;
    for (uint64_t e = 0; e < 3; ++e) {
        const Rows got = batches_of(loader, e);
        for (const auto& b : got) {
            REQUIRE(b.size() == 3);
            for (int64_t r : b) ++seen[size_t(r)];
        }
        // Begun directly (a resumed run), an epoch has the same batches.
        data::DataLoader fresh(ds, 3, true, cpu(), 9);
        fresh.set_last_batch(data::LastBatch::rollover);
        REQUIRE(batches_of(fresh, e) == got);
    }
    // Epochs 0-2 hold 30 rows, all in whole batches (30 % 3 == 0): each row three times.
    REQUIRE(seen == std::vector<int64_t>(10, 3));
}

TEST_CASE("discard in shards leaves out every short last batch on every rank", "[data][loader]") {
    const data::ArrayDataset ds = images(10, 1, 2, 2);
    for (int rank = 0; rank < 2; ++rank) {
        data::DataLoader loader(ds, 4, false, cpu());
        loader.set_last_batch(data::LastBatch::discard);
        loader.shard(rank, 2);
        REQUIRE(loader.num_batches() == 2);
        REQUIRE(batches_of(loader, 0) == (rank == 0 ? Rows{{0, 1}, {4, 5}} : Rows{{2, 3}, {6, 7}}));
    }
}
