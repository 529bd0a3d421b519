// Tensor.__dlpack__, Tensor.__dlpack_device__ and plexus.from_dlpack: the
// array API's exchange with NumPy, PyTorch and any DLPack producer or
// consumer. The three are written against CPython's C API (vectorcall
// functions and method descriptors) rather than bound through pybind11: a
// round trip NumPy -> Plexus -> NumPy is a handful of these calls, and
// pybind11's dispatch was a large part of its time (docs/python.md).
#include <pybind11/pybind11.h>

#include <cstdint>
#include <new>
#include <string>
#include <utility>

#include "bindings.hpp"
#include "plexus/dlpack.h"
#include "plexus/plexus.hpp"

namespace py = pybind11;
using plexus::Device;
using plexus::Tensor;

namespace {

constexpr const char* kCapsule = "dltensor";
constexpr const char* kUsedCapsule = "used_dltensor";
constexpr const char* kVersionedCapsule = "dltensor_versioned";
constexpr const char* kUsedVersionedCapsule = "used_dltensor_versioned";

void capsule_destructor(PyObject* capsule) {
    // Not consumed: the producer (us) deletes it. A consumed one is renamed.
    if (PyCapsule_IsValid(capsule, kCapsule)) {
        auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, kCapsule));
        if (m && m->deleter) m->deleter(m);
    } else if (PyCapsule_IsValid(capsule, kVersionedCapsule)) {
        auto* m = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(capsule, kVersionedCapsule));
        if (m && m->deleter) m->deleter(m);
    }
}

// The C API's refusal of a copy in Python's words: copy=False for
// PX_DLPACK_COPY_NEVER, copy=None for PX_DLPACK_COPY_IF_NEEDED, without the
// C function's name.
std::string in_python_words(const std::string& where, std::string m) {
    const auto replace = [&m](const std::string& from, const std::string& to) {
        const size_t at = m.find(from);
        if (at != std::string::npos) m.replace(at, from.size(), to);
    };
    const size_t colon = m.find(": ");
    if (m.rfind("px_tensor_", 0) == 0 && colon != std::string::npos) m.erase(0, colon + 2);
    replace("PX_DLPACK_COPY_NEVER: ", "copy=False: ");
    replace("; pass PX_DLPACK_COPY_IF_NEEDED to copy", "; leave copy=None to let Plexus copy");
    return where + ": " + m;
}

int32_t copy_policy(const py::object& copy) {
    if (copy.is_none()) return PX_DLPACK_COPY_IF_NEEDED;
    return copy.cast<bool>() ? PX_DLPACK_COPY_ALWAYS : PX_DLPACK_COPY_NEVER;
}

// The array API's __dlpack__: a capsule sharing the tensor's memory where
// its plugin gives the address (a host copy otherwise, or when dl_device asks
// for host memory of a GPU tensor), versioned when max_version allows it.
py::object to_dlpack(const Tensor& t, const py::object& stream, const py::object& max_version,
                     const py::object& dl_device, const py::object& copy) {
    int32_t type = 0, id = 0;
    plexus::check(px_tensor_dlpack_device(t.handle(), &type, &id));
    int32_t policy = copy_policy(copy);
    if (!dl_device.is_none()) {
        auto want = dl_device.cast<std::pair<int, int>>();
        const bool same = want.first == type && want.second == id;
        if (!same && want.first != kDLCPU)
            throw py::buffer_error("__dlpack__: dl_device " + py::repr(dl_device).cast<std::string>() +
                                   " is not offered; Plexus exports to the tensor's own device (" +
                                   std::to_string(type) + ", " + std::to_string(id) + ") or to host memory (kDLCPU, 0)");
        if (!same) {  // a GPU tensor asked for in host memory: a copy
            if (policy == PX_DLPACK_COPY_NEVER)
                throw py::buffer_error("__dlpack__: dl_device=(1, 0) of a tensor on " + t.device().str() +
                                       " needs a copy, and copy=False was given");
            policy = PX_DLPACK_COPY_ALWAYS;
            type = kDLCPU;
        }
    }
    // Host memory has no stream; a GPU tensor's device is synchronized by the
    // export, so any stream the consumer names may read it at once.
    if (type == kDLCPU && !stream.is_none() && !stream.equal(py::int_(-1)))
        throw py::buffer_error("__dlpack__: stream must be None for host memory, got " +
                               py::repr(stream).cast<std::string>());
    const bool versioned = !max_version.is_none() && max_version.cast<std::pair<int, int>>().first >= 1;
    px_status s = PX_OK;
    void* made = nullptr;
    {
        // The export waits for the tensor's work itself, here on the calling
        // thread with the GIL released: no hand-off to a waiting thread (tens
        // of microseconds when work is queued), so Ctrl-C is seen only once
        // that work is done.
        GilReleased release;
        if (versioned) {
            DLManagedTensorVersioned* m = nullptr;
            s = px_tensor_to_dlpack(t.handle(), policy, &m);
            made = m;
        } else {
            DLManagedTensor* m = nullptr;
            s = px_tensor_to_dlpack_unversioned(t.handle(), policy, &m);
            made = m;
        }
    }
    if (s == PX_ERROR_UNSUPPORTED) throw py::buffer_error(in_python_words("__dlpack__", px_last_error()));
    plexus::check(s);
    return py::reinterpret_steal<py::object>(
        PyCapsule_New(made, versioned ? kVersionedCapsule : kCapsule, capsule_destructor));
}

