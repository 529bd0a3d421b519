// Elementwise kernels: binary ops (two tensors with broadcasting, or a tensor
// and a scalar), comparisons, unary math, where. The common case, operands
// laid out like the contiguous output, is a flat grid-stride loop with 16-byte
// vector loads and no index math; broadcasting walks collapsed axes.
// float16 and bfloat16 compute in float32 and round once with half.h, as on
// the CPU plugin (the sign of a NaN that arithmetic makes may differ, as in
// float32).
#include <cmath>

#include "kernel_util.cuh"
#include "plexus/op_math.h"

namespace pxcuda {
namespace {

template <class T, int V>
struct alignas(sizeof(T) * V) Pack {
    T v[V];
};

template <class T>
constexpr int vec_width() {
    return 16 / sizeof(T) < 1 ? 1 : int(16 / sizeof(T));
}

inline bool aligned(const void* p, size_t a) { return reinterpret_cast<uintptr_t>(p) % a == 0; }

// The inputs of a flat loop: a tensor read like the contiguous output, or
// one value for every element (a scalar operand, or nothing for unary ops).
template <class T>
struct Flat {
    using type = T;
    const T* __restrict__ p;
    template <int V>
    __device__ Pack<T, V> pack(int64_t i) const { return reinterpret_cast<const Pack<T, V>*>(p)[i]; }
    __device__ T at(int64_t i) const { return p[i]; }
};
template <class T>
struct Same {
    T s;
    template <int V>
    __device__ Pack<T, V> pack(int64_t) const {
        Pack<T, V> r;
#pragma unroll
        for (int k = 0; k < V; ++k) r.v[k] = s;
        return r;
    }
    __device__ T at(int64_t) const { return s; }
};

// f with its operands swapped (a scalar on the left), or with the second ignored (unary ops).
template <class F>
struct Swapped {
    F f;
    template <class T>
    __device__ auto operator()(T a, T b) const { return f(b, a); }
};
template <class F>
struct FirstOnly {
    F f;
    template <class T>
    __device__ auto operator()(T a, T) const { return f(a); }
};

// o[i] = f(a[i], b[i]); 16-byte vector loads when every pointer allows them.
template <class R, class A, class B, class F>
__global__ void flat_map(A a, B b, R* __restrict__ o, int64_t n, bool vec, F f) {
    constexpr int V = vec_width<typename A::type>();
    int64_t done = 0;
    if (vec) {
        const int64_t nv = n / V;
        PX_GRID_STRIDE(i, nv) {
            const auto pa = a.template pack<V>(i);
            const auto pb = b.template pack<V>(i);
            Pack<R, V> po;
#pragma unroll
            for (int k = 0; k < V; ++k) po.v[k] = f(pa.v[k], pb.v[k]);
            reinterpret_cast<Pack<R, V>*>(o)[i] = po;
        }
        done = nv * V;
    }
    PX_GRID_STRIDE(j, n - done) {
        const int64_t i = done + j;
        o[i] = f(a.at(i), b.at(i));
    }
}

template <class T, class R, class F>
__global__ void binary_strided(Strided<3> w, int64_t n, const T* a, const T* b, R* o, F f) {
    PX_GRID_STRIDE(i, n) {
        int64_t off[3];
        w.offsets(i, off);
        o[off[0]] = f(a[off[1]], b[off[2]]);
    }
}

template <class T>
__global__ void where_strided(Strided<4> w, int64_t n, const uint8_t* c, const T* a, const T* b, T* o) {
    PX_GRID_STRIDE(i, n) {
        int64_t off[4];
        w.offsets(i, off);
        o[off[0]] = c[off[1]] ? a[off[2]] : b[off[3]];
    }
}

// True when `a` is read exactly like the contiguous output (no broadcasting).
bool same_layout(const Operand& a, const Operand& out) {
    int64_t st = 1;
    for (int i = out.ndim - 1; i >= 0; --i) {
        if (out.shape[i] != 1 && a.strides[i] != st) return false;
        st *= out.shape[i];
    }
    return true;
}

template <class T, class R, class F>
void binary_any(const OpArgs& t, const Launch& l, F f) {
    const int64_t n = t.out.numel();
    if (n == 0) return;
    constexpr int V = vec_width<T>();
    const Flat<T> a{reinterpret_cast<const T*>(t.in[0].data)};
    R* o = reinterpret_cast<R*>(t.out.data);
    const bool vec = aligned(o, sizeof(Pack<R, V>)) && aligned(a.p, sizeof(Pack<T, V>));
    const unsigned grid = grid_for(n, l, V);
    if (t.num_inputs == 1) {  // a tensor and a scalar
        const Same<T> s{convert<T>(t.attrs.binary.scalar)};  // saturating, as the ABI's conversion
        if (t.attrs.binary.scalar_operand == 1)
            flat_map<R><<<grid, kThreads, 0, l.stream>>>(a, s, o, n, vec, Swapped<F>{f});
        else
            flat_map<R><<<grid, kThreads, 0, l.stream>>>(a, s, o, n, vec, f);
        return check_launch("flat_map (scalar)");
    }
    const Flat<T> b{reinterpret_cast<const T*>(t.in[1].data)};
    if (same_layout(t.in[0], t.out) && same_layout(t.in[1], t.out)) {
        flat_map<R><<<grid, kThreads, 0, l.stream>>>(a, b, o, n, vec && aligned(b.p, sizeof(Pack<T, V>)), f);
        return check_launch("flat_map");
    }
    const Operand* ops[3] = {&t.out, &t.in[0], &t.in[1]};
    binary_strided<T, R><<<grid_for(n, l), kThreads, 0, l.stream>>>(make_strided<3>(ops), n, a.p, b.p, o, f);
    check_launch("binary_strided");
}

// C truncation; MIN / -1 wraps like two's complement; x / 0 fails on the device.
template <class T>
struct IntDivide {
    DeviceStatus* status;
    __device__ T operator()(T a, T b) const {
        if (b == 0) {
            report_failure(status, status_integer_division_by_zero, PX_OP_DIV);
            return 0;
        }
        if constexpr (std::is_signed<T>::value) {
            if (b == T(-1)) return static_cast<T>(0 - static_cast<std::make_unsigned_t<T>>(a));
        }
        return static_cast<T>(a / b);
    }
};

template <class T>
void arithmetic(const OpArgs& t, const Launch& l) {
    switch (t.op) {
    case PX_OP_ADD: return binary_any<T, T>(t, l, [] __device__(T a, T b) { return static_cast<T>(Arith<T>(a) + Arith<T>(b)); });
    case PX_OP_SUB: return binary_any<T, T>(t, l, [] __device__(T a, T b) { return static_cast<T>(Arith<T>(a) - Arith<T>(b)); });
    case PX_OP_MUL: return binary_any<T, T>(t, l, [] __device__(T a, T b) { return static_cast<T>(Arith<T>(a) * Arith<T>(b)); });
    case PX_OP_DIV:
        if constexpr (is_float_v<T>)
            return binary_any<T, T>(t, l, [] __device__(T a, T b) { return static_cast<T>(a / b); });
        else
            return binary_any<T, T>(t, l, IntDivide<T>{l.status});
    case PX_OP_POW:
        if constexpr (is_float_v<T>) {
            using C = Compute<T>;
            // x ** 2 as x * x, as on the CPU plugin: the correctly rounded
            // square by construction, whatever pow's error.
            if (t.num_inputs == 1 && t.attrs.binary.scalar_operand == 2 && t.attrs.binary.scalar == 2.0)
                return binary_any<T, T>(t, l, [] __device__(T a, T) { return static_cast<T>(C(a) * C(a)); });
            return binary_any<T, T>(t, l, [] __device__(T a, T b) { return static_cast<T>(pow(C(a), C(b))); });
        }
        break;
    case PX_OP_EQ: return binary_any<T, uint8_t>(t, l, [] __device__(T a, T b) { return uint8_t(a == b); });
    case PX_OP_NE: return binary_any<T, uint8_t>(t, l, [] __device__(T a, T b) { return uint8_t(a != b); });
    case PX_OP_LT: return binary_any<T, uint8_t>(t, l, [] __device__(T a, T b) { return uint8_t(a < b); });
    case PX_OP_LE: return binary_any<T, uint8_t>(t, l, [] __device__(T a, T b) { return uint8_t(a <= b); });
    case PX_OP_GT: return binary_any<T, uint8_t>(t, l, [] __device__(T a, T b) { return uint8_t(a > b); });
    case PX_OP_GE: return binary_any<T, uint8_t>(t, l, [] __device__(T a, T b) { return uint8_t(a >= b); });
    default: break;
    }
    throw Unsupported("not a binary op for this dtype");
}

template <class T, class F>
void unary_map(const OpArgs& t, const Launch& l, F f) {
    const int64_t n = t.out.numel();
    if (n == 0) return;
    constexpr int V = vec_width<T>();
    const Flat<T> a{reinterpret_cast<const T*>(t.in[0].data)};
    T* o = reinterpret_cast<T*>(t.out.data);
    const bool vec = aligned(a.p, sizeof(Pack<T, V>)) && aligned(o, sizeof(Pack<T, V>));
    flat_map<T><<<grid_for(n, l, V), kThreads, 0, l.stream>>>(a, Same<T>{T(0)}, o, n, vec, FirstOnly<F>{f});
    check_launch("flat_map (unary)");
}

template <class T>
void unary(const OpArgs& t, const Launch& l) {
    switch (t.op) {
    case PX_OP_NEG: return unary_map<T>(t, l, [] __device__(T a) { return negated(a); });
    default: break;
    }
    if constexpr (std::is_signed<T>::value || is_half_v<T>) {  // uint8 has neither
        if (t.op == PX_OP_ABS) return unary_map<T>(t, l, [] __device__(T a) { return absolute(a); });
        if (t.op == PX_OP_RELU) return unary_map<T>(t, l, [] __device__(T a) { return a > 0 ? a : T(0); });
    }
    if constexpr (is_float_v<T>) {
        // float32 (and float16, bfloat16) goes through CUDA's float64 functions (1 ulp in float64) and
        // is rounded once: correctly rounded, as the CPU plugin's (SLEEF's
        // float64 functions), unless the value lies within a float64 ulp of
        // halfway between two floats (one input in about 2^28). CUDA's float
        // functions are documented as up to 2 ulp off, and 1 ulp is enough to
        // print seed 001's exp(4) + 2 as 56.598152 instead of 56.59815.
        switch (t.op) {
        case PX_OP_EXP: return unary_map<T>(t, l, [] __device__(T a) { return T(exp(double(a))); });
        case PX_OP_LOG: return unary_map<T>(t, l, [] __device__(T a) { return T(log(double(a))); });
        case PX_OP_SQRT: return unary_map<T>(t, l, [] __device__(T a) { return static_cast<T>(sqrt(Compute<T>(a))); });
        case PX_OP_SIGMOID: return unary_map<T>(t, l, [] __device__(T a) { return T(px_sigmoid(double(a))); });
        case PX_OP_TANH: return unary_map<T>(t, l, [] __device__(T a) { return T(tanh(double(a))); });
        default: break;
        }
    }
    throw Unsupported("not a unary op for this dtype");
}

template <class T>
void where(const OpArgs& t, const Launch& l) {
    const int64_t n = t.out.numel();
    if (n == 0) return;
    const Operand* ops[4] = {&t.out, &t.in[0], &t.in[1], &t.in[2]};
    where_strided<T><<<grid_for(n, l), kThreads, 0, l.stream>>>(
        make_strided<4>(ops), n, reinterpret_cast<const uint8_t*>(t.in[0].data),
        reinterpret_cast<const T*>(t.in[1].data), reinterpret_cast<const T*>(t.in[2].data),
        reinterpret_cast<T*>(t.out.data));
    check_launch("where_strided");
}

}  // namespace

void run_elementwise(const OpArgs& t, const Launch& l) {
    if (t.op == PX_OP_WHERE) return with_any_dtype(t.in[1].dtype, [&](auto v) { where<decltype(v)>(t, l); });
    const int32_t dtype = t.in[0].dtype;
    if (t.op >= PX_OP_NEG && t.op <= PX_OP_TANH)
        return with_any_dtype(dtype, [&](auto v) { unary<decltype(v)>(t, l); });
    with_any_dtype(dtype, [&](auto v) { arithmetic<decltype(v)>(t, l); });
}

Kernels elementwise_kernels() {
    Kernels k;
    for (int32_t op : {PX_OP_ADD, PX_OP_SUB, PX_OP_MUL, PX_OP_DIV, PX_OP_POW, PX_OP_EQ, PX_OP_NE, PX_OP_LT, PX_OP_LE,
                       PX_OP_GT, PX_OP_GE, PX_OP_NEG, PX_OP_EXP, PX_OP_LOG, PX_OP_SQRT, PX_OP_ABS, PX_OP_RELU,
                       PX_OP_SIGMOID, PX_OP_TANH, PX_OP_WHERE})
        k.push_back({op, run_elementwise, kAllDtypes});
    return k;
}

}  // namespace pxcuda
