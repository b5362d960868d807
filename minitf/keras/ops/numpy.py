"""``keras.ops.numpy``: Keras 3's numpy-like functions (also ``keras.ops.<name>``), each the
minitf op of the same meaning; creation functions (``linspace``, ``geomspace``, windows...) and
bitwise functions, with Keras's dtype rules (see ``numpy_math``)."""
import builtins as _builtins
import math as _math

import numpy as _np

from ... import dtypes as _dtypes
from ...ops import array_ops as _a, bitwise_ops as _bits, linalg_ops as _l, math_ops as _m
from ...ops import reduce_ops as _r, special_ops as _special
from ...ops.convert import convert_to_tensor
from ...ops.einsum_ops import einsum  # noqa: F401
from ...ops.math_ops import (abs, add, cast, ceil, cos, divide, equal, exp,  # noqa: F401,A004
                            expm1, floor, greater, greater_equal, less, less_equal, log, log1p,
                            logical_and, logical_not, logical_or, maximum, minimum, multiply,
                            negative, not_equal, reciprocal, round, rsqrt, sign, sin,
                            sqrt, square, subtract, tan, tanh, where)
from ...ops.array_ops import (expand_dims, reshape, squeeze, stack, tile,  # noqa: F401
                             zeros, ones)
from ...ops.linalg_ops import matmul  # noqa: F401
from ...ops.reduce_ops import argmax, argmin  # noqa: F401
from ...tensor import Tensor as _Tensor
from .. import keras_backend as _keras_backend
from .numpy_math import _as, _log10, _promoted, _require, _result_dtype, _t


def _floatx():
    return _keras_backend.floatx()


def sum(x, axis=None, keepdims=False):  # noqa: A001
    return _r.reduce_sum(x, axis=axis, keepdims=keepdims)


def mean(x, axis=None, keepdims=False):
    return _r.reduce_mean(x, axis=axis, keepdims=keepdims)


def max(x, axis=None, keepdims=False, initial=None):  # noqa: A001
    """``initial`` is a lower bound of the result (and the maximum of an empty axis)."""
    return _bounded_extreme(_r.reduce_max, maximum, "max", x, axis, keepdims, initial)


def min(x, axis=None, keepdims=False, initial=None):  # noqa: A001
    """``initial`` is an upper bound of the result (and the minimum of an empty axis)."""
    return _bounded_extreme(_r.reduce_min, minimum, "min", x, axis, keepdims, initial)


def _bounded_extreme(reduce, bound, what, x, axis, keepdims, initial):
    x = convert_to_tensor(x)
    if initial is not None:
        return bound(reduce(x, axis=axis, keepdims=keepdims), cast(initial, x.dtype))
    if axis is None:
        axes = list(_builtins.range(x.ndim))
    else:
        axes = [int(a) % _builtins.max(x.ndim, 1)
                for a in (axis if isinstance(axis, (list, tuple)) else [axis])]
    if _builtins.any(int(x.shape[a]) == 0 for a in axes if a < x.ndim):
        raise ValueError(f"keras.ops.{what}: an empty axis has no {what}imum without initial= "
                         f"(x of shape {tuple(x.shape)}, axis={axis})")
    return reduce(x, axis=axis, keepdims=keepdims)


def prod(x, axis=None, keepdims=False, dtype=None):
    """In ``dtype``; by default ``x``'s, except int32 for bool, int8 and int16 and uint32 for
    uint8 and uint16."""
    x = convert_to_tensor(x)
    if dtype is None:
        dtype = {"bool": "int32", "int8": "int32", "int16": "int32", "uint8": "uint32",
                 "uint16": "uint32"}.get(x.dtype.name, x.dtype.name)
    return _r.reduce_prod(cast(x, dtype), axis=axis, keepdims=keepdims)


def logsumexp(x, axis=None, keepdims=False):
    return _r.reduce_logsumexp(x, axis=axis, keepdims=keepdims)


def var(x, axis=None, keepdims=False):
    """In floatx for integer and bool ``x`` (float16 and bfloat16 are computed in float32)."""
    from ..keras_backend import floatx
    x = convert_to_tensor(x)
    dtype = x.dtype.name if x.dtype.is_floating else floatx()
    x = cast(x, "float32" if dtype in ("float16", "bfloat16") else dtype)
    m = _r.reduce_mean(x, axis=axis, keepdims=True)
    return cast(_r.reduce_mean(_m.square(x - m), axis=axis, keepdims=keepdims), dtype)


def std(x, axis=None, keepdims=False):
    return _m.sqrt(var(x, axis=axis, keepdims=keepdims))


def power(x1, x2):
    return _m.pow(x1, x2)


def concatenate(xs, axis=0):
    return _a.concat(list(xs), axis=axis)


def clip(x, x_min, x_max):
    return _m.clip_by_value(x, x_min, x_max)


