// GELU, SiLU, leaky ReLU, softplus and the math functions (sin, floor, ...),
// and their gradients, by plexus/op_math.h's formulas (the CUDA plugin's
// too): each value in float64, rounded once (the 16-bit floats go through
// float32 copies).
#include "plexus/op_math.h"

#include "kernel_util.hpp"
#include "kernels.hpp"

namespace pxcpu {
namespace {

template <class T>
void activation_typed(const OpTask& t) {
    const int64_t n = t.out.numel();
    T* out = reinterpret_cast<T*>(t.out.data);
    const T* x = reinterpret_cast<const T*>(t.in[0].data);
    const T* dy = reinterpret_cast<const T*>(t.in[1].data);  // the gradients' second input
    const double alpha = t.attrs.alpha.alpha;                // leaky_relu's, when the op has attrs
    switch (t.op) {
    case PX_OP_GELU: return parallel_for(n, [=](int64_t i) { out[i] = T(px_gelu(double(x[i]))); });
    case PX_OP_SILU: return parallel_for(n, [=](int64_t i) { out[i] = T(px_silu(double(x[i]))); });
    case PX_OP_LEAKY_RELU:
        return parallel_for(n, [=](int64_t i) { out[i] = T(px_leaky_relu(double(x[i]), alpha)); });
    case PX_OP_GELU_BACKWARD:
        return parallel_for(n, [=](int64_t i) { out[i] = T(px_mul_rn(double(dy[i]), px_gelu_grad(double(x[i])))); });
    case PX_OP_SILU_BACKWARD:
        return parallel_for(n, [=](int64_t i) { out[i] = T(px_mul_rn(double(dy[i]), px_silu_grad(double(x[i])))); });
    case PX_OP_LEAKY_RELU_BACKWARD:
        return parallel_for(n, [=](int64_t i) { out[i] = T(px_leaky_relu_backward(double(x[i]), double(dy[i]), alpha)); });
    case PX_OP_SOFTPLUS: return parallel_for(n, [=](int64_t i) { out[i] = T(px_softplus(double(x[i]))); });
    case PX_OP_SOFTPLUS_BACKWARD:
        return parallel_for(n, [=](int64_t i) { out[i] = T(px_mul_rn(double(dy[i]), px_softplus_grad(double(x[i])))); });
    default: {  // the math functions (px_math)
        const bool gradient = t.num_inputs > 1;
        return parallel_for(n, [=, op = t.op](int64_t i) { out[i] = T(px_math(op, double(x[i]), gradient ? double(dy[i]) : 0.0)); });
    }
    }
}

void run_activation(const OpTask& t) {
    if (t.out.dtype == PX_FLOAT32) return activation_typed<float>(t);
    if (t.out.dtype == PX_FLOAT64) return activation_typed<double>(t);
    throw KernelError("activations need float32 or float64");
}

}  // namespace

Kernels activation_kernels() {
    Kernels k;
    for (int32_t op : {PX_OP_MATH_ROWS})
        k.push_back({op, through_float32<run_activation>, kFloatDtypes});
    return k;
}

}  // namespace pxcpu
