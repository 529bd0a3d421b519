// SLEEF's scalar float64 functions of the kind the CPU plugin's vector loops
// use on its instruction set (plugins/cpu/vector_math.hpp): "finz", with
// fused multiply-adds, for its avx2 and avx512 loops; "cinz", without, for
// its baseline loops. The references its results must equal bit for bit.
#pragma once

#include <cmath>  // first: <sleef.h> declares its FMA copies where math.h defines FP_FAST_FMA
#include <string>

#include <sleef.h>

#include "plexus/plexus.hpp"

namespace pxtest {

struct SleefReference {
    double (*exp)(double);
    double (*log)(double);
    double (*tanh)(double);
    double (*cos)(double);
};

// The finz kind, from a file built with FMA (sleef_reference_fma.cpp): call
// it only on a CPU that has FMA.
const SleefReference& sleef_finz();

// The kind cpu(0)'s loops use; its name says which loops those are.
inline const SleefReference& sleef_reference() {
    static const SleefReference cinz{[](double x) { return Sleef_cinz_expd1_u10purec(x); },
                                     [](double x) { return Sleef_cinz_logd1_u10purec(x); },
                                     [](double x) { return Sleef_cinz_tanhd1_u10purec(x); },
                                     [](double x) { return Sleef_cinz_cosd1_u10purec(x); }};
    const std::string name = plexus::device_info(plexus::cpu()).name;
    return name.find("baseline loops") != std::string::npos ? cinz : sleef_finz();
}

}  // namespace pxtest
