"""Element-wise functions of ``tf.experimental.numpy`` with NumPy's dtype rules.

Operands are promoted as NumPy promotes them (``experimental_numpy_base.result_type``), then
the minitf op (or the ``keras.ops.numpy`` function) of the same meaning runs on them, so
gradients flow as for those ops. Functions only defined on floats (``sqrt``, ``sin``...) turn
integer and bool inputs into float64, as NumPy's ufuncs do.
"""
import numpy as _np

from .experimental_numpy_base import asarray, float_pair, promote, to_float
from .keras.ops import numpy as _kn
from .ops import bitwise_ops as _bits, math_ops as _m, reduce_ops as _r
from . import dtypes as _dtypes


def _float_unary(name, op):
    def fn(x):
        return op(to_float(x))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"NumPy's ``{name}``; integer and bool inputs become float64."
    return fn


_FLOAT_UNARY = {
    "log": _m.log, "exp": _m.exp, "sqrt": _m.sqrt, "ceil": _m.ceil, "floor": _m.floor,
    "sin": _m.sin, "cos": _m.cos, "tan": _m.tan, "sinh": _kn.sinh, "cosh": _kn.cosh,
    "tanh": _m.tanh, "arcsin": _kn.arcsin, "arccos": _kn.arccos, "arctan": _kn.arctan,
    "arcsinh": _kn.arcsinh, "arccosh": _kn.arccosh, "arctanh": _kn.arctanh,
    "deg2rad": _kn.deg2rad, "rad2deg": _kn.rad2deg, "cbrt": _kn.cbrt, "exp2": _kn.exp2,
    "expm1": _m.expm1, "fix": _kn.trunc, "isnan": _m.is_nan, "isfinite": _m.is_finite,
    "isinf": _m.is_inf, "isneginf": _kn.isneginf, "isposinf": _kn.isposinf, "log2": _kn.log2,
    "log10": _kn.log10, "log1p": _m.log1p, "sinc": _kn.sinc,
}
for _name, _op in _FLOAT_UNARY.items():
    globals()[_name] = _float_unary(_name, _op)
del _name, _op


def abs(x):  # noqa: A001 - NumPy's name
    """The absolute value, in ``x``'s dtype."""
    return _m.abs(asarray(x))


absolute = abs
fabs = abs   # TF keeps integer dtypes here (NumPy's fabs gives float64)


def negative(x):
    """``-x`` in ``x``'s dtype."""
    return _m.negative(asarray(x))


def positive(x):
    """``x`` itself."""
    return asarray(x)


def square(x):
    """``x * x`` in ``x``'s dtype."""
    return _m.square(asarray(x))


def sign(x, out=None, where=None, **kwargs):
    """-1, 0 or 1 in ``x``'s dtype (``out`` and ``where`` are not supported)."""
    if out is not None or where is not None or kwargs:
        raise ValueError(f"tf.experimental.numpy.sign: out=, where= and other NumPy ufunc "
                         f"arguments are not supported (got out={out!r}, where={where!r}, "
                         f"{sorted(kwargs)})")
    return _m.sign(asarray(x))


def reciprocal(x):
    """``1 / x`` in ``x``'s dtype (integers truncate toward zero, as NumPy's)."""
    x = asarray(x)
    if x.dtype.is_floating:
        return _m.reciprocal(x)
    return _m.cast(_m.reciprocal(_m.cast(x, _dtypes.float64)), x.dtype)


def signbit(x):
    """True where the sign bit of ``x`` is set."""
    return _kn.signbit(asarray(x))


def conj(x):
    """The complex conjugate: ``x`` itself for the real dtypes minitf has."""
    return asarray(x)


conjugate = conj


def real(val):
    """The real part: ``val`` itself for real dtypes."""
    return asarray(val)


def imag(val):
    """The imaginary part: zeros of ``val``'s dtype for real dtypes."""
    return _m.zeros_like_public(asarray(val))


