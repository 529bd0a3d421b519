// The pooling kernels' window geometry (kernels_pool.cu, kernels_pool_fused.cu).
#pragma once

#include "kernel_util.cuh"

namespace pxcuda {

struct PoolGeo {
    int64_t planes, h, w, oh, ow;
    int64_t kh, kw, sh, sw, ph, pw;
};

// x: the input-side operand (N,C,H,W); y: the output side (N,C,OH,OW).
inline PoolGeo pool_geometry(const Operand& x, const Operand& y, const px_pool2d_attrs& a) {
    return {x.shape[0] * x.shape[1], x.shape[2], x.shape[3], y.shape[2], y.shape[3],
            a.kernel_h, a.kernel_w, a.stride_h, a.stride_w, a.pad_h, a.pad_w};
}

// Windows along one axis that contain input cell c: o in [lo, hi].
__device__ inline void windows_of(int64_t c, int64_t k, int64_t s, int64_t pad, int64_t count, int64_t& lo,
                                  int64_t& hi) {
    const int64_t t = c + pad;  // o*s <= t < o*s + k
    lo = t - k + 1 <= 0 ? 0 : (t - k + 1 + s - 1) / s;
    hi = min(t / s, count - 1);
}

// The windows that hold input cell (cy, cx): oy in [oy0, oy1], ox in [ox0, ox1].
struct WindowRange {
    int64_t oy0, oy1, ox0, ox1;
};
__device__ inline WindowRange windows_holding(int64_t cy, int64_t cx, const PoolGeo& g) {
    WindowRange r;
    windows_of(cy, g.kh, g.sh, g.ph, g.oh, r.oy0, r.oy1);
    windows_of(cx, g.kw, g.sw, g.pw, g.ow, r.ox0, r.ox1);
    return r;
}

}  // namespace pxcuda
