// NumPy's .npy format (numpy/lib/format.py): the magic "\x93NUMPY", a major
// and minor version (1.0, 2.0, 3.0), the header's length (2 bytes little-
// endian in 1.0, 4 bytes after), a Python dict literal
// {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), } padded with
// spaces and a newline, then the values.
#include "npy.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>

#include "file_errors.hpp"

namespace plexus::data::detail {
namespace {

// The dtypes Plexus reads, by their NumPy kind and size.
struct Code {
    char kind;
    int bytes;
    DType dtype;
};
constexpr Code codes[] = {{'f', 2, DType::float16}, {'f', 4, DType::float32}, {'f', 8, DType::float64},
                          {'i', 4, DType::int32},   {'i', 8, DType::int64},   {'u', 1, DType::uint8},
                          {'b', 1, DType::uint8}};

// NumPy's name of a kind and size Plexus does not read, for the message.
std::string numpy_name(char kind, const std::string& bytes) {
    const long size = std::strtol(bytes.c_str(), nullptr, 10);
    const bool numeric = std::string("iufcb").find(kind) != std::string::npos;
    if (numeric && (size < 1 || size > 64)) return std::string(1, kind) + " of " + bytes + " bytes";  // no NumPy dtype
    const long bits = numeric ? 8 * size : 0;
    switch (kind) {
    case 'i': return "int" + std::to_string(bits);
    case 'u': return "uint" + std::to_string(bits);
    case 'f': return bits > 64 ? "longdouble" : "float" + std::to_string(bits);
    case 'c': return "complex" + std::to_string(bits);
    case 'b': return "bool of " + bytes + " bytes";
    case 'O': return "object";
    case 'U': return "str";
    case 'S': case 'a': return "bytes";
    case 'V': return "void";
    case 'M': return "datetime64";
    case 'm': return "timedelta64";
    default: return "unknown";
    }
}

// Whether `d` has the form of a dtype string NumPy writes: a byte order, a
// kind, its size in digits (none for object), and a unit in brackets after a
// datetime64's or timedelta64's ('<M8[ns]'). Anything else ('<f4junk') is
// no dtype at all, whatever its first characters name.
bool is_dtype_string(const std::string& d) {
    if (d.size() < 2 || std::string("<>|=").find(d[0]) == std::string::npos ||
        std::string("biufcOUSaVMm").find(d[1]) == std::string::npos)
        return false;
    const bool dated = d[1] == 'M' || d[1] == 'm';
    size_t i = 2;
    while (i < d.size() && std::isdigit(static_cast<unsigned char>(d[i]))) ++i;
    if (i == 2 && d[1] != 'O') return false;
    if (i == d.size()) return true;
    if (!dated || d[i] != '[' || d.back() != ']' || d.size() - i < 3) return false;
    return std::all_of(d.begin() + long(i) + 1, d.end() - 1, [](char c) { return std::isalpha(static_cast<unsigned char>(c)); });
}

struct Header {
    DType dtype = DType::float32;
    int bytes = 1;  // per value
    bool big_endian = false, boolean = false, fortran = false;
    Shape shape;
};

// A parser of the dict literal NumPy writes (and only of that).
class HeaderParser {
public:
    HeaderParser(const std::string& text, const std::string& where) : s_(text), where_(where) {}

