// The CPU kernels by op family (one file each).
#pragma once

#include <vector>

#include "plexus/plugin_kit.hpp"
#include "task.hpp"

namespace pxcpu {

using Runner = void (*)(const OpTask&);
// The ops one kernel file runs, each named there once (kit::KernelTable).
using Kernels = std::vector<plexus::kit::Kernel<Runner>>;
// What a kernel written for every dtype, or every float, offers (the op
// table's row narrows it): ABI 1.0's dtypes and float16 and bfloat16.
constexpr uint32_t kAllDtypes = PX_DTYPES_ALL | PX_DTYPES_HALF;
constexpr uint32_t kFloatDtypes = PX_DTYPES_FLOAT | PX_DTYPES_HALF;
// Runs `t` by `float32_kernel`, its float16 and bfloat16 operands through
// float32 copies (kit::run_in_float32; the copies are scratch of t's device).
void run_in_float32(const OpTask& t, Runner float32_kernel);
// The kernel R, which runs float32 and float64, on every float dtype: the
// 16-bit floats through float32.
template <Runner R>
void through_float32(const OpTask& t) {
    if (plexus::kit::has_half_operand(t)) run_in_float32(t, R);
    else R(t);
}

Kernels elementwise_kernels();
Kernels reduce_kernels();
Kernels matmul_kernels();  // matmul and gemm
Kernels data_kernels();
Kernels random_kernels();
Kernels conv_kernels();
Kernels pool_kernels();
Kernels pool_fused_kernels();
Kernels nn_pointwise_kernels();
Kernels dropout_kernels();
Kernels softmax_kernels();
Kernels batch_norm_kernels();
Kernels activation_kernels();
Kernels take_kernels();
Kernels optimizer_kernels();

void run_elementwise(const OpTask& t);  // binary, comparisons, unary, where
void run_reduce(const OpTask& t);       // sum, mean, max, min, argmax
// The sum of each column of a (rows, cols) array, as sum over axis 0 makes
// it: each column adds its rows in order, in float64.
void sum_columns(const float* a, int64_t rows, int64_t cols, float* out);
void sum_columns(const double* a, int64_t rows, int64_t cols, double* out);
void run_matmul(const OpTask& t);       // OpenBLAS gemm
void run_data(const OpTask& t);         // copy, cast, fill, arange
void run_random(const OpTask& t);       // Philox uniform / normal
void run_gemm(const OpTask& t);         // OpenBLAS gemm with transposes
void run_conv(const OpTask& t);         // conv2d and its gradients (direct loops, or im2col + gemm)
void run_pool(const OpTask& t);         // max / average pooling and their gradients
void run_pool_fused(const OpTask& t);   // bias + relu + max pooling in one pass, and its gradient
void run_nn_pointwise(const OpTask& t); // bias, activation gradients
void run_dropout(const OpTask& t);      // dropout and its gradient
void run_softmax(const OpTask& t);      // log-softmax, softmax cross-entropy

}  // namespace pxcpu
