"""``keras.ops.numpy`` element-wise math and comparison functions (also
``keras.ops.<name>``), with Keras 3's dtype rules.

Unlike minitf's own ops (TF's rules: both operands of one dtype), these functions promote
mixed operands as Keras does: a Python int or float takes the other operand's dtype, an integer
or bool tensor combined with a float tensor takes the float dtype, and functions that are only
defined on floats (``log2``, ``arccos``...) turn integer and bool inputs into ``floatx()``.
minitf has no complex dtypes: ``real``/``conj`` return their input, ``imag`` zeros,
``angle`` 0 or pi and ``isreal`` all True.
"""
import functools as _functools
import math as _math

import numpy as _np

from ... import backend as _B
from ... import dtypes as _dtypes
from ...ops import array_ops as _a, math_ops as _m, reduce_ops as _r
from ...ops import composite_ops as _c, math_extra_ops as _mx
from ...ops import sequence_ops as _seq, special_ops as _special, trig_ops as _trig
from ...ops._samples import away as _away, pos as _pos, u as _u
from ...ops.convert import convert_to_tensor as _convert
from ...ops.math_ops import binary as _binary, unary as _unary
from ...ops.registry import InvalidArgumentError as _InvalidArgumentError
from ...tensor import Tensor as _Tensor
from ..keras_backend import floatx as _floatx

_LN2 = _math.log(2.0)
_LN10 = _math.log(10.0)


# --- Keras's dtype promotion -----------------------------------------------------------------

def _t(x):
    return x if isinstance(x, _Tensor) else _convert(x)


def _dtype_of(value):
    """``(dtype, weak)``: Python ints and floats are weakly typed (they take the dtype of the
    tensor they meet); tensors, arrays, lists and Python bools are not."""
    if isinstance(value, _Tensor):
        return value.dtype, False
    if isinstance(value, bool):
        return _dtypes.bool, False
    if isinstance(value, int):
        return _dtypes.int32, True
    if isinstance(value, float):
        return _dtypes.float32, True
    return _convert(value).dtype, False


def _result_dtype(*values, floating=False):
    """The dtype Keras gives an element-wise op on ``values`` (``floating``: as if a Python
    float were among them). 64-bit dtypes are kept (Keras's TensorFlow backend)."""
    strong, weak_float, weak_int = [], floating, False
    for v in values:
        d, weak = _dtype_of(v)
        if weak:
            weak_float |= d.is_floating
            weak_int |= not d.is_floating
        else:
            strong.append(d)
    floats = [d for d in strong if d.is_floating]
    if floats:
        widest = max(d.size for d in floats)
        kinds = {d for d in floats if d.size == widest}
        return kinds.pop() if len(kinds) == 1 else _dtypes.float32   # float16 with bfloat16
    if weak_float:
        return _dtypes.as_dtype(_floatx())
    ints = [d.np for d in strong if d.is_integer]
    if ints:
        return _dtypes.as_dtype(_functools.reduce(_np.promote_types, ints))
    return _dtypes.bool if strong and not weak_int else _dtypes.int32


def _as(value, dtype):
    if isinstance(value, _Tensor):
        return _m.cast(value, dtype)
    if isinstance(value, (bool, int, float)):
        return _convert(value, dtype=dtype)
    return _m.cast(_convert(value), dtype)


def _promoted(*values, floating=False):
    """``values`` as tensors of their common Keras dtype."""
    dtype = _result_dtype(*values, floating=floating)
    return [_as(v, dtype) for v in values]


def _floating(x, int64_to_float64=False):
    """``x`` as a float tensor: integer and bool inputs become ``floatx()`` (int64 becomes
    float64 where Keras says so)."""
    x = _t(x)
    if x.dtype.is_floating:
        return x
    if int64_to_float64 and x.dtype in (_dtypes.int64, _dtypes.uint64):
        return _m.cast(x, "float64")
    return _m.cast(x, _floatx())


def _require(name, x, kinds, expected):
    if x.dtype.np.kind not in kinds:
        raise TypeError(f"keras.ops.{name}: expects {expected}, got dtype {x.dtype.name}")


# --- ops registered for exact kernels (numpy's log2(8) is 3, log(8) / log(2) is not) ----------

def _require_float_arrays(name, *arrays):
    for a in arrays:
        if not _dtypes.is_float(a.dtype):
            raise TypeError(f"{name}: expects floating-point tensors, got dtype {a.dtype}")


