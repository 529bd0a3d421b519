// Data movement and creation: strided copy (transpose, slice, concat), cast,
// fill, arange.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>

#include "float16_convert.hpp"
#include "kernel_util.hpp"
#include "kernels.hpp"

namespace pxcpu {
namespace {

// One element of E bytes, read whole into a local before it is written:
// defined for overlapping views of one buffer (which element wins is then
// unspecified, but nothing is undefined) and for unaligned offsets.
template <size_t E>
inline void copy_element(char* dst, const char* src) {
    unsigned char v[E];
    std::memcpy(v, src, E);
    std::memcpy(dst, v, E);
}

// A transpose-like copy: the output's rows run along axis L (the last) and
// the input's along axis k. Walking the output row by row would read the
// input a cache line per element; 32x32 tiles read and write whole lines
// (a 4096x4096 float32 transpose: 41-44 ms with a memmove per element,
// 21-26 ms so, as fast as a raw tiled loop; bench/results/2026-11-22-cpu-tensor-ops.txt).
template <size_t E>
void copy_tiled(const Walk<2>& w, int k) {
    constexpr int64_t kTile = 32;
    const int L = w.nd - 1;
    const int64_t rows = w.shape[k], cols = w.shape[L];
    const int64_t tile_rows = (rows + kTile - 1) / kTile, tile_cols = (cols + kTile - 1) / kTile;
    const int64_t tiles = tile_rows * tile_cols;
    int64_t outer = 1;
    for (int i = 0; i < L; ++i)
        if (i != k) outer *= w.shape[i];
    const int64_t out_k = w.st[0][k] * int64_t(E), in_l = w.st[1][L] * int64_t(E);
    auto one = [&](int64_t task) {
        int64_t rem = task / tiles;
        char* o = w.base[0];
        const char* in = w.base[1];
        for (int i = L - 1; i >= 0; --i) {
            if (i == k) continue;
            const int64_t idx = rem % w.shape[i];
            rem /= w.shape[i];
            o += idx * w.st[0][i] * int64_t(E);
            in += idx * w.st[1][i] * int64_t(E);
        }
        const int64_t r0 = (task % tiles) / tile_cols * kTile, c0 = (task % tiles) % tile_cols * kTile;
        const int64_t r1 = std::min(rows, r0 + kTile), c1 = std::min(cols, c0 + kTile);
        // Locals, not captures: a store through char* may alias anything the
        // lambda captured by reference, which would be reloaded per element.
        const int64_t step_out = out_k, step_in = in_l;
        for (int64_t r = r0; r < r1; ++r) {
            char* dst = o + r * step_out + c0 * int64_t(E);
            const char* src = in + r * int64_t(E) + c0 * step_in;
            for (int64_t c = c0; c < c1; ++c, dst += E, src += step_in) copy_element<E>(dst, src);
        }
    };
    const int64_t tasks = outer * tiles;
    if (tasks > 1 && outer * rows * cols >= parallel_grain) {
#pragma omp parallel for schedule(static)
        for (int64_t task = 0; task < tasks; ++task) one(task);
    } else {
        for (int64_t task = 0; task < tasks; ++task) one(task);
    }
}

// The axis before the last along which the input is contiguous, when the
// output is contiguous along the last and the input is not; else -1.
int transposed_axis(const Walk<2>& w) {
    const int L = w.nd - 1;
    if (w.st[0][L] != 1 || w.st[1][L] == 1) return -1;
    for (int i = 0; i < L; ++i)
        if (w.st[1][i] == 1) return i;
    return -1;
}

template <size_t E>
void copy_sized(const Walk<2>& w) {
    const int k = transposed_axis(w);
    if (k >= 0) return copy_tiled<E>(w, k);
    w.rows([&](char* const* p, int64_t n, const int64_t* s) {
        if (s[0] == 1 && s[1] == 1) {
            std::memmove(p[0], p[1], static_cast<size_t>(n) * E);  // one row, copied as memmove does
            return;
        }
        for (int64_t i = 0; i < n; ++i) copy_element<E>(p[0] + i * s[0] * int64_t(E), p[1] + i * s[1] * int64_t(E));
    });
}

// Elements are moved whole by their size: a copy needs no arithmetic.
void copy(const OpTask& t) {
    const Operand* ops[2] = {&t.out, &t.in[0]};
    const Walk<2> w = make_walk<2>(ops);
    with_any_dtype(t.out.dtype, [&](auto v) { copy_sized<sizeof(v)>(w); });
}

void cast(const OpTask& t) {
    with_any_dtype(t.in[0].dtype, [&](auto from) {
        using F = decltype(from);
        with_any_dtype(t.out.dtype, [&](auto to) {
            using T = decltype(to);
            const F* a = reinterpret_cast<const F*>(t.in[0].data);
            T* o = reinterpret_cast<T*>(t.out.data);
            const int64_t n = t.out.numel();
            if constexpr (std::is_same_v<F, float16> && std::is_same_v<T, float>) {
                return parallel_chunks(n, parallel_grain, [&](int64_t lo, int64_t hi) { widen_to_float(a + lo, o + lo, hi - lo); });
            } else if constexpr (std::is_same_v<F, float> && std::is_same_v<T, float16>) {
                return parallel_chunks(n, parallel_grain, [&](int64_t lo, int64_t hi) { narrow_from_float(a + lo, o + lo, hi - lo); });
            } else {
                map_flat(n, o, [](F v) { return convert<T>(v); }, a);
            }
        });
    });
}

void fill(const OpTask& t) {
    with_any_dtype(t.out.dtype, [&](auto v) {
        using T = decltype(v);
        T value;
        if constexpr (is_float_v<T>) value = convert<T>(t.attrs.fill.value);
        else value = static_cast<T>(t.attrs.fill.int_value);
        T* o = reinterpret_cast<T*>(t.out.data);
        parallel_for(t.out.numel(), [&](int64_t i) { o[i] = value; });
    });
}

void arange(const OpTask& t) {
    with_any_dtype(t.out.dtype, [&](auto v) {
        using T = decltype(v);
        const double start = t.attrs.arange.start, step = t.attrs.arange.step;
        T* o = reinterpret_cast<T*>(t.out.data);
        parallel_for(t.out.numel(), [&](int64_t i) { o[i] = convert<T>(start + static_cast<double>(i) * step); });
    });
}

}  // namespace

void run_data(const OpTask& t) {
    switch (t.op) {
    case PX_OP_COPY: return copy(t);
    case PX_OP_CAST: return cast(t);
    case PX_OP_FILL: return fill(t);
    case PX_OP_ARANGE: return arange(t);
    default: throw KernelError("not a data op");
    }
}

Kernels data_kernels() {
    return {{PX_OP_COPY, run_data, kAllDtypes},
            {PX_OP_CAST, run_data, kAllDtypes},
            {PX_OP_FILL, run_data, kAllDtypes},
            {PX_OP_ARANGE, run_data, kAllDtypes}};
}

}  // namespace pxcpu
