// conv2d and its two gradients, NCHW, through im2col and OpenBLAS gemm, for
// every layer the direct loops (kernels_conv_direct.cpp) leave. Each image is
// one gemm; images are spread over OpenMP threads (OpenBLAS runs
// single-threaded inside a parallel region), and a batch smaller than the
// thread count runs image by image with OpenBLAS's own threads.
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

// cols (C*KH*KW, OH*OW) from one image (C,H,W); cells in the padding are 0.
template <class T>
void im2col(const T* x, const ConvGeometry& g, T* cols) {
    for (int64_t c = 0; c < g.c; ++c)
        for (int64_t i = 0; i < g.kh; ++i)
            for (int64_t j = 0; j < g.kw; ++j) {
                T* row = cols + ((c * g.kh + i) * g.kw + j) * g.ohw();
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

// Adds cols (C*KH*KW, OH*OW) back into one image gradient (C,H,W).
template <class T>
void col2im_add(const T* cols, const ConvGeometry& g, T* dx) {
    for (int64_t c = 0; c < g.c; ++c)
        for (int64_t i = 0; i < g.kh; ++i)
            for (int64_t j = 0; j < g.kw; ++j) {
                const T* row = cols + ((c * g.kh + i) * g.kw + j) * g.ohw();
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

template <class T>
void conv_forward(const OpTask& t) {
    const Operand &x = t.in[0], &w = t.in[1], &y = t.out;
    ConvGeometry g = geometry(x, y, w, t.attrs.conv);
    const T* px = reinterpret_cast<const T*>(x.data);
    const T* pw = reinterpret_cast<const T*>(w.data);
    T* py = reinterpret_cast<T*>(y.data);
    const bool direct = g.is_identity_im2col();
    const ThreadScratch<T> scratch(t.scratch, team_for(g.n), direct ? 0 : size_t(g.ckk() * g.ohw()));
    const BlasWork blas(scratch.threads());  // a gemm per thread of the team at once
    for_each_image<T>(g.n, scratch, [&](int64_t i, int, T* cols) {
        const T* xi = px + i * g.c * g.h * g.w;
        if (!direct) im2col(xi, g, cols);
        gemm(false, false, int(g.o), int(g.ohw()), int(g.ckk()), T(1), pw, int(g.ckk()), direct ? xi : cols,
             int(g.ohw()), T(0), py + i * g.o * g.ohw(), int(g.ohw()));
    });
}

template <class T>
void conv_backward_input(const OpTask& t) {
    const Operand &dy = t.in[0], &w = t.in[1], &dx = t.out;
    ConvGeometry g = geometry(dx, dy, w, t.attrs.conv);
    const T* pdy = reinterpret_cast<const T*>(dy.data);
    const T* pw = reinterpret_cast<const T*>(w.data);
    T* pdx = reinterpret_cast<T*>(dx.data);
    const bool direct = g.is_identity_im2col();
    const ThreadScratch<T> scratch(t.scratch, team_for(g.n), direct ? 0 : size_t(g.ckk() * g.ohw()));
    const BlasWork blas(scratch.threads());  // a gemm per thread of the team at once
    for_each_image<T>(g.n, scratch, [&](int64_t i, int, T* cols) {
        T* dxi = pdx + i * g.c * g.h * g.w;
        T* dst = direct ? dxi : cols;
        gemm(true, false, int(g.ckk()), int(g.ohw()), int(g.o), T(1), pw, int(g.ckk()), pdy + i * g.o * g.ohw(),
             int(g.ohw()), T(0), dst, int(g.ohw()));
        if (!direct) {
            std::fill(dxi, dxi + g.c * g.h * g.w, T(0));
            col2im_add(cols, g, dxi);
        }
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
    const bool direct = g.is_identity_im2col();
    // Scratch per thread: the image's columns, then the thread's partial dW.
    const size_t cols = direct ? 0 : size_t(g.ckk() * g.ohw());
    const ThreadScratch<T> scratch(t.scratch, team_for(g.n), cols + size_t(wsize));
    const BlasWork blas(scratch.threads());  // a gemm per thread of the team at once
    for_each_image<T>(g.n, scratch, [&](int64_t i, int, T* s) {
        const T* xi = px + i * g.c * g.h * g.w;
        if (!direct) im2col(xi, g, s);
        gemm(false, true, int(g.o), int(g.ckk()), int(g.ohw()), T(1), pdy + i * g.o * g.ohw(), int(g.ohw()),
             direct ? xi : s, int(g.ohw()), T(1), s + cols, int(g.ckk()));
    });
    // Partials added in thread order: the same result for the same thread count.
    std::fill(pdw, pdw + wsize, T(0));
    for (int k = 0; k < scratch.threads(); ++k) {
        const T* part = scratch.part(k) + cols;
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