def _log2_forward(x):
    """Base-2 logarithm."""
    _require_float_arrays("log2", x)
    return _B.xp.log2(x)


def _log10_forward(x):
    """Base-10 logarithm."""
    _require_float_arrays("log10", x)
    return _B.xp.log10(x)


def _cbrt_forward(x):
    """Real cube root (negative for negative inputs)."""
    _require_float_arrays("cbrt", x)
    return _B.xp.cbrt(x)


def _signbit_forward(x):
    """True where the sign bit is set (also for -0.0 and negative NaNs)."""
    if x.dtype.kind == "b":
        raise TypeError(f"signbit: expects a numeric tensor, got dtype {x.dtype}")
    return _B.xp.signbit(x)


_log2 = _unary("log2", _log2_forward, lambda F, g, x, y: g / (x * _LN2),
               samples=lambda: [((_pos(3, 4),), {})])
_log10 = _unary("log10", _log10_forward, lambda F, g, x, y: g / (x * _LN10),
                samples=lambda: [((_pos(3, 4),), {})])
_cbrt = _unary("cbrt", _cbrt_forward, lambda F, g, x, y: g / (3.0 * y * y), save=("out",),
               samples=lambda: [((_away(3, 4),), {})])
_signbit = _unary("signbit", _signbit_forward, None)


def _hypot_forward(x1, x2):
    """sqrt(x1**2 + x2**2) without overflow or underflow in the squares."""
    _require_float_arrays("hypot", x1, x2)
    return _B.xp.hypot(x1, x2)


def _hypot_vjp(F, g, xs, out):
    a, b = xs
    return (g * a / out if F.needs[0] else None, g * b / out if F.needs[1] else None)


def _logaddexp_forward(x1, x2):
    """log(exp(x1) + exp(x2)), computed without overflow."""
    _require_float_arrays("logaddexp", x1, x2)
    return _B.xp.logaddexp(x1, x2)


def _logaddexp_vjp(F, g, xs, out):
    a, b = xs
    return (g * F.exp(a - out) if F.needs[0] else None,
            g * F.exp(b - out) if F.needs[1] else None)


def _logaddexp2_forward(x1, x2):
    """log2(2**x1 + 2**x2), computed without overflow."""
    _require_float_arrays("logaddexp2", x1, x2)
    return _B.xp.logaddexp2(x1, x2)


def _logaddexp2_vjp(F, g, xs, out):
    a, b = xs
    return (g * F.exp((a - out) * _LN2) if F.needs[0] else None,
            g * F.exp((b - out) * _LN2) if F.needs[1] else None)


def _fmod_forward(x1, x2):
    """The remainder of division rounded toward zero: it has the sign of ``x1`` (C's fmod)."""
    if x1.dtype.kind == "b":
        raise TypeError("fmod: expects numeric tensors, got dtype bool")
    if x1.dtype.kind in "iu" and bool((x2 == 0).any()):
        raise _InvalidArgumentError("fmod: integer division by zero", op="fmod")
    return _B.xp.fmod(x1, x2)


def _fmod_vjp(F, g, xs, out):
    a, b = xs
    q = a / b
    truncated = F.where(q < 0, F.ceil(q), F.floor(q))
    return (g if F.needs[0] else None, -g * truncated if F.needs[1] else None)


def _integer_kernel(name, kernel):
    def forward(x1, x2):
        if x1.dtype.kind not in "iu":
            raise TypeError(f"{name}: expects integer tensors, got dtype {x1.dtype}")
        return kernel(x1, x2)

    forward.__doc__ = f"numpy's ``{name}`` of integer tensors."
    return forward


_hypot = _binary("hypot", _hypot_forward, _hypot_vjp, save=(0, 1, "out"),
                 samples=lambda: [((_away(3, 4), _away(3, 4)), {}), ((_away(3, 4), _away(4)), {})])
_logaddexp = _binary("logaddexp", _logaddexp_forward, _logaddexp_vjp, save=(0, 1, "out"))
_logaddexp2 = _binary("logaddexp2", _logaddexp2_forward, _logaddexp2_vjp, save=(0, 1, "out"))
# samples keep x1 / x2 away from integers, where the remainder jumps
_fmod = _binary("fmod", _fmod_forward, _fmod_vjp, smooth=False,
                samples=lambda: [((_u(3, 4, lo=0.1, hi=0.9) + 3.0, _pos(3, 4) * 0 + 2.0), {}),
                                 ((-_u(2, 3, lo=0.1, hi=0.9) - 5.0, _pos(3) * 0 + 2.0), {})])
