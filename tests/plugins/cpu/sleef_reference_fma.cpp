// SLEEF declares its FMA scalar copies only where the compiler targets FMA
// (FP_FAST_FMA), so this file alone is built with -mfma (tests/CMakeLists.txt).
// clang targets FMA there but, unlike GCC, does not say so through <cmath>.
#include <cmath>
#if defined(__FMA__) && !defined(FP_FAST_FMA)
#define FP_FAST_FMA 1
#endif
#include "sleef_reference.hpp"

namespace pxtest {

const SleefReference& sleef_finz() {
    static const SleefReference finz{[](double x) { return Sleef_finz_expd1_u10purecfma(x); },
                                     [](double x) { return Sleef_finz_logd1_u10purecfma(x); },
                                     [](double x) { return Sleef_finz_tanhd1_u10purecfma(x); },
                                     [](double x) { return Sleef_finz_cosd1_u10purecfma(x); }};
    return finz;
}

}  // namespace pxtest
