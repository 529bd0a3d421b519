// Per-channel float64 sums over an (N, C, ...) operand, for batch
// normalisation's statistics and gradient and the bias gradient of a
// convolution: fixed lanes compiled per instruction set, the same bits on
// every set.
#pragma once

#include <cstdint>

#include "isa_copies.hpp"
#include "task.hpp"

namespace pxcpu {

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

}  // namespace pxcpu
