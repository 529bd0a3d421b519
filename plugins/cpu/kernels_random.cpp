// Random tensors from Philox4x32-10: element i uses counter (offset + i), so
// the values are the same whatever the thread count; uniform draws are
// philox.h's px_random_value, bit for bit.
//
// The Philox rounds vectorize (as dropout's do, kernels_dropout.cpp), so the
// draws are made in a loop compiled per instruction set. A normal is
// px_normal_from's formula with SLEEF's log and cos (vector_math.hpp):
// vectorized, and the same bits on every CPU. libm's and CUDA's log and cos
// differ from them (and from each other) in the last bits.
#include <algorithm>
#include <cmath>

#include "isa_copies.hpp"
#include "kernel_util.hpp"
#include "kernels.hpp"
#include "plexus/philox.h"
#include "vector_math.hpp"

namespace pxcpu {
namespace {

struct UniformLoop {
    template <class T>
    __attribute__((always_inline)) static inline void run(T* o, int64_t begin, int64_t end, px_random_attrs r) {
        const T b = static_cast<T>(r.b), a = static_cast<T>(r.a);
        const bool empty_range = r.a == r.b;
#pragma omp simd
        for (int64_t i = begin; i < end; ++i) {
            const T v = static_cast<T>(px_uniform_in(px_random_uniforms(r.seed, r.offset, i, sizeof(T) == 8).u1, r.a, r.b));
            o[i] = v < b || empty_range ? v : a;  // a draw stays in [a, b) after rounding to T
        }
    }
};

struct NormalLoop {
    template <class T>
    __attribute__((always_inline)) static inline void run(T* o, int64_t begin, int64_t end, px_random_attrs r) {
        constexpr int64_t kStep = 256;
        double u1[kStep], u2[kStep];
        for (int64_t s = begin; s < end; s += kStep) {
            const int64_t n = std::min(kStep, end - s);
#pragma omp simd
            for (int64_t j = 0; j < n; ++j) {
                const px_uniform_pair u = px_random_uniforms(r.seed, r.offset, s + j, sizeof(T) == 8);
                u1[j] = u.u1, u2[j] = u.u2;
            }
            // px_normal_from, with SLEEF's log and cos.
#pragma omp simd
            for (int64_t j = 0; j < n; ++j) u1[j] = 1.0 - u1[j], u2[j] = 6.283185307179586 * u2[j];
            vector_math(MathFn::log, u1, u1, n);
            vector_math(MathFn::cos, u2, u2, n);
#pragma omp simd
            for (int64_t j = 0; j < n; ++j)
                o[s + j] = static_cast<T>(px_add_rn(r.a, px_mul_rn(r.b, std::sqrt(-2.0 * u1[j]) * u2[j])));
        }
    }
};

template <class Loop, class T>
void fill_random(const OpTask& t) {
    T* o = reinterpret_cast<T*>(t.out.data);
    const auto run = IsaCopies<Loop>::template for_this_cpu<T*, int64_t, int64_t, px_random_attrs>();
    const px_random_attrs r = t.attrs.random;
    parallel_chunks(t.out.numel(), parallel_grain / 8, [&](int64_t begin, int64_t end) { run(o, begin, end, r); });
}

template <class T>
void random_typed(const OpTask& t) {
    if (t.op == PX_OP_RANDOM_NORMAL) fill_random<NormalLoop, T>(t);
    else fill_random<UniformLoop, T>(t);
}

}  // namespace

// float16 and bfloat16 take float32's stream (sizeof(T) < 8), each draw
// rounded once from float64 to the 16-bit format.
void run_random(const OpTask& t) {
    with_any_dtype(t.out.dtype, [&](auto v) {
        if constexpr (is_float_v<decltype(v)>) random_typed<decltype(v)>(t);
        else throw KernelError("random numbers need a floating dtype");
    });
}

Kernels random_kernels() {
    return {{PX_OP_RANDOM_UNIFORM, run_random, kFloatDtypes}, {PX_OP_RANDOM_NORMAL, run_random, kFloatDtypes}};
}

}  // namespace pxcpu
