// Batch normalisation over every axis but 1 of x (N,C,...): each channel's
// statistics and the gradient's sums accumulate in float64, one channel per
// thread; the elementwise passes take (sample, channel) rows.
#include <cmath>
#include <vector>

#include "channel_sums.hpp"
#include "kernel_util.hpp"
#include "kernels.hpp"

namespace pxcpu {
namespace {

// out[i] = f(i, c) for every element i of channel c.
template <class F>
void each_element(const ChannelView& v, F&& f) {
    const int64_t rows = v.outer * v.channels;
    auto row = [&](int64_t r) {
        const int64_t c = r % v.channels, at = r * v.inner;
#pragma omp simd
        for (int64_t k = 0; k < v.inner; ++k) f(at + k, c);
    };
    if (rows > 1 && rows * v.inner >= parallel_grain) {
#pragma omp parallel for schedule(static)
        for (int64_t r = 0; r < rows; ++r) row(r);
    } else {
        for (int64_t r = 0; r < rows; ++r) row(r);
    }
}

double inverse_std(double var, double eps) { return 1.0 / std::sqrt(var + eps); }

template <class T>
void batch_norm_typed(const OpTask& t) {
    const ChannelView v(t.in[0]);
    auto in = [&](int i) { return reinterpret_cast<const T*>(t.in[i].data); };
    const T* x = in(0);
    const double eps = t.has_attrs ? t.attrs.batch_norm.eps : 0;
    const double m = double(v.per_channel());
    switch (t.op) {
    case PX_OP_BATCH_NORM_STATS: {
        T* mean = reinterpret_cast<T*>(t.out.data);
        T* var = reinterpret_cast<T*>(t.out2.data);
        const ChannelSums<Sums::x, T> sum_x;
        const ChannelSums<Sums::deviation, T> sum_squares;
        each_channel(v, [&](int64_t c) {
            double sum = 0, squares = 0, unused = 0;
            sum_x(v, c, x, nullptr, 0, sum, unused);
            const double mu = sum / m;
            // Two passes: the squares of the deviations, not E[x^2] - mean^2, which cancels.
            sum_squares(v, c, x, nullptr, mu, squares, unused);
            var[c] = T(squares / m);
            mean[c] = T(mu);
        });
        return;
    }
    case PX_OP_BATCH_NORM: {  // x, mean, var, gamma, beta -> y
        const T *mean = in(1), *var = in(2), *gamma = in(3), *beta = in(4);
        T* y = reinterpret_cast<T*>(t.out.data);
        std::vector<T> scale(size_t(v.channels));
        for (int64_t c = 0; c < v.channels; ++c) scale[size_t(c)] = T(double(gamma[c]) * inverse_std(double(var[c]), eps));
        const T* s = scale.data();
        each_element(v, [&](int64_t i, int64_t c) { y[i] = (x[i] - mean[c]) * s[c] + beta[c]; });
        return;
    }
    case PX_OP_BATCH_NORM_BACKWARD_REDUCE: {  // x, dy, mean, var -> dgamma, dbeta
        const T *dy = in(1), *mean = in(2), *var = in(3);
        T* dgamma = reinterpret_cast<T*>(t.out.data);
        T* dbeta = reinterpret_cast<T*>(t.out2.data);
        const ChannelSums<Sums::gradient, T> sums;
        each_channel(v, [&](int64_t c) {
            double sum_dy = 0, sum_dy_dev = 0;
            sums(v, c, x, dy, double(mean[c]), sum_dy, sum_dy_dev);
            dbeta[c] = T(sum_dy);
            dgamma[c] = T(inverse_std(double(var[c]), eps) * sum_dy_dev);
        });
        return;
    }
    case PX_OP_BATCH_NORM_BACKWARD: {  // x, dy, mean, var, gamma, dgamma, dbeta -> dx
        const T *dy = in(1), *mean = in(2), *var = in(3), *gamma = in(4), *dgamma = in(5), *dbeta = in(6);
        T* dx = reinterpret_cast<T*>(t.out.data);
        // Per channel: dx = k * (dy - shift - (x - mean) * slope).
        std::vector<T> coefficients(size_t(v.channels) * 3);
        T* k = coefficients.data();
        T *shift = k + v.channels, *slope = shift + v.channels;
        for (int64_t c = 0; c < v.channels; ++c) {
            const double istd = inverse_std(double(var[c]), eps);
            k[c] = T(double(gamma[c]) * istd);
            shift[c] = T(double(dbeta[c]) / m);
            slope[c] = T(istd * double(dgamma[c]) / m);
        }
        each_element(v, [&](int64_t i, int64_t c) { dx[i] = k[c] * (dy[i] - shift[c] - (x[i] - mean[c]) * slope[c]); });
        return;
    }
    default: throw KernelError("not a batch normalisation op");
    }
}

void run_batch_norm(const OpTask& t) {
    if (t.in[0].dtype == PX_FLOAT32) return batch_norm_typed<float>(t);
    if (t.in[0].dtype == PX_FLOAT64) return batch_norm_typed<double>(t);
    throw KernelError("batch normalisation needs float32 or float64");
}

}  // namespace

Kernels batch_norm_kernels() {
    return {{PX_OP_BATCH_NORM_STATS, through_float32<run_batch_norm>, kFloatDtypes},
            {PX_OP_BATCH_NORM, through_float32<run_batch_norm>, kFloatDtypes},
            {PX_OP_BATCH_NORM_BACKWARD_REDUCE, through_float32<run_batch_norm>, kFloatDtypes},
            {PX_OP_BATCH_NORM_BACKWARD, through_float32<run_batch_norm>, kFloatDtypes}};
}

}  // namespace pxcpu
