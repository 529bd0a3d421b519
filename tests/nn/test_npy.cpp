// read_npy and read_npz on files written here byte by byte (NumPy's own
// files are read in tests/python/test_data.py).
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <zip.h>

#include <algorithm>
#include <cstdint>

#include "data_files_support.hpp"
#include "plexus/data.hpp"

using namespace plexus;
using pxtest::Bytes;
using pxtest::bytes_of;
using pxtest::message_of;
using pxtest::npy;
using pxtest::npy_header;

namespace {

data::Array read(const Bytes& file, uint64_t max_bytes = uint64_t(1) << 30) {
    const std::string path = pxtest::temp_path("a.npy");
    pxtest::write_file(path, file);
    return data::read_npy(path, max_bytes);
}

std::string refusal(const Bytes& file, uint64_t max_bytes = uint64_t(1) << 30) {
    return message_of<InvalidArgumentError>([&] { read(file, max_bytes); });
}

template <class T>
std::vector<T> values(const data::Array& a) {
    REQUIRE(a.bytes.size() % sizeof(T) == 0);
    std::vector<T> v(a.bytes.size() / sizeof(T));
    std::memcpy(v.data(), a.bytes.data(), a.bytes.size());
    return v;
}

// Big-endian bytes of each value.
template <class T>
Bytes big_endian(const std::vector<T>& v) {
    Bytes b = bytes_of(v);
    for (size_t i = 0; i < b.size(); i += sizeof(T)) std::reverse(b.begin() + long(i), b.begin() + long(i + sizeof(T)));
    return b;
}

}  // namespace

TEST_CASE("read_npy reads every dtype Plexus has, in either byte order", "[data][npy]") {
    const std::vector<float> f32{0.5f, -1.25f, 3e38f, 1e-45f, 0.0f, -0.0f};
    auto a = read(npy(npy_header("<f4", "(2, 3)"), bytes_of(f32)));
    CHECK(a.dtype == DType::float32);
    CHECK(a.shape == Shape{2, 3});
    CHECK(a.bytes == bytes_of(f32));
    CHECK(a.size() == 6);
    a = read(npy(npy_header(">f4", "(2, 3)"), big_endian(f32)));
    CHECK(a.bytes == bytes_of(f32));

    const std::vector<double> f64{1.0 / 3, -2.5e300, 4.9e-324};
    CHECK(read(npy(npy_header("<f8", "(3,)"), bytes_of(f64))).bytes == bytes_of(f64));
    a = read(npy(npy_header(">f8", "(3,)"), big_endian(f64)));
    CHECK(a.dtype == DType::float64);
    CHECK(values<double>(a) == f64);

    const std::vector<int32_t> i32{-2147483647 - 1, -1, 0, 7, 2147483647};
    a = read(npy(npy_header(">i4", "(5,)"), big_endian(i32)));
    CHECK(a.dtype == DType::int32);
    CHECK(values<int32_t>(a) == i32);
    const std::vector<int64_t> i64{INT64_MIN, -3, 0, INT64_MAX};
    a = read(npy(npy_header(">i8", "(2, 2)"), big_endian(i64)));
    CHECK(a.dtype == DType::int64);
    CHECK(values<int64_t>(a) == i64);
    CHECK(read(npy(npy_header("<i8", "(4,)"), bytes_of(i64))).bytes == bytes_of(i64));

    const std::vector<uint16_t> halves{0x3C00, 0xC000, 0x7C00, 0x0001};  // 1, -2, inf, the least subnormal
    a = read(npy(npy_header(">f2", "(4,)"), big_endian(halves)));
    CHECK(a.dtype == DType::float16);
    CHECK(values<uint16_t>(a) == halves);

    a = read(npy(npy_header("|u1", "(3,)"), {0, 128, 255}));
    CHECK(a.dtype == DType::uint8);
    CHECK(a.bytes == Bytes{0, 128, 255});
    // bool is read as uint8 0/1 (a byte other than 0 is true, as NumPy reads it).
    a = read(npy(npy_header("|b1", "(4,)"), {0, 1, 2, 0}));
    CHECK(a.dtype == DType::uint8);
    CHECK(a.bytes == Bytes{0, 1, 1, 0});
    // '=' is this machine's order; a double-quoted header and Python 2's 3L parse too.
    CHECK(read(npy("{\"descr\": \"=i4\", \"fortran_order\": False, \"shape\": (1L,)}", bytes_of(std::vector<int32_t>{9})))
              .bytes == bytes_of(std::vector<int32_t>{9}));
}