_gcd = _binary("gcd", _integer_kernel("gcd", lambda a, b: _B.xp.gcd(a, b)), None)
_lcm = _binary("lcm", _integer_kernel("lcm", lambda a, b: _B.xp.lcm(a, b)), None)
for _integer_op in (_gcd, _lcm):
    _integer_op.op.samples = lambda: [((_np.arange(-3, 9).reshape(3, 4),
                                        _np.array([4, -6, 9, 1])), {})]
del _integer_op


# --- absolute values, signs and rounding -----------------------------------------------------

def absolute(x):
    x = _t(x)
    return x if x.dtype.is_bool else _m.abs(x)


def fabs(x):
    """``abs`` as a float (integer inputs become ``floatx()``)."""
    return _m.abs(_floating(x))


def signbit(x):
    x = _t(x)
    return _m.zeros_like_public(x, dtype="bool") if x.dtype.is_bool else _signbit(x)


def trunc(x):
    """Rounds toward zero; integer and bool inputs are returned unchanged."""
    x = _t(x)
    if not x.dtype.is_floating:
        return x
    return _m.where(_m.less(x, 0), _m.ceil(x), _m.floor(x))


def heaviside(x1, x2):
    """0 where ``x1 < 0``, ``x2`` where ``x1 == 0``, 1 where ``x1 > 0`` (NaN stays NaN)."""
    dtype = _result_dtype(x1, x2)
    if not dtype.is_floating:
        dtype = _dtypes.float64 if dtype in (_dtypes.int64, _dtypes.uint64) else _floatx()
    x1, x2 = _as(x1, dtype), _as(x2, dtype)
    step = _m.where(_m.less(x1, 0), _as(0, dtype), _m.where(_m.greater(x1, 0), _as(1, dtype), x2))
    return _m.where(_m.is_nan(x1), x1, step)


def nan_to_num(x, nan=0.0, posinf=None, neginf=None):
    """NaN replaced by ``nan``, +-inf by ``posinf``/``neginf`` (the dtype's largest/lowest
    finite value when None); integer inputs are returned unchanged."""
    x = _t(x)
    if not x.dtype.is_floating:
        return x
    big = x.dtype.max if posinf is None else posinf
    low = x.dtype.min if neginf is None else neginf
    x = _m.where(_m.is_nan(x), _as(nan, x.dtype), x)
    x = _m.where(_m.equal(x, _np.inf), _as(big, x.dtype), x)
    return _m.where(_m.equal(x, -_np.inf), _as(low, x.dtype), x)


# --- exponentials, logarithms, roots ---------------------------------------------------------

def exp2(x):
    x = _floating(x)
    return _m.pow(_as(2, x.dtype), x)


def log2(x):
    return _log2(_floating(x))


def log10(x):
    return _log10(_floating(x))


def cbrt(x):
    return _cbrt(_floating(x, int64_to_float64=True))


def logaddexp(x1, x2):
    return _logaddexp(*_promoted(x1, x2, floating=True))


def logaddexp2(x1, x2):
    return _logaddexp2(*_promoted(x1, x2, floating=True))


def hypot(x1, x2):
    dtype = _result_dtype(x1, x2)
    if not dtype.is_floating:
        dtype = _dtypes.float64 if dtype in (_dtypes.int64, _dtypes.uint64) else _floatx()
    return _hypot(_as(x1, dtype), _as(x2, dtype))


def ldexp(x1, x2):
    """``x1 * 2**x2`` for an integer ``x2``."""
    exponent = _t(x2)
    if not exponent.dtype.is_integer:
        raise TypeError(f"keras.ops.ldexp: the exponent x2 must have an integer dtype, got "
                        f"{exponent.dtype.name}")
    dtype = _result_dtype(x1, exponent, floating=True)
    x1, exponent = _as(x1, dtype), _m.cast(exponent, dtype)
    # Two half-size powers of two keep 2**x2 itself from overflowing (or underflowing) where
    # the product is representable.
    half = _m.floor(exponent / 2.0)
    two = _as(2, dtype)
    return x1 * _m.pow(two, half) * _m.pow(two, exponent - half)


def i0(x):
    """The modified Bessel function of the first kind, order 0."""
    return _special.bessel_i0(_floating(x, int64_to_float64=True))


