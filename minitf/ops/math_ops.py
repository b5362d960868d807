"""Element-wise math: arithmetic, comparisons and unary functions.

Kink conventions follow TensorFlow and are tested: relu'(0) = 0, abs'(0) = 0,
maximum/minimum ties send the whole gradient to the first argument, clip_by_value passes the
gradient at its bounds.
"""
import importlib
import math

import numpy

from .. import backend as B
from .. import dtypes
from .. import native_elementwise, native_nn
from ..normal_fit import (ERFC_FIT, ERFC_FIT_SHIFT, GELU_CUBIC, GELU_CUBIC_SLOPE, INV_SQRT_2PI,
                          SQRT_2_OVER_PI, SQRT_HALF)
from ..tensor import Tensor
from ._samples import away, pos, u
from .convert import convert_to_tensor, operand_pair
from .registry import apply, apply1, apply2, as_keras_layer, defop, helper


def _x(x):
    return x if isinstance(x, Tensor) else convert_to_tensor(x)


# --- registration helpers --------------------------------------------------------------------

def unary(name, forward, vjp, save=("x",), samples=None, smooth=True, jvp="elementwise",
          kink=None, **kw):
    """Register an element-wise one-input op; ``vjp(F, g, x, y)`` gets the saved arrays."""
    samples = samples or (lambda: [((u(3, 4),), {})])
    save = tuple(0 if s == "x" else s for s in save)
    rule = None if vjp is None else (lambda F, g, xs, y: (vjp(F, g, xs[0] if xs else None, y),))
    public = defop(name, forward, arity=1, vjp=rule, jvp=jvp if vjp else None, save=save,
                   samples=samples if vjp else None, smooth=smooth, kink=kink, elementwise=True,
                   **kw)
    op = public.op

    def fast(x, name=None):
        if isinstance(x, Tensor):
            return apply1(op, x)
        try:
            return apply1(op, convert_to_tensor(x))
        except TypeError:
            return as_keras_layer(fast, (x,), {})

    fast.__name__ = fast.__qualname__ = public.__name__
    fast.__doc__ = public.__doc__
    fast.op = op
    from .registry import TENSOR
    setattr(TENSOR, name, fast)
    return fast


def binary(name, forward, vjp, save=(0, 1), samples=None, smooth=True, jvp="elementwise",
           kink=None, **kw):
    """Register a broadcasting two-input op; operands follow ``operand_pair``'s dtype rules."""
    samples = samples or (lambda: [((u(3, 4), u(3, 4)), {}), ((u(3, 4), u(4)), {})])
    public = defop(name, forward, arity=2, vjp=vjp, jvp=jvp if vjp else None, save=save,
                   samples=samples if vjp else None, smooth=smooth, kink=kink, elementwise=True,
                   **kw)
    op = public.op

    def fast(x, y, name=None):
        if not (isinstance(x, Tensor) and isinstance(y, Tensor)
                and x._value.dtype is y._value.dtype):
            try:
                x, y = operand_pair(op.name, x, y)
            except TypeError:
                return as_keras_layer(fast, (x, y), {})
        return apply2(op, x, y)

    fast.__name__ = fast.__qualname__ = public.__name__
    fast.__doc__ = public.__doc__
    fast.op = op
    from .registry import TENSOR
    setattr(TENSOR, name, fast)
    return fast


def _xp():
    return B.xp


# --- arithmetic ------------------------------------------------------------------------------

def _add(x, y):
    """x + y with broadcasting."""
    return B.xp.add(x, y)


add = binary("add", _add, lambda F, g, x, y: (g, g), save=(), jvp="linear", type="AddV2",
             aliases=("Add",), out_forward=lambda out, x, y: B.xp.add(x, y, out=out))
subtract = binary("subtract", lambda x, y: B.xp.subtract(x, y),
                  lambda F, g, x, y: (g, -g), save=(), jvp="linear", type="Sub",
                  out_forward=lambda out, x, y: B.xp.subtract(x, y, out=out))


def _mul_vjp(F, g, x, y):
    a, b = x
    return (g * b if F.needs[0] else None, g * a if F.needs[1] else None)


