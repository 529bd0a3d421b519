// The CPU plugin's kernel table: every kernel file's list of the ops it runs.
#include "kernels.hpp"

namespace pxcpu {
namespace {
const plexus::kit::KernelTable<Runner>& table() {
    static const plexus::kit::KernelTable<Runner> kernels(
        elementwise_kernels(), reduce_kernels(), matmul_kernels(), data_kernels(), random_kernels(), conv_kernels(),
        pool_kernels(), pool_fused_kernels(), nn_pointwise_kernels(), dropout_kernels(), softmax_kernels(),
        batch_norm_kernels(), optimizer_kernels(), activation_kernels(), take_kernels());
    return kernels;
}
}  // namespace

bool kernel_supports(int32_t op, int32_t dtype) { return table().offers(op, dtype); }

void run_op(const OpTask& t) { table().runner(t.op)(t); }

px_status refuse_wrong_kernel_lists(px_plugin_error* err) { return table().refuse_wrong_lists(err, "cpu"); }

}  // namespace pxcpu
