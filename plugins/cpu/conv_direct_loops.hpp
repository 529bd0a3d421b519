// The loops behind conv_direct.hpp, included once per instruction set with
// PX_ISA (a namespace name) and PX_VECTOR_BYTES defined. Everything here
// lives in that namespace and uses no library templates, so no inline
// function compiled for a wider instruction set can stand in for another
// file's copy at link time.
#include <cstdint>
#include <cstring>

#include "conv_direct.hpp"

namespace pxcpu {
namespace PX_ISA {

// (GCC ignores vector_size on a template parameter, hence one typedef per type.)
template <class T>
struct VecOf;
template <>
struct VecOf<float> {
    typedef float type __attribute__((vector_size(PX_VECTOR_BYTES)));
};
template <>
struct VecOf<double> {
    typedef double type __attribute__((vector_size(PX_VECTOR_BYTES)));
};
template <class T>
using Vec = typename VecOf<T>::type;
template <class T>
constexpr int64_t lanes = PX_VECTOR_BYTES / sizeof(T);

template <class T>
inline Vec<T> load(const T* p) {
    Vec<T> v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
template <class T>
inline void store(T* p, Vec<T> v) {
    std::memcpy(p, &v, sizeof v);
}

// G output planes at once, over P neighbouring vectors of the plane from
// position p0 on, while P whole vectors remain: G*P accumulators stay in
// registers while each tap's P shifted input vectors are loaded once and
// each weight is broadcast once for P vectors. Returns where it stopped.
template <class T, int G, int P>
int64_t correlate_vectors(const T* in, const T* w, T* out, const FlatConv& g, int64_t o0, int64_t p0) {
    const int64_t taps = g.channels * g.kh * g.kw;
    int64_t p = p0;
    for (; p + P * lanes<T> <= g.out_plane; p += P * lanes<T>) {
        Vec<T> acc[G][P] = {};
        int64_t t = 0;
        for (int64_t c = 0; c < g.channels; ++c)
            for (int64_t i = 0; i < g.kh; ++i) {
                const T* src = in + c * g.plane + i * g.row + p;
                for (int64_t j = 0; j < g.kw; ++j, ++t) {
                    Vec<T> v[P];
                    for (int q = 0; q < P; ++q) v[q] = load(src + j + q * lanes<T>);
                    for (int k = 0; k < G; ++k) {
                        const T wk = w[(o0 + k) * taps + t];
                        for (int q = 0; q < P; ++q) acc[k][q] += wk * v[q];
                    }
                }
            }
        for (int k = 0; k < G; ++k)
            for (int q = 0; q < P; ++q) store(out + (o0 + k) * g.out_plane + p + q * lanes<T>, acc[k][q]);
    }
    return p;
}

// Two vectors at a time where the registers hold 2*G sums beside the inputs
// (32 vector registers with AVX-512), then the last one alone: LeNet's
// second layer forward (G = 8) took 439-533 us and takes 365-387 us. Each
// position adds its taps in the same order either way: the same bits.
template <class T, int G>
void correlate_block(const T* in, const T* w, T* out, const FlatConv& g, int64_t o0) {
    constexpr int pair = PX_VECTOR_BYTES == 64 || G <= 6 ? 2 : 1;
    const int64_t p = correlate_vectors<T, G, pair>(in, w, out, g, o0, 0);
    if (pair > 1) correlate_vectors<T, G, 1>(in, w, out, g, o0, p);
}

template <class T>
void correlate(const T* in, const T* w, T* out, const FlatConv& g) {
    int64_t o = 0;
    for (; o + 8 <= g.outputs; o += 8) correlate_block<T, 8>(in, w, out, g, o);
    switch (g.outputs - o) {
    case 7: return correlate_block<T, 7>(in, w, out, g, o);
    case 6: return correlate_block<T, 6>(in, w, out, g, o);
    case 5: return correlate_block<T, 5>(in, w, out, g, o);
    case 4: return correlate_block<T, 4>(in, w, out, g, o);
    case 3: return correlate_block<T, 3>(in, w, out, g, o);
    case 2: return correlate_block<T, 2>(in, w, out, g, o);
    case 1: return correlate_block<T, 1>(in, w, out, g, o);
    default: return;
    }
}

// G output planes x J taps (consecutive in (c, i, j) order) at a time, over
// every image of the stack: per vector of the plane, G dy loads and J input
// loads feed G*J fused multiply-adds, and the sums stay in registers across
// all the images, loaded from acc and stored back once per stack. Each lane
// adds its positions image by image, position by position, whatever the
// stack's size: the same sums for the same images in the same order.
template <class T, int G, int J>
void weight_grad_block(const T* in, const T* dy, T* acc, const FlatConv& g, const FlatStack& s, int64_t o0,
                       int64_t t0) {
    const int64_t taps = g.channels * g.kh * g.kw;
    int64_t off[J];
    for (int j = 0; j < J; ++j) {
        const int64_t t = t0 + j, c = t / (g.kh * g.kw), r = t % (g.kh * g.kw);
        off[j] = c * g.plane + r / g.kw * g.row + r % g.kw;
    }
    Vec<T> sum[G][J];
    for (int k = 0; k < G; ++k)
        for (int j = 0; j < J; ++j) sum[k][j] = load(acc + ((o0 + k) * taps + t0 + j) * lanes<T>);
    for (int64_t b = 0; b < s.images; ++b) {
        const T* x = in + b * s.in_image;
        const T* d = dy + b * s.dy_image + o0 * g.out_plane;
        for (int64_t p = 0; p < g.out_plane; p += lanes<T>) {
            Vec<T> dv[G];
            for (int k = 0; k < G; ++k) dv[k] = load(d + k * g.out_plane + p);
            for (int j = 0; j < J; ++j) {
                const Vec<T> v = load(x + off[j] + p);  // one input vector live at a time
                for (int k = 0; k < G; ++k) sum[k][j] += dv[k] * v;
            }
        }
    }
    for (int k = 0; k < G; ++k)
        for (int j = 0; j < J; ++j) store(acc + ((o0 + k) * taps + t0 + j) * lanes<T>, sum[k][j]);
}

// Sums in registers per block: up to 24 with 32 vector registers (AVX-512;
// 6 outputs x 4 taps or 4 x 6, beside G dy and 1 input), 2 x 4 with 16.
constexpr int wg_outputs = PX_VECTOR_BYTES == 64 ? 6 : 2;
template <int G>
constexpr int wg_taps = PX_VECTOR_BYTES == 64 ? (24 / G < 6 ? 24 / G : 6) : 4;

// Splits n into the fewest parts of at most `most`, as even as can be: part
// k of `parts` starts at start(k).
struct EvenSplit {
    int64_t n, parts;
    EvenSplit(int64_t n_, int64_t most) : n(n_), parts((n_ + most - 1) / most) {}
    int64_t start(int64_t k) const { return n * k / parts; }
};

template <class T, int G>
void weight_grad_outputs(const T* in, const T* dy, T* acc, const FlatConv& g, const FlatStack& s, int64_t o0) {
    const EvenSplit taps(g.channels * g.kh * g.kw, wg_taps<G>);
    for (int64_t k = 0; k < taps.parts; ++k) {
        const int64_t t0 = taps.start(k);
        switch (taps.start(k + 1) - t0) {
        case 6: weight_grad_block<T, G, 6>(in, dy, acc, g, s, o0, t0); break;
        case 5: weight_grad_block<T, G, 5>(in, dy, acc, g, s, o0, t0); break;
        case 4: weight_grad_block<T, G, 4>(in, dy, acc, g, s, o0, t0); break;
        case 3: weight_grad_block<T, G, 3>(in, dy, acc, g, s, o0, t0); break;
        case 2: weight_grad_block<T, G, 2>(in, dy, acc, g, s, o0, t0); break;
        default: weight_grad_block<T, G, 1>(in, dy, acc, g, s, o0, t0); break;
        }
    }
}

template <class T>
void weight_grad(const T* in, const T* dy, T* acc, const FlatConv& g, const FlatStack& s) {
    const EvenSplit outs(g.outputs, wg_outputs);
    for (int64_t k = 0; k < outs.parts; ++k) {
        const int64_t o0 = outs.start(k);
        switch (outs.start(k + 1) - o0) {
        case 6: weight_grad_outputs<T, 6>(in, dy, acc, g, s, o0); break;
        case 5: weight_grad_outputs<T, 5>(in, dy, acc, g, s, o0); break;
        case 4: weight_grad_outputs<T, 4>(in, dy, acc, g, s, o0); break;
        case 3: weight_grad_outputs<T, 3>(in, dy, acc, g, s, o0); break;
        case 2: weight_grad_outputs<T, 2>(in, dy, acc, g, s, o0); break;
        default: weight_grad_outputs<T, 1>(in, dy, acc, g, s, o0); break;
        }
    }
}

}  // namespace PX_ISA

#define PX_CAT2(a, b) a##b
#define PX_CAT(a, b) PX_CAT2(a, b)
const DirectConvIsa& PX_CAT(direct_conv_isa_, PX_ISA)() {
    static const DirectConvIsa isa{PX_ISA_NAME,
                                   int(PX_ISA::lanes<float>),
                                   int(PX_ISA::lanes<double>),
                                   {PX_ISA::correlate<float>, PX_ISA::weight_grad<float>},
                                   {PX_ISA::correlate<double>, PX_ISA::weight_grad<double>}};
    return isa;
}
#undef PX_CAT
#undef PX_CAT2

}  // namespace pxcpu
