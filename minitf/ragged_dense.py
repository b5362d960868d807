"""RaggedTensor to and from dense and sparse tensors, and ragged indexing (TF semantics).

The ragged structure is worked out on the host from the row splits; numeric values are then
moved with one gather on the backend (recorded for ``to_tensor`` and indexing, so gradients
reach the flat values), string values on the host.
"""
import math

import numpy

from . import backend as B
from .ops.convert import convert_to_tensor
from .ops.registry import InvalidArgumentError
from .ragged_tensor import (RaggedTensor, backend_index, host_ints, host_work, shown,
                            slice_values, splits_dtype_of, take_values)
from .sparse_tensor import SparseTensor
from .string_tensors import bytes_array, is_string_array
from .tensor import Tensor, TensorShape, host_value

_INT64 = numpy.dtype(numpy.int64)


def _xp(array):
    return numpy if is_string_array(array) else B.xp


def _dense(value, where):
    if isinstance(value, Tensor):
        return value.read_value() if value._is_variable else value
    if isinstance(value, RaggedTensor):
        raise TypeError(f"{where}: expected a dense tensor, got a RaggedTensor")
    return convert_to_tensor(value)


# --- to_tensor ----------------------------------------------------------------------------
def _target_shape(shape, rank, where):
    """``shape`` as a list of ``rank`` ints or None (None and -1 keep a dimension)."""
    if shape is None or (isinstance(shape, TensorShape) and shape.rank is None):
        return [None] * rank
    if isinstance(shape, Tensor):
        shape = numpy.asarray(host_value(shape, f"{where}'s shape")).reshape(-1).tolist()
    dims = [None if d is None or int(d) < 0 else int(d) for d in shape]
    if len(dims) != rank:
        raise ValueError(f"{where}: shape {list(shape)} has rank {len(dims)}, the ragged tensor "
                         f"has rank {rank}")
    return dims


def _default_array(default_value, flat, where):
    """``default_value`` as an array of the values' dtype broadcastable to their inner shape."""
    inner = tuple(flat.shape[1:])
    if is_string_array(flat._value):
        array = bytes_array(b"" if default_value is None else default_value,
                            f"{where}'s default_value")
    elif default_value is None:
        array = B.xp.zeros((), dtype=flat._value.dtype)
    else:
        array = convert_to_tensor(default_value, dtype=flat.dtype)._value
    shape = tuple(array.shape)
    if len(shape) > len(inner) or any(a not in (1, b) for a, b in zip(shape[::-1], inner[::-1])):
        raise ValueError(f"{where}: default_value of shape {shape} does not broadcast to the "
                         f"shape {inner} of one value")
    return array


def _densify(rt, default, shape, where):
    """The dense array of ``rt`` padded with ``default``, sized by ``shape`` where given."""
    values = rt._values
    if isinstance(values, RaggedTensor):
        inner = _densify(values, default, [None] + shape[2:], where)
    else:
        inner = values._value
        for given, actual in zip(shape[2:], inner.shape[1:]):
            if given is not None and given != actual:
                raise InvalidArgumentError(
                    f"{where}: shape {shape} would change a dense inner dimension of size "
                    f"{actual} to {given}; only ragged dimensions and rows pad or truncate")
    lengths = numpy.diff(rt._splits)
    nrows = rt._nrows if shape[0] is None else shape[0]
    ncols = (int(lengths.max()) if lengths.size else 0) if shape[1] is None else shape[1]
    out = _xp(inner).empty((nrows, ncols) + tuple(inner.shape[1:]), dtype=inner.dtype)
    out[...] = default
    n = min(nrows, rt._nrows)
    kept = numpy.minimum(lengths[:n], ncols)
    total = int(kept.sum())
    if total:
        rows = numpy.repeat(numpy.arange(n, dtype=_INT64), kept)
        cols = numpy.arange(total, dtype=_INT64) - numpy.repeat(
            numpy.cumsum(kept) - kept, kept)
        source = rt._splits[:n].astype(_INT64)[rows] + cols
        out[backend_index(rows, inner), backend_index(cols, inner)] = \
            inner[backend_index(source, inner)]
    return out


