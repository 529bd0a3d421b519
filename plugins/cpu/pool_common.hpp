// What the pooling kernels share: the window geometry and the spread of
// planes over OpenMP threads.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "task.hpp"

namespace pxcpu {

struct PoolGeometry {
    int64_t planes, h, w, oh, ow;
    int64_t kh, kw, sh, sw, ph, pw;

    // LeNet's pooling: 2x2 windows with stride 2 and no padding.
    bool two_by_two() const { return ph == 0 && pw == 0 && kh == 2 && kw == 2 && sh == 2 && sw == 2; }
    // The window (oy, ox) clipped to the plane: rows [y0, y1), columns [x0, x1).
    void window(int64_t oy, int64_t ox, int64_t& y0, int64_t& y1, int64_t& x0, int64_t& x1) const {
        const int64_t top = oy * sh - ph, left = ox * sw - pw;
        y0 = top > 0 ? top : 0, y1 = top + kh < h ? top + kh : h;
        x0 = left > 0 ? left : 0, x1 = left + kw < w ? left + kw : w;
    }
};

// x: the input-side operand (N,C,H,W); y: the output-side one (N,C,OH,OW).
inline PoolGeometry pool_geometry(const Operand& x, const Operand& y, const px_pool2d_attrs& a) {
    return {x.shape[0] * x.shape[1], x.shape[2], x.shape[3], y.shape[2], y.shape[3],
            a.kernel_h, a.kernel_w, a.stride_h, a.stride_w, a.pad_h, a.pad_w};
}

// c ? a : b, on the bits, so it never becomes a branch. GCC turns the
// selects of the 2x2 rows into vector masks, but in a row's scalar tail
// (LeNet's second layer: rows of 5 windows, a tail of 1) it compiled the
// same select to a branch, taken at random on the data: the 10x10 planes ran
// 4-5x slower per window than the 24x24 ones.
template <class T>
inline T pick(bool c, T a, T b) {
    using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
    static_assert(sizeof(Bits) == sizeof(T), "float or double");
    Bits ab, bb;
    std::memcpy(&ab, &a, sizeof a);
    std::memcpy(&bb, &b, sizeof b);
    const Bits mask = Bits(0) - Bits(c);
    const Bits r = (ab & mask) | (bb & ~mask);
    T out;
    std::memcpy(&out, &r, sizeof out);
    return out;
}

// A 2x2 window's gradient g goes to the first of its four cells that holds
// the maximum: h0..h2 say whether cells 0..2 do (cell 3 takes what is left).
template <class T>
struct FirstOfFour {
    T g0, g1, g2, g3;
    FirstOfFour(bool h0, bool h1, bool h2, T g) {
        g0 = pick(h0, g, T(0));
        const T after0 = pick(h0, T(0), g);
        g1 = pick(h1, after0, T(0));
        const T after1 = pick(h1, T(0), after0);
        g2 = pick(h2, after1, T(0));
        g3 = pick(h2, T(0), after1);
    }
};

template <class Body>
void for_each_plane(const PoolGeometry& g, Body&& body) {
    if (g.planes > 1 && g.planes * g.oh * g.ow * g.kh * g.kw >= parallel_grain) {
#pragma omp parallel for schedule(static)
        for (int64_t p = 0; p < g.planes; ++p) body(p);
    } else {
        for (int64_t p = 0; p < g.planes; ++p) body(p);
    }
}

}  // namespace pxcpu
