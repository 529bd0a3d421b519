// Returns from main (or calls exit()) with work of every op family queued on
// two CPU devices: a convolutional network's forward and backward pass
// (convolutions and their gradients, pooling, the fused bias-relu-pool,
// softmax cross-entropy, dropout, products, reductions, elementwise ops,
// casts, copies) and an SGD step; the later families (batch and layer
// normalisation, adaptive pooling, GELU, SiLU and leaky ReLU, take, where,
// powers and comparisons, NAG and Adam steps) with their gradients; and a
// float16 and a bfloat16 pass, whose layer ops run through float32 scratch;
// none of it read. Kernels that lease
// scratch memory run during the exit drain, so the scratch pool must outlive
// it: before it did, this crashed in 25-30 of 30 runs (issue 37, item 7).
// ctest runs it 20 times each way (tests/CMakeLists.txt).
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "plexus/plexus.h"

#include "plexus/plexus.hpp"

using namespace plexus;

namespace {
void queue_a_training_step(const Device& d) {
    Tensor x = random_normal({16, 1, 28, 28}, 0, 1, d);
    Tensor labels = arange(0, 8, 0.5, d).astype(DType::int32);  // 0 0 1 1 ... 7 7
    Tensor w1 = random_normal({6, 1, 5, 5}, 0, 0.1, d), b1 = zeros({6}, d);
    Tensor w2 = random_normal({16, 6, 5, 5}, 0, 0.1, d), b2 = zeros({16}, d);
    Tensor w3 = random_normal({144, 10}, 0, 0.1, d);
    for (Tensor* p : {&w1, &b1, &w2, &b2, &w3}) p->attach_grad();
    Tensor loss;
    {
        auto scope = autograd::record();
        Tensor h = bias_relu_max_pool2d(conv2d(x, w1, 1, 2), b1, 2, 2);  // (16, 6, 14, 14)
        h = relu(bias_add(conv2d(h, w2), b2));                           // (16, 16, 10, 10)
        h = avg_pool2d(max_pool2d(h, 2, 2), 2, 2, 1);                    // (16, 16, 3, 3)
        h = dropout(flatten(h), 0.5);                                   // (16, 144)
        Tensor logits = matmul(tanh(h), w3) + sigmoid(log_softmax(h).sum(1, true));
        loss = softmax_cross_entropy(logits, labels).mean();
    }
    loss.backward();
    for (Tensor* p : {&w1, &b1, &w2, &b2, &w3})
        check(px_sgd_update(p->handle(), p->grad().handle(), nullptr, 0.1, 0, 0, 1));
    concat({x.transpose(), x.transpose()}, 0).astype(DType::float64).argmax(1).slice_axis(0, 1, 20, 3);
}

// The op families added since (ABI 1.7 and 1.8), forward and backward, and
// optimizer steps that update in place.
void queue_the_later_families(const Device& d) {
    Tensor x = random_normal({8, 4, 6, 6}, 0, 1, d);
    Tensor gamma = ones({4}, d), beta = zeros({4}, d), g2 = ones({6}, d), b2 = zeros({6}, d);
    Tensor table = random_normal({10, 6}, 0, 1, d);
    Tensor picks = arange(0, 8, 0.5, d).astype(DType::int32);  // 0 0 1 1 ... 7 7, rows of the table
    for (Tensor* p : {&x, &gamma, &beta, &g2, &b2, &table}) p->attach_grad();
    Tensor loss;
    {
        auto scope = autograd::record();
        Tensor h = batch_norm_by_batch(x, gamma, beta, 1e-5).y.gelu();          // (8, 4, 6, 6)
        h = layer_norm(h.silu(), g2, b2).leaky_relu(0.1);                     // over the last axis
        h = adaptive_avg_pool2d(h, {3, 2}).reshape({8, 24});                  // (8, 24)
        Tensor rows = take(table, picks.reshape({8, 2})).reshape({8, 12});    // (8, 12)
        Tensor both = concat({h, rows}, 1);                                   // (8, 36)
        loss = where(both > 0.0, both.pow(2.0), -both).sum() + maximum(both, rows.sum(1, true)).mean();
    }
    loss.backward();
    Tensor m = zeros({4}, d), state = zeros({2, 60}, d);
    check(px_nag_update(gamma.handle(), gamma.grad().handle(), m.handle(), 0.1, 0.9, 0, 1));
    check(px_adam_update(table.handle(), table.grad().handle(), state.handle(), 0.01, 0.9, 0.999, 1e-8, 0.01, 1, 1,
                         1));
}

// Layers in the 16-bit dtypes, whose kernels widen into float32 scratch.
void queue_a_half_pass(const Device& d, DType dtype) {
    Tensor x = random_normal({4, 2, 12, 12}, 0, 1, d).astype(dtype);
    Tensor w = random_normal({3, 2, 3, 3}, 0, 0.1, d).astype(dtype), b = zeros({3}, d, dtype);
    for (Tensor* p : {&x, &w, &b}) p->attach_grad();
    Tensor loss;
    {
        auto scope = autograd::record();
        Tensor h = bias_relu_max_pool2d(conv2d(x, w, 1, 1), b, 2, 2);  // (4, 3, 6, 6)
        loss = softmax_cross_entropy(log_softmax(flatten(h)), arange(0, 4, 1, d).astype(DType::int32)).mean();
    }
    loss.backward();
    check(px_sgd_update(w.handle(), w.grad().handle(), nullptr, 0.1, 0, 0, 1));
}
}  // namespace

