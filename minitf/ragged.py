"""``minitf.RaggedTensor`` and ``minitf.ragged``: tensors whose rows differ in length.

The class lives in ``ragged_tensor``, its dense/sparse conversions and indexing in
``ragged_dense``, TF's ops on RaggedTensors in ``ragged_ops_more``; this module holds the
``tf.ragged`` functions. Gradients reach the flat values through the operations that move them
with recorded ops (see ``ragged_tensor``).
"""
import builtins

import numpy

from . import backend as B
from . import dtypes
from .ops.convert import convert_to_tensor
from .ops.registry import InvalidArgumentError
from .ragged_dense import _ranges
from .ragged_tensor import (RaggedTensor, check_splits, host_ints, host_work, shown,
                            splits_dtype_of)
from .string_tensors import bytes_array, is_string_value, string_tensor
from .tensor import Tensor

__all__ = ["RaggedTensor", "constant", "map_flat_values", "range", "row_splits_to_segment_ids",
           "segment_ids_to_row_splits"]


# --- constant -----------------------------------------------------------------------------
def _is_list(value):
    return isinstance(value, (list, tuple)) or numpy.ndim(value) != 0


def _scalar_and_max_depth(value):
    """(depth of the scalars or None if there are none, depth of the deepest list)."""
    if not _is_list(value):
        return 0, 0
    scalar_depth, max_depth = None, 1
    for child in value:
        child_scalar, child_max = _scalar_and_max_depth(child)
        if child_scalar is not None:
            if scalar_depth is not None and scalar_depth != child_scalar + 1:
                raise ValueError("minitf.ragged.constant: all scalar values must have the same "
                                 "nesting depth")
            scalar_depth = child_scalar + 1
        max_depth = builtins.max(max_depth, child_max + 1)
    return scalar_depth, max_depth


def _default_inner_shape(pylist, ragged_rank):
    """TF's inner shape for ``pylist`` cut ``ragged_rank`` times: the shape of the first inner
    value, which every other inner value must share."""
    flat = list(pylist)
    for dim in builtins.range(ragged_rank):
        if not all(_is_list(v) for v in flat):
            raise ValueError(f"minitf.ragged.constant: pylist has scalar values at depth "
                             f"{dim + 1}, but ragged_rank={ragged_rank} needs them deeper than "
                             f"{ragged_rank}")
        flat = [item for v in flat for item in v]

    def shape_of(item):
        if not _is_list(item):
            return ()
        return (len(item),) + shape_of(item[0]) if len(item) else (0,)

    def check(item, shape):
        if _is_list(item) != builtins.bool(shape) or (shape and shape[0] != len(item)):
            raise ValueError("minitf.ragged.constant: inner values have inconsistent shapes")
        for child in (item if shape else ()):
            check(child, shape[1:])

    shape = shape_of(flat)
    check(flat, shape)
    return shape[1:]


class MixedTypesError(TypeError, ValueError):
    """Strings mixed with other values: TF's ValueError, and a TypeError as minitf's other
    string conversion errors."""


def _inner_tensor(values, dtype, shape):
    """A Tensor of ``values`` with ``dtype`` (inferred as TF does when None) and ``shape``."""
    where = "minitf.ragged.constant"
    if (dtype is not None and dtypes.as_dtype(dtype) is dtypes.string) or (
            dtype is None and is_string_value(values)):
        try:
            array = bytes_array(values, where)
        except TypeError as exc:
            raise MixedTypesError(f"{where}: can't convert Python sequence with mixed types to a "
                             f"tensor: {exc}") from None
        t = string_tensor(array)
    else:
        t = convert_to_tensor(values, dtype=dtype)
    if shape is not None and tuple(t.shape) != tuple(shape):
        if int(numpy.prod(t.shape)) != int(numpy.prod(shape)):
            raise ValueError(f"{where}: values of shape {tuple(t.shape)} do not fit the shape "
                             f"{tuple(shape)}")
        t = Tensor(t._value.reshape(tuple(shape)))
    return t