multiply = binary("multiply", lambda x, y: B.xp.multiply(x, y), _mul_vjp, type="Mul",
                  out_forward=lambda out, x, y: B.xp.multiply(x, y, out=out))


def _div_vjp(F, g, x, y):
    a, b = x
    ga = g / b if F.needs[0] else None
    gb = -g * a / (b * b) if F.needs[1] else None
    return ga, gb


divide = binary("divide", lambda x, y: B.xp.true_divide(x, y), _div_vjp, type="RealDiv",
                aliases=("truediv", "Div"),
                samples=lambda: [((u(3, 4), away(3, 4)), {}), ((u(2, 3), away(3)), {})])


def _pow_vjp(F, g, x, y):
    # d/dx x^p = p x^(p-1); d/dp x^p = x^p log(x), taken as 0 where x <= 0 (TF's convention).
    a, p = x
    ga = g * p * F.pow(a, p - 1) if F.needs[0] else None
    gp = None
    if F.needs[1]:
        safe = F.where(a > 0, a, F.ones_like(a))
        gp = g * y * F.where(a > 0, F.log(safe), F.zeros_like(a))
    return ga, gp


def _pow_forward(x, y):
    """x ** y element-wise."""
    return B.xp.power(x, y)


pow = binary("pow", _pow_forward, _pow_vjp, save=(0, 1, "out"),  # noqa: A001 - TF's name
             samples=lambda: [((pos(3, 4), u(3, 4)), {}), ((pos(2, 3), u(3)), {})])


def _max_vjp(F, g, x, y):
    # Ties send the gradient to the first argument (TF: mask = x >= y).
    a, b = x
    mask = a >= b
    return (F.where(mask, g, F.zeros_like(g)) if F.needs[0] else None,
            F.where(mask, F.zeros_like(g), g) if F.needs[1] else None)


def _min_vjp(F, g, x, y):
    a, b = x
    mask = a <= b
    return (F.where(mask, g, F.zeros_like(g)) if F.needs[0] else None,
            F.where(mask, F.zeros_like(g), g) if F.needs[1] else None)


maximum = binary("maximum", lambda x, y: B.xp.maximum(x, y), _max_vjp, smooth=False,
                 kink="ties: the whole gradient goes to x",
                 samples=lambda: [((u(3, 4), u(3, 4)), {}), ((u(3, 4), u(4)), {})])
minimum = binary("minimum", lambda x, y: B.xp.minimum(x, y), _min_vjp, smooth=False,
                 kink="ties: the whole gradient goes to x",
                 samples=lambda: [((u(3, 4), u(3, 4)), {}), ((u(3, 4), u(4)), {})])


def _sqdiff_vjp(F, g, x, y):
    d = 2.0 * g * (x[0] - x[1])
    return d, -d


squared_difference = binary("squared_difference", lambda x, y: B.xp.square(x - y), _sqdiff_vjp)


def _floordiv_forward(x, y):
    return B.xp.floor_divide(x, y)


floordiv = binary("floordiv", _floordiv_forward, None, type="FloorDiv")


def _mod_vjp(F, g, x, y):
    a, b = x
    return g, -g * F.floor(a / b)


floormod = binary("floormod", lambda x, y: B.xp.mod(x, y), _mod_vjp, type="FloorMod",
                  aliases=("mod",), smooth=False,
                  samples=lambda: [((u(3, 4, lo=0.1, hi=0.9) + 3.0, pos(3, 4) * 0 + 2.0), {})])

# --- comparisons and logic (no gradients) ----------------------------------------------------

equal = binary("equal", lambda x, y: B.xp.equal(x, y), None)
not_equal = binary("not_equal", lambda x, y: B.xp.not_equal(x, y), None)
less = binary("less", lambda x, y: B.xp.less(x, y), None)
less_equal = binary("less_equal", lambda x, y: B.xp.less_equal(x, y), None)
greater = binary("greater", lambda x, y: B.xp.greater(x, y), None)
greater_equal = binary("greater_equal", lambda x, y: B.xp.greater_equal(x, y), None)
logical_and = binary("logical_and", lambda x, y: B.xp.logical_and(x, y), None)
logical_or = binary("logical_or", lambda x, y: B.xp.logical_or(x, y), None)
logical_xor = binary("logical_xor", lambda x, y: B.xp.logical_xor(x, y), None)
logical_not = unary("logical_not", lambda x: B.xp.logical_not(x), None)
is_finite = unary("is_finite", lambda x: B.xp.isfinite(x), None)
is_nan = unary("is_nan", lambda x: B.xp.isnan(x), None)
is_inf = unary("is_inf", lambda x: B.xp.isinf(x), None)