// Made before main, so destroyed after the CPU plugin's statics: a new
// runtime's convolutions and their gradients lease scratch memory once the
// plugin's scratch pool is gone, and get it from the system instead.
struct ConvolvesAfterThePlugin {
    ~ConvolvesAfterThePlugin() {
        px_runtime* rt = nullptr;
        const px_device cpu0{PX_DEVICE_CPU, 0};
        const int64_t xs[] = {2, 4, 32, 32}, ws[] = {8, 4, 3, 3};
        px_tensor *x = nullptr, *w = nullptr, *y = nullptr, *dw = nullptr;
        float got[8 * 4 * 3 * 3] = {};
        const bool ok = px_runtime_create(nullptr, &rt) == PX_OK &&
                        px_tensor_full(rt, cpu0, PX_FLOAT32, 4, xs, 1.0, &x) == PX_OK &&
                        px_tensor_full(rt, cpu0, PX_FLOAT32, 4, ws, 0.5, &w) == PX_OK &&
                        px_conv2d(x, w, 1, 1, 0, 0, &y) == PX_OK &&
                        px_conv2d_backward_weight(y, x, 3, 3, 1, 1, 0, 0, &dw) == PX_OK &&
                        px_tensor_to_host(dw, got, sizeof got) == PX_OK;
        for (px_tensor* t : {dw, y, w, x}) px_tensor_release(t);
        if (rt) px_runtime_destroy(rt);
        // y is 4 * 9 * 0.5 = 18 everywhere (30 x 30 per plane); dw sums x * y over 2 * 900 places.
        if (!ok || got[0] != 2 * 900 * 18.0f) {
            std::fprintf(stderr, "exit_with_every_op_queued: a convolution after the plugin's exit: %s (dw %g)\n",
                         ok ? "wrong value" : px_last_error(), double(got[0]));
            std::_Exit(1);
        }
    }
} convolves_after_the_plugin;

int main(int argc, char** argv) try {
    for (const Device& d : {cpu(0), cpu(1)}) {
        // One step read back, so the values are right before the ones left queued.
        queue_a_training_step(d);
        queue_the_later_families(d);
        queue_a_half_pass(d, DType::float16);
        synchronize(d);
        for (int i = 0; i < 4; ++i) {  // queued, never read
            queue_a_training_step(d);
            queue_the_later_families(d);
            queue_a_half_pass(d, i % 2 ? DType::bfloat16 : DType::float16);
        }
    }
    if (argc > 1 && std::strcmp(argv[1], "--exit") == 0) std::exit(0);
    return 0;
} catch (const Error& e) {
    std::fprintf(stderr, "exit_with_every_op_queued: %s\n", e.what());
    return 1;
}
