// conv2d and its two gradients, NCHW, through im2col and cuBLAS. Images are
// processed in chunks whose columns fit a bounded scratch buffer:
//   forward          y_n = W cols_n            (one strided-batched gemm)
//   backward input   cols_n = W^T dy_n, then col2im gathers them into dx
//   backward weight  dW += dy' cols'^T, with dy' (O, N*OHW) the chunk's dy
//                    regrouped by channel and cols' (CKK, N*OHW); one gemm
//                    per chunk, chunks added in order (deterministic)
// col2im is a gather (each dx cell sums the columns that read it), so no
// atomics and the same result on every run. A 1x1 stride-1 unpadded
// convolution uses the images themselves as columns.
#include "kernel_util.cuh"

namespace pxcuda {
namespace {

struct Geo {
    int64_t n, c, h, w;  // input
    int64_t o, kh, kw;   // weight (O, C, KH, KW)
    int64_t oh, ow;      // output
    int64_t sh, sw, ph, pw;
    __host__ __device__ int64_t ckk() const { return c * kh * kw; }
    __host__ __device__ int64_t ohw() const { return oh * ow; }
    bool identity() const { return kh == 1 && kw == 1 && sh == 1 && sw == 1 && ph == 0 && pw == 0; }
};

// x: the input-side operand (N,C,H,W); y: the output side (N,O,OH,OW); w: (O,C,KH,KW).
Geo geometry(const Operand& x, const Operand& y, const Operand& w, const px_conv2d_attrs& a) {
    return {x.shape[0], x.shape[1], x.shape[2], x.shape[3], w.shape[0], w.shape[2], w.shape[3],
            y.shape[2], y.shape[3], a.stride_h, a.stride_w, a.pad_h, a.pad_w};
}

// cols[n*sn + ckk*sc + p] for images [0, nb) of x; padding reads as 0.
template <class T>
__global__ void im2col(const T* __restrict__ x, Geo g, int64_t nb, T* __restrict__ cols, int64_t sn, int64_t sc) {
    const int64_t ohw = g.ohw(), ckk = g.ckk();
    PX_GRID_STRIDE(idx, nb * ckk * ohw) {
        const int64_t p = idx % ohw, r = (idx / ohw) % ckk, n = idx / (ohw * ckk);
        const int64_t j = r % g.kw, i = (r / g.kw) % g.kh, c = r / (g.kw * g.kh);
        const int64_t y = (p / g.ow) * g.sh - g.ph + i, xx = (p % g.ow) * g.sw - g.pw + j;
        T v = T(0);
        if (y >= 0 && y < g.h && xx >= 0 && xx < g.w) v = x[((n * g.c + c) * g.h + y) * g.w + xx];
        cols[n * sn + r * sc + p] = v;
    }
}

// dx (nb images) from per-image columns (CKK, OHW): every cell sums the
// column entries that read it.
template <class T>
__global__ void col2im(const T* __restrict__ cols, Geo g, int64_t nb, T* __restrict__ dx) {
    const int64_t ohw = g.ohw(), ckk = g.ckk();
    PX_GRID_STRIDE(idx, nb * g.c * g.h * g.w) {
        const int64_t xx = idx % g.w, y = (idx / g.w) % g.h, c = (idx / (g.w * g.h)) % g.c;
        const int64_t n = idx / (g.w * g.h * g.c);
        const T* cn = cols + n * ckk * ohw;
        T s = T(0);
        for (int64_t i = 0; i < g.kh; ++i) {
            const int64_t ty = y + g.ph - i;
            if (ty < 0 || ty % g.sh != 0 || ty / g.sh >= g.oh) continue;
            for (int64_t j = 0; j < g.kw; ++j) {
                const int64_t tx = xx + g.pw - j;
                if (tx < 0 || tx % g.sw != 0 || tx / g.sw >= g.ow) continue;
                s += cn[((c * g.kh + i) * g.kw + j) * ohw + (ty / g.sh) * g.ow + tx / g.sw];
            }
        }
        dx[idx] = s;
    }
}

// (nb, A, P) -> (A, nb, P).
template <class T>
__global__ void swap_outer(const T* __restrict__ in, int64_t nb, int64_t a, int64_t p, T* __restrict__ out) {
    PX_GRID_STRIDE(idx, nb * a * p) {
        const int64_t q = idx % p, k = (idx / p) % a, n = idx / (p * a);
        out[(k * nb + n) * p + q] = in[idx];
    }
}

// Images per chunk so that `per_image` scratch elements each stay under a bound.
int64_t chunk_images(int64_t n, int64_t per_image) {
    const int64_t budget = int64_t(1) << 26;  // elements of scratch (256 MiB of float32)
    return std::max<int64_t>(1, std::min<int64_t>(n, budget / std::max<int64_t>(per_image, 1)));
}

void zero(const Launch& l, const Operand& o) {
    PX_CUDA(cudaMemsetAsync(o.data, 0, size_t(o.numel()) * px_dtype_size(o.dtype), l.stream));
}

template <class T>
void conv_forward(const OpArgs& t, const Launch& l) {
    const Operand &x = t.in[0], &w = t.in[1], &y = t.out;
    const Geo g = geometry(x, y, w, t.attrs.conv);
    if (y.numel() == 0) return;
    if (g.ckk() == 0) return zero(l, y);
    const T* px = reinterpret_cast<const T*>(x.data);
    T* py = reinterpret_cast<T*>(y.data);
    const int64_t ckk = g.ckk(), ohw = g.ohw(), chw = g.c * g.h * g.w;
    const int64_t nb = g.identity() ? g.n : chunk_images(g.n, ckk * ohw);
    Scratch cols(l, g.identity() ? 0 : uint64_t(nb * ckk * ohw) * sizeof(T));
    for (int64_t n0 = 0; n0 < g.n; n0 += nb) {
        const int64_t cnt = std::min(nb, g.n - n0);
        const T* b = px + n0 * chw;
        if (!g.identity()) {
            im2col<T><<<grid_for(cnt * ckk * ohw, l), kThreads, 0, l.stream>>>(b, g, cnt, cols.as<T>(), ckk * ohw, ohw);
            check_launch("im2col");
            b = cols.as<T>();
        }
        gemm_row_major(l, x.dtype, false, false, g.o, ohw, ckk, w.data, ckk, 0, b, ohw, ckk * ohw,
                       py + n0 * g.o * ohw, ohw, g.o * ohw, cnt, 0.0, false);
    }
}

template <class T>
void conv_backward_input(const OpArgs& t, const Launch& l) {
    const Operand &dy = t.in[0], &w = t.in[1], &dx = t.out;
    const Geo g = geometry(dx, dy, w, t.attrs.conv);
    if (dx.numel() == 0) return;
    if (g.o == 0 || g.ohw() == 0) return zero(l, dx);
    const T* pdy = reinterpret_cast<const T*>(dy.data);
    T* pdx = reinterpret_cast<T*>(dx.data);
    const int64_t ckk = g.ckk(), ohw = g.ohw(), chw = g.c * g.h * g.w;
    const int64_t nb = g.identity() ? g.n : chunk_images(g.n, ckk * ohw);
    Scratch cols(l, g.identity() ? 0 : uint64_t(nb * ckk * ohw) * sizeof(T));
    for (int64_t n0 = 0; n0 < g.n; n0 += nb) {
        const int64_t cnt = std::min(nb, g.n - n0);
        T* dst = g.identity() ? pdx + n0 * chw : cols.as<T>();
        gemm_row_major(l, dy.dtype, true, false, ckk, ohw, g.o, w.data, ckk, 0, pdy + n0 * g.o * ohw, ohw,
                       g.o * ohw, dst, ohw, ckk * ohw, cnt, 0.0, false);
        if (!g.identity()) {
            col2im<T><<<grid_for(cnt * chw, l), kThreads, 0, l.stream>>>(cols.as<T>(), g, cnt, pdx + n0 * chw);
            check_launch("col2im");
        }
    }
}

template <class T>
void conv_backward_weight(const OpArgs& t, const Launch& l) {
    const Operand &dy = t.in[0], &x = t.in[1], &dw = t.out;
    const Geo g = geometry(x, dy, dw, t.attrs.conv);
    if (dw.numel() == 0) return;
    if (g.n == 0 || g.ohw() == 0) return zero(l, dw);
    const T* pdy = reinterpret_cast<const T*>(dy.data);
    const T* px = reinterpret_cast<const T*>(x.data);
    const int64_t ckk = g.ckk(), ohw = g.ohw(), chw = g.c * g.h * g.w;
    const int64_t nb = chunk_images(g.n, (ckk + g.o) * ohw);
    Scratch cols(l, uint64_t(nb * ckk * ohw) * sizeof(T));
    Scratch dyt(l, uint64_t(nb * g.o * ohw) * sizeof(T));
    for (int64_t n0 = 0; n0 < g.n; n0 += nb) {
        const int64_t cnt = std::min(nb, g.n - n0);
        // cols (CKK, cnt*OHW) and dy as (O, cnt*OHW): one gemm covers the chunk.
        im2col<T><<<grid_for(cnt * ckk * ohw, l), kThreads, 0, l.stream>>>(px + n0 * chw, g, cnt, cols.as<T>(), ohw,
                                                                           cnt * ohw);
        check_launch("im2col");
        swap_outer<T><<<grid_for(cnt * g.o * ohw, l), kThreads, 0, l.stream>>>(pdy + n0 * g.o * ohw, cnt, g.o, ohw,
                                                                               dyt.as<T>());
        check_launch("swap_outer");
        gemm_row_major(l, dy.dtype, false, true, g.o, ckk, cnt * ohw, dyt.as<T>(), cnt * ohw, 0, cols.as<T>(),
                       cnt * ohw, 0, dw.data, ckk, 0, 1, n0 == 0 ? 0.0 : 1.0, false);
    }
}

template <class T>
void conv_typed(const OpArgs& t, const Launch& l) {
    switch (t.op) {
    case PX_OP_CONV2D: return conv_forward<T>(t, l);
    case PX_OP_CONV2D_BACKWARD_INPUT: return conv_backward_input<T>(t, l);
    case PX_OP_CONV2D_BACKWARD_WEIGHT: return conv_backward_weight<T>(t, l);
    default: throw Unsupported("not a conv2d op");
    }
}

}  // namespace

void run_conv(const OpArgs& t, const Launch& l) {
    with_float(t.in[0].dtype, "conv2d", [&](auto v) { conv_typed<decltype(v)>(t, l); });
}

Kernels conv_kernels() {
    return {{PX_OP_CONV2D, through_float32<run_conv>, kFloatDtypes},
            {PX_OP_CONV2D_BACKWARD_INPUT, through_float32<run_conv>, kFloatDtypes},
            {PX_OP_CONV2D_BACKWARD_WEIGHT, through_float32<run_conv>, kFloatDtypes}};
}

}  // namespace pxcuda
