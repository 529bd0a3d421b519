// plexus-bench's "resnet" group: d2l's ResNet-18 training step beside
// PyTorch's same network and recipe, measured in the same run.
#pragma once

#include <string>

#include "plexus/plexus.hpp"

namespace pxbench {

// One SGD step of nn::resnet18 on Fashion-MNIST batches of 64 and 256 (8
// with --quick), beside the PyTorch script's ResNet-18 on the same images.
void bench_resnet(plexus::Device dev, bool quick, bool json, const std::string& torch_script);

}  // namespace pxbench
