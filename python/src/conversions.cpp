// Python values into tensors: NumPy's conversions, and the checks that
// integers fit the dtype they go into (module.cpp and indexing.cpp use them).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cmath>
#include <optional>
#include <string>

#include "bindings.hpp"

namespace py = pybind11;
using plexus::Device;
using plexus::DType;
using plexus::Tensor;

namespace {

template <class T>
Tensor from_array_as(const py::handle& values, Device d, DType dt) {
    auto a = py::array_t<T, py::array::c_style | py::array::forcecast>::ensure(values);
    if (!a)  // (ensure clears NumPy's error: say what could not be converted)
        throw plexus::DTypeError(PX_ERROR_DTYPE, std::string("array: NumPy cannot convert values of dtype ") +
                                                     py::str(py::getattr(values, "dtype", py::str("?"))).cast<std::string>() +
                                                     " to " + name(dt) + " (Plexus tensors hold numbers)");
    plexus::Shape s(a.shape(), a.shape() + a.ndim());
    return Tensor::wrap([&](px_tensor** o) {
        return px_tensor_from_host(plexus::runtime(), d.raw(), static_cast<px_dtype>(dt), int32_t(s.size()), s.data(),
                                   a.data(), uint64_t(a.size()) * sizeof(T), o);
    });
}

}  // namespace

// NumPy's array of `values` (anything numpy.asarray takes).
py::object numpy_array(const py::handle& values) { return py::module_::import("numpy").attr("asarray")(values); }

// NumPy's kind of `values`: 'b' bool, 'i', 'u', 'f', 'c', 'O' object, 'U' text, ...
char numpy_kind(const py::handle& values) { return numpy_array(values).attr("dtype").attr("kind").cast<std::string>().at(0); }

// `values`: anything numpy.asarray takes; converted to `dt` (NumPy's casting
// rules). Only real numbers: NumPy would turn None into NaN, drop imaginary
// parts, parse text and count days. Python objects that are numbers (an int
// too large for int64, Fraction, Decimal) convert as NumPy converts them.
Tensor from_numpy(const py::handle& values, Device d, DType dt) {
    const py::object a = numpy_array(values);
    const char kind = a.attr("dtype").attr("kind").cast<std::string>().at(0);
    const char* what = kind == 'c' ? "complex numbers"
                       : kind == 'U' || kind == 'S' ? "text"
                       : kind == 'M' || kind == 'm' ? "dates or times"
                       : kind == 'V' ? "records"
                       : nullptr;
    if (kind == 'O')
        for (const py::handle v : a.attr("ravel")())
            if (v.is_none()) what = "None";
    if (what) throw plexus::DTypeError(PX_ERROR_DTYPE, std::string("array: the values are not real numbers: ") + what);
    switch (dt) {
    case DType::float32: return from_array_as<float>(values, d, dt);
    case DType::float64: return from_array_as<double>(values, d, dt);
    case DType::int32: return from_array_as<int32_t>(values, d, dt);
    case DType::int64: return from_array_as<int64_t>(values, d, dt);
    case DType::uint8: return from_array_as<uint8_t>(values, d, dt);
    case DType::float16:  // NumPy's float16 as it is, bit for bit (NaN payloads too), once in this machine's order
        if (a.attr("dtype").attr("name").cast<std::string>() == "float16" && a.attr("dtype").attr("isnative").cast<bool>())
            return from_array_as<uint16_t>(a.attr("view")("uint16"), d, dt);
        [[fallthrough]];
    // Through float64, which holds every NumPy float16 and float32 exactly, then rounded once on the device.
    case DType::bfloat16: return from_array_as<double>(values, d, DType::float64).astype(dt);
    }
    throw plexus::DTypeError(PX_ERROR_DTYPE, "bad dtype");
}

