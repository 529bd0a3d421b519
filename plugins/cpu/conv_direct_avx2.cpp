// The direct convolution loops for the avx2 instruction set (see conv_direct.hpp).
#define PX_ISA isa_avx2
#define PX_ISA_NAME "avx2"
#define PX_VECTOR_BYTES 32
#include "conv_direct_loops.hpp"
