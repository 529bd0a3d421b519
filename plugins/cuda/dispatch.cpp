// The CUDA plugin's kernel table: every kernel file's list of the ops it
// runs (the CPU plugin's set, so a program runs unchanged on either).
#include "op_args.hpp"

namespace pxcuda {
namespace {
const plexus::kit::KernelTable<Runner>& table() {
    static const plexus::kit::KernelTable<Runner> kernels(elementwise_kernels(), reduce_kernels(), blas_kernels(),
                                                          data_kernels(), conv_kernels(), pool_kernels(),
                                                          pool_fused_kernels(), softmax_kernels(), nn_pointwise_kernels());
    return kernels;
}
}  // namespace

bool kernel_supports(int32_t op, int32_t dtype) { return table().offers(op, dtype); }

void run_op(const OpArgs& t, const Launch& l) { table().runner(t.op)(t, l); }

px_status refuse_wrong_kernel_lists(px_plugin_error* err) { return table().refuse_wrong_lists(err, "cuda"); }

}  // namespace pxcuda
