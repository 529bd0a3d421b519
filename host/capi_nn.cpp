// C API: the neural-network ops. Each entry point looks its handles up and
// hands over to the router (router_nn.cpp), which checks everything.
#include <memory>

#include "router.hpp"

using namespace px;

namespace {
router::Window window(int32_t kh, int32_t kw, int32_t sh, int32_t sw, int32_t ph, int32_t pw) {
    router::Window w;
    w.kernel_h = kh, w.kernel_w = kw, w.stride_h = sh, w.stride_w = sw, w.pad_h = ph, w.pad_w = pw;
    return w;
}

// Refuses result slots that alias one another (a second result would
// overwrite the first) before anything runs.
void need_distinct(std::initializer_list<std::pair<px_tensor**, const char*>> outs) {
    for (auto a = outs.begin(); a != outs.end(); ++a)
        for (auto b = outs.begin(); b != a; ++b)
            if (a->first && a->first == b->first)
                fail(PX_ERROR_INVALID_ARGUMENT, b->second, " and ", a->second,
                     " point to the same place; the second result would overwrite the first");
}

// Publishes every result (at most three) or none: on a failure the handles
// made so far are released and the tensors not yet published freed. A null
// tensor is skipped.
void publish_all(std::initializer_list<std::pair<TensorObj*, px_tensor**>> results) {
    if (results.size() > 3) fail(PX_ERROR_INTERNAL, "publish_all: more than three results");
    std::unique_ptr<TensorObj> held[3];  // no allocation, so nothing is lost before ownership is taken
    px_tensor* made[3] = {};
    size_t n = 0;
    for (const auto& r : results) held[n++].reset(r.first);
    try {
        for (size_t i = 0; i < n; ++i)
            if (held[i]) made[i] = publish(held[i].release());
    } catch (...) {
        for (px_tensor* h : made)
            if (h) release(h);
        throw;
    }
    n = 0;
    for (const auto& r : results) *r.second = made[n++];
}

// px_sgd_update and px_nag_update.
px_status step_sgd(const char* function, px_tensor* param, px_tensor* grad, px_tensor* momentum_buffer,
                   double learning_rate, double momentum, double weight_decay, double rescale, bool nesterov) {
    return guard(function, [&] {
        TensorObj& p = get_tensor(param, "param");
        TensorObj& g = get_tensor(grad, "grad");
        // Nesterov's buffer is not optional: NULL is a bad handle there.
        TensorObj* m = momentum_buffer || nesterov ? &get_tensor(momentum_buffer, "momentum_buffer") : nullptr;
        router::SgdSettings s;
        s.lr = learning_rate, s.momentum = momentum, s.weight_decay = weight_decay, s.rescale = rescale;
        s.nesterov = nesterov;
        router::sgd_update(p, g, m, s);
    });
}
}  // namespace