def to_tensor(rt, default_value=None, shape=None):
    """``RaggedTensor.to_tensor``: pad rows with ``default_value`` (zero, ``b""`` or False),
    padding or truncating every dimension to ``shape`` where it is given."""
    where = "RaggedTensor.to_tensor"
    host_work(where)
    dims = _target_shape(shape, len(rt.shape), where)
    flat = rt.flat_values
    default = _default_array(default_value, flat, where)
    if is_string_array(flat._value):
        return Tensor(_densify(rt, default, dims, where))
    # numeric values: a gather from the flat values (and one default row), so that gradients
    # reach the flat values
    ragged_rank = rt.ragged_rank
    inner = tuple(int(d) for d in flat.shape[1:])
    for given, actual in zip(dims[ragged_rank + 1:], inner):
        if given is not None and given != actual:
            raise InvalidArgumentError(
                f"{where}: shape {dims} would change a dense inner dimension of size "
                f"{actual} to {given}; only ragged dimensions and rows pad or truncate")
    count = int(flat.shape[0])
    positions = rt.with_flat_values(Tensor(B.from_numpy(numpy.arange(count, dtype=_INT64))))
    index = _densify(positions, B.xp.asarray(count, dtype=_INT64), dims[:ragged_rank + 1],
                     where)
    from .ops.array_ops import concat, gather
    default_row = Tensor(B.xp.ascontiguousarray(B.xp.broadcast_to(default, (1,) + inner)))
    return gather(concat([flat, default_row], 0), Tensor(index))


# --- from_tensor --------------------------------------------------------------------------
def _lengths_before_padding(tensor, padding, where):
    """For each row of ``tensor``, the length up to its last element that is not ``padding``."""
    array = tensor._value
    if is_string_array(array):
        pad = bytes_array(padding, f"{where}'s padding")
    else:
        pad = convert_to_tensor(padding, dtype=tensor.dtype)._value
    if tuple(pad.shape) != tuple(array.shape[2:]):
        raise ValueError(f"{where}: padding of shape {tuple(pad.shape)} must have the shape "
                         f"{tuple(array.shape[2:])} of one element of a row")
    same = array == pad
    if array.ndim > 2:
        same = same.all(axis=tuple(range(2, array.ndim)))
    same = same.astype(bool) if isinstance(same, numpy.ndarray) else B.to_numpy(same)
    nrows, ncols = array.shape[:2]
    if ncols == 0:
        return numpy.zeros(nrows, _INT64)
    return ((~same) * numpy.arange(1, ncols + 1)).max(axis=1)