    Header parse() {
        std::optional<std::string> descr;
        std::optional<bool> fortran;
        std::optional<Shape> shape;
        expect('{');
        while (true) {
            skip_space();
            if (peek() == '}') break;
            const std::string key = string();
            expect(':');
            skip_space();
            if (key == "descr") {
                once(descr.has_value(), key);
                if (peek() == '[') fail("a structured dtype (a list of fields) is not supported");
                descr = string();
            } else if (key == "fortran_order") {
                once(fortran.has_value(), key);
                fortran = boolean();
            } else if (key == "shape") {
                once(shape.has_value(), key);
                shape = tuple();
            } else {
                fail("the header has a key '" + key + "' besides descr, fortran_order and shape");
            }
            skip_space();
            if (peek() == ',') ++i_;
            else if (peek() != '}') fail("expected ',' or '}' at byte " + std::to_string(i_) + " of the header");
        }
        ++i_;
        skip_space();
        if (i_ != s_.size()) fail("the header has text after its dict");
        if (!descr || !fortran || !shape) fail(std::string("the header lacks '") + (!descr ? "descr" : !fortran ? "fortran_order" : "shape") + "'");
        Header h = dtype_of(*descr);
        h.fortran = *fortran;
        h.shape = *shape;
        return h;
    }

private:
    [[noreturn]] void fail(const std::string& why) const { bad(where_, why); }
    [[noreturn]] void not_dict() const {
        fail("the header is not the dict NumPy writes (at byte " + std::to_string(i_) + " of '" + s_ + "')");
    }
    char peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
    void skip_space() {
        while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t' || s_[i_] == '\r')) ++i_;
    }
    void expect(char c) {
        skip_space();
        if (peek() != c) not_dict();
        ++i_;
    }
    void once(bool seen, const std::string& key) const {
        if (seen) fail("the header names '" + key + "' twice");
    }
    std::string string() {
        skip_space();
        const char quote = peek();
        if (quote != '\'' && quote != '"') not_dict();
        const size_t end = s_.find(quote, i_ + 1);
        if (end == std::string::npos) not_dict();
        std::string out = s_.substr(i_ + 1, end - i_ - 1);
        i_ = end + 1;
        return out;
    }
    bool boolean() {
        for (const char* word : {"True", "False"})
            if (s_.compare(i_, std::strlen(word), word) == 0) {
                i_ += std::strlen(word);
                return word[0] == 'T';
            }
        not_dict();
    }
    Shape tuple() {
        expect('(');
        Shape out;
        while (true) {
            skip_space();
            if (peek() == ')') break;
            if (peek() < '0' || peek() > '9') not_dict();
            int64_t d = 0;
            while (peek() >= '0' && peek() <= '9') {
                if (__builtin_mul_overflow(d, int64_t(10), &d) || __builtin_add_overflow(d, int64_t(peek() - '0'), &d))
                    fail("a dimension of the shape overflows 64 bits");
                ++i_;
            }
            if (peek() == 'L') ++i_;  // Python 2's long literals
            out.push_back(d);
            skip_space();
            if (peek() == ',') ++i_;
            else if (peek() != ')') not_dict();
        }
        ++i_;
        if (out.size() > PX_MAX_DIMS)
            fail("the shape " + str(out) + " has more than " + std::to_string(PX_MAX_DIMS) + " dimensions");
        return out;
    }
    Header dtype_of(const std::string& d) const {
        if (!is_dtype_string(d)) fail("the descr '" + d + "' is not a dtype code NumPy writes (such as '<f4')");
        const std::string size = d.substr(2, d.find('[') - 2);
        Header h;
        h.big_endian = d[0] == '>';
        for (const Code& c : codes)
            if (d[1] == c.kind && size == std::to_string(c.bytes)) {
                h.dtype = c.dtype;
                h.bytes = c.bytes;
                h.boolean = c.kind == 'b';
                return h;
            }
        fail("dtype '" + d + "' (" + numpy_name(d[1], size) +
             ") is not one Plexus reads: float16, float32, float64, int32, int64, uint8, and bool as uint8 "
             "(bfloat16 has no .npy code)");
    }