TEST_CASE("read_npy reads versions 1.0 to 3.0, scalars, empty arrays and Fortran order", "[data][npy]") {
    const std::vector<int32_t> v{1, 2, 3, 4, 5, 6};
    for (int major : {1, 2, 3}) {
        INFO("version " << major << ".0");
        auto a = read(npy(npy_header("<i4", "(3, 2)"), bytes_of(v), major));
        CHECK(a.shape == Shape{3, 2});
        CHECK(values<int32_t>(a) == v);
    }
    auto scalar = read(npy(npy_header("<f8", "()"), bytes_of(std::vector<double>{2.5})));
    CHECK(scalar.shape.empty());
    CHECK(values<double>(scalar) == std::vector<double>{2.5});
    auto empty = read(npy(npy_header("<f4", "(0, 3)"), {}));
    CHECK(empty.shape == Shape{0, 3});
    CHECK(empty.bytes.empty());
    // np.load reads an empty array whose other dimensions are huge, while their bytes fit in 2^63 - 1.
    CHECK(read(npy(npy_header("|u1", "(0, 9223372036854775807)"), {})).shape == Shape{0, INT64_MAX});
    // (2, 3) in Fortran order: the first axis runs fastest.
    auto f = read(npy(npy_header("<i4", "(2, 3)", true), bytes_of(std::vector<int32_t>{0, 3, 1, 4, 2, 5})));
    CHECK(values<int32_t>(f) == std::vector<int32_t>{0, 1, 2, 3, 4, 5});
    // (2, 3, 2), value = 100 i + 10 j + k, laid out with i fastest, then j, then k.
    std::vector<int64_t> fortran;
    for (int k = 0; k < 2; ++k)
        for (int j = 0; j < 3; ++j)
            for (int i = 0; i < 2; ++i) fortran.push_back(100 * i + 10 * j + k);
    auto g = read(npy(npy_header(">i8", "(2, 3, 2)", true), big_endian(fortran)));
    CHECK(values<int64_t>(g) == std::vector<int64_t>{0, 1, 10, 11, 20, 21, 100, 101, 110, 111, 120, 121});
    // A Fortran-order vector is the same as a C-order one.
    CHECK(values<int32_t>(read(npy(npy_header("<i4", "(3,)", true), bytes_of(std::vector<int32_t>{7, 8, 9})))) ==
          std::vector<int32_t>{7, 8, 9});
}

TEST_CASE("to_tensor and to_array carry an array to a device and back", "[data][npy]") {
    const std::vector<float> v{1, 2, 3, 4, 5, 6};
    const auto a = read(npy(npy_header(">f4", "(3, 2)"), big_endian(v)));
    const Tensor t = data::to_tensor(a, cpu(1));
    CHECK(t.device() == cpu(1));
    CHECK(t.shape() == Shape{3, 2});
    CHECK(t.to_vector<float>() == v);
    const data::Array back = data::to_array(t);
    CHECK(back.dtype == DType::float32);
    CHECK(back.shape == Shape{3, 2});
    CHECK(back.bytes == a.bytes);
    data::Array wrong = a;
    wrong.bytes.pop_back();
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { data::to_tensor(wrong); }), "holds 23 bytes, not the 24");
}

