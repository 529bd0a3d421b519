// vector_math's loops, compiled once per instruction set: each
// vector_math_<isa>.cpp is built with that set's flags (SLEEF declares its
// vector functions only where the compiler targets their set) and fills in
// its MathIsa table. The loops are instantiated on a type each file keeps in
// an anonymous namespace, so the linker never mixes the copies.
#pragma once

#include <immintrin.h>

#include <cmath>  // first: <sleef.h> declares its FMA copies where math.h defines FP_FAST_FMA
#include <cstdint>

#include <sleef.h>

#include "vector_math.hpp"

namespace pxcpu {

// One instruction set's float64 loops of SLEEF's functions, indexed by
// MathFn (those before sigmoid, which vector_math.cpp makes from exp).
struct MathIsa {
    void (*map[static_cast<int>(MathFn::sigmoid)])(const double* x, double* y, int64_t n);
};
extern const MathIsa math_avx512, math_avx2, math_sse2;

// y[i] = Vector over whole vectors of Isa, then SLEEF's scalar copy of the
// same kind (which computes the same bits) for the last few.
template <class Isa, int Lanes, auto Vector, auto Scalar>
void map_loop(const double* x, double* y, int64_t n) {
    int64_t i = 0;
    for (; i + Lanes <= n; i += Lanes) Isa::store(y + i, Vector(Isa::load(x + i)));
    for (; i < n; ++i) y[i] = Scalar(x[i]);
}

// The table for one instruction set, whose SLEEF functions are named
// Sleef_<kind>_<fn>d<lanes>_u10<suffix>, and whose scalar copies for the
// tail Sleef_<kind>_<fn>d1_u10<tail>.
#define PX_MATH_TABLE(ISA, LANES, KIND, SUFFIX, TAIL)                                                  \
    {{map_loop<ISA, LANES, Sleef_##KIND##_expd##LANES##_u10##SUFFIX, Sleef_##KIND##_expd1_u10##TAIL>,   \
      map_loop<ISA, LANES, Sleef_##KIND##_logd##LANES##_u10##SUFFIX, Sleef_##KIND##_logd1_u10##TAIL>,   \
      map_loop<ISA, LANES, Sleef_##KIND##_tanhd##LANES##_u10##SUFFIX, Sleef_##KIND##_tanhd1_u10##TAIL>, \
      map_loop<ISA, LANES, Sleef_##KIND##_cosd##LANES##_u10##SUFFIX, Sleef_##KIND##_cosd1_u10##TAIL>}}

}  // namespace pxcpu
