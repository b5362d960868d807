"""``SparseTensor`` and ``RaggedTensor`` elements in ``tf.data`` pipelines, and their specs.

``tf.SparseTensorSpec`` / ``tf.RaggedTensorSpec`` describe such components in an
``element_spec``. As in TF:

* ``from_tensor_slices(sparse)`` yields the rows of the sparse tensor (its first dimension
  dropped); ``batch`` of sparse elements gives one SparseTensor with a new leading dimension
  (each other dimension the largest of the batch); ``unbatch`` undoes it.
* ``from_tensor_slices(ragged)`` yields the rows (dense Tensors for ``ragged_rank=1``, typed
  ``RaggedTensorSpec(..., ragged_rank=0)``); ``batch`` of ragged-typed components gives a
  RaggedTensor with one more ragged dimension, whatever the rows' lengths.
* ``ragged_batch`` / ``sparse_batch`` batch dense elements of varying shape.

Dense components never pass through this module: the transformations only call it for
components that are not plain Tensors.
"""
import numpy as np

from .. import backend as B
from .. import dtypes
from ..nest import flatten, pack_sequence_as
from ..ops.registry import InvalidArgumentError
from ..ragged_tensor import RaggedTensor
from ..sparse_tensor import SparseTensor
from ..string_tensors import is_string_array
from ..tensor import Tensor, TensorShape
from ..tensor_spec import TensorSpec

__all__ = ["SparseTensorSpec", "RaggedTensorSpec"]

COMPOSITES = (SparseTensor, RaggedTensor)


def _dims_of(shape):
    if shape is None:
        return None
    if isinstance(shape, TensorShape) and shape.rank is None:
        return None
    return tuple(None if d is None else int(d) for d in shape)


def _shape_text(dims):
    return repr(TensorShape(None if dims is None else list(dims)))


def _merged_dims(a, b):
    if a is None or b is None or len(a) != len(b):
        return None
    return tuple(x if x == y else None for x, y in zip(a, b))


class SparseTensorSpec:
    """The type of a SparseTensor component (``tf.SparseTensorSpec``): its dense shape (None
    dimensions unknown) and dtype."""

    value_type = SparseTensor

    def __init__(self, shape=None, dtype=dtypes.float32):
        self._dims = _dims_of(shape)
        self.dtype = dtypes.as_dtype(dtype)

    @property
    def shape(self):
        return TensorShape(None if self._dims is None else list(self._dims))

    @classmethod
    def from_value(cls, value):
        """The spec of a SparseTensor."""
        return cls(value._dims, value.dtype)

    def is_compatible_with(self, other):
        """True when ``other`` (a SparseTensor or SparseTensorSpec) fits this spec."""
        if isinstance(other, SparseTensor):
            other = SparseTensorSpec.from_value(other)
        return (isinstance(other, SparseTensorSpec) and other.dtype == self.dtype
                and _fits(other._dims, self._dims))

    def _batch(self, first):
        return SparseTensorSpec(None if self._dims is None else (first,) + self._dims,
                                self.dtype)

    def _unbatch(self):
        return SparseTensorSpec(None if self._dims is None else self._dims[1:], self.dtype)

    def _merge(self, other):
        if not isinstance(other, SparseTensorSpec) or other.dtype != self.dtype:
            return self
        return SparseTensorSpec(_merged_dims(self._dims, other._dims), self.dtype)

    def __eq__(self, other):
        return (isinstance(other, SparseTensorSpec) and self._dims == other._dims
                and self.dtype == other.dtype)

    def __hash__(self):
        return hash(("SparseTensorSpec", self._dims, self.dtype.name))

    def __repr__(self):
        return f"SparseTensorSpec({_shape_text(self._dims)}, {self.dtype!r})"


