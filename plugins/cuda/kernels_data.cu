// Data movement and creation: strided copy (transpose, slice, concat), cast,
// fill, arange, and random numbers from the reference Philox generator, so a
// seed gives the same tensor here as on the CPU plugin.
#include <cmath>
#include <limits>

#include "kernel_util.cuh"
#include "plexus/philox.h"

namespace pxcuda {
namespace {

template <class T>
__global__ void copy_strided(Strided<2> w, int64_t n, const T* __restrict__ src, T* __restrict__ dst) {
    PX_GRID_STRIDE(i, n) {
        int64_t off[2];
        w.offsets(i, off);
        dst[off[0]] = src[off[1]];
    }
}

void copy(const OpArgs& t, const Launch& l) {
    const int64_t n = t.out.numel();
    if (n == 0) return;
    const Operand* ops[2] = {&t.out, &t.in[0]};
    Strided<2> w = make_strided<2>(ops);
    const size_t es = px_dtype_size(t.out.dtype);
    if (w.nd == 1 && w.st[0][0] == 1 && w.st[1][0] == 1) {  // one contiguous run
        PX_CUDA(cudaMemcpyAsync(t.out.data, t.in[0].data, size_t(n) * es, cudaMemcpyDeviceToDevice, l.stream));
        return;
    }
    // Elements are moved as unsigned integers of their size: a copy needs no arithmetic.
    switch (es) {
    case 1: copy_strided<uint8_t><<<grid_for(n, l), kThreads, 0, l.stream>>>(w, n, reinterpret_cast<const uint8_t*>(t.in[0].data), reinterpret_cast<uint8_t*>(t.out.data)); break;
    case 4: copy_strided<uint32_t><<<grid_for(n, l), kThreads, 0, l.stream>>>(w, n, reinterpret_cast<const uint32_t*>(t.in[0].data), reinterpret_cast<uint32_t*>(t.out.data)); break;
    case 8: copy_strided<uint64_t><<<grid_for(n, l), kThreads, 0, l.stream>>>(w, n, reinterpret_cast<const uint64_t*>(t.in[0].data), reinterpret_cast<uint64_t*>(t.out.data)); break;
    default: throw Unsupported("copy: unknown element size");
    }
    check_launch("copy_strided");
}

template <class To, class From>
__global__ void cast_flat(const From* __restrict__ a, To* __restrict__ o, int64_t n) {
    PX_GRID_STRIDE(i, n) o[i] = convert<To>(a[i]);
}

template <class T>
__global__ void fill_flat(T* o, int64_t n, T value) {
    PX_GRID_STRIDE(i, n) o[i] = value;
}

template <class T>
__global__ void arange_flat(T* o, int64_t n, double start, double step) {
    PX_GRID_STRIDE(i, n) o[i] = convert<T>(px_add_rn(start, px_mul_rn(double(i), step)));  // unfused, as the CPU's
}

template <class T>
__global__ void random_flat(T* o, int64_t n, px_random_attrs r, bool normal) {
    PX_GRID_STRIDE(i, n) {  // the CPU plugin's numbers: the same reference function
        T v = static_cast<T>(px_random_value(r.seed, r.offset, i, sizeof(T) == 8, normal, r.a, r.b));
        o[i] = normal || v < static_cast<T>(r.b) || r.a == r.b ? v : static_cast<T>(r.a);  // uniform stays in [a, b)
    }
}

}  // namespace

void run_data(const OpArgs& t, const Launch& l) {
    const int64_t n = t.out.numel();
    switch (t.op) {
    case PX_OP_COPY: return copy(t, l);
    case PX_OP_CAST:
        if (n == 0) return;
        with_dtype(t.in[0].dtype, [&](auto from) {
            with_dtype(t.out.dtype, [&](auto to) {
                using F = decltype(from);
                using T = decltype(to);
                cast_flat<T, F><<<grid_for(n, l), kThreads, 0, l.stream>>>(reinterpret_cast<const F*>(t.in[0].data),
                                                                          reinterpret_cast<T*>(t.out.data), n);
            });
        });
        return check_launch("cast_flat");
    case PX_OP_FILL:
        if (n == 0) return;
        with_dtype(t.out.dtype, [&](auto v) {
            using T = decltype(v);
            T value = std::is_floating_point<T>::value ? static_cast<T>(t.attrs.fill.value)
                                                       : static_cast<T>(t.attrs.fill.int_value);
            fill_flat<T><<<grid_for(n, l), kThreads, 0, l.stream>>>(reinterpret_cast<T*>(t.out.data), n, value);
        });
        return check_launch("fill_flat");
    case PX_OP_ARANGE:
        if (n == 0) return;
        with_dtype(t.out.dtype, [&](auto v) {
            using T = decltype(v);
            arange_flat<T><<<grid_for(n, l), kThreads, 0, l.stream>>>(reinterpret_cast<T*>(t.out.data), n,
                                                                      t.attrs.arange.start, t.attrs.arange.step);
        });
        return check_launch("arange_flat");
    case PX_OP_RANDOM_UNIFORM:
    case PX_OP_RANDOM_NORMAL:
        if (n == 0) return;
        with_float(t.out.dtype, "random numbers", [&](auto v) {
            using T = decltype(v);
            random_flat<T><<<grid_for(n, l), kThreads, 0, l.stream>>>(reinterpret_cast<T*>(t.out.data), n,
                                                                      t.attrs.random, t.op == PX_OP_RANDOM_NORMAL);
        });
        return check_launch("random_flat");
    default: throw Unsupported("not a data op");
    }
}

}  // namespace pxcuda
