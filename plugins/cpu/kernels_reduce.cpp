// Reductions over all axes or one axis of a contiguous input, seen as
// (outer, extent, inner). Float sums accumulate in float64 (float16's and
// bfloat16's too, rounded once at the end); integer sums in int64; means of
// every dtype in float64, as NumPy's do. max/min propagate
// NaN and argmax returns the first NaN or maximum, as NumPy does.
#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

#include <omp.h>

#include "isa_copies.hpp"
#include "kernel_util.hpp"
#include "kernels.hpp"

namespace pxcpu {
namespace {

// Integer sums wrap like two's complement (NumPy's int64 sums do). C++
// leaves signed overflow undefined, so they accumulate as uint64_t, read
// back through value_of.
template <class T>
using Acc = std::conditional_t<is_float_v<T>, double, uint64_t>;

inline int64_t value_of(uint64_t s) { return static_cast<int64_t>(s); }

template <class T>
bool is_nan(T v) {
    if constexpr (is_float_v<T>) return std::isnan(static_cast<double>(v));
    else return false;
}

// The sum of `n` contiguous values (outer and middle axes go by blocks of
// outputs instead: reduce_blocks). In S: Acc<T> for sums, double for means
// (an int64 mean must not wrap). kLanes partial sums, lane l taking the
// elements l, l + kLanes, ..., met in a fixed tree, then the tail in order:
// that order is written here, not left to the vectorizer, so every copy
// (isa_copies.hpp) gives the same bits, and the lanes make independent add
// chains. One chain, compiled for baseline x86-64, summed the rows of
// 4096x4096 float32 at 1.5-1.7x PyTorch's time.
struct SumRunLoop {
    template <class S, class T>
    __attribute__((always_inline)) static inline void run(const T* p, int64_t n, S* out) {
        constexpr int64_t kLanes = 32;
        const int64_t full = n / kLanes * kLanes;
        S s = 0;
        if (full > 0) {
            S lane[kLanes] = {};
            for (int64_t i = 0; i < full; i += kLanes) {
#pragma omp simd
                for (int64_t l = 0; l < kLanes; ++l) lane[l] += static_cast<S>(p[i + l]);
            }
            for (int64_t w = kLanes / 2; w >= 1; w /= 2)
                for (int64_t l = 0; l < w; ++l) lane[l] += lane[l + w];
            s = lane[0];
        }
        for (int64_t i = full; i < n; ++i) s += static_cast<S>(p[i]);
        *out = s;
    }
};

template <class S, class T>
using SumRun = void (*)(const T*, int64_t, S*);

template <class S, class T>
SumRun<S, T> sum_run() {
    return IsaCopies<SumRunLoop>::template for_this_cpu<const T*, int64_t, S*>();
}

// Whether v replaces cur as the extreme so far: a NaN, once held, is kept
// (the first NaN wins, as NumPy's), and ties keep the earlier value.
template <bool Max, class T>
inline bool replaces(T v, T cur) {
    return !is_nan(cur) && (is_nan(v) || (Max ? v > cur : v < cur));
}

// The index of the extreme of `n` contiguous values (the first NaN, else
// the first maximum or minimum), a lane per vector element: each lane keeps
// its own extreme and the index of its first occurrence with selects, so the
// loop vectorizes, and the lanes are met at the end, a NaN before a number
// and the smaller index between equals. A branch per element (taken at
// random on random data) made argmax over the rows of 4096x4096 float32
// 1.7x a raw max-then-find loop. Compiled per instruction set
// (isa_copies.hpp); compares and selects are exact, so every copy gives the
// same index.
struct ArgLoop {
    template <bool Max, class T>
    __attribute__((always_inline)) static inline void run(std::bool_constant<Max>, const T* p, int64_t n,
                                                          int64_t* out) {
        constexpr int64_t L = 16;  // lanes: an AVX-512 vector of float32
        int64_t b = 0;
        if (n >= 2 * L) {
            T value[L];
            int64_t best[L];
            for (int64_t l = 0; l < L; ++l) value[l] = p[l], best[l] = l;
            const int64_t full = n / L * L;
            for (int64_t i = L; i < full; i += L) {
#pragma omp simd
                for (int64_t l = 0; l < L; ++l) {
                    const T v = p[i + l], cur = value[l];
                    const bool take = replaces<Max>(v, cur);
                    value[l] = take ? v : cur;
                    best[l] = take ? i + l : best[l];
                }
            }
            int64_t lane = 0;
            for (int64_t l = 1; l < L; ++l) {
                const T v = value[l], cur = value[lane];
                const bool same = is_nan(v) ? is_nan(cur) : v == cur;
                if (replaces<Max>(v, cur) || (same && best[l] < best[lane])) lane = l;
            }
            b = best[lane];
            for (int64_t i = full; i < n; ++i)  // the tail comes after every lane's elements
                if (replaces<Max>(p[i], p[b])) b = i;
        } else {
            for (int64_t i = 1; i < n; ++i)
                if (replaces<Max>(p[i], p[b])) b = i;
        }
        *out = b;
    }
};

template <bool Max, class T>
using ArgRun = void (*)(std::bool_constant<Max>, const T*, int64_t, int64_t*);

template <bool Max, class T>
ArgRun<Max, T> arg_run() {
    return IsaCopies<ArgLoop>::template for_this_cpu<std::bool_constant<Max>, const T*, int64_t, int64_t*>();
}

// One long sum in S: partial sums of fixed chunks of the grain, added in
// order, so the bits do not depend on how many threads the device has (per
// thread, they did: 1, 2 and 3 threads gave three sums of 10^6 float64s).
template <class S, class T>
S parallel_sum(const T* a, int64_t extent) {
    const int64_t chunks = (extent + parallel_grain - 1) / parallel_grain;
    std::vector<S> part(static_cast<size_t>(chunks), 0);
    const SumRun<S, T> sum = sum_run<S, T>();
#pragma omp parallel for schedule(static)
    for (int64_t c = 0; c < chunks; ++c)
        sum(a + c * parallel_grain, std::min(parallel_grain, extent - c * parallel_grain), &part[size_t(c)]);
    S s = 0;
    for (S v : part) s += v;
    return s;
}

// The reduction of a block of neighbouring outputs (inner > 1): the input
// is read a row of the block at a time, contiguously, instead of one column
// per output with a stride of `inner` elements (sum over axis 0 of 4096x4096
// float32: 8x slower that way). Each output still takes its values in order
// k = 0, 1, ..., so the results are the column walk's, bit for bit, whatever
// the block.
//
// The longer a block's rows, the faster they stream: with blocks of 256 a
// row is 1 KiB and the next is a page away. So a block is as wide as gives
// each thread one (sum over axis 0 of 4096x4096 float32 on two threads:
// 5.6-7.3 ms with 256, 3.2-3.8 ms with 2048), but no narrower than kMinBlock
// and no wider than kMaxBlock, whose accumulators stay in L2. Narrower
// blocks, splitting a tensor of few columns over the threads, were slower
// than one thread taking every column (2^18 x 64 float32 over axis 0: two
// threads of 32 columns 6.0-6.8 ms, one of 64 columns 3.0-3.3 ms).
constexpr int64_t kMinBlock = 256, kMaxBlock = 4096;

int64_t block_width(int64_t outer, int64_t inner) {
    const int64_t threads = omp_get_max_threads();
    const int64_t blocks_per_outer = std::max<int64_t>(1, (threads + outer - 1) / outer);
    const int64_t width = ((inner + blocks_per_outer - 1) / blocks_per_outer + 63) / 64 * 64;  // whole cache lines
    return std::clamp(width, kMinBlock, kMaxBlock);
}

// Compiled per instruction set (isa_copies.hpp): each copy adds in the same
// order, so they give the same bits.
struct SumLoop {
    template <class T, class S>
    __attribute__((always_inline)) static inline void run(const T* p, int64_t extent, int64_t inner, int64_t n,
                                                          S* acc) {
        std::fill(acc, acc + n, S(0));
        for (int64_t k = 0; k < extent; ++k) {
            const T* row = p + k * inner;
#pragma omp simd
            for (int64_t j = 0; j < n; ++j) acc[j] += static_cast<S>(row[j]);
        }
    }
};

template <class T, class S>
auto sum_block() {
    return IsaCopies<SumLoop>::template for_this_cpu<const T*, int64_t, int64_t, int64_t, S*>();
}

// The maximum (or minimum) of each column, and with Index its first index.
// Selects, not branches, so the loop vectorizes, and compiled per
// instruction set (isa_copies.hpp; compares and selects are exact, so every
// copy gives the same bits): max over axis 0 of 4096x4096 float32 took
// 15 ms with a branch per element, beside 5 ms for a raw loop. Equal values
// are equal bits but for 0.0 and -0.0, and ties keep the earlier value, so
// the values are those the indices point at.
struct ExtremeLoop {
    template <bool Max, bool Index, class T>
    __attribute__((always_inline)) static inline void run(std::bool_constant<Max>, std::bool_constant<Index>,
                                                          const T* p, int64_t extent, int64_t inner, int64_t n,
                                                          T* value, int64_t* best) {
        std::copy(p, p + n, value);
        if constexpr (Index) std::fill(best, best + n, int64_t(0));
        for (int64_t k = 1; k < extent; ++k) {
            const T* row = p + k * inner;
#pragma omp simd
            for (int64_t j = 0; j < n; ++j) {
                const T v = row[j], cur = value[j];
                const bool take = replaces<Max>(v, cur);
                value[j] = take ? v : cur;
                if constexpr (Index) best[j] = take ? k : best[j];
            }
        }
    }
};

template <bool Max, bool Index, class T>
using ExtremeBlock = void (*)(std::bool_constant<Max>, std::bool_constant<Index>, const T*, int64_t, int64_t, int64_t,
                              T*, int64_t*);

template <bool Max, bool Index, class T>
ExtremeBlock<Max, Index, T> extreme_block() {
    return IsaCopies<ExtremeLoop>::template for_this_cpu<std::bool_constant<Max>, std::bool_constant<Index>, const T*,
                                                         int64_t, int64_t, int64_t, T*, int64_t*>();
}

// The index of the extreme of one long run, split in parts: each finds its
// part's, and the parts are met in order, so the first NaN or the first
// extreme wins as in one pass. OpenMP may give a smaller team than asked
// (OMP_THREAD_LIMIT, nesting), so each thread takes every team-size-th part.
template <bool Max, class T>
int64_t parallel_arg(const T* a, int64_t extent) {
    const ArgRun<Max, T> arg = arg_run<Max, T>();
    const int parts = omp_get_max_threads();
    std::vector<int64_t> part(parts, -1);
    const int64_t chunk = (extent + parts - 1) / parts;
#pragma omp parallel num_threads(parts)
    for (int k = omp_get_thread_num(); k < parts; k += omp_get_num_threads()) {
        const int64_t lo = k * chunk, hi = std::min(extent, lo + chunk);
        if (lo < hi) {
            arg({}, a + lo, hi - lo, &part[size_t(k)]);
            part[size_t(k)] += lo;
        }
    }
    int64_t best = part[0];
    for (int64_t i : part)
        if (i >= 0 && replaces<Max>(a[i], a[best])) best = i;
    return best;
}

// A mean's dtype: a float's own (rounded once), float64 for integers.
template <class T>
void store_mean(char* out, int64_t o, double m) {
    if constexpr (is_float_v<T>) reinterpret_cast<T*>(out)[o] = static_cast<T>(m);
    else reinterpret_cast<double*>(out)[o] = m;
}

// What one thread's blocks accumulate into: on the heap (a block's
// accumulators can be 64 KiB, and small ops run on the caller's thread, whose
// stack may be small), sized for `op` and a block of `width` before any
// OpenMP construct starts, since an exception (out of memory) thrown inside
// one ends the process instead of failing the op.
template <class T>
struct BlockScratch {
    std::vector<double> mean;
    std::vector<Acc<T>> sum;
    std::vector<T> value;
    std::vector<int64_t> best;
    BlockScratch(int32_t op, int64_t width) {
        const auto n = static_cast<size_t>(width);
        if (op == PX_OP_MEAN) mean.resize(n);
        else if (op == PX_OP_SUM) sum.resize(n);
        else value.resize(n);
        if (op == PX_OP_ARGMAX) best.resize(n);
    }
};

// A reduction over a middle or outer axis, a block of neighbouring outputs
// per task (also sum_columns: one outer, the rows as the extent).
template <class T>
void reduce_blocks(int32_t op, char* out, const T* a, int64_t outer, int64_t extent, int64_t inner) {
    const int64_t width = block_width(outer, inner);
    const int64_t blocks = (inner + width - 1) / width, tasks = outer * blocks;
    const auto sum_as_double = sum_block<T, double>();
    const auto sum_as_acc = sum_block<T, Acc<T>>();
    const auto argmax_block = extreme_block<true, true, T>();
    const auto max_block = extreme_block<true, false, T>();
    const auto min_block = extreme_block<false, false, T>();
    auto one = [&](int64_t task, BlockScratch<T>& s) {
        const int64_t o = task / blocks, j0 = (task % blocks) * width, n = std::min(width, inner - j0);
        const T* p = a + o * extent * inner + j0;
        const int64_t at = o * inner + j0;
        if (op == PX_OP_MEAN) {
            double* acc = s.mean.data();
            sum_as_double(p, extent, inner, n, acc);
            for (int64_t j = 0; j < n; ++j) store_mean<T>(out, at + j, acc[j] / static_cast<double>(extent));
            return;
        }
        if (op == PX_OP_SUM) {
            Acc<T>* acc = s.sum.data();
            sum_as_acc(p, extent, inner, n, acc);
            for (int64_t j = 0; j < n; ++j) {
                if constexpr (is_float_v<T>) reinterpret_cast<T*>(out)[at + j] = static_cast<T>(acc[j]);
                else reinterpret_cast<int64_t*>(out)[at + j] = value_of(acc[j]);
            }
            return;
        }
        T* value = s.value.data();
        if (op == PX_OP_ARGMAX) {
            int64_t* best = s.best.data();
            argmax_block({}, {}, p, extent, inner, n, value, best);
            std::copy(best, best + n, reinterpret_cast<int64_t*>(out) + at);
            return;
        }
        if (op == PX_OP_MIN) min_block({}, {}, p, extent, inner, n, value, nullptr);
        else max_block({}, {}, p, extent, inner, n, value, nullptr);
        std::copy(value, value + n, reinterpret_cast<T*>(out) + at);
    };
    // The tasks split statically over the threads, each with its scratch.
    const bool parallel = tasks > 1 && outer * extent * inner >= parallel_grain;
    const int threads = parallel ? omp_get_max_threads() : 1;
    std::vector<BlockScratch<T>> scratch;
    scratch.reserve(static_cast<size_t>(threads));
    for (int k = 0; k < threads; ++k) scratch.emplace_back(op, width);
    if (parallel) {
#pragma omp parallel for schedule(static) num_threads(threads)
        for (int64_t task = 0; task < tasks; ++task) one(task, scratch[size_t(omp_get_thread_num())]);
    } else {
        for (int64_t task = 0; task < tasks; ++task) one(task, scratch[0]);
    }
}

template <class T>
void reduce_typed(const OpTask& t) {
    const Operand& in = t.in[0];
    const T* a = reinterpret_cast<const T*>(in.data);
    int32_t axis = t.attrs.reduce.axis;
    int64_t outer = 1, extent = 1, inner = 1;
    if (axis < 0) {
        extent = in.numel();
    } else {
        for (int i = 0; i < axis; ++i) outer *= in.shape[i];
        extent = in.shape[axis];
        for (int i = axis + 1; i < in.ndim; ++i) inner *= in.shape[i];
    }
    const ArgRun<true, T> argmax = arg_run<true, T>();
    const ArgRun<false, T> argmin = arg_run<false, T>();
    const SumRun<Acc<T>, T> sum = sum_run<Acc<T>, T>();
    const SumRun<double, T> sum_as_double = sum_run<double, T>();
    int64_t nout = outer * inner;
    char* out = t.out.data;
    // Output o from its contiguous run p of `extent` values.
    auto write = [&](int64_t o, const T* p) {
        switch (t.op) {
        case PX_OP_SUM: {
            Acc<T> s = 0;
            sum(p, extent, &s);
            if constexpr (is_float_v<T>) reinterpret_cast<T*>(out)[o] = static_cast<T>(s);
            else reinterpret_cast<int64_t*>(out)[o] = value_of(s);
            break;
        }
        case PX_OP_MEAN: {
            double s = 0;
            sum_as_double(p, extent, &s);
            store_mean<T>(out, o, s / static_cast<double>(extent));
            break;
        }
        case PX_OP_MIN: {
            int64_t i = 0;
            argmin({}, p, extent, &i);
            reinterpret_cast<T*>(out)[o] = p[i];
            break;
        }
        case PX_OP_MAX: {
            int64_t i = 0;
            argmax({}, p, extent, &i);
            reinterpret_cast<T*>(out)[o] = p[i];
            break;
        }
        default: argmax({}, p, extent, reinterpret_cast<int64_t*>(out) + o); break;  // PX_OP_ARGMAX
        }
    };
    if (nout == 1 && extent >= 2 * parallel_grain && (t.op == PX_OP_SUM || t.op == PX_OP_MEAN)) {
        if (t.op == PX_OP_MEAN) {
            store_mean<T>(out, 0, parallel_sum<double>(a, extent) / static_cast<double>(extent));
        } else if constexpr (is_float_v<T>) {
            *reinterpret_cast<T*>(out) = static_cast<T>(parallel_sum<Acc<T>>(a, extent));
        } else {
            *reinterpret_cast<int64_t*>(out) = value_of(parallel_sum<Acc<T>>(a, extent));
        }
        return;
    }
    if (nout == 1 && extent >= 2 * parallel_grain && (t.op == PX_OP_MAX || t.op == PX_OP_MIN || t.op == PX_OP_ARGMAX)) {
        const int64_t best = t.op == PX_OP_MIN ? parallel_arg<false>(a, extent) : parallel_arg<true>(a, extent);
        if (t.op == PX_OP_ARGMAX) *reinterpret_cast<int64_t*>(out) = best;
        else *reinterpret_cast<T*>(out) = a[best];
        return;
    }
    if (inner > 1) return reduce_blocks<T>(t.op, out, a, outer, extent, inner);
    auto one = [&](int64_t o) { write(o, a + o * extent); };
    if (nout > 1 && nout * extent >= parallel_grain) {
#pragma omp parallel for schedule(static)
        for (int64_t o = 0; o < nout; ++o) one(o);
    } else {
        for (int64_t o = 0; o < nout; ++o) one(o);
    }
}

}  // namespace

// Called for SUM, MEAN, MAX, MIN and ARGMAX only (kernels.cpp).
void run_reduce(const OpTask& t) {
    with_any_dtype(t.in[0].dtype, [&](auto v) { reduce_typed<decltype(v)>(t); });
}

void sum_columns(const float* a, int64_t rows, int64_t cols, float* out) {
    reduce_blocks<float>(PX_OP_SUM, reinterpret_cast<char*>(out), a, 1, rows, cols);
}
void sum_columns(const double* a, int64_t rows, int64_t cols, double* out) {
    reduce_blocks<double>(PX_OP_SUM, reinterpret_cast<char*>(out), a, 1, rows, cols);
}

Kernels reduce_kernels() {
    return {{PX_OP_SUM, run_reduce, kAllDtypes},
            {PX_OP_MEAN, run_reduce, kAllDtypes},
            {PX_OP_MAX, run_reduce, kAllDtypes},
            {PX_OP_MIN, run_reduce, kAllDtypes},
            {PX_OP_ARGMAX, run_reduce, kAllDtypes}};
}

}  // namespace pxcpu