TEST_CASE("read_npy refuses an empty array of a shape np.load calls too big", "[data][npy][errors]") {
    // NumPy multiplies the nonzero dimensions and the value's size: past 2^63 - 1 is "array is too big".
    PX_REQUIRE_MENTIONS(refusal(npy(npy_header("<f4", "(0, 4611686018427387904)"), {})),
                        "the shape (0, 4611686018427387904) is too big: its nonzero dimensions times 4 bytes a value "
                        "are more than 2^63 - 1 bytes");
    PX_REQUIRE_MENTIONS(refusal(npy(npy_header("|u1", "(0, 9223372036854775807, 9223372036854775807)"), {})),
                        "its nonzero dimensions multiply to more than 2^63 - 1 values");
    PX_REQUIRE_MENTIONS(refusal(npy(npy_header("<f8", "(4611686018427387904, 0, 2)"), {})), "is too big");
}

TEST_CASE("read_npy refuses what is not an array it can read, saying what is wrong", "[data][npy][errors]") {
    const Bytes six = bytes_of(std::vector<float>(6, 1.0f));
    PX_REQUIRE_MENTIONS(refusal({}), "truncated: the magic and version needs 8 bytes, the file ends after 0");
    PX_REQUIRE_MENTIONS(refusal({'P', 'K', 3, 4, 0, 0, 0, 0, 0, 0}), "not an .npy file (bad magic)");
    PX_REQUIRE_MENTIONS(refusal(npy(npy_header("<f4", "(6,)"), six, 4)), "unsupported .npy version 4.0");
    PX_REQUIRE_MENTIONS(refusal(npy(npy_header("<f4", "(6,)"), six, 1, 1)), "unsupported .npy version 1.1");
    PX_REQUIRE_MENTIONS(refusal({0x93, 'N', 'U', 'M', 'P', 'Y', 2, 0, 1}), "truncated: the header's length");
    {
        Bytes huge{0x93, 'N', 'U', 'M', 'P', 'Y', 2, 0, 0, 0, 0, 0x10};  // a header of 256 MiB
        PX_REQUIRE_MENTIONS(refusal(huge), "a header of 268435456 bytes is more than an .npy header needs");
        Bytes cut = npy(npy_header("<f4", "(6,)"), {});
        cut.resize(40);
        PX_REQUIRE_MENTIONS(refusal(cut), "truncated: the header needs 118 bytes, the file ends after 40");
    }
    PX_REQUIRE_MENTIONS(refusal(npy("hello", six)), "the header is not the dict NumPy writes");
    PX_REQUIRE_MENTIONS(refusal(npy("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (6,), }", six)),
                        "not the dict NumPy writes");
    PX_REQUIRE_MENTIONS(refusal(npy("{'descr': '<f4', 'shape': (6,), }", six)), "the header lacks 'fortran_order'");
    PX_REQUIRE_MENTIONS(refusal(npy("{'descr': '<f4', 'fortran_order': False}", six)), "the header lacks 'shape'");
    PX_REQUIRE_MENTIONS(refusal(npy("{'fortran_order': False, 'shape': (6,)}", six)), "the header lacks 'descr'");
    PX_REQUIRE_MENTIONS(refusal(npy("{'descr': '<f4', 'fortran_order': False, 'shape': (6,), 'x': 1}", six)),
                        "a key 'x' besides descr, fortran_order and shape");
    PX_REQUIRE_MENTIONS(refusal(npy("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (6,)}", six)),
                        "names 'descr' twice");
    PX_REQUIRE_MENTIONS(refusal(npy("{'descr': '<f4' 'fortran_order': False, 'shape': (6,)}", six)),
                        "expected ',' or '}'");
    PX_REQUIRE_MENTIONS(refusal(npy(npy_header("<f4", "(6,)") + " x", six)), "text after its dict");
    PX_REQUIRE_MENTIONS(refusal(npy(npy_header("<f4", "(6, -1)"), six)), "not the dict NumPy writes");
    PX_REQUIRE_MENTIONS(refusal(npy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (6,)}", six)),
                        "a structured dtype (a list of fields) is not supported");
    for (auto [code, name] : {std::pair<const char*, const char*>{"<i2", "int16"}, {"|i1", "int8"}, {"<u2", "uint16"},
                              {"<u8", "uint64"}, {"<c8", "complex64"}, {"<c16", "complex128"}, {"|O", "object"},
                              {"<U3", "str"}, {"|S5", "bytes"}, {"|V8", "void"}, {"<M8[ns]", "datetime64"},
                              {"<f16", "longdouble"}}) {
        const std::string msg = refusal(npy(npy_header(code, "(6,)"), six));
        PX_REQUIRE_MENTIONS(msg, std::string("dtype '") + code + "' (" + name + ") is not one Plexus reads");
        PX_REQUIRE_MENTIONS(msg, "bfloat16 has no .npy code");
    }
    PX_REQUIRE_MENTIONS(refusal(npy(npy_header("f4", "(6,)"), six)), "the descr 'f4' is not a dtype code");
    for (const char* junk : {"<f4junk", "<f4 ", "<f", "<x4", "<i4[ns]", "<M8[ns", "<M8[]", "<M8[n1]", "|Ox"})
        PX_REQUIRE_MENTIONS(refusal(npy(npy_header(junk, "(6,)"), six)),
                            std::string("the descr '") + junk + "' is not a dtype code NumPy writes (such as '<f4')");
    PX_REQUIRE_MENTIONS(refusal(npy(npy_header("<f4", "(1, 1, 1, 1, 1, 1, 1, 1, 6)"), six)), "more than 8 dimensions");
    PX_REQUIRE_MENTIONS(refusal(npy(npy_header("<f4", "(99999999999999999999,)"), six)), "overflows 64 bits");
    PX_REQUIRE_MENTIONS(refusal(npy(npy_header("<f4", "(4611686018427387904, 4)"), six)),
                        "the shape (4611686018427387904, 4) is too big: its nonzero dimensions multiply to more than "
                        "2^63 - 1 values (np.load refuses it too: array is too big)");
    PX_REQUIRE_MENTIONS(refusal(npy(npy_header("<f4", "(2305843009213693951, 4)"), six)),
                        "its nonzero dimensions times 4 bytes a value are more than 2^63 - 1 bytes");
    PX_REQUIRE_MENTIONS(refusal(npy(npy_header("<f4", "(576460752303423487, 4)"), six)), "refusing to read it");
    PX_REQUIRE_MENTIONS(refusal(npy(npy_header("<f4", "(1024, 1024, 1024)"), six)),
                        "declares more than 1073741824 bytes of values; refusing to read it (raise the limit with "
                        "PLEXUS_MAX_DATA_BYTES)");
    PX_REQUIRE_MENTIONS(refusal(npy(npy_header("<f4", "(6,)"), six), 20), "declares more than 20 bytes");
    CHECK(read(npy(npy_header("<f4", "(6,)"), six), 24).size() == 6);  // the limit itself is allowed
    PX_REQUIRE_MENTIONS(refusal(npy(npy_header("<f4", "(7,)"), six)), "truncated: the values need 28 bytes, the file holds 24");
    PX_REQUIRE_MENTIONS(refusal(npy(npy_header("<f4", "(5,)"), six)), "has 4 bytes after the values its header declares");
    const std::string missing = pxtest::temp_path("none.npy");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { data::read_npy(missing); }),
                        missing + ": cannot open: No such file or directory");
    const std::string folder = pxtest::temp_path("folder.npy");
    ::mkdir(folder.c_str(), 0755);
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { data::read_npy(folder); }), "not a regular file (a folder)");
    ::rmdir(folder.c_str());
}

