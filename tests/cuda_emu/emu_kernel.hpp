// The CUDA kernel language on the host, for the CUDA emulator (see
// emu_runtime.cpp). Force-included into the CUDA plugin's kernel files after
// translate_launches.cmake has turned each `kernel<<<grid, block, shared,
// stream>>>(args)` into `px_emu::Launcher(grid, block, shared, stream).run(
// <a call of kernel>, args)`. A launch copies its arguments, as CUDA does,
// and is queued on its stream (emu_streams.hpp); when the stream gets to it,
// every thread of every block runs on the thread running the stream's work.
//
// Threads run as plain calls when the kernel never waits for its block or
// warp; a kernel that does (__syncthreads, __shfl_xor_sync) runs each block's
// threads as fibers (Boost.Context) that meet at those points, so shared memory
// and shuffles behave as on a GPU. Launches run one at a time in the
// process, so shared memory is a function-static array that every block has
// to itself. (Nothing here is thread_local: LeakSanitizer's tracer crashed on
// the dynamic TLS blocks that thread_local arrays in a dlopen'd module make.)
#pragma once

#include <cuda_runtime.h>
#include <math.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <tuple>
#include <type_traits>

#include "emu_driver_scope.hpp"

namespace px_emu {

struct Indices {
    uint3 thread, block;
    dim3 block_dim, grid_dim;
};
extern Indices current;  // of the thread running now (one launch at a time)

void sync_block();
// Every lane of the warp offers `bits`; returns the bits lane ^ lane_mask offered.
uint64_t exchange_in_warp(uint64_t bits, int lane_mask);

class Launcher {
public:
    Launcher(dim3 grid, dim3 block, size_t shared_bytes = 0, cudaStream_t stream = nullptr)
        : grid_(grid), block_(block), shared_bytes_(shared_bytes), stream_(stream) {}
    template <class F, class... Args>
    void run(F&& call, Args&&... args) {
        DriverScope driver;  // a launch is the driver's work (emu_driver_scope.hpp)
        // Copied now: the kernel runs later, when its stream gets to it.
        launch([call = std::decay_t<F>(std::forward<F>(call)),
                params = std::make_tuple(std::decay_t<Args>(std::forward<Args>(args))...)] { std::apply(call, params); });
    }

private:
    void launch(std::function<void()> thread_body);
    dim3 grid_, block_;
    size_t shared_bytes_;
    cudaStream_t stream_;
};

}  // namespace px_emu

#undef __global__
#undef __device__
#undef __host__
#undef __shared__
#undef __forceinline__
#undef __launch_bounds__
#define __global__
#define __device__
#define __host__
#define __shared__ static
#define __forceinline__ inline
#define __launch_bounds__(...)

#define threadIdx (::px_emu::current.thread)
#define blockIdx (::px_emu::current.block)
#define blockDim (::px_emu::current.block_dim)
#define gridDim (::px_emu::current.grid_dim)

inline void __syncthreads() { px_emu::sync_block(); }
inline void __threadfence() {}

template <class T>
T __shfl_xor_sync(unsigned /*mask: full warps only*/, T value, int lane_mask, int /*width*/ = 32) {
    static_assert(sizeof(T) <= sizeof(uint64_t) && std::is_trivially_copyable<T>::value, "a shuffle moves <= 8 bytes");
    uint64_t bits = 0;
    std::memcpy(&bits, &value, sizeof(T));
    bits = px_emu::exchange_in_warp(bits, lane_mask);
    T out;
    std::memcpy(&out, &bits, sizeof(T));
    return out;
}

// Blocks run one at a time on one thread: atomics are plain reads and writes.
inline int atomicCAS(int* address, int compare, int value) {
    const int old = *address;
    if (old == compare) *address = value;
    return old;
}
inline int atomicExch(int* address, int value) {
    const int old = *address;
    *address = value;
    return old;
}
inline unsigned atomicOr(unsigned* address, unsigned value) {
    const unsigned old = *address;
    *address = old | value;
    return old;
}

// The device's integer and floating min and max, as CUDA declares them.
using std::max;
using std::min;
