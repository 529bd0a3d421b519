// Max and average pooling over NCHW planes, and their gradients. Planes
// (n, c) are independent, so they are spread over OpenMP threads.
#include <algorithm>
#include <cmath>
#include <limits>

#include "kernel_util.hpp"
#include "kernels.hpp"
#include "pool_common.hpp"

namespace pxcpu {
namespace {

// Index (into the plane) of the window's maximum: the first one, or the first NaN.
template <class T>
int64_t window_argmax(const T* plane, const PoolGeometry& g, int64_t oy, int64_t ox) {
    int64_t y0, y1, x0, x1;
    g.window(oy, ox, y0, y1, x0, x1);
    int64_t best = y0 * g.w + x0;
    for (int64_t y = y0; y < y1; ++y)
        for (int64_t x = x0; x < x1; ++x) {
            T v = plane[y * g.w + x];
            if (std::isnan(v)) return y * g.w + x;
            if (v > plane[best]) best = y * g.w + x;
        }
    return best;
}

// The maximum of a window inside the plane (no padding), without branches;
// NaN propagates.
template <class T>
T inner_max(const T* plane, const PoolGeometry& g, int64_t oy, int64_t ox) {
    const T* p = plane + oy * g.sh * g.w + ox * g.sw;
    T m = p[0];
    bool nan = false;
    for (int64_t i = 0; i < g.kh; ++i)
        for (int64_t j = 0; j < g.kw; ++j) {
            T v = p[i * g.w + j];
            nan |= v != v;
            m = v > m ? v : m;
        }
    return nan ? std::numeric_limits<T>::quiet_NaN() : m;
}

// LeNet's pooling, 2x2 windows with stride 2 and no padding: each output
// reads two input rows at fixed offsets, with no window loop. A last odd
// row or column belongs to no window.
template <class T>
void max_pool_2x2(const T* xp, T* yp, const PoolGeometry& g) {
    for (int64_t oy = 0; oy < g.oh; ++oy) {
        const T* r0 = xp + 2 * oy * g.w;
        const T* r1 = r0 + g.w;
        T* out = yp + oy * g.ow;
        for (int64_t ox = 0; ox < g.ow; ++ox) {
            const T a = r0[2 * ox], b = r0[2 * ox + 1], c = r1[2 * ox], d = r1[2 * ox + 1];
            const T m01 = b > a ? b : a, m23 = d > c ? d : c, m = m23 > m01 ? m23 : m01;
            const bool nan = (a != a) | (b != b) | (c != c) | (d != d);
            out[ox] = nan ? std::numeric_limits<T>::quiet_NaN() : m;
        }
    }
}

// One row of windows. The pointers do not alias and the count is a local,
// so the loop vectorizes: selects, no branches (which cell wins is random,
// and a mispredicted branch per window made it 24x slower than an add).
template <class T>
void max_pool_2x2_backward_row(const T* __restrict r0, const T* __restrict r1, const T* __restrict dy,
                               T* __restrict d0, T* __restrict d1, int64_t ow) {
    for (int64_t ox = 0; ox < ow; ++ox) {
        const T a = r0[2 * ox], b = r0[2 * ox + 1], c = r1[2 * ox], d = r1[2 * ox + 1];
        const T m01 = b > a ? b : a, m23 = d > c ? d : c, m = m23 > m01 ? m23 : m01;
        const bool nan = (a != a) | (b != b) | (c != c) | (d != d);
        // A cell is a candidate when it is NaN (if any is) or equals the
        // maximum; the first candidate takes dy.
        const bool ha = (a != a) | ((a == m) & !nan), hb = (b != b) | ((b == m) & !nan),
                   hc = (c != c) | ((c == m) & !nan);
        const FirstOfFour<T> to(ha, hb, hc, dy[ox]);
        d0[2 * ox] = to.g0;
        d0[2 * ox + 1] = to.g1;
        d1[2 * ox] = to.g2;
        d1[2 * ox + 1] = to.g3;
    }
}

template <class T>
void max_pool_2x2_backward(const T* xp, const T* dyp, T* dxp, const PoolGeometry& g) {
    for (int64_t oy = 0; oy < g.oh; ++oy) {
        const T* r0 = xp + 2 * oy * g.w;
        T* d0 = dxp + 2 * oy * g.w;
        T* d1 = d0 + g.w;
        max_pool_2x2_backward_row(r0, r0 + g.w, dyp + oy * g.ow, d0, d1, g.ow);
        if (g.w & 1) d0[g.w - 1] = d1[g.w - 1] = T(0);
    }
    if (g.h & 1) std::fill(dxp + (g.h - 1) * g.w, dxp + g.h * g.w, T(0));
}

template <class T>
void pool_typed(const OpTask& t) {
    const bool backward = t.op == PX_OP_MAX_POOL2D_BACKWARD || t.op == PX_OP_AVG_POOL2D_BACKWARD;
    const bool is_max = t.op == PX_OP_MAX_POOL2D || t.op == PX_OP_MAX_POOL2D_BACKWARD;
    // Forward: in[0] = x, out = y. Backward: max has (x, dy), avg has (dy); out = dx.
    const Operand& xside = backward ? t.out : t.in[0];
    const Operand& yside = backward ? t.in[t.num_inputs - 1] : t.out;
    PoolGeometry g = pool_geometry(xside, yside, t.attrs.pool);
    const T inv_area = T(1) / T(g.kh * g.kw);
    const bool unpadded = g.ph == 0 && g.pw == 0;
    const bool disjoint = g.sh >= g.kh && g.sw >= g.kw;  // no cell is in two windows
    const int64_t in_plane = g.h * g.w, out_plane = g.oh * g.ow;
    const bool two_by_two = is_max && g.two_by_two();
    if (two_by_two) {
        const T* x = reinterpret_cast<const T*>(t.in[0].data);
        if (!backward) {
            T* y = reinterpret_cast<T*>(t.out.data);
            for_each_plane(g, [&](int64_t p) { max_pool_2x2(x + p * in_plane, y + p * out_plane, g); });
        } else {
            const T* dy = reinterpret_cast<const T*>(yside.data);
            T* dx = reinterpret_cast<T*>(t.out.data);
            for_each_plane(g, [&](int64_t p) {
                max_pool_2x2_backward(x + p * in_plane, dy + p * out_plane, dx + p * in_plane, g);
            });
        }
        return;
    }
    if (!backward) {
        const T* x = reinterpret_cast<const T*>(t.in[0].data);
        T* y = reinterpret_cast<T*>(t.out.data);
        for_each_plane(g, [&](int64_t p) {
            const T* xp = x + p * in_plane;
            T* yp = y + p * out_plane;
            for (int64_t oy = 0; oy < g.oh; ++oy)
                for (int64_t ox = 0; ox < g.ow; ++ox) {
                    if (is_max) {
                        yp[oy * g.ow + ox] = unpadded ? inner_max(xp, g, oy, ox) : xp[window_argmax(xp, g, oy, ox)];
                        continue;
                    }
                    int64_t y0, y1, x0, x1;
                    g.window(oy, ox, y0, y1, x0, x1);
                    T s = 0;
                    for (int64_t yy = y0; yy < y1; ++yy)
                        for (int64_t xx = x0; xx < x1; ++xx) s += xp[yy * g.w + xx];
                    yp[oy * g.ow + ox] = s * inv_area;
                }
        });
        return;
    }
    const T* dy = reinterpret_cast<const T*>(yside.data);
    const T* x = is_max ? reinterpret_cast<const T*>(t.in[0].data) : nullptr;
    T* dx = reinterpret_cast<T*>(t.out.data);
    for_each_plane(g, [&](int64_t p) {
        T* dxp = dx + p * in_plane;
        const T* dyp = dy + p * out_plane;
        std::fill(dxp, dxp + in_plane, T(0));
        for (int64_t oy = 0; oy < g.oh; ++oy)
            for (int64_t ox = 0; ox < g.ow; ++ox) {
                T d = dyp[oy * g.ow + ox];
                if (is_max && unpadded) {  // every cell gets 0 or d, so nothing branches on the data
                    const T* xp = x + p * in_plane;
                    const T m = inner_max(xp, g, oy, ox);
                    const bool m_nan = m != m;
                    bool done = false;
                    const int64_t base = oy * g.sh * g.w + ox * g.sw;
                    for (int64_t i = 0; i < g.kh; ++i)
                        for (int64_t j = 0; j < g.kw; ++j) {
                            const int64_t at = base + i * g.w + j;
                            const T v = xp[at];
                            const bool hit = !done & (m_nan ? v != v : v == m);
                            if (disjoint) dxp[at] = hit ? d : T(0);  // a plain store: no read of dx
                            else dxp[at] += hit ? d : T(0);
                            done |= hit;
                        }
                    continue;
                }
                if (is_max) {
                    dxp[window_argmax(x + p * in_plane, g, oy, ox)] += d;
                    continue;
                }
                int64_t y0, y1, x0, x1;
                g.window(oy, ox, y0, y1, x0, x1);
                for (int64_t yy = y0; yy < y1; ++yy)
                    for (int64_t xx = x0; xx < x1; ++xx) dxp[yy * g.w + xx] += d * inv_area;
            }
    });
}

}  // namespace

void run_pool(const OpTask& t) {
    if (t.out.dtype == PX_FLOAT32) return pool_typed<float>(t);
    if (t.out.dtype == PX_FLOAT64) return pool_typed<double>(t);
    throw KernelError("pooling needs float32 or float64");
}

Kernels pool_kernels() {
    return {{PX_OP_MAX_POOL2D, through_float32<run_pool>, kFloatDtypes},
            {PX_OP_AVG_POOL2D, through_float32<run_pool>, kFloatDtypes},
            {PX_OP_MAX_POOL2D_BACKWARD, through_float32<run_pool>, kFloatDtypes},
            {PX_OP_AVG_POOL2D_BACKWARD, through_float32<run_pool>, kFloatDtypes}};
}

}  // namespace pxcpu
