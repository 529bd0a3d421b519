// What the binding files of plexus._plexus share: each binds one part of
// the frontend, and module.cpp calls them in turn.
#pragma once

#include <pybind11/pybind11.h>

#include <exception>

#include "plexus/plexus.hpp"

// The GIL let go while Plexus waits or computes, as pybind11's
// gil_scoped_release, but a thread may end inside its destructor: Python ends
// a thread that takes the GIL back while the interpreter finalizes (a daemon
// thread in trainer.step at exit) with a forced unwind (pthread_exit), which
// std::terminate stops at a noexcept destructor such as gil_scoped_release's.
class GilReleased {
public:
    GilReleased() : state_(PyEval_SaveThread()) {}
    ~GilReleased() noexcept(false) { PyEval_RestoreThread(state_); }
    GilReleased(const GilReleased&) = delete;
    GilReleased& operator=(const GilReleased&) = delete;

private:
    PyThreadState* state_;
};

// Sets the Python error (plexus.ShapeError, ...) for an exception of the
// frontend's types; false, with nothing set, for any other exception.
bool set_python_error(const std::exception_ptr& p);

void bind_trace(pybind11::module_& m);                                             // trace_bindings.cpp
void bind_data(pybind11::module_& m);                                              // data_bindings.cpp
void bind_dlpack(pybind11::module_& m, pybind11::class_<plexus::Tensor>& tensor);  // dlpack_bindings.cpp