class RaggedTensorSpec:
    """The type of a RaggedTensor component (``tf.RaggedTensorSpec``): shape (None for ragged
    or unknown dimensions), dtype, ``ragged_rank`` (rank - 1 by default; 0 for the dense rows
    of a ragged tensor, which batch into a ragged tensor) and ``row_splits_dtype``."""

    value_type = RaggedTensor

    def __init__(self, shape=None, dtype=dtypes.float32, ragged_rank=None,
                 row_splits_dtype=dtypes.int64, flat_values_spec=None):
        self._dims = _dims_of(shape)
        self.dtype = dtypes.as_dtype(dtype)
        if ragged_rank is None:
            if self._dims is None:
                raise ValueError("RaggedTensorSpec: `ragged_rank` must be given when the shape "
                                 "has an unknown rank")
            ragged_rank = len(self._dims) - 1
        ragged_rank = int(ragged_rank)
        if ragged_rank < 0 or (self._dims is not None and ragged_rank >= max(len(self._dims), 1)):
            raise ValueError(f"RaggedTensorSpec: ragged_rank must be in [0, rank) for shape "
                             f"{_shape_text(self._dims)}, got {ragged_rank}")
        self.ragged_rank = ragged_rank
        self.row_splits_dtype = dtypes.as_dtype(row_splits_dtype)
        if self.row_splits_dtype not in (dtypes.int32, dtypes.int64):
            raise ValueError(f"RaggedTensorSpec: row_splits_dtype must be int32 or int64, got "
                             f"{self.row_splits_dtype.name}")

    @property
    def shape(self):
        return TensorShape(None if self._dims is None else list(self._dims))

    @classmethod
    def from_value(cls, value):
        """The spec of a RaggedTensor (or a dense Tensor, as ``ragged_rank=0``)."""
        if isinstance(value, Tensor):
            return cls(tuple(value.shape), value.dtype, 0)
        return cls(tuple(value.shape), value.dtype, value.ragged_rank,
                   value.row_splits_dtype)

    def is_compatible_with(self, other):
        """True when ``other`` (a RaggedTensor or RaggedTensorSpec) fits this spec."""
        if isinstance(other, (RaggedTensor, Tensor)):
            other = RaggedTensorSpec.from_value(other)
        return (isinstance(other, RaggedTensorSpec) and other.dtype == self.dtype
                and other.ragged_rank == self.ragged_rank
                and other.row_splits_dtype == self.row_splits_dtype
                and _fits(other._dims, self._dims))

    def _batch(self, first):
        dims = None if self._dims is None else (first,) + self._dims
        return RaggedTensorSpec(dims, self.dtype, self.ragged_rank + 1, self.row_splits_dtype)

    def _unbatch(self):
        if self.ragged_rank == 0:
            return TensorSpec(None if self._dims is None else self._dims[1:], self.dtype)
        return RaggedTensorSpec(None if self._dims is None else self._dims[1:], self.dtype,
                                self.ragged_rank - 1, self.row_splits_dtype)

    def _merge(self, other):
        if (not isinstance(other, RaggedTensorSpec) or other.dtype != self.dtype
                or other.ragged_rank != self.ragged_rank):
            return self
        return RaggedTensorSpec(_merged_dims(self._dims, other._dims), self.dtype,
                                self.ragged_rank, self.row_splits_dtype)

    def __eq__(self, other):
        return (isinstance(other, RaggedTensorSpec) and self._dims == other._dims
                and self.dtype == other.dtype and self.ragged_rank == other.ragged_rank
                and self.row_splits_dtype == other.row_splits_dtype)

    def __hash__(self):
        return hash(("RaggedTensorSpec", self._dims, self.dtype.name, self.ragged_rank))

    def __repr__(self):
        return (f"RaggedTensorSpec({_shape_text(self._dims)}, {self.dtype!r}, "
                f"{self.ragged_rank}, {self.row_splits_dtype!r})")


def _fits(dims, general):
    if general is None:
        return True
    return dims is not None and len(dims) == len(general) and all(
        g is None or d == g for d, g in zip(dims, general))


