#include "bench_tensor_ops.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "bench_util.hpp"
#include "plexus/philox.h"

using namespace plexus;

namespace pxbench {

namespace {

// The raw baselines: what a careful hand-written loop does for each op.

// Each thread's share of the columns, up to 4096 at a time (longer rows
// stream faster; 256-column blocks ran at about half the speed), the rows
// read in order: body(first column, columns).
template <class Body>
void column_shares(int64_t n, Body body) {
#pragma omp parallel
    {
        const int64_t t = omp_get_thread_num(), threads = omp_get_num_threads();
        const int64_t lo = n * t / threads, hi = n * (t + 1) / threads;
        for (int64_t j0 = lo; j0 < hi; j0 += 4096) body(j0, std::min<int64_t>(4096, hi - j0));
    }
}

// Column sums in float64 of a rows x cols matrix.
void raw_sum_columns(const float* x, float* out, int64_t rows, int64_t cols) {
    column_shares(cols, [&](int64_t j0, int64_t m) {
        std::vector<double> acc(static_cast<size_t>(m), 0.0);
        double* a = acc.data();
        for (int64_t i = 0; i < rows; ++i) {
            const float* row = x + i * cols + j0;
#pragma omp simd
            for (int64_t j = 0; j < m; ++j) a[j] += double(row[j]);
        }
        for (int64_t j = 0; j < m; ++j) out[j0 + j] = float(a[j]);
    });
}

void raw_sum_rows(const float* x, float* out, int64_t n) {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) {
        double s = 0;
#pragma omp simd reduction(+ : s)
        for (int64_t j = 0; j < n; ++j) s += double(x[i * n + j]);
        out[i] = float(s);
    }
}

// Column maxima (no NaN test).
void raw_max_columns(const float* x, float* out, int64_t n) {
    column_shares(n, [&](int64_t j0, int64_t m) {
        std::vector<float> acc(x + j0, x + j0 + m);
        float* a = acc.data();
        for (int64_t i = 1; i < n; ++i) {
            const float* row = x + i * n + j0;
#pragma omp simd
            for (int64_t j = 0; j < m; ++j) a[j] = row[j] > a[j] ? row[j] : a[j];
        }
        std::copy(a, a + m, out + j0);
    });
}

// The first index of each row's maximum: the maximum, then a search for it
// (no NaN test).
void raw_argmax_rows(const float* x, int64_t* out, int64_t n) {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) {
        const float* row = x + i * n;
        float m = row[0];
#pragma omp simd reduction(max : m)
        for (int64_t j = 0; j < n; ++j) m = row[j] > m ? row[j] : m;
        int64_t j = 0;
        while (row[j] != m) ++j;
        out[i] = j;
    }
}

// The math library's function on each element, over the threads: what a
// plain loop gets without vectorized math.
template <class F>
void raw_map(const float* x, float* out, int64_t count, F f) {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < count; ++i) out[i] = f(x[i]);
}

// Softmax of each row: its maximum, then exp(x - max) summed in float64,
// then each divided by the sum (glibc's exp).
void raw_softmax_rows(const float* x, float* out, int64_t n) {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < n; ++i) {
        const float* row = x + i * n;
        float m = row[0];
        for (int64_t j = 1; j < n; ++j) m = row[j] > m ? row[j] : m;
        double s = 0;
        for (int64_t j = 0; j < n; ++j) s += out[i * n + j] = std::exp(row[j] - m);
        const float inv = float(1.0 / s);
        for (int64_t j = 0; j < n; ++j) out[i * n + j] *= inv;
    }
}

// 32x32 tiles, each read and written whole.
void raw_transpose(const float* x, float* out, int64_t n) {
    constexpr int64_t kTile = 32;
    const int64_t tiles = (n + kTile - 1) / kTile;
#pragma omp parallel for schedule(static)
    for (int64_t t = 0; t < tiles * tiles; ++t) {
        const int64_t r0 = t / tiles * kTile, c0 = t % tiles * kTile;
        for (int64_t r = r0; r < std::min(n, r0 + kTile); ++r)
            for (int64_t c = c0; c < std::min(n, c0 + kTile); ++c) out[r * n + c] = x[c * n + r];
    }
}

// c ? a : b with both loaded first, so it vectorizes as a select.
void raw_where(const uint8_t* c, const float* a, const float* b, float* out, int64_t count) {
#pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < count; ++i) {
        const float av = a[i], bv = b[i];
        out[i] = c[i] ? av : bv;
    }
}

// a > b into bytes, with restrict pointers so that it vectorizes.
void raw_greater(const float* __restrict a, const float* __restrict b, uint8_t* __restrict out, int64_t count) {
#pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < count; ++i) out[i] = uint8_t(a[i] > b[i]);
}

// One px_random_value per element: the reference generator, not vectorized.
void raw_random(float* out, int64_t count, bool normal) {
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < count; ++i) out[i] = float(px_random_value(1, 0, i, 0, normal ? 1 : 0, 0, 1));
}

struct Op {
    const char* name;
    const char* torch_key;
    std::function<void()> ours, raw;
    const char* raw_name;
};

}  // namespace

