// What the conv2d kernels share: the geometry of one call and the loop that
// spreads images over OpenMP threads.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "scratch_pool.hpp"
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

// The OpenMP team for n images: all threads, or one when there are fewer images.
inline int team_for(int64_t n) {
    const int threads = omp_get_max_threads();
    return n < threads ? 1 : threads;
}

// Runs body(first, count, thread, part) over every image in runs of at most
// `chunk`, on scratch.threads() threads, each with its zeroed part of the
// scratch. Each thread takes a contiguous share of the images, in order, as
// OpenMP's static schedule deals them: the same runs on the same thread for
// the same thread count.
template <class T, class Body>
void for_each_chunk(int64_t n, int64_t chunk, const ThreadScratch<T>& scratch, Body&& body) {
    const int threads = scratch.threads();
    auto share = [&](int tid) {
        scratch.zero_part(tid);
        const int64_t q = n / threads, r = n % threads;  // the first r threads take q + 1
        const int64_t begin = tid * q + std::min<int64_t>(tid, r), end = begin + q + (tid < r ? 1 : 0);
        for (int64_t i = begin; i < end; i += chunk) body(i, std::min(chunk, end - i), tid, scratch.part(tid));
    };
    if (threads == 1) return share(0);
#pragma omp parallel num_threads(threads)
    {
        // A team smaller than asked for (OMP_DYNAMIC, a thread limit) still does every share.
        for (int tid = omp_get_thread_num(); tid < threads; tid += omp_get_num_threads()) share(tid);
    }
}

// Runs body(image, thread, part) for every image.
template <class T, class Body>
void for_each_image(int64_t n, const ThreadScratch<T>& scratch, Body&& body) {
    for_each_chunk<T>(n, 1, scratch, [&](int64_t i, int64_t, int tid, T* s) { body(i, tid, s); });
}

}  // namespace pxcpu
