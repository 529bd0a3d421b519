// vector_math's loops for AVX-512 (built with -mavx512f -mfma; see vector_math_loops.hpp).
#include "vector_math_loops.hpp"

namespace pxcpu {
namespace {
struct Avx512 {
    static __m512d load(const double* p) { return _mm512_loadu_pd(p); }
    static void store(double* p, __m512d v) { _mm512_storeu_pd(p, v); }
};
}  // namespace

const MathIsa math_avx512 = PX_MATH_TABLE(Avx512, 8, finz, avx512f, purecfma);

}  // namespace pxcpu
