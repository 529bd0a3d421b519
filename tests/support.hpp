// Helpers for the test suites: the device under test, host references.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "../tools/device_arg.hpp"
#include "plexus/plexus.hpp"

namespace pxtest {

// A path in $TMPDIR (else /tmp) that names this process, so parallel test runs do not meet.
inline std::string temp_path(const std::string& name) {
    return std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") + "/plexus-test-" +
           std::to_string(::getpid()) + "-" + name;
}

inline void write_bytes(const std::string& path, const std::vector<unsigned char>& b) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
}

// The device a conformance run targets: PLEXUS_TEST_DEVICE=cpu:1, gpu:0,
// naive:0... (cpu:0 when unset).
inline plexus::Device device_under_test() {
    const char* env = std::getenv("PLEXUS_TEST_DEVICE");
    const std::string s = env ? env : "cpu:0";
    std::string why;
    if (auto d = pxtools::parse_device_arg(s, &why)) return *d;
    throw plexus::InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT, "PLEXUS_TEST_DEVICE: " + why);
}

// Values as float64, whatever the tensor's dtype.
inline std::vector<double> values(const plexus::Tensor& t) {
    return t.astype(plexus::DType::float64).to_vector<double>();
}

// Tolerance for comparing a result of `dtype` with a float64 reference.
// float16 and bfloat16: one ulp, the format's epsilon (2^-10, 2^-7), for a
// result computed in float32 or wider and rounded once.
inline double tolerance(plexus::DType d) {
    switch (d) {
    case plexus::DType::float32: return 2e-6;
    case plexus::DType::float64: return 1e-12;
    case plexus::DType::float16: return 0x1p-10;
    case plexus::DType::bfloat16: return 0x1p-7;
    default: return 0;
    }
}

// `v` as a value of dtype `d` would hold it, for floats: rounded to nearest.
inline double rounded_to(double v, plexus::DType d) {
    switch (d) {
    case plexus::DType::float32: return double(float(v));
    case plexus::DType::float16: return double(plexus::float16(v));
    case plexus::DType::bfloat16: return double(plexus::bfloat16(v));
    default: return v;
    }
}

// `v` with every element rounded to dtype `d`: the inputs a float64
// reference takes when the device's inputs are `v` in `d`.
inline std::vector<double> rounded_to(std::vector<double> v, plexus::DType d) {
    for (double& x : v) x = rounded_to(x, d);
    return v;
}

inline bool is_half(plexus::DType d) { return d == plexus::DType::float16 || d == plexus::DType::bfloat16; }

// The float dtypes, widest first.
inline const std::vector<plexus::DType>& float_dtypes() {
    static const std::vector<plexus::DType> all{plexus::DType::float64, plexus::DType::float32, plexus::DType::float16,
                                                plexus::DType::bfloat16};
    return all;
}

// The tolerance of an op computed in float32 (or wider) and rounded once to
// `d`, against a float64 reference from the same (rounded) inputs: `f32` and
// `f64` for those dtypes, the larger of `f32` and one ulp of the 16-bit ones.
inline double tolerance(plexus::DType d, double f32, double f64) {
    if (d == plexus::DType::float64) return f64;
    if (d == plexus::DType::float32) return f32;
    return std::max(f32, tolerance(d));
}

inline bool close(double got, double want, double tol) {
    if (std::isnan(want)) return std::isnan(got);
    if (std::isinf(want)) return got == want;
    return std::fabs(got - want) <= tol * (1 + std::fabs(want));
}

// The first element where got and want are not close, or got.size(): the
// vectors are scanned without an assertion per element (a million of
// Catch's, each with its message, took seconds per check).
template <class G, class W>
size_t first_not_close(const G& got, const W& want, double tol) {
    for (size_t i = 0; i < got.size(); ++i)
        if (!close(double(got[i]), double(want[i]), tol)) return i;
    return got.size();
}

// Equal element by element, NaN matching NaN (values() reads every dtype as double).
inline bool same_values(const std::vector<double>& a, const std::vector<double>& b) {
    if (a.size() != b.size()) return false;
    for (size_t i = 0; i < a.size(); ++i)
        if (!(a[i] == b[i] || (std::isnan(a[i]) && std::isnan(b[i])))) return false;
    return true;
}

// Bytes in use on a device, after its queue drained.
inline uint64_t bytes_in_use(plexus::Device d) {
    plexus::synchronize(d);
    return plexus::device_info(d).memory_in_use;
}

// The message of the E that `f` must throw; the test fails when it throws
// nothing or something else.
template <class E, class F>
std::string message_of(F&& f) {
    try {
        f();
    } catch (const E& e) {
        return e.what();
    }
    FAIL("expected an exception, none was thrown");
    return "";
}

}  // namespace pxtest

// Requires `needle` in `text`, showing both on failure. `text` is evaluated
// once: it may be a call that throws only the first time.
#define PX_REQUIRE_MENTIONS(text, needle)                        \
    do {                                                         \
        const std::string px_text_ = (text);                     \
        INFO("message: " << px_text_);                           \
        REQUIRE(px_text_.find(needle) != std::string::npos);     \
    } while (0)

// Compare every element of `got` with `want` within `tol`, reporting the first miss.
#define PX_REQUIRE_CLOSE(got_vec, want_vec, tol)                                                           \
    do {                                                                                                    \
        auto&& g_ = (got_vec);                                                                              \
        auto&& w_ = (want_vec);                                                                             \
        REQUIRE(g_.size() == w_.size());                                                                    \
        const size_t i_ = pxtest::first_not_close(g_, w_, (tol));                                           \
        if (i_ < g_.size()) {                                                                               \
            INFO("element " << i_ << ": got " << g_[i_] << ", want " << w_[i_]);                           \
            REQUIRE(pxtest::close(double(g_[i_]), double(w_[i_]), (tol)));                                 \
        }                                                                                                   \
    } while (0)