# --- unary -----------------------------------------------------------------------------------

negative = unary("negative", lambda x: B.xp.negative(x), lambda F, g, x, y: -g, save=(),
                 jvp="linear", type="Neg")
identity = unary("identity", lambda x: B.xp.array(x, copy=True), lambda F, g, x, y: g, save=(),
                 jvp="linear")


def _abs_vjp(F, g, x, y):
    if getattr(x, "_value", x).dtype.kind == "c":   # TF: g * z / |z| (0 at z = 0)
        mag = F.abs(x)
        safe = mag + F.cast(F.equal(mag, F.zeros_like(mag)), mag.dtype)
        if getattr(g, "_value", g).dtype.kind == "c":   # a forward-mode tangent: Re(g conj(z))/|z|
            importlib.import_module(".complex_ops", __package__)   # registers F.conj
            return F.cast(g * F.conj(x), mag.dtype) / safe
        return F.cast(g, x.dtype) * (x / F.cast(safe, x.dtype))
    return g * F.sign(x)


abs = unary("abs", lambda x: B.xp.abs(x), _abs_vjp,  # noqa: A001
            kink="abs'(0) = 0", smooth=False, samples=lambda: [((away(3, 4),), {})])
sign = unary("sign", lambda x: B.xp.sign(x), lambda F, g, x, y: F.zeros_like(g), save=(),
             smooth=False, kink="zero gradient everywhere (TF)")
square = unary("square", lambda x: B.xp.square(x), lambda F, g, x, y: 2.0 * g * x)
sqrt = unary("sqrt", lambda x: B.xp.sqrt(x), lambda F, g, x, y: 0.5 * g / y, save=("out",),
             samples=lambda: [((pos(3, 4),), {})])
rsqrt = unary("rsqrt", lambda x: 1.0 / B.xp.sqrt(x), lambda F, g, x, y: -0.5 * g * y * y * y,
              save=("out",), samples=lambda: [((pos(3, 4),), {})])
reciprocal = unary("reciprocal", lambda x: B.xp.reciprocal(x), lambda F, g, x, y: -g * y * y,
                   save=("out",), samples=lambda: [((away(3, 4),), {})], aliases=("Inv",))
exp = unary("exp", lambda x: B.xp.exp(x), lambda F, g, x, y: g * y, save=("out",))
expm1 = unary("expm1", lambda x: B.xp.expm1(x), lambda F, g, x, y: g * (y + 1.0), save=("out",))
log = unary("log", lambda x: B.xp.log(x), lambda F, g, x, y: g / x,
            samples=lambda: [((pos(3, 4),), {})])
log1p = unary("log1p", lambda x: B.xp.log1p(x), lambda F, g, x, y: g / (x + 1.0),
              samples=lambda: [((pos(3, 4, lo=-0.5, hi=2.0),), {})])
sin = unary("sin", lambda x: B.xp.sin(x), lambda F, g, x, y: g * F.cos(x))
cos = unary("cos", lambda x: B.xp.cos(x), lambda F, g, x, y: -g * F.sin(x))
tan = unary("tan", lambda x: B.xp.tan(x), lambda F, g, x, y: g * (1.0 + y * y), save=("out",),
            samples=lambda: [((u(3, 4, lo=-1.2, hi=1.2),), {})])
tanh = unary("tanh", lambda x: B.xp.tanh(x), lambda F, g, x, y: g * (1.0 - y * y), save=("out",))
atan = unary("atan", lambda x: B.xp.arctan(x), lambda F, g, x, y: g / (1.0 + x * x))


def _sigmoid(x):
    """1 / (1 + exp(-x)): ``_sigmoid_numpy``, its last passes compiled where they run."""
    y = native_elementwise.sigmoid(x)
    return _sigmoid_numpy(x) if y is None else y


