// GELU, SiLU and leaky ReLU, and their gradients from the forward op's
// input. Each value is computed in float64 and rounded once, as the CUDA
// plugin does, so the two agree to the last bit wherever their float64
// erf and exp do (the 16-bit floats go through float32 copies).
#include <cmath>

#include "kernel_util.hpp"
#include "kernels.hpp"

namespace pxcpu {
namespace {

constexpr double kSqrtHalf = 0.70710678118654752440;     // 1 / sqrt(2)
constexpr double kInvSqrt2Pi = 0.39894228040143267794;   // 1 / sqrt(2 pi)

// Phi(x) = erfc(-x / sqrt 2) / 2: 1 + erf(x / sqrt 2) would cancel for x
// below about -6 (gelu(-9) came out -0, not -1e-18).
double gelu(double x) { return 0.5 * x * std::erfc(-x * kSqrtHalf); }
double gelu_grad(double x) { return 0.5 * std::erfc(-x * kSqrtHalf) + x * kInvSqrt2Pi * std::exp(-0.5 * x * x); }
// (The CUDA plugin rounds each product and sum in this order, so the two agree.)
double silu(double x) { return x / (1.0 + std::exp(-x)); }
double silu_grad(double x) {
    const double s = 1.0 / (1.0 + std::exp(-x));
    return s * (1.0 + x * (1.0 - s));
}

template <class T>
void activation_typed(const OpTask& t) {
    const int64_t n = t.out.numel();
    T* out = reinterpret_cast<T*>(t.out.data);
    const T* x = reinterpret_cast<const T*>(t.in[0].data);
    const T* dy = reinterpret_cast<const T*>(t.in[1].data);  // the gradients' second input
    const double alpha = t.attrs.alpha.alpha;                // leaky_relu's, when the op has attrs
    switch (t.op) {
    case PX_OP_GELU: return parallel_for(n, [=](int64_t i) { out[i] = T(gelu(double(x[i]))); });
    case PX_OP_SILU: return parallel_for(n, [=](int64_t i) { out[i] = T(silu(double(x[i]))); });
    case PX_OP_LEAKY_RELU:
        return parallel_for(n, [=](int64_t i) {
            const double v = double(x[i]);
            out[i] = T(v > 0 || v != v ? v : alpha * v);
        });
    case PX_OP_GELU_BACKWARD:
        return parallel_for(n, [=](int64_t i) { out[i] = T(double(dy[i]) * gelu_grad(double(x[i]))); });
    case PX_OP_SILU_BACKWARD:
        return parallel_for(n, [=](int64_t i) { out[i] = T(double(dy[i]) * silu_grad(double(x[i]))); });
    case PX_OP_LEAKY_RELU_BACKWARD:
        return parallel_for(n, [=](int64_t i) {
            const double d = double(dy[i]);
            out[i] = T(x[i] > T(0) ? d : alpha * d);
        });
    default: throw KernelError("not an activation op");
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
    for (int32_t op : {PX_OP_GELU, PX_OP_SILU, PX_OP_LEAKY_RELU, PX_OP_GELU_BACKWARD, PX_OP_SILU_BACKWARD,
                       PX_OP_LEAKY_RELU_BACKWARD})
        k.push_back({op, through_float32<run_activation>, kFloatDtypes});
    return k;
}

}  // namespace pxcpu