def from_tensor(tensor, lengths=None, padding=None, ragged_rank=1, row_splits_dtype=None):
    """``RaggedTensor.from_tensor``: the rows of ``tensor`` (dimension 1 becomes ragged), cut
    to ``lengths`` (clipped to [0, ncols]) or with each row's trailing ``padding`` removed;
    with neither, the rows keep their uniform length. ``ragged_rank`` > 1 makes dimensions
    1..ragged_rank ragged, the outer ones with uniform lengths."""
    where = "RaggedTensor.from_tensor"
    host_work(where)
    if lengths is not None and padding is not None:
        raise ValueError(f"{where}: specify lengths or padding, but not both")
    if not isinstance(ragged_rank, int) or isinstance(ragged_rank, bool):
        raise TypeError(f"{where}: ragged_rank must be an int, got {ragged_rank!r}")
    if ragged_rank <= 0:
        raise ValueError(f"{where}: ragged_rank must be > 0, got {ragged_rank}")
    tensor = _dense(tensor, where)
    shape = tuple(int(d) for d in tensor.shape)
    if len(shape) < ragged_rank + 1:
        raise ValueError(f"{where}: a tensor of shape {shape} has rank {len(shape)}; "
                         f"ragged_rank={ragged_rank} needs rank >= {ragged_rank + 1}")
    splits_dtype = splits_dtype_of(None, None, row_splits_dtype)
    if isinstance(lengths, (list, tuple)) and lengths and not isinstance(
            lengths[0], (int, float, numpy.integer)):
        return _from_nested_lengths(tensor, lengths, ragged_rank, splits_dtype, where)
    if ragged_rank > 1:
        total = math.prod(shape[:ragged_rank])
        flat = Tensor(tensor._value.reshape((total,) + shape[ragged_rank:]))
        result = from_tensor(flat, lengths, padding, 1, splits_dtype)
        for axis in range(ragged_rank - 1, 0, -1):
            result = RaggedTensor.from_uniform_row_length(result, shape[axis],
                                                          nrows=math.prod(shape[:axis]))
        return result
    nrows, ncols = shape[:2]
    values = tensor._value.reshape((nrows * ncols,) + shape[2:])
    if padding is not None:
        lengths = _lengths_before_padding(tensor, padding, where)
    if lengths is None:
        splits = numpy.arange(nrows + 1, dtype=_INT64) * ncols
        return RaggedTensor._make(Tensor(values), splits.astype(splits_dtype), uniform=ncols)
    lengths, _ = host_ints(lengths, where, "lengths")
    if lengths.shape != (nrows,):
        raise InvalidArgumentError(f"{where}: lengths must be a vector of {nrows} row lengths, "
                                   f"got shape {lengths.shape}")
    lengths = numpy.clip(lengths, 0, ncols).astype(_INT64)
    splits = numpy.concatenate([[0], numpy.cumsum(lengths)]).astype(_INT64)
    rows = numpy.repeat(numpy.arange(nrows, dtype=_INT64), lengths)
    index = rows * ncols + numpy.arange(splits[-1]) - numpy.repeat(splits[:-1], lengths)
    return RaggedTensor._make(Tensor(values[backend_index(index, values)]),
                              splits.astype(splits_dtype))


def _from_nested_lengths(tensor, lengths, ragged_rank, splits_dtype, where):
    """``from_tensor`` with one row-lengths vector per ragged dimension: the values inside
    those lengths, in the ragged structure they describe."""
    if ragged_rank not in (1, len(lengths)):
        raise ValueError(f"{where}: {len(lengths)} row-lengths vectors need ragged_rank="
                         f"{len(lengths)}, got {ragged_rank}")
    shape = tuple(int(d) for d in tensor.shape)
    if len(shape) < len(lengths) + 1:
        raise ValueError(f"{where}: {len(lengths)} row-lengths vectors need a tensor of rank "
                         f">= {len(lengths) + 1}, got shape {shape}")
    host = [host_ints(v, where, "lengths")[0] for v in lengths]
    for axis, v in enumerate(host):
        if v.size and v.max() > shape[axis + 1]:
            raise InvalidArgumentError(f"{where}: lengths[{axis}] {shown(v)} exceed the "
                                       f"tensor's dimension {axis + 1} of size {shape[axis + 1]}")
    count = int(host[-1].sum())
    ones = Tensor(B.xp.ones(count, dtype=bool))
    mask = RaggedTensor.from_nested_row_lengths(ones, host).to_tensor(
        False, shape=shape[:len(host) + 1])
    array = tensor._value
    values = Tensor(array[backend_index(B.to_numpy(mask._value), array)])
    return RaggedTensor.from_nested_row_lengths(values, host).with_row_splits_dtype(
        splits_dtype)


# --- sparse -------------------------------------------------------------------------------
def _row_coordinates(splits):
    """For each value under ``splits``: (row, position in the row)."""
    lengths = numpy.diff(splits).astype(_INT64)
    rows = numpy.repeat(numpy.arange(lengths.size, dtype=_INT64), lengths)
    return numpy.stack([rows, numpy.arange(rows.size, dtype=_INT64) - splits[:-1][rows]], 1)


