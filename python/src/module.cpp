// plexus._plexus: the C++ frontend (plexus.hpp, nn.hpp, data.hpp) for
// Python, through pybind11. The Python package (python/plexus/) adds the
// MXNet/Gluon spellings on top. Waits (reading values, printing, training
// steps, loading data) run with the GIL released; a long wait polls for
// Python's signals so that Ctrl-C interrupts it (interruptible() below).
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cxxabi.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <thread>

#include "plexus/data.hpp"
#include "plexus/dlpack.h"
#include "plexus/nn.hpp"
#include "plexus/plexus.hpp"
#include "bindings.hpp"

namespace py = pybind11;
using plexus::Device;
using plexus::DType;
using plexus::Shape;
using plexus::Tensor;

namespace {

// ---- errors: the C++ types as Python classes that are also built-in kinds ----

struct Errors {
    PyObject *base, *device_mismatch, *shape, *dtype, *oom, *plugin, *unsupported, *invalid, *device;
};
Errors errors;

PyObject* new_error(py::module_& m, const char* name, std::initializer_list<PyObject*> bases, const char* doc) {
    py::tuple b(bases.size());
    size_t i = 0;
    for (PyObject* p : bases) b[i++] = py::reinterpret_borrow<py::object>(p);
    std::string qualified = std::string("plexus.") + name;
    PyObject* cls = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, b.ptr(), nullptr);
    if (!cls) throw py::error_already_set();
    m.attr(name) = py::reinterpret_borrow<py::object>(cls);
    return cls;
}

void register_errors(py::module_& m) {
    errors.base = new_error(m, "Error", {PyExc_Exception}, "Every Plexus error; the message is the C API's.");
    errors.device_mismatch = new_error(m, "DeviceMismatchError", {errors.base, PyExc_ValueError},
                                       "Inputs on different devices; the message says how to move one.");
    errors.shape = new_error(m, "ShapeError", {errors.base, PyExc_ValueError}, "Shapes that do not fit the op.");
    errors.dtype = new_error(m, "DTypeError", {errors.base, PyExc_TypeError}, "Dtypes that do not fit the op.");
    errors.oom = new_error(m, "OutOfMemoryError", {errors.base, PyExc_MemoryError}, "A device or the host ran out.");
    errors.plugin = new_error(m, "PluginError", {errors.base, PyExc_RuntimeError},
                              "A plugin is missing, failed to load, or lacks an (op, dtype).");
    errors.unsupported = new_error(m, "UnsupportedError", {errors.plugin}, "The device's plugin lacks this.");
    errors.invalid = new_error(m, "InvalidArgumentError", {errors.base, PyExc_RuntimeError},
                               "A bad argument or handle.");
    errors.device = new_error(m, "DeviceError", {errors.base, PyExc_RuntimeError},
                              "Work queued on a device failed; reported at the next wait.");
    // pybind11's translator type takes the pointer by value.
    py::register_exception_translator([](std::exception_ptr p) {  // NOLINT(performance-unnecessary-value-param)
        if (p && !set_python_error(p)) std::rethrow_exception(p);  // not ours: the next translator's
    });
}

}  // namespace

namespace {
// Sleeps for good: a daemon thread's end while the interpreter finalizes.
[[noreturn]] void park_thread() {
    for (;;) std::this_thread::sleep_for(std::chrono::hours(1));
}
}  // namespace

void GilReleased::take_back(PyThreadState* state) noexcept {
    try {
        PyEval_RestoreThread(state);
    } catch (abi::__forced_unwind&) {  // pthread_exit: the interpreter is finalizing
        park_thread();
    }
}

GilHeld::GilHeld() {
    try {
        state_ = PyGILState_Ensure();
    } catch (abi::__forced_unwind&) {  // pthread_exit: the interpreter is finalizing
        park_thread();
    }
}

py::object call_python(const py::handle& callable, const py::tuple& args, const py::handle& kwargs) {
    PyObject* result = nullptr;
    try {
        result = PyObject_Call(callable.ptr(), args.ptr(), kwargs.ptr());
    } catch (abi::__forced_unwind&) {  // pthread_exit: the interpreter is finalizing
        park_thread();
    }
    if (!result) throw py::error_already_set();
    return py::reinterpret_steal<py::object>(result);
}

void drop_with_gil(py::object& held) noexcept {
    PyObject* const p = held.release().ptr();
    if (!p || !Py_IsInitialized()) return;
    GilHeld gil;
    try {
        Py_DECREF(p);  // (may run Python code: a __del__)
    } catch (abi::__forced_unwind&) {
        park_thread();
    }
}

namespace {
// A message as a Python user names things: the C++ frontend's scopes
// (autograd::record(), Trainer::step) with Python's dots.
std::string python_words(const char* what) {
    std::string s = what;
    const auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
    for (size_t i = 1; i + 2 < s.size(); ++i)
        if (s[i] == ':' && s[i + 1] == ':' && ident(s[i - 1]) && ident(s[i + 2])) s.replace(i, 2, ".");
    return s;
}
}  // namespace

bool set_python_error(const std::exception_ptr& p) {
    const auto raise = [](PyObject* type, const std::exception& e) { PyErr_SetString(type, python_words(e.what()).c_str()); };
    try {
        std::rethrow_exception(p);
    } catch (const plexus::DeviceMismatchError& e) {
        raise(errors.device_mismatch, e);
    } catch (const plexus::ShapeError& e) {
        raise(errors.shape, e);
    } catch (const plexus::DTypeError& e) {
        raise(errors.dtype, e);
    } catch (const plexus::OutOfMemoryError& e) {
        raise(errors.oom, e);
    } catch (const plexus::UnsupportedError& e) {
        raise(errors.unsupported, e);
    } catch (const plexus::PluginError& e) {
        raise(errors.plugin, e);
    } catch (const plexus::InvalidArgumentError& e) {
        raise(errors.invalid, e);
    } catch (const plexus::DeviceError& e) {
        raise(errors.device, e);
    } catch (const plexus::Error& e) {
        raise(errors.base, e);
    } catch (...) {
        return false;
    }
    return true;
}

namespace {

// ---- waits that Ctrl-C interrupts ----

// Waits for the work queued on `d` in slices on the calling thread
// (px_runtime_poll, the GIL let go), checking for Python's signals between
// them; the slice that finds the work done reports its failure. A wait that
// Ctrl-C ends leaves the work running and any failure of it to the device's
// next wait (the host keeps it); no wait queues behind another thread's wait
// on another device.
void wait_until_finished(const Device& d) {
    for (;;) {
        int32_t finished = 0;
        {
            GilReleased release;
            plexus::check(px_runtime_poll(plexus::runtime(), d.raw(), 0.05, &finished));
        }
        if (finished != 0) return;
        if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    }
}

// Every device, each one even after another's failure; the first failure is
// raised, the others named after it (as px_runtime_synchronize_all).
void wait_all() {
    px_status first = PX_OK;
    std::string message;
    for (const Device& d : plexus::all_devices()) {
        try {
            wait_until_finished(d);
        } catch (const plexus::Error& e) {
            if (first == PX_OK) first = e.status(), message = e.what();
            else message += " (and on " + d.str() + ": " + e.what() + ")";
        }
    }
    if (first != PX_OK) plexus::throw_error(first, message);
}

}  // namespace

// The devices' work, each device's failure reported by its wait.
void wait_devices(const std::vector<Device>& devices) {
    std::vector<Device> each;
    for (const Device& d : devices)
        if (std::find(each.begin(), each.end(), d) == each.end()) each.push_back(d);
    for (const Device& d : each) wait_until_finished(d);
}