def zeros_like(x, dtype=None):
    return _m.zeros_like_public(x, dtype=dtype)


def ones_like(x, dtype=None):
    return _m.ones_like_public(x, dtype=dtype)


def dot(x1, x2):
    return _l.matmul(x1, x2)


def arange(start, stop=None, step=1, dtype=None):
    return _a.range(start, stop, step, dtype=dtype)


def flatten(x):
    return _a.reshape(x, (-1,))


def mod(x1, x2):
    """Remainder with the sign of the divisor (numpy's ``mod``)."""
    return _m.floormod(x1, x2)


def floor_divide(x1, x2):
    return _m.floordiv(x1, x2)


def take(x, indices, axis=None):
    """Entries of ``x`` at ``indices`` along ``axis`` (the flattened ``x`` when None)."""
    if axis is None:
        return _a.gather(_a.reshape(x, [-1]), indices)
    return _a.gather(x, indices, axis=axis)


def cumsum(x, axis=None, dtype=None):
    """In ``dtype`` (``x``'s by default); bool becomes int32."""
    x = convert_to_tensor(x)
    dtype = x.dtype.name if dtype is None else _dtypes.as_dtype(dtype).name
    x = cast(x, "int32" if dtype == "bool" else dtype)
    if axis is None:
        return _a.cumsum(_a.reshape(x, [-1]), axis=0)
    return _a.cumsum(x, axis=axis)


def any(x, axis=None, keepdims=False):  # noqa: A001
    return _r.reduce_any(cast(x, "bool"), axis=axis, keepdims=keepdims)


def all(x, axis=None, keepdims=False):  # noqa: A001
    return _r.reduce_all(cast(x, "bool"), axis=axis, keepdims=keepdims)


def split(x, indices_or_sections, axis=0):
    """numpy's ``split``: an int cuts ``x`` into that many equal parts, a list of indices cuts
    it at those positions."""
    if isinstance(indices_or_sections, int):
        return _a.split(x, indices_or_sections, axis=axis)
    size = int(convert_to_tensor(x).shape[axis])
    bounds = [0] + [int(i) for i in indices_or_sections] + [size]
    return _a.split(x, [b - a for a, b in zip(bounds[:-1], bounds[1:])], axis=axis)


def pad(x, pad_width, mode="constant", constant_values=None):
    return _a.pad(x, pad_width, mode=mode.upper(),
                  constant_values=0 if constant_values is None else constant_values)


def repeat(x, repeats, axis=None):
    return _a.repeat(x, repeats, axis=axis)


def erf(x):
    return _m.erf(x)


def isnan(x):
    return _m.is_nan(x)


# --- bitwise ---------------------------------------------------------------------------------

def _bitwise(name, x, y, on_ints, on_bools):
    x, y = _promoted(x, y)
    if x.dtype.is_bool and on_bools is not None:
        return on_bools(x, y)
    _require(name, x, "iu", "integer or bool tensors" if on_bools else "integer tensors")
    return on_ints(x, y)


def bitwise_and(x, y):
    return _bitwise("bitwise_and", x, y, _bits.bitwise_and, _m.logical_and)


def bitwise_or(x, y):
    return _bitwise("bitwise_or", x, y, _bits.bitwise_or, _m.logical_or)


def bitwise_xor(x, y):
    return _bitwise("bitwise_xor", x, y, _bits.bitwise_xor, _m.logical_xor)


def bitwise_invert(x):
    """``~x``: all bits flipped (logical not for bool tensors)."""
    x = _t(x)
    if x.dtype.is_bool:
        return _m.logical_not(x)
    _require("bitwise_invert", x, "iu", "integer or bool tensors")
    return _bits.invert(x)


bitwise_not = bitwise_invert


def bitwise_left_shift(x, y):
    """``x << y``; shift amounts outside ``[0, bits)`` are clamped to it."""
    return _bitwise("bitwise_left_shift", x, y, _bits.left_shift, None)


def bitwise_right_shift(x, y):
    """``x >> y`` (arithmetic for signed dtypes); shift amounts outside ``[0, bits)`` are
    clamped to it."""
    return _bitwise("bitwise_right_shift", x, y, _bits.right_shift, None)


left_shift = bitwise_left_shift
right_shift = bitwise_right_shift


# --- creation --------------------------------------------------------------------------------

def array(x, dtype=None):
    """``x`` as a tensor (cast to ``dtype`` when given)."""
    if dtype is None:
        return convert_to_tensor(x)
    if isinstance(x, _Tensor):
        return cast(x, dtype)
    return convert_to_tensor(x, dtype=dtype)


def copy(x):
    return _m.identity(x)


def empty(shape, dtype=None):
    """A tensor of ``shape`` (zero-filled: minitf has no uninitialised memory)."""
    return _a.zeros(shape, dtype=dtype or _floatx())


