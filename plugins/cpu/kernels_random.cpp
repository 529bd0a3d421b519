// Random tensors from Philox4x32-10: element i uses counter (offset + i), so
// the values are the same whatever the thread count.
#include "kernel_util.hpp"
#include "kernels.hpp"
#include "plexus/philox.h"

namespace pxcpu {
namespace {

template <class T>
void fill_random(const OpTask& t) {
    const px_random_attrs& r = t.attrs.random;
    T* o = reinterpret_cast<T*>(t.out.data);
    const bool normal = t.op == PX_OP_RANDOM_NORMAL;
    parallel_for(t.out.numel(), [&](int64_t i) {
        T v = static_cast<T>(px_random_value(r.seed, r.offset, i, sizeof(T) == 8, normal, r.a, r.b));
        // A uniform draw stays in [a, b) after rounding to T.
        o[i] = normal || v < static_cast<T>(r.b) || r.a == r.b ? v : static_cast<T>(r.a);
    });
}

}  // namespace

void run_random(const OpTask& t) {
    if (t.out.dtype == PX_FLOAT32) return fill_random<float>(t);
    if (t.out.dtype == PX_FLOAT64) return fill_random<double>(t);
    throw KernelError("random numbers need float32 or float64");
}

}  // namespace pxcpu
