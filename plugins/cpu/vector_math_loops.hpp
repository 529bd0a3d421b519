// vector_math's loops, compiled once per instruction set: each
// vector_math_<isa>.cpp is built with that set's flags (SLEEF declares its
// vector functions only where the compiler targets their set) and fills in
// its MathIsa table. The loops are instantiated on a type each file keeps in
// an anonymous namespace, so the linker never mixes the copies.
#pragma once

#include <immintrin.h>
#include <sleef.h>

#include <cstdint>

#include "vector_math.hpp"

namespace pxcpu {

// One instruction set's float64 loops, indexed by MathFn.
struct MathIsa {
    void (*map[4])(const double* x, double* y, int64_t n);
};
extern const MathIsa math_avx512, math_avx, math_sse2;

// y[i] = Vector over whole vectors of Isa, then SLEEF's scalar copy (purec,
// which computes the same bits as its vector copies) for the last few.
template <class Isa, int Lanes, auto Vector, auto Scalar>
void map_loop(const double* x, double* y, int64_t n) {
    int64_t i = 0;
    for (; i + Lanes <= n; i += Lanes) Isa::store(y + i, Vector(Isa::load(x + i)));
    for (; i < n; ++i) y[i] = Scalar(x[i]);
}

// The table for one instruction set, whose SLEEF functions are named
// <fn>d<lanes>_u10<suffix>.
#define PX_MATH_TABLE(ISA, LANES, SUFFIX)                                                        \
    {{map_loop<ISA, LANES, Sleef_cinz_expd##LANES##_u10##SUFFIX, Sleef_cinz_expd1_u10purec>,   \
      map_loop<ISA, LANES, Sleef_cinz_logd##LANES##_u10##SUFFIX, Sleef_cinz_logd1_u10purec>,   \
      map_loop<ISA, LANES, Sleef_cinz_tanhd##LANES##_u10##SUFFIX, Sleef_cinz_tanhd1_u10purec>, \
      map_loop<ISA, LANES, Sleef_cinz_cosd##LANES##_u10##SUFFIX, Sleef_cinz_cosd1_u10purec>}}

}  // namespace pxcpu
