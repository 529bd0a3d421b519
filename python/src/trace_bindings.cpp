// plexus.trace(path) and plexus.trace_region(name): the trace of where the
// time goes (plexus/cpp/trace.hpp) as Python context managers.
//
//   with plexus.trace("step.json"):        # step.json and step.summary.txt on exit
//       with plexus.trace_region("step 1"):
//           ...
#include <pybind11/pybind11.h>

#include <memory>
#include <string>

#include "bindings.hpp"
#include "plexus/plexus.hpp"

namespace py = pybind11;

namespace {

// A context manager over plexus::T (Trace or TraceRegion), made on enter.
template <class T>
struct Scope {
    std::string text;
    std::unique_ptr<T> scope;
    void enter() {
        if (scope) throw py::value_error("this scope is already entered; make another");
        scope = std::make_unique<T>(text);
    }
};

}  // namespace

void bind_trace(py::module_& m) {
    using TraceScope = Scope<plexus::Trace>;
    py::class_<TraceScope>(m, "trace",
                           "with plexus.trace(path): records every op call and copy, and on exit waits for the "
                           "devices and writes a Chrome trace JSON at path (ui.perfetto.dev, chrome://tracing) and "
                           "its per-op summary beside it (path less .json, plus .summary.txt)")
        .def(py::init([](const std::string& path) { return TraceScope{path, nullptr}; }), py::arg("path"))
        .def("__enter__", [](TraceScope& s) -> TraceScope& { return s.enter(), s; }, py::return_value_policy::reference)
        .def("__exit__", [](TraceScope& s, const py::args&) {
            if (!s.scope) return false;
            std::unique_ptr<plexus::Trace> t = std::move(s.scope);
            GilReleased waiting;  // the end waits for the devices
            t->end();
            return false;
        });
    using RegionScope = Scope<plexus::TraceRegion>;
    py::class_<RegionScope>(m, "trace_region", "with plexus.trace_region(name): a named span in the trace (a step)")
        .def(py::init([](const std::string& name) { return RegionScope{name, nullptr}; }), py::arg("name"))
        .def("__enter__", [](RegionScope& s) -> RegionScope& { return s.enter(), s; }, py::return_value_policy::reference)
        .def("__exit__", [](RegionScope& s, const py::args&) {
            s.scope.reset();
            return false;
        });
}
