// plexus-bench: Plexus figures beside their raw baselines, measured in the
// same run and interleaved (ours, raw, ours, raw...) so machine noise hits
// both; each figure is a median. --json for machine-readable output.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <vector>


#include "../json_writer.hpp"
#include "../device_arg.hpp"
#include "bench_half.hpp"
#include "bench_resnet.hpp"
#include "bench_layer_ops.hpp"
#include "bench_parallel.hpp"
#include "bench_python.hpp"
#include "bench_tensor_ops.hpp"
#include "bench_util.hpp"
#include "raw_blas.hpp"
#ifdef PLEXUS_BENCH_CUDA
#include "bench_cuda.hpp"
#endif
#include "../train/lenet.hpp"
#include "plexus/plexus.hpp"

using namespace plexus;
using namespace pxbench;

namespace {

void bench_overhead(Device dev, bool json) {
    Tensor a = ones({1}, dev), b = ones({1}, dev), c;
    const int n = 20000;
    std::vector<double> per_op;
    for (int rep = 0; rep < 15; ++rep) {
        synchronize(dev);
        double s = seconds([&] {
            for (int i = 0; i < n; ++i) c = a + b;
            synchronize(dev);
        });
        per_op.push_back(s / n * 1e9);
    }
    report({"per-op overhead, 1-element add", "ns/op", median(per_op), 0, "",
            dev.kind == PX_DEVICE_GPU ? "target < 5000 ns" : "target < 250 ns"},
           json);
}

void bench_add(Device dev, int64_t n, bool json) {
    Tensor a = random_uniform({n}, 0, 1, dev), b = random_uniform({n}, 0, 1, dev), c;
    std::vector<float> ra(static_cast<size_t>(n), 1.0f), rb(static_cast<size_t>(n), 2.0f), rc(static_cast<size_t>(n));
    float *pa = ra.data(), *pb = rb.data(), *pc = rc.data();
    auto [ours, raw] = interleaved(
        15,
        [&] {
            c = a + b;  // a fresh result every time
            synchronize(dev);
        },
        [&] {
#pragma omp parallel for simd schedule(static)
            for (int64_t i = 0; i < n; ++i) pc[i] = pa[i] + pb[i];
        });
    double bytes = 3.0 * double(n) * 4;
    report({"add " + std::to_string(n >> 20) + "M float32, c = a + b", "GB/s", bytes / ours / 1e9, bytes / raw / 1e9,
            "raw OpenMP loop", "target >= 0.80x"},
           json);
}

void bench_sgemm(Device dev, int64_t n, bool json) {
    Tensor a = random_uniform({n, n}, 0, 1, dev), b = random_uniform({n, n}, 0, 1, dev), c;
    std::vector<float> ra(size_t(n * n), 0.5f), rb(size_t(n * n), 0.25f), rc(size_t(n * n));
    // A burst of back-to-back products per sample (as in a training loop),
    // the same count on both sides.
    int reps = n <= 256 ? 21 : n <= 1024 ? 11 : 5, burst = n <= 256 ? 20 : n <= 1024 ? 3 : 1;
    auto [ours, raw] = interleaved(
        reps,
        [&] {
            for (int i = 0; i < burst; ++i) c = matmul(a, b);
            synchronize(dev);
        },
        [&] {
            for (int i = 0; i < burst; ++i)
                raw_sgemm()(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(n), int(n), int(n), 1.0f, ra.data(), int(n),
                            rb.data(), int(n), 0.0f, rc.data(), int(n));
        });
    double flop = 2.0 * double(n) * double(n) * double(n) * burst;
    report({"sgemm " + std::to_string(n), "GFLOP/s", flop / ours / 1e9, flop / raw / 1e9, "raw cblas_sgemm",
            "target >= 0.95x"},
           json);
}

// Seed 003, exercise 3: 1000 products of 100x100 matrices, logging the
// Frobenius norm one result at a time vs keeping the log on the device.
void bench_norm_log(Device dev, bool json) {
    Tensor a = random_normal({100, 100}, 0, 0.1, dev), b = random_normal({100, 100}, 0, 0.1, dev);
    auto [each, kept] = interleaved(
        3,
        [&] {
            for (int i = 0; i < 1000; ++i) {
                Tensor c = matmul(a, b);
                volatile float v = norm(c).item<float>();
                (void)v;
            }
        },
        [&] {
            std::vector<Tensor> log;
            for (int i = 0; i < 1000; ++i) {
                Tensor c = matmul(a, b);
                log.push_back(norm(c).reshape({1}));
            }
            volatile float v = concat(log).to_vector<float>()[999];
            (void)v;
        });
    report({"1000 100x100 matmuls, norm read each time", "ms", each * 1e3, kept * 1e3, "log kept on device", "seed 003 ex. 3"},
           json);
}

// Seed 002's LeNet at batch 256: one training step and one epoch, beside
// PyTorch (Plexus's threads, and one thread) in the same run.
void bench_training(Device dev, bool quick, bool json, const std::string& torch_script) {
    const auto train_set = training_set_or_skip("LeNet training", json);
    if (!train_set) return;
    seed(0);
    nn::Sequential net;
    train::add_lenet(net);
    net.initialize(dev);
    nn::Trainer trainer(net.collect_params(), "sgd", {{"learning_rate", 0.1}});
    data::DataLoader loader(*train_set, 256, true, dev, 0);
    data::Batch b;
    loader.next(b);
    auto step = [&] { train::train_step(net, trainer, b); };
    auto [step_s, unused] = interleaved(quick ? 5 : 21, step, nullptr);
    (void)unused;
    std::string torch_dev = dev.kind == PX_DEVICE_GPU ? "cuda:" + std::to_string(dev.index) : "cpu";
    // "Default": Plexus's thread count on a CPU (Debian's PyTorch may start with one thread).
    const std::string threads = dev.kind == PX_DEVICE_GPU ? "" : " --threads " + std::to_string(omp_get_max_threads());
    std::string t_default =
        torch_baseline(torch_script, "--device " + torch_dev + threads + (quick ? " --steps 5" : " --epoch"), "step_ms");
    std::string t_one = dev.kind == PX_DEVICE_GPU || quick ? "" : torch_baseline(torch_script, "--threads 1 --epoch", "step_ms");
    double torch_step = json_number(t_default, "step_ms"), torch_step1 = json_number(t_one, "step_ms");
    double best_step = torch_step1 > 0 && (torch_step < 0 || torch_step1 < torch_step) ? torch_step1 : torch_step;
    std::string base = torch_step > 0 ? (best_step == torch_step1 ? "PyTorch, 1 thread" : "PyTorch") : "";
    if (torch_step < 0 && !json)  // no torch, or one without CUDA for a GPU
        std::printf("(PyTorch baseline unavailable: no python3 whose torch runs on %s)\n", torch_dev.c_str());
    report({"LeNet train step, batch 256", "ms", step_s * 1e3, best_step > 0 ? best_step : 0, base, "PyTorch eager"}, json);
    if (quick) return;
    double epoch = train::train_epoch(net, loader, trainer, 1).seconds;
    double te = json_number(t_default, "epoch_s"), te1 = json_number(t_one, "epoch_s");
    double best_epoch = te1 > 0 && (te < 0 || te1 < te) ? te1 : te;
    report({"LeNet epoch (60000 images, batch 256)", "s", epoch, best_epoch > 0 ? best_epoch : 0,
            best_epoch > 0 ? (best_epoch == te1 ? "PyTorch, 1 thread" : "PyTorch") : "", "target < PyTorch's best"},
           json);
    if (te > 0 && te1 > 0 && !json)
        std::printf("  (PyTorch epoch: %.2f s with Plexus's threads, %.2f s with one thread)\n", te, te1);
}

// The groups of figures, for --only.
const char* const groups[] = {"overhead", "add",  "sgemm",   "norm",   "layer-ops", "tensor-ops",
                              "training", "half", "resnet", "devices", "python"};

[[noreturn]] void refuse(const std::string& why) {
    std::fprintf(stderr, "plexus-bench: %s (try --help)\n", why.c_str());
    std::exit(2);
}

std::string group_names() {
    std::string names;
    for (const char* n : groups) names += std::string(names.empty() ? "" : ", ") + n;
    return names;
}

// "a,b" -> {"a","b"}, each one of `groups`.
std::set<std::string> parse_only(const std::string& list) {
    std::set<std::string> out;
    size_t start = 0;
    for (;;) {
        size_t comma = list.find(',', start);
        std::string g = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (std::find(std::begin(groups), std::end(groups), g) == std::end(groups))
            refuse("--only wants some of " + group_names() + "; got '" + g + "'");
        out.insert(g);
        if (comma == std::string::npos) return out;
        start = comma + 1;
    }
}

}  // namespace