def constant(pylist, dtype=None, ragged_rank=None, inner_shape=None, name=None,
             row_splits_dtype=dtypes.int64):
    """A RaggedTensor from nested Python lists (TF's ``tf.ragged.constant``).

    >>> minitf.ragged.constant([[1, 2], [3]])          # <tf.RaggedTensor [[1, 2], [3]]>
    >>> minitf.ragged.constant([[[1, 2]], [[3, 4], [5, 6]]], ragged_rank=1).shape
    TensorShape([2, None, 2])

    ``ragged_rank`` defaults to the scalar depth - 1 - ``len(inner_shape)``; lists too shallow
    to be ragged give a plain Tensor, as in TF.
    """
    where = "minitf.ragged.constant"
    if isinstance(pylist, RaggedTensor):
        raise TypeError(f"{where}: pylist may not be a RaggedTensor")
    inner_shape = None if inner_shape is None else tuple(int(d) for d in inner_shape)
    if not isinstance(pylist, (list, tuple)) and numpy.ndim(pylist) == 0:
        if ragged_rank not in (None, 0) or inner_shape:
            raise ValueError(f"{where}: the scalar {pylist!r} is incompatible with "
                             f"ragged_rank={ragged_rank} and inner_shape={inner_shape}")
        return _inner_tensor(pylist, dtype, ())
    if ragged_rank is not None and ragged_rank < 0:
        raise ValueError(f"{where}: ragged_rank must be >= 0, got {ragged_rank}")
    scalar_depth, max_depth = _scalar_and_max_depth(pylist)
    if scalar_depth is not None:
        if max_depth > scalar_depth:
            raise ValueError(f"{where}: pylist {pylist!r:.60} nests empty lists deeper than "
                             f"its scalar values")
        if ragged_rank is not None and max_depth < ragged_rank:
            raise ValueError(f"{where}: pylist {pylist!r:.60} is shallower than "
                             f"ragged_rank={ragged_rank}")
    if inner_shape is not None and ragged_rank is not None:
        expected = ragged_rank + len(inner_shape) + 1
        if (expected != scalar_depth) if scalar_depth is not None else expected < max_depth:
            raise ValueError(f"{where}: pylist {pylist!r:.60} is incompatible with "
                             f"ragged_rank={ragged_rank} and inner_shape={inner_shape}")
    if ragged_rank == 0 or (ragged_rank is None and (
            max_depth < 2 or (inner_shape is not None and max_depth - len(inner_shape) < 2))):
        return _inner_tensor(pylist, dtype, inner_shape)
    if inner_shape is None:
        inner_shape = () if ragged_rank is None else _default_inner_shape(pylist, ragged_rank)
    if ragged_rank is None:
        depth = max_depth if scalar_depth is None else scalar_depth - len(inner_shape)
        ragged_rank = builtins.max(1, depth - 1)
    nested_splits, values = [], list(pylist)
    for _ in builtins.range(ragged_rank):
        splits = [0]
        for row in values:
            splits.append(splits[-1] + len(row))
        nested_splits.append(splits)
        values = [item for row in values for item in row]
    result = _inner_tensor(values, dtype, (len(values),) + inner_shape)
    splits_dtype = splits_dtype_of(None, None, row_splits_dtype)
    for splits in reversed(nested_splits):
        result = RaggedTensor._make(result, numpy.asarray(splits, dtype=splits_dtype))
    return result


# --- other tf.ragged functions ------------------------------------------------------------
def _matching_dtype(tensors, dtype):
    if dtype is not None:
        return dtypes.as_dtype(dtype)
    order = [dtypes.int32, dtypes.int64, dtypes.float32, dtypes.float64]
    for t in tensors:
        if t.dtype not in order:
            raise TypeError(f"minitf.ragged.range: expected int32, int64, float32 or float64 "
                            f"arguments, got {t.dtype.name}")
    return builtins.max((t.dtype for t in tensors), key=order.index)


def range(starts, limits=None, deltas=1, dtype=None, name=None,  # noqa: A001 - TF's name
          row_splits_dtype=dtypes.int64):
    """Row ``i`` is ``range(starts[i], limits[i], deltas[i])`` (scalars broadcast; one argument
    gives ``range(0, starts[i])``), as TF's ``tf.ragged.range``."""
    where = "minitf.ragged.range"
    host_work(where)
    if limits is None:
        starts, limits = 0, starts
    parts = [convert_to_tensor(v) for v in (starts, limits, deltas)]
    out_dtype = _matching_dtype(parts, dtype)
    host = [numpy.asarray(B.to_numpy(t._value)).astype(out_dtype.np) for t in parts]
    if any(h.ndim > 1 for h in host):
        raise InvalidArgumentError(f"{where}: starts, limits and deltas must be scalars or "
                                   f"vectors, got shapes {[h.shape for h in host]}")
    try:
        starts_h, limits_h, deltas_h = numpy.broadcast_arrays(*[numpy.atleast_1d(h) for h in host])
    except ValueError:
        raise InvalidArgumentError(f"{where}: starts, limits and deltas have different lengths "
                                   f"{[h.shape for h in host]}") from None
    if numpy.any(deltas_h == 0):
        raise InvalidArgumentError(f"{where}: deltas must be nonzero, got {shown(deltas_h)}")
    pieces, lengths = [], []
    for start, limit, delta in zip(starts_h, limits_h, deltas_h):
        if out_dtype.is_integer:
            _, row = _ranges(numpy.asarray([start]), numpy.asarray([limit]), int(delta))
        else:
            count = builtins.max(0, int(numpy.ceil((limit - start) / delta)))
            row = start + numpy.arange(count) * delta
        pieces.append(row.astype(out_dtype.np))
        lengths.append(len(row))
    values = numpy.concatenate(pieces) if pieces else numpy.zeros(0, out_dtype.np)
    splits = numpy.concatenate([[0], numpy.cumsum(lengths)]).astype(
        splits_dtype_of(None, None, row_splits_dtype))
    return RaggedTensor._make(Tensor(B.from_numpy(values)), splits)