def empty_like(x, dtype=None):
    """A tensor of ``x``'s shape (zero-filled: minitf has no uninitialised memory)."""
    return _m.zeros_like_public(x, dtype=dtype)


def _filled(shape, fill_value, dtype):
    """``fill_value`` (a number, array or tensor) converted to ``dtype`` as numpy does (3.7
    fills an int tensor with 3) and broadcast to ``shape``."""
    if isinstance(fill_value, _Tensor):
        value = cast(fill_value, dtype)
    else:
        value = cast(convert_to_tensor(_np.asarray(fill_value)), dtype)
    return _a.broadcast_to(value, shape)


def full(shape, fill_value, dtype=None):
    """A tensor of ``shape`` filled with ``fill_value`` (``floatx()`` unless ``dtype``)."""
    shape = (int(shape),) if isinstance(shape, int) else tuple(int(s) for s in shape)
    return _filled(shape, fill_value, _dtypes.as_dtype(dtype or _floatx()))


def full_like(x, fill_value, dtype=None):
    """``x``'s shape filled with ``fill_value`` (converted to ``dtype``, default ``x``'s)."""
    x = convert_to_tensor(x)
    return _filled(x.shape, fill_value, _dtypes.as_dtype(dtype) if dtype is not None else x.dtype)


def identity(n, dtype=None):
    """The ``n`` x ``n`` identity matrix."""
    return _a.eye(n, dtype=dtype or _floatx())


def eye(N, M=None, k=0, dtype=None):
    """Ones on the ``k``-th diagonal of an ``N`` x ``M`` matrix (above the main one for
    ``k > 0``), zeros elsewhere."""
    M = N if M is None else M
    rows = _a.reshape(_a.range(int(N), dtype="int32"), [-1, 1])
    columns = _a.reshape(_a.range(int(M), dtype="int32"), [1, -1])
    return cast(equal(columns - rows, int(k)), dtype or _floatx())


def tri(N, M=None, k=0, dtype=None):
    """Ones on and below the ``k``-th diagonal of an ``N`` x ``M`` matrix, zeros above."""
    M = N if M is None else M
    rows = _a.reshape(_a.range(int(N), dtype="int32"), [-1, 1])
    columns = _a.reshape(_a.range(int(M), dtype="int32"), [1, -1])
    return cast(less_equal(columns - rows, int(k)), dtype or _floatx())


# --- evenly spaced values --------------------------------------------------------------------

def _count(name, num):
    num = int(num)
    if num < 0:
        raise ValueError(f"keras.ops.{name}: num must be a non-negative integer, got {num}")
    return num


def _space_dtypes(start, stop, dtype):
    """(the result dtype, the dtype to compute in): float64 for Python numbers and integer
    results (rounded once at the end, as numpy); a float tensor bound's own dtype otherwise,
    so that gradients keep it."""
    target = _dtypes.as_dtype(dtype) if dtype is not None else _result_dtype(start, stop,
                                                                             floating=True)
    float_tensors = [v for v in (start, stop) if isinstance(v, _Tensor) and v.dtype.is_floating]
    if float_tensors and target.is_floating:
        return target, _result_dtype(*float_tensors)
    return target, _dtypes.float64


def _evenly_spaced(start, stop, num, endpoint, dtype):
    """``num`` values from ``start`` to ``stop`` (excluded unless ``endpoint``) along a new
    first axis, and the step; ``start``/``stop`` may be arrays (broadcast together)."""
    start, stop = _as(start, dtype), _as(stop, dtype)
    shape = _np.broadcast_shapes(tuple(start.shape), tuple(stop.shape))
    start, stop = _a.broadcast_to(start, shape), _a.broadcast_to(stop, shape)
    divisions = num - 1 if endpoint else num
    if divisions > 0:
        step = (stop - start) / _as(divisions, dtype)
    else:
        step = _a.broadcast_to(_as(_np.nan, dtype), shape)
    index = _a.reshape(_a.range(num, dtype=dtype), [num] + [1] * len(shape))
    values = start + index * step if divisions > 0 else start + index * _as(0, dtype)
    if endpoint and num > 1:
        # numpy sets the last value to stop itself (start + (num - 1) * step may round)
        values = _a.concat([values[:-1], _a.expand_dims(stop, 0)], 0)
    return values, step


def _first_axis_to(values, axis, name):
    rank = values.ndim
    if not -rank <= axis < rank:
        raise ValueError(f"keras.ops.{name}: axis {axis} is out of range for a result of rank "
                         f"{rank}")
    axis %= rank
    if axis == 0:
        return values
    order = list(_builtins.range(1, axis + 1)) + [0] + list(_builtins.range(axis + 1, rank))
    return _a.transpose(values, order)


