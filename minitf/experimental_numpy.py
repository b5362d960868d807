"""``tf.experimental.numpy``: NumPy's API on minitf tensors (``tnp.ndarray`` is ``tf.Tensor``).

    import minitf.experimental.numpy as tnp
    x = tnp.ones([2, 3])                 # float64, as numpy.ones
    y = tnp.sum(tnp.arange(6), axis=0)   # int64

Dtypes follow NumPy's promotion (Python ints become int64 and floats float64, ``int32 + 1.5`` is
float64); ``experimental_enable_numpy_behavior`` adds NumPy's methods to ``tf.Tensor`` and,
with ``prefer_float32=True``, makes Python floats float32. Functions are compositions of
minitf ops, so gradients flow through them. minitf has no complex dtypes: the complex types are
absent and ``real``/``imag``/``conj``/``angle`` work on real values.
"""

import numpy as _np

from . import experimental_numpy_random as random
from .experimental_numpy_base import (
    array, asanyarray, asarray, ascontiguousarray, bool_, copy, e, finfo, float16, float32,
    float64, float_, iinfo, inexact, inf, int16, int32, int64, int8, int_, isscalar,
    issubdtype, ndarray, ndim, newaxis, object_, pi, promote_types, result_type,
    shape, size, string_, uint16, uint32, uint64, uint8, unicode_)
from .experimental_numpy_math import (
    abs, absolute, add, allclose, angle, arccos, arccosh, arcsin, arcsinh, arctan, arctan2,
    arctanh, around, array_equal, bitwise_and, bitwise_not, bitwise_or, bitwise_xor, cbrt, ceil,
    clip, conj, conjugate, cos, cosh, deg2rad, divide, divmod, equal, exp, exp2, expm1, fabs,
    fix, float_power, floor, floor_divide, gcd, greater, greater_equal, heaviside, hypot, imag,
    isclose, iscomplex, iscomplexobj, isfinite, isinf, isnan, isneginf, isposinf, isreal,
    isrealobj, lcm, less, less_equal, log, log10, log1p, log2, logaddexp, logaddexp2,
    logical_and, logical_not, logical_or, logical_xor, maximum, minimum, mod, multiply, negative,
    nextafter, not_equal, positive, power, rad2deg, real, reciprocal, remainder, round, sign,
    signbit, sin, sinc, sinh, sqrt, square, subtract, tan, tanh, true_divide)
from .experimental_numpy_arrays import (
    append, arange, argsort, atleast_1d, atleast_2d, atleast_3d, broadcast_arrays, broadcast_to,
    compress, concatenate, diag, diag_indices, diagflat, diagonal, dsplit, dstack, empty,
    empty_like, expand_dims, eye, flatten, flip, fliplr, flipud, full, full_like, geomspace,
    hsplit, hstack, identity, ix_, linspace, logspace, meshgrid, moveaxis, nonzero, ones,
    ones_like, pad, ravel, repeat, reshape, roll, rot90, select, sort, split, squeeze, stack,
    swapaxes, take, take_along_axis, tile, trace, transpose, tri, tril, triu, vander, vsplit,
    vstack, where, zeros, zeros_like)
from .experimental_numpy_reduce import (
    all, amax, amin, any, argmax, argmin, average, count_nonzero, cross, cumprod, cumsum, diff,
    dot, einsum, inner, kron, matmul, max, mean, min, nanmean, nanprod, nansum, outer, polyval,
    prod, ptp, std, sum, tensordot, var, vdot)
from .tensor import Tensor as _Tensor

