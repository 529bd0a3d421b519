// Plexus C++ frontend, header-only over the C API (plexus.h): devices,
// tensors that live on them, explicit copies, and typed exceptions.
//
//   auto x = plexus::array({1, 2, 3});                 // on cpu(0)
//   auto y = x.copyto(plexus::try_gpu());              // a new tensor there
//   std::cout << (y + 2).exp() * y << "\n";            // computed on y's device
#pragma once

#include "plexus/cpp/errors.hpp"
#include "plexus/cpp/device.hpp"
#include "plexus/cpp/format.hpp"
#include "plexus/cpp/tensor.hpp"
#include "plexus/cpp/group.hpp"
#include "plexus/cpp/autograd.hpp"
#include "plexus/cpp/gradients.hpp"
#include "plexus/cpp/nn_ops.hpp"
#include "plexus/cpp/composite.hpp"
#include "plexus/cpp/trace.hpp"