    const std::string& s_;
    const std::string& where_;
    size_t i_ = 0;
};

void read_exactly(ByteSource& in, uint8_t* dst, size_t n, const std::string& where, const char* what, uint64_t have) {
    const size_t got = in.read(dst, n);
    if (got < n)
        bad(where, std::string("truncated: ") + what + " needs " + std::to_string(n) + " bytes, the file ends after " +
                       std::to_string(have + got));
}

[[noreturn]] void too_big(const Shape& shape, const std::string& where, const std::string& why) {
    bad(where, "the shape " + str(shape) + " is too big: its nonzero dimensions " + why +
                   " (np.load refuses it too: array is too big)");
}

uint32_t little_endian(const uint8_t* b, int n) {
    uint32_t v = 0;
    for (int i = n - 1; i >= 0; --i) v = (v << 8) | b[i];
    return v;
}

// Fortran order (first axis fastest) to C order, `es` bytes a value.
std::vector<uint8_t> to_c_order(const std::vector<uint8_t>& f, const Shape& shape, size_t es) {
    std::vector<uint8_t> c(f.size());
    const size_t rank = shape.size();
    std::vector<int64_t> stride(rank, 1), index(rank, 0);
    for (size_t i = rank; i-- > 1;) stride[i - 1] = stride[i] * shape[i];
    const size_t n = f.size() / es;
    int64_t offset = 0;  // of `index` in C order
    for (size_t k = 0; k < n; ++k) {
        std::memcpy(c.data() + size_t(offset) * es, f.data() + k * es, es);
        for (size_t a = 0; a < rank; ++a) {  // the next index, first axis fastest
            if (++index[a] < shape[a]) {
                offset += stride[a];
                break;
            }
            offset -= stride[a] * (shape[a] - 1);
            index[a] = 0;
        }
    }
    return c;
}

// The byte count of `shape`'s values, `bytes` each; a shape NumPy refuses
// ("array is too big": its nonzero dimensions times the value's size past
// 2^63 - 1, an empty array's too) is an error.
uint64_t values_bytes(const Shape& shape, int bytes, const std::string& where) {
    int64_t count = 1, total = 0;
    for (int64_t d : shape)
        if (d != 0 && __builtin_mul_overflow(count, d, &count))
            too_big(shape, where, "multiply to more than 2^63 - 1 values");
    if (__builtin_mul_overflow(count, int64_t(bytes), &total))
        too_big(shape, where, "times " + std::to_string(bytes) + " bytes a value are more than 2^63 - 1 bytes");
    return std::find(shape.begin(), shape.end(), 0) != shape.end() ? 0 : uint64_t(total);
}

}  // namespace

Array parse_npy(ByteSource& in, const std::string& where, uint64_t max_bytes, uint64_t earlier) {
    uint8_t prefix[12];
    read_exactly(in, prefix, 8, where, "the magic and version", 0);
    if (std::memcmp(prefix, "\x93NUMPY", 6) != 0) bad(where, "not an .npy file (bad magic)");
    const int major = prefix[6], minor = prefix[7];
    if (major < 1 || major > 3 || minor != 0)
        bad(where, "unsupported .npy version " + std::to_string(major) + "." + std::to_string(minor) +
                       " (1.0, 2.0 and 3.0 are read)");
    const int len_bytes = major == 1 ? 2 : 4;
    read_exactly(in, prefix + 8, size_t(len_bytes), where, "the header's length", 8);
    const uint64_t header_len = little_endian(prefix + 8, len_bytes), start = 8 + uint64_t(len_bytes);
    const uint64_t most = uint64_t(1) << 16;
    if (header_len > most)
        bad(where, "a header of " + std::to_string(header_len) + " bytes is more than an .npy header needs (" +
                       std::to_string(most) + " at most)");
    std::string text(size_t(header_len), '\0');
    read_exactly(in, reinterpret_cast<uint8_t*>(text.data()), text.size(), where, "the header", start);
    const Header h = HeaderParser(text, where).parse();

    const uint64_t need = values_bytes(h.shape, h.bytes, where);
    if (need > max_bytes - earlier) bad(where, earlier ? over_limit(max_bytes, need, earlier) : over_limit(max_bytes));
    const uint64_t have = in.size() - std::min(in.size(), start + header_len);
    if (have < need)
        bad(where, "truncated: the values need " + std::to_string(need) + " bytes, the file holds " + std::to_string(have));
    if (have > need) bad(where, "has " + std::to_string(have - need) + " bytes after the values its header declares");

    Array a;
    a.dtype = h.dtype;
    a.shape = h.shape;
    // In slices, as the values arrive: a stream shorter than it claims costs
    // what it holds.
    const size_t slice = size_t(1) << 24;
    while (a.bytes.size() < need) {
        const size_t done = a.bytes.size(), n = std::min<size_t>(slice, size_t(need) - done);
        a.bytes.resize(done + n);
        read_exactly(in, a.bytes.data() + done, n, where, "the values", start + header_len + done);
    }
    uint8_t extra = 0;
    if (in.read(&extra, 1) != 0) bad(where, "holds more bytes than it declares");
    if (h.big_endian && h.bytes > 1)
        for (size_t i = 0; i < a.bytes.size(); i += size_t(h.bytes)) std::reverse(&a.bytes[i], &a.bytes[i] + h.bytes);
    if (h.boolean)
        for (uint8_t& b : a.bytes) b = b != 0;
    if (h.fortran && h.shape.size() > 1) a.bytes = to_c_order(a.bytes, h.shape, size_t(h.bytes));
    return a;
}

namespace {

// A regular file, read with read(2).
class FileSource : public ByteSource {
public:
    FileSource(const std::string& path) : path_(path) { fd_ = open_data_file(path, st_); }
    ~FileSource() override { ::close(fd_); }
    FileSource(const FileSource&) = delete;
    FileSource& operator=(const FileSource&) = delete;
    size_t read(uint8_t* dst, size_t n) override {
        size_t done = 0;
        while (done < n) {
            const ssize_t got = ::read(fd_, dst + done, std::min<size_t>(n - done, size_t(1) << 30));
            if (got < 0 && errno == EINTR) continue;
            if (got < 0) bad(path_, std::string("cannot read: ") + std::strerror(errno));
            if (got == 0) break;
            done += size_t(got);
        }
        return done;
    }
    uint64_t size() const override { return uint64_t(st_.st_size); }

private:
    const std::string& path_;
    struct stat st_ {};
    int fd_ = -1;
};

}  // namespace
}  // namespace plexus::data::detail

namespace plexus::data {

Array read_npy(const std::string& path, uint64_t max_bytes) {
    detail::FileSource f(path);
    return detail::parse_npy(f, path, max_bytes);
}

}  // namespace plexus::data
