// The nn ops that touch each element once: bias add and its gradient and
// the activation gradients (dropout: kernels_dropout.cpp; the optimizer
// steps: kernels_optimizers.cpp).
#include <cmath>
#include <vector>

#include "channel_sums.hpp"
#include "kernel_util.hpp"
#include "kernels.hpp"

namespace pxcpu {
namespace {

template <class T>
void pointwise_typed(const OpTask& t) {
    const int64_t n = t.out.numel();
    T* out = reinterpret_cast<T*>(t.out.data);
    const T* a = reinterpret_cast<const T*>(t.in[0].data);
    const T* b = reinterpret_cast<const T*>(t.in[1].data);  // the second input, for the ops that have one
    switch (t.op) {
    case PX_OP_BIAS_ADD: {
        const ChannelView v(t.in[0]);
        const int64_t outer = v.outer, ch = v.channels, inner = v.inner;
        auto row = [&](int64_t r) {  // row r is (o, c) when inner > 1, else one sample o
            if (inner > 1) {
                const T bias = b[r % ch];
#pragma omp simd
                for (int64_t k = 0; k < inner; ++k) out[r * inner + k] = a[r * inner + k] + bias;
            } else {
#pragma omp simd
                for (int64_t k = 0; k < ch; ++k) out[r * ch + k] = a[r * ch + k] + b[k];
            }
        };
        const int64_t rows = inner > 1 ? outer * ch : outer;
        if (rows > 1 && n >= parallel_grain) {
#pragma omp parallel for schedule(static)
            for (int64_t r = 0; r < rows; ++r) row(r);
        } else {
            for (int64_t r = 0; r < rows; ++r) row(r);
        }
        return;
    }
    case PX_OP_BIAS_GRAD: {
        const ChannelView v(t.in[0]);
        const int64_t outer = v.outer, ch = v.channels, inner = v.inner;
        // A dense layer's (N, C): the sums over axis 0, which read the rows
        // in turn into a row of sums. A column at a time read with a stride
        // of C, waiting on each add: 57 us for LeNet's (256,120). The
        // same additions in the same order, so the same bits.
        if (inner == 1) return sum_columns(a, outer, ch, out);
        const ChannelSums<Sums::x, T> sum;
        each_channel(v, [&](int64_t c) {
            double s = 0, unused = 0;
            sum(v, c, a, nullptr, 0, s, unused);
            out[c] = T(s);
        });
        return;
    }
    case PX_OP_RELU_BACKWARD:  // a = y, b = dy
        // dy is loaded whether or not it is used, so the select needs no
        // branch: taken or not is random, and a mispredicted branch per
        // element made this pass several times slower than a plain add.
        parallel_for(n, [=](int64_t i) {
            const T d = b[i];
            out[i] = a[i] > T(0) ? d : T(0);
        });
        return;
    case PX_OP_SIGMOID_BACKWARD:
        parallel_for(n, [=](int64_t i) { out[i] = b[i] * a[i] * (T(1) - a[i]); });
        return;
    case PX_OP_TANH_BACKWARD:
        parallel_for(n, [=](int64_t i) { out[i] = b[i] * (T(1) - a[i] * a[i]); });
        return;
    default: throw KernelError("not a pointwise nn op");
    }
}

}  // namespace

void run_nn_pointwise(const OpTask& t) {
    if (t.in[0].dtype == PX_FLOAT32) return pointwise_typed<float>(t);
    if (t.in[0].dtype == PX_FLOAT64) return pointwise_typed<double>(t);
    throw KernelError("nn ops need float32 or float64");
}

Kernels nn_pointwise_kernels() {
    return {{PX_OP_BIAS_ADD, through_float32<run_nn_pointwise>, kFloatDtypes},
            {PX_OP_BIAS_GRAD, through_float32<run_nn_pointwise>, kFloatDtypes},
            {PX_OP_RELU_BACKWARD, through_float32<run_nn_pointwise>, kFloatDtypes},
            {PX_OP_SIGMOID_BACKWARD, through_float32<run_nn_pointwise>, kFloatDtypes},
            {PX_OP_TANH_BACKWARD, through_float32<run_nn_pointwise>, kFloatDtypes}};
}

}  // namespace pxcpu