def to_sparse(rt):
    """``RaggedTensor.to_sparse``: int64 indices of every value (dense inner dimensions
    included), its value, and the bounding shape."""
    host_work("RaggedTensor.to_sparse")
    levels, flat = [], rt
    while isinstance(flat, RaggedTensor):
        levels.append(flat._splits.astype(_INT64))
        flat = flat._values
    coords = _row_coordinates(levels[-1])
    for splits in reversed(levels[:-1]):
        outer = _row_coordinates(splits)[coords[:, 0]]
        coords = numpy.concatenate([outer, coords[:, 1:]], 1)
    inner = tuple(int(d) for d in flat.shape[1:])
    values = flat._value
    if inner:
        cells = math.prod(inner)
        positions = numpy.indices(inner).reshape(len(inner), -1).T
        coords = numpy.concatenate([numpy.repeat(coords, cells, 0),
                                    numpy.tile(positions, (coords.shape[0], 1))], 1)
        values = values.reshape(-1)
    indices = Tensor(B.from_numpy(numpy.ascontiguousarray(coords, _INT64)))
    return SparseTensor(indices, Tensor(values), rt._bounding_dims())


def from_sparse(st_input, row_splits_dtype=None):
    """``RaggedTensor.from_sparse``: the rows of a 2-D SparseTensor whose values fill each row
    from column 0 without gaps (right-ragged), in row-major order."""
    where = "RaggedTensor.from_sparse"
    if not isinstance(st_input, SparseTensor):
        raise TypeError(f"{where}: expected a SparseTensor, got {type(st_input).__name__}")
    if len(st_input._dims) != 2:
        raise ValueError(f"{where}: the SparseTensor must have rank 2, got dense_shape "
                         f"{list(st_input._dims)}")
    indices = st_input._host_indices(where)
    rows, cols = indices[:, 0], indices[:, 1]
    starts = numpy.searchsorted(rows, rows, side="left")
    if numpy.any(numpy.diff(rows) < 0) or numpy.any(cols != numpy.arange(rows.size) - starts):
        raise InvalidArgumentError(f"{where}: SparseTensor is not right-ragged (each row's "
                                   f"columns must be 0, 1, 2, ... in order); got indices "
                                   f"{shown(indices, 16)}")
    dtype = splits_dtype_of(None, None, row_splits_dtype)
    rt = RaggedTensor.from_value_rowids(st_input.values, rows, st_input._dims[0])
    return rt.with_row_splits_dtype(dtype)


# --- indexing -----------------------------------------------------------------------------
def _as_int(key, where):
    if isinstance(key, Tensor):
        if not key.dtype.is_integer or key.ndim:
            raise TypeError(f"{where}: a tensor index must be an integer scalar, got "
                            f"{key.dtype.name} of shape {tuple(key.shape)}")
        return int(host_value(key, where))
    if isinstance(key, (int, numpy.integer)) and not isinstance(key, bool):
        return int(key)
    raise TypeError(f"{where}: indices must be ints, slices, Ellipsis or integer scalar "
                    f"tensors, got {type(key).__name__} {key!r:.40}")


def _slice_ints(key, where):
    return tuple(None if v is None else _as_int(v, where)
                 for v in (key.start, key.stop, key.step))


def _expand_ellipsis(keys, remaining_dims):
    """TF's rule: the Ellipsis at ``keys[0]`` stands for no dimension when the other keys
    cover them all, else for one more (it stays in place for the next dimension)."""
    if len(keys) > remaining_dims + 1:
        raise IndexError(f"too many indices for a RaggedTensor: {len(keys) - 1} indices "
                         f"after the Ellipsis for {remaining_dims} dimensions")
    return keys[1:] if len(keys) == remaining_dims + 1 else [slice(None)] + keys