def angle(z, deg=False):
    """0 for non-negative and pi (180 with ``deg``) for negative real values, as floats."""
    z = to_float(z)
    result = _m.where(_m.less(z, _m.zeros_like_public(z)), _m.ones_like_public(z) * _np.pi, _m.zeros_like_public(z))
    return result * (180.0 / _np.pi) if deg else result


def iscomplex(x):
    """All False: minitf has no complex dtypes."""
    return _m.zeros_like_public(asarray(x), dtype=_dtypes.bool)


def isreal(x):
    """All True: minitf has no complex dtypes."""
    return _m.logical_not(iscomplex(x))


def iscomplexobj(x):
    """False: minitf has no complex dtypes."""
    return asarray(x).dtype.is_complex


def isrealobj(x):
    """True: minitf has no complex dtypes."""
    return not iscomplexobj(x)


def around(a, decimals=0):
    """Round half to even at ``decimals`` decimals, in ``a``'s dtype."""
    a = asarray(a)
    if not a.dtype.is_floating and decimals >= 0:
        return a
    x = to_float(a)
    factor = 10.0 ** decimals
    return _m.cast(_m.round(x * factor) / factor, a.dtype) if decimals else \
        _m.cast(_m.round(x), a.dtype)


round = around  # noqa: A001 - NumPy's name


def bitwise_not(x):
    """``~x``: logical not for bools, bitwise for integers."""
    x = asarray(x)
    return _m.logical_not(x) if x.dtype.is_bool else _bits.invert(x)


def logical_not(x):
    """Logical not of ``x``'s truth values."""
    return _m.logical_not(asarray(x, _dtypes.bool))


# --- two operands ----------------------------------------------------------------------------

def add(x1, x2):
    """``x1 + x2`` (logical or for bools)."""
    x1, x2 = promote(x1, x2)
    return _m.logical_or(x1, x2) if x1.dtype.is_bool else _m.add(x1, x2)


def subtract(x1, x2):
    """``x1 - x2``."""
    return _m.subtract(*promote(x1, x2))


def multiply(x1, x2):
    """``x1 * x2`` (logical and for bools)."""
    x1, x2 = promote(x1, x2)
    return _m.logical_and(x1, x2) if x1.dtype.is_bool else _m.multiply(x1, x2)


def true_divide(x1, x2):
    """``x1 / x2`` as floats (integer and bool operands give float64)."""
    return _m.divide(*float_pair(x1, x2))


divide = true_divide


def floor_divide(x1, x2):
    """``x1 // x2``."""
    x1, x2 = promote(x1, x2)
    if x1.dtype.is_bool:
        x1, x2 = _m.cast(x1, _dtypes.int8), _m.cast(x2, _dtypes.int8)
    return _m.floordiv(x1, x2)


def mod(x1, x2):
    """The remainder of floor division, with the sign of ``x2``."""
    x1, x2 = promote(x1, x2)
    if x1.dtype.is_bool:
        x1, x2 = _m.cast(x1, _dtypes.int8), _m.cast(x2, _dtypes.int8)
    return _m.floormod(x1, x2)


remainder = mod


def divmod(x1, x2):  # noqa: A001 - NumPy's name
    """``(floor_divide(x1, x2), mod(x1, x2))``."""
    return floor_divide(x1, x2), mod(x1, x2)


def maximum(x1, x2):
    """The element-wise maximum (logical or for bools)."""
    x1, x2 = promote(x1, x2)
    return _m.logical_or(x1, x2) if x1.dtype.is_bool else _m.maximum(x1, x2)


def minimum(x1, x2):
    """The element-wise minimum (logical and for bools)."""
    x1, x2 = promote(x1, x2)
    return _m.logical_and(x1, x2) if x1.dtype.is_bool else _m.minimum(x1, x2)


