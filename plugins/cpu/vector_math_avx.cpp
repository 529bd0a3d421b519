// vector_math's loops for AVX (built with -mavx; see vector_math_loops.hpp).
#include "vector_math_loops.hpp"

namespace pxcpu {
namespace {
struct Avx {
    static __m256d load(const double* p) { return _mm256_loadu_pd(p); }
    static void store(double* p, __m256d v) { _mm256_storeu_pd(p, v); }
};
}  // namespace

const MathIsa math_avx = PX_MATH_TABLE(Avx, 4, avx);

}  // namespace pxcpu
