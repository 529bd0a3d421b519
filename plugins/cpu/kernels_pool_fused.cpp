// bias_relu_max_pool2d and its gradient (ABI 1.4): a convolution's bias, relu
// and max pooling in one pass over the convolution's output, the values of
//   max_pool2d(relu(bias_add(x, b)))
// bit for bit. Unfused, a training step makes three passes over that output
// forward (bias, relu, pool) and three backward (pool, relu, bias); in LeNet
// they took as long as the first convolution itself.
//
// Each cell's value r = relu(x + b) is formed as the unfused ops form it (one
// rounding for the add, relu sends NaN to 0), so the maximum and the cell
// that wins it are the unfused ones. The gradient goes to the first cell
// holding the maximum when that maximum is > 0 (relu passed it), and db sums
// the dy that passed.
#include <algorithm>
#include <vector>

#include "kernels.hpp"
#include "pool_common.hpp"

namespace pxcpu {
namespace {

template <class T>
inline T relu_of(T v, T b) {
    const T s = v + b;
    return pick(s > T(0), s, T(0));
}

// One output row of 2x2 windows (stride 2, no padding) from input rows r0
// and r1. The pointers do not alias and the count is a local, so the loops
// vectorize: selects, no branches (which cell wins is random, and a
// mispredicted branch per window cost more than the memory traffic).
template <class T>
void forward_row_2x2(const T* __restrict r0, const T* __restrict r1, T b, T* __restrict y, int64_t ow) {
    for (int64_t ox = 0; ox < ow; ++ox) {
        const T a = relu_of(r0[2 * ox], b), c = relu_of(r0[2 * ox + 1], b);
        const T d = relu_of(r1[2 * ox], b), e = relu_of(r1[2 * ox + 1], b);
        const T m01 = c > a ? c : a, m23 = e > d ? e : d;
        y[ox] = m23 > m01 ? m23 : m01;
    }
}

// The gradient of one such row: dx rows d0 and d1, and gate[ox], the dy that
// relu passed (0 where the window's maximum is 0).
template <class T>
void backward_row_2x2(const T* __restrict r0, const T* __restrict r1, T b, const T* __restrict dy, T* __restrict d0,
                      T* __restrict d1, T* __restrict gate, int64_t ow) {
    for (int64_t ox = 0; ox < ow; ++ox) {
        const T a = relu_of(r0[2 * ox], b), c = relu_of(r0[2 * ox + 1], b);
        const T d = relu_of(r1[2 * ox], b), e = relu_of(r1[2 * ox + 1], b);
        const T m01 = c > a ? c : a, m23 = e > d ? e : d, m = m23 > m01 ? m23 : m01;
        const T grad = pick(m > T(0), dy[ox], T(0));
        // No NaN is left after relu, so == finds the maximum exactly.
        const FirstOfFour<T> to(a == m, c == m, d == m, grad);
        gate[ox] = grad;
        d0[2 * ox] = to.g0;
        d0[2 * ox + 1] = to.g1;
        d1[2 * ox] = to.g2;
        d1[2 * ox + 1] = to.g3;
    }
}

// One plane of the forward pass: y = the window maximum of relu(x + b).
template <class T>
void forward_plane(const T* x, T b, T* y, const PoolGeometry& g) {
    if (g.two_by_two()) {
        for (int64_t oy = 0; oy < g.oh; ++oy) forward_row_2x2(x + 2 * oy * g.w, x + (2 * oy + 1) * g.w, b, y + oy * g.ow, g.ow);
        return;
    }
    for (int64_t oy = 0; oy < g.oh; ++oy)
        for (int64_t ox = 0; ox < g.ow; ++ox) {
            int64_t y0, y1, x0, x1;
            g.window(oy, ox, y0, y1, x0, x1);
            T m = T(0);  // every r is >= 0, and a window holds at least one cell
            for (int64_t i = y0; i < y1; ++i)
                for (int64_t j = x0; j < x1; ++j) {
                    const T r = relu_of(x[i * g.w + j], b);
                    m = r > m ? r : m;
                }
            y[oy * g.ow + ox] = m;
        }
}

// One plane of the gradient; returns the sum of the dy that passed relu
// (the plane's share of db), in float64.
template <class T>
double backward_plane(const T* x, T b, const T* dy, T* dx, const PoolGeometry& g) {
    double passed = 0;
    if (g.two_by_two()) {
        // A row goes by pieces of at most 64 windows (LeNet's rows are 12 and
        // 5: one piece), their gates on the stack: this runs inside an OpenMP
        // loop, where memory running out would end the process.
        constexpr int64_t kPiece = 64;
        T gate[kPiece];
        for (int64_t oy = 0; oy < g.oh; ++oy) {
            T* d0 = dx + 2 * oy * g.w;
            T* d1 = d0 + g.w;
            const T* r0 = x + 2 * oy * g.w;
            const T* r1 = r0 + g.w;
            double row = 0;
            for (int64_t o0 = 0; o0 < g.ow; o0 += kPiece) {
                const int64_t n = std::min(kPiece, g.ow - o0);
                backward_row_2x2(r0 + 2 * o0, r1 + 2 * o0, b, dy + oy * g.ow + o0, d0 + 2 * o0, d1 + 2 * o0, gate, n);
                double piece = 0;
#pragma omp simd reduction(+ : piece)
                for (int64_t i = 0; i < n; ++i) piece += double(gate[i]);
                row += piece;
            }
            passed += row;
            if (g.w & 1) d0[g.w - 1] = d1[g.w - 1] = T(0);
        }
        if (g.h & 1) std::fill(dx + (g.h - 1) * g.w, dx + g.h * g.w, T(0));
        return passed;
    }
    std::fill(dx, dx + g.h * g.w, T(0));  // windows may overlap or leave cells out
    for (int64_t oy = 0; oy < g.oh; ++oy)
        for (int64_t ox = 0; ox < g.ow; ++ox) {
            int64_t y0, y1, x0, x1;
            g.window(oy, ox, y0, y1, x0, x1);
            T m = T(0);
            int64_t best = -1;
            for (int64_t i = y0; i < y1; ++i)
                for (int64_t j = x0; j < x1; ++j) {
                    const T r = relu_of(x[i * g.w + j], b);
                    if (r > m) m = r, best = i * g.w + j;  // strictly greater: the first maximum wins
                }
            if (best < 0) continue;  // the maximum is 0: relu stopped the gradient
            const T grad = dy[oy * g.ow + ox];
            dx[best] += grad;
            passed += double(grad);
        }
    return passed;
}

template <class T>
void fused_typed(const OpTask& t) {
    const bool backward = t.op == PX_OP_BIAS_RELU_MAX_POOL2D_BACKWARD;
    // Forward: (x, b) -> y. Backward: (x, b, dy) -> (dx, db).
    const Operand& xo = t.in[0];
    const Operand& yside = backward ? t.in[2] : t.out;
    const PoolGeometry g = pool_geometry(xo, yside, t.attrs.pool);
    const int64_t channels = xo.shape[1], in_plane = g.h * g.w, out_plane = g.oh * g.ow;
    const T* x = reinterpret_cast<const T*>(xo.data);
    const T* b = reinterpret_cast<const T*>(t.in[1].data);
    if (!backward) {
        T* y = reinterpret_cast<T*>(t.out.data);
        for_each_plane(g, [&](int64_t p) { forward_plane(x + p * in_plane, b[p % channels], y + p * out_plane, g); });
        return;
    }
    const T* dy = reinterpret_cast<const T*>(t.in[2].data);
    T* dx = reinterpret_cast<T*>(t.out.data);
    T* db = reinterpret_cast<T*>(t.out2.data);
    std::vector<double> passed(size_t(g.planes));
    for_each_plane(g, [&](int64_t p) {
        passed[size_t(p)] = backward_plane(x + p * in_plane, b[p % channels], dy + p * out_plane, dx + p * in_plane, g);
    });
    // Planes added in batch order: the same db for any thread count.
    for (int64_t c = 0; c < channels; ++c) {
        double s = 0;
        for (int64_t p = c; p < g.planes; p += channels) s += passed[size_t(p)];
        db[c] = T(s);
    }
}

}  // namespace

void run_pool_fused(const OpTask& t) {
    if (t.in[0].dtype == PX_FLOAT32) return fused_typed<float>(t);
    if (t.in[0].dtype == PX_FLOAT64) return fused_typed<double>(t);
    throw KernelError("bias_relu_max_pool2d needs float32 or float64");
}

Kernels pool_fused_kernels() {
    return {{PX_OP_BIAS_RELU_MAX_POOL2D, through_float32<run_pool_fused>, kFloatDtypes},
            {PX_OP_BIAS_RELU_MAX_POOL2D_BACKWARD, through_float32<run_pool_fused>, kFloatDtypes}};
}

}  // namespace pxcpu