int main(int argc, char** argv) try {
    bool json = false, quick = false;
    std::string torch_script = PLEXUS_TORCH_LENET_SCRIPT, tensor_ops_script = PLEXUS_TORCH_TENSOR_OPS_SCRIPT;
    Device dev = cpu();
    std::set<std::string> only;  // empty: every group
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        const bool takes_value = arg == "--device" || arg == "--only";
        if (takes_value && i + 1 >= argc) refuse(arg + " needs a value");
        if (arg == "--json") json = true;
        else if (arg == "--quick") quick = true;
        else if (arg == "--device") {
            std::string d = argv[++i];
            std::string why;
            auto parsed = pxtools::parse_device_arg(d, &why);
            if (!parsed) refuse("--device: " + why);
            dev = *parsed;
        } else if (arg == "--only") {
            only = parse_only(argv[++i]);
        } else if (arg == "--help" || arg == "-h") {
            std::printf("usage: plexus-bench [--device cpu:0|gpu:0] [--only GROUP[,GROUP...]] [--json] [--quick]\n"
                        "Measures Plexus beside raw baselines in one run and prints each ratio.\n"
                        "--only runs some groups: %s\n"
                        "       (on a GPU, add and sgemm are the cuBLAS and copy figures, tensor-ops\n"
                        "       float32 exp and tanh beside CUDA's float functions and a transpose).\n"
                        "--quick uses smaller sizes (for a smoke test, not for figures).\n",
                        group_names().c_str());
            return 0;
        } else {
            refuse("unknown argument '" + arg + "'");
        }
    }
    auto wanted = [&](const char* group) { return only.empty() || only.count(group) > 0; };
    // A device this machine does not have is a usage error (exit 2), as a malformed one is.
    const auto info = [&] {
        try {
            return device_info(dev);
        } catch (const plexus::Error& e) {
            refuse(std::string("--device: ") + e.what());
        }
    }();
    if (!json)
        std::printf("plexus-bench on %s: %s, %d OpenMP threads\n\n%-40s %10s %-7s %-22s %10s\n", dev.str().c_str(),
                    info.name, omp_get_max_threads(), "figure", "plexus", "unit", "baseline", "value");
    if (dev.kind == PX_DEVICE_GPU) {
#ifdef PLEXUS_BENCH_CUDA
        if (wanted("overhead")) plugin_of(dev) == "cuda" ? bench_cuda_overhead(dev, quick, json) : bench_overhead(dev, json);
        if ((wanted("add") || wanted("sgemm")) && plugin_of(dev) == "cuda") bench_cuda(dev, quick, json);
        if (wanted("tensor-ops") && plugin_of(dev) == "cuda") bench_cuda_tensor_ops(dev, quick, json);
#else
        std::fprintf(stderr, "plexus-bench: built without CUDA, so the raw cuBLAS baselines are not measured\n");
        if (wanted("overhead")) bench_overhead(dev, json);
#endif
    } else {
        if (wanted("overhead")) bench_overhead(dev, json);
        if (wanted("add")) bench_add(dev, quick ? (1 << 20) : (16 << 20), json);
        if (wanted("sgemm"))
            for (int64_t n : quick ? std::vector<int64_t>{128, 256} : std::vector<int64_t>{256, 1024, 2048})
                bench_sgemm(dev, n, json);
        if (wanted("layer-ops")) bench_layer_ops(dev, quick, json);
        if (wanted("tensor-ops")) bench_tensor_ops(dev, quick, json, tensor_ops_script);
    }
    if (dev.kind == PX_DEVICE_GPU && only.count("layer-ops") && !json)
        std::printf("(layer-ops: CPU devices only, beside raw OpenMP loops; on a GPU see the training step)\n");
    if (wanted("norm")) bench_norm_log(dev, json);
    if (wanted("training")) bench_training(dev, quick, json, torch_script);
    if (wanted("half")) bench_half(dev, quick, json);
    if (wanted("resnet")) bench_resnet(dev, quick, json, torch_script);
    // A second device of the same kind (PLEXUS_CPU_DEVICES=2, or a second GPU).
    const px_device_kind kind = static_cast<px_device_kind>(dev.kind);
    if (wanted("devices") && num_devices(kind) > 1) {
        Device other{dev.kind, dev.index == 0 ? 1 : 0};
        bench_two_devices(dev, other, quick, json);
        bench_data_parallel(dev, other, quick, json);
    } else if (wanted("devices") && !json) {
        std::printf("(one %s device: the two-device figures need a second one, e.g. PLEXUS_CPU_DEVICES=2)\n",
                    px_device_kind_label(kind));
    }
    // The package picks its device as try_gpu() does.
    const bool python_ok = !wanted("python") || bench_python(quick, json);
    if (json) {
        pxtools::Json out;
        out.begin_object().field("device", dev.str()).field("device_name", info.name);
        out.field("threads", omp_get_max_threads()).key("results").begin_array();
        for (const auto& r : rows()) {
            out.begin_object().field("name", r.name).field("unit", r.unit).field("plexus", r.ours);
            if (r.baseline > 0) out.field("baseline", r.baseline_name).field("baseline_value", r.baseline).field("ratio", r.ours / r.baseline);
            out.field("target", r.target).end_object();
        }
        out.end_array().end_object();
        std::printf("%s\n", out.str().c_str());
    }
    return python_ok ? 0 : 1;
} catch (const std::exception& e) {  // plexus::Error, or a raw baseline's CUDA failure
    std::fprintf(stderr, "plexus-bench: %s\n", e.what());
    return 1;
}
