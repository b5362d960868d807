"""More of ``tf.ragged``: ``boolean_mask``, ``cross``, ``cross_hashed``, ``stack`` and
``stack_dynamic_partitions``.

Like the other ragged functions they work out the row structure on the host (a
``minitf.function`` runs its Python body on every call that builds them); ``stack`` moves the
values with recorded ops, so gradients reach them.
"""
import numpy

from . import backend as B
from . import dtypes
from .ops.convert import convert_to_tensor
from .ops.registry import InvalidArgumentError
from .ragged_tensor import RaggedTensor, nvals, take_values
from .sparse_more import crossed_rows, crossed_values, feature_rows, runs_in_python
from .sparse_tensor import SparseTensor
from .string_tensors import OBJECT
from .tensor import Tensor

__all__ = ["boolean_mask", "cross", "cross_hashed", "stack", "stack_dynamic_partitions"]

_I64 = numpy.int64


def _tensor(value):
    if isinstance(value, (Tensor, RaggedTensor)):
        return value
    from .ragged import constant
    try:
        return convert_to_tensor(value)
    except (TypeError, ValueError):   # nested lists of different lengths
        return constant(value)


def _host(tensor):
    array = tensor._value
    return array if array.dtype == OBJECT else numpy.asarray(B.to_numpy(array))


def _rank(x):
    return len(x.shape)


def _splits(lengths, dtype=_I64):
    return numpy.concatenate([[0], numpy.cumsum(lengths)]).astype(dtype)


# --- boolean_mask -------------------------------------------------------------------------
def boolean_mask(data, mask, name=None):
    """The entries of ``data`` where ``mask`` (bool, its shape a prefix of ``data``'s, dense
    or ragged) is true. A vector mask keeps whole rows; a deeper mask makes the masked
    dimensions ragged: ``boolean_mask([[1, 2, 3], [4, 5, 6]], [[T, F, T], [F, F, T]])`` is
    ``[[1, 3], [6]]``."""
    where = "ragged.boolean_mask"
    runs_in_python(where)
    data, mask = _tensor(data), _tensor(mask)
    if mask.dtype is not dtypes.bool:
        raise TypeError(f"{where}: mask must be bool, got {mask.dtype.name}")
    if _rank(mask) == 0 or _rank(mask) > _rank(data):
        raise ValueError(f"{where}: mask must have rank between 1 and data's rank "
                         f"{_rank(data)}, got rank {_rank(mask)}")
    return _mask(data, mask, where)


def _mask(data, mask, where):
    if _rank(mask) == 1:
        keep = _host(mask if isinstance(mask, Tensor) else mask.flat_values).astype(bool)
        if keep.size != nvals(data):
            raise InvalidArgumentError(f"{where}: mask has {keep.size} entries where data has "
                                       f"{nvals(data)} rows")
        return take_values(data, numpy.flatnonzero(keep))
    if not isinstance(data, RaggedTensor):
        data = RaggedTensor.from_tensor(data)
    if not isinstance(mask, RaggedTensor):
        mask = RaggedTensor.from_tensor(mask)
    if not numpy.array_equal(numpy.diff(data._splits), numpy.diff(mask._splits)):
        raise InvalidArgumentError(f"{where}: the row lengths of mask "
                                   f"{numpy.diff(mask._splits).tolist()} differ from data's "
                                   f"{numpy.diff(data._splits).tolist()}")
    values = _mask(data.values, mask.values, where)
    if _rank(mask) > 2:   # rows of the values are kept whole: the same splits
        return RaggedTensor._make(values, data._splits)
    inner = mask.values
    keep = _host(inner if isinstance(inner, Tensor) else inner.flat_values).astype(_I64)
    counts = numpy.diff(numpy.concatenate([[0], numpy.cumsum(keep)])[data._splits])
    return RaggedTensor._make(values, _splits(counts, data._splits.dtype))


# --- cross --------------------------------------------------------------------------------
def _cross(inputs, where, hashed, num_buckets=0, hash_key=None):
    runs_in_python(where)
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise TypeError(f"{where}: inputs must be a non-empty list of RaggedTensors, "
                        f"Tensors or SparseTensors, got {type(inputs).__name__}")
    columns = [feature_rows(x if isinstance(x, (SparseTensor, RaggedTensor)) else _tensor(x),
                            where, i) for i, x in enumerate(inputs)]
    rows = crossed_rows(columns, where, hashed, num_buckets, hash_key)
    return RaggedTensor._make(crossed_values(rows, hashed), _splits([len(r) for r in rows]))


def cross(inputs, name=None):
    """The crosses of the features in each row of ``inputs`` (RaggedTensors, Tensors or
    SparseTensors of rank 2, strings or integers), in the order given: a RaggedTensor of
    strings joined by ``"_X_"``, the last input varying fastest."""
    return _cross(inputs, "ragged.cross", False)


def cross_hashed(inputs, num_buckets=0, hash_key=None, name=None):
    """The crosses of ``cross`` hashed as ``tf.sparse.cross_hashed`` hashes them, modulo
    ``num_buckets`` when it is > 0: a RaggedTensor of int64."""
    if int(num_buckets) < 0:
        raise InvalidArgumentError(f"ragged.cross_hashed: num_buckets must be >= 0, got "
                                   f"{num_buckets}")
    return _cross(inputs, "ragged.cross_hashed", True, int(num_buckets), hash_key)