def spec_of(value):
    """The spec of a SparseTensor or RaggedTensor component."""
    if isinstance(value, SparseTensor):
        return SparseTensorSpec.from_value(value)
    if isinstance(value, RaggedTensor):
        return RaggedTensorSpec.from_value(value)
    raise TypeError(f"tf.data: an element component must be a tensor, SparseTensor, "
                    f"RaggedTensor or dataset, got {type(value).__name__} {value!r:.60}")


# --- concatenation (host numpy for strings, the backend for numbers) ---------------------------
def _concat(arrays):
    if is_string_array(arrays[0]):
        return np.concatenate(arrays)
    return B.xp.concatenate(arrays)


def _concat_values(parts, where):
    """Tensors (or RaggedTensors of one ragged_rank) joined along their first dimension."""
    if isinstance(parts[0], RaggedTensor):
        splits, offset = [np.zeros(1, parts[0]._splits.dtype)], 0
        for rt in parts:
            splits.append(rt._splits[1:] + offset)
            offset += int(rt._splits[-1])
        values = _concat_values([rt._values for rt in parts], where)
        return RaggedTensor._make(values, np.concatenate(splits))
    inner = {tuple(p._value.shape[1:]) for p in parts}
    if len(inner) != 1:
        raise InvalidArgumentError(f"{where}: cannot batch ragged components whose inner "
                                   f"dimensions differ: {sorted(inner)}")
    return Tensor(_concat([p._value for p in parts]))


# --- batching ---------------------------------------------------------------------------------
def ragged_of(value, ragged_rank, splits_dtype):
    """A dense Tensor as a RaggedTensor of ``ragged_rank`` (itself for 0)."""
    if ragged_rank == 0 or not isinstance(value, Tensor):
        return value
    return RaggedTensor.from_tensor(value, ragged_rank=ragged_rank).with_row_splits_dtype(
        splits_dtype)


def batch_ragged(column, splits_dtype=None, where="Dataset.batch"):
    """RaggedTensors (or dense Tensors of rank >= 1) as one RaggedTensor, one row each."""
    for value in column:
        if isinstance(value, Tensor) and value._value.ndim == 0:
            raise InvalidArgumentError(f"{where}: cannot batch scalar components as ragged "
                                       f"rows")
    kinds = {type(v) for v in column}
    if len(kinds) != 1:
        raise InvalidArgumentError(f"{where}: a ragged component mixes RaggedTensors and dense "
                                   f"tensors within one batch")
    lengths = [int(v._nrows) if isinstance(v, RaggedTensor) else int(v._value.shape[0])
               for v in column]
    if splits_dtype is None:
        splits_dtype = column[0]._splits.dtype if isinstance(column[0], RaggedTensor) \
            else np.dtype(np.int64)
    splits = np.concatenate([[0], np.cumsum(lengths)]).astype(splits_dtype)
    return RaggedTensor._make(_concat_values(column, where), splits)


def batch_sparse(column, where="Dataset.batch"):
    """SparseTensors as one SparseTensor with a new leading dimension (the batch)."""
    ranks = {len(sp._dims) for sp in column}
    if len(ranks) != 1:
        raise InvalidArgumentError(f"{where}: cannot batch SparseTensors of different ranks "
                                   f"{sorted(ranks)}")
    dims = (len(column),) + tuple(max(d) for d in zip(*[sp._dims for sp in column]))
    indices = []
    for row, sp in enumerate(column):
        idx = sp._indices._value
        first = B.xp.full((idx.shape[0], 1), row, dtype=idx.dtype)
        indices.append(B.xp.concatenate([first, idx], axis=1))
    return SparseTensor._trusted(Tensor(B.xp.concatenate(indices)),
                                 Tensor(_concat([sp._values._value for sp in column])), dims)


