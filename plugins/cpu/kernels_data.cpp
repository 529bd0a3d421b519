// Data movement and creation: strided copy (transpose, slice, concat), cast,
// fill, arange.
#include <cmath>
#include <limits>
#include <type_traits>

#include "kernel_util.hpp"
#include "kernels.hpp"

namespace pxcpu {
namespace {

// memmove, not memcpy: a host may copy between overlapping views of one
// buffer (which element wins is then unspecified, but nothing is undefined).
void copy(const OpTask& t) {
    const Operand* ops[2] = {&t.out, &t.in[0]};
    auto w = make_walk<2>(ops);
    const int64_t es = w.esize[0];
    w.rows([&](char* const* p, int64_t n, const int64_t* s) {
        if (s[0] == 1 && s[1] == 1) {
            std::memmove(p[0], p[1], static_cast<size_t>(n * es));
            return;
        }
        for (int64_t i = 0; i < n; ++i) std::memmove(p[0] + i * s[0] * es, p[1] + i * s[1] * es, static_cast<size_t>(es));
    });
}

void cast(const OpTask& t) {
    with_dtype(t.in[0].dtype, [&](auto from) {
        using F = decltype(from);
        with_dtype(t.out.dtype, [&](auto to) {
            using T = decltype(to);
            const F* a = reinterpret_cast<const F*>(t.in[0].data);
            T* o = reinterpret_cast<T*>(t.out.data);
            parallel_for(t.out.numel(), [&](int64_t i) { o[i] = convert<T>(a[i]); });
        });
    });
}

void fill(const OpTask& t) {
    with_dtype(t.out.dtype, [&](auto v) {
        using T = decltype(v);
        T value;
        if constexpr (std::is_floating_point_v<T>) value = static_cast<T>(t.attrs.fill.value);
        else value = static_cast<T>(t.attrs.fill.int_value);
        T* o = reinterpret_cast<T*>(t.out.data);
        parallel_for(t.out.numel(), [&](int64_t i) { o[i] = value; });
    });
}

void arange(const OpTask& t) {
    with_dtype(t.out.dtype, [&](auto v) {
        using T = decltype(v);
        const double start = t.attrs.arange.start, step = t.attrs.arange.step;
        T* o = reinterpret_cast<T*>(t.out.data);
        parallel_for(t.out.numel(), [&](int64_t i) { o[i] = convert<T>(start + static_cast<double>(i) * step); });
    });
}

}  // namespace

void run_data(const OpTask& t) {
    switch (t.op) {
    case PX_OP_COPY: return copy(t);
    case PX_OP_CAST: return cast(t);
    case PX_OP_FILL: return fill(t);
    case PX_OP_ARANGE: return arange(t);
    default: throw KernelError("not a data op");
    }
}

}  // namespace pxcpu
