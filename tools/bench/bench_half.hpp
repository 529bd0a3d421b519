// plexus-bench's "half" group: bfloat16 and float16 figures, each beside a
// baseline measured in the same run.
#pragma once

#include "plexus/plexus.hpp"

namespace pxbench {

// On a CPU: bfloat16 add beside a raw loop over the same bytes, bfloat16 and
// float16 products beside raw cblas_sgemm (Debian's OpenBLAS has no
// cblas_sbgemm). On any device: LeNet's training batches with the layers in
// bfloat16 and float16 (nn::Autocast) beside the same in float32.
void bench_half(plexus::Device dev, bool quick, bool json);

}  // namespace pxbench
