// Random tensors from Philox4x32-10: element i uses counter (offset + i), so
// the values are the same whatever the thread count.
#include <cmath>

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
        px_philox4x32 x = px_philox4x32_10(r.offset + static_cast<uint64_t>(i), r.seed);
        double u1, u2;
        if constexpr (sizeof(T) == 4) u1 = px_uniform_float(x.v[0]), u2 = px_uniform_float(x.v[1]);
        else u1 = px_uniform_double(x.v[0], x.v[1]), u2 = px_uniform_double(x.v[2], x.v[3]);
        if (!normal) {
            T v = static_cast<T>(r.a + (r.b - r.a) * u1);
            o[i] = v < static_cast<T>(r.b) || r.a == r.b ? v : static_cast<T>(r.a);  // keep [a, b) after rounding
        } else {
            // Box-Muller; 1 - u1 lies in (0, 1], so the log is finite.
            double z = std::sqrt(-2.0 * std::log(1.0 - u1)) * std::cos(6.283185307179586 * u2);
            o[i] = static_cast<T>(r.a + r.b * z);
        }
    });
}

}  // namespace

void run_random(const OpTask& t) {
    if (t.out.dtype == PX_FLOAT32) return fill_random<float>(t);
    if (t.out.dtype == PX_FLOAT64) return fill_random<double>(t);
    throw KernelError("random numbers need float32 or float64");
}

}  // namespace pxcpu
