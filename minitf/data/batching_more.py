"""``Dataset.ragged_batch`` and ``Dataset.sparse_batch`` (also
``tf.data.experimental.dense_to_ragged_batch`` / ``dense_to_sparse_batch``), and the slices of
SparseTensors and RaggedTensors (``from_tensor_slices``), added when ``minitf.data`` loads.

``ragged_batch`` (TF's rule): a component whose spec has a known rank and some unknown (None)
dimension becomes ragged with ``ragged_rank`` = the index of its last None dimension, and the
batch adds one ragged dimension in front; fully defined components batch as ``batch`` does.
``sparse_batch(batch_size, row_shape)``: each element's values (zeros included) at their
positions in a SparseTensor of shape ``[batch, *row_shape]``.
"""
import numpy as np

from .. import backend as B
from .. import dtypes
from ..errors import DataLossError
from ..nest import flatten, pack_sequence_as
from ..ops.registry import InvalidArgumentError
from ..sparse_tensor import SparseTensor
from ..tensor import Tensor
from ..tensor_spec import TensorSpec
from . import composite
from .composite import RaggedTensorSpec, SparseTensorSpec
from .dataset import Dataset, _Batch, _stack
from .transforms import _method

__all__ = ["dense_to_ragged_batch", "dense_to_sparse_batch"]


class CompositeSlices(Dataset):
    """``from_tensor_slices`` of a structure holding SparseTensors or RaggedTensors."""

    def __init__(self, structure):
        leaves = list(flatten(structure))
        self.structure = structure
        self.rows = [composite.rows_of(leaf, "from_tensor_slices") for leaf in leaves]
        lengths = {len(r) for r in self.rows}
        if len(lengths) != 1:
            raise ValueError(f"from_tensor_slices: all components must have the same first "
                             f"dimension, got {sorted(lengths)}")
        self.n = lengths.pop()
        self.specs = [composite.slice_spec(leaf) for leaf in leaves]
        self._ragged_rows = any(isinstance(s, RaggedTensorSpec) and s.ragged_rank == 0
                                for s in self.specs)

    def _iterate(self):
        for i in range(self.n):
            yield pack_sequence_as(self.structure, [r.row(i) for r in self.rows])

    def _cardinality(self):
        return self.n

    def _element_spec(self):
        return pack_sequence_as(self.structure, self.specs)


def _ragged_spec(spec, splits_dtype):
    """TF's ragged_batch typing of one component spec (before batching)."""
    if not isinstance(spec, TensorSpec) or spec._dims is None or None not in spec._dims:
        return spec
    ragged_rank = max(i for i, d in enumerate(spec._dims) if d is None)
    return RaggedTensorSpec(spec._dims, spec.dtype, ragged_rank, splits_dtype)


class _RaggedBatch(_Batch):
    _ragged_rows = True     # unbatching gives ragged-typed rows

    def __init__(self, source, size, drop_remainder, splits_dtype):
        super().__init__(source, size, drop_remainder)
        self.splits_dtype = splits_dtype
        self.specs = [_ragged_spec(s, splits_dtype) for s in flatten(source.element_spec)]

    def _combine(self, elements):
        flat = [list(flatten(e)) for e in elements]
        out = []
        for i, spec in enumerate(self.specs):
            column = [f[i] for f in flat]
            if not isinstance(spec, RaggedTensorSpec):
                out.append(_stack_column(column))
                continue
            if spec.ragged_rank > 0:
                column = [composite.ragged_of(v, spec.ragged_rank, spec.row_splits_dtype)
                          for v in column]
            out.append(composite.batch_ragged(column, spec.row_splits_dtype.np,
                                              "Dataset.ragged_batch"))
        return pack_sequence_as(elements[0], out)

    def _element_spec(self):
        first = self.size if self.drop_remainder else None
        inner = pack_sequence_as(self.source.element_spec, self.specs)
        specs = [TensorSpec((first,) + tuple(s.shape), s.dtype) if isinstance(s, TensorSpec)
                 else s._batch(first) for s in flatten(inner)]
        return pack_sequence_as(inner, specs)


def _stack_column(column):
    """One dense (or sparse) component batched as ``batch`` does."""
    return _stack([(v,) for v in column])[0]


