// The raw OpenBLAS baselines call the OpenBLAS the CPU plugin loaded, the
// same library and kernels as the plugin's products: the plugin picks
// OpenBLAS's kernels as it loads it (plugins/cpu/openblas.hpp), and a bench
// linked to OpenBLAS would have loaded it first, with the kernels OpenBLAS
// picks alone.
#pragma once

#include <cblas.h>

namespace pxbench {

// cblas_sgemm of the process's OpenBLAS, found once the default runtime has
// loaded its plugins (loaded here, with OpenBLAS's own choice of kernels,
// when no CPU plugin loaded it); throws when there is none.
decltype(&cblas_sgemm) raw_sgemm();

}  // namespace pxbench