def sinc(x):
    """``sin(pi x) / (pi x)``, 1 at 0."""
    x = _floating(x)
    at_zero = _m.equal(x, 0)
    safe = _m.where(at_zero, _m.ones_like_public(x), x) * _as(_math.pi, x.dtype)
    return _m.where(at_zero, _m.ones_like_public(x), _m.sin(safe) / safe)


# --- trigonometric and hyperbolic ------------------------------------------------------------

def arccos(x):
    return _trig.acos(_floating(x))


def arcsin(x):
    return _trig.asin(_floating(x))


def arctan(x):
    return _m.atan(_floating(x))


def arccosh(x):
    return _trig.acosh(_floating(x))


def arcsinh(x):
    return _trig.asinh(_floating(x))


def arctanh(x):
    return _trig.atanh(_floating(x))


def cosh(x):
    return _trig.cosh(_floating(x))


def sinh(x):
    return _trig.sinh(_floating(x))


def arctan2(x1, x2):
    """The angle of the point ``(x2, x1)``, in ``[-pi, pi]``."""
    return _trig.atan2(*_promoted(x1, x2, floating=True))


def _angle_dtype(x):
    if x.dtype in (_dtypes.int64, _dtypes.float64):
        return _dtypes.float64
    if x.dtype in (_dtypes.float16, _dtypes.bfloat16):
        return x.dtype
    return _floatx()


def deg2rad(x):
    x = _t(x)
    x = _m.cast(x, _angle_dtype(x))
    return x * _as(_math.pi / 180.0, x.dtype)


def rad2deg(x):
    x = _t(x)
    x = _m.cast(x, _angle_dtype(x))
    return x * _as(180.0 / _math.pi, x.dtype)


# --- complex parts --------------------------------------------------------------------------

def _complex_ops():
    from ...ops import complex_ops
    return complex_ops


def _is_complex_tensor(x):
    return isinstance(x, _Tensor) and x.dtype.is_complex


def real(x):
    """The real parts (a real tensor is its own real part)."""
    x = _t(x)
    return _complex_ops().real(x) if x.dtype.is_complex else x


def conjugate(x):
    """The complex conjugate (a real tensor is its own conjugate)."""
    x = _t(x)
    return _complex_ops().conj(x) if x.dtype.is_complex else x


conj = conjugate


def imag(x):
    """The imaginary parts (zeros for a real tensor)."""
    x = _t(x)
    return _complex_ops().imag(x) if x.dtype.is_complex else _m.zeros_like_public(x)


def isreal(x):
    """Where the imaginary part is zero (all True for a real tensor)."""
    x = _t(x)
    if x.dtype.is_complex:
        return _m.equal(_complex_ops().imag(x), 0)
    return _m.ones_like_public(x, dtype="bool")


def angle(x):
    """The complex argument: ``atan2(imag, real)``; for a real tensor pi for negative values
    (and -0.0), 0 otherwise, NaN for NaN."""
    if _is_complex_tensor(x):
        return _complex_ops().angle(x)
    x = _floating(x)
    return _trig.atan2(_m.zeros_like_public(x), _m.stop_gradient(x))


# --- division and remainders -----------------------------------------------------------------

def true_divide(x1, x2):
    return _m.divide(*_promoted(x1, x2, floating=True))


def divide_no_nan(x1, x2):
    """``x1 / x2``, 0 where ``x2`` is 0."""
    return _m.divide_no_nan(*_promoted(x1, x2, floating=True))


def fmod(x1, x2):
    """The remainder with the sign of ``x1`` (C's fmod; ``mod`` takes the sign of ``x2``)."""
    if _result_dtype(x1, x2).is_bool:
        x1, x2 = _as(x1, "int32"), _as(x2, "int32")
    return _fmod(*_promoted(x1, x2))


def gcd(x1, x2):
    x1, x2 = _promoted(x1, x2)
    _require("gcd", x1, "iu", "integer tensors")
    return _gcd(x1, x2)


def lcm(x1, x2):
    x1, x2 = _promoted(x1, x2)
    _require("lcm", x1, "iu", "integer tensors")
    return _lcm(x1, x2)


def nextafter(x1, x2):
    """The next representable value after ``x1`` toward ``x2`` (float32 and float64)."""
    return _mx.nextafter(*_promoted(x1, x2, floating=True))


# --- maxima that skip NaN --------------------------------------------------------------------