def batch_column(column, index, ragged):
    """One batched component: ``column`` holds the component of every element."""
    first = column[0]
    if isinstance(first, SparseTensor):
        return batch_sparse(column)
    if ragged or isinstance(first, RaggedTensor):
        return batch_ragged(column)
    raise TypeError(f"Dataset.batch: component {index} holds a {type(first).__name__}, which "
                    f"cannot be batched")


def ragged_columns(spec):
    """Flat indices of the components ``spec`` types as ragged (rows batch into ragged)."""
    return frozenset(i for i, s in enumerate(flatten(spec)) if isinstance(s, RaggedTensorSpec))


# --- rows (from_tensor_slices, unbatch) ----------------------------------------------------------
class SparseRows:
    """The rows of a SparseTensor (its first dimension dropped), grouped once."""

    def __init__(self, sp):
        self.sp = sp
        host = sp._host_indices("Dataset")
        order = np.argsort(host[:, 0], kind="stable")
        self.order = order
        self.bounds = np.searchsorted(host[order, 0], np.arange(sp._dims[0] + 1))
        self.host = host[order, 1:]

    def __len__(self):
        return self.sp._dims[0]

    def row(self, i):
        start, stop = int(self.bounds[i]), int(self.bounds[i + 1])
        picked = self.order[start:stop]
        values = self.sp._values._value
        index = picked if is_string_array(values) or B.xp is np else B.from_numpy(picked)
        return SparseTensor._trusted(Tensor(B.from_numpy(np.ascontiguousarray(
            self.host[start:stop]))), Tensor(values[index]), self.sp._dims[1:])


class _DenseRows:
    def __init__(self, t):
        self.t = t

    def __len__(self):
        return int(self.t._value.shape[0])

    def row(self, i):
        from ..string_tensors import row
        return Tensor(row(self.t._value, i))


class _RaggedRows:
    def __init__(self, rt):
        self.rt = rt

    def __len__(self):
        return self.rt._nrows

    def row(self, i):
        return self.rt[i]


def rows_of(value, where):
    """An object with ``len()`` and ``row(i)`` giving the rows of a component."""
    if isinstance(value, SparseTensor):
        if not value._dims:
            raise ValueError(f"{where}: cannot slice a scalar SparseTensor")
        return SparseRows(value)
    if isinstance(value, RaggedTensor):
        return _RaggedRows(value)
    if value._value.ndim == 0:
        raise ValueError(f"{where}: cannot unbatch or slice a scalar component, got shape ()")
    return _DenseRows(value)


def unbatch_element(element, leaves):
    """The rows of an element holding SparseTensor or RaggedTensor components."""
    rows = [rows_of(leaf, "Dataset.unbatch") for leaf in leaves]
    sizes = {len(r) for r in rows}
    if len(sizes) != 1:
        raise InvalidArgumentError(f"Dataset.unbatch: the components of an element must have "
                                   f"the same first dimension, got {sorted(sizes)}")
    for i in range(sizes.pop()):
        yield pack_sequence_as(element, [r.row(i) for r in rows])


def slice_spec(value):
    """The spec of one row of ``value`` (``from_tensor_slices``)."""
    if isinstance(value, SparseTensor):
        return SparseTensorSpec(value._dims[1:], value.dtype)
    if isinstance(value, RaggedTensor):
        return RaggedTensorSpec(tuple(value.shape)[1:], value.dtype, value.ragged_rank - 1,
                                value.row_splits_dtype)
    return TensorSpec(tuple(value.shape)[1:], value.dtype)


def to_numpy(value):
    """A SparseTensor or RaggedTensor as ``as_numpy_iterator`` gives it (a dense array for a
    SparseTensor, as TF 2.21 does; ``RaggedTensor.numpy()`` for a ragged one)."""
    if isinstance(value, SparseTensor):
        from ..ops.sparse_ops import to_dense
        return B.to_numpy(to_dense(value)._value) if not is_string_array(
            value._values._value) else to_dense(value)._value
    return value.numpy()
