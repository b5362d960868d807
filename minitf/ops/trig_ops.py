"""Inverse trigonometric and hyperbolic functions (float inputs only, as in TF)."""
from .. import backend as B
from .. import dtypes
from ._samples import pos, u
from .math_ops import binary, unary


def _float_only(name, kernel):
    def forward(x):
        if not dtypes.is_float(x.dtype):
            raise TypeError(f"{name} expects a floating-point tensor, got dtype {x.dtype}")
        return kernel(x)

    forward.__doc__ = kernel.__doc__
    return forward


def _asin(x):
    """Inverse sine, in [-pi/2, pi/2]; NaN outside [-1, 1]."""
    return B.xp.arcsin(x)


def _acos(x):
    """Inverse cosine, in [0, pi]; NaN outside [-1, 1]."""
    return B.xp.arccos(x)


def _sinh(x):
    """Hyperbolic sine."""
    return B.xp.sinh(x)


def _cosh(x):
    """Hyperbolic cosine."""
    return B.xp.cosh(x)


def _asinh(x):
    """Inverse hyperbolic sine."""
    return B.xp.arcsinh(x)


def _acosh(x):
    """Inverse hyperbolic cosine; NaN below 1."""
    return B.xp.arccosh(x)


def _atanh(x):
    """Inverse hyperbolic tangent; +-inf at +-1, NaN outside [-1, 1]."""
    return B.xp.arctanh(x)


_inside_unit = lambda: [((u(3, 4, lo=-0.9, hi=0.9),), {})]  # noqa: E731

asin = unary("asin", _float_only("asin", _asin),
             lambda F, g, x, y: g * F.rsqrt(1.0 - x * x), samples=_inside_unit)
acos = unary("acos", _float_only("acos", _acos),
             lambda F, g, x, y: -g * F.rsqrt(1.0 - x * x), samples=_inside_unit)
sinh = unary("sinh", _float_only("sinh", _sinh), lambda F, g, x, y: g * F.cosh(x))
cosh = unary("cosh", _float_only("cosh", _cosh), lambda F, g, x, y: g * F.sinh(x))
asinh = unary("asinh", _float_only("asinh", _asinh),
              lambda F, g, x, y: g * F.rsqrt(x * x + 1.0))
acosh = unary("acosh", _float_only("acosh", _acosh),
              lambda F, g, x, y: g / F.sinh(y), save=("out",),
              samples=lambda: [((pos(3, 4, lo=1.2, hi=3.0),), {})])
atanh = unary("atanh", _float_only("atanh", _atanh),
              lambda F, g, x, y: g / (1.0 - x * x), samples=_inside_unit)


def _atan2(y, x):
    """The angle of the point (x, y) in (-pi, pi]: atan2(y, x), y first as in TF."""
    if not dtypes.is_float(y.dtype):
        raise TypeError(f"atan2 expects floating-point tensors, got dtype {y.dtype}")
    return B.xp.arctan2(y, x)


def _atan2_vjp(F, g, xs, out):
    y, x = xs
    scale = g / (x * x + y * y)
    return (scale * x if F.needs[0] else None, -scale * y if F.needs[1] else None)


atan2 = binary("atan2", _atan2, _atan2_vjp,
               samples=lambda: [((u(3, 4), pos(3, 4)), {}), ((u(3, 4), -pos(4)), {})])
