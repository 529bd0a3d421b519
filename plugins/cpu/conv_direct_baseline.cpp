// The direct convolution loops for the baseline instruction set (see conv_direct.hpp).
#define PX_ISA isa_baseline
#define PX_ISA_NAME "baseline"
#define PX_VECTOR_BYTES 16
#include "conv_direct_loops.hpp"