namespace {

// The devices of tensors, and of a dict's parameters' replicas.
std::vector<Device> devices_of(const std::vector<Tensor>& tensors) {
    std::vector<Device> out;
    for (const Tensor& t : tensors) out.push_back(t.device());
    return out;
}
std::vector<Device> devices_of(const plexus::nn::ParameterDict& params) {
    std::vector<Device> out;
    for (const auto& item : params)
        for (const Tensor& r : item.second->list_data()) out.push_back(r.device());
    return out;
}

// Waits for the work that makes `t`, interruptibly. Reads after it are quick.
void wait_for(const Tensor& t) { wait_devices({t.device()}); }

// ---- dtypes and devices ----

DType parse_dtype(const py::handle& h) {
    std::string name;
    if (py::isinstance<py::str>(h)) {
        name = h.cast<std::string>();
    } else if (h.ptr() == reinterpret_cast<PyObject*>(&PyFloat_Type)) {
        name = "float64";
    } else if (h.ptr() == reinterpret_cast<PyObject*>(&PyLong_Type)) {
        name = "int64";
    } else if (h.ptr() == reinterpret_cast<PyObject*>(&PyBool_Type)) {
        name = "bool";
    } else if (py::hasattr(h, "name") && py::isinstance<py::str>(h.attr("name"))) {
        name = h.attr("name").cast<std::string>();  // numpy.dtype
    } else if (py::hasattr(h, "__name__")) {
        name = h.attr("__name__").cast<std::string>();  // numpy.float32
    } else {
        throw plexus::DTypeError(PX_ERROR_DTYPE, "dtype " + py::repr(h).cast<std::string>() + " is not a dtype");
    }
    std::string known;
#define PLEXUS_PY_DTYPE_(dtype, number, dtype_name, ...)        \
    if (name == #dtype_name) return DType::dtype_name;          \
    known += std::string(known.empty() ? "" : ", ") + #dtype_name;
    PX_DTYPE_TABLE(PLEXUS_PY_DTYPE_)
#undef PLEXUS_PY_DTYPE_
    throw plexus::DTypeError(PX_ERROR_DTYPE, "dtype '" + name + "' is not a Plexus dtype (" + known + ")");
}

Device device_or_cpu(const std::optional<Device>& d) { return d ? *d : plexus::cpu(); }
// device= or MXNet's ctx=, as given (both only when they agree).
std::optional<Device> device_or_ctx(const std::optional<Device>& d, const std::optional<Device>& ctx) {
    if (d && ctx && !(*d == *ctx))
        throw py::value_error("device=" + d->str() + " and ctx=" + ctx->str() + " disagree");
    return d ? d : ctx;
}

Shape to_shape(const py::handle& h) {
    if (py::isinstance<py::int_>(h)) return Shape{h.cast<int64_t>()};
    Shape s;
    for (auto v : h) s.push_back(v.cast<int64_t>());
    return s;
}

py::tuple shape_tuple(const Shape& s) {
    py::tuple t(s.size());
    for (size_t i = 0; i < s.size(); ++i) t[i] = py::int_(s[i]);
    return t;
}

// ---- values to and from NumPy (copies) ----

template <class T>
py::array read_as(const Tensor& t) {
    Shape s = t.shape();
    py::array_t<T> out(std::vector<py::ssize_t>(s.begin(), s.end()));
    wait_for(t);
    {
        GilReleased release;
        plexus::check(px_tensor_to_host(t.handle(), out.mutable_data(), uint64_t(t.size()) * sizeof(T)));
    }
    return std::move(out);
}

py::array asnumpy(const Tensor& t) {
    switch (t.dtype()) {
    case DType::float32: return read_as<float>(t);
    case DType::float64: return read_as<double>(t);
    case DType::int32: return read_as<int32_t>(t);
    case DType::int64: return read_as<int64_t>(t);
    case DType::uint8: return read_as<uint8_t>(t);
    case DType::float16: return read_as<uint16_t>(t).attr("view")("float16");  // the same bits
    case DType::bfloat16:
        throw plexus::DTypeError(PX_ERROR_DTYPE,
                                 "bfloat16 has no NumPy type: t.astype('float32').asnumpy() gives its values exactly, "
                                 "and torch.from_dlpack(t) shares it with PyTorch");
    }
    throw plexus::DTypeError(PX_ERROR_DTYPE, "no NumPy type for this dtype");
}

// The values for Python numbers (item, tolist): bfloat16's through float32, which holds each exactly.
py::array values_array(const Tensor& t) {
    return asnumpy(t.dtype() == DType::bfloat16 ? t.astype(DType::float32) : t);
}

py::object item(const Tensor& t) {
    if (t.size() != 1)
        throw plexus::ShapeError(PX_ERROR_SHAPE,
                                 "item: the tensor has " + std::to_string(t.size()) + " elements, not 1");
    py::array a = values_array(t);
    return a.attr("reshape")(-1).attr("tolist")().cast<py::list>()[0];
}

std::string printed(const Tensor& t) {
    wait_for(t);
    GilReleased release;
    return plexus::values_string(t) + "\n" + plexus::describe(t);
}

// ---- where Python's spelling differs from C++'s ----

py::object as_in_context(const py::object& self, Device d) {
    const Tensor& t = self.cast<const Tensor&>();
    Tensor moved = t.as_in_context(d);
    return moved.is(t) ? self : py::cast(std::move(moved));
}

// An integer tensor as the operand of Python's true division: in float64.
Tensor as_quotient(const Tensor& t) { return is_floating(t.dtype()) ? t : t.astype(DType::float64); }

// Python's `//` on integer tensors, as NumPy's: the quotient rounded toward
// minus infinity (the op table's div truncates toward zero: one less where
// the remainder is nonzero and of the other sign than the divisor). A zero
// divisor fails on the device, as div does.
Tensor floor_divide(const Tensor& a, const Tensor& b) {
    if (is_floating(a.dtype()) || is_floating(b.dtype()))
        throw plexus::DTypeError(PX_ERROR_DTYPE, "// takes integer tensors, got " + std::string(plexus::name(a.dtype())) +
                                                     " and " + plexus::name(b.dtype()) + " (floats: there is no floor op; use /)");
    const Tensor q = a / b, r = a - q * b;
    const Tensor nonzero = (r < 0.0) + (r > 0.0), differ = plexus::not_equal(r < 0.0, b < 0.0);
    return q - (nonzero * differ).astype(q.dtype());
}

Tensor floor_divide(const Tensor& a, double b, bool scalar_first) {
    if (b != std::floor(b) || !std::isfinite(b))
        throw plexus::DTypeError(PX_ERROR_DTYPE, "// takes integers, got " + py::str(py::float_(b)).cast<std::string>());
    // In the dtype `a op b` takes (a's own unless it cannot hold b, as uint8
    // cannot hold -1), so b is never saturated to fit.
    const DType d = plexus::scalar_result_dtype(a, b);
    const Tensor s = plexus::full(plexus::Shape{}, b, a.device(), d), x = a.dtype() == d ? a : a.astype(d);
    return scalar_first ? floor_divide(s, x) : floor_divide(x, s);
}

// An initializer compared by identity: a Python subclass of Initializer, or Custom.
bool by_identity(const py::object& init) {
    return !py::type::of(init).is(py::type::of<plexus::nn::Initializer>()) ||
           init.cast<const plexus::nn::Initializer&>().kind == plexus::nn::Initializer::custom;
}

// Gluon's block.share_parameters for the layers that offer it (Dense, Conv2D).
void share(plexus::nn::Block& b, const plexus::nn::ParameterDict& params) {
    auto* layer = dynamic_cast<plexus::nn::WeightedLayer*>(&b);
    if (!layer)
        throw py::type_error(b.describe() + ": share_parameters is offered by Dense and Conv2D (a weight and a bias); "
                                            "add the same block twice to tie a whole block");
    layer->share_parameters(params);
}

// ---- writing in place: x[...] = v, x += v ----

// `result` written into t's own memory (Tensor::assign), so every name for
// t (a list's element, a parameter) sees it, as in NumPy and PyTorch; d2l's
// from-scratch sgd (`param -= lr * param.grad / batch_size`) needs it. The
// op computes in the promoted dtype and the result is written in t's, as
// NumPy's and PyTorch's in-place ops, unless that would drop a fraction.
Tensor& in_place(Tensor& t, const Tensor& result, const char* op) {
    if (is_floating(result.dtype()) && !is_floating(t.dtype()))
        throw plexus::DTypeError(PX_ERROR_DTYPE, std::string("x ") + op + "= y: the result is " +
                                                     plexus::name(result.dtype()) + " and x is " + plexus::name(t.dtype()) +
                                                     "; in place it would lose fractions or values " +
                                                     plexus::name(t.dtype()) + " cannot hold (write x = x " + op + " y)");
    return t.assign(result);
}


// x op y for y a number (the scalar rules: int32 + 1 stays int32) or anything operand() takes.
template <class WithNumber, class WithTensor>
Tensor with_operand(const Tensor& x, const py::object& y, WithNumber with_number, WithTensor with_tensor,
                    const char* in_place_op = nullptr) {
    if (is_number(y) && (is_floating(x.dtype()) || !integer_beyond_double(y))) return with_number(x, y.cast<double>());
    return with_tensor(x, operand(x, y, in_place_op));
}

// What NumPy makes an array of: a list, a tuple, or an object offering the
// array interface (a NumPy array).
bool array_like(const py::object& y) {
    return py::isinstance<py::list>(y) || py::isinstance<py::tuple>(y) || py::hasattr(y, "__array_interface__") ||
           py::hasattr(y, "__array__");
}

// x op y for the operators: as with_operand for a number or an array-like,
// NotImplemented for anything else, so that Python asks y's own operator.
template <class WithNumber, class WithTensor>
py::object with_other(const Tensor& x, const py::object& y, WithNumber with_number, WithTensor with_tensor) {
    if (!is_number(y) && !array_like(y)) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
    return py::cast(with_operand(x, y, with_number, with_tensor));
}

// x op= y, as with_operand, the result written into x. An integer number
// x's integer dtype cannot hold is refused, as in a list (`uint8 += 300`
// had wrapped to += 44 where `uint8 += [300]` was refused).
template <class WithNumber, class WithTensor>
Tensor& in_place_op(Tensor& x, const py::object& y, const char* op, WithNumber with_number, WithTensor with_tensor) {
    // An integer, or a whole float (which follows the scalar rules into x's dtype: int32 *= 2.0 stays int32).
    const auto whole_number = [&] {
        if (py::isinstance<py::bool_>(y) || !is_number(y)) return false;
        const char kind = PyLong_Check(y.ptr()) ? 'i' : PyFloat_Check(y.ptr()) ? 'f' : numpy_kind(y);
        if (kind == 'i' || kind == 'u') return true;
        const double v = kind == 'f' ? y.cast<double>() : NAN;
        return std::isfinite(v) && v == std::trunc(v);
    };
    if (!is_floating(x.dtype()) && whole_number()) {
        const py::int_ v(y);
        if (!fits(x.dtype(), v, v))
            throw plexus::DTypeError(PX_ERROR_DTYPE, std::string("x ") + op + "= y: y is " + py::str(py::handle(v)).cast<std::string>() +
                                                         ", which " + plexus::name(x.dtype()) + " cannot hold (" +
                                                         range_of(x.dtype()) + "); write x = x " + op +
                                                         " y for a result that holds it");
    }
    return in_place(x, with_operand(x, y, with_number, with_tensor, op), op);
}

// Python's `/`, as NumPy's: integer tensors divide in float64
// (`arange(4, dtype='int32') / 2` is [0. 0.5 1. 1.5]); C and C++ keep C's
// truncating integer division.
Tensor true_divide(const Tensor& a, const Tensor& b) {
    if (!is_floating(a.dtype()) && !is_floating(b.dtype())) return a.astype(DType::float64) / b.astype(DType::float64);
    return a / b;
}

Tensor full_of(const Shape& shape, const py::object& value, Device d, DType dt) {
    // float() of it: a clear TypeError for what is no number, OverflowError for an int beyond doubles.
    if (is_floating(dt) || !is_number(value)) return plexus::full(shape, py::float_(value).cast<double>(), d, dt);
    const std::string text = py::str(value).cast<std::string>();
    const bool integral = PyLong_Check(value.ptr()) || std::string("biu").find(numpy_kind(value)) != std::string::npos;
    if (!integral && !std::isfinite(py::float_(value).cast<double>()))  // a value the dtype cannot hold, as 3e9
        throw plexus::DTypeError(PX_ERROR_DTYPE, "full: " + text + " cannot be stored in " + plexus::name(dt));
    const py::int_ whole(value);  // an int as it is (beyond doubles too), a float toward zero
    if (!fits(dt, whole, whole))
        throw plexus::DTypeError(PX_ERROR_DTYPE, "full: " + text + " is beyond what " + plexus::name(dt) + " holds (" +
                                                     range_of(dt) + ")");
    if (!integer_beyond_double(value)) return plexus::full(shape, py::float_(value).cast<double>(), d, dt);
    Tensor t = plexus::empty(shape, d, dt);
    t.assign(from_numpy(whole, d, dt));
    return t;
}
// block.weight or block.bias, or AttributeError with the block's words.
plexus::nn::Parameter& attribute(plexus::nn::Block& b, plexus::nn::Parameter& (plexus::nn::Block::*get)()) {
    try {
        return (b.*get)();
    } catch (const plexus::InvalidArgumentError& e) {
        throw py::attribute_error(e.what());
    }
}

// ---- autograd scopes as context managers ----

struct ScopeManager {
    bool recording = false, training = false;
    std::optional<plexus::autograd::Scope> scope;
    void enter() { scope.emplace(recording, training); }
    void exit() { scope.reset(); }
};

// nn.autocast(dtype) as a context manager; the dtype is checked when it is made.
struct AutocastManager {
    plexus::DType dtype = plexus::DType::float32;
    std::optional<plexus::nn::Autocast> scope;
    void enter() {
        if (scope)
            throw plexus::InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT,
                                               "nn.autocast: this scope is already entered; make another with nn.autocast()");
        scope.emplace(dtype);
    }
    void exit() { scope.reset(); }
};

// A Block written in Python, as in Gluon and d2l: a subclass calls
// super().__init__(), assigns its child blocks as attributes (plexus/nn.py
// registers them) and defines forward(x).
class PyBlock : public plexus::nn::Block {
public:
    Tensor forward(const Tensor& x) override {
        GilHeld gil;
        // self.forward, looked up directly: pybind11's get_override gives none while that very forward
        // runs, so a block that calls itself on a part of its input would not find it. (Block.forward
        // itself refuses a Python block: super().forward(x) would come back here.)
        const py::object self = py::cast(static_cast<const plexus::nn::Block*>(this));
        const py::object own = py::getattr(self, "forward");
        if (py::getattr(own, "__func__", own).is(py::type::of<plexus::nn::Block>().attr("forward"))) no_forward(self);
        const py::object y = call_python(own, py::make_tuple(x));
        if (!py::isinstance<Tensor>(y))
            throw py::type_error(py::str(py::type::of(self).attr("__name__")).cast<std::string>() +
                                 ".forward returned a " + py::str(py::type::of(y).attr("__name__")).cast<std::string>() +
                                 ", not a Tensor" +
                                 (summarising() ? ": summary() lists blocks that give one tensor" :
                                                  ": a Sequential passes one tensor from block to block"));
        return y.cast<Tensor>();
    }
    // Whether Block::summary is running on this thread (a Python block's
    // call goes through C++ then, for its row).
    static bool summary_running() { return summarising(); }
    [[noreturn]] static void no_forward(const py::handle& self) {
        throw py::type_error(py::str(py::type::of(self).attr("__name__")).cast<std::string>() +
                             " has no forward(x) of its own: a Block written in Python defines it");
    }
    std::string describe() const override {
        GilHeld gil;
        if (py::function own = py::get_override(static_cast<const plexus::nn::Block*>(this), "describe"))
            return call_python(own, py::tuple()).cast<std::string>();
        const std::string kind = py::str(py::type::of(py::cast(this)).attr("__name__"));
        return children().empty() ? kind : with_children(kind);  // as Gluon prints a block's children
    }
    void add_child(const std::string& name, std::shared_ptr<plexus::nn::Block> block) {
        register_child_shared(name, std::move(block));
    }
    // A parameter assigned as an attribute (d2l's custom layers). The block
    // holds it (its attribute may be deleted or replaced while a dict or a
    // trainer still points to it); every parameter is held by a shared_ptr
    // (one made in Python, a layer's own).
    void add_param(plexus::nn::Parameter& p) {
        for (plexus::nn::Parameter* mine : params_)
            if (mine->name() == p.name() && mine != &p)
                throw py::value_error("the block already has a parameter named '" + p.name() + "'");
        if (std::find(params_.begin(), params_.end(), &p) != params_.end()) return;
        held_.push_back(p.shared_from_this());
        params_.push_back(&p);
    }