def _sigmoid_numpy(x, xp=None):
    """1 / (1 + exp(-x)), without overflow for large |x|: with e = exp(-|x|), s = 1 / (1 + e)
    is sigmoid(|x|) and e s is sigmoid(x) for x < 0. The choice is arithmetic, s (e m + 1 - m)
    with m = 1 where x < 0 (exact either way): where() with a random mask costs a branch per
    element (a 128x512 layer's sigmoid 360 us with it, 100 without)."""
    xp = xp or B.xp
    e = xp.exp(-xp.abs(xp.reshape(x, -1)))       # flat: ufuncs return scalars of 0-d arrays
    s = e + 1.0
    xp.reciprocal(s, out=s)
    negative = (xp.reshape(x, -1) < 0).astype(s.dtype)
    e *= negative
    e += 1.0 - negative
    s *= e
    return xp.reshape(s, x.shape).astype(x.dtype, copy=False)


sigmoid = unary("sigmoid", _sigmoid, lambda F, g, x, y: g * y * (1.0 - y), save=("out",))


def _softplus(x, sign=1.0):
    """log(1 + exp(sign x)) as max(sign x, 0) + log1p(exp(-|x|)), numpy's logaddexp(0, sign x)
    written with its vectorised exp and log1p (logaddexp's own loop, a branch and two libm calls
    per element, took 1.26 ms on a 128x512 layer; this 0.1)."""
    if x.dtype.kind != "f":
        name = "softplus" if sign > 0 else "log_sigmoid"
        raise TypeError(f"{name}: expected a floating-point tensor, got {x.dtype} (as "
                        f"TensorFlow's kernel: half, bfloat16, float or double)")
    xp, dtype, shape, x = B.xp, x.dtype, x.shape, _working(x)
    y = xp.abs(x)
    xp.negative(y, out=y)
    xp.exp(y, out=y)
    xp.log1p(y, out=y)
    y += xp.maximum(x if sign > 0 else -x, 0)
    return y.reshape(shape).astype(dtype, copy=False)


softplus = unary("softplus", _softplus, lambda F, g, x, y: g * F.sigmoid(x))
log_sigmoid = unary("log_sigmoid", lambda x: -_softplus(x, -1.0),
                    lambda F, g, x, y: g * F.sigmoid(-x))


def _erfc_fit(z, xp=None):
    """erfc(z) for an array ``z >= 0`` of at least one dimension, as a new array:
    ``minitf.normal_fit``'s Chebyshev fit, evaluated in place (a dozen passes over z, no
    temporary per term)."""
    xp = xp or B.xp
    t = z * 0.5
    t += 1.0
    xp.reciprocal(t, out=t)
    acc = t * ERFC_FIT[0]
    for c in ERFC_FIT[1:]:
        acc += c
        acc *= t
    exponent = z * z
    xp.negative(exponent, out=exponent)
    exponent -= ERFC_FIT_SHIFT
    acc += exponent
    xp.exp(acc, out=acc)
    acc *= t
    return acc


def _erf_fit(x):
    """erf to an absolute error below 1.2e-7 (erfc's fit): enough where erf is added to 1, not
    for small values on their own."""
    xp = B.xp
    z = xp.reshape(xp.abs(x), x.shape or (1,))   # ufuncs return scalars of 0-d arrays
    r = 1.0 - _erfc_fit(z).reshape(x.shape)
    return xp.where(x >= 0, r, -r).astype(x.dtype, copy=False)


def _erf(x):
    """erf (numpy has none). float64: to rounding (``special_ops``' series and continued
    fraction). Narrower floats: the Taylor series below |x| = 0.5 (small values keep their
    relative accuracy), the Chebyshev fit above (a few float32 ulps of values >= 0.5)."""
    if x.dtype == "float64":
        from .special_ops import _erfc64
        return _erfc64(x)[0]
    xp = B.xp
    small = xp.abs(x) < 0.5
    head = xp.where(small, x, 0.0)
    x2 = head * head
    series = xp.full_like(head, _ERF_SERIES[-1])
    for c in _ERF_SERIES[-2::-1]:      # Horner in x^2
        series *= x2
        series += c
    series *= head
    return xp.where(small, series, _erf_fit(x)).astype(x.dtype, copy=False)