// A producer's DLPack tensor as Plexus holds it when it shares the memory:
// its deleter runs when the last Plexus tensor using it is released, which
// may be on a thread without the GIL (one of Plexus's own), while NumPy 1.24's
// deleter calls Py_DECREF. So Plexus gets this copy of the struct, whose
// deleter takes the GIL and then calls the producer's.
template <class Managed>
struct WithGil {
    Managed outer;
    Managed* inner;

    static Managed* wrap(Managed* in) {
        auto* w = new WithGil{*in, in};
        w->outer.manager_ctx = w;
        w->outer.deleter = &WithGil::deleter;
        return &w->outer;
    }
    static void unwrap(Managed* outer) { delete static_cast<WithGil*>(outer->manager_ctx); }
    static void deleter(Managed* self) {
        auto* w = static_cast<WithGil*>(self->manager_ctx);
        Managed* in = w->inner;
        delete w;
        if (!in->deleter || !Py_IsInitialized()) return;  // at exit: the producer's memory goes with the process
        PyGILState_STATE gil = PyGILState_Ensure();
        in->deleter(in);
        PyGILState_Release(gil);
    }
};

template <class Managed, class Import>
px_status import_capsule(PyObject* c, const char* name, const char* used, Import&& import) {
    auto* in = static_cast<Managed*>(PyCapsule_GetPointer(c, name));
    // Plexus's own export (a Tensor's __dlpack__) goes in as it came out: its
    // deleter needs no GIL, and the host then knows it for its own (the same
    // memory, its writes counted together: px_tensor_version).
    const bool own = PyCapsule_GetDestructor(c) == capsule_destructor;
    Managed* held = own ? in : WithGil<Managed>::wrap(in);
    const px_status s = import(held);
    if (s == PX_OK)
        PyCapsule_SetName(c, used);  // the producer's tensor is Plexus's now
    else if (!own)
        WithGil<Managed>::unwrap(held);  // still the capsule's
    return s;
}

Tensor from_capsule(const py::object& capsule, Device d, const py::object& copy) {
    const int32_t policy = copy_policy(copy);
    PyObject* c = capsule.ptr();
    if (!PyCapsule_CheckExact(c))
        throw py::value_error("from_dlpack: " + py::repr(capsule).cast<std::string>() +
                              " has no __dlpack__ and is not a DLPack capsule");
    px_tensor* out = nullptr;
    px_status s = PX_OK;
    if (PyCapsule_IsValid(c, kVersionedCapsule)) {
        s = import_capsule<DLManagedTensorVersioned>(c, kVersionedCapsule, kUsedVersionedCapsule, [&](auto* m) {
            return px_tensor_from_dlpack(plexus::runtime(), d.raw(), m, policy, &out);
        });
    } else if (PyCapsule_IsValid(c, kCapsule)) {
        s = import_capsule<DLManagedTensor>(c, kCapsule, kUsedCapsule, [&](auto* m) {
            return px_tensor_from_dlpack_unversioned(plexus::runtime(), d.raw(), m, policy, &out);
        });
    } else {
        throw py::value_error("from_dlpack: not a DLPack capsule (named 'dltensor' or 'dltensor_versioned'), "
                              "or one already consumed");
    }
    if (s == PX_ERROR_UNSUPPORTED) throw py::buffer_error(in_python_words("from_dlpack", px_last_error()));
    plexus::check(s);
    return Tensor(out);
}

// ---- the C API's calling convention ----

// Runs a C function's body: every C++ exception becomes the Python error
// pybind11's bindings would raise for it (NULL returned, the error set).
template <class Body>
PyObject* guarded(Body&& body) noexcept {
    try {
        try {
            return body();
        } catch (py::error_already_set& e) {
            e.restore();
        } catch (const py::builtin_exception& e) {
            e.set_error();
        } catch (...) {
            if (!set_python_error(std::current_exception())) throw;
        }
    } catch (const std::bad_alloc&) {
        PyErr_NoMemory();
    } catch (const std::exception& e) {
        PyErr_SetString(PyExc_RuntimeError, e.what());
    } catch (...) {
        PyErr_SetString(PyExc_RuntimeError, "an unknown C++ exception");
    }
    return nullptr;
}

