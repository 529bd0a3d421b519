// The optimizer steps, in place: SGD (with or without momentum), SGD with
// Nesterov momentum, Adam and AdamW: the CPU plugin's formulas, each
// operation rounded on its own (mul_rn, add_rn, div_rn, sqrt_rn; nvcc would
// fuse multiply-adds), so replicas on the two plugins stay identical.
#include <cmath>

#include "kernel_util.cuh"

namespace pxcuda {
namespace {

template <class F>
__global__ void each(int64_t n, F f) {
    PX_GRID_STRIDE(i, n) f(i);
}

template <class T>
void step_typed(const OpArgs& t, const Launch& l) {
    const int64_t n = t.out.numel();
    if (n == 0) return;
    T* p = reinterpret_cast<T*>(t.out.data);  // the parameter, in place
    const T* g = reinterpret_cast<const T*>(t.in[1].data);
    const unsigned grid = grid_for(n, l);
    switch (t.op) {
    case PX_OP_SGD_UPDATE:
    case PX_OP_NAG_UPDATE: {  // in: param, grad[, momentum]; out: param[, momentum]
        const px_sgd_attrs& s = t.attrs.sgd;
        const T lr = T(s.lr), wd = T(s.weight_decay), rescale = T(s.rescale), mu = T(s.momentum);
        if (t.num_inputs == 2) {
            each<<<grid, kThreads, 0, l.stream>>>(n, [=] __device__(int64_t i) {
                p[i] = add_rn(p[i], -mul_rn(lr, add_rn(mul_rn(rescale, g[i]), mul_rn(wd, p[i]))));
            });
            break;
        }
        T* m = reinterpret_cast<T*>(t.out2.data);
        const bool nesterov = t.op == PX_OP_NAG_UPDATE;
        each<<<grid, kThreads, 0, l.stream>>>(n, [=] __device__(int64_t i) {
            const T gi = add_rn(mul_rn(rescale, g[i]), mul_rn(wd, p[i]));
            m[i] = add_rn(mul_rn(mu, m[i]), gi);
            const T d = nesterov ? add_rn(gi, mul_rn(mu, m[i])) : m[i];
            p[i] = add_rn(p[i], -mul_rn(lr, d));
        });
        break;
    }
    case PX_OP_ADAM_UPDATE: {  // in: param, grad, state (m; v); out: param, state
        const px_adam_attrs& a = t.attrs.adam;
        T* m = reinterpret_cast<T*>(t.out2.data);
        T* v = m + n;
        const T rescale = T(a.rescale), wd = T(a.weight_decay), b1 = T(a.beta1), b2 = T(a.beta2),
                rest1 = T(a.one_minus_beta1), rest2 = T(a.one_minus_beta2), eps = T(a.eps), decay = T(a.decay),
                step = T(a.step_size), root2 = T(a.root_correction2);
        const bool decoupled = a.decoupled != 0;
        each<<<grid, kThreads, 0, l.stream>>>(n, [=] __device__(int64_t i) {
            T gi = mul_rn(rescale, g[i]), pi = p[i];
            if (decoupled) pi = mul_rn(pi, decay);
            else gi = add_rn(gi, mul_rn(wd, pi));
            const T mi = add_rn(mul_rn(b1, m[i]), mul_rn(rest1, gi));
            const T vi = add_rn(mul_rn(b2, v[i]), mul_rn(mul_rn(rest2, gi), gi));
            const T denom = add_rn(div_rn(sqrt_rn(vi), root2), eps);
            p[i] = add_rn(pi, -mul_rn(step, div_rn(mi, denom)));
            m[i] = mi, v[i] = vi;
        });
        break;
    }
    default: throw Unsupported("not an optimizer step");
    }
    check_launch("optimizer step");
}

void run_step(const OpArgs& t, const Launch& l) {
    with_float(t.in[0].dtype, "optimizer steps", [&](auto v) { step_typed<decltype(v)>(t, l); });
}

}  // namespace

Kernels optimizer_kernels() {
    return {{PX_OP_SGD_UPDATE, through_float32<run_step>, kFloatDtypes},
            {PX_OP_NAG_UPDATE, through_float32<run_step>, kFloatDtypes},
            {PX_OP_ADAM_UPDATE, through_float32<run_step>, kFloatDtypes}};
}

}  // namespace pxcuda
