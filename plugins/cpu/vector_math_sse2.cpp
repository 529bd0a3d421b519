// vector_math's loops for SSE2 (which every x86-64 CPU runs; see vector_math_loops.hpp).
#include "vector_math_loops.hpp"

namespace pxcpu {
namespace {
struct Sse2 {
    static __m128d load(const double* p) { return _mm_loadu_pd(p); }
    static void store(double* p, __m128d v) { _mm_storeu_pd(p, v); }
};
}  // namespace

const MathIsa math_sse2 = PX_MATH_TABLE(Sse2, 2, cinz, sse2, purec);

}  // namespace pxcpu
