// Batch normalisation over every axis but 1 of x (N,C,...): each channel's
// statistics and the gradient's sums accumulate in float64, one channel per
// thread; the elementwise passes take (sample, channel) rows.
#include <cmath>
#include <vector>

#include "isa_copies.hpp"
#include "kernel_util.hpp"
#include "kernels.hpp"

namespace pxcpu {
namespace {

// x (N,C,...) as (outer, channels, inner).
struct ChannelView {
    int64_t outer, channels, inner;
    explicit ChannelView(const Operand& x) : outer(x.shape[0]), channels(x.shape[1]), inner(1) {
        for (int i = 2; i < x.ndim; ++i) inner *= x.shape[i];
    }
    int64_t per_channel() const { return outer * inner; }
};

// f(c) for every channel, on several threads when there is enough work.
template <class F>
void each_channel(const ChannelView& v, F&& f) {
    if (v.channels > 1 && v.channels * v.per_channel() >= parallel_grain) {
#pragma omp parallel for schedule(static)
        for (int64_t c = 0; c < v.channels; ++c) f(c);
    } else {
        for (int64_t c = 0; c < v.channels; ++c) f(c);
    }
}

// What a channel's run of values adds to its sums, in float64.
enum class Sums {
    x,          // a: x
    deviation,  // a: (x - mu)^2
    gradient,   // a: dy, b: dy * (x - mu)
};

// A channel's sums in kLanes partial sums, lane l taking the elements at
// l, l + kLanes, ... of every row (a short row, a 4x4 plane, fills the
// first lanes), met in a fixed tree at the end: the order is written
// here, so every copy compiled per instruction set (isa_copies.hpp) gives
// the same bits. The channel's rows, one per sample, lie `stride` apart. The
// baseline copy of a plain float64 sum (SSE2: two doubles a vector, and one
// chain of adds per row) took 3-4x the time of the normalisation pass over
// the same data.
template <Sums K>
struct ChannelSumsLoop {
    template <class T>
    __attribute__((always_inline)) static inline void run(const T* x, const T* dy, int64_t rows, int64_t inner,
                                                          int64_t stride, double mu, double* a, double* b) {
        constexpr int64_t kLanes = 32;
        double la[kLanes] = {}, lb[kLanes] = {};
        for (int64_t r = 0; r < rows; ++r) {
            const T* xr = x + r * stride;
            const T* dr = K == Sums::gradient ? dy + r * stride : nullptr;
            auto add = [&](int64_t i, int64_t l) {
                if constexpr (K == Sums::x) {
                    la[l] += double(xr[i]);
                } else if constexpr (K == Sums::deviation) {
                    const double d = double(xr[i]) - mu;
                    la[l] += d * d;
                } else {
                    la[l] += double(dr[i]);
                    lb[l] += double(dr[i]) * (double(xr[i]) - mu);
                }
            };
            int64_t i = 0;
            for (; i + kLanes <= inner; i += kLanes) {
#pragma omp simd
                for (int64_t l = 0; l < kLanes; ++l) add(i + l, l);
            }
            const int64_t rest = inner - i;
#pragma omp simd
            for (int64_t l = 0; l < rest; ++l) add(i + l, l);
        }
        for (int64_t w = kLanes / 2; w >= 1; w /= 2)
            for (int64_t l = 0; l < w; ++l) {
                la[l] += la[l + w];
                lb[l] += lb[l + w];
            }
        *a = la[0];
        *b = lb[0];
    }
};

// The sums of channel c of x (and dy), by the copy for this CPU.
template <Sums K, class T>
struct ChannelSums {
    void (*run)(const T*, const T*, int64_t, int64_t, int64_t, double, double*, double*) =
        IsaCopies<ChannelSumsLoop<K>>::template for_this_cpu<const T*, const T*, int64_t, int64_t, int64_t, double,
                                                             double*, double*>();
    void operator()(const ChannelView& v, int64_t c, const T* x, const T* dy, double mu, double& a, double& b) const {
        const int64_t first = c * v.inner;
        run(x + first, dy ? dy + first : nullptr, v.outer, v.inner, v.channels * v.inner, mu, &a, &b);
    }
};

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
