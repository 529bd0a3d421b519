// d2l's residual block, and ResNet-18 built from it for 28x28 images.
#include "plexus/nn.hpp"

namespace plexus::nn {

Residual::Residual(int64_t channels, bool use_1x1conv, int strides) : channels_(channels), strides_(strides) {
    conv1_ = register_child("conv1", Conv2D(channels, 3, strides, 1));
    conv2_ = register_child("conv2", Conv2D(channels, 3, 1, 1));
    if (use_1x1conv) conv3_ = register_child("conv3", Conv2D(channels, 1, strides));
    bn1_ = register_child("bn1", BatchNorm());
    bn2_ = register_child("bn2", BatchNorm());
}

Tensor Residual::forward(const Tensor& x) {
    Tensor y = (*bn1_)((*conv1_)(x)).relu();
    y = (*bn2_)((*conv2_)(y));
    return (y + (conv3_ ? (*conv3_)(x) : x)).relu();
}

std::string Residual::describe() const {
    return "Residual(" + std::to_string(channels_) + " channels" +
           (strides_ != 1 ? ", stride " + std::to_string(strides_) : std::string()) + (conv3_ ? ", 1x1 shortcut)" : ")");
}

Sequential resnet18(int64_t num_classes, int64_t in_channels) {
    auto stage = [](int64_t channels, bool first) {
        Sequential blk;
        blk.add(first ? Residual(channels) : Residual(channels, true, 2), Residual(channels));
        return blk;
    };
    Sequential net;
    net.add(Conv2D(64, 3, 1, 1, "", in_channels), BatchNorm(), Activation("relu"));
    net.add(stage(64, true), stage(128, false), stage(256, false), stage(512, false));
    net.add(GlobalAvgPool2D(), Dense(num_classes));
    return net;
}

}  // namespace plexus::nn