# erf(x) = sum_n c_n x^(2n+1), c_n = 2/sqrt(pi) (-1)^n / (n! (2n+1)); past n = 9 the terms are
# below 1e-10 of the sum for |x| < 0.5.
_ERF_SERIES = [2.0 / math.sqrt(math.pi) * (-1) ** n / (math.factorial(n) * (2 * n + 1))
               for n in range(10)]


_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
erf = unary("erf", _erf, lambda F, g, x, y: g * _TWO_OVER_SQRT_PI * F.exp(-x * x), grad_tol=1e-4)


def _relu_vjp(F, g, x, y):
    return F.relu_grad(g, y)


def _relu_forward(x, out=None):
    fused = native_nn.relu(x, out) if native_nn.pays(x) else None   # split over threads
    return B.relu(x, out=out) if fused is None else fused


relu = unary("relu", _relu_forward, _relu_vjp, save=("out",), smooth=False,
             kink="relu'(0) = 0", samples=lambda: [((away(3, 4),), {})],
             out_forward=lambda out, x: _relu_forward(x, out))


def _relu_grad_forward(g, y):
    """TF's ReluGrad: ``g * (y > 0)``. A NaN gradient stays NaN; a mask multiply costs a third
    of a where() with a zeros array (it matters in vectorised jacobians)."""
    fused = native_nn.relu_grad(g, y) if native_nn.pays(g) else None
    return B.xp.multiply(g, y > 0) if fused is None else fused


def _relu_grad_out(out, g, y):
    if native_nn.pays(g) and native_nn.relu_grad(g, y, out=out) is not None:
        return out
    if out is g:   # in place on the gradient
        return B.xp.multiply(g, y > 0, out=out)
    B.xp.greater(y, 0, out=out)       # the mask as 1.0 / 0.0, without a boolean temporary
    return B.xp.multiply(out, g, out=out)


def _relu_grad_vjp(F, gg, x, y):
    # As TF's ReluGrad: the derivative in y is zero (not None), so y stays connected.
    return ((F.relu_grad(gg, x[1]) if F.needs[0] else None),
            F.zeros_like(gg) if F.needs[1] else None)


relu_grad = binary("relu_grad", _relu_grad_forward, _relu_grad_vjp, save=(1,), smooth=False,
                   type="ReluGrad", kink="the mask y > 0 is locally constant: d/dy = 0",
                   samples=lambda: [((u(3, 4), away(3, 4)), {})], out_forward=_relu_grad_out)


def _relu6_vjp(F, g, x, y):
    return F.where(F.logical_and(y > 0, y < 6), g, F.zeros_like(g))


relu6 = unary("relu6", lambda x: B.xp.clip(x, 0, 6), _relu6_vjp, save=("out",), smooth=False,
              kink="zero gradient at 0 and at 6",
              samples=lambda: [((away(3, 4) * 4 + 1.0,), {})])

floor = unary("floor", lambda x: B.xp.floor(x), None)
ceil = unary("ceil", lambda x: B.xp.ceil(x), None)
round = unary("round", lambda x: B.xp.round(x), None)  # noqa: A001 - TF's name (half to even)


# --- ops with attributes ---------------------------------------------------------------------

def _leaky_relu_forward(x, alpha=0.2):
    return _select(x > 0, x, x * alpha).astype(x.dtype, copy=False)


def _leaky_relu_vjp(F, g, x, y, alpha=0.2):
    return (F.where(x[0] > 0, g, g * alpha),)


_leaky = defop("leaky_relu", _leaky_relu_forward, vjp=_leaky_relu_vjp, jvp="elementwise",
               save=(0,), smooth=False, kink="slope alpha at 0 (x > 0 is the linear side)",
               samples=lambda: [((away(3, 4),), {"alpha": 0.1})])


def leaky_relu(features, alpha=0.2, name=None):
    """max(x, alpha * x) for 0 < alpha < 1 (TF's default alpha 0.2)."""
    return apply(_leaky.op, (_x(features),), {"alpha": float(alpha)})


def _elu_forward(x, alpha=1.0):
    xp = B.xp
    return _select(x > 0, x, alpha * xp.expm1(xp.minimum(x, 0))).astype(x.dtype, copy=False)


