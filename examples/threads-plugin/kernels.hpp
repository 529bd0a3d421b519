// The ops this plugin offers, as plain loops over strided operands:
//   add sub mul div neg exp relu sum matmul   float32, float64
//   copy cast fill arange                     every dtype
// Everything else is reported unsupported, and the host never sends it.
#pragma once

#include <string>
#include <vector>

#include "plexus/plugin_kit.hpp"

struct px_plugin_buffer {
    char* data;
    uint64_t bytes;
    int32_t device;
};

namespace threads_plugin {

bool supported(int32_t op, int32_t dtype);
// PX_OK, or create()'s refusal when the kernel list names an op twice or one
// the op table lacks.
px_status refuse_wrong_kernel_list(px_plugin_error* err);

// One queued op: copies of the call's descs and attrs, which live only until
// execute returns.
struct Work {
    int32_t op = 0;
    std::vector<px_tensor_desc> inputs, outputs;
    px_binary_attrs binary{};
    px_reduce_attrs reduce{};
    px_fill_attrs fill{};
    px_arange_attrs arange{};
};

// Why a call that px_op_call_check has passed cannot be queued here:
// PX_ERROR_UNSUPPORTED for an (op, dtype) the plugin lacks; status PX_OK
// when it can (the call's form and layout are px_op_call_check's).
struct Refusal {
    px_status status = PX_OK;
    std::string why;
};
Refusal check_call(const px_op_call& call);
Work capture(const px_op_call& call);
// Runs on the device's worker an op check_call has accepted.
using Runner = void (*)(const Work&);
void run(const Work& work);
// After `work` failed: its outputs hold NaN or 0 (plugin.h, R9).
void fill_failed_outputs(const Work& work);

}  // namespace threads_plugin
