// conv2d and its two gradients through the direct loops of conv_direct.hpp,
// for stride-1 layers. Images are spread over OpenMP threads as in the im2col
// path; each thread's scratch planes are zeroed once per op, and per image
// only their interior is written, so the padding and slack stay zero.
#include <atomic>
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
void correlate_images(int64_t n, const Plan& p, const T* w, Fill&& fill, Drain&& drain) {
    const DirectConvOps<T>& ops = direct_conv_ops<T>();
    std::vector<std::vector<T>> scratch;
    int threads = 1;
    for_each_image<T>(n, size_t(p.in_elems + p.out_elems), threads, scratch, [&](int64_t i, int, T* s) {
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
        g.n, p, pw, [&](int64_t i, T* in) { place(px + i * g.c * g.h * g.w, g.c, g.h, g.w, in, p.f.plane, wp, g.ph, g.pw); },
        [&](int64_t i, const T* out) { take(out, p.f.out_plane, wp, 0, 0, g.o, g.oh, g.ow, py + i * g.o * g.oh * g.ow); });
}

// dx is the full correlation of dy, padded by the kernel size less one on
// every side, with the kernel flipped and its two channel axes swapped,
// cropped by the forward padding.
template <class T>
void backward_input(const OpTask& t, const ConvGeometry& g) {
    const T* pdy = reinterpret_cast<const T*>(t.in[0].data);
    const T* pw = reinterpret_cast<const T*>(t.in[1].data);
    T* pdx = reinterpret_cast<T*>(t.out.data);
    const int64_t hd = g.oh + 2 * (g.kh - 1), wd = g.ow + 2 * (g.kw - 1);
    const Plan p = plan(g.o, hd, wd, g.kh, g.kw, g.c, direct_conv_lanes<T>());
    std::vector<T> flipped(size_t(g.o * g.ckk()));
    for (int64_t o = 0; o < g.o; ++o)
        for (int64_t c = 0; c < g.c; ++c)
            for (int64_t i = 0; i < g.kh; ++i)
                for (int64_t j = 0; j < g.kw; ++j)
                    flipped[((c * g.o + o) * g.kh + g.kh - 1 - i) * g.kw + g.kw - 1 - j] =
                        pw[((o * g.c + c) * g.kh + i) * g.kw + j];
    correlate_images<T>(
        g.n, p, flipped.data(),
        [&](int64_t i, T* in) { place(pdy + i * g.o * g.oh * g.ow, g.o, g.oh, g.ow, in, p.f.plane, wd, g.kh - 1, g.kw - 1); },
        [&](int64_t i, const T* out) { take(out, p.f.out_plane, wd, g.ph, g.pw, g.c, g.h, g.w, pdx + i * g.c * g.h * g.w); });
}

template <class T>
void backward_weight(const OpTask& t, const ConvGeometry& g) {
    const T* pdy = reinterpret_cast<const T*>(t.in[0].data);
    const T* px = reinterpret_cast<const T*>(t.in[1].data);
    T* pdw = reinterpret_cast<T*>(t.out.data);
    const int64_t hp = g.h + 2 * g.ph, wp = g.w + 2 * g.pw, lanes = direct_conv_lanes<T>();
    const Plan p = plan(g.c, hp, wp, g.kh, g.kw, g.o, lanes);
    const int64_t weights = g.o * g.ckk();
    // Scratch per thread: the padded input, dy laid out on the input's rows
    // (0 past each row's end), and the thread's running sums per lane.
    const DirectConvOps<T>& ops = direct_conv_ops<T>();
    std::vector<std::vector<T>> scratch;
    int threads = 1;
    for_each_image<T>(g.n, size_t(p.in_elems + p.out_elems + weights * lanes), threads, scratch,
                      [&](int64_t i, int, T* s) {
                          T* in = s;
                          T* dy = s + p.in_elems;
                          place(px + i * g.c * g.h * g.w, g.c, g.h, g.w, in, p.f.plane, wp, g.ph, g.pw);
                          place(pdy + i * g.o * g.oh * g.ow, g.o, g.oh, g.ow, dy, p.f.out_plane, wp, 0, 0);
                          ops.weight_grad(in, dy, dy + p.out_elems, p.f);
                      });
    // Lanes and threads added in order: the same result for the same thread count.
    for (int64_t e = 0; e < weights; ++e) {
        T sum = 0;
        for (int k = 0; k < threads; ++k) {
            const T* acc = scratch[k].data() + p.in_elems + p.out_elems + e * lanes;
            for (int64_t l = 0; l < lanes; ++l) sum += acc[l];
        }
        pdw[e] = sum;
    }
}

// When "auto" takes the direct loops. They keep every output plane's sums in
// registers across all taps, and beat im2col + gemm while the taps per output
// (C*KH*KW, or O*KH*KW for the input gradient) are few: LeNet's 25, 54 and
// 144 run 1.3-2.6x faster. The weight gradient's loops run once per plane,
// so short planes pay their set-up too often: measured on LeNet, a 24x24
// plane ran 1.5x faster, a 10x10 plane no faster than im2col.
constexpr int64_t auto_max_taps = 256;
constexpr int64_t auto_min_weight_grad_plane = 256;

bool wanted(const ConvGeometry& g, int32_t op) {
    if (g.sh != 1 || g.sw != 1 || g.oh != g.h + 2 * g.ph - g.kh + 1 || g.ow != g.w + 2 * g.pw - g.kw + 1) return false;
    switch (chosen_path.load(std::memory_order_relaxed)) {
    case Path::im2col: return false;
    case Path::direct: return true;
    case Path::automatic: break;
    }
    if (op == PX_OP_CONV2D_BACKWARD_INPUT) return g.o * g.kh * g.kw <= auto_max_taps;
    if (op == PX_OP_CONV2D_BACKWARD_WEIGHT && g.oh * (g.w + 2 * g.pw) < auto_min_weight_grad_plane) return false;
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