def getitem(rt, key):
    """``rt[key]`` as TF: see ``RaggedTensor.__getitem__``."""
    keys = list(key) if isinstance(key, (tuple, list)) else [key]
    return _getitem(rt, keys)


def _getitem(rt, keys):
    where = "RaggedTensor.__getitem__"
    if not keys:
        return rt
    key, rest = keys[0], keys[1:]
    if key is Ellipsis:
        return _getitem(rt, _expand_ellipsis(keys, len(rt.shape)))
    if key is None:
        raise ValueError(f"{where}: tf.newaxis is not supported for a RaggedTensor")
    if isinstance(key, slice):
        start, stop, step = _slice_ints(key, where)
        if step == 0:
            raise ValueError(f"{where}: slice step cannot be zero")
        rows = range(*slice(start, stop, step).indices(rt._nrows))
        if rows.step == 1:
            sliced = rt if len(rows) == rt._nrows else rt._row_slice(rows.start,
                                                                    max(rows.stop, rows.start))
        else:
            sliced = rt._take_rows(numpy.asarray(rows, dtype=_INT64))
        return _inner(sliced, rest)
    index = _as_int(key, where)
    if not -rt._nrows <= index < rt._nrows:
        raise IndexError(f"{where}: row {index} is out of bounds for a RaggedTensor with "
                         f"{rt._nrows} rows")
    index %= rt._nrows
    row = slice_values(rt._values, int(rt._splits[index]), int(rt._splits[index + 1]))
    if isinstance(row, RaggedTensor):
        return _getitem(row, rest)
    return row[tuple(rest)] if rest else row


def _ranges(starts, limits, step):
    """Host (splits, flat positions) of ``range(starts[i], limits[i], step)`` for each i."""
    if step > 0:
        sizes = numpy.maximum(0, -((starts - limits) // step))
    else:
        sizes = numpy.maximum(0, -((limits - starts) // -step))
    splits = numpy.concatenate([[0], numpy.cumsum(sizes)]).astype(_INT64)
    offsets = numpy.arange(splits[-1], dtype=_INT64) - numpy.repeat(splits[:-1], sizes)
    return splits, numpy.repeat(starts, sizes) + offsets * step


def _offset(offset, starts, limits):
    """Python slice bounds within each row [starts, limits)."""
    if offset >= 0:
        return numpy.minimum(starts + offset, limits)
    return numpy.maximum(limits + offset, starts)


def _inner(rt, keys):
    """``rt[:, keys...]``: the keys applied to the dimensions after the first."""
    where = "RaggedTensor.__getitem__"
    if not keys:
        return rt
    if isinstance(rt, Tensor):
        return rt[(slice(None),) + tuple(keys)]
    key, rest = keys[0], keys[1:]
    if key is Ellipsis:
        return _inner(rt, _expand_ellipsis(keys, len(rt._values.shape)))
    if key is None:
        raise ValueError(f"{where}: tf.newaxis is not supported for a RaggedTensor")
    if not isinstance(key, slice):
        _as_int(key, where)
        raise ValueError(f"{where}: cannot index into an inner ragged dimension (index "
                         f"{key!r}); slice it (rt[:, j:j+1]) or use to_tensor() first")
    start, stop, step = _slice_ints(key, where)
    if start is None and stop is None and step is None:
        return rt.with_values(_inner(rt._values, rest))
    if step == 0:
        raise ValueError(f"{where}: slice step cannot be zero")
    starts, limits = rt._splits[:-1].astype(_INT64), rt._splits[1:].astype(_INT64)
    new_starts = starts if start is None else _offset(start, starts, limits)
    new_limits = limits if stop is None else _offset(stop, starts, limits)
    splits, positions = _ranges(new_starts, new_limits, 1 if step is None else step)
    sliced = RaggedTensor._make(take_values(rt._values, positions),
                                splits.astype(rt._splits.dtype))
    return sliced.with_values(_inner(sliced._values, rest))
