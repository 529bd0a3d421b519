// conv2d and its two gradients, NCHW, through im2col and OpenBLAS gemm, for
// every layer the direct loops (kernels_conv_direct.cpp) leave. Each image is
// one gemm (several side by side where the plane is small); images are
// spread over OpenMP threads (OpenBLAS runs single-threaded inside a
// parallel region), and a batch smaller than the thread count runs image by
// image with OpenBLAS's own threads.
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "blas_guard.hpp"
#include "blas_util.hpp"
#include "conv_common.hpp"
#include "conv_direct.hpp"
#include "kernels.hpp"

namespace pxcpu {
namespace {

// cols (C*KH*KW, OH*OW) from one image (C,H,W), rows `ld` apart (several
// images side by side); cells in the padding are 0.
template <class T>
void im2col(const T* x, const ConvGeometry& g, T* cols, int64_t ld) {
    for (int64_t c = 0; c < g.c; ++c)
        for (int64_t i = 0; i < g.kh; ++i)
            for (int64_t j = 0; j < g.kw; ++j) {
                T* row = cols + ((c * g.kh + i) * g.kw + j) * ld;
                const T* plane = x + c * g.h * g.w;
                for (int64_t oy = 0; oy < g.oh; ++oy) {
                    int64_t y = oy * g.sh - g.ph + i;
                    T* dst = row + oy * g.ow;
                    if (y < 0 || y >= g.h) {
                        std::fill(dst, dst + g.ow, T(0));
                        continue;
                    }
                    const T* src = plane + y * g.w;
                    if (g.sw == 1) {  // a contiguous run, zero at the edges
                        int64_t x0 = j - g.pw;
                        int64_t lo = std::max<int64_t>(0, -x0), hi = std::min<int64_t>(g.ow, g.w - x0);
                        std::fill(dst, dst + std::max<int64_t>(lo, 0), T(0));
                        if (hi > lo) copy_run(dst + lo, src + x0 + lo, hi - lo);
                        std::fill(dst + std::max(hi, lo), dst + g.ow, T(0));
                    } else {
                        for (int64_t ox = 0; ox < g.ow; ++ox) {
                            int64_t xx = ox * g.sw - g.pw + j;
                            dst[ox] = xx >= 0 && xx < g.w ? src[xx] : T(0);
                        }
                    }
                }
            }
}

// Adds cols (C*KH*KW, OH*OW), rows `ld` apart, back into one image
// gradient (C,H,W).
template <class T>
void col2im_add(const T* cols, const ConvGeometry& g, T* dx, int64_t ld) {
    for (int64_t c = 0; c < g.c; ++c)
        for (int64_t i = 0; i < g.kh; ++i)
            for (int64_t j = 0; j < g.kw; ++j) {
                const T* row = cols + ((c * g.kh + i) * g.kw + j) * ld;
                T* plane = dx + c * g.h * g.w;
                for (int64_t oy = 0; oy < g.oh; ++oy) {
                    int64_t y = oy * g.sh - g.ph + i;
                    if (y < 0 || y >= g.h) continue;
                    T* dst = plane + y * g.w;
                    const T* src = row + oy * g.ow;
                    if (g.sw == 1) {  // a contiguous run: no bounds test per cell
                        int64_t x0 = j - g.pw;
                        int64_t lo = std::max<int64_t>(0, -x0), hi = std::min<int64_t>(g.ow, g.w - x0);
                        for (int64_t ox = lo; ox < hi; ++ox) dst[x0 + ox] += src[ox];
                        continue;
                    }
                    for (int64_t ox = 0; ox < g.ow; ++ox) {
                        int64_t xx = ox * g.sw - g.pw + j;
                        if (xx >= 0 && xx < g.w) dst[xx] += src[ox];
                    }
                }
            }
}

// Images per product. A layer with a small output plane makes a skinny
// product per image (16 columns for a 4x4 plane, 49 for 7x7), which OpenBLAS
// runs at a third of its rate or less; images side by side give it about 256
// columns. At most a thread's share of the batch, so every thread keeps work.
inline int64_t images_per_product(const ConvGeometry& g, int threads) {
    const int64_t share = (g.n + threads - 1) / std::max(threads, 1);
    return std::clamp<int64_t>(256 / std::max<int64_t>(g.ohw(), 1), 1, std::max<int64_t>(share, 1));
}

// The output gradients of `count` images (O, OH*OW each) side by side as one
// (O, count*OH*OW) matrix: one image's is used where it lies.
template <class T>
const T* side_by_side(const T* dy, const ConvGeometry& g, int64_t count, T* out) {
    if (count == 1) return dy;
    const int64_t ohw = g.ohw(), ld = count * ohw;
    for (int64_t k = 0; k < count; ++k)
        for (int64_t o = 0; o < g.o; ++o) copy_run(out + o * ld + k * ohw, dy + (k * g.o + o) * ohw, ohw);
    return out;
}

// The inverse of side_by_side: an (O, count*OH*OW) matrix back into `count`
// images' outputs (O, OH*OW each).
template <class T>
void apart(const T* in, const ConvGeometry& g, int64_t count, T* y) {
    const int64_t ohw = g.ohw(), ld = count * ohw;
    for (int64_t k = 0; k < count; ++k)
        for (int64_t o = 0; o < g.o; ++o) copy_run(y + (k * g.o + o) * ohw, in + o * ld + k * ohw, ohw);
}

// How a call's images are grouped into products, the same for conv2d and
// its gradients: the team, images per product, whether the input serves as
// its own columns (a 1x1 stride-1 layer, one image at a time), and each
// thread's scratch: the images' columns, then a group's output-side data
// side by side.
struct Grouping {
    int team;
    int64_t per;
    bool direct;
    size_t cols, sides;
    explicit Grouping(const ConvGeometry& g)
        : team(team_for(g.n)),
          per(images_per_product(g, team)),
          direct(g.is_identity_im2col() && per == 1),
          cols(direct ? 0 : size_t(g.ckk() * per * g.ohw())),
          sides(per > 1 ? size_t(g.o * per * g.ohw()) : 0) {}
};

// The columns of `count` images (C,H,W each, from x) side by side, rows `ld` apart.
template <class T>
void im2col_images(const T* x, const ConvGeometry& g, int64_t count, T* cols, int64_t ld) {
    for (int64_t k = 0; k < count; ++k) im2col(x + k * g.c * g.h * g.w, g, cols + k * g.ohw(), ld);
}

template <class T>
void conv_forward(const OpTask& t) {
    const Operand &x = t.in[0], &w = t.in[1], &y = t.out;
    ConvGeometry g = geometry(x, y, w, t.attrs.conv);
    const T* px = reinterpret_cast<const T*>(x.data);
    const T* pw = reinterpret_cast<const T*>(w.data);
    T* py = reinterpret_cast<T*>(y.data);
    const Grouping gr(g);  // the side-by-side data: the group's outputs
    const ThreadScratch<T> scratch(t.scratch, gr.team, gr.cols + gr.sides);
    const BlasWork blas(scratch.threads());  // a gemm per thread of the team at once
    for_each_chunk<T>(g.n, gr.per, scratch, [&](int64_t first, int64_t count, int, T* s) {
        const int64_t ld = count * g.ohw();
        const T* xi = px + first * g.c * g.h * g.w;
        if (!gr.direct) im2col_images(xi, g, count, s, ld);
        T* yi = py + first * g.o * g.ohw();
        T* out = count == 1 ? yi : s + gr.cols;
        gemm(false, false, int(g.o), int(ld), int(g.ckk()), T(1), pw, int(g.ckk()), gr.direct ? xi : s, int(ld), T(0),
             out, int(ld));
        if (count > 1) apart(out, g, count, yi);
    });
}

template <class T>
void conv_backward_input(const OpTask& t) {
    const Operand &dy = t.in[0], &w = t.in[1], &dx = t.out;
    ConvGeometry g = geometry(dx, dy, w, t.attrs.conv);
    const T* pdy = reinterpret_cast<const T*>(dy.data);
    const T* pw = reinterpret_cast<const T*>(w.data);
    T* pdx = reinterpret_cast<T*>(dx.data);
    const Grouping gr(g);  // the side-by-side data: the group's output gradients
    const ThreadScratch<T> scratch(t.scratch, gr.team, gr.cols + gr.sides);
    const BlasWork blas(scratch.threads());  // a gemm per thread of the team at once
    for_each_chunk<T>(g.n, gr.per, scratch, [&](int64_t first, int64_t count, int, T* s) {
        const int64_t ld = count * g.ohw();
        const T* dys = side_by_side(pdy + first * g.o * g.ohw(), g, count, s + gr.cols);
        T* dxi = pdx + first * g.c * g.h * g.w;
        T* dst = gr.direct ? dxi : s;
        gemm(true, false, int(g.ckk()), int(ld), int(g.o), T(1), pw, int(g.ckk()), dys, int(ld), T(0), dst, int(ld));
        if (gr.direct) return;
        std::fill(dxi, dxi + count * g.c * g.h * g.w, T(0));
        for (int64_t k = 0; k < count; ++k) col2im_add(s + k * g.ohw(), g, dxi + k * g.c * g.h * g.w, ld);
    });
}

template <class T>
void conv_backward_weight(const OpTask& t) {
    const Operand &dy = t.in[0], &x = t.in[1], &dw = t.out;
    ConvGeometry g = geometry(x, dy, dw, t.attrs.conv);
    const T* pdy = reinterpret_cast<const T*>(dy.data);
    const T* px = reinterpret_cast<const T*>(x.data);
    T* pdw = reinterpret_cast<T*>(dw.data);
    const int64_t wsize = g.o * g.ckk();
    // The side-by-side data: the group's output gradients; after them in
    // each thread's scratch, the thread's partial dW.
    const Grouping gr(g);
    const size_t partial = gr.cols + gr.sides;
    const ThreadScratch<T> scratch(t.scratch, gr.team, partial + size_t(wsize));
    const BlasWork blas(scratch.threads());  // a gemm per thread of the team at once
    for_each_chunk<T>(g.n, gr.per, scratch, [&](int64_t first, int64_t count, int, T* s) {
        const int64_t ld = count * g.ohw();
        const T* xi = px + first * g.c * g.h * g.w;
        if (!gr.direct) im2col_images(xi, g, count, s, ld);
        const T* dys = side_by_side(pdy + first * g.o * g.ohw(), g, count, s + gr.cols);
        gemm(false, true, int(g.o), int(g.ckk()), int(ld), T(1), dys, int(ld), gr.direct ? xi : s, int(ld), T(1),
             s + partial, int(g.ckk()));
    });
    // Partials added in thread order: the same result for the same thread count.
    std::fill(pdw, pdw + wsize, T(0));
    for (int k = 0; k < scratch.threads(); ++k) {
        const T* part = scratch.part(k) + partial;
        for (int64_t e = 0; e < wsize; ++e) pdw[e] += part[e];
    }
}

template <class T>
void conv_typed(const OpTask& t) {
    switch (t.op) {
    case PX_OP_CONV2D: return conv_forward<T>(t);
    case PX_OP_CONV2D_BACKWARD_INPUT: return conv_backward_input<T>(t);
    case PX_OP_CONV2D_BACKWARD_WEIGHT: return conv_backward_weight<T>(t);
    default: throw KernelError("not a conv2d op");
    }
}

}  // namespace

void run_conv(const OpTask& t) {
    if (run_conv_direct(t)) return;
    if (t.in[0].dtype == PX_FLOAT32) return conv_typed<float>(t);
    if (t.in[0].dtype == PX_FLOAT64) return conv_typed<double>(t);
    throw KernelError("conv2d needs float32 or float64");
}

Kernels conv_kernels() {
    return {{PX_OP_CONV2D, through_float32<run_conv>, kFloatDtypes},
            {PX_OP_CONV2D_BACKWARD_INPUT, through_float32<run_conv>, kFloatDtypes},
            {PX_OP_CONV2D_BACKWARD_WEIGHT, through_float32<run_conv>, kFloatDtypes}};
}

}  // namespace pxcpu