def _finish(values, dtype, axis, name):
    if not dtype.is_floating:
        values = floor(values)
    return _first_axis_to(cast(values, dtype), axis, name)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    """``num`` evenly spaced values from ``start`` to ``stop`` (included unless
    ``endpoint=False``); ``retstep`` also returns the spacing. Integer dtypes round down."""
    num = _count("linspace", num)
    target, compute = _space_dtypes(start, stop, dtype)
    values, step = _evenly_spaced(start, stop, num, endpoint, compute)
    values = _finish(values, target, axis, "linspace")
    if retstep:
        return values, cast(step, target) if target.is_floating else step
    return values


def logspace(start, stop, num=50, endpoint=True, base=10, dtype=None, axis=0):
    """``base ** linspace(start, stop, ...)``."""
    num = _count("logspace", num)
    target, compute = _space_dtypes(start, stop, dtype)
    exponents, _ = _evenly_spaced(start, stop, num, endpoint, compute)
    powers = _m.pow(_as(base, compute), exponents)
    return _first_axis_to(cast(powers, target), axis, "logspace")


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """``num`` values from ``start`` to ``stop`` in geometric progression (evenly spaced
    logarithms); the ends are ``start`` and ``stop`` exactly. Both bounds must be nonzero and of
    one sign (minitf has no complex results)."""
    num = _count("geomspace", num)
    for bound in (start, stop):
        if not isinstance(bound, _Tensor) and _np.any(_np.asarray(bound) == 0):
            raise ValueError("keras.ops.geomspace: a geometric sequence cannot include zero")
    if not isinstance(start, _Tensor) and not isinstance(stop, _Tensor) and _np.any(
            _np.sign(_np.asarray(start)) != _np.sign(_np.asarray(stop))):
        raise ValueError("keras.ops.geomspace: start and stop must have the same sign (the "
                         "sequence between opposite signs is complex)")
    target = _dtypes.as_dtype(dtype or _floatx())
    _, compute = _space_dtypes(start, stop, target)
    start, stop = _as(start, compute), _as(stop, compute)
    exponents, _ = _evenly_spaced(_log10(abs(start)), _log10(abs(stop)), num, endpoint, compute)
    values = _m.pow(_as(10, compute), exponents) * sign(start)
    if num > 0:
        # the ends are the bounds themselves, as in numpy
        shape = tuple(values.shape[1:])
        ends = [_a.expand_dims(_a.broadcast_to(start, shape), 0),
                values[1:num - 1 if endpoint else num]]
        if endpoint and num > 1:
            ends.append(_a.expand_dims(_a.broadcast_to(stop, shape), 0))
        values = _a.concat(ends, 0)
    return _finish(values, target, axis, "geomspace")


# --- window functions ------------------------------------------------------------------------

def _window(x, weights):
    """A symmetric window of ``x`` points: ``weights(k, n)`` for ``k = 0 .. n-1`` (float64),
    cast to ``floatx()``; 1 for one point, empty for none."""
    n = int(x)
    if n <= 1:
        return _a.ones([_builtins.max(n, 0)], dtype=_floatx())
    k = _a.range(n, dtype="float64")
    return cast(weights(k, float(n - 1)), _floatx())


def _cosines(k, last, *coefficients):
    """``a0 - a1 cos(2 pi k / last) + a2 cos(4 pi k / last) - ...``."""
    total = 0.0
    for order, a in enumerate(coefficients):
        total = total + (-1) ** order * a * cos(2.0 * _math.pi * order * k / last)
    return total


def bartlett(x):
    """The triangular window of ``x`` points."""
    return _window(x, lambda k, last: 1.0 - abs(2.0 * k / last - 1.0))


def hanning(x):
    """The Hann window of ``x`` points: ``0.5 - 0.5 cos(2 pi k / (x - 1))``."""
    return _window(x, lambda k, last: _cosines(k, last, 0.5, 0.5))


def hamming(x):
    """The Hamming window of ``x`` points: ``0.54 - 0.46 cos(2 pi k / (x - 1))``."""
    return _window(x, lambda k, last: _cosines(k, last, 0.54, 0.46))


def blackman(x):
    """The Blackman window of ``x`` points."""
    return _window(x, lambda k, last: _cosines(k, last, 0.42, 0.5, 0.08))


def kaiser(x, beta):
    """The Kaiser window of ``x`` points with shape parameter ``beta``:
    ``I0(beta sqrt(1 - (2k / (x - 1) - 1) ** 2)) / I0(beta)``."""
    beta = _as(beta, "float64")

    def weights(k, last):
        r = 2.0 * k / last - 1.0
        return _special.bessel_i0(beta * sqrt(1.0 - r * r)) / _special.bessel_i0(beta)
    return _window(x, weights)


def transpose(x, axes=None):
    """``x`` with its axes permuted by ``axes`` (reversed when None), as ``numpy.transpose``."""
    return _a.transpose(x, axes)
