// CSV files of numbers into a 2-D array, parsed with std::from_chars: the
// same in every locale, floats correctly rounded (those beyond the dtype's
// normal range too: 0, subnormal or infinite, as np.loadtxt reads them).
#include <locale.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <new>
#include <type_traits>

#include "../param_file.hpp"
#include "file_errors.hpp"
#include "plexus/data.hpp"

namespace plexus::data {
namespace {

std::string read_all(const std::string& path, uint64_t max_bytes) {
    struct stat st {};
    const int fd = detail::open_data_file(path, st);
    if (uint64_t(st.st_size) > max_bytes) {
        ::close(fd);
        detail::bad(path, "is " + std::to_string(st.st_size) + " bytes, more than the limit of " + std::to_string(max_bytes) +
                              " (raise it with PLEXUS_MAX_DATA_BYTES)");
    }
    std::string text(size_t(st.st_size), '\0');
    size_t done = 0;
    while (done < text.size()) {
        const ssize_t got = ::read(fd, text.data() + done, text.size() - done);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) {
            const int err = errno;
            ::close(fd);
            detail::bad(path, got < 0 ? std::string("cannot read: ") + std::strerror(err) : "shrank while it was read");
        }
        done += size_t(got);
    }
    ::close(fd);
    return text;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// The line at `at`, and where the next begins: a line ends at LF, CRLF or a
// lone CR (old Mac files), as np.loadtxt's universal newlines read them.
std::string_view line_at(const std::string& text, size_t& at) {
    size_t end = text.find_first_of("\r\n", at);
    if (end == std::string::npos) end = text.size();
    const std::string_view line(text.data() + at, end - at);
    at = end + (text.compare(end, 2, "\r\n") == 0 ? 2 : 1);
    return line;
}

// The line less its comment: from `comment` on, anywhere in the line, as
// np.loadtxt's comments= (no field is quoted, so none can hold it).
std::string_view uncommented(std::string_view line, char comment) {
    return comment ? line.substr(0, line.find(comment)) : line;
}

// The columns kept, as indices into a row of `width` fields: `columns`
// (negative ones count from the end, as usecols), or all.
std::vector<size_t> kept_columns(const std::vector<int64_t>& columns, int64_t width, const std::string& where) {
    std::vector<size_t> keep;
    if (columns.empty())
        for (int64_t c = 0; c < width; ++c) keep.push_back(size_t(c));
    for (int64_t c : columns) {
        if (c < -width || c >= width)
            detail::bad(where, "column index " + std::to_string(c) + " is outside its " + std::to_string(width) +
                                   " columns (0.." + std::to_string(width - 1) + ", or " + std::to_string(-width) +
                                   "..-1 from the end)");
        keep.push_back(size_t(c < 0 ? c + width : c));
    }
    return keep;
}

// The fields of a line: split at each delimiter and trimmed, or at runs of
// blanks when the delimiter is a space (as np.loadtxt's default).
std::vector<std::string_view> fields_of(std::string_view line, char delimiter) {
    std::vector<std::string_view> out;
    const bool blanks = delimiter == ' ';
    size_t i = 0;
    while (true) {
        if (blanks)
            while (i < line.size() && is_space(line[i])) ++i;
        if (blanks && i == line.size()) break;
        size_t end = i;
        while (end < line.size() && (blanks ? !is_space(line[end]) : line[end] != delimiter)) ++end;
        std::string_view f = line.substr(i, end - i);
        while (!f.empty() && is_space(f.front())) f.remove_prefix(1);
        while (!f.empty() && is_space(f.back())) f.remove_suffix(1);
        out.push_back(f);
        if (end == line.size()) break;
        i = end + 1;
    }
    return out;
}

// A decimal float outside T's normal range, correctly rounded (0, a
// subnormal or an infinity, as strtod gives it and np.loadtxt reads it):
// from_chars reports those as out of range. The C locale's strtod, so the
// decimal point is '.' in every locale.
template <class T>
T beyond_normal_range(std::string_view f) {
    static const locale_t c_locale = newlocale(LC_ALL_MASK, "C", nullptr);
    if (!c_locale) throw std::bad_alloc();
    const std::string text(f);
    if constexpr (std::is_same_v<T, float>) return strtof_l(text.c_str(), nullptr, c_locale);
    else return strtod_l(text.c_str(), nullptr, c_locale);
}

// Parses field `f` into dst: nullptr, or why not (before the dtype's name).
template <class T>
const char* parse(std::string_view f, uint8_t* dst) {
    if (f.size() > 1 && f[0] == '+' && f[1] != '-' && f[1] != '+') f.remove_prefix(1);  // from_chars takes no '+'
    T v{};
    const auto r = std::from_chars(f.data(), f.data() + f.size(), v);
    if (r.ptr != f.data() + f.size() || (r.ec != std::errc() && r.ec != std::errc::result_out_of_range))
        return "is not a number of dtype ";
    if (r.ec == std::errc::result_out_of_range) {
        if constexpr (std::is_floating_point_v<T>) v = beyond_normal_range<T>(f);
        else return "is outside the range of ";
    }
    std::memcpy(dst, &v, sizeof v);
    return nullptr;
}

}  // namespace

Array read_csv(const std::string& path, const CsvOptions& o) {
    const char* (*parse_one)(std::string_view, uint8_t*) = nullptr;
    switch (o.dtype) {
    case DType::float32: parse_one = parse<float>; break;
    case DType::float64: parse_one = parse<double>; break;
    case DType::int32: parse_one = parse<int32_t>; break;
    case DType::int64: parse_one = parse<int64_t>; break;
    default:
        throw InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, std::string("read_csv: dtype ") + name(o.dtype) +
                                                                  " is not one it reads (float32, float64, int32, int64)");
    }
    if (o.skip_rows < 0) detail::bad(path, "skip_rows must be >= 0, got " + std::to_string(o.skip_rows));
    if (o.delimiter == '\n' || o.delimiter == '\r' || o.delimiter == '\0' || o.delimiter == o.comment)
        detail::bad(path, "the delimiter cannot be a newline (LF or CR), NUL or the comment character");
    const std::string text = read_all(path, o.max_bytes);
    const size_t es = px_dtype_size(static_cast<int32_t>(o.dtype));
    Array a;
    a.dtype = o.dtype;
    int64_t rows = 0, width = -1, line_no = 0;
    std::vector<size_t> keep;
    // A UTF-8 byte order mark, as spreadsheets write, is not part of the first field.
    size_t at = text.compare(0, 3, "\xef\xbb\xbf") == 0 ? 3 : 0;
    while (at < text.size()) {
        const std::string_view line = uncommented(line_at(text, at), o.comment);
        if (++line_no <= o.skip_rows) continue;
        if (std::all_of(line.begin(), line.end(), is_space)) continue;
        const std::string where = path + ": line " + std::to_string(line_no);
        const std::vector<std::string_view> fields = fields_of(line, o.delimiter);
        if (width < 0) {
            width = int64_t(fields.size());
            keep = kept_columns(o.columns, width, where);
        } else if (int64_t(fields.size()) != width) {
            detail::bad(where, "has " + std::to_string(fields.size()) + " columns, the first row has " + std::to_string(width));
        }
        const size_t row_bytes = keep.size() * es;
        if (a.bytes.size() + row_bytes > o.max_bytes)
            detail::bad(path, detail::over_limit(o.max_bytes));
        a.bytes.resize(a.bytes.size() + row_bytes);
        uint8_t* dst = a.bytes.data() + a.bytes.size() - row_bytes;
        for (size_t k = 0; k < keep.size(); ++k) {
            const std::string_view f = fields[keep[k]];
            if (const char* why = parse_one(f, dst + k * es))
                detail::bad(where + ", column " + std::to_string(keep[k] + 1),
                            f.empty() ? std::string("an empty field is not a number")
                                      : "'" + nn::param_file::printable(std::string(f)) + "' " + why + name(o.dtype));
        }
        ++rows;
    }
    if (rows == 0) detail::bad(path, "has no rows of numbers");
    a.shape = {rows, int64_t(keep.size())};
    return a;
}

}  // namespace plexus::data
