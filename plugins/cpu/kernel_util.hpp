// Helpers shared by the CPU kernels: dtype dispatch and a strided walk that
// collapses contiguous axes and hands out rows to OpenMP threads.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "plexus/cpp/half.hpp"
#include "task.hpp"

namespace pxcpu {

using plexus::bfloat16;
using plexus::float16;

// float16 and bfloat16: stored as 16-bit patterns, computed on as float.
template <class T>
constexpr bool is_half_v = std::is_same_v<T, float16> || std::is_same_v<T, bfloat16>;
// The floating dtypes' C++ types, the 16-bit ones included.
template <class T>
constexpr bool is_float_v = std::is_floating_point_v<T> || is_half_v<T>;
// The type T's arithmetic is done in: float for the 16-bit floats, T itself otherwise.
template <class T>
using Compute = std::conditional_t<is_half_v<T>, float, T>;

// A value as another dtype, as CAST and the binary ops' scalar operand make
// it: float to integer saturates (NaN gives 0), so no conversion is
// undefined; to float16 or bfloat16 it rounds once, to nearest even (half.h).
template <class To, class From>
To convert(From v) {
    if constexpr (is_half_v<From>) {  // exact, by bits (a NaN keeps its payload)
        if constexpr (std::is_same_v<To, double>) return static_cast<double>(v);
        else return convert<To>(static_cast<float>(v));
    } else if constexpr (is_half_v<To>) {
        return To(v);
    } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
        if (std::isnan(v)) return 0;
        if (v <= static_cast<From>(std::numeric_limits<To>::lowest())) return std::numeric_limits<To>::lowest();
        if (v >= static_cast<From>(std::numeric_limits<To>::max())) return std::numeric_limits<To>::max();
    }
    return static_cast<To>(v);
}

// Calls f(T{}) with T the C++ type of `dtype`.
template <class F>
decltype(auto) with_dtype(int32_t dtype, F&& f) {
    switch (dtype) {
    case PX_FLOAT32: return f(float{});
    case PX_FLOAT64: return f(double{});
    case PX_INT32: return f(int32_t{});
    case PX_INT64: return f(int64_t{});
    case PX_UINT8: return f(uint8_t{});
    default: throw KernelError("unknown dtype " + std::to_string(dtype));
    }
}

// with_dtype's types and float16 and bfloat16, for the kernels that move or
// convert values (copy, cast, fill, arange) rather than compute on them.
template <class F>
decltype(auto) with_any_dtype(int32_t dtype, F&& f) {
    switch (dtype) {
    case PX_FLOAT16: return f(float16{});
    case PX_BFLOAT16: return f(bfloat16{});
    default: return with_dtype(dtype, f);
    }
}

// N operands over one iteration shape, each with its own element strides.
template <int N>
struct Walk {
    int nd = 0;
    int64_t shape[PX_MAX_DIMS] = {};
    int64_t st[N][PX_MAX_DIMS] = {};
    char* base[N] = {};
    int64_t esize[N] = {};

    // Merges axis i into i+1 wherever every operand allows it; drops length-1 axes.
    void collapse() {
        int out = 0;
        int64_t s2[PX_MAX_DIMS];
        int64_t t2[N][PX_MAX_DIMS];
        for (int i = 0; i < nd; ++i) {
            if (shape[i] == 1) continue;
            bool merge = out > 0;
            for (int k = 0; merge && k < N; ++k) merge = t2[k][out - 1] == st[k][i] * shape[i];
            if (merge) {
                s2[out - 1] *= shape[i];
                for (int k = 0; k < N; ++k) t2[k][out - 1] = st[k][i];
            } else {
                s2[out] = shape[i];
                for (int k = 0; k < N; ++k) t2[k][out] = st[k][i];
                ++out;
            }
        }
        if (out == 0) {  // a single element
            s2[0] = 1;
            for (int k = 0; k < N; ++k) t2[k][0] = 1;
            out = 1;
        }
        nd = out;
        std::copy(s2, s2 + nd, shape);
        for (int k = 0; k < N; ++k) std::copy(t2[k], t2[k] + nd, st[k]);
    }