namespace {

// A zip of members (name, bytes), each stored or deflated, written by libzip.
void write_zip(const std::string& path, const std::vector<std::pair<std::string, Bytes>>& members, bool deflate) {
    std::remove(path.c_str());
    int err = 0;
    zip_t* z = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
    REQUIRE(z);
    for (const auto& [name, bytes] : members) {
        zip_source_t* s = zip_source_buffer(z, bytes.data(), bytes.size(), 0);
        REQUIRE(s);
        const zip_int64_t i = zip_file_add(z, name.c_str(), s, ZIP_FL_OVERWRITE);
        REQUIRE(i >= 0);
        REQUIRE(zip_set_file_compression(z, zip_uint64_t(i), deflate ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0) == 0);
    }
    REQUIRE(zip_close(z) == 0);
}

// A member of `header` then `zeros` zero bytes, made as libzip asks for it
// (so a large one never lies in memory whole).
struct Zeros {
    Bytes header;
    uint64_t zeros, at = 0;
};
zip_int64_t zeros_source(void* user, void* data, zip_uint64_t len, zip_source_cmd_t cmd) {
    auto* z = static_cast<Zeros*>(user);
    const uint64_t total = z->header.size() + z->zeros;
    switch (cmd) {
    case ZIP_SOURCE_OPEN: z->at = 0; return 0;
    case ZIP_SOURCE_READ: {
        const uint64_t n = std::min<uint64_t>(len, total - z->at);
        auto* out = static_cast<unsigned char*>(data);
        std::memset(out, 0, size_t(n));
        for (uint64_t i = 0; i < n && z->at + i < z->header.size(); ++i) out[i] = z->header[size_t(z->at + i)];
        z->at += n;
        return zip_int64_t(n);
    }
    case ZIP_SOURCE_CLOSE: return 0;
    case ZIP_SOURCE_STAT: {
        auto* st = static_cast<zip_stat_t*>(data);
        zip_stat_init(st);
        st->size = total;
        st->valid |= ZIP_STAT_SIZE;
        return sizeof(*st);
    }
    case ZIP_SOURCE_ERROR: return 2 * sizeof(int);
    case ZIP_SOURCE_FREE: return 0;
    case ZIP_SOURCE_SUPPORTS:
        return zip_source_make_command_bitmap(ZIP_SOURCE_OPEN, ZIP_SOURCE_READ, ZIP_SOURCE_CLOSE, ZIP_SOURCE_STAT,
                                              ZIP_SOURCE_ERROR, ZIP_SOURCE_FREE, -1);
    default: return -1;
    }
}

}  // namespace

