// Batch normalisation over every axis but 1 of x (N,C,...): the statistics
// and the gradient's sums take a block per channel, summed in float64 in a
// fixed order; the elementwise passes a thread per element.
#include <cmath>

#include "kernel_util.cuh"

namespace pxcuda {
namespace {

// x (N,C,...) as (outer, channels, inner).
struct ChannelView {
    int64_t outer, channels, inner;
    explicit ChannelView(const Operand& x) : outer(x.shape[0]), channels(x.shape[1]), inner(1) {
        for (int i = 2; i < x.ndim; ++i) inner *= x.shape[i];
    }
};

// The index of channel c's e-th value.
__device__ inline int64_t channel_at(const ChannelView& v, int64_t c, int64_t e) {
    return ((e / v.inner) * v.channels + c) * v.inner + e % v.inner;
}

template <class T>
__global__ void stats(const T* __restrict__ x, ChannelView v, T* __restrict__ mean, T* __restrict__ var) {
    __shared__ double part[kThreads];
    const int64_t m = v.outer * v.inner;
    for (int64_t c = blockIdx.x; c < v.channels; c += gridDim.x) {
        double s = 0;
        for (int64_t e = threadIdx.x; e < m; e += blockDim.x) s += double(x[channel_at(v, c, e)]);
        const double mu = block_sum(s, part) / double(m);
        double q = 0;  // two passes: the squares of the deviations, not E[x^2] - mean^2
        for (int64_t e = threadIdx.x; e < m; e += blockDim.x) {
            const double d = double(x[channel_at(v, c, e)]) - mu;
            q += d * d;
        }
        const double sq = block_sum(q, part);
        if (threadIdx.x == 0) mean[c] = T(mu), var[c] = T(sq / double(m));
    }
}

template <class T>
__global__ void backward_reduce(const T* __restrict__ x, const T* __restrict__ dy, const T* __restrict__ mean,
                                const T* __restrict__ var, double eps, ChannelView v, T* __restrict__ dgamma,
                                T* __restrict__ dbeta) {
    __shared__ double part[kThreads];
    const int64_t m = v.outer * v.inner;
    for (int64_t c = blockIdx.x; c < v.channels; c += gridDim.x) {
        const double mu = double(mean[c]);
        double s = 0, p = 0;
        for (int64_t e = threadIdx.x; e < m; e += blockDim.x) {
            const int64_t i = channel_at(v, c, e);
            s += double(dy[i]);
            p += double(dy[i]) * (double(x[i]) - mu);
        }
        const double sum_dy = block_sum(s, part), sum_dy_xmu = block_sum(p, part);
        if (threadIdx.x == 0) {
            dbeta[c] = T(sum_dy);
            dgamma[c] = T(sum_dy_xmu / sqrt(double(var[c]) + eps));
        }
    }
}

template <class T>
__global__ void normalise(const T* __restrict__ x, const T* __restrict__ mean, const T* __restrict__ var,
                          const T* __restrict__ gamma, const T* __restrict__ beta, double eps, ChannelView v, int64_t n,
                          T* __restrict__ y) {
    PX_GRID_STRIDE(i, n) {
        const int64_t c = (i / v.inner) % v.channels;
        const T scale = T(double(gamma[c]) / sqrt(double(var[c]) + eps));
        y[i] = (x[i] - mean[c]) * scale + beta[c];
    }
}

template <class T>
__global__ void backward(const T* __restrict__ x, const T* __restrict__ dy, const T* __restrict__ mean,
                         const T* __restrict__ var, const T* __restrict__ gamma, const T* __restrict__ dgamma,
                         const T* __restrict__ dbeta, double eps, ChannelView v, int64_t n, T* __restrict__ dx) {
    const double m = double(v.outer * v.inner);
    PX_GRID_STRIDE(i, n) {
        const int64_t c = (i / v.inner) % v.channels;
        const double istd = 1.0 / sqrt(double(var[c]) + eps);
        const T k = T(double(gamma[c]) * istd), shift = T(double(dbeta[c]) / m), slope = T(istd * double(dgamma[c]) / m);
        dx[i] = k * (dy[i] - shift - (x[i] - mean[c]) * slope);
    }
}

template <class T>
void batch_norm_typed(const OpArgs& t, const Launch& l) {
    const ChannelView v(t.in[0]);
    auto in = [&](int i) { return reinterpret_cast<const T*>(t.in[i].data); };
    auto out = [](const Operand& o) { return reinterpret_cast<T*>(o.data); };
    const double eps = t.has_attrs ? t.attrs.batch_norm.eps : 0;
    const int64_t n = t.in[0].numel();
    const unsigned channel_blocks = unsigned(std::min<int64_t>(std::max<int64_t>(v.channels, 1), 65535));
    switch (t.op) {
    case PX_OP_BATCH_NORM_STATS:
        stats<T><<<channel_blocks, kThreads, 0, l.stream>>>(in(0), v, out(t.out), out(t.out2));
        return check_launch("batch_norm_stats");
    case PX_OP_BATCH_NORM:
        normalise<T><<<grid_for(n, l), kThreads, 0, l.stream>>>(in(0), in(1), in(2), in(3), in(4), eps, v, n, out(t.out));
        return check_launch("batch_norm");
    case PX_OP_BATCH_NORM_BACKWARD_REDUCE:
        backward_reduce<T><<<channel_blocks, kThreads, 0, l.stream>>>(in(0), in(1), in(2), in(3), eps, v, out(t.out),
                                                                      out(t.out2));
        return check_launch("batch_norm_backward_reduce");
    case PX_OP_BATCH_NORM_BACKWARD:
        backward<T><<<grid_for(n, l), kThreads, 0, l.stream>>>(in(0), in(1), in(2), in(3), in(4), in(5), in(6), eps, v, n,
                                                               out(t.out));
        return check_launch("batch_norm_backward");
    default: throw Unsupported("not a batch normalisation op");
    }
}

void run_batch_norm(const OpArgs& t, const Launch& l) {
    with_float(t.in[0].dtype, "batch normalisation", [&](auto v) { batch_norm_typed<decltype(v)>(t, l); });
}

}  // namespace

Kernels batch_norm_kernels() {
    return {{PX_OP_BATCH_NORM_STATS, through_float32<run_batch_norm>, kFloatDtypes},
            {PX_OP_BATCH_NORM, through_float32<run_batch_norm>, kFloatDtypes},
            {PX_OP_BATCH_NORM_BACKWARD_REDUCE, through_float32<run_batch_norm>, kFloatDtypes},
            {PX_OP_BATCH_NORM_BACKWARD, through_float32<run_batch_norm>, kFloatDtypes}};
}

}  // namespace pxcuda
