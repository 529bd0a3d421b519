// C API: a trace of where the time goes (trace.hpp, trace_writer.cpp).
#include "objects.hpp"
#include "trace.hpp"

using namespace px;

extern "C" {

px_status px_trace_begin(px_runtime* runtime, const char* path) {
    return guard("px_trace_begin", [&] {
        Runtime& rt = get_runtime(runtime);
        if (!path) fail(PX_ERROR_INVALID_ARGUMENT, "path is NULL");
        rt.tracer->begin(path, every_device(rt));
    });
}

px_status px_trace_end(px_runtime* runtime) {
    return guard("px_trace_end", [&] { get_runtime(runtime).tracer->end(); });
}

px_status px_trace_region_begin(px_runtime* runtime, const char* name) {
    return guard("px_trace_region_begin", [&] {
        Runtime& rt = get_runtime(runtime);
        if (!name) fail(PX_ERROR_INVALID_ARGUMENT, "name is NULL");
        if (rt.tracer->on()) rt.tracer->region_begin(name);
    });
}

px_status px_trace_region_end(px_runtime* runtime) {
    return guard("px_trace_region_end", [&] {
        Runtime& rt = get_runtime(runtime);
        if (rt.tracer->on()) rt.tracer->region_end();
    });
}

}  // extern "C"
