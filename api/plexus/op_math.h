/* The scalar formulas of the activation and math rows of the op table (op_table.h)
 * as every plugin computes them: in float64, each product and sum rounded
 * on its own (px_mul_rn, px_add_rn), the result rounded once to the
 * tensor's dtype. Two plugins that use these functions agree to the last
 * bit wherever their math libraries' erfc and exp do. Pure C99; usable in
 * CUDA device code. Not part of the plugin table: a plugin compiles it in
 * (host code with -ffp-contract=off, as philox.h says). */
#ifndef PLEXUS_OP_MATH_H
#define PLEXUS_OP_MATH_H

#include <math.h>

#include "plexus/philox.h" /* px_mul_rn, px_add_rn */
#include "plexus/types.h"  /* the px_op numbers */

#if defined(__CUDACC__)
#define PX_OP_MATH_FN static inline __host__ __device__
#else
#define PX_OP_MATH_FN static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* GELU, the exact (erf) form: x Phi(x), with Phi(x) = erfc(-x / sqrt 2) / 2;
 * 1 + erf(x / sqrt 2) would cancel below about -6 (gelu(-9) = -1.0e-18,
 * not -0). */
PX_OP_MATH_FN double px_gelu(double x) { return px_mul_rn(px_mul_rn(0.5, x), erfc(px_mul_rn(-x, 0.70710678118654752440))); }

/* d gelu / dx = Phi(x) + x phi(x), phi the standard normal density. */
PX_OP_MATH_FN double px_gelu_grad(double x) {
    const double density = px_mul_rn(px_mul_rn(x, 0.39894228040143267794), exp(px_mul_rn(px_mul_rn(-0.5, x), x)));
    return px_add_rn(px_mul_rn(0.5, erfc(px_mul_rn(-x, 0.70710678118654752440))), density);
}

/* Sigmoid: 1 / (1 + e^-x); below -709.78, where e^-x overflows and gave 0,
 * e^x (1 + e^x is 1 there), down to float64's smallest subnormals. */
PX_OP_MATH_FN double px_sigmoid(double x) {
    const double s = 1.0 / px_add_rn(1.0, exp(-x));
    return s == 0.0 && x > -746.0 ? exp(x) : s;
}

/* SiLU: x sigmoid(x), and its gradient s (1 + x (1 - s)), s = sigmoid(x).
 * Below -709 (e^-x overflows; sigmoid(x) is e^x to the last bit) they are
 * x e^x and (1 + x) e^x, taken as -e^(x + log(-x)) and -e^(x + log(-1 - x)):
 * still a float64 below -745.13, where e^x alone is 0. */
PX_OP_MATH_FN double px_silu(double x) {
    if (x < -709.0) return -exp(x + log(-x));
    return x / px_add_rn(1.0, exp(-x));
}
PX_OP_MATH_FN double px_silu_grad(double x) {
    if (x < -709.0) return -exp(x + log(-1.0 - x));
    const double s = px_sigmoid(x);
    return px_mul_rn(s, px_add_rn(1.0, px_mul_rn(x, px_add_rn(1.0, -s))));
}

/* Leaky ReLU: x where x > 0 (and NaN stays NaN, as PyTorch), else alpha x;
 * its gradient passes dy where x > 0, else alpha dy. */
PX_OP_MATH_FN double px_leaky_relu(double x, double alpha) { return x > 0 || x != x ? x : px_mul_rn(alpha, x); }
PX_OP_MATH_FN double px_leaky_relu_backward(double x, double dy, double alpha) {
    return x > 0 ? dy : px_mul_rn(alpha, dy);
}

/* Softplus: log(1 + exp(x)) as max(x, 0) + log1p(exp(-|x|)), which neither
 * overflows for large x nor rounds small values to 0; NaN stays NaN. Its
 * gradient is sigmoid(x), as e^x / (1 + e^x) below 0, where e^-x would
 * overflow (below -709.78) and give 0 instead of e^x. */
PX_OP_MATH_FN double px_softplus(double x) { return px_add_rn(x > 0 ? x : 0.0, log1p(exp(-fabs(x)))); }
PX_OP_MATH_FN double px_softplus_grad(double x) {
    if (x >= 0) return 1.0 / px_add_rn(1.0, exp(-x));
    return exp(x) / px_add_rn(1.0, exp(x));
}

/* The rows these formulas compute, which a plugin offers through one kernel. */
#define PX_OP_MATH_ROWS                                                                                              \
    PX_OP_GELU, PX_OP_SILU, PX_OP_LEAKY_RELU, PX_OP_SOFTPLUS, PX_OP_GELU_BACKWARD, PX_OP_SILU_BACKWARD,             \
        PX_OP_LEAKY_RELU_BACKWARD, PX_OP_SOFTPLUS_BACKWARD, PX_OP_SIN, PX_OP_COS, PX_OP_TAN, PX_OP_SINH, PX_OP_COSH, \
        PX_OP_LOG1P, PX_OP_EXPM1, PX_OP_SIGN, PX_OP_FLOOR, PX_OP_CEIL, PX_OP_ROUND, PX_OP_SIN_BACKWARD,              \
        PX_OP_COS_BACKWARD, PX_OP_TAN_BACKWARD, PX_OP_SINH_BACKWARD, PX_OP_COSH_BACKWARD, PX_OP_LOG1P_BACKWARD,      \
        PX_OP_EXPM1_BACKWARD

/* NumPy's sign: -1, 0 or 1 (+0 for either zero), NaN staying NaN. */
PX_OP_MATH_FN double px_sign(double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : x == 0 ? 0.0 : x; }

/* The elementwise math functions and their gradients (op_table.h, ABI 1.9),
 * one switch for both plugins' kernels: `v` is the operand (x, or y for the
 * gradients of tan and expm1), `dy` the gradient rows' second one. */
PX_OP_MATH_FN double px_math(int32_t op, double v, double dy) {
    switch (op) {
    case PX_OP_SIN: return sin(v);
    case PX_OP_COS: return cos(v);
    case PX_OP_TAN: return tan(v);
    case PX_OP_SINH: return sinh(v);
    case PX_OP_COSH: return cosh(v);
    case PX_OP_LOG1P: return log1p(v);
    case PX_OP_EXPM1: return expm1(v);
    case PX_OP_SIGN: return px_sign(v);
    case PX_OP_FLOOR: return floor(v);
    case PX_OP_CEIL: return ceil(v);
    case PX_OP_ROUND: return rint(v); /* half to even in the default rounding mode */
    case PX_OP_SIN_BACKWARD: return px_mul_rn(dy, cos(v));
    case PX_OP_COS_BACKWARD: return -px_mul_rn(dy, sin(v));
    case PX_OP_TAN_BACKWARD: return px_mul_rn(dy, px_add_rn(1.0, px_mul_rn(v, v)));
    case PX_OP_SINH_BACKWARD: return px_mul_rn(dy, cosh(v));
    case PX_OP_COSH_BACKWARD: return px_mul_rn(dy, sinh(v));
    case PX_OP_LOG1P_BACKWARD: return dy / px_add_rn(1.0, v);
    case PX_OP_EXPM1_BACKWARD: return px_mul_rn(dy, px_add_rn(v, 1.0));
    default: return NAN; /* not a row of px_math's: no plugin registers one (PX_OP_MATH_ROWS) */
    }
}

#ifdef __cplusplus
}
#endif

#endif /* PLEXUS_OP_MATH_H */