def _elu_vjp(F, g, x, y, alpha=1.0):
    return (F.where(x[0] > 0, g, g * (y + alpha)),)


_elu = defop("elu", _elu_forward, vjp=_elu_vjp, jvp="elementwise", save=(0, "out"), smooth=False,
             kink="slope alpha at 0", samples=lambda: [((away(3, 4),), {})])


def elu(features, alpha=1.0, name=None):
    """x for x > 0, alpha * (exp(x) - 1) otherwise."""
    return apply(_elu.op, (_x(features),), {"alpha": float(alpha)})


def _working(x):
    """float16 and bfloat16 computed in float32 (their own rounding would cost digits); a 0-d
    array as a 1-element one (ufuncs return scalars of 0-d arrays, and the kernels below
    work in place)."""
    if x.dtype.itemsize < 4 and x.dtype.kind == "f":
        x = x.astype(numpy.float32)
    return x.reshape(1) if x.ndim == 0 else x


def _normal_cdf(x, xp=None):
    """Phi(x), the standard normal CDF, as a new array. float64: ``erfc(-x / sqrt 2) / 2`` to
    rounding. Narrower floats: erfc's Chebyshev fit (an absolute error below 6e-8), in place
    (gelu of a 128x512 layer through the fit's expression and where(): its forward 0.74 ms and
    gradient 1.3 ms, now 0.24 and 0.34)."""
    xp = xp or B.xp
    if x.dtype == numpy.float64:
        from .special_ops import _erfc64
        return _erfc64(x * -SQRT_HALF)[1] * 0.5
    z = xp.abs(x)
    z *= SQRT_HALF
    acc = _erfc_fit(z, xp)
    acc *= 0.5                                   # erfc(|x| / sqrt 2) / 2 = Phi(-|x|)
    # Phi(x) = 1/2 + sign(x) (1/2 - Phi(-|x|)): where() with a random mask ran 250 us on a
    # 128x512 layer (a branch per element), copysign 10.
    xp.subtract(0.5, acc, out=acc)
    xp.copysign(acc, x, out=acc)
    acc += 0.5
    return acc


def _normal_pdf(x, xp=None):
    """phi(x) = exp(-x^2 / 2) / sqrt(2 pi), as a new array."""
    xp = xp or B.xp
    e = x * x
    e *= -0.5
    xp.exp(e, out=e)
    e *= INV_SQRT_2PI
    return e


def _gelu_forward(x, approximate=False):
    if x.dtype.kind not in "fc":
        raise TypeError(f"gelu: expected a floating-point tensor, got {x.dtype} "
                        f"(as TensorFlow's Gelu: half, bfloat16, float or double)")
    dtype, shape, x = x.dtype, x.shape, _working(x)
    y = native_elementwise.gelu(x, approximate)    # the same bits in two compiled passes
    if y is None:
        y = _gelu_numpy(x, approximate)
    return y.reshape(shape).astype(dtype, copy=False)


def _gelu_numpy(x, approximate, xp=None):
    """GELU of a float32 or float64 array, as a new array of its shape (on ``xp``, the
    backend's array module by default)."""
    xp = xp or B.xp
    if approximate:
        inner = x * x
        inner *= GELU_CUBIC
        inner += 1.0
        inner *= x
        inner *= SQRT_2_OVER_PI
        xp.tanh(inner, out=inner)
        inner += 1.0
        inner *= 0.5
        y = inner
    else:
        y = _normal_cdf(x, xp)
    y *= x
    return y


def _gelu_derivative(x, approximate, xp=None):
    """gelu'(x) as a new array: Phi(x) + x phi(x), or the tanh form's derivative."""
    xp = xp or B.xp
    if not approximate:
        d = _normal_pdf(x, xp)
        d *= x
        d += _normal_cdf(x, xp)
        return d
    x2 = x * x
    t = x2 * GELU_CUBIC
    t += 1.0
    t *= x
    t *= SQRT_2_OVER_PI
    xp.tanh(t, out=t)                           # t = tanh(u), u = c (x + a x^3)
    du = x2 * GELU_CUBIC_SLOPE
    du += SQRT_2_OVER_PI                       # u' = c (1 + 3 a x^2)
    d = t * t
    xp.subtract(1.0, d, out=d)
    d *= du
    d *= x                                      # x (1 - t^2) u'
    d += t
    d += 1.0
    d *= 0.5
    return d


