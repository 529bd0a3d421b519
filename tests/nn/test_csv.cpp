// read_csv on files written here.
#include <catch2/catch.hpp>

#include <clocale>
#include <cmath>
#include <limits>
#include <cstring>

#include "data_files_support.hpp"
#include "plexus/data.hpp"

using namespace plexus;
using pxtest::message_of;

namespace {

data::Array csv(const std::string& text, const data::CsvOptions& o = {}) {
    const std::string path = pxtest::temp_path("a.csv");
    pxtest::write_text(path, text);
    return data::read_csv(path, o);
}

std::string refusal(const std::string& text, const data::CsvOptions& o = {}) {
    return message_of<InvalidArgumentError>([&] { csv(text, o); });
}

template <class T>
std::vector<T> values(const data::Array& a) {
    std::vector<T> v(a.bytes.size() / sizeof(T));
    std::memcpy(v.data(), a.bytes.data(), a.bytes.size());
    return v;
}

}  // namespace

TEST_CASE("read_csv reads numbers into rows and columns", "[data][csv]") {
    CHECK(values<float>(csv("\xef\xbb\xbf" "1,2\n")) == std::vector<float>{1, 2});  // a spreadsheet's byte order mark
    auto a = csv("1,2.5,-3\n4e2, +5 ,6.25\n");
    CHECK(a.dtype == DType::float32);
    CHECK(a.shape == Shape{2, 3});
    CHECK(values<float>(a) == std::vector<float>{1, 2.5f, -3, 400, 5, 6.25f});
    // A header skipped, comments, blank lines, CRLF line ends, no newline at the end.
    data::CsvOptions o;
    o.skip_rows = 1;
    o.dtype = DType::float64;
    a = csv("a,b\r\n# a comment\r\n0.1,0.2\r\n\r\n   \n0.3,1e-310", o);
    CHECK(a.shape == Shape{2, 2});
    CHECK(values<double>(a) == std::vector<double>{0.1, 0.2, 0.3, 1e-310});  // correctly rounded, subnormals too
    // Chosen columns, in the order given; another delimiter; integers.
    o = {};
    o.delimiter = ';';
    o.columns = {2, 0};
    o.dtype = DType::int64;
    a = csv("1;2;3\n-4;5;9223372036854775807\n", o);
    CHECK(a.shape == Shape{2, 2});
    CHECK(values<int64_t>(a) == std::vector<int64_t>{3, 1, INT64_MAX, -4});
    o = {};
    o.dtype = DType::int32;
    o.delimiter = '\t';
    CHECK(values<int32_t>(csv("7\t-8\n", o)) == std::vector<int32_t>{7, -8});
    // A space splits at runs of blanks, as np.loadtxt's default.
    o = {};
    o.delimiter = ' ';
    a = csv("  1   2\t3\n4 5 6  \n", o);
    CHECK(a.shape == Shape{2, 3});
    CHECK(values<float>(a) == std::vector<float>{1, 2, 3, 4, 5, 6});
    CHECK(values<float>(csv("nan,inf,-inf\n"))[1] == std::numeric_limits<float>::infinity());
    // Beyond the normal range: correctly rounded to 0, a subnormal or an infinity, as np.loadtxt reads them.
    const float f_inf = std::numeric_limits<float>::infinity();
    const auto small = values<float>(csv("1e-50,-1e-50,1e-45,3.5e38,-1e39\n"));
    CHECK(small == std::vector<float>{0.0f, -0.0f, std::numeric_limits<float>::denorm_min(), f_inf, -f_inf});
    CHECK(std::signbit(small[1]));
    data::CsvOptions wide;
    wide.dtype = DType::float64;
    CHECK(values<double>(csv("1e-400,4.9e-324,1e309\n", wide)) ==
          std::vector<double>{0.0, std::numeric_limits<double>::denorm_min(), std::numeric_limits<double>::infinity()});
    // The same values under a locale whose decimal mark is a comma (where the machine has one).
    if (std::setlocale(LC_ALL, "de_DE.UTF-8") || std::setlocale(LC_ALL, "fr_FR.UTF-8")) {
        CHECK(values<float>(csv("1.5;2.25;1.5e-45\n", [] { data::CsvOptions c; c.delimiter = ';'; return c; }())) ==
              std::vector<float>{1.5f, 2.25f, std::numeric_limits<float>::denorm_min()});
        std::setlocale(LC_ALL, "C");
    }
}

