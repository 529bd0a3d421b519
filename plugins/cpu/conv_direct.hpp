// Stride-1 convolution without im2col, for layers with few taps (channels x
// kernel size; LeNet's have 25 and 54, and auto mode takes up to 576): there
// im2col writes many times the input, and a gemm with 6 or 16 rows runs far
// below the machine's speed.
//
// The trick: with the input plane flattened (row length W), output (y, x) of
// tap (i, j) reads input p + i*W + j where p = y*W + x. Computing outputs at
// every p, including the KW-1 columns past each row's end that are not
// outputs, makes every tap a shifted run of the flat plane: a vector loop
// with no index math. The caller copies each input into a zeroed scratch
// plane (padding included) with slack behind it, so whole vectors may run
// past the last output, and drops the extra columns afterwards.
//
// One difference from im2col, for non-finite inputs only: the weight
// gradient multiplies the columns past each row's end by a dy of 0, so an
// Inf or NaN input there makes that tap's gradient NaN where im2col leaves
// it finite. Such an input makes the loss non-finite anyway.
//
// The loops are compiled three times (conv_direct_{baseline,avx2,avx512}.cpp,
// each in its own namespace so the linker never mixes them) and the best the
// CPU runs is chosen at start-up; PLEXUS_CPU_ISA may ask for a lower one.
#pragma once

#include <cstdint>
#include <string>

namespace pxcpu {

// One image's flattened correlation.
struct FlatConv {
    int64_t channels;   // input planes
    int64_t plane;      // elements between input planes (>= the plane's size)
    int64_t row;        // input row length W; output rows use it too
    int64_t kh, kw;     // taps
    int64_t outputs;    // output planes
    int64_t out_plane;  // outputs computed per plane: (OH-1)*W + OW rounded up to whole vectors
};

// Several images' planes one after another, for the weight gradient: image
// b's input planes start at in + b*in_image, its dy planes at dy + b*dy_image.
struct FlatStack {
    int64_t images;
    int64_t in_image, dy_image;
};

// Entry points of one instruction set. Every input plane must be readable up
// to out_plane + (kh-1)*row + kw - 1 elements from its start (the slack).
template <class T>
struct DirectConvOps {
    // out[o][p] = sum over c, i, j of w[o][c][i][j] * in[c][p + i*row + j], p < out_plane.
    void (*correlate)(const T* in, const T* w, T* out, const FlatConv& g);
    // acc[(o*taps + t)*lanes + l] += lane l's share of the sum over the stack's
    // images and p < out_plane of dy[o][p] * in[c][p + i*row + j], t the tap
    // (c, i, j). dy must be 0 wherever p is not an output; the caller adds
    // each tap's lanes up into dw.
    void (*weight_grad)(const T* in, const T* dy, T* acc, const FlatConv& g, const FlatStack& s);
};

struct DirectConvIsa {
    const char* name;
    int lanes_f32, lanes_f64;
    DirectConvOps<float> f32;
    DirectConvOps<double> f64;
};

// The instruction set in use (the best this CPU runs, unless lowered).
const DirectConvIsa& direct_conv_isa();
template <class T>
const DirectConvOps<T>& direct_conv_ops();
template <class T>
int direct_conv_lanes();
// Chooses by name ("baseline", "avx2", "avx512"), or the best when name is
// empty; false with `why` set when unknown or not supported by this CPU.
bool select_direct_conv_isa(const std::string& name, std::string& why);

// PLEXUS_CPU_CONV: "auto" (the default: the direct loops where they beat
// im2col + gemm), "direct" (wherever they apply: stride 1) or "im2col".
// false with `why` set for any other value.
bool select_conv_path(const std::string& name, std::string& why);

struct OpTask;
// Runs a conv2d op through the direct loops and returns true, or returns
// false, having done nothing, when the op is not theirs.
bool run_conv_direct(const OpTask& t);

}  // namespace pxcpu