    // row(ptrs, inner_len, inner_strides) for every innermost row, in parallel.
    template <class Row>
    void rows(Row&& row) const {
        int64_t len = shape[nd - 1];
        int64_t nrows = 1;
        for (int i = 0; i < nd - 1; ++i) nrows *= shape[i];
        int64_t inner[N];
        for (int k = 0; k < N; ++k) inner[k] = st[k][nd - 1];
        auto one_row = [&](int64_t r) {
            char* p[N];
            for (int k = 0; k < N; ++k) p[k] = base[k];
            int64_t rem = r;
            for (int i = nd - 2; i >= 0; --i) {
                int64_t idx = rem % shape[i];
                rem /= shape[i];
                for (int k = 0; k < N; ++k) p[k] += idx * st[k][i] * esize[k];
            }
            row(p, len, inner);
        };
        if (nrows == 1 && len >= 2 * parallel_grain) {
            // One long row (a contiguous op): split the row itself across threads.
            const int64_t chunk = parallel_grain;
            const int64_t nchunks = (len + chunk - 1) / chunk;
#pragma omp parallel for schedule(static)
            for (int64_t c = 0; c < nchunks; ++c) {
                char* p[N];
                for (int k = 0; k < N; ++k) p[k] = base[k] + c * chunk * inner[k] * esize[k];
                row(p, std::min(chunk, len - c * chunk), inner);
            }
        } else if (nrows > 1 && nrows * len >= parallel_grain) {
#pragma omp parallel for schedule(static)
            for (int64_t r = 0; r < nrows; ++r) one_row(r);
        } else {  // small: no OpenMP region at all (entering one costs more than the op)
            for (int64_t r = 0; r < nrows; ++r) one_row(r);
        }
    }
};

// A walk over `ops` (output first), which share ops[0]'s shape.
template <int N>
Walk<N> make_walk(const Operand* const (&ops)[N]) {
    Walk<N> w;
    w.nd = ops[0]->ndim;
    for (int i = 0; i < w.nd; ++i) w.shape[i] = ops[0]->shape[i];
    for (int k = 0; k < N; ++k) {
        w.base[k] = ops[k]->data;
        w.esize[k] = static_cast<int64_t>(px_dtype_size(ops[k]->dtype));
        for (int i = 0; i < w.nd; ++i) w.st[k][i] = ops[k]->strides[i];
    }
    if (w.nd == 0) {
        w.nd = 1;
        w.shape[0] = 1;
        for (int k = 0; k < N; ++k) w.st[k][0] = 1;
    }
    w.collapse();
    return w;
}

// body(begin, end) over [0, n) in chunks of `chunk`, in parallel when there
// are several (for loops whose elements each cost much more than a load).
template <class Body>
void parallel_chunks(int64_t n, int64_t chunk, Body&& body) {
    const int64_t chunks = (n + chunk - 1) / chunk;
    if (chunks > 1) {
#pragma omp parallel for schedule(static)
        for (int64_t c = 0; c < chunks; ++c) body(c * chunk, std::min(n, (c + 1) * chunk));
    } else if (n > 0) {
        body(0, n);
    }
}

// out[i] = f(in[i]...) over [0, n), in parallel above the grain. The
// pointers reach the loop as restrict parameters: captured by reference, a
// store through a one-byte output (comparisons, uint8 tensors) may alias
// them, so they were reloaded per element and the loop stayed scalar
// (a > b on 16M float32: 12 ms, beside 5 ms for a + b).
template <class R, class F, class... In>
void map_flat(int64_t n, R* out, F f, const In*... in) {
    auto chunk = [f](int64_t lo, int64_t hi, R* __restrict o, const In* __restrict... p) {
#pragma omp simd
        for (int64_t i = lo; i < hi; ++i) o[i] = f(p[i]...);
    };
    if (n >= parallel_grain) parallel_chunks(n, parallel_grain, [&](int64_t lo, int64_t hi) { chunk(lo, hi, out, in...); });
    else chunk(0, n, out, in...);
}

// Parallel flat loop over n elements.
template <class Body>
void parallel_for(int64_t n, Body&& body) {
    if (n >= parallel_grain) {
#pragma omp parallel for simd schedule(static)
        for (int64_t i = 0; i < n; ++i) body(i);
    } else {
#pragma omp simd
        for (int64_t i = 0; i < n; ++i) body(i);
    }
}

}  // namespace pxcpu