TEST_CASE("read_csv reads negative columns and trailing comments and CR line ends as np.loadtxt", "[data][csv]") {
    // usecols=[-1, 0]: from the end, as NumPy's indices.
    data::CsvOptions o;
    o.columns = {-1, 0, -3};
    auto a = csv("1,2,3\n4,5,6\n", o);
    CHECK(a.shape == Shape{2, 3});
    CHECK(values<float>(a) == std::vector<float>{3, 1, 1, 6, 4, 4});
    // A comment ends any line, as comments='#'; a line of only a comment or blanks is skipped.
    a = csv("1,2 # first\n  # whole line\n3,4#\n5,6   #x,y,z\n");
    CHECK(a.shape == Shape{3, 2});
    CHECK(values<float>(a) == std::vector<float>{1, 2, 3, 4, 5, 6});
    o = {};
    o.comment = '%';
    o.delimiter = ' ';
    CHECK(values<float>(csv("1 2 % 3\n", o)) == std::vector<float>{1, 2});
    o.comment = '\0';  // none: '#' is then a field like any other
    PX_REQUIRE_MENTIONS(refusal("1 2 #\n", o), "line 1, column 3: '#' is not a number");
    // Lines that end in a lone CR (old Mac files), mixed with CRLF and LF, counted as lines.
    a = csv("1,2\r3,4\r\n5,6\n7,8\r");
    CHECK(a.shape == Shape{4, 2});
    CHECK(values<float>(a) == std::vector<float>{1, 2, 3, 4, 5, 6, 7, 8});
    PX_REQUIRE_MENTIONS(refusal("1,2\r3,4\r5,x\r"), "line 3, column 2: 'x' is not a number");
    o = {};
    o.skip_rows = 1;
    CHECK(values<float>(csv("a,b\r1,2\r", o)) == std::vector<float>{1, 2});
}

TEST_CASE("read_csv names the file, line and column of what it cannot read", "[data][csv][errors]") {
    const std::string path = pxtest::temp_path("a.csv");
    PX_REQUIRE_MENTIONS(refusal("1,2\n3,x\n"), path + ": line 2, column 2: 'x' is not a number of dtype float32");
    PX_REQUIRE_MENTIONS(refusal("1,2\n3,\n"), "line 2, column 2: an empty field is not a number");
    PX_REQUIRE_MENTIONS(refusal("1,2\n3,4,5\n"), "line 2: has 3 columns, the first row has 2");
    PX_REQUIRE_MENTIONS(refusal("1,2\n3\n"), "line 2: has 1 columns, the first row has 2");
    PX_REQUIRE_MENTIONS(refusal(""), path + ": has no rows of numbers");
    data::CsvOptions header;
    header.skip_rows = 1;
    PX_REQUIRE_MENTIONS(refusal("a,b\n", header), "has no rows of numbers");
    PX_REQUIRE_MENTIONS(refusal("1.5e,2\n"), "line 1, column 1: '1.5e' is not a number");
    PX_REQUIRE_MENTIONS(refusal("1,2 3\n"), "'2 3' is not a number");
    // Bytes a message cannot show are escaped (a NUL had cut the message short, a CR had moved the cursor).
    PX_REQUIRE_MENTIONS(refusal(std::string("1,2\0x\n", 6)), "line 1, column 2: '2\\x00x' is not a number of dtype float32");
    PX_REQUIRE_MENTIONS(refusal("1,2\x01\n"), "'2\\x01' is not a number");
    data::CsvOptions ints;
    ints.dtype = DType::int32;
    PX_REQUIRE_MENTIONS(refusal("1,2.5\n", ints), "line 1, column 2: '2.5' is not a number of dtype int32");
    PX_REQUIRE_MENTIONS(refusal("3000000000\n", ints), "'3000000000' is outside the range of int32");
    data::CsvOptions cols;
    cols.columns = {0, 3};
    PX_REQUIRE_MENTIONS(refusal("1,2,3\n", cols), "line 1: column index 3 is outside its 3 columns (0..2, or -3..-1 from the end)");
    cols.columns = {-4};
    PX_REQUIRE_MENTIONS(refusal("1,2,3\n", cols), "line 1: column index -4 is outside its 3 columns");
    data::CsvOptions u8;
    u8.dtype = DType::uint8;
    PX_REQUIRE_MENTIONS(refusal("1\n", u8), "read_csv: dtype uint8 is not one it reads");
    data::CsvOptions skip;
    skip.skip_rows = -1;
    PX_REQUIRE_MENTIONS(refusal("1\n", skip), "skip_rows must be >= 0");
    data::CsvOptions nl;
    nl.delimiter = '\n';
    PX_REQUIRE_MENTIONS(refusal("1\n", nl), "the delimiter cannot be a newline");
    nl.delimiter = '\r';
    PX_REQUIRE_MENTIONS(refusal("1\n", nl), "the delimiter cannot be a newline (LF or CR)");
    data::CsvOptions small;
    small.max_bytes = 8;
    PX_REQUIRE_MENTIONS(refusal("1,2,3,4,5\n", small), "is 10 bytes, more than the limit of 8");
    small.max_bytes = 16;
    CHECK(csv("1,2\n3,4\n", small).size() == 4);  // 16 bytes of values: the limit itself is allowed
    small.max_bytes = 12;
    PX_REQUIRE_MENTIONS(refusal("1,2\n3,4\n", small), "declares more than 12 bytes of values");
    PX_REQUIRE_MENTIONS(message_of<InvalidArgumentError>([&] { data::read_csv(pxtest::temp_path("none.csv")); }),
                        "cannot open: No such file or directory");
}
