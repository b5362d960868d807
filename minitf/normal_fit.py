"""The constants of the float32 normal-distribution formulas: erfc's Chebyshev fit and GELU's
tanh form. ``minitf.ops.math_ops`` evaluates the formulas with numpy, ``minitf.native_elementwise``
compiles the same ones; both read the numbers here."""
import math

# erfc(z) = t exp(-z^2 - ERFC_FIT_SHIFT + t P(t)), t = 1 / (1 + z / 2), for z >= 0 (Numerical
# Recipes' Chebyshev fit, an absolute error below 1.2e-7): P's coefficients, highest first.
ERFC_FIT = (0.17087277, -0.82215223, 1.48851587, -1.13520398, 0.27886807, -0.18628806,
            0.09678418, 0.37409196, 1.00002368)
ERFC_FIT_SHIFT = 1.26551223

SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
SQRT_HALF = math.sqrt(0.5)
INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
GELU_CUBIC = 0.044715                        # tanh form: tanh(c (x + GELU_CUBIC x^3))
GELU_CUBIC_SLOPE = 3 * GELU_CUBIC * SQRT_2_OVER_PI   # its derivative's x^2 term
