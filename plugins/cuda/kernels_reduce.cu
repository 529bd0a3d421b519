// Reductions over all axes or one axis of a contiguous input, seen as
// (outer, extent, inner) with outputs o in [0, outer*inner). Float sums
// accumulate in float64 and integer sums in int64, means of every dtype in
// float64 (as NumPy's: an int64 mean must not wrap); max/min propagate NaN and
// argmax returns the first NaN or maximum, as the CPU plugin (and NumPy) do.
// Results are deterministic: every combination runs in a fixed order.
//
// Rows (inner == 1, long extent): a block per (row, part) with a tree
// reduction in shared memory. Otherwise a thread per (output, part), reading
// along the extent (coalesced across neighbouring outputs). A reduction with
// few outputs splits its extent into parts, combined by a second kernel.
#include <cmath>

#include "kernel_util.cuh"

namespace pxcuda {
namespace {

template <class T>
__device__ bool is_nan_value(T v) {
    if constexpr (is_float_v<T>) return isnan(static_cast<double>(v));
    else return false;
}

// A sum in Sum: Acc<T> for sums, double for means (an int64 mean must not wrap).
template <class T, class Sum = Acc<T>>
struct SumOp {
    using S = Sum;
    __device__ static S init() { return S(0); }
    __device__ static S load(T v, int64_t) { return static_cast<S>(v); }
    __device__ static S combine(S a, S b) { return a + b; }
};

template <class T>
struct Extreme {
    T v;
    int64_t i;  // -1: nothing seen yet
};

// The winner of two candidates: a NaN, else the extreme value; ties go to
// the lower index, so the rule does not depend on the order of combination.
template <class T, bool Max>
struct ArgOp {
    using S = Extreme<T>;
    __device__ static S init() { return {T(0), -1}; }
    __device__ static S load(T v, int64_t i) { return {v, i}; }
    __device__ static S combine(S a, S b) {
        if (a.i < 0) return b;
        if (b.i < 0) return a;
        const bool an = is_nan_value(a.v), bn = is_nan_value(b.v);
        if (an || bn) return an && bn ? (a.i < b.i ? a : b) : (an ? a : b);
        if (Max ? a.v > b.v : a.v < b.v) return a;
        if (Max ? b.v > a.v : b.v < a.v) return b;
        return a.i < b.i ? a : b;
    }
};

// Output writers: what each reduction stores for its final state.
template <class T>
struct WriteSum {
    using Out = std::conditional_t<is_float_v<T>, T, int64_t>;
    Out* out;
    int64_t extent;
    __device__ void operator()(int64_t o, Acc<T> s) const { out[o] = static_cast<Out>(value_of(s)); }
};
template <class T>
struct WriteMean {
    using Out = std::conditional_t<is_float_v<T>, T, double>;  // a float's own dtype, else float64
    Out* out;
    int64_t extent;
    __device__ void operator()(int64_t o, double s) const { out[o] = static_cast<Out>(s / double(extent)); }
};
template <class T>
struct WriteValue {
    T* out;
    int64_t extent;
    __device__ void operator()(int64_t o, Extreme<T> s) const { out[o] = s.i < 0 ? T(0) : s.v; }
};
template <class T>
struct WriteIndex {
    int64_t* out;
    int64_t extent;
    __device__ void operator()(int64_t o, Extreme<T> s) const { out[o] = s.i < 0 ? 0 : s.i; }
};

struct Shape3 {
    int64_t nout, extent, inner, parts, chunk;
};

// A block per (row, part); rows are contiguous (inner == 1).
template <class Op, class T, class W>
__global__ void reduce_rows(const T* __restrict__ in, Shape3 g, typename Op::S* partial, W write) {
    using S = typename Op::S;
    __shared__ S shared[kThreads];
    for (int64_t b = blockIdx.x; b < g.nout * g.parts; b += gridDim.x) {
        const int64_t row = b / g.parts, part = b % g.parts;
        const int64_t lo = part * g.chunk, hi = min(g.extent, lo + g.chunk);
        const T* p = in + row * g.extent;
        S s = Op::init();
        for (int64_t e = lo + threadIdx.x; e < hi; e += blockDim.x) s = Op::combine(s, Op::load(p[e], e));
        shared[threadIdx.x] = s;
        __syncthreads();
        for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
            if (threadIdx.x < half) shared[threadIdx.x] = Op::combine(shared[threadIdx.x], shared[threadIdx.x + half]);
            __syncthreads();
        }
        if (threadIdx.x == 0) {
            if (partial) partial[b] = shared[0];
            else write(row, shared[0]);
        }
        __syncthreads();  // shared[] is reused by the next row
    }
}

// A thread per (output, part).
template <class Op, class T, class W>
__global__ void reduce_columns(const T* __restrict__ in, Shape3 g, typename Op::S* partial, W write) {
    using S = typename Op::S;
    PX_GRID_STRIDE(t, g.nout * g.parts) {
        const int64_t part = t / g.nout, o = t % g.nout;  // neighbouring threads: neighbouring outputs
        const int64_t lo = part * g.chunk, hi = min(g.extent, lo + g.chunk);
        const T* p = in + (o / g.inner) * g.extent * g.inner + o % g.inner;
        S s = Op::init();
        for (int64_t e = lo; e < hi; ++e) s = Op::combine(s, Op::load(p[e * g.inner], e));
        if (partial) partial[part * g.nout + o] = s;
        else write(o, s);
    }
}

// Combines the parts of every output in order. rows: partial[o * parts + p];
// columns: partial[p * nout + o].
template <class Op, class W>
__global__ void reduce_parts(const typename Op::S* partial, Shape3 g, bool rows, W write) {
    PX_GRID_STRIDE(o, g.nout) {
        typename Op::S s = Op::init();
        for (int64_t p = 0; p < g.parts; ++p) s = Op::combine(s, partial[rows ? o * g.parts + p : p * g.nout + o]);
        write(o, s);
    }
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

template <class Op, class T, class W>
void reduce_with(const OpArgs& t, const Launch& l, W write) {
    const Operand& in = t.in[0];
    const int32_t axis = t.attrs.reduce.axis;
    Shape3 g{1, 1, 1, 1, 0};
    int64_t outer = 1;
    if (axis < 0) {
        g.extent = in.numel();
    } else {
        for (int i = 0; i < axis; ++i) outer *= in.shape[i];
        g.extent = in.shape[axis];
        for (int i = axis + 1; i < in.ndim; ++i) g.inner *= in.shape[i];
    }
    g.nout = outer * g.inner;
    if (g.nout == 0) return;
    const T* p = reinterpret_cast<const T*>(in.data);
    const bool rows = g.inner == 1 && g.extent > 64;
    // Enough parts to give the GPU work, none shorter than a few hundred elements.
    const int64_t lanes = rows ? int64_t(l.sm_count) * 4 : int64_t(l.sm_count) * 1024;
    g.parts = std::max<int64_t>(1, std::min<int64_t>({ceil_div(lanes, g.nout), ceil_div(g.extent, rows ? 4096 : 256), 1024}));
    g.chunk = ceil_div(std::max<int64_t>(g.extent, 1), g.parts);
    g.parts = std::max<int64_t>(1, ceil_div(g.extent, g.chunk));
    using S = typename Op::S;
    Scratch partial(l, g.parts > 1 ? uint64_t(g.nout * g.parts) * sizeof(S) : 0);
    S* part_ptr = partial.as<S>();
    if (rows) {
        unsigned blocks = static_cast<unsigned>(std::min<int64_t>(g.nout * g.parts, 65535));
        reduce_rows<Op><<<blocks, kThreads, 0, l.stream>>>(p, g, part_ptr, write);
        check_launch("reduce_rows");
    } else {
        reduce_columns<Op><<<grid_for(g.nout * g.parts, l), kThreads, 0, l.stream>>>(p, g, part_ptr, write);
        check_launch("reduce_columns");
    }
    if (g.parts > 1) {
        reduce_parts<Op><<<grid_for(g.nout, l), kThreads, 0, l.stream>>>(part_ptr, g, rows, write);
        check_launch("reduce_parts");
    }
}

template <class T>
void reduce_typed(const OpArgs& t, const Launch& l) {
    const int64_t extent = t.attrs.reduce.axis < 0 ? t.in[0].numel() : t.in[0].shape[t.attrs.reduce.axis];
    switch (t.op) {
    case PX_OP_SUM: {
        WriteSum<T> w{reinterpret_cast<decltype(w.out)>(t.out.data), extent};
        return reduce_with<SumOp<T>, T>(t, l, w);
    }
    case PX_OP_MEAN: {
        WriteMean<T> w{reinterpret_cast<decltype(w.out)>(t.out.data), extent};
        return reduce_with<SumOp<T, double>, T>(t, l, w);
    }
    case PX_OP_MAX: return reduce_with<ArgOp<T, true>, T>(t, l, WriteValue<T>{reinterpret_cast<T*>(t.out.data), extent});
    case PX_OP_MIN: return reduce_with<ArgOp<T, false>, T>(t, l, WriteValue<T>{reinterpret_cast<T*>(t.out.data), extent});
    case PX_OP_ARGMAX:
        return reduce_with<ArgOp<T, true>, T>(t, l, WriteIndex<T>{reinterpret_cast<int64_t*>(t.out.data), extent});
    default: throw Unsupported("not a reduction");
    }
}

}  // namespace

void run_reduce(const OpArgs& t, const Launch& l) {
    with_any_dtype(t.in[0].dtype, [&](auto v) { reduce_typed<decltype(v)>(t, l); });
}

Kernels reduce_kernels() {
    return {{PX_OP_SUM, run_reduce, kAllDtypes},
            {PX_OP_MEAN, run_reduce, kAllDtypes},
            {PX_OP_MAX, run_reduce, kAllDtypes},
            {PX_OP_MIN, run_reduce, kAllDtypes},
            {PX_OP_ARGMAX, run_reduce, kAllDtypes}};
}

}  // namespace pxcuda