# --- stack --------------------------------------------------------------------------------
def _raise_ragged_rank(rt, ragged_rank):
    """``rt`` (a RaggedTensor or a dense Tensor of rank > ``ragged_rank``) with
    ``ragged_rank`` ragged dimensions."""
    if ragged_rank == 0:
        return rt
    if not isinstance(rt, RaggedTensor):
        return RaggedTensor.from_tensor(rt, ragged_rank=ragged_rank)
    if rt.ragged_rank >= ragged_rank:
        return rt
    return RaggedTensor._make(_raise_ragged_rank(rt._values, ragged_rank - 1), rt._splits)


def _concat_rows(parts):
    """Rows of all ``parts`` (Tensors, or RaggedTensors of one ragged rank) one after
    another."""
    if isinstance(parts[0], RaggedTensor):
        offsets = numpy.cumsum([0] + [int(p._splits[-1]) for p in parts[:-1]])
        splits = numpy.concatenate([parts[0]._splits[:1]] + [p._splits[1:] + o for p, o in
                                                             zip(parts, offsets)])
        return RaggedTensor._make(_concat_rows([p._values for p in parts]),
                                  splits.astype(parts[0]._splits.dtype))
    from .ops.array_ops import concat
    return concat(list(parts), 0)   # recorded: gradients reach the parts


def _stack(parts, axis, where):
    if axis == 0:
        rows = [nvals(p) for p in parts]
        return RaggedTensor._make(_concat_rows(parts), _splits(rows))
    count = nvals(parts[0])
    if any(nvals(p) != count for p in parts):
        raise InvalidArgumentError(f"{where}: to stack at axis {axis} every input needs the "
                                   f"same number of rows, got {[nvals(p) for p in parts]}")
    if axis == 1:
        joined = _concat_rows(parts)
        # row i of the result holds row i of each input
        order = (numpy.arange(len(parts))[None, :] * count
                 + numpy.arange(count)[:, None]).reshape(-1)
        rows = take_values(joined, order)
        return RaggedTensor._make(rows, _splits(numpy.full(count, len(parts))),
                                  uniform=len(parts))
    if any(not numpy.array_equal(p._splits, parts[0]._splits) for p in parts):
        raise InvalidArgumentError(f"{where}: inputs have different row lengths above axis "
                                   f"{axis}")
    return RaggedTensor._make(_stack([p._values for p in parts], axis - 1, where),
                              parts[0]._splits)


def stack(values, axis=0, name=None):
    """Stack RaggedTensors and Tensors of one rank along a new dimension ``axis``: a
    RaggedTensor. ``stack([[[1, 2], [3]], [[4, 5, 6]]])`` is ``[[[1, 2], [3]], [[4, 5, 6]]]``."""
    where = "ragged.stack"
    runs_in_python(where)
    if not isinstance(values, (list, tuple)) or not values:
        raise ValueError(f"{where}: values must be a non-empty list of tensors, got "
                         f"{values!r:.60}")
    parts = [_tensor(v) for v in values]
    rank = _rank(parts[0])
    if any(_rank(p) != rank for p in parts):
        raise ValueError(f"{where}: all values must have the same rank, got ranks "
                         f"{[_rank(p) for p in parts]}")
    if any(p.dtype != parts[0].dtype for p in parts):
        raise TypeError(f"{where}: all values must have the same dtype, got "
                        f"{[p.dtype.name for p in parts]}")
    if rank == 0:
        raise ValueError(f"{where}: values must have rank >= 1, got scalars")
    if not -(rank + 1) <= axis <= rank:
        raise ValueError(f"{where}: axis {axis} is out of range for values of rank {rank} "
                         f"(stacked rank {rank + 1})")
    axis %= rank + 1
    ragged_rank = max([p.ragged_rank for p in parts if isinstance(p, RaggedTensor)] + [0])
    if rank == 1:
        ragged_rank = 0   # vectors stack at axis 0 only (axis 1 is the innermost)
    else:
        ragged_rank = max(ragged_rank, 1)
    parts = [_raise_ragged_rank(p, ragged_rank) for p in parts]
    if rank == 1 and axis == 1:
        from .ops.array_ops import stack as dense_stack
        return RaggedTensor.from_tensor(dense_stack(parts, axis=1))
    return _stack(parts, axis, where)


def stack_dynamic_partitions(data, partitions, num_partitions, name=None):
    """A RaggedTensor with ``num_partitions`` rows: row ``p`` holds the rows of ``data``
    whose entry in ``partitions`` (a vector of ints in ``[0, num_partitions)``) is ``p``, in
    their order."""
    where = "ragged.stack_dynamic_partitions"
    runs_in_python(where)
    data = _tensor(data)
    parts = _tensor(partitions)
    if isinstance(parts, RaggedTensor) or not parts.dtype.is_integer or parts.ndim != 1:
        raise TypeError(f"{where}: partitions must be an integer vector, got "
                        f"{parts.dtype.name} of shape {parts.shape}")
    if _rank(data) == 0:
        raise ValueError(f"{where}: data must have rank >= 1, got a scalar")
    ids = _host(parts).astype(_I64)
    count = int(num_partitions)
    if ids.size != nvals(data):
        raise InvalidArgumentError(f"{where}: partitions has {ids.size} entries where data "
                                   f"has {nvals(data)} rows")
    if ids.size and (ids.min() < 0 or ids.max() >= count):
        bad = ids[(ids < 0) | (ids >= count)][0]
        raise InvalidArgumentError(f"{where}: partitions must be in [0, {count}) "
                                   f"(num_partitions), got {int(bad)}")
    order = numpy.argsort(ids, kind="stable")
    return RaggedTensor._make(take_values(data, order),
                              _splits(numpy.bincount(ids, minlength=count)))


def install(tf):
    """Set these functions on ``tf.ragged`` (idempotent)."""
    for name in __all__:
        setattr(tf.ragged, name, globals()[name])
