// vector_math's loops for AVX2 and FMA (built with -mavx2 -mfma; see vector_math_loops.hpp).
#include "vector_math_loops.hpp"

namespace pxcpu {
namespace {
struct Avx2 {
    static __m256d load(const double* p) { return _mm256_loadu_pd(p); }
    static void store(double* p, __m256d v) { _mm256_storeu_pd(p, v); }
};
}  // namespace

const MathIsa math_avx2 = PX_MATH_TABLE(Avx2, 4, finz, avx2, purecfma);

}  // namespace pxcpu
