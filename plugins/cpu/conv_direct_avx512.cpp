// The direct convolution loops for the avx512 instruction set (see conv_direct.hpp).
#define PX_ISA isa_avx512
#define PX_ISA_NAME "avx512"
#define PX_VECTOR_BYTES 64
#include "conv_direct_loops.hpp"
