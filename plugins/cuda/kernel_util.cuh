// Helpers shared by the CUDA kernels: dtype dispatch, launch shapes, and a
// strided walk whose axes are collapsed on the host first.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "cuda_check.hpp"
#include "plexus/cpp/half.hpp"
#include "fast_divide.cuh"
#include "op_args.hpp"

namespace pxcuda {

using plexus::bfloat16;
using plexus::float16;

// Calls f(T{}) with T the C++ type of `dtype`.
template <class F>
decltype(auto) with_dtype(int32_t dtype, F&& f) {
    switch (dtype) {
    case PX_FLOAT32: return f(float{});
    case PX_FLOAT64: return f(double{});
    case PX_INT32: return f(int32_t{});
    case PX_INT64: return f(int64_t{});
    case PX_UINT8: return f(uint8_t{});
    default: throw Unsupported("unknown dtype " + std::to_string(dtype));
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

// float32 or float64 only.
template <class F>
decltype(auto) with_float(int32_t dtype, const char* what, F&& f) {
    if (dtype == PX_FLOAT32) return f(float{});
    if (dtype == PX_FLOAT64) return f(double{});
    throw Unsupported(std::string(what) + " needs float32 or float64");
}

constexpr int kThreads = 256;

// Blocks for a grid-stride loop over n items: enough to fill the GPU, no more.
inline unsigned grid_for(int64_t n, const Launch& l, int per_thread = 1) {
    int64_t want = (n + int64_t(kThreads) * per_thread - 1) / (int64_t(kThreads) * per_thread);
    int64_t cap = int64_t(l.sm_count) * 32;
    return static_cast<unsigned>(std::max<int64_t>(1, std::min(want, cap)));
}

// The sum of every thread's `mine` over a block of kThreads threads, added
// in a fixed tree order (the same bits every run); every thread gets it.
// `part` is the caller's __shared__ double[kThreads].
__device__ inline double block_sum(double mine, double* part) {
    part[threadIdx.x] = mine;
    __syncthreads();
    for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) part[threadIdx.x] += part[threadIdx.x + half];
        __syncthreads();
    }
    const double sum = part[0];
    __syncthreads();  // part may be written again by the caller's next round
    return sum;
}

// a * b and a + b, each rounded on its own and never fused into one
// multiply-add: nvcc fuses by default, the CPU plugin (and the emulator's
// build of these kernels) never does. For results whose bits must be the CPU
// plugin's, as the SGD update's are: replicas of one parameter on cpu(0) and
// gpu(0) must stay identical after each step.
template <class T>
__device__ inline T mul_rn(T a, T b) {
#if defined(__CUDA_ARCH__)
    if constexpr (std::is_same<T, float>::value) return __fmul_rn(a, b);
    else return __dmul_rn(a, b);
#else
    return a * b;
#endif
}
template <class T>
__device__ inline T add_rn(T a, T b) {
#if defined(__CUDA_ARCH__)
    if constexpr (std::is_same<T, float>::value) return __fadd_rn(a, b);
    else return __dadd_rn(a, b);
#else
    return a + b;
#endif
}
// a / b and sqrt(a), correctly rounded (what nvcc gives by default, said
// here so that no fast-math flag can change the optimizer steps' bits).
template <class T>
__device__ inline T div_rn(T a, T b) {
#if defined(__CUDA_ARCH__)
    if constexpr (std::is_same<T, float>::value) return __fdiv_rn(a, b);
    else return __ddiv_rn(a, b);
#else
    return a / b;
#endif
}
template <class T>
__device__ inline T sqrt_rn(T a) {
#if defined(__CUDA_ARCH__)
    if constexpr (std::is_same<T, float>::value) return __fsqrt_rn(a);
    else return __dsqrt_rn(a);
#else
    return std::sqrt(a);
#endif
}

#define PX_GRID_STRIDE(i, n) \
    for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); i += int64_t(blockDim.x) * gridDim.x)

// N operands over one iteration shape (output first), each with its own
// element strides; axes that are contiguous for every operand are merged, so
// a broadcast over a contiguous tensor costs one division per axis left.
// Walks of fewer than 2^31 elements (all but the largest) divide their
// 32-bit indices by multiplying (fast_divide.cuh) instead of dividing in
// 64 bits.
template <int N>
struct Strided {
    int nd = 0;
    bool narrow = false;  // every index fits in 31 bits: div[] is set
    int64_t shape[PX_MAX_DIMS] = {};
    int64_t st[N][PX_MAX_DIMS] = {};
    FastDivide div[PX_MAX_DIMS] = {};

    __host__ __device__ void offsets(int64_t i, int64_t (&off)[N]) const {
        for (int k = 0; k < N; ++k) off[k] = 0;
        if (narrow) {
            uint32_t rest = uint32_t(i);
            for (int d = nd - 1; d >= 0; --d) {
                const uint32_t q = div[d].quotient(rest);
                const int64_t idx = int64_t(rest - q * div[d].divisor);
                rest = q;
                for (int k = 0; k < N; ++k) off[k] += idx * st[k][d];
            }
            return;
        }
        for (int d = nd - 1; d >= 0; --d) {
            int64_t idx = i % shape[d];
            i /= shape[d];
            for (int k = 0; k < N; ++k) off[k] += idx * st[k][d];
        }
    }
};

