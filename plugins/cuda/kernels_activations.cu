// GELU, SiLU, leaky ReLU, softplus and the math functions (sin, floor, ...),
// and their gradients, by plexus/op_math.h's formulas (the CPU plugin's too):
// each value in float64, rounded once (the 16-bit floats go through float32
// copies).
#include "kernel_util.cuh"
#include "plexus/op_math.h"

namespace pxcuda {
namespace {

template <class T>
__global__ void activation(int32_t op, int64_t n, const T* __restrict__ x, const T* __restrict__ dy, double alpha,
                           T* __restrict__ out) {
    PX_GRID_STRIDE(i, n) {
        const double v = double(x[i]);
        switch (op) {
        case PX_OP_GELU: out[i] = T(px_gelu(v)); break;
        case PX_OP_SILU: out[i] = T(px_silu(v)); break;
        case PX_OP_LEAKY_RELU: out[i] = T(px_leaky_relu(v, alpha)); break;
        case PX_OP_GELU_BACKWARD: out[i] = T(px_mul_rn(double(dy[i]), px_gelu_grad(v))); break;
        case PX_OP_SILU_BACKWARD: out[i] = T(px_mul_rn(double(dy[i]), px_silu_grad(v))); break;
        case PX_OP_SOFTPLUS: out[i] = T(px_softplus(v)); break;
        case PX_OP_SOFTPLUS_BACKWARD: out[i] = T(px_mul_rn(double(dy[i]), px_softplus_grad(v))); break;
        case PX_OP_LEAKY_RELU_BACKWARD: out[i] = T(px_leaky_relu_backward(v, double(dy[i]), alpha)); break;
        default: out[i] = T(px_math(op, v, dy ? double(dy[i]) : 0.0)); break;  // the math functions
        }
    }
}

void run_activation(const OpArgs& t, const Launch& l) {
    const int64_t n = t.out.numel();
    if (n == 0) return;
    const double alpha = t.attrs.alpha.alpha;  // leaky_relu's, when the op has attrs
    with_float(t.out.dtype, "activations", [&](auto v) {
        using T = decltype(v);
        const T* dy = t.num_inputs > 1 ? reinterpret_cast<const T*>(t.in[1].data) : nullptr;
        activation<T><<<grid_for(n, l), kThreads, 0, l.stream>>>(t.op, n, reinterpret_cast<const T*>(t.in[0].data), dy,
                                                                 alpha, reinterpret_cast<T*>(t.out.data));
    });
    check_launch("activation");
}

}  // namespace

Kernels activation_kernels() {
    Kernels k;
    for (int32_t op : {PX_OP_MATH_ROWS})
        k.push_back({op, through_float32<run_activation>, kFloatDtypes});
    return k;
}

}  // namespace pxcuda
