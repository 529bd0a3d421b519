#include "bench_half.hpp"


#include <cstdint>
#include <cstdio>
#include <iterator>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "../train/lenet.hpp"
#include "bench_util.hpp"
#include "raw_blas.hpp"
#include "plexus/half.h"

using namespace plexus;

namespace pxbench {

namespace {

// c = a + b on bfloat16 bits as a careful loop does it: widened, added in
// float32, rounded once (half.h's conversions, which vectorize).
void raw_add_bfloat16(const uint16_t* a, const uint16_t* b, uint16_t* c, int64_t n) {
#pragma omp parallel for simd schedule(static)
    for (int64_t i = 0; i < n; ++i) c[i] = px_float_to_bfloat16(px_bfloat16_to_float(a[i]) + px_bfloat16_to_float(b[i]));
}

void bench_add_bfloat16(Device dev, int64_t n, bool json) {
    Tensor a = random_uniform({n}, 0, 1, dev, DType::bfloat16), b = random_uniform({n}, 0, 1, dev, DType::bfloat16), c;
    std::vector<uint16_t> ra(static_cast<size_t>(n), 0x3F80), rb(static_cast<size_t>(n), 0x4000), rc(static_cast<size_t>(n));
    auto [ours, raw] = interleaved(
        15,
        [&] {
            c = a + b;
            synchronize(dev);
        },
        [&] { raw_add_bfloat16(ra.data(), rb.data(), rc.data(), n); });
    const double bytes = 3.0 * double(n) * 2;
    report({"add " + std::to_string(n >> 20) + "M bfloat16, c = a + b", "GB/s", bytes / ours / 1e9, bytes / raw / 1e9,
            "raw OpenMP loop", "target >= 0.85x"},
           json);
}

void bench_gemm_half(Device dev, int64_t n, DType d, bool json) {
    Tensor a = random_uniform({n, n}, 0, 1, dev, d), b = random_uniform({n, n}, 0, 1, dev, d), c;
    std::vector<float> ra(size_t(n * n), 0.5f), rb(size_t(n * n), 0.25f), rc(size_t(n * n));
    auto [ours, raw] = interleaved(
        n <= 1024 ? 11 : 5,
        [&] {
            c = matmul(a, b);
            synchronize(dev);
        },
        [&] {
            raw_sgemm()(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(n), int(n), int(n), 1.0f, ra.data(), int(n),
                        rb.data(), int(n), 0.0f, rc.data(), int(n));
        });
    const double flop = 2.0 * double(n) * double(n) * double(n);
    report({std::string(name(d)) + " gemm " + std::to_string(n), "GFLOP/s", flop / ours / 1e9, flop / raw / 1e9,
            "raw cblas_sgemm", "no cblas_sbgemm here"},
           json);
}

// `batches` LeNet training batches of 256 with the layers in each dtype,
// interleaved, beside float32.
void bench_lenet_half(Device dev, bool quick, bool json) {
    const auto train_set = training_set_or_skip("LeNet in bfloat16 and float16", json);
    if (!train_set) return;
    const int64_t batches = quick ? 10 : 50;
    struct Run {
        DType dtype;
        nn::Sequential net;
        std::optional<nn::Trainer> trainer;
        std::optional<nn::LossScaler> scaler;
    };
    const DType dtypes[] = {DType::float32, DType::bfloat16, DType::float16};
    std::vector<Run> runs(std::size(dtypes));
    for (size_t i = 0; i < std::size(dtypes); ++i) {
        seed(0);
        runs[i].dtype = dtypes[i];
        train::add_lenet(runs[i].net);
        runs[i].net.initialize(dev);
        runs[i].trainer.emplace(runs[i].net.collect_params(), "sgd", std::map<std::string, double>{{"learning_rate", 0.1}});
        if (dtypes[i] == DType::float16) runs[i].scaler.emplace();
    }
    data::DataLoader loader(*train_set, 256, true, dev, 0);
    auto time_of = [&](Run& r) {
        return [&] {
            train::train_epoch(r.net, loader, *r.trainer, 1, {}, batches, {}, r.dtype, r.scaler ? &*r.scaler : nullptr);
            synchronize(dev);
        };
    };
    for (size_t i = 1; i < runs.size(); ++i) {
        auto [half, single] = interleaved(3, time_of(runs[i]), time_of(runs[0]));
        report({"LeNet " + std::to_string(batches) + " batches, layers in " + name(runs[i].dtype), "ms", half * 1e3,
                single * 1e3,
                "the same in float32", "nn::Autocast"},
               json);
    }
}

}  // namespace

void bench_half(Device dev, bool quick, bool json) {
    if (dev.kind != PX_DEVICE_GPU) {
        bench_add_bfloat16(dev, quick ? (1 << 20) : (16 << 20), json);
        for (DType d : {DType::bfloat16, DType::float16})
            for (int64_t n : quick ? std::vector<int64_t>{256} : std::vector<int64_t>{1024, 2048}) bench_gemm_half(dev, n, d, json);
    } else if (!json) {
        std::printf("(half: the raw bfloat16 baselines are CPU loops and OpenBLAS; on a GPU, LeNet only)\n");
    }
    bench_lenet_half(dev, quick, json);
}

}  // namespace pxbench
