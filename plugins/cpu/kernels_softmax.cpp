// Row-wise log-softmax and the fused softmax cross-entropy, with gradients.
// Every row subtracts its maximum first, so large logits do not overflow;
// sums accumulate in float64.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <string>

#include "kernel_util.hpp"
#include "kernels.hpp"
#include "vector_math.hpp"

namespace pxcpu {
namespace {

template <class Body>
void for_each_row(int64_t rows, int64_t cols, Body&& body) {
    if (rows > 1 && rows * cols >= parallel_grain) {
#pragma omp parallel for schedule(static)
        for (int64_t r = 0; r < rows; ++r) body(r);
    } else {
        for (int64_t r = 0; r < rows; ++r) body(r);
    }
}

// use(j0, e, len) for the blocks of a row of c, e[i] = exp(arg(j0 + i)):
// the exps in float64 through SLEEF's vector functions (vector_math.hpp),
// not glibc's scalar exp.
template <class Arg, class Use>
void exp_blocks(int64_t c, Arg arg, Use use) {
    constexpr int64_t kBlock = 512;
    double e[kBlock];
    for (int64_t j0 = 0; j0 < c; j0 += kBlock) {
        const int64_t len = std::min(kBlock, c - j0);
        for (int64_t i = 0; i < len; ++i) e[i] = arg(j0 + i);
        vector_math(MathFn::exp, e, e, len);
        use(j0, e, len);
    }
}

// max and log(sum(exp(x - max))) of one row. Both loops vectorize: the
// maximum passes over NaNs (a NaN still makes the sum, so the whole row,
// NaN), and the sum goes into eight partial sums (element j into j % 8)
// added up in a fixed order, so its bits depend on neither the instruction
// set nor the thread count.
template <class T>
void row_stats(const T* x, int64_t c, double& max, double& log_sum) {
    T m = -std::numeric_limits<T>::infinity();
#pragma omp simd reduction(max : m)
    for (int64_t j = 0; j < c; ++j) m = x[j] > m ? x[j] : m;
    const double mx = double(m);
    double part[8] = {};
    exp_blocks(
        c, [&](int64_t j) { return double(x[j]) - mx; },
        [&](int64_t /*j0, a multiple of 8*/, const double* e, int64_t len) {
            int64_t i = 0;
            for (; i + 8 <= len; i += 8)
                for (int l = 0; l < 8; ++l) part[l] += e[i + l];
            for (; i < len; ++i) part[i % 8] += e[i];
        });
    max = mx;
    log_sum = std::log(((part[0] + part[1]) + (part[2] + part[3])) + ((part[4] + part[5]) + (part[6] + part[7])));
}

// Reads label r, recording the first row whose label is outside [0, c).
int64_t label_at(const Operand& labels, int64_t r, int64_t c, std::atomic<int64_t>& bad_row) {
    int64_t v = labels.dtype == PX_INT32 ? reinterpret_cast<const int32_t*>(labels.data)[r]
                                         : reinterpret_cast<const int64_t*>(labels.data)[r];
    if (v < 0 || v >= c) {
        int64_t none = -1;
        bad_row.compare_exchange_strong(none, r);
        return -1;
    }
    return v;
}

template <class T>
void softmax_typed(const OpTask& t) {
    const int64_t n = t.in[0].shape[0], c = t.in[0].shape[1];
    const T* x = reinterpret_cast<const T*>(t.in[0].data);
    T* out = reinterpret_cast<T*>(t.out.data);
    std::atomic<int64_t> bad_row{-1};
    switch (t.op) {
    case PX_OP_LOG_SOFTMAX:
        for_each_row(n, c, [&](int64_t r) {
            double m, ls;
            row_stats(x + r * c, c, m, ls);
            for (int64_t j = 0; j < c; ++j) out[r * c + j] = T(double(x[r * c + j]) - m - ls);
        });
        return;
    case PX_OP_LOG_SOFTMAX_BACKWARD: {  // in: y, dy; dx = dy - exp(y) * sum(dy)
        const T* dy = reinterpret_cast<const T*>(t.in[1].data);
        for_each_row(n, c, [&](int64_t r) {
            double s = 0;
            for (int64_t j = 0; j < c; ++j) s += dy[r * c + j];
            exp_blocks(
                c, [&](int64_t j) { return double(x[r * c + j]); },
                [&](int64_t j0, const double* e, int64_t len) {
                    for (int64_t i = 0; i < len; ++i) out[r * c + j0 + i] = T(double(dy[r * c + j0 + i]) - e[i] * s);
                });
        });
        return;
    }
    case PX_OP_SOFTMAX_CROSS_ENTROPY:  // loss = logsumexp(x) - x[label]
        for_each_row(n, c, [&](int64_t r) {
            int64_t k = label_at(t.in[1], r, c, bad_row);
            double m, ls;
            row_stats(x + r * c, c, m, ls);
            out[r] = k < 0 ? T(NAN) : T(m + ls - double(x[r * c + k]));
        });
        break;
    case PX_OP_SOFTMAX_CROSS_ENTROPY_BACKWARD: {  // dx = (softmax(x) - onehot(label)) * dloss
        const T* dloss = reinterpret_cast<const T*>(t.in[2].data);
        for_each_row(n, c, [&](int64_t r) {
            int64_t k = label_at(t.in[1], r, c, bad_row);
            double m, ls;
            row_stats(x + r * c, c, m, ls);
            double d = dloss[r];
            exp_blocks(
                c, [&](int64_t j) { return double(x[r * c + j]) - m - ls; },
                [&](int64_t j0, const double* e, int64_t len) {
                    for (int64_t i = 0; i < len; ++i)
                        out[r * c + j0 + i] = T((e[i] - (j0 + i == k ? 1.0 : 0.0)) * d);
                });
        });
        break;
    }
    default: throw KernelError("not a softmax op");
    }
    int64_t r = bad_row.load();
    if (r >= 0) {
        int64_t v = t.in[1].dtype == PX_INT32 ? reinterpret_cast<const int32_t*>(t.in[1].data)[r]
                                              : reinterpret_cast<const int64_t*>(t.in[1].data)[r];
        throw KernelError("label " + std::to_string(v) + " in row " + std::to_string(r) + " is outside [0, " +
                          std::to_string(c) + ") (the number of classes)");
    }
}

}  // namespace

void run_softmax(const OpTask& t) {
    if (t.in[0].dtype == PX_FLOAT32) return softmax_typed<float>(t);
    if (t.in[0].dtype == PX_FLOAT64) return softmax_typed<double>(t);
    throw KernelError("softmax needs float32 or float64");
}

Kernels softmax_kernels() {
    return {{PX_OP_LOG_SOFTMAX, through_float32<run_softmax>, kFloatDtypes},
            {PX_OP_LOG_SOFTMAX_BACKWARD, through_float32<run_softmax>, kFloatDtypes},
            {PX_OP_SOFTMAX_CROSS_ENTROPY, through_float32<run_softmax>, kFloatDtypes},
            {PX_OP_SOFTMAX_CROSS_ENTROPY_BACKWARD, through_float32<run_softmax>, kFloatDtypes}};
}

}  // namespace pxcpu
