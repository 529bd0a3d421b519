#include "bench_resnet.hpp"

#include <omp.h>

#include <cstdio>

#include "../train/lenet.hpp"
#include "bench_util.hpp"

using namespace plexus;

namespace pxbench {

void bench_resnet(Device dev, bool quick, bool json, const std::string& torch_script) {
    const auto train_set = training_set_or_skip("ResNet-18 training", json);
    if (!train_set) return;
    const std::string torch_dev = dev.kind == PX_DEVICE_GPU ? "cuda:" + std::to_string(dev.index) : "cpu";
    for (const int64_t batch : quick ? std::vector<int64_t>{8} : std::vector<int64_t>{64, 256}) {
        seed(0);
        nn::Sequential net = nn::resnet18(10, 1);
        net.initialize(dev);
        nn::Trainer trainer(net.collect_params(), "sgd", {{"learning_rate", 0.1}});
        data::DataLoader loader(*train_set, batch, false, dev);
        data::Batch b;
        loader.next(b);
        auto step = [&] { train::train_step(net, trainer, b); };
        step();  // the first step infers shapes and warms the caches
        auto [step_s, unused] = interleaved(quick ? 2 : 5, step, nullptr);
        (void)unused;
        // PyTorch with Plexus's threads: Debian's build defaults to one on some machines.
        const std::string threads = dev.kind == PX_DEVICE_GPU ? "" : " --threads " + std::to_string(omp_get_max_threads());
        const std::string torch = torch_baseline(
            torch_script, "--net resnet18 --batch " + std::to_string(batch) + " --device " + torch_dev + threads +
                              " --steps " + (quick ? "2" : "5"), "step_ms");
        const double torch_step = json_number(torch, "step_ms");
        if (torch_step < 0 && !json)
            std::printf("(PyTorch baseline unavailable: no python3 whose torch runs on %s)\n", torch_dev.c_str());
        report({"ResNet-18 train step, batch " + std::to_string(batch), "ms", step_s * 1e3,
                torch_step > 0 ? torch_step : 0, torch_step > 0 ? "PyTorch, same threads" : "", "target <= 0.7x PyTorch eager"},
               json);
    }
}

}  // namespace pxbench
