#include "perf.hpp"

#include <algorithm>
#include <chrono>
#include <functional>

#include "plexus/cpp/nn_ops.hpp"

namespace pxconformance {
namespace {

using namespace plexus;

double median_microseconds(Device dev, const std::function<void()>& call) {
    for (int i = 0; i < 2; ++i) call();  // warm-up: caches, first-touch pages
    synchronize(dev);
    std::vector<double> t;
    for (int i = 0; i < 15; ++i) {
        auto t0 = std::chrono::steady_clock::now();
        call();
        synchronize(dev);
        t.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
    }
    std::nth_element(t.begin(), t.begin() + 7, t.end());
    return t[7];
}

}  // namespace

std::vector<PerfRow> measure_ops(Device dev) {
    std::vector<PerfRow> rows;
    const int64_t n = 1 << 22;
    auto add_row = [&](px_op op, DType d, const std::string& shape, double amount, const char* unit,
                       const std::function<void()>& call) {
        if (!supports(dev, op, static_cast<px_dtype>(d))) return;
        double us = median_microseconds(dev, call);
        rows.push_back({px_op_name(op), name(d), shape, us, amount / (us * 1e3), unit});
    };
    for (DType d : {DType::float32, DType::float64}) {
        if (!supports(dev, PX_OP_FILL, static_cast<px_dtype>(d))) continue;
        const double bytes = double(n) * double(px_dtype_size(int32_t(d)));
        Tensor a = full({n}, 1.5, dev, d), b = full({n}, 0.5, dev, d);
        add_row(PX_OP_FILL, d, "4M", bytes, "GB/s", [&] { full({n}, 2.0, dev, d); });
        add_row(PX_OP_ADD, d, "4M + 4M", 3 * bytes, "GB/s", [&] { a + b; });
        add_row(PX_OP_MUL, d, "4M * scalar", 2 * bytes, "GB/s", [&] { a * 3.0; });
        add_row(PX_OP_EXP, d, "4M", 2 * bytes, "GB/s", [&] { a.exp(); });
        add_row(PX_OP_RELU, d, "4M", 2 * bytes, "GB/s", [&] { a.relu(); });
        add_row(PX_OP_SUM, d, "4M -> 1", bytes, "GB/s", [&] { a.sum(); });
        DType other = d == DType::float32 ? DType::float64 : DType::float32;
        add_row(PX_OP_CAST, d, std::string("4M -> ") + name(other),
                bytes + double(n) * double(px_dtype_size(int32_t(other))), "GB/s", [&] { a.astype(other); });
        const int64_t m = 512;
        Tensor x = full({m, m}, 0.25, dev, d);
        add_row(PX_OP_MATMUL, d, "512^3", 2.0 * double(m * m * m), "GFLOP/s", [&] { matmul(x, x); });
        add_row(PX_OP_GEMM, d, "512^3", 2.0 * double(m * m * m), "GFLOP/s", [&] { gemm(x, x, false, true); });
        // LeNet's first convolution on a batch of 256.
        if (supports(dev, PX_OP_CONV2D, static_cast<px_dtype>(d))) {
            Tensor img = full({256, 1, 28, 28}, 0.5, dev, d), w = full({6, 1, 5, 5}, 0.1, dev, d);
            add_row(PX_OP_CONV2D, d, "256x1x28x28 * 6x5x5", 2.0 * 256 * 6 * 24 * 24 * 25, "GFLOP/s",
                    [&] { conv2d(img, w, {1, 1}, {2, 2}); });
        }
    }
    return rows;
}

}  // namespace pxconformance