void bench_tensor_ops(Device dev, bool quick, bool json, const std::string& torch_script) {
    const int64_t n = quick ? 1024 : 4096, count = n * n;
    const std::string size = std::to_string(n) + "x" + std::to_string(n);
    Tensor x = random_uniform({n, n}, 0, 1, dev), y = random_uniform({n, n}, 0, 1, dev), r;
    Tensor mask = x > 0.5;  // random: a branch per element would mispredict half the time
    const std::vector<float> raw_x = x.to_vector<float>(), raw_y = y.to_vector<float>();
    const std::vector<uint8_t> raw_mask = mask.to_vector<uint8_t>();
    std::vector<float> raw_out(static_cast<size_t>(count));
    std::vector<uint8_t> raw_bytes(static_cast<size_t>(count));
    std::vector<int64_t> raw_index(static_cast<size_t>(n));
    const float* px = raw_x.data();
    float* po = raw_out.data();
    auto ours = [&](const std::function<Tensor()>& f) {
        return [&dev, &r, f] {
            r = f();
            synchronize(dev);
        };
    };
    const std::vector<Op> ops{
        {"sum over axis 0", "sum0_ms", ours([&] { return x.sum(0); }), [&] { raw_sum_columns(px, po, n, n); },
         "raw column-block loop"},
        // Few columns: the same bytes as count/64 rows of 64.
        {"sum over axis 0 of the same as 64 columns", "sum0_narrow_ms",
         ours([&] { return x.reshape({count / 64, 64}).sum(0); }), [&] { raw_sum_columns(px, po, count / 64, 64); },
         "raw column-share loop"},
        {"sum over axis 1", "sum1_ms", ours([&] { return x.sum(1); }), [&] { raw_sum_rows(px, po, n); }, "raw row loop"},
        {"max over axis 0", "max0_ms", ours([&] { return x.max(0); }), [&] { raw_max_columns(px, po, n); },
         "raw column-block loop"},
        {"argmax over axis 1", "argmax1_ms", ours([&] { return x.argmax(1); }),
         [&] { raw_argmax_rows(px, raw_index.data(), n); }, "raw max-then-find loop"},
        {"exp", "exp_ms", ours([&] { return x.exp(); }),
         [&] { raw_map(px, po, count, [](float v) { return std::exp(v); }); }, "raw libm loop"},
        {"log", "log_ms", ours([&] { return x.log(); }),
         [&] { raw_map(px, po, count, [](float v) { return std::log(v); }); }, "raw libm loop"},
        {"tanh", "tanh_ms", ours([&] { return x.tanh(); }),
         [&] { raw_map(px, po, count, [](float v) { return std::tanh(v); }); }, "raw libm loop"},
        {"sigmoid", "sigmoid_ms", ours([&] { return x.sigmoid(); }),
         [&] { raw_map(px, po, count, [](float v) { return 1.0f / (1.0f + std::exp(-v)); }); }, "raw libm loop"},
        {"softmax over rows", "softmax_ms", ours([&] { return softmax(x); }), [&] { raw_softmax_rows(px, po, n); },
         "raw row loop"},
        {"x ** 2", "square_ms", ours([&] { return x.pow(2.0); }),
         [&] { raw_map(px, po, count, [](float v) { return v * v; }); }, "raw multiply loop"},
        {"transpose", "transpose_ms", ours([&] { return x.transpose(); }), [&] { raw_transpose(px, po, n); },
         "raw 32x32-tile loop"},
        {"where", "where_ms", ours([&] { return where(mask, x, y); }),
         [&] { raw_where(raw_mask.data(), px, raw_y.data(), po, count); }, "raw select loop"},
        {"a > b", "greater_ms", ours([&] { return x > y; }),
         [&] { raw_greater(px, raw_y.data(), raw_bytes.data(), count); }, "raw compare loop"},
        {"random_uniform", "uniform_ms", ours([&] { return random_uniform({count}, 0, 1, dev); }),
         [&] { raw_random(po, count, false); }, "scalar px_random_value"},
        {"random_normal", "normal_ms", ours([&] { return random_normal({count}, 0, 1, dev); }),
         [&] { raw_random(po, count, true); }, "scalar px_random_value"},
    };
    // PyTorch on as many threads as the raw loops and the plugin: its default
    // can be fewer (one on this 2-core machine).
    const std::string torch = torch_baseline(
        torch_script, "--n " + std::to_string(n) + " --threads " + std::to_string(omp_get_max_threads()), "sum0_ms");
    if (torch.empty() && !json) std::printf("(PyTorch baseline unavailable: python3 with torch not found)\n");
    for (const Op& op : ops) {
        auto [mine, raw] = interleaved(quick ? 3 : 11, op.ours, op.raw);
        const std::string name = std::string(op.name) + ", " + size + " float32";
        report({name, "ms", mine * 1e3, raw * 1e3, op.raw_name, ""}, json);
        const double t = json_number(torch, op.torch_key);
        if (t > 0) report({std::string(op.name) + " (beside PyTorch)", "ms", mine * 1e3, t, "PyTorch, same run", ""}, json);
    }
}

}  // namespace pxbench
