"""Turning Python values into Tensors with TF's dtype rules."""
import numbers

import numpy

from .. import backend as B
from .. import dtypes
from .. import string_tensors
from ..tensor import Tensor, _next_id
from ..variable_updates import IndexedSlices
from .registry import DTypeMismatchError


class ConversionDTypeError(TypeError, ValueError):
    """A tensor converted to another dtype: TF's ValueError, and a TypeError as minitf's
    other dtype errors."""

_PY_DEFAULTS = {"f": numpy.float32, "i": numpy.int32, "u": numpy.int32, "b": numpy.bool_}
_INT32 = numpy.iinfo(numpy.int32)


def _const(array):
    """A Tensor around a backend array (Tensor() without the __init__ call: the hot path)."""
    t = Tensor.__new__(Tensor)
    t._value = array
    t._id = _next_id()
    return t


def _check_kind(arr, value):
    if arr.dtype.kind not in "biufc" and not dtypes.is_float(arr.dtype):
        raise TypeError(f"cannot convert {type(value).__name__} {value!r:.80} to a tensor: "
                        f"unsupported dtype {arr.dtype}")


def _default_array(value, narrow=True):
    """Python scalars and lists: floats become float32 and ints int32 (int64 when they do not
    fit), as in TF. ``narrow=False`` keeps numpy's float64/int64 (for a requested dtype, which
    takes the Python value as it is: ``constant(0.1, float64)`` is 0.1, not float32's 0.1)."""
    try:
        arr = numpy.asarray(value)
    except (ValueError, TypeError) as exc:  # ragged nested lists, odd objects
        raise TypeError(f"cannot convert {type(value).__name__} {value!r:.80} to a tensor: "
                        f"{exc}") from None
    _check_kind(arr, value)
    if narrow and arr.dtype.itemsize == 8 and arr.dtype.kind in "fiu":
        if arr.dtype.kind == "f":
            arr = arr.astype(numpy.float32)
        elif arr.size == 0 or (_INT32.min <= arr.min() and arr.max() <= _INT32.max):
            arr = arr.astype(numpy.int32)
    return arr


def convert_to_tensor(value, dtype=None, dtype_hint=None, name=None):
    """A Tensor from a Tensor, Variable, numpy array, Python number or nested list.

    Python floats become float32 and ints int32; numpy arrays keep their dtype. With ``dtype``
    the value is converted, except that a Tensor of another dtype is an error (use ``cast``).
    A Variable gives a snapshot of its value (later assignments do not change it), as in TF;
    gradients flow through it to the variable.
    """
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype)
    if dtype is dtypes.string or (dtype is None and not isinstance(value, Tensor)
                                  and string_tensors.is_string_value(value)):
        return _string_tensor(value, dtype)
    if isinstance(value, Tensor):
        if dtype is not None and value._value.dtype != dtype.np:
            raise ConversionDTypeError(f"convert_to_tensor: tensor has dtype {value.dtype.name}, "
                                       f"requested {dtype.name}; use minitf.cast to change "
                                       f"dtypes")
        return value.read_value() if value._is_variable else value
    if dtype is None and dtype_hint is not None:
        dtype = dtypes.as_dtype(dtype_hint)
        arr = _default_array(value) if not B.is_array(value) else value
        if not _fits(arr, dtype):
            dtype = None
    if B.is_array(value) or isinstance(value, numpy.generic):
        _check_kind(numpy.asarray(value) if isinstance(value, numpy.generic) else value, value)
        arr = value if dtype is None else value.astype(dtype.np, copy=False)
        return _const(B.xp.asarray(arr))
    if isinstance(value, IndexedSlices):
        return value.to_dense() if dtype is None else convert_to_tensor(value.to_dense(), dtype)
    if isinstance(value, (list, tuple)) and any(isinstance(v, Tensor) for v in _flatten(value)):
        from .array_ops import stack
        return stack([convert_to_tensor(v, dtype=dtype) for v in value])
    arr = _default_array(value, narrow=dtype is None)
    if dtype is not None:
        if not _fits(arr, dtype):
            raise TypeError(f"cannot convert {value!r:.80} to a tensor of dtype {dtype.name}")
        arr = arr.astype(dtype.np)
    return _const(B.xp.asarray(arr))


def _string_tensor(value, dtype):
    """A string tensor (host numpy object array of bytes) from strings, or a TypeError."""
    if isinstance(value, Tensor):
        if value.dtype is not dtypes.string:
            raise ConversionDTypeError(f"convert_to_tensor: tensor has dtype "
                                       f"{value.dtype.name}, requested string; use "
                                       f"minitf.strings.as_string to format numbers")
        return value
    if dtype is not None and not (string_tensors.is_string_value(value)
                                  or numpy.size(value) == 0):   # [] of dtype string
        raise TypeError(f"cannot convert {value!r:.80} to a tensor of dtype string: expected "
                        f"str or bytes values")
    return string_tensors.string_tensor(string_tensors.bytes_array(value))


def _flatten(value):
    for v in value:
        if isinstance(v, (list, tuple)):
            yield from _flatten(v)
        else:
            yield v


def _fits(arr, dtype):
    """Can this Python-derived value take ``dtype`` without losing meaning (TF's check)?"""
    if dtype.is_complex or arr.dtype.kind == "c":   # numbers become complex, not the reverse
        return dtype.is_complex
    if dtype.is_floating or arr.dtype.kind in "biu":
        return dtype.is_floating or dtype.is_integer or arr.dtype.kind == "b" == dtype.np.kind
    return bool(numpy.all(numpy.mod(arr, 1) == 0)) if dtype.is_integer else False


def operand_pair(op_name, a, b):
    """Convert a binary op's operands: a non-tensor side takes the tensor side's dtype.

    Two tensors of different dtypes are an error (both TF's InvalidArgumentError and
    TypeError).
    """
    if isinstance(a, Tensor):
        if isinstance(b, Tensor):
            if a._value.dtype != b._value.dtype:
                raise DTypeMismatchError(f"{op_name}: operands have different dtypes {a.dtype.name} and "
                                f"{b.dtype.name} (shapes {tuple(a.shape)} and {tuple(b.shape)}); "
                                f"cast one with minitf.cast")
            return a, b
        return a, _like(op_name, b, a)
    if isinstance(b, Tensor):
        return _like(op_name, a, b), b
    a = convert_to_tensor(a)
    return a, _like(op_name, b, a)


def _like(op_name, value, tensor):
    """``value`` (not a Tensor) as a Tensor of ``tensor``'s dtype."""
    np_dtype = tensor._value.dtype
    kind = type(value)
    if kind is float or kind is int or (isinstance(value, numbers.Number)
                                        and not isinstance(value, bool)):
        if kind is complex and np_dtype.kind != "c":
            raise TypeError(f"{op_name}: cannot combine the {tensor.dtype.name} tensor with the "
                            f"complex {value!r}; cast the tensor to a complex dtype first")
        if (np_dtype.kind in "iub" and isinstance(value, (float, numpy.floating))
                and not float(value).is_integer()):
            raise TypeError(f"{op_name}: cannot combine the {tensor.dtype.name} tensor with the "
                            f"float {value!r}; cast the tensor to a float dtype first")
        return _const(B.xp.asarray(value, dtype=np_dtype))
    try:
        return convert_to_tensor(value, dtype=tensor.dtype)
    except TypeError as exc:
        raise TypeError(f"{op_name}: cannot use {value!r:.80} with a {tensor.dtype.name} "
                        f"tensor: {exc}") from None