def clip(a, a_min, a_max):
    """``a`` limited to ``[a_min, a_max]`` (either bound may be None)."""
    if a_min is None and a_max is None:
        raise ValueError("tf.experimental.numpy.clip: a_min and a_max are both None; "
                         "expected at least one bound")
    if a_min is None:
        return minimum(a, a_max)
    if a_max is None:
        return maximum(a, a_min)
    a, a_min, a_max = promote(a, a_min, a_max)
    return _m.minimum(_m.maximum(a, a_min), a_max)


def power(x1, x2):
    """``x1 ** x2`` in the operands' common dtype."""
    return _m.pow(*promote(x1, x2))


float_power = power


def _float_binary(name, op):
    def fn(x1, x2):
        return op(*float_pair(x1, x2))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"NumPy's ``{name}``; integer and bool operands become float64."
    return fn


arctan2 = _float_binary("arctan2", _kn.arctan2)
hypot = _float_binary("hypot", _kn.hypot)
logaddexp = _float_binary("logaddexp", _kn.logaddexp)
logaddexp2 = _float_binary("logaddexp2", _kn.logaddexp2)
nextafter = _float_binary("nextafter", _kn.nextafter)


def heaviside(x1, x2):
    """0 where ``x1 < 0``, ``x2`` where ``x1 == 0``, 1 where ``x1 > 0``."""
    x1, x2 = promote(x1, x2)
    zero = _m.zeros_like_public(x1)
    return _m.where(_m.less(x1, zero), zero,
                    _m.where(_m.greater(x1, zero), _m.ones_like_public(x1), x2 + zero))


def gcd(x1, x2):
    """The greatest common divisor of integers."""
    return _kn.gcd(*_integers("gcd", x1, x2))


def lcm(x1, x2):
    """The least common multiple of integers."""
    return _kn.lcm(*_integers("lcm", x1, x2))


def _integers(name, x1, x2):
    x1, x2 = promote(x1, x2)
    if not x1.dtype.is_integer:
        raise TypeError(f"tf.experimental.numpy.{name}: expected integer operands, got "
                        f"{x1.dtype.name}")
    return x1, x2


def _bitwise(name, op):
    def fn(x1, x2):
        x1, x2 = promote(x1, x2)
        if not (x1.dtype.is_integer or x1.dtype.is_bool):
            raise TypeError(f"tf.experimental.numpy.{name}: expected integer or bool operands, "
                            f"got {x1.dtype.name}")
        return op(x1, x2)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"NumPy's ``{name}`` of integer or bool operands."
    return fn


bitwise_and = _bitwise("bitwise_and", _bits.and_)
bitwise_or = _bitwise("bitwise_or", _bits.or_)
bitwise_xor = _bitwise("bitwise_xor", _bits.xor_)


def _comparison(name, op):
    def fn(x1, x2):
        return op(*promote(x1, x2))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"NumPy's ``{name}``, comparing in the operands' common dtype."
    return fn


equal = _comparison("equal", _m.equal)
not_equal = _comparison("not_equal", _m.not_equal)
greater = _comparison("greater", _m.greater)
greater_equal = _comparison("greater_equal", _m.greater_equal)
less = _comparison("less", _m.less)
less_equal = _comparison("less_equal", _m.less_equal)


def _logical(name, op):
    def fn(x1, x2):
        return op(asarray(x1, _dtypes.bool), asarray(x2, _dtypes.bool))
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"NumPy's ``{name}`` of the operands' truth values."
    return fn


logical_and = _logical("logical_and", _m.logical_and)
logical_or = _logical("logical_or", _m.logical_or)
logical_xor = _logical("logical_xor", _m.logical_xor)


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """``|a - b| <= atol + rtol * |b|`` element-wise."""
    a, b = promote(a, b)
    return _kn.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether ``isclose`` holds everywhere (a bool tensor)."""
    return _r.reduce_all(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1, a2):
    """Whether both have one shape and equal values (a bool tensor)."""
    a1, a2 = promote(a1, a2)
    if tuple(a1.shape) != tuple(a2.shape):
        return asarray(False)
    return _r.reduce_all(_m.equal(a1, a2))