template <int N>
Strided<N> make_strided(const Operand* const (&ops)[N]) {
    Strided<N> w;
    int out = 0;
    const Operand& o = *ops[0];
    for (int i = 0; i < o.ndim; ++i) {
        if (o.shape[i] == 1) continue;
        bool merge = out > 0;
        for (int k = 0; merge && k < N; ++k) merge = w.st[k][out - 1] == ops[k]->strides[i] * o.shape[i];
        if (merge) {
            w.shape[out - 1] *= o.shape[i];
            for (int k = 0; k < N; ++k) w.st[k][out - 1] = ops[k]->strides[i];
        } else {
            w.shape[out] = o.shape[i];
            for (int k = 0; k < N; ++k) w.st[k][out] = ops[k]->strides[i];
            ++out;
        }
    }
    if (out == 0) {
        w.shape[0] = 1;
        for (int k = 0; k < N; ++k) w.st[k][0] = 1;
        out = 1;
    }
    w.nd = out;
    int64_t total = 1;
    for (int d = 0; d < out; ++d) total *= w.shape[d];
    w.narrow = total > 0 && total < int64_t(FastDivide::kLimit);
    if (w.narrow)
        for (int d = 0; d < out; ++d) w.div[d] = FastDivide(uint32_t(w.shape[d]));
    return w;
}

// Records the first failure a kernel finds (see DeviceStatus).
__device__ inline void report_failure(DeviceStatus* s, int32_t code, int32_t op, int64_t a = 0, int64_t b = 0,
                                      int64_t c = 0) {
    const uint32_t bit = 1u << (uint32_t(op) % 32), word = (uint32_t(op) / 32) % 8;
    atomicOr(&s->failed_ops[word], bit);
    if (atomicCAS(&s->code, 0, -1) == 0) {  // -1 while the fields are written
        s->op = op, s->a = a, s->b = b, s->c = c;
        __threadfence();
        atomicExch(&s->code, code);
    }
}

// float16 and bfloat16: stored as 16-bit patterns, computed on as float.
template <class T>
constexpr bool is_half_v = std::is_same<T, float16>::value || std::is_same<T, bfloat16>::value;
// The floating dtypes' C++ types, the 16-bit ones included.
template <class T>
constexpr bool is_float_v = std::is_floating_point<T>::value || is_half_v<T>;
// The type T's arithmetic is done in: float for the 16-bit floats, T itself otherwise.
template <class T>
using Compute = std::conditional_t<is_half_v<T>, float, T>;

// A value as another dtype, as CAST and the binary ops' scalar operand make
// it: float to integer saturates (NaN gives 0), as on the CPU plugin; to
// float16 or bfloat16 it rounds once, to nearest even, with half.h's
// functions, so the bits are the CPU plugin's.
template <class To, class From>
__host__ __device__ To convert(From v) {
    if constexpr (is_half_v<From>) {  // exact, by bits (a NaN keeps its payload)
        if constexpr (std::is_same<To, double>::value) return static_cast<double>(v);
        else return convert<To>(static_cast<float>(v));
    } else if constexpr (is_half_v<To>) {
        return To(v);
    } else if constexpr (std::is_integral<To>::value && std::is_floating_point<From>::value) {
        if (isnan(v)) return 0;
        if (v <= static_cast<From>(std::numeric_limits<To>::lowest())) return std::numeric_limits<To>::lowest();
        if (v >= static_cast<From>(std::numeric_limits<To>::max())) return std::numeric_limits<To>::max();
    }
    return static_cast<To>(v);
}

// Sums in float64 for floats and, for integers, in uint64_t read back as
// int64_t through value_of: they wrap like two's complement, like the CPU
// plugin's (signed overflow is undefined in C++ and CUDA alike).
template <class T>
using Acc = std::conditional_t<is_float_v<T>, double, uint64_t>;
__host__ __device__ inline double value_of(double s) { return s; }
__host__ __device__ inline int64_t value_of(uint64_t s) { return static_cast<int64_t>(s); }

// The type integers are added, subtracted, multiplied and negated in: their
// unsigned one, so they wrap like two's complement (as on the CPU plugin).
template <class T>
using Arith = typename std::conditional_t<std::is_integral<T>::value, std::make_unsigned<T>, std::enable_if<true, T>>::type;

template <class T>
__host__ __device__ T negated(T a) {
    if constexpr (std::is_integral<T>::value) return static_cast<T>(Arith<T>(0) - static_cast<Arith<T>>(a));
    else if constexpr (is_half_v<T>) return T::from_bits(uint16_t(a.bits ^ 0x8000u));  // the sign bit, as -x flips it
    else return -a;  // -0.0 stays negative zero
}

// |a|: floats clear the sign bit (-0.0 and -NaN too, as NumPy's); integers wrap as negated does.
template <class T>
__host__ __device__ T absolute(T a) {
    if constexpr (std::is_integral<T>::value) return std::is_signed<T>::value && a < 0 ? negated(a) : a;
    else if constexpr (is_half_v<T>) return T::from_bits(uint16_t(a.bits & 0x7fffu));
    else return fabs(a);
}

}  // namespace pxcuda
