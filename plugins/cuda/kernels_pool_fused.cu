// bias_relu_max_pool2d and its gradient (ABI 1.4): the values of
// max_pool2d(relu(bias_add(x, b))) in one pass over x, as the CPU plugin
// forms them: r = relu(x + b) with one rounding for the add and NaN sent to
// 0, the window's maximum of r, and the gradient to the first cell holding
// it when it is > 0. dx gathers (a thread per input cell visits the windows
// that hold it) and db is summed in float64 by a block per channel, so
// results do not vary from run to run.
#include "kernel_util.cuh"
#include "pool_geometry.cuh"

namespace pxcuda {
namespace {

template <class T>
__device__ inline T relu_of(T v, T b) {
    const T s = v + b;
    return s > T(0) ? s : T(0);
}

// The window's maximum of relu(x + b), and the first cell (index in the
// plane) holding it; -1 when the maximum is 0 and relu stopped the gradient.
template <class T>
__device__ T window_max(const T* plane, T b, const PoolGeo& g, int64_t oy, int64_t ox, int64_t& winner) {
    const int64_t y0 = max(oy * g.sh - g.ph, int64_t(0)), y1 = min(oy * g.sh - g.ph + g.kh, g.h);
    const int64_t x0 = max(ox * g.sw - g.pw, int64_t(0)), x1 = min(ox * g.sw - g.pw + g.kw, g.w);
    T m = T(0);
    winner = -1;
    for (int64_t y = y0; y < y1; ++y)
        for (int64_t x = x0; x < x1; ++x) {
            const T r = relu_of(plane[y * g.w + x], b);
            if (r > m) m = r, winner = y * g.w + x;
        }
    return m;
}

template <class T>
__global__ void fused_forward(const T* __restrict__ x, const T* __restrict__ b, int64_t channels, PoolGeo g,
                              T* __restrict__ y) {
    PX_GRID_STRIDE(idx, g.planes * g.oh * g.ow) {
        const int64_t ox = idx % g.ow, oy = (idx / g.ow) % g.oh, p = idx / (g.ow * g.oh);
        int64_t winner;
        y[idx] = window_max(x + p * g.h * g.w, b[p % channels], g, oy, ox, winner);
    }
}

template <class T>
__global__ void fused_backward_input(const T* __restrict__ x, const T* __restrict__ b, const T* __restrict__ dy,
                                     int64_t channels, PoolGeo g, T* __restrict__ dx) {
    PX_GRID_STRIDE(idx, g.planes * g.h * g.w) {
        const int64_t cx = idx % g.w, cy = (idx / g.w) % g.h, p = idx / (g.w * g.h);
        const int64_t cell = cy * g.w + cx;
        const T* plane = x + p * g.h * g.w;
        const T* dyp = dy + p * g.oh * g.ow;
        const T bias = b[p % channels];
        const WindowRange r = windows_holding(cy, cx, g);
        T s = T(0);
        for (int64_t oy = r.oy0; oy <= r.oy1; ++oy)
            for (int64_t ox = r.ox0; ox <= r.ox1; ++ox) {
                int64_t winner;
                window_max(plane, bias, g, oy, ox, winner);
                if (winner == cell) s += dyp[oy * g.ow + ox];
            }
        dx[idx] = s;
    }
}

// db[c]: the dy of every window of channel c whose maximum is > 0.
template <class T>
__global__ void fused_backward_bias(const T* __restrict__ x, const T* __restrict__ b, const T* __restrict__ dy,
                                    int64_t batch, int64_t channels, PoolGeo g, T* __restrict__ db) {
    __shared__ double part[kThreads];
    const int64_t per_plane = g.oh * g.ow;
    for (int64_t c = blockIdx.x; c < channels; c += gridDim.x) {
        double s = 0;
        for (int64_t e = threadIdx.x; e < batch * per_plane; e += blockDim.x) {
            const int64_t n = e / per_plane, o = e % per_plane, p = n * channels + c;
            int64_t winner;
            window_max(x + p * g.h * g.w, b[c], g, o / g.ow, o % g.ow, winner);
            if (winner >= 0) s += double(dy[p * per_plane + o]);
        }
        const double sum = block_sum(s, part);
        if (threadIdx.x == 0) db[c] = T(sum);
    }
}

template <class T>
void fused_typed(const OpArgs& t, const Launch& l) {
    const bool backward = t.op == PX_OP_BIAS_RELU_MAX_POOL2D_BACKWARD;
    // Forward: (x, b) -> y. Backward: (x, b, dy) -> (dx, db).
    const PoolGeo g = pool_geometry(t.in[0], backward ? t.in[2] : t.out, t.attrs.pool);
    const int64_t batch = t.in[0].shape[0], channels = t.in[0].shape[1];
    const T* x = reinterpret_cast<const T*>(t.in[0].data);
    const T* b = reinterpret_cast<const T*>(t.in[1].data);
    if (!backward) {
        const int64_t n = t.out.numel();
        if (n == 0) return;
        fused_forward<T><<<grid_for(n, l), kThreads, 0, l.stream>>>(x, b, channels, g, reinterpret_cast<T*>(t.out.data));
        return check_launch("bias_relu_max_pool2d");
    }
    const T* dy = reinterpret_cast<const T*>(t.in[2].data);
    const int64_t n = t.out.numel();
    if (n > 0) {
        fused_backward_input<T><<<grid_for(n, l), kThreads, 0, l.stream>>>(x, b, dy, channels, g,
                                                                           reinterpret_cast<T*>(t.out.data));
        check_launch("bias_relu_max_pool2d_backward (dx)");
    }
    if (channels == 0) return;
    const unsigned blocks = unsigned(std::min<int64_t>(channels, 65535));
    fused_backward_bias<T><<<blocks, kThreads, 0, l.stream>>>(x, b, dy, batch, channels, g,
                                                              reinterpret_cast<T*>(t.out2.data));
    check_launch("bias_relu_max_pool2d_backward (db)");
}

}  // namespace

void run_pool_fused(const OpArgs& t, const Launch& l) {
    with_float(t.in[0].dtype, "bias_relu_max_pool2d", [&](auto v) { fused_typed<decltype(v)>(t, l); });
}

Kernels pool_fused_kernels() {
    return {{PX_OP_BIAS_RELU_MAX_POOL2D, through_float32<run_pool_fused>, kFloatDtypes},
            {PX_OP_BIAS_RELU_MAX_POOL2D_BACKWARD, through_float32<run_pool_fused>, kFloatDtypes}};
}

}  // namespace pxcuda