def row_splits_to_segment_ids(splits, name=None, out_type=None):
    """The row index of each value, from row splits (``RaggedTensor.value_rowids``)."""
    where = "minitf.ragged.row_splits_to_segment_ids"
    host_work(where)
    host, source = host_ints(splits, where, "splits")
    check_splits(host, int(host[-1]) if host.ndim == 1 and host.size else 0, where, "splits")
    ids = numpy.repeat(numpy.arange(host.size - 1), numpy.diff(host))
    dtype = splits_dtype_of(source, None, out_type)
    return Tensor(B.from_numpy(ids.astype(dtype)))


def segment_ids_to_row_splits(segment_ids, num_segments=None, out_type=None, name=None):
    """Row splits from sorted segment ids (``RaggedTensor.from_value_rowids``'s splits)."""
    where = "minitf.ragged.segment_ids_to_row_splits"
    host_work(where)
    ids, _ = host_ints(segment_ids, where, "segment_ids")
    if ids.ndim != 1:
        raise ValueError(f"{where}: segment_ids must be a vector, got shape {ids.shape}")
    count = int(ids.max()) + 1 if ids.size else 0
    if num_segments is not None:
        count = builtins.max(count, int(num_segments))
    splits = numpy.concatenate([[0], numpy.cumsum(numpy.bincount(ids, minlength=count))])
    dtype = numpy.int64 if out_type is None else dtypes.as_dtype(out_type).np
    return Tensor(B.from_numpy(splits.astype(dtype)))


def _flat_structure(value, found):
    """``value`` with each RaggedTensor inside (lists, tuples, dicts) replaced by its flat
    values; the RaggedTensors are appended to ``found``."""
    if isinstance(value, RaggedTensor):
        found.append(value)
        return value.flat_values
    if isinstance(value, (list, tuple)):
        return type(value)(_flat_structure(v, found) for v in value)
    if isinstance(value, dict):
        return {k: _flat_structure(v, found) for k, v in value.items()}
    return value


def map_flat_values(op, *args, **kwargs):
    """``op`` applied to the flat values of the RaggedTensors among the arguments, in their
    ragged structure (TF's ``tf.ragged.map_flat_values``): the RaggedTensors must share their
    row splits, and ``op``'s result must have one row per flat value."""
    where = "minitf.ragged.map_flat_values"
    found = []
    flat_args = _flat_structure(list(args), found)
    flat_kwargs = _flat_structure(kwargs, found)
    if not found:
        return op(*flat_args, **flat_kwargs)
    first = found[0]
    for other in found[1:]:
        if other.ragged_rank != first.ragged_rank or any(
                not numpy.array_equal(a, b) for a, b in zip(_nested_host_splits(first),
                                                           _nested_host_splits(other))):
            raise InvalidArgumentError(f"{where}: the RaggedTensor arguments have different row "
                                       f"splits: {first!r:.80} and {other!r:.80}")
    result = op(*flat_args, **flat_kwargs)
    if not isinstance(result, (Tensor, RaggedTensor)):
        result = convert_to_tensor(result)
    rows = result._nrows if isinstance(result, RaggedTensor) else (
        int(result.shape[0]) if result.ndim else None)
    if rows != int(first.flat_values.shape[0]):
        raise ValueError(f"{where}: op must return one row per flat value "
                         f"({int(first.flat_values.shape[0])}), got shape {result.shape}")
    return first.with_flat_values(result)


def _nested_host_splits(rt):
    out = []
    while isinstance(rt, RaggedTensor):
        out.append(rt._splits)
        rt = rt._values
    return out