def _gelu_grad_forward(g, x, approximate=False):
    """``g * gelu'(x)``: the gradient of ``gelu`` for the output gradient ``g``."""
    d = native_elementwise.gelu_grad(g, x, approximate)   # the same bits in two compiled passes
    return _gelu_grad_numpy(g, x, approximate) if d is None else d


def _gelu_grad_numpy(g, x, approximate, xp=None):
    d = _gelu_derivative(_working(x), approximate, xp).reshape(x.shape)
    if d.shape == g.shape:
        d *= g
    else:                  # g a batch of cotangents (a vectorised jacobian)
        d = g * d
    return d.astype(g.dtype, copy=False)


def _gelu_second(F, x, approximate):
    """gelu''(x), as ops: phi(x) (2 - x^2), or the tanh form's
    (1 - t^2) (u' + 3 a c x^2 - x t u'^2) with t = tanh(u), u = c (x + a x^3),
    u' = c (1 + 3 a x^2)."""
    if not approximate:
        return F.exp(-0.5 * x * x) * INV_SQRT_2PI * (2.0 - x * x)
    x2 = x * x
    t = F.tanh(SQRT_2_OVER_PI * x * (1.0 + GELU_CUBIC * x2))
    du = SQRT_2_OVER_PI * (1.0 + 3 * GELU_CUBIC * x2)
    return (1.0 - t * t) * (du + GELU_CUBIC_SLOPE * x2 - x * t * du * du)


def _gelu_grad_vjp(F, gg, xs, y, approximate=False):
    g, x = xs
    return (F.gelu_grad(gg, x, approximate=approximate) if F.needs[0] else None,
            gg * g * _gelu_second(F, x, approximate) if F.needs[1] else None)


_gelu_grad = defop("gelu_grad", _gelu_grad_forward, arity=2, vjp=_gelu_grad_vjp,
                   jvp="elementwise", save=(0, 1), grad_tol=1e-4, type="GeluGrad",
                   samples=lambda: [((u(3, 4), u(3, 4)), {}),
                                    ((u(3, 4), u(3, 4)), {"approximate": True})])
_gelu = defop("gelu", _gelu_forward, jvp="elementwise", save=(0,), grad_tol=1e-4,
              vjp=lambda F, g, x, y, approximate=False: (
                  F.gelu_grad(g, x[0], approximate=approximate),),
              samples=lambda: [((u(3, 4),), {}), ((u(3, 4),), {"approximate": True})])


def gelu(features, approximate=False, name=None):
    """Gaussian error linear unit: x * Phi(x) (tanh approximation with ``approximate=True``)."""
    return apply(_gelu.op, (_x(features),), {"approximate": bool(approximate)})


def _cast_forward(x, dtype):
    if x.dtype.kind == "c" and numpy.dtype(dtype).kind != "c":
        x = x.real   # TF: complex to real keeps the real part
    return x.astype(dtype, copy=False) if x.dtype != dtype else x


def _cast_vjp(F, g, x, y, dtype):
    return (F.cast(g, x[0].dtype),)


_cast = defop("cast", _cast_forward, vjp=_cast_vjp, jvp="linear", save=(0,),
              samples=lambda: [((u(3, 4),), {"dtype": dtypes.float32.np})])


def cast(x, dtype, name=None):
    """Convert to ``dtype``. Casting from an integer or bool dtype cuts the gradient. A
    SparseTensor's values are cast (its indices and dense shape kept), as in TF."""
    try:
        x = _x(x)
    except TypeError:
        from ..sparse_tensor import SparseTensor
        if isinstance(x, SparseTensor):
            return x._with(cast(x.values, dtype))
        return as_keras_layer(cast, (x, dtype), {})
    dtype = dtypes.as_dtype(dtype)
    if x._value.dtype == dtype.np:
        return x
    return apply(_cast.op, (x,), {"dtype": dtype.np})


def _where_forward(condition, x, y):
    return _select(condition, x, y)


def _select(condition, x, y):
    """``where(condition, x, y)`` on arrays; compiled for large float arrays (numpy's where
    takes a branch per element, 20x slower with a mask that varies)."""
    out = native_elementwise.select(condition, x, y)
    return B.xp.where(condition, x, y) if out is None else out