// plexus.array(values, device=d, dtype=dt) (Python code: through call_python).
Tensor plexus_array(const py::object& values, Device d, std::optional<DType> dt) {
    py::dict kwargs;
    kwargs["device"] = d;
    if (dt) kwargs["dtype"] = plexus::name(*dt);
    return call_python(py::module_::import("plexus").attr("array"), py::make_tuple(values), kwargs).cast<Tensor>();
}
// The least and the greatest value of integer dtype d (Python's arange and
// full ask for them too: plexus._integer_bounds).
std::pair<py::int_, py::int_> bounds_of(DType d) {
    switch (d) {
    case DType::uint8: return {py::int_(0), py::int_(255)};
    case DType::int32: return {py::int_(INT32_MIN), py::int_(INT32_MAX)};
    default: return {py::int_(INT64_MIN), py::int_(INT64_MAX)};
    }
}
// Whether the integers from lo to hi fit in the integer dtype d (compared as
// Python ints: exact for any int64 or uint64, and beyond).
bool fits(DType d, const py::int_& lo, const py::int_& hi) {
    const auto [least, most] = bounds_of(d);
    return lo >= least && hi <= most;
}
// "0 to 255": the values integer dtype d holds.
std::string range_of(DType d) {
    const auto [least, most] = bounds_of(d);
    return std::to_string(least.cast<int64_t>()) + " to " + std::to_string(most.cast<int64_t>());
}
// Whether every value of the integer or bool NumPy array `a` fits in d.
bool holds(DType d, const py::object& a) {
    if (a.attr("size").cast<py::ssize_t>() == 0) return true;
    return fits(d, py::int_(a.attr("min")()), py::int_(a.attr("max")()));
}

// "values uint8 cannot hold (from -1 to 300)", for an array `a` holds() refused.
std::string values_beyond(DType d, const py::object& a) {
    return "values " + std::string(plexus::name(d)) + " cannot hold (from " +
           py::str(a.attr("min")()).cast<std::string>() + " to " + py::str(a.attr("max")()).cast<std::string>() + ")";
}

// A typed NumPy integer array's dtype in Plexus's integers: its own where
// Plexus has it, else the next that holds every value of it.
DType integer_dtype_of(const py::object& a) {
    const std::string name = a.attr("dtype").attr("name").cast<std::string>();
    if (name == "uint8") return DType::uint8;
    if (name == "int8" || name == "int16" || name == "uint16" || name == "int32") return DType::int32;
    return DType::int64;  // int64, uint32, uint64 (refused below beyond int64)
}

// y of `x op y` when y is not a number: a tensor, or anything plexus.array
// takes (a NumPy array, a list) on x's device. With x of integers, the
// values of a list (and of a bool array) go in x's dtype when it holds them
// (int32 + [1, 2] stays int32, as the scalar rule), else in int64; a typed
// NumPy integer array keeps its dtype, so the op promotes as NumPy's
// (uint8 + int64 array is int64). Either way the values are never wrapped:
// uint8 < [-1] is all false. In place (`op` given) x's dtype takes the
// values it holds, and refuses the rest rather than wrap them. (Left to
// Python, `x *= numpy_array` would bind x to a new NumPy array and leave
// the tensor as it was.)
Tensor operand(const Tensor& x, const py::object& y, const char* op) {
    if (py::isinstance<Tensor>(y)) return y.cast<Tensor>();
    const char kind = numpy_kind(y);
    if (is_floating(x.dtype()) || std::string("biu").find(kind) == std::string::npos) return plexus_array(y, x.device());
    const py::object a = numpy_array(y);
    const bool typed = kind != 'b' && py::hasattr(y, "dtype");
    if ((op || !typed) && holds(x.dtype(), a)) return from_numpy(a, x.device(), x.dtype());
    if (op)
        throw plexus::DTypeError(PX_ERROR_DTYPE, std::string("x ") + op + "= y: y holds " + values_beyond(x.dtype(), a) +
                                                     "; write x = x " + op + " y for a result that holds them");
    const DType d = typed ? integer_dtype_of(a) : DType::int64;
    if (!holds(d, a))
        throw plexus::DTypeError(PX_ERROR_DTYPE, "array: integers beyond int64 (up to " +
                                                     py::str(a.attr("max")()).cast<std::string>() + ")");
    return from_numpy(a, x.device(), d);
}

