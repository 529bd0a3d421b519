// The nn ops that touch each element once: bias add and its gradient (a
// block per channel, summed in float64), activation gradients and dropout
// (the mask recomputed from Philox, never stored). The optimizer steps:
// kernels_optimizers.cu.
#include "kernel_util.cuh"
#include "plexus/philox.h"

namespace pxcuda {
namespace {

template <class T>
__global__ void bias_add(const T* __restrict__ x, const T* __restrict__ b, int64_t n, int64_t ch, int64_t inner,
                         T* __restrict__ out) {
    PX_GRID_STRIDE(i, n) out[i] = x[i] + b[(i / inner) % ch];
}

template <class T>
__global__ void bias_grad(const T* __restrict__ dy, int64_t outer, int64_t ch, int64_t inner, T* __restrict__ out) {
    __shared__ double part[kThreads];
    for (int64_t c = blockIdx.x; c < ch; c += gridDim.x) {
        double s = 0;
        for (int64_t e = threadIdx.x; e < outer * inner; e += blockDim.x)
            s += double(dy[((e / inner) * ch + c) * inner + e % inner]);
        const double sum = block_sum(s, part);
        if (threadIdx.x == 0) out[c] = T(sum);
    }
}

// out[i] = f(i); f reads what it needs.
template <class F>
__global__ void pointwise(int64_t n, F f) {
    PX_GRID_STRIDE(i, n) f(i);
}

template <class T>
void pointwise_typed(const OpArgs& t, const Launch& l) {
    const int64_t n = t.out.numel();
    T* out = reinterpret_cast<T*>(t.out.data);
    const T* a = reinterpret_cast<const T*>(t.in[0].data);
    const T* b = t.num_inputs > 1 ? reinterpret_cast<const T*>(t.in[1].data) : nullptr;
    const unsigned grid = grid_for(n, l);
    switch (t.op) {
    case PX_OP_BIAS_ADD:
    case PX_OP_BIAS_GRAD: {
        const Operand& x = t.in[0];
        int64_t inner = 1;
        for (int i = 2; i < x.ndim; ++i) inner *= x.shape[i];
        if (t.op == PX_OP_BIAS_ADD) {
            if (n == 0) return;
            bias_add<T><<<grid, kThreads, 0, l.stream>>>(a, b, n, x.shape[1], inner, out);
            return check_launch("bias_add");
        }
        if (x.shape[1] == 0) return;
        const unsigned blocks = unsigned(std::min<int64_t>(x.shape[1], 65535));
        bias_grad<T><<<blocks, kThreads, 0, l.stream>>>(a, x.shape[0], x.shape[1], inner, out);
        return check_launch("bias_grad");
    }
    default: break;
    }
    if (n == 0) return;
    switch (t.op) {
    case PX_OP_RELU_BACKWARD:  // a = y, b = dy
        pointwise<<<grid, kThreads, 0, l.stream>>>(n, [=] __device__(int64_t i) { out[i] = a[i] > T(0) ? b[i] : T(0); });
        break;
    case PX_OP_SIGMOID_BACKWARD:
        pointwise<<<grid, kThreads, 0, l.stream>>>(n, [=] __device__(int64_t i) { out[i] = b[i] * a[i] * (T(1) - a[i]); });
        break;
    case PX_OP_TANH_BACKWARD:
        pointwise<<<grid, kThreads, 0, l.stream>>>(n, [=] __device__(int64_t i) { out[i] = b[i] * (T(1) - a[i] * a[i]); });
        break;
    case PX_OP_DROPOUT:
    case PX_OP_DROPOUT_BACKWARD: {  // the same mask both ways
        const px_dropout_attrs d = t.attrs.dropout;
        const T scale = T(1.0 / (1.0 - d.p));
        pointwise<<<grid, kThreads, 0, l.stream>>>(n, [=] __device__(int64_t i) {
            out[i] = px_dropout_keeps(d.seed, d.offset, i, d.p) ? a[i] * scale : T(0);
        });
        break;
    }
    default: throw Unsupported("not a pointwise nn op");
    }
    check_launch("pointwise");
}

}  // namespace

void run_nn_pointwise(const OpArgs& t, const Launch& l) {
    with_float(t.in[0].dtype, "nn ops", [&](auto v) { pointwise_typed<decltype(v)>(t, l); });
}

Kernels nn_pointwise_kernels() {
    return {{PX_OP_BIAS_ADD, through_float32<run_nn_pointwise>, kFloatDtypes},
            {PX_OP_BIAS_GRAD, through_float32<run_nn_pointwise>, kFloatDtypes},
            {PX_OP_RELU_BACKWARD, through_float32<run_nn_pointwise>, kFloatDtypes},
            {PX_OP_SIGMOID_BACKWARD, through_float32<run_nn_pointwise>, kFloatDtypes},
            {PX_OP_TANH_BACKWARD, through_float32<run_nn_pointwise>, kFloatDtypes},
            {PX_OP_DROPOUT, through_float32<run_nn_pointwise>, kFloatDtypes},
            {PX_OP_DROPOUT_BACKWARD, through_float32<run_nn_pointwise>, kFloatDtypes}};
}

}  // namespace pxcuda
