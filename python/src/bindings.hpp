// What the binding files of plexus._plexus share: each binds one part of
// the frontend, and module.cpp calls them in turn.
#pragma once

#include <pybind11/pybind11.h>

#include <exception>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "plexus/plexus.hpp"

// The GIL let go while Plexus waits or computes, as pybind11's
// gil_scoped_release, but safe for a daemon thread at interpreter exit:
// CPython ends a thread that takes the GIL back while the interpreter
// finalizes with pthread_exit, whose forced unwind would run through
// noexcept destructors (std::terminate), through a Plexus exception already
// on its way (terminate), and through frames holding Python objects, freeing
// them without the GIL. take_back() parks such a thread for good instead, as
// CPython 3.14 does itself; the process ends with the main thread.
class GilReleased {
public:
    GilReleased() : state_(PyEval_SaveThread()) {}
    ~GilReleased() { take_back(state_); }
    GilReleased(const GilReleased&) = delete;
    GilReleased& operator=(const GilReleased&) = delete;

    static void take_back(PyThreadState* state) noexcept;

private:
    PyThreadState* state_;
};

// The GIL taken, from any thread, as pybind11's gil_scoped_acquire, but a
// daemon thread that takes it while the interpreter finalizes parks there
// (as in GilReleased) instead of being unwound through Plexus's frames.
class GilHeld {
public:
    GilHeld();
    ~GilHeld() { PyGILState_Release(state_); }
    GilHeld(const GilHeld&) = delete;
    GilHeld& operator=(const GilHeld&) = delete;

private:
    PyGILState_STATE state_{};
};

// callable(*args, **kwargs), with the GIL held (GilHeld), for Plexus
// calling Python code (a Block's forward, an initializer, a schedule,
// plexus.array). CPython ends a daemon thread whose code finds the
// interpreter finalizing with pthread_exit; that forced unwind is stopped
// right above CPython's own frames and the thread parks, so no C++ frame
// holding Python objects or the GIL is unwound by a thread that no longer
// holds it.
pybind11::object call_python(const pybind11::handle& callable, const pybind11::tuple& args,
                             const pybind11::handle& kwargs = pybind11::handle());

// Lets `held` go with the GIL taken, from any thread, also a daemon thread
// while the interpreter finalizes (it parks there, as in GilReleased); after
// the interpreter has gone, there is nothing left to release.
void drop_with_gil(pybind11::object& held) noexcept;

// Waits for the work of `devices` (before a call that waits inside Plexus
// for them) so that Ctrl-C (KeyboardInterrupt) interrupts the wait. A
// failure on another device is left for its own next wait.
void wait_devices(const std::vector<plexus::Device>& devices);

// Sets the Python error (plexus.ShapeError, ...) for an exception of the
// frontend's types; false, with nothing set, for any other exception.
bool set_python_error(const std::exception_ptr& p);

// ---- Python values into tensors (conversions.cpp) ----

// NumPy's array of `values` (anything numpy.asarray takes), and its kind:
// 'b' bool, 'i', 'u', 'f', 'c', 'O' object, 'U' text, ...
pybind11::object numpy_array(const pybind11::handle& values);
char numpy_kind(const pybind11::handle& values);
// `values` as a tensor of `dt` on `d` (NumPy's casting rules; real numbers only).
plexus::Tensor from_numpy(const pybind11::handle& values, plexus::Device d, plexus::DType dt);
// plexus.array(values, device=d, dtype=dt), the Python function.
plexus::Tensor plexus_array(const pybind11::object& values, plexus::Device d,
                            std::optional<plexus::DType> dt = std::nullopt);
// The least and greatest value of an integer dtype; whether [lo, hi] fits
// it; "0 to 255"; whether a NumPy integer array's values fit it, and the
// words for the ones that do not.
std::pair<pybind11::int_, pybind11::int_> bounds_of(plexus::DType d);
bool fits(plexus::DType d, const pybind11::int_& lo, const pybind11::int_& hi);
std::string range_of(plexus::DType d);
bool holds(plexus::DType d, const pybind11::object& a);
std::string values_beyond(plexus::DType d, const pybind11::object& a);
// A typed NumPy integer array's dtype among Plexus's integers.
plexus::DType integer_dtype_of(const pybind11::object& a);
// y of `x op y` when y is not a number (in place when `op` is given).
plexus::Tensor operand(const plexus::Tensor& x, const pybind11::object& y, const char* op = nullptr);
// A Python or NumPy scalar number; an integer a double does not hold exactly.
bool is_number(const pybind11::object& y);
bool integer_beyond_double(const pybind11::object& y);
// Refuses values an integer tensor t cannot hold (x[...] = value).
void check_fits(const plexus::Tensor& t, const pybind11::object& value);
// The values of x[key] = value: a tensor as it is, anything else in t's dtype on t's device.
plexus::Tensor assigned_values(const plexus::Tensor& t, const pybind11::object& value);

// ---- indexing (indexing.cpp) ----

// x[key] and x[key] = value, as NumPy's basic and integer-array indexing.
plexus::Tensor getitem(const plexus::Tensor& t, const pybind11::object& key);
void setitem(plexus::Tensor& t, const pybind11::object& key, const pybind11::object& value);

void bind_trace(pybind11::module_& m);                                             // trace_bindings.cpp
void bind_data(pybind11::module_& m);                                              // data_bindings.cpp
void bind_dlpack(pybind11::module_& m, pybind11::class_<plexus::Tensor>& tensor);  // dlpack_bindings.cpp