    // block.weight / block.bias: its parameter of that name.
    plexus::nn::Parameter& weight() override {
        plexus::nn::Parameter* p = named("weight");
        return p ? *p : Block::weight();
    }
    plexus::nn::Parameter& bias() override {
        plexus::nn::Parameter* p = named("bias");
        return p ? *p : Block::bias();
    }

protected:
    std::vector<plexus::nn::Parameter*> own_params() override { return params_; }

private:
    plexus::nn::Parameter* named(const char* name) const {
        for (plexus::nn::Parameter* p : params_)
            if (p->name() == name) return p;
        return nullptr;
    }
    std::vector<plexus::nn::Parameter*> params_;
    std::vector<std::shared_ptr<plexus::nn::Parameter>> held_;  // params_, kept
};

template <class B>
using BlockClass = py::class_<B, plexus::nn::Block, std::shared_ptr<B>>;

// Keeps `owner` alive while `held` lives, as pybind11's keep_alive does, but
// through `held`'s __dict__ (its class has py::dynamic_attr()), where
// Python's cycle collector sees it: keep_alive's own list is invisible to the
// collector, so a cycle through one (d2l's model.trainer = trainer, whose
// Trainer holds model.collect_params()) was never collected.
void keep_owner(py::handle held, py::handle owner) {
    py::object owners = py::getattr(held, "_plexus_owners", py::none());
    if (owners.is_none()) {
        owners = py::list();
        py::setattr(held, "_plexus_owners", owners);
    }
    for (py::handle o : owners)
        if (o.is(owner)) return;
    owners.cast<py::list>().append(owner);
}

// A parameter by its own shared_ptr (every parameter has one: made in
// Python or a layer's own), so its Python object needs no owner kept.
py::object shared_parameter(plexus::nn::Parameter& p) { return py::cast(p.shared_from_this()); }

// A ParameterDict of `block` (collect_params), keeping the block and every
// block under it: a child replaced later (`net.fc = nn.Dense(4)`) keeps the
// parameters the dict points to.
py::object params_of(const py::object& block, plexus::nn::ParameterDict params) {
    py::object made = py::cast(std::move(params));
    keep_owner(made, block);
    std::vector<const plexus::nn::Block*> todo{&block.cast<const plexus::nn::Block&>()};
    while (!todo.empty()) {
        const plexus::nn::Block* b = todo.back();
        todo.pop_back();
        for (const auto& [name, child] : b->children()) {
            keep_owner(made, py::cast(child));
            todo.push_back(child.get());
        }
    }
    return made;
}

// Whether `self`'s C++ object exists: a Block written in Python has none
// until its __init__ has called Block's (super().__init__()), and a method
// of it called before would be handed a null one.
bool block_made(py::handle self) {  // (a block C++ owns, handed out by reference, has no holder but a value)
    return reinterpret_cast<py::detail::instance*>(self.ptr())->get_value_and_holder().value_ptr() != nullptr;
}

// The Block written in Python that `self` is, once made (block_made).
PyBlock* python_block(py::handle self, const char* what) {
    if (!block_made(self))
        throw py::type_error(std::string("cannot assign ") + what + " to " + py::str(py::type::of(self).attr("__name__")).cast<std::string>() +
                             " before Block.__init__() has run: call super().__init__() first in its __init__");
    auto* own = dynamic_cast<PyBlock*>(&self.cast<plexus::nn::Block&>());
    if (!own) throw py::type_error(std::string("only a Block written in Python registers ") + what + " this way");
    return own;
}

}  // namespace

namespace {
// A learning-rate schedule that calls a Python callable with the update's
// number; the trainer may call it with the GIL released (step()). It holds
// the callable weakly where it can: the Trainer that uses it holds it in its
// __dict__ (plexus/nn.py), where the cycle collector sees it (a schedule that
// is a method of the object owning the trainer made a cycle it could not see).
class CallableSchedule : public plexus::nn::LRScheduler {
public:
    explicit CallableSchedule(py::object schedule) : LRScheduler("a Python schedule", 0, 0, 0) {
        if (PyType_SUPPORTS_WEAKREFS(Py_TYPE(schedule.ptr())))
            schedule_ = py::weakref(schedule);
        else
            schedule_ = std::move(schedule);
    }
    ~CallableSchedule() override { drop_with_gil(schedule_); }
    CallableSchedule(const CallableSchedule&) = delete;
    CallableSchedule& operator=(const CallableSchedule&) = delete;

private:
    double after_warmup(int64_t num_update) const override {
        GilHeld held;
        py::object callable = schedule_;
        if (py::isinstance<py::weakref>(schedule_)) {
            callable = schedule_();
            if (callable.is_none())
                throw plexus::InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT,
                                                   "the learning-rate schedule is gone: set it with "
                                                   "Trainer.set_lr_scheduler, which keeps it");
        }
        return checked_rate(call_python(callable, py::make_tuple(num_update)), num_update);
    }
    static double checked_rate(const py::object& given, int64_t num_update) {
        double rate = 0;
        try {
            rate = given.cast<double>();
        } catch (const py::cast_error&) {
            throw plexus::InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT,
                                               "the learning-rate schedule gave a " +
                                                   py::str(py::type::of(given).attr("__name__")).cast<std::string>() +
                                                   " for update " + std::to_string(num_update) + ", not a number");
        }
        if (!(rate >= 0 && std::isfinite(rate)))
            throw plexus::InvalidArgumentError(PX_ERROR_INVALID_ARGUMENT,
                                               "the learning-rate schedule gave " + std::to_string(rate) +
                                                   " for update " + std::to_string(num_update) +
                                                   "; a rate must be finite and >= 0");
        return rate;
    }
    py::object schedule_;
};

// An initializer written in Python (a subclass of plexus.init.Initializer
// with _init_weight(name, data), as Gluon's), for nn::Initializer::Custom.
// Copies of the initializer share one of these, so copying never touches a
// Python reference count; the last lets the Python object go with the GIL
// held (a parameter may be dropped where it is not).
class PythonFill {
public:
    explicit PythonFill(py::object init) : init_(std::move(init)) {}
    ~PythonFill() { drop_with_gil(init_); }
    PythonFill(const PythonFill&) = delete;
    PythonFill& operator=(const PythonFill&) = delete;
    void operator()(const std::string& name, Tensor& data) const {
        GilHeld held;  // a deferred parameter is made at the first forward call, maybe without it
        call_python(init_.attr("_init_weight"), py::make_tuple(name, data));
    }

private:
    py::object init_;
};

// A reduction over every axis of t: a scalar, or with keepdims t's rank of ones, as NumPy's.
Tensor all_axes(const Tensor& reduced, const Tensor& t, bool keepdims) {
    return keepdims ? reduced.reshape(Shape(size_t(t.ndim()), 1)) : reduced;
}

plexus::nn::GradReq grad_req_of(const py::object& given) {
    if (!py::isinstance<py::str>(given))
        throw py::type_error("grad_req is 'write', 'add' or 'null', not a " +
                             py::str(py::type::of(given).attr("__name__")).cast<std::string>());
    const auto req = given.cast<std::string>();
    if (req == "write") return plexus::nn::GradReq::write;
    if (req == "add") return plexus::nn::GradReq::add;
    if (req == "null") return plexus::nn::GradReq::null;
    throw py::value_error("grad_req '" + req + "' is not 'write', 'add' or 'null'");
}
std::string grad_req_name(plexus::nn::GradReq req) {
    return req == plexus::nn::GradReq::write ? "write" : req == plexus::nn::GradReq::add ? "add" : "null";
}
// A Parameter made from Python: dimensions above 0, or (deferred) 0 where a
// layer's first forward call gives them.
std::shared_ptr<plexus::nn::Parameter> made_parameter(const std::string& name, const std::vector<int64_t>& shape,
                                                      const py::object& init, const py::object& grad_req,
                                                      double lr_mult, double wd_mult, bool differentiable,
                                                      bool deferred) {
    for (int64_t d : shape)
        if (d < 0 || (d == 0 && !deferred))
            throw py::value_error("Parameter " + name + ": every dimension of the shape must be above 0");
    const plexus::nn::GradReq req = grad_req_of(grad_req);
    auto made = init.is_none()
                    ? std::make_shared<plexus::nn::Parameter>(name, Shape(shape), req, differentiable)
                    : std::make_shared<plexus::nn::Parameter>(
                          name, Shape(shape),
                          py::module_::import("plexus.init").attr("create")(init).cast<plexus::nn::Initializer>(), req,
                          differentiable);
    made->set_lr_mult(lr_mult);
    made->set_wd_mult(wd_mult);
    return made;
}

}  // namespace

