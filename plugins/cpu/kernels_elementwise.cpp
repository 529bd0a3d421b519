// Elementwise kernels: binary ops (with broadcasting or a scalar), comparisons,
// unary math, where. Inner loops are plain contiguous loops the compiler
// vectorizes, or SLEEF's vector functions for exp, log, tanh and sigmoid
// (vector_math.hpp); broadcasting is handled per row, not per element.
// float16 and bfloat16 compute in float32 and round once: for + - * / and
// sqrt that is the correctly rounded result (float32 has more than twice
// their precision, plus two bits).
#include <atomic>
#include <cmath>
#include <limits>
#include <type_traits>

#include "kernel_util.hpp"
#include "kernels.hpp"
#include "vector_math.hpp"

namespace pxcpu {
namespace {

// Integers wrap like two's complement, as NumPy's and PyTorch's do. C++
// leaves signed overflow undefined, so integers are added, subtracted,
// multiplied and negated in their unsigned type.
template <class T>
using Arith = typename std::conditional_t<std::is_integral_v<T>, std::make_unsigned<T>, std::enable_if<true, T>>::type;

template <class T>
T negated(T a) {
    if constexpr (std::is_integral_v<T>) return static_cast<T>(Arith<T>(0) - static_cast<Arith<T>>(a));
    else if constexpr (is_half_v<T>) return T::from_bits(uint16_t(a.bits ^ 0x8000u));  // the sign bit, as -x flips it
    else return -a;  // -0.0 stays negative zero
}

// |a|: floats clear the sign bit (-0.0 and -NaN too, as NumPy's); integers wrap as negated does.
template <class T>
T absolute(T a) {
    if constexpr (std::is_integral_v<T>) return std::is_signed_v<T> && a < 0 ? negated(a) : a;
    else if constexpr (is_half_v<T>) return T::from_bits(uint16_t(a.bits & 0x7fffu));
    else return std::fabs(a);
}

template <class T>
struct IntDivision {
    // C truncation; the one overflowing case (MIN / -1) wraps like two's complement.
    static T apply(T a, T b, std::atomic<bool>& by_zero) {
        if (b == 0) {
            by_zero.store(true, std::memory_order_relaxed);
            return 0;
        }
        if constexpr (std::is_signed_v<T>) {
            if (b == -1) return static_cast<T>(0 - static_cast<std::make_unsigned_t<T>>(a));
        }
        return static_cast<T>(a / b);
    }
};

// True when `a` is read exactly like the contiguous output (no broadcasting).
bool same_layout(const Operand& a, const Operand& out) {
    for (int i = 0; i < out.ndim; ++i)
        if (a.strides[i] != out.strides[i] && out.shape[i] != 1) return false;
    return true;
}

template <class T, class R, class F>
void binary_rows(const OpTask& t, F f) {
    if (same_layout(t.in[0], t.out) && same_layout(t.in[1], t.out)) {  // the common case: one flat loop
        map_flat(t.out.numel(), reinterpret_cast<R*>(t.out.data), f, reinterpret_cast<const T*>(t.in[0].data),
                 reinterpret_cast<const T*>(t.in[1].data));
        return;
    }
    const Operand* ops[3] = {&t.out, &t.in[0], &t.in[1]};
    auto w = make_walk<3>(ops);
    w.rows([&](char* const* p, int64_t n, const int64_t* s) {
        R* o = reinterpret_cast<R*>(p[0]);
        const T* a = reinterpret_cast<const T*>(p[1]);
        const T* b = reinterpret_cast<const T*>(p[2]);
        if (s[1] == 1 && s[2] == 1) {
#pragma omp simd
            for (int64_t i = 0; i < n; ++i) o[i] = f(a[i], b[i]);
        } else if (s[1] == 1 && s[2] == 0) {
            const T bv = b[0];
#pragma omp simd
            for (int64_t i = 0; i < n; ++i) o[i] = f(a[i], bv);
        } else if (s[1] == 0 && s[2] == 1) {
            const T av = a[0];
#pragma omp simd
            for (int64_t i = 0; i < n; ++i) o[i] = f(av, b[i]);
        } else {
            for (int64_t i = 0; i < n; ++i) o[i * s[0]] = f(a[i * s[1]], b[i * s[2]]);
        }
    });
}

// Runs f over the op's operands: two tensors, or one tensor and the scalar.
template <class T, class R, class F>
void binary_any(const OpTask& t, F f) {
    if (t.num_inputs == 2) return binary_rows<T, R>(t, f);
    const px_binary_attrs& at = t.attrs.binary;
    const T s = convert<T>(at.scalar);  // saturating, as the ABI's conversion to the input's dtype
    const T* a = reinterpret_cast<const T*>(t.in[0].data);
    R* o = reinterpret_cast<R*>(t.out.data);
    int64_t n = t.out.numel();
    if (at.scalar_operand == 1) map_flat(n, o, [s, f](T x) { return f(s, x); }, a);
    else map_flat(n, o, [s, f](T x) { return f(x, s); }, a);
}

template <class T>
void arithmetic(const OpTask& t) {
    switch (t.op) {
    case PX_OP_ADD: return binary_any<T, T>(t, [](T a, T b) { return static_cast<T>(Arith<T>(a) + Arith<T>(b)); });
    case PX_OP_SUB: return binary_any<T, T>(t, [](T a, T b) { return static_cast<T>(Arith<T>(a) - Arith<T>(b)); });
    case PX_OP_MUL: return binary_any<T, T>(t, [](T a, T b) { return static_cast<T>(Arith<T>(a) * Arith<T>(b)); });
    case PX_OP_DIV:
        if constexpr (is_float_v<T>) {
            return binary_any<T, T>(t, [](T a, T b) { return static_cast<T>(a / b); });
        } else {
            std::atomic<bool> by_zero{false};
            binary_any<T, T>(t, [&](T a, T b) { return IntDivision<T>::apply(a, b, by_zero); });
            if (by_zero.load()) throw KernelError("integer division by zero");
            return;
        }
    case PX_OP_POW:
        if constexpr (is_float_v<T>) {
            using C = Compute<T>;
            // x ** 2 (squared errors, norms) as x * x: the correctly rounded
            // square, for every x (NaN, infinities and -0.0 included), where
            // a pow call per element took 10x as long.
            if (t.num_inputs == 1 && t.attrs.binary.scalar_operand == 2 && t.attrs.binary.scalar == 2.0)
                return binary_any<T, T>(t, [](T a, T) { return static_cast<T>(C(a) * C(a)); });
            return binary_any<T, T>(t, [](T a, T b) { return static_cast<T>(std::pow(C(a), C(b))); });
        }
        break;
    case PX_OP_EQ: return binary_any<T, uint8_t>(t, [](T a, T b) { return uint8_t(a == b); });
    case PX_OP_NE: return binary_any<T, uint8_t>(t, [](T a, T b) { return uint8_t(a != b); });
    case PX_OP_LT: return binary_any<T, uint8_t>(t, [](T a, T b) { return uint8_t(a < b); });
    case PX_OP_LE: return binary_any<T, uint8_t>(t, [](T a, T b) { return uint8_t(a <= b); });
    case PX_OP_GT: return binary_any<T, uint8_t>(t, [](T a, T b) { return uint8_t(a > b); });
    case PX_OP_GE: return binary_any<T, uint8_t>(t, [](T a, T b) { return uint8_t(a >= b); });
    default: break;
    }
    throw KernelError("not a binary op");
}

template <class T, class F>
void unary_map(const OpTask& t, F f) {
    const T* a = reinterpret_cast<const T*>(t.in[0].data);
    T* o = reinterpret_cast<T*>(t.out.data);
    map_flat(t.out.numel(), o, f, a);
}

// A function of vector_math.hpp, which takes whole arrays, over contiguous
// chunks, in parallel above the grain.
template <class T>
void unary_math(const OpTask& t, MathFn fn) {
    const T* a = reinterpret_cast<const T*>(t.in[0].data);
    T* o = reinterpret_cast<T*>(t.out.data);
    parallel_chunks(t.out.numel(), parallel_grain, [&](int64_t lo, int64_t hi) {
        if constexpr (is_half_v<T>) {  // through float32, a stack block at a time
            constexpr int64_t kBlock = 256;
            float x[kBlock];
            for (int64_t i = lo; i < hi; i += kBlock) {
                const int64_t m = std::min(kBlock, hi - i);
                for (int64_t k = 0; k < m; ++k) x[k] = a[i + k];
                vector_math(fn, x, x, m);
                for (int64_t k = 0; k < m; ++k) o[i + k] = T(x[k]);
            }
        } else {
            vector_math(fn, a + lo, o + lo, hi - lo);
        }
    });
}

template <class T>
void unary(const OpTask& t) {
    switch (t.op) {
    case PX_OP_NEG: return unary_map<T>(t, [](T a) { return negated(a); });
    case PX_OP_ABS: return unary_map<T>(t, [](T a) { return absolute(a); });
    case PX_OP_RELU: return unary_map<T>(t, [](T a) { return a > 0 ? a : T(0); });
    default: break;
    }
    if constexpr (is_float_v<T>) {
        switch (t.op) {
        case PX_OP_EXP: return unary_math<T>(t, MathFn::exp);
        case PX_OP_LOG: return unary_math<T>(t, MathFn::log);
        case PX_OP_SQRT: return unary_map<T>(t, [](T a) { return static_cast<T>(std::sqrt(Compute<T>(a))); });
        case PX_OP_SIGMOID: return unary_math<T>(t, MathFn::sigmoid);
        case PX_OP_TANH: return unary_math<T>(t, MathFn::tanh);
        default: break;
        }
    }
    throw KernelError("not a unary op for this dtype");
}

template <class T>
void where(const OpTask& t) {
    const Operand* ops[4] = {&t.out, &t.in[0], &t.in[1], &t.in[2]};
    auto w = make_walk<4>(ops);
    w.rows([&](char* const* p, int64_t n, const int64_t* s) {
        T* o = reinterpret_cast<T*>(p[0]);
        const uint8_t* c = reinterpret_cast<const uint8_t*>(p[1]);
        const T* a = reinterpret_cast<const T*>(p[2]);
        const T* b = reinterpret_cast<const T*>(p[3]);
        if (s[0] == 1 && s[1] == 1 && s[2] == 1 && s[3] == 1) {
            // Both values loaded, then chosen: a select, not a branch taken
            // at random on the condition (6x slower on a random mask).
#pragma omp simd
            for (int64_t i = 0; i < n; ++i) {
                const T av = a[i], bv = b[i];
                o[i] = c[i] ? av : bv;
            }
            return;
        }
        for (int64_t i = 0; i < n; ++i) o[i * s[0]] = c[i * s[1]] ? a[i * s[2]] : b[i * s[3]];
    });
}

}  // namespace

void run_elementwise(const OpTask& t) {
    if (t.op == PX_OP_WHERE) return with_any_dtype(t.in[1].dtype, [&](auto v) { where<decltype(v)>(t); });
    int32_t dtype = t.in[0].dtype;
    if (t.op >= PX_OP_NEG && t.op <= PX_OP_TANH) return with_any_dtype(dtype, [&](auto v) { unary<decltype(v)>(t); });
    with_any_dtype(dtype, [&](auto v) { arithmetic<decltype(v)>(t); });
}

Kernels elementwise_kernels() {
    Kernels k;
    for (int32_t op : {PX_OP_ADD, PX_OP_SUB, PX_OP_MUL, PX_OP_DIV, PX_OP_POW, PX_OP_EQ, PX_OP_NE, PX_OP_LT, PX_OP_LE,
                       PX_OP_GT, PX_OP_GE, PX_OP_NEG, PX_OP_EXP, PX_OP_LOG, PX_OP_SQRT, PX_OP_ABS, PX_OP_RELU,
                       PX_OP_SIGMOID, PX_OP_TANH, PX_OP_WHERE})
        k.push_back({op, run_elementwise, kAllDtypes});
    return k;
}

}  // namespace pxcpu
