"""Dtypes, dtype inference and conversion for ``tf.experimental.numpy``.

TF's NumPy API follows NumPy's promotion rules (NumPy 2, where Python scalars are weak):
``int32 + 1.5`` is float64, ``float32 + 1.5`` stays float32 and lists of Python ints and floats
become int64 and float64. ``prefer_float32`` (set by ``experimental_enable_numpy_behavior``)
makes Python floats float32 instead.
"""
import numbers

import numpy as np

from . import backend as B
from . import dtypes as _dtypes
from .ops import math_ops as _m
from .ops.convert import convert_to_tensor as _convert
from .tensor import Tensor

bool_ = np.bool_
float16 = np.float16
float32 = np.float32
float64 = np.float64
float_ = np.float64
inexact = np.inexact
int_ = np.int64
int8 = np.int8
int16 = np.int16
int32 = np.int32
int64 = np.int64
uint8 = np.uint8
uint16 = np.uint16
uint32 = np.uint32
uint64 = np.uint64
object_ = np.object_
string_ = np.bytes_
unicode_ = np.str_
ndarray = Tensor
e = np.e
pi = np.pi
inf = np.inf
newaxis = None
iinfo = np.iinfo
issubdtype = np.issubdtype

_settings = {"prefer_float32": False}


def is_prefer_float32():
    """Whether Python floats become float32 (else float64, NumPy's choice)."""
    return _settings["prefer_float32"]


def set_prefer_float32(value):
    _settings["prefer_float32"] = bool(value)


def _np_dtype(dtype):
    """A numpy dtype for a numpy type or dtype, a minitf DType, a name or a Python type."""
    if isinstance(dtype, _dtypes.DType):
        return dtype.np
    if dtype is float:
        return np.dtype(np.float64)
    if dtype is int:
        return np.dtype(np.int64)
    if dtype is bool:
        return np.dtype(np.bool_)
    try:
        return np.dtype(dtype)
    except TypeError:
        raise TypeError(f"tf.experimental.numpy: cannot interpret {dtype!r} as a dtype; expected "
                        f"a numpy type, a tf.DType or a dtype name") from None


def _type_keys(value, keys):
    """Append what numpy's ``result_type`` needs from ``value`` (nested lists are flattened)."""
    if isinstance(value, Tensor):
        keys.append(value.dtype.np)
    elif isinstance(value, _dtypes.DType):
        keys.append(value.np)
    elif isinstance(value, (np.ndarray, np.generic)):
        keys.append(value.dtype)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _type_keys(item, keys)
    elif isinstance(value, float) and is_prefer_float32():
        keys.append(np.float32(value))
    elif isinstance(value, numbers.Number):
        keys.append(value)
    else:
        keys.append(_np_dtype(value))


def result_type(*arrays_and_dtypes):
    """The dtype NumPy's promotion gives these arrays, scalars and dtypes (a ``tf.DType``)."""
    keys = []
    for value in arrays_and_dtypes:
        _type_keys(value, keys)
    if not keys:
        keys = [np.dtype(np.float64)]
    return _dtypes.as_dtype(np.result_type(*keys))


def promote_types(type1, type2):
    """``numpy.promote_types`` of two dtypes (a numpy dtype)."""
    return np.promote_types(_np_dtype(type1), _np_dtype(type2))


def finfo(dtype):
    """``numpy.finfo`` of a float dtype (a ``tf.DType``, numpy type or name)."""
    return np.finfo(_np_dtype(dtype))


def isscalar(num):
    """True for Python and numpy scalars and for tensors of rank 0."""
    if isinstance(num, Tensor):
        return num.shape.rank == 0
    return np.isscalar(num)


def _default_float():
    return _dtypes.float64


def _contains_tensor(value):
    if isinstance(value, Tensor):
        return True
    return isinstance(value, (list, tuple)) and any(_contains_tensor(v) for v in value)


def asarray(a, dtype=None):
    """``a`` as a tensor; Python values get NumPy's dtypes (ints int64, floats float64)."""
    if isinstance(a, Tensor):
        if dtype is None or a.dtype == _np_dtype(dtype):
            return a
        return _m.cast(a, _dtypes.as_dtype(_np_dtype(dtype)))
    if _contains_tensor(a):
        from .ops import array_ops
        target = result_type(a) if dtype is None else _dtypes.as_dtype(_np_dtype(dtype))
        return array_ops.stack([asarray(v, target) for v in a])
    host = np.asarray(a)
    if host.dtype.kind in "OUS":
        return _convert(a)
    if dtype is not None:
        target = _np_dtype(dtype)
    elif isinstance(a, (np.ndarray, np.generic)) or not host.size:
        target = host.dtype
    else:
        target = result_type(a).np
    return Tensor(B.from_numpy(np.array(host, dtype=target)))


def array(val, dtype=None, copy=True, ndmin=0):
    """A new tensor holding ``val`` with at least ``ndmin`` dimensions."""
    from .ops import array_ops
    result = asarray(val, dtype)
    if copy and result is val:
        result = array_ops.identity(result)
    missing = int(ndmin) - result.shape.rank
    if missing > 0:
        result = array_ops.reshape(result, [1] * missing + list(result.shape))
    return result


def asanyarray(a, dtype=None):
    """The same as ``asarray``."""
    return asarray(a, dtype)


def ascontiguousarray(a, dtype=None):
    """``asarray`` with at least one dimension."""
    return array(a, dtype, copy=False, ndmin=1)


def copy(a):
    """A new tensor holding the values of ``a``."""
    return array(a, copy=True)


def promote(*values):
    """The values as tensors of their common dtype (NumPy's promotion)."""
    target = result_type(*values)
    return [asarray(v, target) for v in values]


def to_float(x):
    """``x`` as a tensor; integer and bool tensors become float64, as NumPy's ufuncs do."""
    x = asarray(x)
    return x if x.dtype.is_floating else _m.cast(x, _default_float())


def float_pair(x1, x2):
    """Both operands in their common dtype, made float64 if that is not a float."""
    x1, x2 = promote(x1, x2)
    if not x1.dtype.is_floating:
        x1, x2 = _m.cast(x1, _default_float()), _m.cast(x2, _default_float())
    return x1, x2


def ndim(a):
    """The number of dimensions of ``a`` (a Python int)."""
    return asarray(a).shape.rank


def shape(a):
    """The shape of ``a`` as a tuple of ints."""
    return tuple(int(d) for d in asarray(a).shape)


def size(x, axis=None):
    """The number of elements of ``x`` (along ``axis`` if given), a numpy int64."""
    dims = shape(x)
    count = np.prod(dims, dtype=np.int64) if axis is None else dims[axis]
    return np.int64(count)
