// take (rows of a table picked by integer indices) and its gradient, the
// rows of dy added into the rows they came from in the indices' order, so
// the sums have the same bits on every plugin.
#include <algorithm>
#include <cstring>
#include <string>

#include "kernel_util.hpp"
#include "kernels.hpp"

namespace pxcpu {
namespace {

int64_t index_at(const Operand& indices, int64_t i) {
    return indices.dtype == PX_INT32 ? int64_t(reinterpret_cast<const int32_t*>(indices.data)[i])
                                     : reinterpret_cast<const int64_t*>(indices.data)[i];
}

// Refuses the call when an index lies outside [0, rows), naming the first.
void check_indices(const Operand& indices, int64_t rows) {
    const int64_t n = indices.numel();
    for (int64_t i = 0; i < n; ++i) {
        const int64_t v = index_at(indices, i);
        if (v < 0 || v >= rows)
            throw KernelError("index " + std::to_string(v) + " at position " + std::to_string(i) + " is outside [0, " +
                              std::to_string(rows) + ") (the table's rows)");
    }
}

// Elements per row of a table: the product of its axes after the first.
int64_t row_length(const Operand& table) {
    int64_t n = 1;
    for (int k = 1; k < table.ndim; ++k) n *= table.shape[k];
    return n;
}

void run_take(const OpTask& t) {
    const Operand& table = t.in[0];
    check_indices(t.in[1], table.shape[0]);
    const int64_t n = t.in[1].numel();
    const size_t row_bytes = size_t(row_length(table)) * size_t(px_dtype_size(px_dtype(table.dtype)));
    parallel_for(n, [&](int64_t i) {
        std::memcpy(t.out.data + size_t(i) * row_bytes, table.data + size_t(index_at(t.in[1], i)) * row_bytes, row_bytes);
    });
}

template <class T>
void take_backward_typed(const OpTask& t) {
    const T* dy = reinterpret_cast<const T*>(t.in[0].data);
    T* out = reinterpret_cast<T*>(t.out.data);
    const int64_t n = t.in[1].numel(), len = row_length(t.out);
    std::memset(out, 0, size_t(t.out.numel()) * sizeof(T));
    // Each column of the table is its own chain of additions in the
    // indices' order: columns run in parallel, an element's order never changes.
    auto columns = [&](int64_t lo, int64_t hi) {
        for (int64_t i = 0; i < n; ++i) {
            T* row = out + index_at(t.in[1], i) * len;
            const T* d = dy + i * len;
            for (int64_t k = lo; k < hi; ++k) row[k] += d[k];
        }
    };
    if (n * len >= parallel_grain && len > 1) parallel_chunks(len, std::max<int64_t>(1, len / 64), columns);
    else columns(0, len);
}

void run_take_backward(const OpTask& t) {
    check_indices(t.in[1], t.out.shape[0]);
    if (t.out.dtype == PX_FLOAT32) return take_backward_typed<float>(t);
    if (t.out.dtype == PX_FLOAT64) return take_backward_typed<double>(t);
    throw KernelError("take_backward needs float32 or float64");
}

}  // namespace

Kernels take_kernels() {
    return {{PX_OP_TAKE, run_take, kAllDtypes}, {PX_OP_TAKE_BACKWARD, through_float32<run_take_backward>, kFloatDtypes}};
}

}  // namespace pxcpu