def fmax(x1, x2):
    """Element-wise maximum that ignores a NaN operand (NaN only where both are NaN)."""
    x1, x2 = _promoted(x1, x2)
    if not x1.dtype.is_floating:
        return _m.maximum(x1, x2)
    both = _m.maximum(x1, x2)
    return _m.where(_m.is_nan(x2), x1, _m.where(_m.is_nan(x1), x2, both))


def fmin(x1, x2):
    """Element-wise minimum that ignores a NaN operand (NaN only where both are NaN)."""
    x1, x2 = _promoted(x1, x2)
    if not x1.dtype.is_floating:
        return _m.minimum(x1, x2)
    both = _m.minimum(x1, x2)
    return _m.where(_m.is_nan(x2), x1, _m.where(_m.is_nan(x1), x2, both))


def amax(x, axis=None, keepdims=False):
    x = _t(x)
    if x.dtype.is_bool:
        return _r.reduce_any(x, axis=axis, keepdims=keepdims)
    return _r.reduce_max(x, axis=axis, keepdims=keepdims)


def amin(x, axis=None, keepdims=False):
    x = _t(x)
    if x.dtype.is_bool:
        return _r.reduce_all(x, axis=axis, keepdims=keepdims)
    return _r.reduce_min(x, axis=axis, keepdims=keepdims)


# --- classification and comparison -----------------------------------------------------------

def isfinite(x):
    x = _t(x)
    if not x.dtype.is_floating:
        return _m.ones_like_public(x, dtype="bool")
    return _m.is_finite(x)


def isinf(x):
    x = _t(x)
    if not x.dtype.is_floating:
        return _m.zeros_like_public(x, dtype="bool")
    return _m.is_inf(x)


def isposinf(x):
    x = _t(x)
    if not x.dtype.is_floating:
        return _m.zeros_like_public(x, dtype="bool")
    return _m.equal(x, _np.inf)


def isneginf(x):
    x = _t(x)
    if not x.dtype.is_floating:
        return _m.zeros_like_public(x, dtype="bool")
    return _m.equal(x, -_np.inf)


def isclose(x1, x2, rtol=1e-5, atol=1e-8, equal_nan=False):
    """``|x1 - x2| <= atol + rtol * |x2|`` element-wise (not symmetric, as numpy); infinities
    are close only to themselves, NaN to NaN only with ``equal_nan``."""
    x1, x2 = _promoted(x1, x2)
    if not x1.dtype.is_floating:
        x1, x2 = _m.cast(x1, "float64"), _m.cast(x2, "float64")
    x1 = _m.stop_gradient(x1)
    x2 = _m.stop_gradient(x2)
    tolerance = _as(atol, x1.dtype) + _as(rtol, x1.dtype) * _m.abs(x2)
    close = _m.less_equal(_m.abs(x1 - x2), tolerance)
    finite = _m.logical_and(_m.is_finite(x1), _m.is_finite(x2))
    result = _m.logical_or(_m.logical_and(finite, close), _m.equal(x1, x2))
    if equal_nan:
        result = _m.logical_or(result, _m.logical_and(_m.is_nan(x1), _m.is_nan(x2)))
    return result


def allclose(x1, x2, rtol=1e-5, atol=1e-8, equal_nan=False):
    """Whether ``isclose`` holds everywhere (a bool scalar tensor)."""
    return _r.reduce_all(isclose(x1, x2, rtol=rtol, atol=atol, equal_nan=equal_nan))


def isin(x1, x2, assume_unique=False, invert=False):
    """Whether each element of ``x1`` occurs in ``x2`` (bool, ``x1``'s shape)."""
    x1, x2 = _promoted(x1, x2)
    flat = _a.reshape(_m.stop_gradient(x1), [-1])
    pool = _c.sort(_a.reshape(_m.stop_gradient(x2), [-1]))
    count = int(pool.shape[0])
    if count == 0 or int(flat.shape[0]) == 0:
        found = _m.zeros_like_public(flat, dtype="bool")
    else:
        where = _seq.searchsorted(pool, flat)
        nearest = _a.gather(pool, _m.minimum(where, count - 1))
        found = _m.equal(nearest, flat)
    if invert:
        found = _m.logical_not(found)
    return _a.reshape(found, x1.shape)


def logical_xor(x1, x2):
    return _m.logical_xor(_m.cast(x1, "bool"), _m.cast(x2, "bool"))