TEST_CASE("read_npz reads the arrays of stored and deflated archives", "[data][npz]") {
    const std::string path = pxtest::temp_path("a.npz");
    const std::vector<float> x{1, 2, 3, 4, 5, 6};
    const std::vector<int64_t> y{3, 1};
    for (bool deflate : {false, true}) {
        INFO("deflated: " << deflate);
        write_zip(path, {{"x.npy", npy(npy_header("<f4", "(2, 3)"), bytes_of(x))},
                         {"y.npy", npy(npy_header(">i8", "(2,)"), big_endian(y))}}, deflate);
        const auto all = data::read_npz(path);
        REQUIRE(all.size() == 2);
        CHECK(all.at("x").shape == Shape{2, 3});
        CHECK(values<float>(all.at("x")) == x);
        CHECK(all.at("y").dtype == DType::int64);
        CHECK(values<int64_t>(all.at("y")) == y);
        CHECK(values<int64_t>(data::read_npz(path, "y")) == y);
        const std::string msg = message_of<InvalidArgumentError>([&] { data::read_npz(path, "z"); });
        PX_REQUIRE_MENTIONS(msg, path + ": has no array 'z' (its arrays: x, y)");
        // The limit holds for the arrays together: 24 + 16 bytes.
        CHECK(data::read_npz(path, 40).size() == 2);
        PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { data::read_npz(path, 39); }),
                            path + ": member 'y.npy': declares 16 bytes of values, which with the 24 bytes of the "
                                   "arrays before it are more than the limit of 39; refusing to read it");
        // The first member alone over the limit: the limit, nothing before it.
        PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { data::read_npz(path, 23); }),
                            path + ": member 'x.npy': declares more than 23 bytes of values; refusing");
    }
    // Members that are not arrays are listed apart: they cannot be asked for.
    write_zip(path, {{"x.npy", npy(npy_header("<f4", "(2, 3)"), bytes_of(x))}, {"notes.txt", {'h', 'i'}}}, false);
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { data::read_npz(path, "q"); }),
                        path + ": has no array 'q' (its arrays: x; other members: notes.txt)");
    CHECK(values<float>(data::read_npz(path, "x")) == x);
    // An empty archive (libzip writes none): the end-of-directory record alone.
    pxtest::Bytes empty{'P', 'K', 5, 6};
    empty.resize(22, 0);
    pxtest::write_file(path, empty);
    CHECK(data::read_npz(path).empty());
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { data::read_npz(path, "x"); }), "(its arrays: none)");
}

