// What the conv2d kernels share: the geometry of one call and the loop that
// spreads images over OpenMP threads.
#pragma once

#include <omp.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "task.hpp"

namespace pxcpu {

struct ConvGeometry {
    int64_t n, c, h, w;     // input
    int64_t o, kh, kw;      // weight (O, C, KH, KW)
    int64_t oh, ow;         // output
    int64_t sh, sw, ph, pw;
    int64_t ckk() const { return c * kh * kw; }
    int64_t ohw() const { return oh * ow; }
    bool is_identity_im2col() const { return kh == 1 && kw == 1 && sh == 1 && sw == 1 && ph == 0 && pw == 0; }
};

// x: input operand (N,C,H,W); y: output-side operand (N,O,OH,OW); w: (O,C,KH,KW).
inline ConvGeometry geometry(const Operand& x, const Operand& y, const Operand& w, const px_conv2d_attrs& a) {
    ConvGeometry g{x.shape[0], x.shape[1], x.shape[2], x.shape[3], w.shape[0], w.shape[2], w.shape[3],
                   y.shape[2], y.shape[3], a.stride_h, a.stride_w, a.pad_h, a.pad_w};
    if (g.ckk() > INT32_MAX || g.ohw() > INT32_MAX || g.o > INT32_MAX)
        throw KernelError("conv2d: dimensions exceed the BLAS int range");
    return g;
}

// Copies a short run (a row of an image, often under 32 values): fixed-size
// chunks compile to vector moves, where a memcpy call per run costs more than
// the copy.
template <class T>
inline void copy_run(T* dst, const T* src, int64_t n) {
    constexpr int64_t chunk = 32 / sizeof(T);
    int64_t k = 0;
    for (; k + chunk <= n; k += chunk) std::memcpy(dst + k, src + k, 32);
    for (; k < n; ++k) dst[k] = src[k];
}

// Runs body(image, thread, scratch) for every image, on as many threads as pay off.
template <class T, class Body>
void for_each_image(int64_t n, size_t scratch_elems, int& threads_used, std::vector<std::vector<T>>& scratch,
                    Body&& body) {
    int threads = omp_get_max_threads();
    if (n < threads) threads = 1;
    threads_used = threads;
    scratch.assign(threads, std::vector<T>(scratch_elems));
    if (threads == 1) {
        for (int64_t i = 0; i < n; ++i) body(i, 0, scratch[0].data());
        return;
    }
#pragma omp parallel num_threads(threads)
    {
        int tid = omp_get_thread_num();
#pragma omp for schedule(static)
        for (int64_t i = 0; i < n; ++i) body(i, tid, scratch[tid].data());
    }
}

}  // namespace pxcpu
