// Seed 002's LeNet, a wider MLP for the scaling figures, d2l's ResNet-18, and their training
// loop, shared by plexus-train and plexus-bench so that both time the very
// same work.
#pragma once

#include <chrono>
#include <functional>
#include <vector>

#include "plexus/data.hpp"
#include "plexus/nn.hpp"

namespace plexus::train {

inline void add_lenet(nn::Sequential& net) {
    net.add(nn::Conv2D(6, 5, 1, 0, "relu"), nn::MaxPool2D(2, 2), nn::Conv2D(16, 3, 1, 0, "relu"),
            nn::MaxPool2D(2, 2), nn::Dense(120, "relu"), nn::Dense(84, "relu"), nn::Dense(10));
}

// A wider network than LeNet: more arithmetic per sample, fewer ops.
inline void add_mlp(nn::Sequential& net) {
    net.add(nn::Flatten(), nn::Dense(1024, "relu", 784), nn::Dense(1024, "relu", 1024), nn::Dense(10, "", 1024));
}

// d2l's LeNet with batch normalisation (the chapter "Batch Normalization"):
// BatchNorm after each convolution and dense layer, before the sigmoid.
inline void add_lenet_bn(nn::Sequential& net) {
    net.add(nn::Conv2D(6, 5), nn::BatchNorm(), nn::Activation("sigmoid"), nn::AvgPool2D(2, 2), nn::Conv2D(16, 5),
            nn::BatchNorm(), nn::Activation("sigmoid"), nn::AvgPool2D(2, 2), nn::Dense(120), nn::BatchNorm(),
            nn::Activation("sigmoid"), nn::Dense(84), nn::BatchNorm(), nn::Activation("sigmoid"), nn::Dense(10));
}

// d2l's ResNet-18 for 28x28 images (nn::resnet18).
inline void add_resnet18(nn::Sequential& net) { net = nn::resnet18(10, 1); }

struct Network {
    const char* flag;   // --net NAME
    const char* title;  // for plots and messages
    void (*add)(nn::Sequential&);
    int min_rows;  // per device and batch: 2 where BatchNorm follows a dense layer (one row has no statistics)
};
inline const Network networks[] = {
    {"lenet", "LeNet", add_lenet, 1},
    {"mlp", "MLP 784-1024-1024-10", add_mlp, 1},
    {"lenet-bn", "LeNet with BatchNorm", add_lenet_bn, 2},
    {"resnet18", "ResNet-18", add_resnet18, 1}};

struct EpochResult {
    double loss = 0, accuracy = 0, seconds = 0;
    int64_t samples = 0;
};

// One training step on `b` (forward and backward under record(), a trainer
// step), waited for: what plexus-bench times.
inline void train_step(nn::Block& net, nn::Trainer& trainer, const data::Batch& b) {
    loss::SoftmaxCrossEntropyLoss loss_fn;
    Tensor l;
    {
        auto scope = autograd::record();
        l = loss_fn(net(b.data), b.label);
    }
    l.backward();
    trainer.step(b.size);
    synchronize(b.data.device());
}

// One pass over `loader` (or its first max_batches batches): forward and
// backward under record(), a trainer step per batch (scaled by the global
// batch, so shards of one batch on several ranks step as one). With several
// devices each batch is split over them (split_and_load) and every device
// runs its part, as in seed 002. Loss and accuracy are summed on the device
// and read once, so the loop never waits for the device. `on_batch(done)` is
// called per batch. The layers compute in `compute` (nn::Autocast); with a
// `scaler` the loss is scaled and a step whose gradients overflowed is skipped.
inline EpochResult train_epoch(nn::Block& net, data::DataLoader& loader, nn::Trainer& trainer, uint64_t epoch,
                               const std::function<void(int64_t, double)>& on_batch = {}, int64_t max_batches = -1,
                               const std::vector<Device>& devices = {}, DType compute = DType::float32,
                               nn::LossScaler* scaler = nullptr) {
    loss::SoftmaxCrossEntropyLoss loss_fn;
    auto t0 = std::chrono::steady_clock::now();
    loader.begin_epoch(epoch);
    data::Batch b;
    Tensor loss_sum, correct;
    EpochResult r;
    int64_t done = 0;
    auto add = [](Tensor& total, const Tensor& part) {
        total = total.defined() ? total + part.as_in_context(total.device()) : part;
    };
    while ((max_batches < 0 || done < max_batches) && loader.next(b)) {
        std::vector<Tensor> xs{b.data}, ys{b.label}, outs, losses;
        if (devices.size() > 1) {
            xs = nn::split_and_load(b.data, devices);
            ys = nn::split_and_load(b.label, devices);
        }
        {
            auto scope = autograd::record();
            nn::Autocast precision(compute);
            for (size_t i = 0; i < xs.size(); ++i) {
                outs.push_back(net(xs[i]));
                losses.push_back(loss_fn(outs.back(), ys[i]));
            }
        }
        if (scaler) {
            for (auto& l : losses) scaler->scale(l).backward();
            scaler->step(trainer, b.global_size);
        } else {
            for (auto& l : losses) l.backward();
            trainer.step(b.global_size);
        }
        for (size_t i = 0; i < xs.size(); ++i) {
            add(loss_sum, losses[i].detach().sum().astype(DType::float64));
            add(correct, equal(outs[i].detach().argmax(1), ys[i].astype(DType::int64)).sum());
        }
        r.samples += b.size;
        ++done;
        if (on_batch) on_batch(done, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    if (r.samples > 0) {
        r.loss = loss_sum.item<double>() / double(r.samples);
        r.accuracy = double(correct.item<int64_t>()) / double(r.samples);
    }
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
}

// Correct predictions and samples of `net` over `loader` (or its first
// max_batches batches; no recording, no dropout), on the loader's device,
// the layers computing in `compute`.
struct Evaluation {
    int64_t correct = 0, samples = 0;
    double accuracy() const { return samples ? double(correct) / double(samples) : 0.0; }
};
inline Evaluation evaluate(nn::Block& net, data::DataLoader& loader, DType compute = DType::float32,
                           int64_t max_batches = -1) {
    nn::Autocast precision(compute);
    loader.begin_epoch(0);
    data::Batch b;
    Tensor correct;
    Evaluation e;
    for (int64_t done = 0; (max_batches < 0 || done < max_batches) && loader.next(b); ++done) {
        Tensor c = equal(net(b.data).argmax(1), b.label.astype(DType::int64)).sum();
        correct = correct.defined() ? correct + c : c;
        e.samples += b.size;
    }
    if (e.samples) e.correct = correct.item<int64_t>();
    return e;
}

}  // namespace plexus::train
