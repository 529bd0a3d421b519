// Max and average pooling over NCHW planes and their gradients, a thread per
// output cell forward and a thread per input cell backward. The backward
// passes gather (each dx cell visits the windows that contain it), so no
// atomics are needed and results do not vary from run to run.
#include "kernel_util.cuh"
#include "pool_geometry.cuh"

namespace pxcuda {
namespace {

// Index (in the plane) of the window's maximum: the first one, or the first
// NaN. Padded cells never win.
template <class T>
__device__ int64_t window_argmax(const T* plane, const PoolGeo& g, int64_t oy, int64_t ox) {
    const int64_t y0 = max(oy * g.sh - g.ph, int64_t(0)), y1 = min(oy * g.sh - g.ph + g.kh, g.h);
    const int64_t x0 = max(ox * g.sw - g.pw, int64_t(0)), x1 = min(ox * g.sw - g.pw + g.kw, g.w);
    int64_t best = y0 * g.w + x0;
    for (int64_t y = y0; y < y1; ++y)
        for (int64_t x = x0; x < x1; ++x) {
            const T v = plane[y * g.w + x];
            if (isnan(v)) return y * g.w + x;
            if (v > plane[best]) best = y * g.w + x;
        }
    return best;
}

template <class T>
__global__ void pool_forward(const T* __restrict__ x, PoolGeo g, bool is_max, T* __restrict__ y) {
    const T inv_area = T(1) / T(g.kh * g.kw);
    PX_GRID_STRIDE(idx, g.planes * g.oh * g.ow) {
        const int64_t ox = idx % g.ow, oy = (idx / g.ow) % g.oh, p = idx / (g.ow * g.oh);
        const T* plane = x + p * g.h * g.w;
        if (is_max) {
            y[idx] = plane[window_argmax(plane, g, oy, ox)];
            continue;
        }
        const int64_t y0 = max(oy * g.sh - g.ph, int64_t(0)), y1 = min(oy * g.sh - g.ph + g.kh, g.h);
        const int64_t x0 = max(ox * g.sw - g.pw, int64_t(0)), x1 = min(ox * g.sw - g.pw + g.kw, g.w);
        T s = T(0);
        for (int64_t yy = y0; yy < y1; ++yy)
            for (int64_t xx = x0; xx < x1; ++xx) s += plane[yy * g.w + xx];
        y[idx] = s * inv_area;
    }
}

// x is NULL for average pooling.
template <class T>
__global__ void pool_backward(const T* __restrict__ x, const T* __restrict__ dy, PoolGeo g, bool is_max,
                              T* __restrict__ dx) {
    const T inv_area = T(1) / T(g.kh * g.kw);
    PX_GRID_STRIDE(idx, g.planes * g.h * g.w) {
        const int64_t cx = idx % g.w, cy = (idx / g.w) % g.h, p = idx / (g.w * g.h);
        const int64_t cell = cy * g.w + cx;
        const T* dyp = dy + p * g.oh * g.ow;
        const WindowRange r = windows_holding(cy, cx, g);
        T s = T(0);
        for (int64_t oy = r.oy0; oy <= r.oy1; ++oy)
            for (int64_t ox = r.ox0; ox <= r.ox1; ++ox) {
                if (is_max) {
                    if (window_argmax(x + p * g.h * g.w, g, oy, ox) == cell) s += dyp[oy * g.ow + ox];
                } else {
                    s += dyp[oy * g.ow + ox] * inv_area;
                }
            }
        dx[idx] = s;
    }
}

template <class T>
void pool_typed(const OpArgs& t, const Launch& l) {
    const bool backward = t.op == PX_OP_MAX_POOL2D_BACKWARD || t.op == PX_OP_AVG_POOL2D_BACKWARD;
    const bool is_max = t.op == PX_OP_MAX_POOL2D || t.op == PX_OP_MAX_POOL2D_BACKWARD;
    // Forward: in[0] = x, out = y. Backward: max has (x, dy), avg has (dy); out = dx.
    const Operand& xside = backward ? t.out : t.in[0];
    const Operand& yside = backward ? t.in[t.num_inputs - 1] : t.out;
    const PoolGeo g = pool_geometry(xside, yside, t.attrs.pool);
    const int64_t n = t.out.numel();
    if (n == 0) return;
    if (!backward) {
        pool_forward<T><<<grid_for(n, l), kThreads, 0, l.stream>>>(reinterpret_cast<const T*>(t.in[0].data), g, is_max,
                                                                   reinterpret_cast<T*>(t.out.data));
        return check_launch("pool_forward");
    }
    pool_backward<T><<<grid_for(n, l), kThreads, 0, l.stream>>>(
        is_max ? reinterpret_cast<const T*>(t.in[0].data) : nullptr, reinterpret_cast<const T*>(yside.data), g,
        is_max, reinterpret_cast<T*>(t.out.data));
    check_launch("pool_backward");
}

}  // namespace

void run_pool(const OpArgs& t, const Launch& l) {
    with_float(t.out.dtype, "pooling", [&](auto v) { pool_typed<decltype(v)>(t, l); });
}

Kernels pool_kernels() {
    return {{PX_OP_MAX_POOL2D, through_float32<run_pool>, kFloatDtypes},
            {PX_OP_AVG_POOL2D, through_float32<run_pool>, kFloatDtypes},
            {PX_OP_MAX_POOL2D_BACKWARD, through_float32<run_pool>, kFloatDtypes},
            {PX_OP_AVG_POOL2D_BACKWARD, through_float32<run_pool>, kFloatDtypes}};
}

}  // namespace pxcuda
