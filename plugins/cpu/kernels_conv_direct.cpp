// conv2d and its two gradients through the direct loops of conv_direct.hpp,
// for stride-1 layers. Images are spread over OpenMP threads as in the im2col
// path; each thread's scratch planes are zeroed once per op, and per image
// only their interior is written, so the padding and slack stay zero.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "conv_common.hpp"
#include "conv_direct.hpp"
#include "kernels.hpp"

namespace pxcpu {
namespace {

enum class Path { automatic, direct, im2col };
std::atomic<Path> chosen_path{Path::automatic};

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

// A stride-1 correlation over `channels` padded planes of ih x iw, and the
// scratch it needs: the input planes with their slack, and the output planes.
struct Plan {
    FlatConv f;
    int64_t in_elems, out_elems;
};

Plan plan(int64_t channels, int64_t ih, int64_t iw, int64_t kh, int64_t kw, int64_t outputs, int64_t lanes) {
    const int64_t oh = ih - kh + 1, ow = iw - kw + 1;
    const FlatConv f{channels, ih * iw, iw, kh, kw, outputs, round_up((oh - 1) * iw + ow, lanes)};
    // The last plane is read up to out_plane - 1 + (kh-1)*iw + kw-1 from its start.
    return Plan{f, (channels - 1) * f.plane + f.out_plane + (kh - 1) * iw + kw - 1, outputs * f.out_plane};
}

// Writes planes of h x w into planes of a larger layout, at (top, left).
template <class T>
void place(const T* src, int64_t planes, int64_t h, int64_t w, T* dst, int64_t dst_plane, int64_t dst_row,
           int64_t top, int64_t left) {
    for (int64_t c = 0; c < planes; ++c)
        for (int64_t y = 0; y < h; ++y)
            copy_run(dst + c * dst_plane + (y + top) * dst_row + left, src + (c * h + y) * w, w);
}

// Reads planes of h x w out of a larger layout, from (top, left).
template <class T>
void take(const T* src, int64_t src_plane, int64_t src_row, int64_t top, int64_t left, int64_t planes, int64_t h,
          int64_t w, T* dst) {
    for (int64_t c = 0; c < planes; ++c)
        for (int64_t y = 0; y < h; ++y)
            copy_run(dst + (c * h + y) * w, src + c * src_plane + (y + top) * src_row + left, w);
}

// For every image: fill(i, in) writes the interior of the input planes, the
// loops correlate them with w, and drain(i, out) reads the output planes.
template <class T, class Fill, class Drain>
void correlate_images(ScratchBudget* budget, int64_t n, const Plan& p, const T* w, Fill&& fill, Drain&& drain) {
    const DirectConvOps<T>& ops = direct_conv_ops<T>();
    const ThreadScratch<T> scratch(budget, team_for(n), size_t(p.in_elems + p.out_elems));
    for_each_image<T>(n, scratch, [&](int64_t i, int, T* s) {
        fill(i, s);
        ops.correlate(s, w, s + p.in_elems, p.f);
        drain(i, s + p.in_elems);
    });
}

template <class T>
void forward(const OpTask& t, const ConvGeometry& g) {
    const T* px = reinterpret_cast<const T*>(t.in[0].data);
    const T* pw = reinterpret_cast<const T*>(t.in[1].data);
    T* py = reinterpret_cast<T*>(t.out.data);
    const int64_t hp = g.h + 2 * g.ph, wp = g.w + 2 * g.pw;
    const Plan p = plan(g.c, hp, wp, g.kh, g.kw, g.o, direct_conv_lanes<T>());
    correlate_images<T>(
        t.scratch, g.n, p, pw, [&](int64_t i, T* in) { place(px + i * g.c * g.h * g.w, g.c, g.h, g.w, in, p.f.plane, wp, g.ph, g.pw); },
        [&](int64_t i, const T* out) { take(out, p.f.out_plane, wp, 0, 0, g.o, g.oh, g.ow, py + i * g.o * g.oh * g.ow); });
}

// dx is the full correlation of dy with the kernel flipped and its two
// channel axes swapped, cropped by the forward padding. dy is laid out on
// the padded input's rows (row length wp = ow + kw - 1, so the kw - 1 zeros
// past each dy row's end are the ones a tap reaching left of column 0 reads)
// after (kh-1)*wp + kw-1 zeros (what taps reaching above row 0 read): every
// position of the padded input plane is computed, and no other. (A ring of
// kernel-size-less-one zeros around dy, as before, computed 176 positions a
// plane for LeNet's 144.) Each position adds the same products in the same
// order either way.
template <class T>
void backward_input(const OpTask& t, const ConvGeometry& g) {
    const T* pdy = reinterpret_cast<const T*>(t.in[0].data);
    const T* pw = reinterpret_cast<const T*>(t.in[1].data);
    T* pdx = reinterpret_cast<T*>(t.out.data);
    const int64_t hp = g.h + 2 * g.ph, wp = g.w + 2 * g.pw, front = (g.kh - 1) * wp + g.kw - 1;
    const int64_t out_plane = round_up(hp * wp, direct_conv_lanes<T>());
    // Plane k is read from its start up to out_plane - 1 + front.
    const int64_t plane = out_plane + front;
    const Plan p{FlatConv{g.o, plane, wp, g.kh, g.kw, g.c, out_plane}, g.o * plane, g.c * out_plane};
    std::vector<T> flipped(size_t(g.o * g.ckk()));
    for (int64_t o = 0; o < g.o; ++o)
        for (int64_t c = 0; c < g.c; ++c)
            for (int64_t i = 0; i < g.kh; ++i)
                for (int64_t j = 0; j < g.kw; ++j)
                    flipped[((c * g.o + o) * g.kh + g.kh - 1 - i) * g.kw + g.kw - 1 - j] =
                        pw[((o * g.c + c) * g.kh + i) * g.kw + j];
    correlate_images<T>(
        t.scratch, g.n, p, flipped.data(),
        [&](int64_t i, T* in) { place(pdy + i * g.o * g.oh * g.ow, g.o, g.oh, g.ow, in + front, plane, wp, 0, 0); },
        [&](int64_t i, const T* out) { take(out, out_plane, wp, g.ph, g.pw, g.c, g.h, g.w, pdx + i * g.c * g.h * g.w); });
}

// Images of one thread's share go through the loops a stack at a time, so
// the sums are loaded and stored once per stack rather than once per image
// (a short plane, LeNet's 10x10, is few vectors); the stack's scratch stays
// well inside a core's L2 cache.
constexpr size_t stack_bytes = size_t(256) << 10;

template <class T>
void backward_weight(const OpTask& t, const ConvGeometry& g) {
    const T* pdy = reinterpret_cast<const T*>(t.in[0].data);
    const T* px = reinterpret_cast<const T*>(t.in[1].data);
    T* pdw = reinterpret_cast<T*>(t.out.data);
    const int64_t hp = g.h + 2 * g.ph, wp = g.w + 2 * g.pw, lanes = direct_conv_lanes<T>();
    const Plan p = plan(g.c, hp, wp, g.kh, g.kw, g.o, lanes);
    const int64_t weights = g.o * g.ckk();
    // Per thread: its running sums per lane, then per image the padded input
    // and dy laid out on the input's rows (0 past each row's end), each
    // rounded to whole vectors so that every dy plane starts aligned as the
    // thread's part does.
    const FlatStack one{1, round_up(p.in_elems, lanes), p.out_elems};
    const int64_t image_elems = one.in_image + one.dy_image;
    const int64_t stack = std::max<int64_t>(1, int64_t(stack_bytes / sizeof(T)) / image_elems);
    const int64_t sums = weights * lanes;
    const DirectConvOps<T>& ops = direct_conv_ops<T>();
    const ThreadScratch<T> scratch(t.scratch, team_for(g.n), size_t(sums + stack * image_elems));
    for_each_chunk<T>(g.n, stack, scratch,
                      [&](int64_t first, int64_t count, int, T* acc) {
                          T* in = acc + sums;
                          T* dy = in + stack * one.in_image;  // fixed: the zeros between rows stay put
                          for (int64_t b = 0; b < count; ++b) {
                              const int64_t i = first + b;
                              place(px + i * g.c * g.h * g.w, g.c, g.h, g.w, in + b * one.in_image, p.f.plane, wp,
                                    g.ph, g.pw);
                              place(pdy + i * g.o * g.oh * g.ow, g.o, g.oh, g.ow, dy + b * one.dy_image,
                                    p.f.out_plane, wp, 0, 0);
                          }
                          ops.weight_grad(in, dy, acc, p.f, FlatStack{count, one.in_image, one.dy_image});
                      });
    // Lanes and threads added in order: the same result for the same thread count.
    for (int64_t e = 0; e < weights; ++e) {
        T sum = 0;
        for (int k = 0; k < scratch.threads(); ++k) {
            const T* acc = scratch.part(k) + e * lanes;
            for (int64_t l = 0; l < lanes; ++l) sum += acc[l];
        }
        pdw[e] = sum;
    }
}

// When "auto" takes the direct loops: while the taps per output (C*KH*KW,
// or O*KH*KW for the input gradient) are at most 576. Measured on this
// project's 2-core AVX-512 machine (bench/results/2026-11-23-cpu-conv-
// weight-stacks.txt), the direct loops ran 1.1-4.8x faster than im2col +
// gemm in every op up to 288 taps, LeNet's included, and as fast at 576
// (3x3 over 64 channels); at 1152 im2col + gemm ran 1.3-2x faster.
constexpr int64_t auto_max_taps = 576;

bool wanted(const ConvGeometry& g, int32_t op) {
    if (g.sh != 1 || g.sw != 1 || g.oh != g.h + 2 * g.ph - g.kh + 1 || g.ow != g.w + 2 * g.pw - g.kw + 1) return false;
    switch (chosen_path.load(std::memory_order_relaxed)) {
    case Path::im2col: return false;
    case Path::direct: return true;
    case Path::automatic: break;
    }
    if (op == PX_OP_CONV2D_BACKWARD_INPUT) return g.o * g.kh * g.kw <= auto_max_taps;
    return g.ckk() <= auto_max_taps;
}

template <class T>
void run_typed(const OpTask& t, const ConvGeometry& g) {
    switch (t.op) {
    case PX_OP_CONV2D: return forward<T>(t, g);
    case PX_OP_CONV2D_BACKWARD_INPUT: return backward_input<T>(t, g);
    default: return backward_weight<T>(t, g);
    }
}

}  // namespace

bool run_conv_direct(const OpTask& t) {
    ConvGeometry g;
    switch (t.op) {  // geometry(x, y, w): input side, output side, weight
    case PX_OP_CONV2D: g = geometry(t.in[0], t.out, t.in[1], t.attrs.conv); break;
    case PX_OP_CONV2D_BACKWARD_INPUT: g = geometry(t.out, t.in[0], t.in[1], t.attrs.conv); break;
    case PX_OP_CONV2D_BACKWARD_WEIGHT: g = geometry(t.in[1], t.in[0], t.out, t.attrs.conv); break;
    default: return false;
    }
    if (!wanted(g, t.op)) return false;
    if (t.in[0].dtype == PX_FLOAT32) run_typed<float>(t, g);
    else if (t.in[0].dtype == PX_FLOAT64) run_typed<double>(t, g);
    else return false;
    return true;
}

bool select_conv_path(const std::string& name, std::string& why) {
    if (name.empty() || name == "auto") chosen_path.store(Path::automatic);
    else if (name == "direct") chosen_path.store(Path::direct);
    else if (name == "im2col") chosen_path.store(Path::im2col);
    else {
        why = "PLEXUS_CPU_CONV='" + name + "' is not one of auto, direct, im2col";
        return false;
    }
    return true;
}

}  // namespace pxcpu