__all__ = ['abs', 'absolute', 'add', 'all', 'allclose', 'amax', 'amin', 'angle', 'any', 'append',
           'arange', 'arccos', 'arccosh', 'arcsin', 'arcsinh', 'arctan', 'arctan2', 'arctanh',
           'argmax', 'argmin', 'argsort', 'around', 'array', 'array_equal', 'asanyarray',
           'asarray', 'ascontiguousarray', 'atleast_1d', 'atleast_2d', 'atleast_3d', 'average',
           'bitwise_and', 'bitwise_not', 'bitwise_or', 'bitwise_xor', 'bool_',
           'broadcast_arrays', 'broadcast_to', 'cbrt', 'ceil', 'clip', 'compress', 'concatenate',
           'conj', 'conjugate', 'copy', 'cos', 'cosh', 'count_nonzero', 'cross', 'cumprod',
           'cumsum', 'deg2rad', 'diag', 'diag_indices', 'diagflat', 'diagonal', 'diff', 'divide',
           'divmod', 'dot', 'dsplit', 'dstack', 'e', 'einsum', 'empty', 'empty_like', 'equal',
           'exp', 'exp2', 'expand_dims', 'experimental_enable_numpy_behavior', 'expm1', 'eye',
           'fabs', 'finfo', 'fix', 'flatten', 'flip', 'fliplr', 'flipud', 'float16', 'float32',
           'float64', 'float_', 'float_power', 'floor', 'floor_divide', 'full', 'full_like',
           'gcd', 'geomspace', 'greater', 'greater_equal', 'heaviside', 'hsplit', 'hstack',
           'hypot', 'identity', 'iinfo', 'imag', 'inexact', 'inf', 'inner', 'int16', 'int32',
           'int64', 'int8', 'int_', 'isclose', 'iscomplex', 'iscomplexobj', 'isfinite', 'isinf',
           'isnan', 'isneginf', 'isposinf', 'isreal', 'isrealobj', 'isscalar', 'issubdtype',
           'ix_', 'kron', 'lcm', 'less', 'less_equal', 'linspace', 'log', 'log10', 'log1p',
           'log2', 'logaddexp', 'logaddexp2', 'logical_and', 'logical_not', 'logical_or',
           'logical_xor', 'logspace', 'matmul', 'max', 'maximum', 'mean', 'meshgrid', 'min',
           'minimum', 'mod', 'moveaxis', 'multiply', 'nanmean', 'nanprod', 'nansum', 'ndarray',
           'ndim', 'negative', 'newaxis', 'nextafter', 'nonzero', 'not_equal', 'object_', 'ones',
           'ones_like', 'outer', 'pad', 'pi', 'polyval', 'positive', 'power', 'prod',
           'promote_types', 'ptp', 'rad2deg', 'random', 'ravel', 'real', 'reciprocal',
           'remainder', 'repeat', 'reshape', 'result_type', 'roll', 'rot90', 'round', 'select',
           'shape', 'sign', 'signbit', 'sin', 'sinc', 'sinh', 'size', 'sort', 'split', 'sqrt',
           'square', 'squeeze', 'stack', 'std', 'string_', 'subtract', 'sum', 'swapaxes', 'take',
           'take_along_axis', 'tan', 'tanh', 'tensordot', 'tile', 'trace', 'transpose', 'tri',
           'tril', 'triu', 'true_divide', 'uint16', 'uint32', 'uint64', 'uint8', 'unicode_',
           'vander', 'var', 'vdot', 'vsplit', 'vstack', 'where', 'zeros', 'zeros_like']



def _reshape_method(self, *newshape, **kwargs):
    if len(newshape) == 1 and not isinstance(newshape[0], int):
        newshape = newshape[0]
    return reshape(self, newshape, **kwargs)


def _transpose_method(self, *axes):
    if len(axes) == 1 and not isinstance(axes[0], int):
        axes = axes[0]
    return transpose(self, axes or None)


def _tolist(self):
    return self.numpy().tolist()


# The methods TF adds to tf.Tensor; ``ndim``, ``size`` and ``__pos__`` minitf already has.
NUMPY_METHODS = {
    "T": property(lambda self: transpose(self)),
    "tolist": _tolist,
    "transpose": _transpose_method,
    "flatten": flatten,
    "reshape": _reshape_method,
    "ravel": ravel,
    "clip": clip,
    "astype": lambda self, dtype: asarray(self, dtype),
    "__round__": around,
    "max": amax,
    "mean": mean,
    "min": amin,
    "data": property(lambda self: self),
}


_PROMOTING_OPERATORS = ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
                        "__truediv__", "__rtruediv__", "__floordiv__", "__rfloordiv__",
                        "__mod__", "__rmod__", "__pow__", "__rpow__", "__matmul__",
                        "__rmatmul__", "__lt__", "__le__", "__gt__", "__ge__", "__eq__",
                        "__ne__", "__and__", "__rand__", "__or__", "__ror__", "__xor__",
                        "__rxor__")
_OPERAND_TYPES = (_Tensor, _np.ndarray, _np.generic, bool, int, float)


def _promoting(operator):
    """``operator`` with its operands first brought to NumPy's common dtype when they differ
    (``int32_tensor + float32_tensor`` is float64; Python scalars stay weak: ``int32 * 2`` is
    int32)."""
    def method(self, other):
        if isinstance(other, _OPERAND_TYPES) and not self.dtype.name == "string":
            target = result_type(self, other)
            if target != self.dtype or isinstance(other, _Tensor) and other.dtype != target:
                return operator(asarray(self, target), asarray(other, target))
        return operator(self, other)
    method.numpy_promoting = operator
    return method


def experimental_enable_numpy_behavior(prefer_float32=False, dtype_conversion_mode="legacy"):
    """Add NumPy's methods (``.T``, ``.reshape``, ``.astype``, ``.ravel``, ``.clip``...) to
    ``tf.Tensor`` and make its operators promote mixed dtypes as NumPy does;
    ``prefer_float32`` makes Python floats float32 in this namespace."""
    if dtype_conversion_mode not in ("off", "legacy", "safe", "all"):
        raise ValueError(f"experimental_enable_numpy_behavior: dtype_conversion_mode="
                         f"{dtype_conversion_mode!r}; expected 'off', 'legacy', 'safe' or 'all'")
    for name, method in NUMPY_METHODS.items():
        setattr(_Tensor, name, method)
    for name in _PROMOTING_OPERATORS:
        current = getattr(_Tensor, name)
        if not hasattr(current, "numpy_promoting"):
            setattr(_Tensor, name, _promoting(current))
    from .experimental_numpy_base import set_prefer_float32
    set_prefer_float32(prefer_float32)


def install(tf):
    """Set ``tf.experimental.numpy`` (this module) so ``tf.experimental.numpy.ones`` and
    ``import minitf.experimental.numpy as tnp`` work. Idempotent."""
    import sys
    from .namespace_imports import namespace
    namespace(tf, "experimental").numpy = sys.modules[__name__]