// Binds a vectorcall's arguments to `names` as `def f(a, b=None, ...)`
// would (positional first, then keywords; None for what is not given), with
// Python's own TypeErrors. The values are borrowed from the call.
template <size_t N>
void bind_arguments(const char* fn, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames,
                    const char* const (&names)[N], size_t required, PyObject* (&values)[N]) {
    const std::string f(fn);
    if (nargs < 0 || static_cast<size_t>(nargs) > N)
        throw py::type_error(f + "() takes at most " + std::to_string(N) + " arguments (" + std::to_string(nargs) +
                             " given)");
    for (size_t i = 0; i < N; ++i) values[i] = i < static_cast<size_t>(nargs) ? args[i] : nullptr;
    const Py_ssize_t keywords = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t k = 0; k < keywords; ++k) {
        PyObject* key = PyTuple_GET_ITEM(kwnames, k);
        size_t i = 0;
        while (i < N && PyUnicode_CompareWithASCIIString(key, names[i]) != 0) ++i;
        if (i == N)
            throw py::type_error(f + "() got an unexpected keyword argument '" + py::str(key).cast<std::string>() +
                                 "'");
        if (values[i]) throw py::type_error(f + "() got multiple values for argument '" + names[i] + "'");
        values[i] = args[nargs + k];
    }
    for (size_t i = 0; i < N; ++i) {
        if (values[i]) continue;
        if (i < required) throw py::type_error(f + "() missing required argument '" + names[i] + "'");
        values[i] = Py_None;
    }
}

const Tensor& self_tensor(PyObject* self) { return py::handle(self).cast<const Tensor&>(); }

// ---- the three functions ----

PyObject* tensor_dlpack(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    return guarded([&] {
        static const char* const names[] = {"stream", "max_version", "dl_device", "copy"};
        PyObject* v[4];
        bind_arguments("__dlpack__", args, nargs, kwnames, names, 0, v);
        const auto arg = [](PyObject* o) { return py::reinterpret_borrow<py::object>(o); };
        return to_dlpack(self_tensor(self), arg(v[0]), arg(v[1]), arg(v[2]), arg(v[3])).release().ptr();
    });
}

PyObject* tensor_dlpack_device(PyObject* self, PyObject* /*unused*/) {
    return guarded([&] {
        int32_t type = 0, id = 0;
        plexus::check(px_tensor_dlpack_device(self_tensor(self).handle(), &type, &id));
        return Py_BuildValue("(ii)", type, id);
    });
}

// Made once and kept for the process (never freed: they may be used until
// the interpreter ends): the names from_dlpack looks up and the keywords it
// passes to __dlpack__.
struct Constants {
    PyObject* dlpack = PyUnicode_InternFromString("__dlpack__");
    PyObject* dlpack_device = PyUnicode_InternFromString("__dlpack_device__");
    PyObject* no_args = PyTuple_New(0);
    PyObject* v1 = Py_BuildValue("{s:(ii)}", "max_version", 1, 1);
    PyObject* v1_cuda = Py_BuildValue("{s:(ii),s:i}", "max_version", 1, 1, "stream", 1);
    PyObject* cuda = Py_BuildValue("{s:i}", "stream", 1);
    PyObject* speaks_0 = PySet_New(nullptr);  // producer types whose __dlpack__ takes no max_version

    static const Constants& get() {
        static const Constants* const made = new Constants();
        if (!made->dlpack || !made->dlpack_device || !made->no_args || !made->v1 || !made->v1_cuda || !made->cuda ||
            !made->speaks_0)
            throw py::error_already_set();
        return *made;
    }
};

// x's attribute `name`, or a null object when x has none.
py::object attribute_or_null(py::handle x, PyObject* name) {
    PyObject* a = PyObject_GetAttr(x.ptr(), name);
    if (!a) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError)) throw py::error_already_set();
        PyErr_Clear();
    }
    return py::reinterpret_steal<py::object>(a);
}

