// GELU, SiLU and leaky ReLU, and their gradients from the forward op's
// input: each value computed in float64 and rounded once, as the CPU plugin
// does (the 16-bit floats go through float32 copies), every product and sum
// rounded on its own (nvcc would fuse them into multiply-adds the CPU
// plugin does not make).
#include "kernel_util.cuh"

namespace pxcuda {
namespace {

constexpr double kSqrtHalf = 0.70710678118654752440;    // 1 / sqrt(2)
constexpr double kInvSqrt2Pi = 0.39894228040143267794;  // 1 / sqrt(2 pi)

// Phi(x) = erfc(-x / sqrt 2) / 2, which keeps its digits far below zero.
__device__ double gelu(double x) { return mul_rn(mul_rn(0.5, x), erfc(mul_rn(-x, kSqrtHalf))); }
__device__ double gelu_grad(double x) {
    const double density = mul_rn(mul_rn(x, kInvSqrt2Pi), exp(mul_rn(mul_rn(-0.5, x), x)));
    return add_rn(mul_rn(0.5, erfc(mul_rn(-x, kSqrtHalf))), density);
}
__device__ double silu(double x) { return x / add_rn(1.0, exp(-x)); }
__device__ double silu_grad(double x) {
    const double s = 1.0 / add_rn(1.0, exp(-x));
    return mul_rn(s, add_rn(1.0, mul_rn(x, add_rn(1.0, -s))));
}

template <class T>
__global__ void activation(int32_t op, int64_t n, const T* __restrict__ x, const T* __restrict__ dy, double alpha,
                           T* __restrict__ out) {
    PX_GRID_STRIDE(i, n) {
        const double v = double(x[i]);
        switch (op) {
        case PX_OP_GELU: out[i] = T(gelu(v)); break;
        case PX_OP_SILU: out[i] = T(silu(v)); break;
        case PX_OP_LEAKY_RELU: out[i] = T(v > 0 || v != v ? v : mul_rn(alpha, v)); break;
        case PX_OP_GELU_BACKWARD: out[i] = T(mul_rn(double(dy[i]), gelu_grad(v))); break;
        case PX_OP_SILU_BACKWARD: out[i] = T(mul_rn(double(dy[i]), silu_grad(v))); break;
        default: out[i] = T(v > 0 ? double(dy[i]) : mul_rn(alpha, double(dy[i]))); break;  // LEAKY_RELU_BACKWARD
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
    for (int32_t op : {PX_OP_GELU, PX_OP_SILU, PX_OP_LEAKY_RELU, PX_OP_GELU_BACKWARD, PX_OP_SILU_BACKWARD,
                       PX_OP_LEAKY_RELU_BACKWARD})
        k.push_back({op, through_float32<run_activation>, kFloatDtypes});
    return k;
}

}  // namespace pxcuda
