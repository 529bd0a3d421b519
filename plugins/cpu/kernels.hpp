// The CPU kernels by op family (one file each).
#pragma once

#include "task.hpp"

namespace pxcpu {

void run_elementwise(const OpTask& t);  // binary, comparisons, unary, where
void run_reduce(const OpTask& t);       // sum, mean, max, min, argmax
void run_matmul(const OpTask& t);       // OpenBLAS gemm
void run_data(const OpTask& t);         // copy, cast, fill, arange
void run_random(const OpTask& t);       // Philox uniform / normal

}  // namespace pxcpu