TEST_CASE("read_npz refuses archives that are not NumPy's, naming the member", "[data][npz][errors]") {
    const std::string path = pxtest::temp_path("bad.npz");
    const Bytes good = npy(npy_header("<f4", "(2,)"), bytes_of(std::vector<float>{1, 2}));
    write_zip(path, {{"x.npy", good}, {"notes.txt", {'h', 'i'}}}, true);
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { data::read_npz(path); }),
                        path + ": member 'notes.txt' is not an .npy array");
    write_zip(path, {{"x.npy", npy(npy_header("<i2", "(2,)"), {1, 0, 2, 0})}}, true);
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { data::read_npz(path, "x"); }),
                        path + ": member 'x.npy': dtype '<i2' (int16) is not one Plexus reads");
    write_zip(path, {{"x.npy", npy(npy_header("<f4", "(3,)"), bytes_of(std::vector<float>{1, 2}))}}, false);
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { data::read_npz(path); }),
                        "member 'x.npy': truncated: the values need 12 bytes, the file holds 8");
    pxtest::write_file(path, good);
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { data::read_npz(path); }),
                        path + ": not an .npz file (not a zip archive)");
    const std::string missing = pxtest::temp_path("none.npz");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { data::read_npz(missing); }), "cannot open");
    // A stored member whose values no longer match the archive's CRC-32.
    write_zip(path, {{"x.npy", good}}, false);
    {
        std::FILE* f = std::fopen(path.c_str(), "rb");
        Bytes zip(1 << 12);
        zip.resize(std::fread(zip.data(), 1, zip.size(), f));
        std::fclose(f);
        const auto at = std::search(zip.begin(), zip.end(), good.begin(), good.end());
        REQUIRE(at != zip.end());
        at[long(good.size()) - 1] ^= 0x55;  // the last value byte
        pxtest::write_file(path, zip);
    }
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { data::read_npz(path); }), "member 'x.npy': corrupt member: CRC error");
}

TEST_CASE("an .npz member that would inflate past the limit is refused from its header, not inflated", "[data][npz][errors]") {
    // 64 MiB of zeros declared and really there, deflated to about 64 kB;
    // then a byte in the middle of the deflated stream is damaged, so that a
    // reader that inflated past the header would fail there instead.
    const std::string path = pxtest::temp_path("bomb.npz");
    Zeros zeros{npy(npy_header("|u1", "(67108864,)"), {}), uint64_t(64) << 20};
    {
        std::remove(path.c_str());
        int err = 0;
        zip_t* z = zip_open(path.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
        REQUIRE(z);
        zip_source_t* s = zip_source_function(z, zeros_source, &zeros);
        REQUIRE(s);
        REQUIRE(zip_file_add(z, "x.npy", s, 0) == 0);
        REQUIRE(zip_set_file_compression(z, 0, ZIP_CM_DEFLATE, 1) == 0);
        REQUIRE(zip_close(z) == 0);
    }
    struct stat st {};
    REQUIRE(::stat(path.c_str(), &st) == 0);
    REQUIRE(st.st_size < (1 << 20));
    {
        std::FILE* f = std::fopen(path.c_str(), "r+b");
        std::fseek(f, long(st.st_size / 2), SEEK_SET);
        const int b = std::fgetc(f);
        std::fseek(f, long(st.st_size / 2), SEEK_SET);
        std::fputc(b ^ 0xFF, f);
        std::fclose(f);
    }
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { data::read_npz(path, uint64_t(1) << 20); }),
                        "member 'x.npy': declares more than 1048576 bytes of values; refusing to read it");
    // Under a limit that allows it, the member is inflated, and the damage found.
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { data::read_npz(path, "x", uint64_t(64) << 20); }),
                        "member 'x.npy': corrupt member");
    std::remove(path.c_str());
}