PYBIND11_MODULE(_plexus, m) {
    m.doc() = "Plexus tensors, devices, autograd and nn (the C++ frontend through pybind11)";
    register_errors(m);
    bind_trace(m);
    // pybind11 (2.10) looks NumPy's C API up in a function-local static at
    // its first use, importing NumPy with the static's guard held; the
    // import lets the GIL go, so two threads' first asnumpy() deadlocked
    // (one waits on the guard holding the GIL, the other for the GIL inside
    // the guard). Looked up here, under the import's single thread. Without
    // NumPy it fails and is looked up (and fails again) where used.
    try {
        py::detail::npy_api::get();
    } catch (const py::error_already_set&) {
    }

    // ---- devices ----
    py::class_<Device>(m, "Device")
        .def(py::init([](const std::string& kind, int index) {
                 if (kind == "cpu") return plexus::cpu(index);
                 if (kind == "gpu") return plexus::gpu(index);
                 // By the device's own name (naive(0)), as its tensors report it.
                 if (kind == "accel") return plexus::resolve(plexus::accel(index));
                 // A kind a plugin names ("naive"): known once the plugins are loaded.
                 if (index < 0) throw py::value_error("device index " + std::to_string(index) + " is below 0");
                 return plexus::parse_device(kind + ":" + std::to_string(index));
             }),
             py::arg("kind"), py::arg("index") = 0)
        .def_static("parse", &plexus::parse_device, py::arg("text"),
                    "The device 'naive:0', 'naive(0)', 'gpu:1' or 'cpu' names (a kind alone: index 0)")
        .def_property_readonly("device_type", &Device::kind_name)
        .def_property_readonly("device_id", [](const Device& d) { return d.index; })
        .def("__repr__", &Device::str)
        .def("__str__", &Device::str)
        .def("__eq__", [](const Device& a, const py::object& b) {
            return py::isinstance<Device>(b) && a == b.cast<Device>();
        })
        .def("__hash__", [](const Device& d) { return (int64_t(d.kind) << 32) ^ d.index; });
    m.def("cpu", &plexus::cpu, py::arg("i") = 0);
    m.def("gpu", &plexus::gpu, py::arg("i") = 0);
    m.def("num_gpus", &plexus::num_gpus);
    m.def("try_gpu", &plexus::try_gpu, py::arg("i") = 0);
    m.def("try_all_gpus", &plexus::try_all_gpus);
    m.def("device_plugin", &plexus::plugin_of);
    m.def("waitall", &wait_all);
    m.def("seed", [](uint64_t s) { plexus::check(px_runtime_seed(plexus::runtime(), s)); });
    m.def("version", [] {
        const px_version_info* v = px_version();
        return py::make_tuple(v->text, v->abi, py::make_tuple(v->plugin_abi_major, v->plugin_abi_minor),
                              py::make_tuple(v->dlpack_major, v->dlpack_minor));
    });

    // ---- tensors ----
    py::class_<Tensor> tensor(m, "Tensor");
    tensor.def_property_readonly("device", &Tensor::device)
        .def_property_readonly("shape", [](const Tensor& t) { return shape_tuple(t.shape()); })
        .def_property_readonly("_dtype_name", [](const Tensor& t) { return std::string(plexus::name(t.dtype())); })
        .def_property_readonly("ndim", &Tensor::ndim)
        .def_property_readonly("size", &Tensor::size)
        .def("__len__", [](const Tensor& t) {
            Shape s = t.shape();
            if (s.empty()) throw py::type_error("len() of a scalar tensor");
            return s[0];
        })
        .def("copyto", &Tensor::copyto, py::arg("device"))
        // The very Python object when the tensor is already there (d2l: `Z.as_in_ctx(ctx) is Z`).
        .def("as_in_context", &as_in_context, py::arg("device"))
        .def("as_in_ctx", &as_in_context, py::arg("device"))
        .def("asnumpy", &asnumpy)
        .def("__array__", [](const Tensor& t, const py::object& dtype) {
            py::array a = asnumpy(t);
            return dtype.is_none() ? py::object(a) : a.attr("astype")(dtype);
        }, py::arg("dtype") = py::none())
        .def("item", &item)
        .def("asscalar", &item)  // MXNet's name
        .def("copy", [](const Tensor& t) { return t.copyto(t.device()); })
        // A bound of None leaves that side open, as np.clip.
        .def("clip", [](const Tensor& t, const std::optional<double>& lo, const std::optional<double>& hi) {
            if (lo && hi) return plexus::clip(t, *lo, *hi);
            if (lo) return plexus::maximum(t, *lo);
            if (hi) return plexus::minimum(t, *hi);
            throw py::value_error("clip: give a_min, a_max or both");
        }, py::arg("a_min"), py::arg("a_max"))
        .def("expand_dims", [](const Tensor& t, int axis) { return plexus::expand_dims(t, axis); }, py::arg("axis"))
        // Every axis of length 1, or the one named (which must have length 1), as NumPy's.
        .def("squeeze", [](const Tensor& t, const py::object& axis) {
            if (PyIndex_Check(axis.ptr())) return plexus::squeeze(t, axis.cast<int>());
            Shape kept;
            if (axis.is_none()) {
                for (int64_t d : t.shape())
                    if (d != 1) kept.push_back(d);
                return t.reshape(kept);
            }
            // Several axes: each must have length 1; removed from the last, so the others keep their places.
            std::vector<int> axes;
            for (auto a : axis) axes.push_back(a.cast<int>() < 0 ? a.cast<int>() + t.ndim() : a.cast<int>());
            std::sort(axes.rbegin(), axes.rend());
            if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
                throw py::value_error("squeeze: an axis is repeated");
            Tensor out = t;
            for (int a : axes) out = plexus::squeeze(out, a);
            return out;
        }, py::arg("axis") = py::none())
        .def("norm", [](const Tensor& t) { return plexus::norm(t); })
        .def("argmin", [](const Tensor& t, const std::optional<int>& axis, bool keepdims) {
            return axis ? plexus::argmin(t, *axis, keepdims) : all_axes(plexus::argmin(t), t, keepdims);
        }, py::arg("axis") = py::none(), py::arg("keepdims") = false)
        .def("zeros_like", [](const Tensor& t) { return plexus::zeros_like(t); })
        .def("ones_like", [](const Tensor& t) { return plexus::ones_like(t); })
        .def("tolist", [](const Tensor& t) { return values_array(t).attr("tolist")(); })
        .def("wait_to_read", [](const Tensor& t) { wait_for(t); })
        .def("__repr__", &printed)
        .def("__str__", &printed)
        .def("is_", [](const Tensor& a, const Tensor& b) { return a.is(b); })
        .def("reshape", [](const Tensor& t, const py::args& args) {
            if (args.size() == 1 && !py::isinstance<py::int_>(args[0])) return t.reshape(to_shape(args[0]));
            return t.reshape(to_shape(args));
        })
        .def("transpose", [](const Tensor& t, const py::args& args) {
            std::vector<int32_t> perm;
            py::handle axes = args.size() == 1 && !py::isinstance<py::int_>(args[0]) ? args[0] : args;
            if (!axes.is_none())
                for (auto a : axes) perm.push_back(a.cast<int32_t>());
            return t.transpose(perm);
        })
        .def_property_readonly("T", &Tensor::T)
        .def("astype", [](const Tensor& t, const py::object& d) { return t.astype(parse_dtype(d)); })
        .def("__getitem__", &getitem)
        .def("__setitem__", &setitem)
        .def("assign", [](Tensor& t, const py::object& v) -> Tensor& { return t.assign(assigned_values(t, v)); },
             py::arg("values"), py::return_value_policy::reference)
        .def("__iadd__", [](Tensor& a, const py::object& b) -> Tensor& {
            return in_place_op(a, b, "+", [](const Tensor& x, double y) { return x + y; },
                               [](const Tensor& x, const Tensor& y) { return x + y; });
        }, py::is_operator(), py::return_value_policy::reference)
        .def("__isub__", [](Tensor& a, const py::object& b) -> Tensor& {
            return in_place_op(a, b, "-", [](const Tensor& x, double y) { return x - y; },
                               [](const Tensor& x, const Tensor& y) { return x - y; });
        }, py::is_operator(), py::return_value_policy::reference)
        .def("__imul__", [](Tensor& a, const py::object& b) -> Tensor& {
            return in_place_op(a, b, "*", [](const Tensor& x, double y) { return x * y; },
                               [](const Tensor& x, const Tensor& y) { return x * y; });
        }, py::is_operator(), py::return_value_policy::reference)
        .def("__itruediv__", [](Tensor& a, const py::object& b) -> Tensor& {
            return in_place_op(a, b, "/", [](const Tensor& x, double y) { return as_quotient(x) / y; },
                               [](const Tensor& x, const Tensor& y) { return as_quotient(x) / y; });
        }, py::is_operator(), py::return_value_policy::reference)
        .def("__ifloordiv__", [](Tensor& a, const py::object& b) -> Tensor& {
            return in_place_op(a, b, "//", [](const Tensor& x, double y) { return floor_divide(x, y, false); },
                               [](const Tensor& x, const Tensor& y) { return floor_divide(x, y); });
        }, py::is_operator(), py::return_value_policy::reference)
        .def("__ipow__", [](Tensor& a, const py::object& b) -> Tensor& {
            return in_place_op(a, b, "**", [](const Tensor& x, double y) { return x.pow(y); },
                               [](const Tensor& x, const Tensor& y) { return x.pow(y); });
        }, py::is_operator(), py::return_value_policy::reference)
        .def("slice_axis", &Tensor::slice_axis, py::arg("axis"), py::arg("begin"), py::arg("end"), py::arg("step") = 1)
        // arithmetic: Tensor op Tensor, Tensor op number, number op Tensor, and a NumPy array or a list on
        // either side (made a tensor on the tensor's device, as in place; Tensor.__array_ufunc__, in
        // plexus/__init__.py, has NumPy's own operator call these, so np_array * x is a tensor too)
#define PLEXUS_PY_ARITHMETIC_(name, tensors, number_right, number_left)                                             \
    .def("__" name "__", [](const Tensor& a, const Tensor& b) { return tensors(a, b); }, py::is_operator())          \
        .def("__" name "__", [](const Tensor& a, double b) { return number_right(a, b); }, py::is_operator())       \
        .def("__" name "__", [](const Tensor& a, const py::object& b) {                                           \
            return with_other(a, b, [](const Tensor& x, double v) { return number_right(x, v); },                 \
                              [](const Tensor& x, const Tensor& y) { return tensors(x, y); });                     \
        }, py::is_operator())                                                                                      \
        .def("__r" name "__", [](const Tensor& a, double b) { return number_left(a, b); }, py::is_operator())      \
        .def("__r" name "__", [](const Tensor& a, const py::object& b) {                                          \
            return with_other(a, b, [](const Tensor& x, double v) { return number_left(x, v); },                  \
                              [](const Tensor& x, const Tensor& y) { return tensors(y, x); });                     \
        }, py::is_operator())
        PLEXUS_PY_ARITHMETIC_("add", [](const Tensor& x, const Tensor& y) { return x + y; },
                              [](const Tensor& x, double v) { return x + v; }, [](const Tensor& x, double v) { return v + x; })
        PLEXUS_PY_ARITHMETIC_("sub", [](const Tensor& x, const Tensor& y) { return x - y; },
                              [](const Tensor& x, double v) { return x - v; }, [](const Tensor& x, double v) { return v - x; })
        PLEXUS_PY_ARITHMETIC_("mul", [](const Tensor& x, const Tensor& y) { return x * y; },
                              [](const Tensor& x, double v) { return x * v; }, [](const Tensor& x, double v) { return v * x; })
        PLEXUS_PY_ARITHMETIC_("truediv", true_divide, [](const Tensor& x, double v) { return as_quotient(x) / v; },
                              [](const Tensor& x, double v) { return v / as_quotient(x); })
        PLEXUS_PY_ARITHMETIC_("floordiv", [](const Tensor& x, const Tensor& y) { return floor_divide(x, y); },
                              [](const Tensor& x, double v) { return floor_divide(x, v, false); },
                              [](const Tensor& x, double v) { return floor_divide(x, v, true); })
        PLEXUS_PY_ARITHMETIC_("pow", [](const Tensor& x, const Tensor& y) { return x.pow(y); },
                              [](const Tensor& x, double v) { return x.pow(v); },
                              [](const Tensor& x, double v) { return plexus::pow(v, x); })
#undef PLEXUS_PY_ARITHMETIC_
        .def("__matmul__", [](const Tensor& a, const Tensor& b) { return plexus::matmul(a, b); }, py::is_operator())
        // an array-like operand in the tensor's dtype (matmul takes one dtype)
        .def("__matmul__", [](const Tensor& a, const py::object& b) -> py::object {
            if (!array_like(b)) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
            return py::cast(plexus::matmul(a, from_numpy(b, a.device(), a.dtype())));
        }, py::is_operator())
        .def("__rmatmul__", [](const Tensor& a, const py::object& b) -> py::object {
            if (!array_like(b)) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
            return py::cast(plexus::matmul(from_numpy(b, a.device(), a.dtype()), a));
        }, py::is_operator())
        .def("__neg__", [](const Tensor& a) { return -a; })
        // comparisons (uint8 results), with the same operands as the arithmetic; Python reflects them
        // (np_array < x is x > np_array), and x == None is False
#define PLEXUS_PY_COMPARISON_(name)                                                                                 \
    .def("__" #name "__", [](const Tensor& a, const Tensor& b) { return a.name(b); }, py::is_operator())             \
        .def("__" #name "__", [](const Tensor& a, double b) { return a.name(b); }, py::is_operator())              \
        .def("__" #name "__", [](const Tensor& a, const py::object& b) {                                           \
            return with_other(a, b, [](const Tensor& x, double v) { return x.name(v); },                           \
                              [](const Tensor& x, const Tensor& y) { return x.name(y); });                          \
        }, py::is_operator())
        PLEXUS_PY_COMPARISON_(lt) PLEXUS_PY_COMPARISON_(le) PLEXUS_PY_COMPARISON_(gt) PLEXUS_PY_COMPARISON_(ge)
        PLEXUS_PY_COMPARISON_(eq) PLEXUS_PY_COMPARISON_(ne)
#undef PLEXUS_PY_COMPARISON_
        .def("__hash__", [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.handle()); })
        .def("__bool__", [](const Tensor& t) {
            if (t.size() != 1)
                throw py::value_error("the truth value of a tensor of " + std::to_string(t.size()) +
                                      " elements is ambiguous; use .item() on a one-element tensor");
            return item(t).cast<bool>();
        })
        .def("__abs__", &Tensor::abs)
        .def("leaky_relu", [](const Tensor& t, double alpha) { return t.leaky_relu(alpha); }, py::arg("alpha") = 0.01)
        // autograd
        .def("attach_grad", &Tensor::attach_grad, py::arg("grad_req") = "write")
        .def_property_readonly("grad", &Tensor::grad)
        .def("backward", [](const Tensor& t, const std::optional<Tensor>& head, bool retain_graph) {
            t.backward(head ? *head : Tensor(), retain_graph);
        }, py::arg("out_grad") = py::none(), py::arg("retain_graph") = false)
        .def("detach", &Tensor::detach)
        // PyTorch's name: the writes in place Plexus made to this memory (px_tensor_version).
        .def_property_readonly("_version", &Tensor::version);
    bind_dlpack(m, tensor);  // dlpack_bindings.cpp: __dlpack__, __dlpack_device__, from_dlpack
    // reductions: over all axes (axis None), one, or several (a tuple or list, as NumPy's)
    // dtype= and out= as NumPy's own functions pass them (np.sum(x) calls x.sum(axis=None, out=None)):
    // sum's and mean's dtype= computes in that float dtype (an integer one would accumulate otherwise than
    // NumPy's, which wraps); out names no array Plexus can write into.
    auto reduction = [&](const char* name, px_op op) {
        tensor.def(name, [op, name](const Tensor& given, const py::object& axis, bool keepdims, const py::object& dtype,
                                    const py::object& out) {
            if (!out.is_none())
                throw py::type_error(std::string(name) + ": out= is not supported; the result is a new tensor "
                                     "(write out[...] = x." + name + "(...))");
            if (!dtype.is_none() && op != PX_OP_SUM && op != PX_OP_MEAN)
                throw py::type_error(std::string(name) + ": takes no dtype= (as NumPy's)");
            const DType in = dtype.is_none() ? given.dtype() : parse_dtype(dtype);
            if (!dtype.is_none() && !is_floating(in))
                throw py::type_error(std::string(name) + ": dtype= takes a float dtype, not " + plexus::name(in) +
                                     " (integers sum in int64; convert the result with astype)");
            const Tensor t = in == given.dtype() ? given : given.astype(in);
            if (axis.is_none()) return all_axes(t.reduce(op), t, keepdims);
            if (PyIndex_Check(axis.ptr())) return t.reduce(op, axis.cast<int>(), keepdims);
            if (!py::isinstance<py::tuple>(axis) && !py::isinstance<py::list>(axis))
                throw py::type_error("axis is an int, a tuple or list of ints, or None; got a " +
                                     std::string(py::str(py::type::of(axis).attr("__name__"))));
            return t.reduce(op, axis.cast<std::vector<int>>(), keepdims);
        }, py::arg("axis") = py::none(), py::arg("keepdims") = false, py::arg("dtype") = py::none(),
           py::arg("out") = py::none());
    };
    // A method per unary op and reduction of the op table, named as its row
    // (x.exp(), x.sum(axis=None, keepdims=False)); plexus/__init__.py makes
    // the module's functions (plexus.exp(x)) from _unary_ops.
    py::list unary_ops;
    auto bind_row = [&](const char* name, px_op op, int32_t family) {
        if (family == PX_FAMILY_REDUCE) reduction(name, op);
        if (family != PX_FAMILY_UNARY) return;
        tensor.def(name, [op](const Tensor& t) { return t.unary(op); });
        unary_ops.append(name);
    };
#define PLEXUS_PY_BIND_ROW_(op, number, name, family, ...) bind_row(#name, op, family);
    PX_OP_TABLE(PLEXUS_PY_BIND_ROW_)
#undef PLEXUS_PY_BIND_ROW_
    m.attr("_unary_ops") = py::tuple(unary_ops);

    m.def("_from_numpy", [](const py::object& values, const Device& d, const py::object& dtype) {
        return from_numpy(values, d, parse_dtype(dtype));
    });
    m.def("_parse_dtype", [](const py::object& d) { return std::string(plexus::name(parse_dtype(d))); });
    m.def("_integer_bounds", [](const py::object& dt) -> py::object {
        const DType d = parse_dtype(dt);
        if (is_floating(d)) return py::none();
        const auto [least, most] = bounds_of(d);
        return py::make_tuple(least, most);
    });
    // Labels of a NumPy integer array in the Plexus integer dtype that holds them (ArrayDataset's).
    m.def("_label_integers", [](const py::object& a) -> py::object {
        const DType d = integer_dtype_of(a);
        if (!holds(d, a))
            throw plexus::DTypeError(PX_ERROR_DTYPE, "ArrayDataset: " + a.attr("dtype").attr("name").cast<std::string>() +
                                                         " values beyond " + plexus::name(d) + " (up to " +
                                                         py::str(a.attr("max")()).cast<std::string>() + ")");
        return a.attr("astype")(plexus::name(d), py::arg("copy") = false);
    });
    m.def("_full", [](const py::object& shape, const py::object& value, const std::optional<Device>& d,
                      const py::object& dt) { return full_of(to_shape(shape), value, device_or_cpu(d), parse_dtype(dt)); });
    m.def("_empty", [](const py::object& shape, const std::optional<Device>& d, const py::object& dt) {
        return plexus::empty(to_shape(shape), device_or_cpu(d), parse_dtype(dt));
    });
    m.def("_arange", [](double start, double stop, double step, const std::optional<Device>& d,
                        const py::object& dt) { return plexus::arange(start, stop, step, device_or_cpu(d), parse_dtype(dt)); });
    m.def("_uniform", [](double low, double high, const py::object& shape, const std::optional<Device>& d,
                         const py::object& dt) {
        return plexus::random_uniform(to_shape(shape), low, high, device_or_cpu(d), parse_dtype(dt));
    });
    m.def("_normal", [](double mean, double std, const py::object& shape, const std::optional<Device>& d,
                        const py::object& dt) {
        return plexus::random_normal(to_shape(shape), mean, std, device_or_cpu(d), parse_dtype(dt));
    });
    m.def("where", [](const Tensor& c, const Tensor& a, const Tensor& b) { return plexus::where(c, a, b); });
    // A number or an array-like for either choice, under the scalar rules of the arithmetic (an integer
    // beyond 2**53 stays exact for an integer tensor).
    m.def("where", [](const Tensor& c, const Tensor& a, const py::object& b) {
        return with_operand(a, b, [&](const Tensor& x, double v) { return plexus::where(c, x, v); },
                            [&](const Tensor& x, const Tensor& y) { return plexus::where(c, x, y); });
    });
    m.def("where", [](const Tensor& c, const py::object& a, const Tensor& b) {
        return with_operand(b, a, [&](const Tensor& y, double v) { return plexus::where(c, v, y); },
                            [&](const Tensor& y, const Tensor& x) { return plexus::where(c, x, y); });
    });
    m.def("_concat", [](const std::vector<Tensor>& parts, int axis) { return plexus::concat(parts, axis); },
          py::arg("tensors"), py::arg("axis") = 0);
    m.def("_stack", [](const std::vector<Tensor>& parts, int axis) { return plexus::stack(parts, axis); },
          py::arg("arrays"), py::arg("axis") = 0);
    m.def("pick", [](const Tensor& data, const Tensor& index) { return plexus::pick(data, index); }, py::arg("data"),
          py::arg("index"));
    m.def("take", [](const Tensor& table, const Tensor& indices) {
        // Whole-number float indices as rows, as MXNet's take reads float32 ids (checked: a wait).
        return plexus::take(table, is_floating(indices.dtype())
                                       ? plexus::class_indices(indices, DType::int64, "take", "an index is not a row number")
                                       : indices);
    },
          py::arg("a"), py::arg("indices"));
    m.def("layer_norm", [](const Tensor& x, const Tensor& g, const Tensor& b, double eps) {
        return plexus::layer_norm(x, g, b, eps);
    }, py::arg("data"), py::arg("gamma"), py::arg("beta"), py::arg("eps") = 1e-5);
    m.def("softmax", [](const Tensor& x) { return plexus::softmax(x); });
    m.def("log_softmax", [](const Tensor& x) { return plexus::log_softmax(x); });
    m.def("dropout", [](const Tensor& data, double p) { return plexus::dropout(data, p); }, py::arg("data"),
          py::arg("p") = 0.5, "Each element dropped with probability p while training (autograd.record()), the rest "
                              "scaled by 1/(1-p); the identity otherwise (npx.dropout)");
    m.def("norm", [](const Tensor& x) { return plexus::norm(x); });
    m.def("cumsum", [](const Tensor& a, std::optional<int> axis) {
        return axis ? plexus::cumsum(a, *axis) : plexus::cumsum(a);
    }, py::arg("a"), py::arg("axis") = py::none(), "Running sums along axis (of every element without one), as NumPy's");
    m.def("maximum", [](const Tensor& a, const Tensor& b) { return plexus::maximum(a, b); });
    m.def("maximum", [](const Tensor& a, double b) { return plexus::maximum(a, b); });
    m.def("maximum", [](double a, const Tensor& b) { return plexus::maximum(a, b); });
    m.def("minimum", [](const Tensor& a, const Tensor& b) { return plexus::minimum(a, b); });
    m.def("minimum", [](const Tensor& a, double b) { return plexus::minimum(a, b); });
    m.def("minimum", [](double a, const Tensor& b) { return plexus::minimum(a, b); });
    m.def("dot", [](const Tensor& a, const Tensor& b) { return plexus::dot(a, b); });
    // The functional convolution and pooling npx.convolution and npx.pooling give (plexus/__init__.py).
    m.def("_conv2d", [](const Tensor& x, const Tensor& w, std::pair<int, int> stride, std::pair<int, int> pad) {
        return plexus::conv2d(x, w, {stride.first, stride.second}, {pad.first, pad.second});
    });
    m.def("_conv2d_transpose", [](const Tensor& x, const Tensor& w, std::pair<int, int> stride, std::pair<int, int> pad,
                                  std::pair<int, int> output_padding) {
        return plexus::conv2d_transpose(x, w, {stride.first, stride.second}, {pad.first, pad.second},
                                        {output_padding.first, output_padding.second});
    });
    m.def("_pool2d", [](bool max, const Tensor& x, std::pair<int, int> size, std::pair<int, int> stride,
                        std::pair<int, int> pad) {
        return plexus::pool2d(max ? PX_OP_MAX_POOL2D : PX_OP_AVG_POOL2D, x, {size.first, size.second},
                              {stride.first, stride.second}, {pad.first, pad.second});
    });
    m.def("matmul", [](const Tensor& a, const Tensor& b) { return plexus::matmul(a, b); });

    // ---- autograd ----
    py::module_ ag = m.def_submodule("autograd", "Recording ops for gradients (plexus.autograd.record())");
    py::class_<ScopeManager>(ag, "_Scope")
        .def("__enter__", [](ScopeManager& s) { s.enter(); return &s; }, py::return_value_policy::reference)
        .def("__exit__", [](ScopeManager& s, const py::args&) { s.exit(); return false; });
    auto scope = [](bool recording, bool training) {
        auto s = std::make_unique<ScopeManager>();
        s->recording = recording;
        s->training = training;
        return s;
    };
    ag.def("record", [scope](bool train_mode) { return scope(true, train_mode); }, py::arg("train_mode") = true);
    ag.def("pause", [scope](bool train_mode) { return scope(false, train_mode); }, py::arg("train_mode") = false);
    ag.def("train_mode", [scope] { return scope(plexus::autograd::is_recording(), true); });
    ag.def("predict_mode", [scope] { return scope(plexus::autograd::is_recording(), false); });
    ag.def("is_recording", &plexus::autograd::is_recording);
    ag.def("is_training", &plexus::autograd::is_training);
    ag.def("_free_with", &plexus::autograd::free_with, py::arg("result"), py::arg("others"),
           "The records of others go when result's does, as one op's outputs (a recurrent layer's states)");

    // ---- nn ----
    namespace nn = plexus::nn;
    py::module_ mnn = m.def_submodule("nn", "Gluon-style layers, parameters and the trainer");
    // Initializers as mxnet.init's (plexus.init re-exports them).
    py::module_ minit = m.def_submodule("init", "Initializers, as mxnet.init: net.initialize(init.Normal(0.01))");
    py::class_<nn::Initializer>(minit, "Initializer")
        .def(py::init<>())  // for subclasses written in Python (plexus/init.py)
        .def("__repr__", &nn::Initializer::describe)
        // Equal by the settings described for Plexus's own (Normal(0.01) == Normal(0.01)); one of your own
        // (a Python subclass, Custom) only to itself, as its function is not compared.
        .def("__eq__", [](const py::object& a, const py::object& b) {
            if (!py::isinstance<nn::Initializer>(b)) return false;
            if (by_identity(a) || by_identity(b)) return a.is(b);
            return a.cast<const nn::Initializer&>().describe() == b.cast<const nn::Initializer&>().describe();
        })
        .def("__hash__", [](const py::object& a) {
            return by_identity(a) ? py::hash(py::int_(reinterpret_cast<uintptr_t>(a.ptr())))
                                  : py::hash(py::str(a.cast<const nn::Initializer&>().describe()));
        });
    minit.def("Xavier", &nn::Initializer::Xavier, py::arg("rnd_type") = "uniform", py::arg("factor_type") = "avg",
              py::arg("magnitude") = 3.0);
    minit.def("MSRAPrelu", &nn::Initializer::MSRAPrelu, py::arg("factor_type") = "avg", py::arg("slope") = 0.25);
    minit.def("Normal", &nn::Initializer::Normal, py::arg("sigma") = 0.01);
    minit.def("Uniform", &nn::Initializer::Uniform, py::arg("scale") = 0.07);
    minit.def("Constant", &nn::Initializer::Constant, py::arg("value"));
    minit.def("Zero", &nn::Initializer::Zero);
    minit.def("One", &nn::Initializer::One);
    minit.def("_python", [](const py::object& init) {
        auto fill = std::make_shared<PythonFill>(init);
        return nn::Initializer::Custom(py::str(py::type::of(init).attr("__name__")).cast<std::string>() + "()",
                                       [fill](const std::string& name, Tensor& data) { (*fill)(name, data); });
    });

    py::class_<nn::Parameter, std::shared_ptr<nn::Parameter>>(mnn, "Parameter")
        // A parameter of a block written in Python (d2l's custom layers): assigned as an attribute of the block.
        // init: an Initializer, a name ('ones', 'normal', ...: plexus.init.create's), or None for initialize()'s.
        // differentiable=False: state the block updates itself (grad_req stays 'null'), as Gluon's.
        .def(py::init([](const std::string& name, const std::vector<int64_t>& shape, const py::object& init,
                         const py::object& grad_req, double lr_mult, double wd_mult, bool differentiable) {
                 return made_parameter(name, shape, init, grad_req, lr_mult, wd_mult, differentiable, false);
             }),
             py::arg("name"), py::arg("shape"), py::arg("init") = py::none(), py::arg("grad_req") = "write",
             py::arg("lr_mult") = 1.0, py::arg("wd_mult") = 1.0, py::arg("differentiable") = true)
        // A layer's own parameter whose 0 dimensions its first forward call gives (_infer_shape), as Dense's.
        .def_static("_deferred", [](const std::string& name, const std::vector<int64_t>& shape, const py::object& init) {
            return made_parameter(name, shape, init, py::str("write"), 1.0, 1.0, true, true);
        }, py::arg("name"), py::arg("shape"), py::arg("init") = py::none())
        .def("_infer_shape", [](nn::Parameter& p, const std::vector<int64_t>& shape) {
            const Shape& had = p.shape();
            bool fits = had.size() == shape.size();
            for (size_t i = 0; fits && i < shape.size(); ++i) fits = shape[i] > 0 && (had[i] == 0 || had[i] == shape[i]);
            if (!fits)
                throw plexus::ShapeError(PX_ERROR_SHAPE, "parameter " + p.name() + " of shape " + plexus::str(had) +
                                                             " cannot take shape " + plexus::str(Shape(shape)));
            p.infer_shape(Shape(shape));
        }, py::arg("shape"))
        .def_property_readonly("name", &nn::Parameter::name)
        .def_property_readonly("shape", [](const nn::Parameter& p) { return shape_tuple(p.shape()); })
        .def_property("grad_req", [](const nn::Parameter& p) { return grad_req_name(p.grad_req()); },
                      [](nn::Parameter& p, const py::object& req) { p.set_grad_req(grad_req_of(req)); })
        .def_property("lr_mult", &nn::Parameter::lr_mult, &nn::Parameter::set_lr_mult)
        .def_property("wd_mult", &nn::Parameter::wd_mult, &nn::Parameter::set_wd_mult)
        .def_property_readonly("differentiable", &nn::Parameter::differentiable)
        .def("zero_grad", &nn::Parameter::zero_grad)
        // device= or Gluon's ctx= (d2l's MyDense calls self.weight.data(ctx=x.ctx))
        .def("data", [](const nn::Parameter& p, const std::optional<Device>& d, const std::optional<Device>& ctx) {
            const std::optional<Device> at = device_or_ctx(d, ctx);
            return at ? p.data(*at) : p.data();
        }, py::arg("device") = py::none(), py::arg("ctx") = py::none())
        .def("grad", [](const nn::Parameter& p, const std::optional<Device>& d, const std::optional<Device>& ctx) {
            const std::optional<Device> at = device_or_ctx(d, ctx);
            return at ? p.grad(*at) : p.grad();
        }, py::arg("device") = py::none(), py::arg("ctx") = py::none())
        .def_property_readonly("_initialized", [](const nn::Parameter& p) { return p.initialized() || p.deferred(); })
        .def("_initialize", [](nn::Parameter& p, const std::vector<Device>& ds, bool force, const nn::Initializer& init) {
            p.initialize(ds, force, init);
        })
        .def("_initialize_as", [](nn::Parameter& p, const std::vector<Device>& ds, bool force, const nn::Initializer& init) {
            p.initialize_as(init, ds, force);
        })
        .def("list_data", &nn::Parameter::list_data)
        .def("list_grad", &nn::Parameter::list_grad)
        .def("list_ctx", &nn::Parameter::devices)
        .def("set_data", &nn::Parameter::set_data)
        // As Gluon prints one: "Parameter 0.bias (shape=(8,), dtype=float32)" (a tuple of one had lost its comma).
        .def("__repr__", [](const nn::Parameter& p) {
            std::string text = "Parameter " + p.name() + " (shape=" + py::repr(shape_tuple(p.shape())).cast<std::string>();
            if (p.initialized()) text += std::string(", dtype=") + plexus::name(p.data().dtype());
            return text + ")";
        });
    // A ParameterDict points into its block: it keeps the block alive (keep_owner).
    py::class_<nn::ParameterDict>(mnn, "ParameterDict", py::dynamic_attr())
        .def(py::init<>())
        // A parameter under `name` (listed once however often it is added); the dict keeps it alive.
        .def("_add", [](py::object self, const std::string& name, py::object p) {
            self.cast<nn::ParameterDict&>().add(name, &p.cast<nn::Parameter&>());
            keep_owner(self, p);
        })
        .def("__len__", &nn::ParameterDict::size)
        .def("__getitem__", [](py::object self, const std::string& name) {
            try {
                return shared_parameter(self.cast<const nn::ParameterDict&>()[name]);
            } catch (const plexus::InvalidArgumentError& e) {  // a name it lacks: a dict's KeyError
                throw py::key_error(e.what());
            }
        })
        .def("__contains__", [](const nn::ParameterDict& d, const std::string& name) {
            return std::any_of(d.begin(), d.end(), [&](const auto& item) { return item.first == name; });
        })
        .def("__iter__", [](py::object self) { return py::iter(self.attr("keys")()); })
        .def("keys", [](const nn::ParameterDict& d) {
            std::vector<std::string> k;
            for (const auto& [name, p] : d) k.push_back(name);
            return k;
        })
        // The parameters keep the dict (and so its block) alive, as from __getitem__.
        .def("values", [](py::object self) {
            py::list out;
            for (const auto& [name, p] : self.cast<const nn::ParameterDict&>())
                out.append(shared_parameter(*p));
            return out;
        })
        .def("items", [](py::object self) {
            py::list out;
            for (const auto& [name, p] : self.cast<const nn::ParameterDict&>())
                out.append(py::make_tuple(name, shared_parameter(*p)));
            return out;
        })
        .def("initialize", [](nn::ParameterDict& d, const std::vector<Device>& ds, bool force,
                              const nn::Initializer& init) { d.initialize(ds, force, init); },
             py::arg("devices"), py::arg("force_reinit") = false, py::arg("init") = nn::Initializer{})
        // Gluon's setattr: grad_req ('null' freezes; state its layer updates stays 'null'), lr_mult, wd_mult.
        .def("setattr", [](nn::ParameterDict& d, const std::string& name, const py::object& value) {
            if (name == "grad_req") d.set_grad_req(grad_req_of(value));
            else if (name == "lr_mult") d.set_lr_mult(value.cast<double>());
            else if (name == "wd_mult") d.set_wd_mult(value.cast<double>());
            else throw py::attribute_error("ParameterDict.setattr: '" + name + "' is not grad_req, lr_mult or wd_mult");
        }, py::arg("name"), py::arg("value"))
        .def("zero_grad", &nn::ParameterDict::zero_grad)
        .def("reset_ctx", [](nn::ParameterDict& d, const std::vector<Device>& ds) { d.reset_ctx(ds); });

    mnn.def("_block_made", &block_made, "Whether a Block's C++ object exists (Block.__init__ has run)");
    mnn.def("_summarising", &PyBlock::summary_running, "Whether Block.summary runs on this thread");
    py::class_<nn::Block, PyBlock, std::shared_ptr<nn::Block>>(mnn, "Block")
        .def(py::init<>())
        .def("_register_child", [](py::handle self, const std::string& name, std::shared_ptr<nn::Block> child) {
            python_block(self, "a child block")->add_child(name, std::move(child));
        })
        .def("_register_param", [](py::handle self, nn::Parameter& p) {
            python_block(self, "a Parameter")->add_param(p);
        })
        .def("__call__", [](nn::Block& b, const Tensor& x) { return b(x); })
        .def("forward", [](nn::Block& b, const Tensor& x) {
            if (dynamic_cast<PyBlock*>(&b)) PyBlock::no_forward(py::cast(&b));  // Block's own, as super().forward
            return b.forward(x);
        })
        // select: a regular expression the names must match from their start (Gluon's '.*weight').
        .def("collect_params", [](py::object self, const std::optional<std::string>& select) {
            nn::Block& b = self.cast<nn::Block&>();
            return params_of(self, select ? b.collect_params().select(*select) : b.collect_params());
        }, py::arg("select") = py::none())
        .def("_initialize", [](nn::Block& b, const std::vector<Device>& ds, bool force, const nn::Initializer& init) {
            b.initialize(init, ds, force);
        })
        .def("save_parameters", [](nn::Block& b, const std::string& path) {
            wait_devices(devices_of(b.collect_params()));
            GilReleased release;
            b.save_parameters(path);
        })
        .def("_load_parameters", [](nn::Block& b, const std::string& path, const std::vector<Device>& ds) {
            GilReleased release;
            b.load_parameters(path, ds);
        })
        // A block without one raises AttributeError, so hasattr() and getattr(b, "weight", None) work.
        .def_property_readonly("weight", [](py::object self) {
            return shared_parameter(attribute(self.cast<nn::Block&>(), &nn::Block::weight));
        })
        .def_property_readonly("bias", [](py::object self) {
            return shared_parameter(attribute(self.cast<nn::Block&>(), &nn::Block::bias));
        })
        // Gluon 1's block.params (d2l's Dense(8, params=shared.params)): its parameters, as collect_params().
        .def_property_readonly("params", [](py::object self) { return params_of(self, self.cast<nn::Block&>().collect_params()); })
        .def("share_parameters", [](nn::Block& b, const nn::ParameterDict& params) {
            share(b, params);
            return &b;
        }, py::arg("params"), py::return_value_policy::reference)
        .def("summary", [](nn::Block& b, const py::args& inputs) {
            if (inputs.size() != 1 || !py::isinstance<Tensor>(inputs[0]))
                throw py::type_error("summary(x): runs the network on one input tensor, got " +
                                     std::to_string(inputs.size()) + " argument(s)" +
                                     (inputs.size() == 1 ? " of type " + py::str(py::type::of(inputs[0]).attr("__name__")).cast<std::string>() : std::string()));
            py::print(b.summary(inputs[0].cast<Tensor>()), py::arg("end") = "");
        })
        .def_property_readonly("name", &nn::Block::name)
        .def("__repr__", &nn::Block::describe);
    // Gluon's arguments in Gluon's order, so that positional ones mean what they do there; those Plexus
    // does not offer are taken at their defaults and refused otherwise, naming them.
    const auto only_default = [](const char* layer, const char* name, bool is_default, const std::string& instead) {
        if (!is_default)
            throw py::value_error(std::string(layer) + ": " + name + " is not offered by Plexus" +
                                  (instead.empty() ? "" : "; " + instead));
    };
    const auto is_none_or = [](const py::object& o, const char* text) {
        return o.is_none() || (py::isinstance<py::str>(o) && o.cast<std::string>() == text);
    };
    const std::string initialize_instead = "initialize the layer with net.initialize(init) or the parameter's own "
                                           "initialize(init) instead";
    BlockClass<nn::Dense>(mnn, "Dense")
        .def(py::init([only_default, is_none_or, initialize_instead](
                          int64_t units, const std::optional<std::string>& activation, bool use_bias, bool flatten,
                          const py::object& dtype, const py::object& weight_initializer,
                          const py::object& bias_initializer, int64_t in_units,
                          const std::optional<nn::ParameterDict>& params) {
                 only_default("Dense", "dtype other than float32", is_none_or(dtype, "float32") ||
                              (!py::isinstance<py::str>(dtype) && parse_dtype(dtype) == plexus::DType::float32),
                              "layers hold float32 parameters; run them in float16 or bfloat16 under "
                              "nn.autocast(dtype)");
                 only_default("Dense", "weight_initializer", weight_initializer.is_none(), initialize_instead);
                 only_default("Dense", "bias_initializer", is_none_or(bias_initializer, "zeros"), initialize_instead);
                 auto made = std::make_shared<nn::Dense>(units, activation.value_or(""), in_units, use_bias, flatten);
                 if (params) made->share_parameters(*params);
                 return made;
             }),
             py::arg("units"), py::arg("activation") = py::none(), py::arg("use_bias") = true,
             py::arg("flatten") = true, py::arg("dtype") = "float32", py::arg("weight_initializer") = py::none(),
             py::arg("bias_initializer") = "zeros", py::arg("in_units") = 0, py::arg("params") = py::none());
    // A window's int, or (height, width) pair; anything else a TypeError naming it.
    auto pair = [](const py::object& o) {
        if (py::isinstance<py::int_>(o) && !py::isinstance<py::bool_>(o)) return plexus::Pair2(o.cast<int>());
        try {
            auto p = o.cast<std::pair<int, int>>();
            return plexus::Pair2(p.first, p.second);
        } catch (const py::cast_error&) {
            throw py::type_error("a window's size, stride, padding or dilation is an int or a pair of ints, not " +
                                 py::repr(o).cast<std::string>());
        }
    };
    BlockClass<nn::Conv2D>(mnn, "Conv2D")
        .def(py::init([pair, only_default, is_none_or, initialize_instead](
                          int64_t channels, const py::object& kernel, const py::object& strides,
                          const py::object& padding, const py::object& dilation, int groups, const std::string& layout,
                          const std::optional<std::string>& activation, bool use_bias,
                          const py::object& weight_initializer, const py::object& bias_initializer,
                          int64_t in_channels, const std::optional<nn::ParameterDict>& params) {
                 const plexus::Pair2 d = pair(dilation);
                 only_default("Conv2D", "dilation other than 1", d.h == 1 && d.w == 1, "");
                 only_default("Conv2D", "groups other than 1", groups == 1, "");
                 only_default("Conv2D", "layout other than 'NCHW'", layout == "NCHW", "");
                 only_default("Conv2D", "weight_initializer", weight_initializer.is_none(), initialize_instead);
                 only_default("Conv2D", "bias_initializer", is_none_or(bias_initializer, "zeros"), initialize_instead);
                 auto made = std::make_shared<nn::Conv2D>(channels, pair(kernel), pair(strides), pair(padding),
                                                          activation.value_or(""), in_channels, use_bias);
                 if (params) made->share_parameters(*params);
                 return made;
             }),
             py::arg("channels"), py::arg("kernel_size"), py::arg("strides") = 1, py::arg("padding") = 0,
             py::arg("dilation") = 1, py::arg("groups") = 1, py::arg("layout") = "NCHW",
             py::arg("activation") = py::none(), py::arg("use_bias") = true, py::arg("weight_initializer") = py::none(),
             py::arg("bias_initializer") = "zeros", py::arg("in_channels") = 0, py::arg("params") = py::none());
    BlockClass<nn::MaxPool2D>(mnn, "MaxPool2D")
        .def(py::init([pair](const py::object& size, const py::object& strides, const py::object& padding) {
                 return std::make_shared<nn::MaxPool2D>(pair(size), strides.is_none() ? plexus::Pair2(0) : pair(strides),
                                                        pair(padding));
             }),
             py::arg("pool_size") = 2, py::arg("strides") = py::none(), py::arg("padding") = 0);
    py::class_<nn::AvgPool2D, nn::MaxPool2D, std::shared_ptr<nn::AvgPool2D>>(mnn, "AvgPool2D")
        .def(py::init([pair](const py::object& size, const py::object& strides, const py::object& padding) {
                 return std::make_shared<nn::AvgPool2D>(pair(size), strides.is_none() ? plexus::Pair2(0) : pair(strides),
                                                        pair(padding));
             }),
             py::arg("pool_size") = 2, py::arg("strides") = py::none(), py::arg("padding") = 0);
    BlockClass<nn::Flatten>(mnn, "Flatten").def(py::init<>());
    BlockClass<nn::Dropout>(mnn, "Dropout").def(py::init<double>(), py::arg("rate"));
    BlockClass<nn::Activation>(mnn, "Activation").def(py::init<std::string>(), py::arg("activation"));
    // A normalisation layer's own parameters by name (Gluon's bn.gamma, d2l's net[1].gamma.data());
    // AttributeError for one it lacks (LayerNorm with center=False has no beta).
    auto own = [](const char* name) {
        return [name](py::object self) {
            nn::Block& b = self.cast<nn::Block&>();
            for (auto& [n, p] : b.collect_params())
                if (n == name) return shared_parameter(*p);
            throw py::attribute_error(b.describe() + " has no parameter " + name);
        };
    };
    BlockClass<nn::BatchNorm>(mnn, "BatchNorm")
        .def(py::init([only_default, is_none_or, initialize_instead](
                          int axis, double momentum, double epsilon, bool center, bool scale, bool use_global_stats,
                          const py::object& beta_initializer, const py::object& gamma_initializer,
                          const py::object& running_mean_initializer, const py::object& running_variance_initializer,
                          int64_t in_channels) {
                 if (axis != 1)
                     throw py::value_error("BatchNorm: axis " + std::to_string(axis) +
                                           ": Plexus normalises the channels of axis 1 only (NCHW, or (N, C))");
                 only_default("BatchNorm", "use_global_stats=True", !use_global_stats,
                              "run the network under autograd.predict_mode() to use the running statistics");
                 only_default("BatchNorm", "beta_initializer", is_none_or(beta_initializer, "zeros"), initialize_instead);
                 only_default("BatchNorm", "gamma_initializer", is_none_or(gamma_initializer, "ones"), initialize_instead);
                 only_default("BatchNorm", "running_mean_initializer", is_none_or(running_mean_initializer, "zeros"),
                              "");
                 only_default("BatchNorm", "running_variance_initializer",
                              is_none_or(running_variance_initializer, "ones"), "");
                 auto bn = std::make_shared<nn::BatchNorm>(momentum, epsilon, in_channels);
                 // Gluon's center=False and scale=False: beta stays zeros and gamma ones (grad_req null, as Gluon's).
                 for (auto& [n, p] : bn->collect_params())
                     if ((n == "beta" && !center) || (n == "gamma" && !scale)) p->set_grad_req(nn::GradReq::null);
                 return bn;
             }),
             py::arg("axis") = 1, py::arg("momentum") = 0.9, py::arg("epsilon") = 1e-5, py::arg("center") = true,
             py::arg("scale") = true, py::arg("use_global_stats") = false, py::arg("beta_initializer") = "zeros",
             py::arg("gamma_initializer") = "ones", py::arg("running_mean_initializer") = "zeros",
             py::arg("running_variance_initializer") = "ones", py::arg("in_channels") = 0)
        .def_property_readonly("gamma", own("gamma"))
        .def_property_readonly("beta", own("beta"))
        .def_property_readonly("running_mean", own("running_mean"))
        .def_property_readonly("running_var", own("running_var"));
    BlockClass<nn::GlobalAvgPool2D>(mnn, "GlobalAvgPool2D").def(py::init<>());
    BlockClass<nn::AdaptiveAvgPool2D>(mnn, "AdaptiveAvgPool2D")
        .def(py::init([pair](const py::object& size) { return std::make_shared<nn::AdaptiveAvgPool2D>(pair(size)); }),
             py::arg("output_size"));
    BlockClass<nn::LeakyReLU>(mnn, "LeakyReLU").def(py::init<double>(), py::arg("alpha") = 0.01);
    BlockClass<nn::LayerNorm>(mnn, "LayerNorm")
        .def(py::init([only_default, is_none_or, initialize_instead](
                          int axis, double epsilon, bool center, bool scale, const py::object& beta_initializer,
                          const py::object& gamma_initializer, int64_t in_channels) {
                 if (axis != -1)
                     throw py::value_error("LayerNorm: axis " + std::to_string(axis) +
                                           ": Plexus normalises over the last axis only (axis=-1)");
                 only_default("LayerNorm", "beta_initializer", is_none_or(beta_initializer, "zeros"), initialize_instead);
                 only_default("LayerNorm", "gamma_initializer", is_none_or(gamma_initializer, "ones"), initialize_instead);
                 return std::make_shared<nn::LayerNorm>(epsilon, center, scale, in_channels);
             }),
             py::arg("axis") = -1, py::arg("epsilon") = 1e-5, py::arg("center") = true, py::arg("scale") = true,
             py::arg("beta_initializer") = "zeros", py::arg("gamma_initializer") = "ones", py::arg("in_channels") = 0)
        .def_property_readonly("gamma", own("gamma"))
        .def_property_readonly("beta", own("beta"));
    BlockClass<nn::Embedding>(mnn, "Embedding").def(py::init<int64_t, int64_t>(), py::arg("input_dim"),
                                                    py::arg("output_dim"));
    BlockClass<nn::Residual>(mnn, "Residual")
        .def(py::init<int64_t, bool, int>(), py::arg("num_channels"), py::arg("use_1x1conv") = false,
             py::arg("strides") = 1);
    // Its Python children are kept in its __dict__ (keep_owner), where the cycle collector sees them.
    BlockClass<nn::Sequential>(mnn, "Sequential", py::dynamic_attr())
        .def(py::init<>())
        .def("add", [](py::object self, const py::args& blocks) {
            auto& s = self.cast<nn::Sequential&>();
            std::vector<std::shared_ptr<nn::Block>> adding;  // all checked before any is added
            for (size_t k = 0; k < blocks.size(); ++k) {
                if (!py::isinstance<nn::Block>(blocks[k]))
                    throw py::type_error("Sequential.add: argument " + std::to_string(k + 1) + " is of type " +
                                         py::str(py::type::of(blocks[k]).attr("__name__")).cast<std::string>() +
                                         ", not a Block");
                adding.push_back(blocks[k].cast<std::shared_ptr<nn::Block>>());
            }
            for (size_t k = 0; k < adding.size(); ++k) {
                s.add_shared(adding[k]);
                keep_owner(self, blocks[k]);  // a block written in Python lives in its Python object
            }
        })
        .def("__len__", &nn::Sequential::size)
        // Gluon's: an index from either end, or a slice as a new Sequential of the same blocks.
        .def("__getitem__", [](py::object self, const py::object& key) -> py::object {
            auto& s = self.cast<nn::Sequential&>();
            const auto n = py::ssize_t(s.size());
            if (py::isinstance<py::slice>(key)) {
                py::ssize_t start = 0, stop = 0, step = 0, len = 0;
                if (!key.cast<py::slice>().compute(n, &start, &stop, &step, &len)) throw py::error_already_set();
                auto part = std::make_shared<nn::Sequential>();
                py::object made = py::cast(part);
                for (py::ssize_t k = 0; k < len; ++k) {
                    const std::shared_ptr<nn::Block> child = s.shared(size_t(start + k * step));
                    part->add_shared(child);
                    keep_owner(made, py::cast(child));
                }
                return made;
            }
            // Any integer (NumPy's too, through __index__), as a list takes.
            PyObject* index = py::isinstance<py::bool_>(key) ? nullptr : PyNumber_Index(key.ptr());
            if (!index) {
                PyErr_Clear();
                throw py::type_error("Sequential indices are integers or slices, not " +
                                     py::str(py::type::of(key).attr("__name__")).cast<std::string>());
            }
            const py::object as_int = py::reinterpret_steal<py::object>(index);
            const py::ssize_t given = PyNumber_AsSsize_t(as_int.ptr(), nullptr);  // saturates: out of range anyway
            const py::ssize_t i = given < 0 ? given + n : given;
            if (i < 0 || i >= n)
                throw py::index_error("Sequential: layer " + py::str(as_int).cast<std::string>() + " of " +
                                      std::to_string(n));
            return py::cast(s.shared(size_t(i)));  // its Python object, or one holding the block
        });
    mnn.def("resnet18", [](int64_t num_classes, int64_t in_channels) {
        return std::make_shared<nn::Sequential>(nn::resnet18(num_classes, in_channels));
    }, py::arg("num_classes"), py::arg("in_channels") = 1);
    // Gluon's defaults: an uneven split is refused unless even_split=False.
    mnn.def("_split_and_load", &nn::split_and_load, py::arg("data"), py::arg("devices"), py::arg("batch_axis") = 0,
            py::arg("even_split") = true);
    // Its parameters (and a schedule written in Python) are kept in its
    // __dict__ by plexus/nn.py, where the cycle collector sees them.
    py::class_<nn::Trainer>(mnn, "Trainer", py::dynamic_attr())
        .def(py::init<const nn::ParameterDict&, const std::string&, const std::map<std::string, double>&>(),
             py::arg("params"), py::arg("optimizer"), py::arg("optimizer_params") = std::map<std::string, double>{})
        .def("step", [](nn::Trainer& t, int64_t batch_size, bool ignore_stale_grad) {
            GilReleased release;
            t.step(batch_size, ignore_stale_grad);
        }, py::arg("batch_size"), py::arg("ignore_stale_grad") = false)
        .def("step_if_finite", [](nn::Trainer& t, int64_t batch_size, double loss_scale, bool ignore_stale_grad) {
            wait_devices(t.devices());
            GilReleased release;
            return t.step_if_finite(batch_size, loss_scale, ignore_stale_grad);
        }, py::arg("batch_size"), py::arg("loss_scale") = 1.0, py::arg("ignore_stale_grad") = false)
        .def_property_readonly("learning_rate", &nn::Trainer::learning_rate)
        .def("set_learning_rate", &nn::Trainer::set_learning_rate)
        .def_property_readonly("optimizer", &nn::Trainer::optimizer)
        .def_property_readonly("num_update", &nn::Trainer::num_update)
        .def("set_lr_scheduler", [](nn::Trainer& t, std::shared_ptr<nn::LRScheduler> s) { t.set_lr_scheduler(std::move(s)); },
             py::arg("scheduler"))
        .def("save_states", [](const nn::Trainer& t, const std::string& path) {
            wait_devices(t.devices());
            GilReleased release;
            t.save_states(path);
        }, py::arg("fname"))
        .def("load_states", [](nn::Trainer& t, const std::string& path) {
            GilReleased release;
            t.load_states(path);
        }, py::arg("fname"));
    py::class_<AutocastManager>(mnn, "_Autocast")
        .def("__enter__", [](AutocastManager& a) { a.enter(); return &a; }, py::return_value_policy::reference)
        .def("__exit__", [](AutocastManager& a, const py::args&) { a.exit(); return false; });
    mnn.def("autocast", [](const py::object& dtype) {
        auto a = std::make_unique<AutocastManager>();
        a->dtype = parse_dtype(dtype);
        nn::Autocast check(a->dtype);  // refuses a dtype layers cannot compute in, now
        return a;
    }, py::arg("dtype"));
    mnn.def("autocast_dtype", [] { return std::string(plexus::name(nn::Autocast::dtype())); });
    py::class_<nn::LossScaler>(mnn, "LossScaler")
        .def(py::init<double, double, double, int64_t>(), py::arg("init_scale") = 65536.0,
             py::arg("growth_factor") = 2.0, py::arg("backoff_factor") = 0.5, py::arg("growth_interval") = 2000)
        .def("scale", &nn::LossScaler::scale, py::arg("loss"))
        .def("step", [](nn::LossScaler& s, nn::Trainer& t, int64_t batch_size) {
            wait_devices(t.devices());
            GilReleased release;
            return s.step(t, batch_size);
        }, py::arg("trainer"), py::arg("batch_size"))
        .def_property_readonly("loss_scale", &nn::LossScaler::loss_scale)
        .def_property_readonly("skipped_steps", &nn::LossScaler::skipped_steps);

    py::module_ loss = m.def_submodule("loss", "Losses");
    // Gluon's constructor arguments (weight None is 1; the batch is axis 0) and
    // __call__(pred, label, sample_weight=None).
    namespace pl = plexus::loss;
    auto weight_of = [](const std::optional<double>& w, int batch_axis, const char* who) {
        if (batch_axis != 0)
            throw py::value_error(std::string(who) + ": batch_axis must be 0 (the batch is the first axis), got " +
                                  std::to_string(batch_axis));
        return w.value_or(1.0);
    };
    auto call = [](auto* loss_type) {
        using L = std::remove_pointer_t<decltype(loss_type)>;
        return [](const L& l, const Tensor& pred, const Tensor& label, const std::optional<Tensor>& sample_weight) {
            return l(pred, label, sample_weight.value_or(Tensor()));
        };
    };
    py::class_<pl::SoftmaxCrossEntropyLoss>(loss, "SoftmaxCrossEntropyLoss")
        .def(py::init([weight_of](int axis, bool sparse_label, bool from_logits, std::optional<double> weight,
                                  int batch_axis) {
                 return pl::SoftmaxCrossEntropyLoss(axis, sparse_label, from_logits,
                                                    weight_of(weight, batch_axis, "SoftmaxCrossEntropyLoss"));
             }),
             py::arg("axis") = -1, py::arg("sparse_label") = true, py::arg("from_logits") = false,
             py::arg("weight") = py::none(), py::arg("batch_axis") = 0)
        .def("forward", call((pl::SoftmaxCrossEntropyLoss*)nullptr), py::arg("pred"), py::arg("label"),
             py::arg("sample_weight") = py::none());
    py::class_<pl::L2Loss>(loss, "L2Loss")
        .def(py::init([weight_of](std::optional<double> weight, int batch_axis) {
                 return pl::L2Loss(weight_of(weight, batch_axis, "L2Loss"));
             }),
             py::arg("weight") = 1.0, py::arg("batch_axis") = 0)
        .def("forward", call((pl::L2Loss*)nullptr), py::arg("pred"), py::arg("label"),
             py::arg("sample_weight") = py::none());
    py::class_<pl::L1Loss>(loss, "L1Loss")
        .def(py::init([weight_of](std::optional<double> weight, int batch_axis) {
                 return pl::L1Loss(weight_of(weight, batch_axis, "L1Loss"));
             }),
             py::arg("weight") = py::none(), py::arg("batch_axis") = 0)
        .def("forward", call((pl::L1Loss*)nullptr), py::arg("pred"), py::arg("label"),
             py::arg("sample_weight") = py::none());
    py::class_<pl::SigmoidBinaryCrossEntropyLoss>(loss, "SigmoidBinaryCrossEntropyLoss")
        .def(py::init([weight_of](bool from_sigmoid, std::optional<double> weight, int batch_axis) {
                 return pl::SigmoidBinaryCrossEntropyLoss(
                     from_sigmoid, weight_of(weight, batch_axis, "SigmoidBinaryCrossEntropyLoss"));
             }),
             py::arg("from_sigmoid") = false, py::arg("weight") = py::none(), py::arg("batch_axis") = 0)
        .def("forward", call((pl::SigmoidBinaryCrossEntropyLoss*)nullptr), py::arg("pred"), py::arg("label"),
             py::arg("sample_weight") = py::none());
    // As Gluon's: the arrays (p.grad() of each parameter) scaled in place; the norm before.
    mnn.def("clip_global_norm", [](std::vector<Tensor> grads, double max_norm) {
        wait_devices(devices_of(grads));
        GilReleased release;
        return nn::clip_global_norm(grads, max_norm);
    }, py::arg("arrays"), py::arg("max_norm"));
    // plexus.save / plexus.load (nd.save / nd.load): named tensors in a parameter file.
    m.def("_save_tensors", [](const std::string& path, const std::vector<std::pair<std::string, Tensor>>& named) {
        std::vector<Tensor> tensors;
        for (const auto& entry : named)
            if (entry.second.defined()) tensors.push_back(entry.second);
        wait_devices(devices_of(tensors));
        GilReleased release;
        nn::save_tensors(path, named);
    });
    m.def("_load_tensors", [](const std::string& path, const std::optional<Device>& d) {
        GilReleased release;
        return nn::load_tensors(path, d.value_or(plexus::cpu()));
    });
    // Learning-rate schedules (Gluon's mx.lr_scheduler names).
    py::module_ lrs = m.def_submodule("lr_scheduler", "Learning-rate schedules");
    py::class_<nn::LRScheduler, std::shared_ptr<nn::LRScheduler>>(lrs, "_Schedule")
        .def("__call__", &nn::LRScheduler::operator(), py::arg("num_update"))
        .def_property("base_lr", &nn::LRScheduler::base_lr, &nn::LRScheduler::set_base_lr);
    // A schedule written in Python (d2l's SquareRootScheduler; a subclass of plexus.lr_scheduler.LRScheduler).
    py::class_<CallableSchedule, nn::LRScheduler, std::shared_ptr<CallableSchedule>>(lrs, "_Callable")
        .def(py::init<py::object>(), py::arg("schedule"));
    // Gluon's arguments in Gluon's order (FactorScheduler's stop_factor_lr comes before base_lr there).
    const auto linear_warmup = [](const std::string& mode) {
        if (mode != "linear")
            throw py::value_error("warmup_mode '" + mode + "': only 'linear' is offered");
    };
    py::class_<nn::FactorScheduler, nn::LRScheduler, std::shared_ptr<nn::FactorScheduler>>(lrs, "FactorScheduler")
        .def(py::init([linear_warmup](int64_t step, double factor, double stop_factor_lr, double base_lr,
                                      int64_t warmup_steps, double warmup_begin_lr, const std::string& warmup_mode) {
                 linear_warmup(warmup_mode);
                 return std::make_shared<nn::FactorScheduler>(step, factor, base_lr, stop_factor_lr, warmup_steps,
                                                              warmup_begin_lr);
             }),
             py::arg("step"), py::arg("factor") = 1.0, py::arg("stop_factor_lr") = 1e-8, py::arg("base_lr") = 0.01,
             py::arg("warmup_steps") = 0, py::arg("warmup_begin_lr") = 0.0, py::arg("warmup_mode") = "linear");
    py::class_<nn::MultiFactorScheduler, nn::LRScheduler, std::shared_ptr<nn::MultiFactorScheduler>>(lrs,
                                                                                                    "MultiFactorScheduler")
        .def(py::init([linear_warmup](std::vector<int64_t> step, double factor, double base_lr, int64_t warmup_steps,
                                      double warmup_begin_lr, const std::string& warmup_mode) {
                 linear_warmup(warmup_mode);
                 return std::make_shared<nn::MultiFactorScheduler>(std::move(step), factor, base_lr, warmup_steps,
                                                                   warmup_begin_lr);
             }),
             py::arg("step"), py::arg("factor") = 1.0, py::arg("base_lr") = 0.01, py::arg("warmup_steps") = 0,
             py::arg("warmup_begin_lr") = 0.0, py::arg("warmup_mode") = "linear");
    py::class_<nn::CosineScheduler, nn::LRScheduler, std::shared_ptr<nn::CosineScheduler>>(lrs, "CosineScheduler")
        .def(py::init([linear_warmup](int64_t max_update, double base_lr, double final_lr, int64_t warmup_steps,
                                      double warmup_begin_lr, const std::string& warmup_mode) {
                 linear_warmup(warmup_mode);
                 return std::make_shared<nn::CosineScheduler>(max_update, base_lr, final_lr, warmup_steps,
                                                              warmup_begin_lr);
             }),
             py::arg("max_update"), py::arg("base_lr") = 0.01, py::arg("final_lr") = 0.0, py::arg("warmup_steps") = 0,
             py::arg("warmup_begin_lr") = 0.0, py::arg("warmup_mode") = "linear");

    bind_data(m);  // data_bindings.cpp: plexus.data and plexus.metric
}
