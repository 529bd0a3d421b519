// Seed 002's LeNet and its training loop, shared by plexus-train and
// plexus-bench so that both time the very same work.
#pragma once

#include <chrono>
#include <functional>

#include "plexus/data.hpp"
#include "plexus/nn.hpp"

namespace plexus::train {

inline void add_lenet(nn::Sequential& net) {
    net.add(nn::Conv2D(6, 5, 1, 0, "relu"), nn::MaxPool2D(2, 2), nn::Conv2D(16, 3, 1, 0, "relu"),
            nn::MaxPool2D(2, 2), nn::Dense(120, "relu"), nn::Dense(84, "relu"), nn::Dense(10));
}

struct EpochResult {
    double loss = 0, accuracy = 0, seconds = 0;
    int64_t samples = 0;
};

// One pass over `loader`: forward and backward under record(), a trainer
// step per batch. Loss and accuracy are summed on the device and read once,
// so the loop never waits for the device. `on_batch(done)` is called per batch.
inline EpochResult train_epoch(nn::Block& net, data::DataLoader& loader, nn::Trainer& trainer, uint64_t epoch,
                               const std::function<void(int64_t, double)>& on_batch = {}) {
    loss::SoftmaxCrossEntropyLoss loss_fn;
    auto t0 = std::chrono::steady_clock::now();
    loader.begin_epoch(epoch);
    data::Batch b;
    Tensor loss_sum, correct;
    EpochResult r;
    int64_t done = 0;
    while (loader.next(b)) {
        Tensor out, l;
        {
            auto scope = autograd::record();
            out = net(b.data);
            l = loss_fn(out, b.label);
        }
        l.backward();
        trainer.step(b.size);
        Tensor batch_loss = l.detach().sum().astype(DType::float64);
        Tensor batch_correct = equal(out.detach().argmax(1), b.label.astype(DType::int64)).sum();
        loss_sum = loss_sum.defined() ? loss_sum + batch_loss : batch_loss;
        correct = correct.defined() ? correct + batch_correct : batch_correct;
        r.samples += b.size;
        if (on_batch)
            on_batch(++done, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    if (r.samples > 0) {
        r.loss = loss_sum.item<double>() / double(r.samples);
        r.accuracy = double(correct.item<int64_t>()) / double(r.samples);
    }
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
}

// Accuracy of `net` over `loader`, predicting (no recording, no dropout).
inline double evaluate(nn::Block& net, data::DataLoader& loader) {
    loader.begin_epoch(0);
    data::Batch b;
    Tensor correct;
    int64_t n = 0;
    while (loader.next(b)) {
        Tensor c = equal(net(b.data).argmax(1), b.label.astype(DType::int64)).sum();
        correct = correct.defined() ? correct + c : c;
        n += b.size;
    }
    return n ? double(correct.item<int64_t>()) / double(n) : 0.0;
}

}  // namespace plexus::train