// method(...) for x.__dlpack__: DLPack 1.x where the producer speaks it,
// else 0.x; a CUDA producer orders its work before the legacy default
// stream (1), which the CUDA plugin waits for.
py::object call_dlpack(py::handle x, const py::object& method, bool cuda) {
    const Constants& k = Constants::get();
    PyObject* type = reinterpret_cast<PyObject*>(Py_TYPE(x.ptr()));
    if (PySet_Contains(k.speaks_0, type) != 1) {
        if (PyObject* r = PyObject_Call(method.ptr(), k.no_args, cuda ? k.v1_cuda : k.v1))
            return py::reinterpret_steal<py::object>(r);
        if (!PyErr_ExceptionMatches(PyExc_TypeError)) throw py::error_already_set();
        PyErr_Clear();  // a producer of DLPack 0.x (NumPy < 2, PyTorch < 2.4): no max_version
        if (PySet_Add(k.speaks_0, type) != 0) throw py::error_already_set();
    }
    PyObject* r = PyObject_Call(method.ptr(), k.no_args, cuda ? k.cuda : nullptr);
    if (!r) throw py::error_already_set();
    return py::reinterpret_steal<py::object>(r);
}

PyObject* from_dlpack(PyObject* /*module*/, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    return guarded([&] {
        static const char* const names[] = {"x", "device", "copy"};
        PyObject* v[3];
        bind_arguments("from_dlpack", args, nargs, kwnames, names, 1, v);
        const py::handle x(v[0]), device(v[1]);
        const bool chosen = !device.is_none();
        if (chosen && !py::isinstance<Device>(device))
            throw py::type_error("from_dlpack: device must be a Plexus device (plexus.cpu(0), plexus.gpu(1)), not " +
                                 py::repr(device).cast<std::string>());
        Device dev = chosen ? device.cast<Device>() : plexus::cpu(0);
        const Constants& k = Constants::get();
        bool cuda = false;
        if (const py::object where_fn = attribute_or_null(x, k.dlpack_device)) {
            const auto where = where_fn().cast<std::pair<int, int>>();
            cuda = where.first == kDLCUDA;
            if (cuda && !chosen) dev = plexus::gpu(where.second);
        }
        const py::object copy = py::reinterpret_borrow<py::object>(v[2]);
        const py::object method = attribute_or_null(x, k.dlpack);
        Tensor t = method ? from_capsule(call_dlpack(x, method, cuda), dev, copy)
                          : from_capsule(py::reinterpret_borrow<py::object>(x), dev, copy);
        return py::cast(std::move(t)).release().ptr();
    });
}

template <class F>
PyCFunction c_function(F* f) {
    return reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(f));
}

PyMethodDef dlpack_def{"__dlpack__", c_function(&tensor_dlpack), METH_FASTCALL | METH_KEYWORDS,
                       "__dlpack__($self, /, stream=None, max_version=None, dl_device=None, copy=None)\n--\n\n"
                       "The array API's export: a DLPack capsule sharing the tensor's memory where its plugin gives "
                       "the address (a host copy otherwise), versioned (DLPack 1.x) when max_version allows it. "
                       "dl_device=(1, 0) asks for host memory of a GPU tensor (a copy); copy=False refuses a copy, "
                       "copy=True always copies. Complete before it returns: the tensor's work has run."};
PyMethodDef dlpack_device_def{"__dlpack_device__", c_function(&tensor_dlpack_device), METH_NOARGS,
                              "__dlpack_device__($self, /)\n--\n\n"
                              "(device type, device id) as DLPack names them: (1, 0) for host memory, (2, i) for "
                              "CUDA device i."};
PyMethodDef from_dlpack_def{
    "from_dlpack", c_function(&from_dlpack), METH_FASTCALL | METH_KEYWORDS,
    "from_dlpack(x, device=None, copy=None)\n--\n\n"
    "A Plexus tensor over the memory of `x`: any object with __dlpack__ (a NumPy array, a PyTorch tensor, a Plexus "
    "tensor) or a DLPack capsule. It speaks DLPack 1.x where the producer does and 0.x otherwise. The memory is "
    "shared (writes show on both sides; `x`'s memory lives while the tensor does) when the device's plugin takes it "
    "and Plexus can describe the layout: compact row-major, aligned, writable. Otherwise the values are copied; "
    "copy=False then raises BufferError saying why, copy=True always copies. The tensor goes on `device`: by "
    "default cpu(0), or gpu(i) for memory of CUDA device i."};

}  // namespace

void bind_dlpack(py::module_& m, py::class_<Tensor>& tensor) {
    auto* type = reinterpret_cast<PyTypeObject*>(tensor.ptr());
    for (PyMethodDef* def : {&dlpack_def, &dlpack_device_def}) {
        PyObject* method = PyDescr_NewMethod(type, def);
        if (!method) throw py::error_already_set();
        tensor.attr(def->ml_name) = py::reinterpret_steal<py::object>(method);
    }
    PyObject* f = PyCFunction_NewEx(&from_dlpack_def, nullptr, m.attr("__name__").ptr());
    if (!f) throw py::error_already_set();
    m.attr("from_dlpack") = py::reinterpret_steal<py::object>(f);
}
