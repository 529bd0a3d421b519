// What the CUDA kernels receive: an op with its operands resolved to device
// pointers, plus the device's launch context. Plain structs, compiled by both
// g++ (plugin.cpp) and nvcc (the kernel files).
#pragma once

#include <cstdint>

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <vector>

#include "plexus/plugin.h"
#include "plexus/plugin_kit.hpp"

namespace pxcuda {

struct Operand {
    int32_t dtype = 0;
    char* data = nullptr;  // device pointer: buffer base + offset
    int32_t ndim = 0;
    int64_t shape[PX_MAX_DIMS] = {};
    int64_t strides[PX_MAX_DIMS] = {};

    int64_t numel() const {
        int64_t n = 1;
        for (int i = 0; i < ndim; ++i) n *= shape[i];
        return n;
    }
};

union Attrs {
    px_binary_attrs binary;
    px_reduce_attrs reduce;
    px_matmul_attrs matmul;
    px_fill_attrs fill;
    px_arange_attrs arange;
    px_random_attrs random;
    px_gemm_attrs gemm;
    px_conv2d_attrs conv;
    px_pool2d_attrs pool;
    px_dropout_attrs dropout;
    px_sgd_attrs sgd;
    px_batch_norm_attrs batch_norm;
    px_adam_attrs adam;
    px_alpha_attrs alpha;
};

struct OpArgs {
    int32_t op = 0;
    int32_t num_inputs = 0;
    Operand in[plexus::kit::kMostOpInputs];
    Operand out;
    Operand out2;  // an optimizer step's momentum or state, or the fused pool gradient's db, when num_outputs is 2
    int32_t num_outputs = 1;
    Attrs attrs{};
    bool has_attrs = false;
};

// A failure a kernel finds while running (the CPU plugin throws for these).
// One per device in device memory; the first failure's details win, every
// failing op is marked in `failed_ops`, and the plugin reads it back at the
// next wait and clears it.
struct DeviceStatus {
    int32_t code;  // one of the status_* values
    int32_t op;    // the px_op that failed
    int64_t a, b, c;
    uint32_t failed_ops[8];  // bit op % 256 of word (op / 32) % 8: each op that failed
};
enum : int32_t {
    status_ok = 0,
    status_integer_division_by_zero = 1,
    status_label_out_of_range = 2,  // a = row, b = label, c = number of classes
    status_index_out_of_range = 3,  // a = position, b = index, c = the table's rows
};

// Allocates stream-ordered scratch memory from the device's pool.
struct ScratchSource {
    virtual void* allocate(uint64_t bytes) = 0;  // throws OutOfMemory
    virtual void release(void* p) = 0;           // ordered after the work queued so far
    virtual ~ScratchSource() = default;
};

// Everything a launch needs besides the op.
struct Launch {
    int device = 0;
    cudaStream_t stream = nullptr;
    cublasHandle_t blas = nullptr;
    DeviceStatus* status = nullptr;  // device memory
    int sm_count = 1;
    ScratchSource* scratch = nullptr;
};

// Scratch memory for one launch, released (stream-ordered) when it goes.
class Scratch {
public:
    Scratch(const Launch& l, uint64_t bytes) : src_(l.scratch), p_(bytes ? src_->allocate(bytes) : nullptr) {}
    ~Scratch() {
        if (p_) src_->release(p_);
    }
    Scratch(const Scratch&) = delete;
    Scratch& operator=(const Scratch&) = delete;
    template <class T>
    T* as() const {
        return static_cast<T*>(p_);
    }

private:
    ScratchSource* src_;
    void* p_;
};

// The kernels of each op family (kernels_*.cu, blas.cpp). Each queues its
// work on l.stream and returns; errors found while queuing throw.
void run_elementwise(const OpArgs& t, const Launch& l);  // binary, comparisons, unary, where
void run_reduce(const OpArgs& t, const Launch& l);       // sum, mean, max, min, argmax
void run_matmul(const OpArgs& t, const Launch& l);       // cuBLAS, batched
void run_gemm(const OpArgs& t, const Launch& l);         // cuBLAS with transposes
void run_data(const OpArgs& t, const Launch& l);         // copy, cast, fill, arange, random
void run_conv(const OpArgs& t, const Launch& l);         // conv2d and its gradients (im2col + cuBLAS)
void run_pool(const OpArgs& t, const Launch& l);         // max / average pooling and their gradients
void run_pool_fused(const OpArgs& t, const Launch& l);   // bias + relu + max pooling in one pass, and its gradient
void run_softmax(const OpArgs& t, const Launch& l);      // log-softmax, softmax cross-entropy
void run_nn_pointwise(const OpArgs& t, const Launch& l); // bias, activation gradients, dropout

// Row-major C = op(A) op(B) (each batch entry), through cuBLAS's column-major
// gemm: C^T = op(B)^T op(A)^T. Strides are in elements; a batch stride may be 0.
void gemm_row_major(const Launch& l, int32_t dtype, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k,
                    const void* a, int64_t lda, int64_t stride_a, const void* b, int64_t ldb, int64_t stride_b,
                    void* c, int64_t ldc, int64_t stride_c, int64_t batch, double beta, bool allow_tf32);

// The ops each kernel file runs, each named there once (kit::KernelTable);
// dispatch.cpp gathers them.
using Runner = void (*)(const OpArgs&, const Launch&);
using Kernels = std::vector<plexus::kit::Kernel<Runner>>;
// What a kernel written for every dtype, or every float, offers (the op
// table's row narrows it): ABI 1.0's dtypes and float16 and bfloat16.
constexpr uint32_t kAllDtypes = PX_DTYPES_ALL | PX_DTYPES_HALF;
constexpr uint32_t kFloatDtypes = PX_DTYPES_FLOAT | PX_DTYPES_HALF;
// Runs `t` by `float32_kernel`, its float16 and bfloat16 operands through
// float32 copies (kit::run_in_float32; the copies are stream-ordered scratch).
void run_in_float32(const OpArgs& t, const Launch& l, Runner float32_kernel);
// The kernel R, which runs float32 and float64, on every float dtype: the
// 16-bit floats through float32.
template <Runner R>
void through_float32(const OpArgs& t, const Launch& l) {
    if (plexus::kit::has_half_operand(t)) run_in_float32(t, l, R);
    else R(t, l);
}

Kernels elementwise_kernels();
Kernels reduce_kernels();
Kernels blas_kernels();  // matmul and gemm
Kernels data_kernels();
Kernels conv_kernels();
Kernels pool_kernels();
Kernels pool_fused_kernels();
Kernels softmax_kernels();
Kernels nn_pointwise_kernels();
Kernels batch_norm_kernels();
Kernels activation_kernels();
Kernels take_kernels();
Kernels optimizer_kernels();

bool kernel_supports(int32_t op, int32_t dtype);
void run_op(const OpArgs& t, const Launch& l);
// PX_OK, or the refusal create() gives when a kernel list names an op twice
// or one the op table lacks.
px_status refuse_wrong_kernel_lists(px_plugin_error* err);

}  // namespace pxcuda
