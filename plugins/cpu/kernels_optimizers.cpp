// The optimizer steps, in place: SGD (with or without momentum), SGD with
// Nesterov momentum, Adam and AdamW. Each is the unfused formula of its
// attrs (plugin.h), every operation rounded on its own, so the CUDA plugin
// gets the same bits.
#include <cmath>

#include "kernel_util.hpp"
#include "kernels.hpp"

namespace pxcpu {
namespace {

template <class T>
void step_typed(const OpTask& t) {
    const int64_t n = t.out.numel();
    T* p = reinterpret_cast<T*>(t.out.data);  // the parameter, in place
    const T* g = reinterpret_cast<const T*>(t.in[1].data);
    switch (t.op) {
    case PX_OP_SGD_UPDATE:
    case PX_OP_NAG_UPDATE: {  // in: param, grad[, momentum]; out: param[, momentum]
        const px_sgd_attrs& s = t.attrs.sgd;
        const T lr = T(s.lr), wd = T(s.weight_decay), rescale = T(s.rescale), mu = T(s.momentum);
        if (t.num_inputs == 2) {
            parallel_for(n, [=](int64_t i) { p[i] -= lr * (rescale * g[i] + wd * p[i]); });
            return;
        }
        T* m = reinterpret_cast<T*>(t.out2.data);
        if (t.op == PX_OP_SGD_UPDATE) {
            parallel_for(n, [=](int64_t i) {
                T gi = rescale * g[i] + wd * p[i];
                m[i] = mu * m[i] + gi;
                p[i] -= lr * m[i];
            });
        } else {
            parallel_for(n, [=](int64_t i) {
                T gi = rescale * g[i] + wd * p[i];
                m[i] = mu * m[i] + gi;
                p[i] -= lr * (gi + mu * m[i]);
            });
        }
        return;
    }
    case PX_OP_ADAM_UPDATE: {  // in: param, grad, state (m; v); out: param, state
        const px_adam_attrs& a = t.attrs.adam;
        T* m = reinterpret_cast<T*>(t.out2.data);
        T* v = m + n;
        const T rescale = T(a.rescale), wd = T(a.weight_decay), b1 = T(a.beta1), b2 = T(a.beta2),
                rest1 = T(a.one_minus_beta1), rest2 = T(a.one_minus_beta2), eps = T(a.eps), decay = T(a.decay),
                step = T(a.step_size), root2 = T(a.root_correction2);
        const bool decoupled = a.decoupled != 0;
        parallel_for(n, [=](int64_t i) {
            T gi = rescale * g[i], pi = p[i];
            if (decoupled) pi = pi * decay;
            else gi = gi + wd * pi;
            const T mi = b1 * m[i] + rest1 * gi;
            const T vi = b2 * v[i] + (rest2 * gi) * gi;
            const T denom = std::sqrt(vi) / root2 + eps;
            p[i] = pi - step * (mi / denom);
            m[i] = mi, v[i] = vi;
        });
        return;
    }
    default: throw KernelError("not an optimizer step");
    }
}

void run_step(const OpTask& t) {
    if (t.in[0].dtype == PX_FLOAT32) return step_typed<float>(t);
    if (t.in[0].dtype == PX_FLOAT64) return step_typed<double>(t);
    throw KernelError("optimizer steps need float32 or float64");
}

}  // namespace

Kernels optimizer_kernels() {
    return {{PX_OP_SGD_UPDATE, through_float32<run_step>, kFloatDtypes},
            {PX_OP_NAG_UPDATE, through_float32<run_step>, kFloatDtypes},
            {PX_OP_ADAM_UPDATE, through_float32<run_step>, kFloatDtypes}};
}

}  // namespace pxcpu
