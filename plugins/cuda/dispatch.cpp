// The CUDA plugin's kernel table: every kernel file's list of the ops it
// runs (the CPU plugin's set, so a program runs unchanged on either).
#include <deque>

#include "op_args.hpp"

namespace pxcuda {
namespace {
const plexus::kit::KernelTable<Runner>& table() {
    static const plexus::kit::KernelTable<Runner> kernels(elementwise_kernels(), reduce_kernels(), blas_kernels(),
                                                          data_kernels(), conv_kernels(), pool_kernels(),
                                                          pool_fused_kernels(), softmax_kernels(), nn_pointwise_kernels(),
                                                          batch_norm_kernels(), optimizer_kernels(), activation_kernels(),
                                                          take_kernels());
    return kernels;
}
}  // namespace

bool kernel_supports(int32_t op, int32_t dtype) { return table().offers(op, dtype); }

void run_op(const OpArgs& t, const Launch& l) { table().runner(t.op)(t, l); }

// The float32 copies are scratch released in stream order after the op
// (ops queued later may reuse them); the conversions are the cast kernel's.
void run_in_float32(const OpArgs& t, const Launch& l, Runner float32_kernel) {
    std::deque<Scratch> copies;  // Scratch neither moves nor copies
    auto allocate = [&](uint64_t bytes) { return copies.emplace_back(l, bytes).as<void>(); };
    plexus::kit::run_in_float32(
        t, allocate, [&](const OpArgs& cast) { run_data(cast, l); }, [&](const OpArgs& wide) { float32_kernel(wide, l); });
}

px_status refuse_wrong_kernel_lists(px_plugin_error* err) { return table().refuse_wrong_lists(err, "cuda"); }

}  // namespace pxcuda
