// What the binding files of plexus._plexus share: each binds one part of
// the frontend, and module.cpp calls them in turn.
#pragma once

#include <pybind11/pybind11.h>

#include <exception>

#include "plexus/plexus.hpp"

// Sets the Python error (plexus.ShapeError, ...) for an exception of the
// frontend's types; false, with nothing set, for any other exception.
bool set_python_error(const std::exception_ptr& p);

void bind_trace(pybind11::module_& m);                                             // trace_bindings.cpp
void bind_data(pybind11::module_& m);                                              // data_bindings.cpp
void bind_dlpack(pybind11::module_& m, pybind11::class_<plexus::Tensor>& tensor);  // dlpack_bindings.cpp
