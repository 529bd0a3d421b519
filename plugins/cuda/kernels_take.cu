// take (rows of a table picked by integer indices) and its gradient. The
// gradient gives each column of the table one thread, which adds the rows
// of dy in the indices' order: the CPU plugin's order, so the same bits,
// and no atomics. An index outside the table is reported at the next wait.
#include "kernel_util.cuh"

namespace pxcuda {
namespace {

__device__ int64_t index_at(const void* indices, bool is32, int64_t i) {
    return is32 ? int64_t(static_cast<const int32_t*>(indices)[i]) : static_cast<const int64_t*>(indices)[i];
}

// E: an unsigned integer of the element's size; values are moved, not read.
template <class E>
__global__ void take_rows(const E* __restrict__ table, int64_t rows, const void* indices, bool is32, int64_t n,
                          int64_t len, E* __restrict__ out, DeviceStatus* status) {
    PX_GRID_STRIDE(e, n * len) {
        const int64_t i = e / len, k = e % len, v = index_at(indices, is32, i);
        if (v < 0 || v >= rows) {
            if (k == 0) report_failure(status, status_index_out_of_range, PX_OP_TAKE, i, v, rows);
            continue;
        }
        out[e] = table[v * len + k];
    }
}

template <class T>
__global__ void take_backward_columns(const T* __restrict__ dy, const void* indices, bool is32, int64_t n,
                                      int64_t rows, int64_t len, T* __restrict__ out, DeviceStatus* status) {
    PX_GRID_STRIDE(k, len) {
        for (int64_t r = 0; r < rows; ++r) out[r * len + k] = T(0);
        for (int64_t i = 0; i < n; ++i) {
            const int64_t v = index_at(indices, is32, i);
            if (v < 0 || v >= rows) {
                if (k == 0) report_failure(status, status_index_out_of_range, PX_OP_TAKE_BACKWARD, i, v, rows);
                continue;
            }
            out[v * len + k] += dy[i * len + k];
        }
    }
}

int64_t row_length(const Operand& table) {
    int64_t n = 1;
    for (int k = 1; k < table.ndim; ++k) n *= table.shape[k];
    return n;
}

template <class E>
void take_as(const OpArgs& t, const Launch& l, int64_t n, int64_t len) {
    take_rows<E><<<grid_for(n * len, l), kThreads, 0, l.stream>>>(
        reinterpret_cast<const E*>(t.in[0].data), t.in[0].shape[0], t.in[1].data, t.in[1].dtype == PX_INT32, n, len,
        reinterpret_cast<E*>(t.out.data), l.status);
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
    with_float(t.out.dtype, "take_backward", [&](auto v) {
        using T = decltype(v);
        take_backward_columns<T><<<grid_for(len, l), kThreads, 0, l.stream>>>(
            reinterpret_cast<const T*>(t.in[0].data), t.in[1].data, t.in[1].dtype == PX_INT32, n, rows, len,
            reinterpret_cast<T*>(t.out.data), l.status);
    });
    check_launch("take_backward_columns");
}

}  // namespace

Kernels take_kernels() {
    return {{PX_OP_TAKE, run_take, kAllDtypes}, {PX_OP_TAKE_BACKWARD, through_float32<run_take_backward>, kFloatDtypes}};
}

}  // namespace pxcuda