// A number for the scalar rules: a Python int, float or bool, or a NumPy
// scalar (float16 - np.float32(2) stays float16, as NumPy's value-based rule).
bool is_number(const py::object& y) {
    if (py::isinstance<py::int_>(y) || py::isinstance<py::float_>(y)) return true;
    if (py::isinstance<Tensor>(y) || !py::hasattr(y, "dtype") || !py::hasattr(y, "ndim") || y.attr("ndim").cast<int>() != 0)
        return false;
    return std::string("biuf").find(numpy_kind(y)) != std::string::npos;
}

// An integer (Python's or a NumPy scalar) that a double does not hold
// exactly but int64 does, as 2**53 + 1: the scalar paths carry numbers as
// doubles, so such a number goes to an integer tensor as a one-element
// tensor instead. (Beyond int64 no tensor holds it: it stays a double, as
// NumPy 1's comparisons take it.)
bool integer_beyond_double(const py::object& y) {
    if (!PyLong_Check(y.ptr()) && !(py::hasattr(y, "dtype") && std::string("iu").find(numpy_kind(y)) != std::string::npos))
        return false;
    const py::int_ v(y);
    int overflow = 0;
    const long long n = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
    if (overflow) return false;
    constexpr long long exact = 1LL << 53;
    return n > exact || n < -exact;
}
// Integers (a number, a list, a NumPy array) written into an integer tensor
// must fit its dtype, as NumPy 2's assignment (1.x wrapped them, and a number
// here had saturated: uint8 x[:] = 300 gave 255).
void check_fits(const Tensor& t, const py::object& value) {
    if (is_floating(t.dtype()) || py::isinstance<Tensor>(value)) return;
    const char kind = numpy_kind(value);
    const py::object a = numpy_array(value);
    if (kind == 'O') {  // Python ints NumPy has no integer type for (2**64), maybe among other objects
        for (const py::handle v : a.attr("ravel")())
            if (py::isinstance<py::int_>(v) && !fits(t.dtype(), py::reinterpret_borrow<py::int_>(v),
                                                      py::reinterpret_borrow<py::int_>(v)))
                throw plexus::DTypeError(PX_ERROR_DTYPE, "x[...] = v: v holds " + py::str(v).cast<std::string>() +
                                                             ", which " + plexus::name(t.dtype()) + " cannot hold");
        return;
    }
    if (kind == 'f' && a.attr("size").cast<py::ssize_t>() > 0) {
        // Floats (a number or an array) go in as their integer part, when x's dtype holds it: x[:] = 300.0
        // had saturated to 255 and x[:] = [300.0] wrapped to 44; NaN and infinities nowhere (x[0] = nan had
        // been an InvalidArgumentError).
        const double lo = a.attr("min")().cast<double>(), hi = a.attr("max")().cast<double>();
        if (!std::isfinite(lo) || !std::isfinite(hi))
            throw plexus::DTypeError(PX_ERROR_DTYPE, "x[...] = v: v holds NaN or an infinity, which " +
                                                         std::string(plexus::name(t.dtype())) + " cannot hold");
        if (!fits(t.dtype(), py::int_(py::float_(std::trunc(lo))), py::int_(py::float_(std::trunc(hi)))))
            throw plexus::DTypeError(PX_ERROR_DTYPE, "x[...] = v: v holds " + values_beyond(t.dtype(), a));
        return;
    }
    if (kind != 'i' && kind != 'u') return;
    if (!holds(t.dtype(), a)) throw plexus::DTypeError(PX_ERROR_DTYPE, "x[...] = v: v holds " + values_beyond(t.dtype(), a));
}

// plexus.full(shape, value): an integer dtype takes the numbers it holds
// (their integer part), exactly beyond 2**53, and refuses the rest as NumPy 2
// and PyTorch do (C++'s full saturates them, as cast converts).

// The values of x[key] = value as a tensor: a tensor as it is, a number or
// anything plexus.array takes, in t's dtype on t's device.
Tensor assigned_values(const Tensor& t, const py::object& value) {
    if (py::isinstance<Tensor>(value)) return value.cast<Tensor>();
    check_fits(t, value);
    if (py::isinstance<py::float_>(value) || (py::isinstance<py::int_>(value) && !integer_beyond_double(value)))
        return plexus::full(plexus::Shape{}, value.cast<double>(), t.device(), t.dtype());
    return plexus_array(value, t.device(), t.dtype());
}
