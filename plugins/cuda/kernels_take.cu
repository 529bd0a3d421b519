// take (rows of a table picked by integer indices) and its gradient. The
// gradient must add the rows of dy in the indices' order (the CPU plugin's
// order, so the same bits) without atomics: it sorts the positions by the
// row they pick with a stable merge sort (one pass per doubling of the
// sorted runs, each element placed by a binary search in the other run),
// then one thread per (row, column) adds its run of positions in order.
// An index outside the table is reported at the next wait, and its row of
// the output holds NaN (a float table) or 0 (plugin.h, R9: never stale bytes).
#include "kernel_util.cuh"
#include "plexus/op_rows.h"

namespace pxcuda {
namespace {

__device__ int64_t index_at(const void* indices, bool is32, int64_t i) {
    return is32 ? int64_t(static_cast<const int32_t*>(indices)[i]) : static_cast<const int64_t*>(indices)[i];
}

// E: an unsigned integer of the element's size; values are moved, not read.
template <class E>
__global__ void take_rows(const E* __restrict__ table, int64_t rows, const void* indices, bool is32, int64_t n,
                          int64_t len, E* __restrict__ out, E missing, DeviceStatus* status) {
    PX_GRID_STRIDE(e, n * len) {
        const int64_t i = e / len, k = e % len, v = index_at(indices, is32, i);
        if (v < 0 || v >= rows) {
            if (k == 0) report_failure(status, status_index_out_of_range, PX_OP_TAKE, i, v, rows);
            out[e] = missing;
            continue;
        }
        out[e] = table[v * len + k];
    }
}

// keys[i]: the row position i adds to (rows for an index outside the table,
// which sorts last and adds nowhere); positions[i] = i.
__global__ void take_backward_keys(const void* indices, bool is32, int64_t n, int64_t rows, int64_t* keys,
                                   int64_t* positions, DeviceStatus* status) {
    PX_GRID_STRIDE(i, n) {
        const int64_t v = index_at(indices, is32, i);
        if (v < 0 || v >= rows) report_failure(status, status_index_out_of_range, PX_OP_TAKE_BACKWARD, i, v, rows);
        keys[i] = v < 0 || v >= rows ? rows : v;
        positions[i] = i;
    }
}

// std::lower_bound (with `upper`, std::upper_bound) of `key` in sorted keys[lo, hi).
__device__ int64_t bound(const int64_t* keys, int64_t lo, int64_t hi, int64_t key, bool upper) {
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        if (keys[mid] < key || (upper && keys[mid] == key)) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

// Merges each pair of sorted runs of `width`: an element of the left run goes
// before the right run's equal keys, so the sort keeps the positions' order.
__global__ void merge_runs(int64_t n, int64_t width, const int64_t* keys, const int64_t* positions, int64_t* keys_out,
                           int64_t* positions_out) {
    PX_GRID_STRIDE(e, n) {
        const int64_t lo = e / (2 * width) * (2 * width);
        const int64_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
        const int64_t key = keys[e];
        const int64_t to = e < mid ? e + bound(keys, mid, hi, key, false) - mid  // after the right run's smaller keys
                                   : e - mid + bound(keys, lo, mid, key, true);  // after the left run's keys up to key
        keys_out[to] = key;
        positions_out[to] = positions[e];
    }
}

// Thread (p, k) where p starts a run of equal keys: row keys[p]'s column k,
// the sum of dy's rows at the run's positions, in order (the output is zero
// elsewhere).
template <class T>
__global__ void add_runs(const T* __restrict__ dy, const int64_t* keys, const int64_t* positions, int64_t n,
                         int64_t rows, int64_t len, T* __restrict__ out) {
    PX_GRID_STRIDE(e, n * len) {
        const int64_t p = e / len, k = e % len, row = keys[p];
        if (row >= rows || (p > 0 && keys[p - 1] == row)) continue;
        T sum = T(0);
        for (int64_t q = p; q < n && keys[q] == row; ++q) sum += dy[positions[q] * len + k];
        out[row * len + k] = sum;
    }
}

int64_t row_length(const Operand& table) {
    int64_t n = 1;
    for (int k = 1; k < table.ndim; ++k) n *= table.shape[k];
    return n;
}

template <class E>
void take_as(const OpArgs& t, const Launch& l, int64_t n, int64_t len) {
    const E missing = E(px_failed_element_bits(t.in[0].dtype));  // a row of an index outside the table
    take_rows<E><<<grid_for(n * len, l), kThreads, 0, l.stream>>>(
        reinterpret_cast<const E*>(t.in[0].data), t.in[0].shape[0], t.in[1].data, t.in[1].dtype == PX_INT32, n, len,
        reinterpret_cast<E*>(t.out.data), missing, l.status);
}

void run_take(const OpArgs& t, const Launch& l) {
    const int64_t n = t.in[1].numel(), len = row_length(t.in[0]);
    if (n * len == 0) return;
    switch (px_dtype_size(t.in[0].dtype)) {
    case 1: take_as<uint8_t>(t, l, n, len); break;
    case 2: take_as<uint16_t>(t, l, n, len); break;
    case 4: take_as<uint32_t>(t, l, n, len); break;
    default: take_as<uint64_t>(t, l, n, len); break;
    }
    check_launch("take_rows");
}

void run_take_backward(const OpArgs& t, const Launch& l) {
    const int64_t n = t.in[1].numel(), rows = t.out.shape[0], len = row_length(t.out);
    if (len * rows == 0) return;
    PX_CUDA(cudaMemsetAsync(t.out.data, 0, size_t(rows * len) * px_dtype_size(t.out.dtype), l.stream));
    if (n == 0) return;
    // Keys and positions, twice: each merge pass reads one pair and writes the other.
    Scratch sorting(l, uint64_t(n) * 4 * sizeof(int64_t));
    int64_t* keys = sorting.as<int64_t>();
    int64_t *positions = keys + n, *keys_out = keys + 2 * n, *positions_out = keys + 3 * n;
    take_backward_keys<<<grid_for(n, l), kThreads, 0, l.stream>>>(t.in[1].data, t.in[1].dtype == PX_INT32, n, rows,
                                                                  keys, positions, l.status);
    check_launch("take_backward_keys");
    for (int64_t width = 1; width < n; width *= 2) {
        merge_runs<<<grid_for(n, l), kThreads, 0, l.stream>>>(n, width, keys, positions, keys_out, positions_out);
        check_launch("merge_runs");
        std::swap(keys, keys_out);
        std::swap(positions, positions_out);
    }
    with_float(t.out.dtype, "take_backward", [&](auto v) {
        using T = decltype(v);
        add_runs<T><<<grid_for(n * len, l), kThreads, 0, l.stream>>>(reinterpret_cast<const T*>(t.in[0].data), keys,
                                                                     positions, n, rows, len,
                                                                     reinterpret_cast<T*>(t.out.data));
    });
    check_launch("add_runs");
}

}  // namespace

Kernels take_kernels() {
    return {{PX_OP_TAKE, run_take, kAllDtypes}, {PX_OP_TAKE_BACKWARD, through_float32<run_take_backward>, kFloatDtypes}};
}

}  // namespace pxcuda
