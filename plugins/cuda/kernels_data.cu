// Data movement and creation: strided copy (transpose, slice, concat), cast,
// fill, arange, and random numbers from the reference Philox generator, so a
// seed gives the same tensor here as on the CPU plugin.
#include <algorithm>
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

// A transpose-like copy: the output runs along the walk's last axis L, the
// input along axis k. One element per thread in output order would read the
// input a stride apart per lane (a 32-byte sector per 4-byte element), and
// pay two 64-bit divisions per element. Instead each block moves 32x32
// tiles: its lanes read 32 input elements in a row along k, the tile is
// turned over in shared memory (33 columns, so neither phase meets a bank
// conflict), and they write 32 output elements in a row along L. The index
// arithmetic is per tile. Blocks of 32x8 threads loop over the tiles.
constexpr int kTile = 32, kTileRows = 8;

struct TiledWalk {
    Strided<2> w;   // the walk; axes other than k and L are the "outer" ones
    int k = 0;      // the input's contiguous axis
    int64_t rows = 0, cols = 0, tile_rows = 0, tile_cols = 0, tasks = 0;
};

template <class T>
__global__ void copy_transposed(TiledWalk tw, const T* __restrict__ src, T* __restrict__ dst) {
    __shared__ T tile[kTile][kTile + 1];
    const Strided<2>& w = tw.w;
    const int L = w.nd - 1;
    const int64_t tiles = tw.tile_rows * tw.tile_cols;
    const int64_t out_k = w.st[0][tw.k], in_l = w.st[1][L];
    const int tx = int(threadIdx.x), ty = int(threadIdx.y);
    for (int64_t task = blockIdx.x; task < tw.tasks; task += gridDim.x) {
        int64_t rem = task / tiles, o = 0, in = 0;
        for (int i = L - 1; i >= 0; --i) {
            if (i == tw.k) continue;
            const int64_t idx = rem % w.shape[i];
            rem /= w.shape[i];
            o += idx * w.st[0][i];
            in += idx * w.st[1][i];
        }
        const int64_t r0 = (task % tiles) / tw.tile_cols * kTile, c0 = (task % tiles) % tw.tile_cols * kTile;
        // Read: lane tx walks k (contiguous in the input), rows walk L.
        for (int j = ty; j < kTile; j += kTileRows) {
            const int64_t r = r0 + tx, c = c0 + j;
            if (r < tw.rows && c < tw.cols) tile[j][tx] = src[in + r + c * in_l];
        }
        __syncthreads();
        // Write: lane tx walks L (contiguous in the output), rows walk k.
        for (int j = ty; j < kTile; j += kTileRows) {
            const int64_t r = r0 + j, c = c0 + tx;
            if (r < tw.rows && c < tw.cols) dst[o + r * out_k + c] = tile[tx][j];
        }
        __syncthreads();  // the tile is filled again for the next task
    }
}

// The axis before the last along which the input is contiguous, when the
// output is contiguous along the last and the input is not; else -1.
int transposed_axis(const Strided<2>& w) {
    const int L = w.nd - 1;
    if (w.st[0][L] != 1 || w.st[1][L] == 1) return -1;
    for (int i = 0; i < L; ++i)
        if (w.st[1][i] == 1) return i;
    return -1;
}

template <class T>
void copy_sized(const Strided<2>& w, int64_t n, const void* src, void* dst, const Launch& l) {
    const T* in = static_cast<const T*>(src);
    T* out = static_cast<T*>(dst);
    // Tiles whose rows or columns would be mostly empty leave most lanes idle;
    // the strided walk reads such narrow inputs in few sectors anyway.
    const int k = transposed_axis(w);
    if (k >= 0 && w.shape[k] >= kTile / 2 && w.shape[w.nd - 1] >= kTile / 2) {
        TiledWalk tw;
        tw.w = w, tw.k = k, tw.rows = w.shape[k], tw.cols = w.shape[w.nd - 1];
        tw.tile_rows = (tw.rows + kTile - 1) / kTile, tw.tile_cols = (tw.cols + kTile - 1) / kTile;
        tw.tasks = n / (tw.rows * tw.cols) * tw.tile_rows * tw.tile_cols;
        const auto blocks = unsigned(std::min<int64_t>(tw.tasks, int64_t(l.sm_count) * 16));
        copy_transposed<T><<<blocks, dim3(kTile, kTileRows), 0, l.stream>>>(tw, in, out);
        return check_launch("copy_transposed");
    }
    copy_strided<T><<<grid_for(n, l), kThreads, 0, l.stream>>>(w, n, in, out);
    check_launch("copy_strided");
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
    case 1: return copy_sized<uint8_t>(w, n, t.in[0].data, t.out.data, l);
    case 2: return copy_sized<uint16_t>(w, n, t.in[0].data, t.out.data, l);
    case 4: return copy_sized<uint32_t>(w, n, t.in[0].data, t.out.data, l);
    case 8: return copy_sized<uint64_t>(w, n, t.in[0].data, t.out.data, l);
    default: throw Unsupported("copy: unknown element size");
    }
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
        with_any_dtype(t.in[0].dtype, [&](auto from) {
            with_any_dtype(t.out.dtype, [&](auto to) {
                using F = decltype(from);
                using T = decltype(to);
                cast_flat<T, F><<<grid_for(n, l), kThreads, 0, l.stream>>>(reinterpret_cast<const F*>(t.in[0].data),
                                                                          reinterpret_cast<T*>(t.out.data), n);
            });
        });
        return check_launch("cast_flat");
    case PX_OP_FILL:
        if (n == 0) return;
        with_any_dtype(t.out.dtype, [&](auto v) {
            using T = decltype(v);
            T value = is_float_v<T> ? convert<T>(t.attrs.fill.value) : convert<T>(t.attrs.fill.int_value);
            fill_flat<T><<<grid_for(n, l), kThreads, 0, l.stream>>>(reinterpret_cast<T*>(t.out.data), n, value);
        });
        return check_launch("fill_flat");
    case PX_OP_ARANGE:
        if (n == 0) return;
        with_any_dtype(t.out.dtype, [&](auto v) {
            using T = decltype(v);
            arange_flat<T><<<grid_for(n, l), kThreads, 0, l.stream>>>(reinterpret_cast<T*>(t.out.data), n,
                                                                      t.attrs.arange.start, t.attrs.arange.step);
        });
        return check_launch("arange_flat");
    case PX_OP_RANDOM_UNIFORM:
    case PX_OP_RANDOM_NORMAL:
        if (n == 0) return;
        // float16 and bfloat16 take float32's stream, each draw rounded once, as on the CPU plugin.
        with_any_dtype(t.out.dtype, [&](auto v) {
            using T = decltype(v);
            if constexpr (is_float_v<T>)
                random_flat<T><<<grid_for(n, l), kThreads, 0, l.stream>>>(reinterpret_cast<T*>(t.out.data), n,
                                                                          t.attrs.random, t.op == PX_OP_RANDOM_NORMAL);
            else
                throw Unsupported("random numbers need a floating dtype");
        });
        return check_launch("random_flat");
    default: throw Unsupported("not a data op");
    }
}

Kernels data_kernels() {
    return {{PX_OP_COPY, run_data, kAllDtypes},  {PX_OP_CAST, run_data, kAllDtypes},
            {PX_OP_FILL, run_data, kAllDtypes},  {PX_OP_ARANGE, run_data, kAllDtypes},
            {PX_OP_RANDOM_UNIFORM, run_data, kFloatDtypes}, {PX_OP_RANDOM_NORMAL, run_data, kFloatDtypes}};
}

}  // namespace pxcuda