@_method
def ragged_batch(self, batch_size, drop_remainder=False, row_splits_dtype=dtypes.int64,
                 name=None):
    """Batch elements whose components vary in shape: those with an unknown dimension in
    ``element_spec`` become RaggedTensors (one row per element); see the module docstring."""
    batch_size = int(batch_size)
    if batch_size < 1:
        raise ValueError(f"Dataset.ragged_batch: batch_size must be positive, got {batch_size}")
    splits_dtype = dtypes.as_dtype(row_splits_dtype)
    if splits_dtype not in (dtypes.int32, dtypes.int64):
        raise ValueError(f"Dataset.ragged_batch: row_splits_dtype must be int32 or int64, got "
                         f"{splits_dtype.name}")
    return _RaggedBatch(self, batch_size, bool(drop_remainder), splits_dtype)


def _row_shape(row_shape):
    if isinstance(row_shape, Tensor):
        row_shape = B.to_numpy(row_shape._value).tolist()
    if isinstance(row_shape, (int, np.integer)):
        row_shape = [row_shape]
    dims = [None if d is None or int(d) == -1 else int(d) for d in row_shape]
    if any(d is not None and d < 0 for d in dims):
        raise ValueError(f"Dataset.sparse_batch: row_shape must hold non-negative sizes (or -1 "
                         f"for the batch's largest), got {list(row_shape)}")
    return tuple(dims)


class _SparseBatch(_Batch):
    def __init__(self, source, size, row_shape):
        super().__init__(source, size, False)
        self.row_shape = row_shape

    def _combine(self, elements):
        arrays = []
        for element in elements:
            if not isinstance(element, Tensor):
                raise TypeError(f"Dataset.sparse_batch: elements must be single tensors, got "
                                f"{type(element).__name__}")
            arrays.append(element._value)
        for a in arrays:
            if a.ndim != len(self.row_shape):
                raise InvalidArgumentError(
                    f"Dataset.sparse_batch: an element of shape {tuple(a.shape)} does not have "
                    f"the rank of row_shape {list(self.row_shape)}")
            for d, limit in zip(a.shape, self.row_shape):
                if limit is not None and d > limit:
                    raise DataLossError(None, None, f"Dataset.sparse_batch: input element had "
                                        f"shape {list(a.shape)}, which is larger than the "
                                        f"row shape {list(self.row_shape)}")
        dims = tuple(limit if limit is not None else max(int(a.shape[k]) for a in arrays)
                     for k, limit in enumerate(self.row_shape))
        indices = []
        for row, a in enumerate(arrays):
            grid = np.indices(a.shape).reshape(a.ndim, -1).T
            indices.append(np.concatenate([np.full((grid.shape[0], 1), row), grid], axis=1))
        host = np.concatenate(indices).astype(np.int64).reshape(-1, len(dims) + 1)
        values = composite._concat([a.reshape(-1) for a in arrays])
        return SparseTensor._trusted(Tensor(B.from_numpy(host)), Tensor(values),
                                     (len(arrays),) + dims)

    def _element_spec(self):
        spec = self.source.element_spec
        return SparseTensorSpec((None,) + self.row_shape, spec.dtype)


@_method
def sparse_batch(self, batch_size, row_shape, name=None):
    """Batch dense elements of varying shape into SparseTensors of shape
    ``[batch, *row_shape]`` (-1 entries: the batch's largest size)."""
    batch_size = int(batch_size)
    if batch_size < 1:
        raise ValueError(f"Dataset.sparse_batch: batch_size must be positive, got {batch_size}")
    return _SparseBatch(self, batch_size, _row_shape(row_shape))


def dense_to_ragged_batch(batch_size, drop_remainder=False, row_splits_dtype=dtypes.int64):
    """``tf.data.experimental.dense_to_ragged_batch``: ``Dataset.ragged_batch`` for ``apply``."""
    return lambda dataset: dataset.ragged_batch(batch_size, drop_remainder, row_splits_dtype)


def dense_to_sparse_batch(batch_size, row_shape):
    """``tf.data.experimental.dense_to_sparse_batch``: ``Dataset.sparse_batch`` for
    ``apply``."""
    return lambda dataset: dataset.sparse_batch(batch_size, row_shape)

