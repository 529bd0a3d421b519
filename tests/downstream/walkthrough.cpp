// The seeds' walkthrough as an application of an installed Plexus: tensors
// on the best device, explicit copies, the mismatch error, then a small
// network trained with autograd, saved and loaded. Exits 1 on any wrong value.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>

#include <plexus/nn.hpp>
#include <plexus/plexus.hpp>

using namespace plexus;

namespace {
int failures = 0;
void expect(bool ok, const char* what) {
    std::printf("%s  %s\n", ok ? "ok  " : "FAIL", what);
    failures += !ok;
}
}  // namespace

int main() try {
    Device dev = try_gpu();
    std::cout << "devices: " << num_gpus() << " GPU(s); using " << dev << "\n";

    Tensor x = array({1, 2, 3});
    expect(x.device() == cpu(0), "array() makes tensors on cpu(0)");
    Tensor y = x.copyto(dev);
    Tensor z = x.as_in_context(dev);
    expect(y.device() == dev && !y.is(x), "copyto() always makes a new tensor on the target");
    expect(z.as_in_context(dev).is(z), "as_in_context() returns the tensor itself when it is there");
    auto v = ((z + 2).exp() + y).to_vector<float>();
    expect(std::fabs(v[2] - float(std::exp(5.0) + 3)) < 1e-3f, "(z + 2).exp() + y");
    std::ostringstream printed;
    printed << (z + 2).exp() + y;
    expect(printed.str().rfind("[ 21.085537  56.59815  151.41316 ]", 0) == 0, "printing as the seed shows");
    if (dev != cpu(0)) {
        bool threw = false;
        try {
            x + y;
        } catch (const DeviceMismatchError&) {
            threw = true;
        }
        expect(threw, "x + y across devices is an error, not a silent copy");
    }

    // y = 2 x0 - 3 x1 + 1, learned by a Dense layer.
    nn::Sequential net;
    net.add(nn::Dense(1));
    net.initialize(dev);
    nn::Trainer trainer(net.collect_params(), "sgd", {{"learning_rate", 0.1}});
    Tensor features = random_normal({256, 2}, 0, 1, dev);
    auto fv = features.to_vector<float>();
    std::vector<float> lv;
    for (size_t i = 0; i < fv.size(); i += 2) lv.push_back(2 * fv[i] - 3 * fv[i + 1] + 1);
    Tensor labels = array(lv, {256, 1}, dev);
    float loss = 0;
    for (int epoch = 0; epoch < 200; ++epoch) {
        Tensor l;
        {
            auto scope = autograd::record();
            Tensor d = net(features) - labels;
            l = (d * d).mean();
        }
        l.backward();
        trainer.step(1);
        loss = l.item<float>();
    }
    auto w = net[0].weight().data().to_vector<float>();
    expect(loss < 1e-4f && std::fabs(w[0] - 2) < 1e-2f && std::fabs(w[1] + 3) < 1e-2f, "Dense learns 2, -3");
    expect(net[0].weight().data().device() == dev, "parameters live on the training device");

    net.save_parameters("downstream.params");
    nn::Sequential again;
    again.add(nn::Dense(1, "", 2));
    again.load_parameters("downstream.params", dev);
    auto w2 = again[0].weight().data().to_vector<float>();
    expect(w2 == w, "load_parameters() restores what save_parameters() wrote");

    std::cout << (failures ? "walkthrough: FAILED\n" : "walkthrough: all good\n");
    return failures ? 1 : 0;
} catch (const plexus::Error& e) {
    std::cerr << "walkthrough: " << e.what() << "\n";
    return 1;
}