def _where_vjp(F, g, xs, out):
    cond = xs[0]
    zero = F.zeros_like(g)
    return (None, F.where(cond, g, zero) if F.needs[1] else None,
            F.where(cond, zero, g) if F.needs[2] else None)


def _where_samples():
    import numpy
    cond = numpy.array([[True, False, True, False]] * 3)
    return [((cond, u(3, 4), u(3, 4)), {}), ((cond[0], u(3, 4), u(4)), {})]


_where = defop("where", _where_forward, arity=3, vjp=_where_vjp, jvp="elementwise", save=(0,),
               samples=_where_samples, type="SelectV2", aliases=("Select",))


_where_indices = defop("where_indices", lambda c: B.xp.argwhere(c).astype("int64"), type="Where")


def where(condition, x=None, y=None, name=None):
    """Pick from ``x`` where ``condition`` holds, else from ``y`` (broadcasting).

    With only ``condition``, the indices of true elements as an int64 (n, rank) tensor.
    """
    try:
        condition = _x(condition)
    except TypeError:
        return as_keras_layer(where, (condition, x, y), {})
    if x is None and y is None:
        return apply(_where_indices.op, (condition,), {})
    if x is None or y is None:
        raise ValueError("where: give both x and y, or neither")
    x, y = operand_pair("where", x, y)
    return apply(_where.op, (condition, x, y), {})


@helper
def zeros_like(F, x):
    return F.zeros_like_op(x)


_zeros_like = defop("zeros_like_op", lambda x: B.xp.zeros_like(x))
_ones_like = defop("ones_like_op", lambda x: B.xp.ones_like(x))


@helper
def ones_like(F, x):
    return F.ones_like_op(x)


def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    """Clip element-wise to [min, max]; the gradient passes at the bounds (as TF)."""
    try:
        t = _x(t)
    except TypeError:
        return as_keras_layer(clip_by_value, (t, clip_value_min, clip_value_max), {})
    return minimum(maximum(t, clip_value_min), clip_value_max)


def scalar_mul(scalar, x, name=None):
    return multiply(scalar, x)


def add_n(inputs, name=None):
    """Sum of a list of same-shape tensors."""
    result = inputs[0]
    for t in inputs[1:]:
        result = add(result, t)
    return result


def truediv(x, y, name=None):
    return divide(x, y)


def divide_no_nan(x, y, name=None):
    """x / y, with 0 where y == 0."""
    x, y = operand_pair("divide_no_nan", x, y)
    nonzero = not_equal(y, 0)
    safe = where(nonzero, y, ones_like_public(y))
    return where(nonzero, divide(x, safe), zeros_like_public(x))


def zeros_like_public(x, dtype=None, name=None):
    x = _x(x)
    if (x.dtype if dtype is None else dtypes.as_dtype(dtype)) is dtypes.string:
        return Tensor(numpy.full(x._value.shape, b"", object))   # TF: empty strings
    return Tensor(B.xp.zeros_like(x._value, dtype=None if dtype is None else
                                  dtypes.as_dtype(dtype).np))


def ones_like_public(x, dtype=None, name=None):
    x = _x(x)
    return Tensor(B.xp.ones_like(x._value, dtype=None if dtype is None else
                                 dtypes.as_dtype(dtype).np))


def softsign(x, name=None):
    x = _x(x)
    return x / (abs(x) + 1.0)


def silu(x, name=None):
    """x * sigmoid(x) (also called swish)."""
    x = _x(x)
    return x * sigmoid(x)


swish = silu


def stop_gradient(x, name=None):
    """The value of ``x`` with no gradient flowing back through it."""
    return apply(_stop.op, (_x(x),), {})


_stop = defop("stop_gradient", lambda x: x, type="StopGradient")


def _install_rule_versions():
    """Rules in TENSOR mode use the friendly public wrappers (dtype handling, scalars)."""
    from .registry import RAW, TENSOR
    TENSOR.cast = cast
    TENSOR.where = where
    RAW.cast = lambda x, dtype: _cast_forward(x, dtypes.as_dtype(dtype).np)


_install_rule_versions()
