"""``tf.sets``: intersection, union and difference of the sets in the last dimension of two
tensors (dense or SparseTensor), and the size of each set of a SparseTensor.

The sets are the rows of the last dimension: every entry of a dense row, the stored values of a
sparse row. The results are SparseTensors whose rows hold the values of each result set in
increasing order (bytes order for strings); the last dimension is the largest result size.
The set algebra runs on the host, as TF's CPU kernels do.
"""
import itertools

import numpy

from . import backend as B
from . import dtypes
from .ops.convert import convert_to_tensor
from .ops.registry import InvalidArgumentError
from .sparse_tensor import SparseTensor
from .string_tensors import string_tensor
from .tensor import Tensor, host_value

_SET_DTYPES = (dtypes.int8, dtypes.int16, dtypes.int32, dtypes.int64, dtypes.uint8,
               dtypes.uint16, dtypes.string)


def _as_set_input(value):
    if isinstance(value, SparseTensor):
        return value
    return value if isinstance(value, Tensor) else convert_to_tensor(value)


def _host_values(t, what):
    if t.dtype == dtypes.string:
        return t._value.reshape(-1)
    return numpy.asarray(host_value(t, what)).reshape(-1)


def _rows(fn, value, what):
    """``(leading shape, {row index: set of values})`` of a dense tensor or SparseTensor."""
    shape = tuple(value._dims) if isinstance(value, SparseTensor) else tuple(value.shape)
    if value.dtype not in _SET_DTYPES:
        names = ", ".join(d.name for d in _SET_DTYPES)
        raise TypeError(f"{fn}: {what} has invalid dtype {value.dtype.name}; expected one of "
                        f"{names}")
    if len(shape) < 2:
        raise InvalidArgumentError(f"{fn}: {what} must have rank >= 2, got shape "
                                   f"{list(shape)}")
    leading = shape[:-1]
    rows = {}
    if isinstance(value, SparseTensor):
        indices = value._host_indices(f"{fn}: {what}")
        items = _host_values(value.values, f"{fn}: {what}").tolist()
        for index, item in zip(indices.tolist(), items):
            rows.setdefault(tuple(index[:-1]), set()).add(item)
    else:
        items = _host_values(value, f"{fn}: {what}").tolist()
        width = shape[-1]
        for n, index in enumerate(itertools.product(*[range(d) for d in leading])):
            rows[index] = set(items[n * width:(n + 1) * width])
    return leading, rows


def _result(leading, sets, dtype):
    """A SparseTensor holding each row's sorted set."""
    indices, values = [], []
    width = 0
    for index in itertools.product(*[range(d) for d in leading]):
        members = sorted(sets.get(index, ()))
        width = max(width, len(members))
        indices += [index + (j,) for j in range(len(members))]
        values += members
    rank = len(leading) + 1
    index_array = numpy.asarray(indices, numpy.int64).reshape(len(indices), rank)
    if dtype == dtypes.string:
        value_array = numpy.empty(len(values), object)
        value_array[:] = values
        value_tensor = string_tensor(value_array)
    else:
        value_tensor = Tensor(B.from_numpy(numpy.asarray(values, dtype.np).reshape(-1)))
    return SparseTensor._trusted(Tensor(B.from_numpy(index_array)), value_tensor,
                                 list(leading) + [width])


def _set_operation(fn, a, b, combine):
    a, b = _as_set_input(a), _as_set_input(b)
    leading_a, rows_a = _rows(fn, a, "a")
    leading_b, rows_b = _rows(fn, b, "b")
    if a.dtype != b.dtype:
        raise TypeError(f"{fn}: a and b must have the same dtype, got {a.dtype.name} and "
                        f"{b.dtype.name}")
    if leading_a != leading_b:
        raise InvalidArgumentError(f"{fn}: a and b must have the same shape except in the last "
                                   f"dimension, got {list(leading_a)} and {list(leading_b)}")
    empty = set()
    sets = {index: combine(rows_a.get(index, empty), rows_b.get(index, empty))
            for index in set(rows_a) | set(rows_b)}
    return _result(leading_a, sets, a.dtype)


def set_intersection(a, b, validate_indices=True):
    """The values present in both the row of ``a`` and the row of ``b``, per row."""
    return _set_operation("set_intersection", a, b, lambda x, y: x & y)


def set_union(a, b, validate_indices=True):
    """The values present in the row of ``a`` or the row of ``b``, per row."""
    return _set_operation("set_union", a, b, lambda x, y: x | y)


def set_difference(a, b, aminusb=True, validate_indices=True):
    """The values of each row of ``a`` missing from ``b`` (``b - a`` with
    ``aminusb=False``)."""
    if aminusb:
        return _set_operation("set_difference", a, b, lambda x, y: x - y)
    return _set_operation("set_difference", a, b, lambda x, y: y - x)


def set_size(a, validate_indices=True):
    """The number of distinct values in each row of the SparseTensor ``a`` (int32, shape
    ``a.shape[:-1]``)."""
    if not isinstance(a, SparseTensor):
        raise TypeError(f"set_size: expected a SparseTensor, got {type(a).__name__}")
    leading, rows = _rows("set_size", a, "a")
    sizes = numpy.zeros(leading, numpy.int32)
    for index, members in rows.items():
        sizes[index] = len(members)
    return Tensor(B.from_numpy(sizes))


def install(tf):
    """Set ``tf.sets`` (TF 2's short names and the ``set_*`` names of TF 1)."""
    from types import SimpleNamespace
    tf.sets = SimpleNamespace(intersection=set_intersection, union=set_union,
                              difference=set_difference, size=set_size,
                              set_intersection=set_intersection, set_union=set_union,
                              set_difference=set_difference, set_size=set_size)


__all__ = ["set_intersection", "set_union", "set_difference", "set_size"]
