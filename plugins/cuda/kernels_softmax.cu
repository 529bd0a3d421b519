// Row-wise log-softmax and the fused softmax cross-entropy, with gradients:
// a warp per row of the (N, C) input. Every row subtracts its maximum first,
// so large logits do not overflow; sums accumulate in float64, as on the CPU
// plugin. A label outside [0, C) is reported at the next wait.
#include <cmath>

#include "kernel_util.cuh"

namespace pxcuda {
namespace {

constexpr int kWarp = 32;

__device__ double warp_sum(double v) {
    for (int o = kWarp / 2; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// The maximum, NaN winning (so a NaN row gives NaN, as on the CPU plugin).
__device__ double nan_max(double a, double b) { return isnan(a) ? a : isnan(b) ? b : (a > b ? a : b); }

__device__ double warp_max(double v) {
    for (int o = kWarp / 2; o > 0; o /= 2) v = nan_max(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

// max and log(sum(exp(x - max))) of one row, known to every lane.
template <class T>
__device__ void row_stats(const T* x, int64_t c, int lane, double& m, double& log_sum) {
    double mm = -INFINITY;
    for (int64_t j = lane; j < c; j += kWarp) mm = nan_max(mm, double(x[j]));
    m = warp_max(mm);
    double s = 0;
    for (int64_t j = lane; j < c; j += kWarp) s += exp(double(x[j]) - m);
    log_sum = log(warp_sum(s));
}

struct Rows {
    int64_t n, c;
};

__device__ int64_t label_at(const void* labels, bool is32, int64_t r) {
    return is32 ? int64_t(static_cast<const int32_t*>(labels)[r]) : static_cast<const int64_t*>(labels)[r];
}

// One kernel for the four ops: the warp of row r computes what `op` needs.
template <class T>
__global__ void softmax_rows(int32_t op, Rows g, const T* __restrict__ x, const void* labels, bool labels32,
                             const T* __restrict__ extra, T* __restrict__ out, DeviceStatus* status) {
    const int lane = threadIdx.x % kWarp;
    const int64_t warps = int64_t(gridDim.x) * (blockDim.x / kWarp);
    for (int64_t r = int64_t(blockIdx.x) * (blockDim.x / kWarp) + threadIdx.x / kWarp; r < g.n; r += warps) {
        const T* xr = x + r * g.c;
        if (op == PX_OP_LOG_SOFTMAX_BACKWARD) {  // x = y, extra = dy; dx = dy - exp(y) * sum(dy)
            const T* dy = extra + r * g.c;
            double s = 0;
            for (int64_t j = lane; j < g.c; j += kWarp) s += double(dy[j]);
            s = warp_sum(s);
            for (int64_t j = lane; j < g.c; j += kWarp) out[r * g.c + j] = T(double(dy[j]) - exp(double(xr[j])) * s);
            continue;
        }
        double m, ls;
        row_stats(xr, g.c, lane, m, ls);
        if (op == PX_OP_LOG_SOFTMAX) {
            for (int64_t j = lane; j < g.c; j += kWarp) out[r * g.c + j] = T(double(xr[j]) - m - ls);
            continue;
        }
        int64_t k = label_at(labels, labels32, r);
        if (k < 0 || k >= g.c) {
            if (lane == 0) report_failure(status, status_label_out_of_range, op, r, k, g.c);
            k = -1;
        }
        if (op == PX_OP_SOFTMAX_CROSS_ENTROPY) {  // loss = logsumexp(x) - x[label]
            if (lane == 0) out[r] = k < 0 ? T(NAN) : T(m + ls - double(xr[k]));
            continue;
        }
        const double d = double(extra[r]);  // dloss; dx = (softmax(x) - onehot(label)) * dloss
        for (int64_t j = lane; j < g.c; j += kWarp)
            out[r * g.c + j] = T((exp(double(xr[j]) - m - ls) - (j == k ? 1.0 : 0.0)) * d);
    }
}

template <class T>
void softmax_typed(const OpArgs& t, const Launch& l) {
    const Rows g{t.in[0].shape[0], t.in[0].shape[1]};
    if (g.n == 0 || (g.c == 0 && t.op != PX_OP_SOFTMAX_CROSS_ENTROPY)) return;
    const bool labeled = t.op == PX_OP_SOFTMAX_CROSS_ENTROPY || t.op == PX_OP_SOFTMAX_CROSS_ENTROPY_BACKWARD;
    const void* labels = labeled ? t.in[1].data : nullptr;
    const bool labels32 = labeled && t.in[1].dtype == PX_INT32;
    const T* extra = nullptr;
    if (t.op == PX_OP_LOG_SOFTMAX_BACKWARD) extra = reinterpret_cast<const T*>(t.in[1].data);
    if (t.op == PX_OP_SOFTMAX_CROSS_ENTROPY_BACKWARD) extra = reinterpret_cast<const T*>(t.in[2].data);
    const int rows_per_block = kThreads / kWarp;
    const unsigned blocks = static_cast<unsigned>(
        std::max<int64_t>(1, std::min<int64_t>((g.n + rows_per_block - 1) / rows_per_block, int64_t(l.sm_count) * 16)));
    softmax_rows<T><<<blocks, kThreads, 0, l.stream>>>(t.op, g, reinterpret_cast<const T*>(t.in[0].data), labels,
                                                       labels32, extra, reinterpret_cast<T*>(t.out.data), l.status);
    check_launch("softmax_rows");
}

}  // namespace

void run_softmax(const OpArgs& t, const Launch& l) {
    with_float(t.in[0].dtype, "softmax", [&](auto v) { softmax_typed<decltype(v)>(t, l); });
}

Kernels softmax_kernels() {
    return {{PX_OP_LOG_SOFTMAX, through_float32<run_softmax>, kFloatDtypes},
            {PX_OP_LOG_SOFTMAX_BACKWARD, through_float32<run_softmax>, kFloatDtypes},
            {PX_OP_SOFTMAX_CROSS_ENTROPY, through_float32<run_softmax>, kFloatDtypes},
            {PX_OP_SOFTMAX_CROSS_ENTROPY_BACKWARD, through_float32<run_softmax>, kFloatDtypes}};
}

}  // namespace pxcuda