extern "C" {

px_status px_gemm(px_tensor* a, px_tensor* b, int32_t trans_a, int32_t trans_b, px_tensor** out) {
    return guard("px_gemm", [&] {
        TensorObj& x = get_tensor(a, "a");
        TensorObj& y = get_tensor(b, "b");
        need_out(out);
        *out = publish(router::gemm(x, y, trans_a != 0, trans_b != 0));
    });
}

px_status px_conv2d(px_tensor* x, px_tensor* w, int32_t stride_h, int32_t stride_w, int32_t pad_h, int32_t pad_w,
                    px_tensor** out) {
    return guard("px_conv2d", [&] {
        TensorObj& xi = get_tensor(x, "x");
        TensorObj& wi = get_tensor(w, "w");
        need_out(out);
        *out = publish(router::conv2d(xi, wi, window(0, 0, stride_h, stride_w, pad_h, pad_w)));
    });
}

px_status px_conv2d_backward_input(px_tensor* dy, px_tensor* w, int64_t in_h, int64_t in_w, int32_t stride_h,
                                   int32_t stride_w, int32_t pad_h, int32_t pad_w, px_tensor** out) {
    return guard("px_conv2d_backward_input", [&] {
        TensorObj& d = get_tensor(dy, "dy");
        TensorObj& wi = get_tensor(w, "w");
        need_out(out);
        *out = publish(router::conv2d_backward_input(d, wi, in_h, in_w, window(0, 0, stride_h, stride_w, pad_h, pad_w)));
    });
}

px_status px_conv2d_backward_weight(px_tensor* dy, px_tensor* x, int64_t kernel_h, int64_t kernel_w,
                                    int32_t stride_h, int32_t stride_w, int32_t pad_h, int32_t pad_w,
                                    px_tensor** out) {
    return guard("px_conv2d_backward_weight", [&] {
        TensorObj& d = get_tensor(dy, "dy");
        TensorObj& xi = get_tensor(x, "x");
        need_out(out);
        *out = publish(router::conv2d_backward_weight(d, xi, kernel_h, kernel_w,
                                                      window(0, 0, stride_h, stride_w, pad_h, pad_w)));
    });
}

px_status px_pool2d(px_op op, px_tensor* x, int32_t kernel_h, int32_t kernel_w, int32_t stride_h, int32_t stride_w,
                    int32_t pad_h, int32_t pad_w, px_tensor** out) {
    return guard("px_pool2d", [&] {
        TensorObj& xi = get_tensor(x, "x");
        need_out(out);
        *out = publish(router::pool2d(op, xi, window(kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w)));
    });
}

px_status px_pool2d_backward(px_op op, px_tensor* x, px_tensor* dy, int32_t kernel_h, int32_t kernel_w,
                             int32_t stride_h, int32_t stride_w, int32_t pad_h, int32_t pad_w, px_tensor** out) {
    return guard("px_pool2d_backward", [&] {
        TensorObj& xi = get_tensor(x, "x");
        TensorObj& d = get_tensor(dy, "dy");
        need_out(out);
        *out = publish(router::pool2d_backward(op, xi, d, window(kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w)));
    });
}

px_status px_bias_relu_max_pool2d(px_tensor* x, px_tensor* bias, int32_t kernel_h, int32_t kernel_w, int32_t stride_h,
                                  int32_t stride_w, int32_t pad_h, int32_t pad_w, px_tensor** out) {
    return guard("px_bias_relu_max_pool2d", [&] {
        TensorObj& xi = get_tensor(x, "x");
        TensorObj& b = get_tensor(bias, "bias");
        need_out(out);
        *out = publish(router::bias_relu_max_pool2d(xi, b, window(kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w)));
    });
}

px_status px_bias_relu_max_pool2d_backward(px_tensor* x, px_tensor* bias, px_tensor* dy, int32_t kernel_h,
                                           int32_t kernel_w, int32_t stride_h, int32_t stride_w, int32_t pad_h,
                                           int32_t pad_w, px_tensor** dx, px_tensor** dbias) {
    return guard("px_bias_relu_max_pool2d_backward", [&] {
        TensorObj& xi = get_tensor(x, "x");
        TensorObj& b = get_tensor(bias, "bias");
        TensorObj& d = get_tensor(dy, "dy");
        need_out(dx, "dx");
        need_out(dbias, "dbias");
        need_distinct({{dx, "dx"}, {dbias, "dbias"}});
        auto [gx, gb] = router::bias_relu_max_pool2d_backward(xi, b, d, window(kernel_h, kernel_w, stride_h, stride_w, pad_h, pad_w));
        publish_all({{gx, dx}, {gb, dbias}});
    });
}

px_status px_bias_add(px_tensor* x, px_tensor* bias, px_tensor** out) {
    return guard("px_bias_add", [&] {
        TensorObj& xi = get_tensor(x, "x");
        TensorObj& b = get_tensor(bias, "bias");
        need_out(out);
        *out = publish(router::bias_add(xi, b));
    });
}

px_status px_bias_grad(px_tensor* dy, px_tensor** out) {
    return guard("px_bias_grad", [&] {
        TensorObj& d = get_tensor(dy, "dy");
        need_out(out);
        *out = publish(router::bias_grad(d));
    });
}

px_status px_activation_backward(px_op op, px_tensor* y, px_tensor* dy, px_tensor** out) {
    return guard("px_activation_backward", [&] {
        TensorObj& yi = get_tensor(y, "y");
        TensorObj& d = get_tensor(dy, "dy");
        need_out(out);
        *out = publish(router::activation_backward(op, yi, d));
    });
}

px_status px_unary_alpha(px_op op, px_tensor* x, double alpha, px_tensor** out) {
    return guard("px_unary_alpha", [&] {
        TensorObj& xi = get_tensor(x, "x");
        need_out(out);
        *out = publish(router::unary_alpha(op, xi, alpha));
    });
}

px_status px_activation_input_backward(px_op op, px_tensor* x, px_tensor* dy, double alpha, px_tensor** out) {
    return guard("px_activation_input_backward", [&] {
        TensorObj& xi = get_tensor(x, "x");
        TensorObj& d = get_tensor(dy, "dy");
        need_out(out);
        *out = publish(router::activation_input_backward(op, xi, d, alpha));
    });
}

px_status px_take(px_tensor* table, px_tensor* indices, px_tensor** out) {
    return guard("px_take", [&] {
        TensorObj& t = get_tensor(table, "table");
        TensorObj& i = get_tensor(indices, "indices");
        need_out(out);
        *out = publish(router::take(t, i));
    });
}

px_status px_take_backward(px_tensor* dy, px_tensor* indices, int64_t rows, px_tensor** out) {
    return guard("px_take_backward", [&] {
        TensorObj& d = get_tensor(dy, "dy");
        TensorObj& i = get_tensor(indices, "indices");
        need_out(out);
        *out = publish(router::take_backward(d, i, rows));
    });
}

px_status px_log_softmax(px_tensor* x, px_tensor** out) {
    return guard("px_log_softmax", [&] {
        TensorObj& xi = get_tensor(x, "x");
        need_out(out);
        *out = publish(router::log_softmax(xi));
    });
}

px_status px_log_softmax_backward(px_tensor* y, px_tensor* dy, px_tensor** out) {
    return guard("px_log_softmax_backward", [&] {
        TensorObj& yi = get_tensor(y, "y");
        TensorObj& d = get_tensor(dy, "dy");
        need_out(out);
        *out = publish(router::log_softmax_backward(yi, d));
    });
}

px_status px_softmax_cross_entropy(px_tensor* logits, px_tensor* labels, px_tensor** out) {
    return guard("px_softmax_cross_entropy", [&] {
        TensorObj& l = get_tensor(logits, "logits");
        TensorObj& y = get_tensor(labels, "labels");
        need_out(out);
        *out = publish(router::softmax_cross_entropy(l, y));
    });
}

px_status px_softmax_cross_entropy_backward(px_tensor* logits, px_tensor* labels, px_tensor* dloss,
                                            px_tensor** out) {
    return guard("px_softmax_cross_entropy_backward", [&] {
        TensorObj& l = get_tensor(logits, "logits");
        TensorObj& y = get_tensor(labels, "labels");
        TensorObj& d = get_tensor(dloss, "dloss");
        need_out(out);
        *out = publish(router::softmax_cross_entropy_backward(l, y, d));
    });
}

px_status px_dropout(px_tensor* x, double p, uint64_t* seed, uint64_t* offset, px_tensor** out) {
    return guard("px_dropout", [&] {
        TensorObj& xi = get_tensor(x, "x");
        if (!seed || !offset) fail(PX_ERROR_INVALID_ARGUMENT, "'seed' and 'offset' must not be NULL");
        need_out(out);
        auto rt = xi.device().runtime.lock();
        if (!rt)  // as a copy's lookup of a device says it
            fail(PX_ERROR_NO_DEVICE, "the runtime of this tensor (on ", xi.device().label,
                 ") was destroyed; its random stream is gone");
        uint64_t s = 0, o = 0;
        *out = publish(router::dropout(PX_OP_DROPOUT, xi, p, s, o, rt.get()));
        *seed = s, *offset = o;
    });
}

px_status px_dropout_backward(px_tensor* dy, double p, uint64_t seed, uint64_t offset, px_tensor** out) {
    return guard("px_dropout_backward", [&] {
        TensorObj& d = get_tensor(dy, "dy");
        need_out(out);
        *out = publish(router::dropout(PX_OP_DROPOUT_BACKWARD, d, p, seed, offset, nullptr));
    });
}

px_status px_sgd_update(px_tensor* param, px_tensor* grad, px_tensor* momentum_buffer, double learning_rate,
                        double momentum, double weight_decay, double rescale) {
    return step_sgd("px_sgd_update", param, grad, momentum_buffer, learning_rate, momentum, weight_decay, rescale, false);
}

px_status px_nag_update(px_tensor* param, px_tensor* grad, px_tensor* momentum_buffer, double learning_rate,
                        double momentum, double weight_decay, double rescale) {
    return step_sgd("px_nag_update", param, grad, momentum_buffer, learning_rate, momentum, weight_decay, rescale, true);
}

px_status px_adam_update(px_tensor* param, px_tensor* grad, px_tensor* state, double learning_rate, double beta1,
                         double beta2, double epsilon, double weight_decay, double rescale, int64_t step,
                         int32_t decoupled) {
    return guard("px_adam_update", [&] {
        TensorObj& p = get_tensor(param, "param");
        TensorObj& g = get_tensor(grad, "grad");
        TensorObj& st = get_tensor(state, "state");
        router::AdamSettings s;
        s.lr = learning_rate, s.beta1 = beta1, s.beta2 = beta2, s.eps = epsilon, s.weight_decay = weight_decay;
        s.rescale = rescale, s.step = step, s.decoupled = decoupled != 0;
        router::adam_update(p, g, st, s);
    });
}

px_status px_batch_norm_stats(px_tensor* x, px_tensor** mean, px_tensor** var) {
    return guard("px_batch_norm_stats", [&] {
        TensorObj& xi = get_tensor(x, "x");
        need_out(mean, "mean");
        need_out(var, "var");
        need_distinct({{mean, "mean"}, {var, "var"}});
        auto [m, v] = router::batch_norm_stats(xi);
        publish_all({{m, mean}, {v, var}});
    });
}

px_status px_batch_norm(px_tensor* x, px_tensor* mean, px_tensor* var, px_tensor* gamma, px_tensor* beta, double eps,
                        px_tensor** out) {
    return guard("px_batch_norm", [&] {
        TensorObj& xi = get_tensor(x, "x");
        TensorObj& m = get_tensor(mean, "mean");
        TensorObj& v = get_tensor(var, "var");
        TensorObj& g = get_tensor(gamma, "gamma");
        TensorObj& b = get_tensor(beta, "beta");
        need_out(out);
        *out = publish(router::batch_norm(xi, m, v, g, b, eps));
    });
}

px_status px_batch_norm_backward(px_tensor* x, px_tensor* dy, px_tensor* mean, px_tensor* var, px_tensor* gamma,
                                 double eps, px_tensor** dx, px_tensor** dgamma, px_tensor** dbeta) {
    return guard("px_batch_norm_backward", [&] {
        TensorObj& xi = get_tensor(x, "x");
        TensorObj& d = get_tensor(dy, "dy");
        TensorObj& m = get_tensor(mean, "mean");
        TensorObj& v = get_tensor(var, "var");
        TensorObj& g = get_tensor(gamma, "gamma");
        need_out(dgamma, "dgamma");
        need_out(dbeta, "dbeta");
        need_distinct({{dx, "dx"}, {dgamma, "dgamma"}, {dbeta, "dbeta"}});
        const router::BatchNormGrads grads = router::batch_norm_backward(xi, d, m, v, g, eps, dx != nullptr);
        px_tensor* unused = nullptr;
        publish_all({{grads.dx, dx ? dx : &unused}, {grads.dgamma, dgamma}, {grads.dbeta, dbeta}});
    });
}

}  // extern "C"
