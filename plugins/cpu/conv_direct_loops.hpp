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

// G output planes x J neighbouring taps of one kernel row at a time: per
// vector of the plane, G dy loads and J input loads feed G*J fused
// multiply-adds, whose sums stay in registers across the whole plane; the
// lanes are added up once, after the last image.
template <class T, int G, int J>
void weight_grad_block(const T* row_in, const T* dy, T* acc, const FlatConv& g, int64_t o0, int64_t t0) {
    const int64_t taps = g.channels * g.kh * g.kw;
    Vec<T> sum[G][J];
    for (int k = 0; k < G; ++k)
        for (int j = 0; j < J; ++j) sum[k][j] = load(acc + ((o0 + k) * taps + t0 + j) * lanes<T>);
    for (int64_t p = 0; p < g.out_plane; p += lanes<T>) {
        Vec<T> v[J], d[G];
        for (int j = 0; j < J; ++j) v[j] = load(row_in + p + j);
        for (int k = 0; k < G; ++k) d[k] = load(dy + (o0 + k) * g.out_plane + p);
        for (int k = 0; k < G; ++k)
            for (int j = 0; j < J; ++j) sum[k][j] += d[k] * v[j];
    }
    for (int k = 0; k < G; ++k)
        for (int j = 0; j < J; ++j) store(acc + ((o0 + k) * taps + t0 + j) * lanes<T>, sum[k][j]);
}

// Up to 4 taps of a row for G outputs.
template <class T, int G>
void weight_grad_outputs(const T* in, const T* dy, T* acc, const FlatConv& g, int64_t o0) {
    int64_t t = 0;
    for (int64_t c = 0; c < g.channels; ++c)
        for (int64_t i = 0; i < g.kh; ++i) {
            const T* row_in = in + c * g.plane + i * g.row;
            int64_t j = 0;
            for (; j + 4 <= g.kw; j += 4) weight_grad_block<T, G, 4>(row_in + j, dy, acc, g, o0, t + j);
            switch (g.kw - j) {
            case 3: weight_grad_block<T, G, 3>(row_in + j, dy, acc, g, o0, t + j); break;
            case 2: weight_grad_block<T, G, 2>(row_in + j, dy, acc, g, o0, t + j); break;
            case 1: weight_grad_block<T, G, 1>(row_in + j, dy, acc, g, o0, t + j); break;
            default: break;
            }
            t += g.kw;
        }
}

// Outputs in groups that fit the registers: 4 x 4 sums with 32 vector
// registers (AVX-512), 2 x 4 with 16.
constexpr int wg_outputs = PX_VECTOR_BYTES == 64 ? 4 : 2;

template <class T>
void weight_grad(const T* in, const T* dy, T* acc, const FlatConv& g) {
    int64_t o = 0;
    for (; o + wg_outputs <= g.outputs; o += wg_outputs) weight_grad_outputs<T, wg_outputs>(in, dy, acc, g, o);
    switch (g.outputs - o) {
    case 3: return weight_grad_outputs<T, 3>(in, dy, acc, g, o);
    case 2: return weight_grad_outputs<T, 2>(in, dy, acc, g, o);
    case 1: return weight_grad_outputs<T, 1>(in, dy, acc, g, o);
    default: return;
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
