"""``RaggedTensor`` (TF's ``tf.RaggedTensor``): a tensor whose rows differ in length.

A RaggedTensor is ``values`` (a Tensor, or a RaggedTensor for more ragged dimensions) cut into
rows by ``row_splits``: row ``i`` is ``values[row_splits[i]:row_splits[i + 1]]``. The splits
are kept on the host (the structure is needed by Python code: indexing, printing, padding),
with a backend copy made when ``row_splits`` is read. Numeric values stay on the backend; string
values are host object arrays, as every string tensor.

Gradients: the row partition is host structure, but work on the values is done with recorded
minitf ops (``gather``, slicing, the element-wise ops of ``ragged_ops_more``), so gradients reach
the ``flat_values`` Tensor that a RaggedTensor was built from.
"""
import numpy

from . import backend as B
from . import dtypes
from ._state import state
from .ops.convert import convert_to_tensor
from .ops.registry import InvalidArgumentError
from .string_tensors import is_string_array
from .tensor import Tensor, TensorShape, host_value

_INT64 = numpy.dtype(numpy.int64)


def host_work(where):
    """Ragged tensors are built by Python code on host structure, outside the op registry, so
    a ``minitf.function`` plan could not repeat them: a trace that does this work makes the
    function run its Python body on every call instead."""
    if state.tracer is not None:
        state.tracer.run_eagerly(f"{where} builds ragged tensors in Python")


def shown(array, limit=12):
    """A short list text of a host array, for error messages."""
    items = numpy.asarray(array).reshape(-1).tolist()
    more = ", ..." if len(items) > limit else ""
    return "[" + ", ".join(str(v) for v in items[:limit]) + more + "]"


def host_ints(value, where, what):
    """``value`` (list, numpy array, or integer Tensor) as a host numpy integer array, and the
    Tensor it came from (None for Python and numpy values)."""
    if isinstance(value, Tensor):
        if not value.dtype.is_integer:
            raise TypeError(f"{where}: {what} must be integers, got a {value.dtype.name} tensor")
        return numpy.asarray(host_value(value, f"{where}'s {what}")), value
    array = numpy.asarray(value)
    if array.size and array.dtype.kind not in "iu":
        raise TypeError(f"{where}: {what} must be integers, got {array.dtype} values "
                        f"{shown(array)}")
    return array.astype(_INT64), None


def splits_dtype_of(source, values, dtype=None):
    """The row-splits dtype: ``dtype`` when given, else an int32/int64 source Tensor's, else the
    ragged ``values``' (TF's dtype hint), else int64."""
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype)
        if dtype not in (dtypes.int32, dtypes.int64):
            raise ValueError(f"row_splits_dtype must be int32 or int64, got {dtype.name}")
        return dtype.np
    if isinstance(source, Tensor) and source.dtype in (dtypes.int32, dtypes.int64):
        return source.dtype.np
    if isinstance(values, RaggedTensor):
        return values._splits.dtype
    return _INT64


def as_values(values, where):
    """``values`` as a RaggedTensor or a Tensor of rank >= 1."""
    if isinstance(values, RaggedTensor):
        return values
    if isinstance(values, Tensor):
        values = values.read_value() if values._is_variable else values
    else:
        values = convert_to_tensor(values)
    if values.ndim == 0:
        raise ValueError(f"{where}: values must have rank >= 1, got a scalar {values}")
    return values


def nvals(values):
    """The number of rows of a Tensor or RaggedTensor (its outermost dimension)."""
    return values._nrows if isinstance(values, RaggedTensor) else int(values.shape[0])


def backend_index(host_index, array):
    """A host index array for indexing ``array``: moved to the backend for numeric arrays."""
    return host_index if is_string_array(array) or B.xp is numpy else B.from_numpy(host_index)


def take_values(values, index):
    """The rows ``index`` (host int array) of a Tensor or RaggedTensor."""
    if isinstance(values, RaggedTensor):
        return values._take_rows(index)
    host_work("RaggedTensor indexing")
    from .ops.array_ops import gather   # recorded, so gradients reach the flat values
    return gather(values, Tensor(backend_index(numpy.asarray(index, _INT64), values._value)))


def slice_values(values, start, stop):
    """Rows ``start:stop`` of a Tensor or RaggedTensor."""
    if isinstance(values, RaggedTensor):
        return values._row_slice(start, stop)
    host_work("RaggedTensor indexing")
    return values[start:stop]


def check_splits(splits, count, where, what):
    """InvalidArgumentError unless ``splits`` is a valid row-splits vector over ``count``
    values: rank 1, starting at 0, non-decreasing, ending at ``count``."""
    if splits.ndim != 1 or splits.size == 0:
        raise InvalidArgumentError(f"{where}: {what} must be a non-empty vector, got shape "
                                   f"{splits.shape}")
    if splits[0] != 0:
        raise InvalidArgumentError(f"{where}: {what} must start with 0, got {shown(splits)}")
    if numpy.any(numpy.diff(splits) < 0):
        raise InvalidArgumentError(f"{where}: {what} must be non-decreasing, got "
                                   f"{shown(splits)}")
    if splits[-1] != count:
        raise InvalidArgumentError(f"{where}: {what} ends at {int(splits[-1])} but values have "
                                   f"{count} rows; got {shown(splits)}")


def _require_vector(array, where, what):
    if array.ndim != 1:
        raise InvalidArgumentError(f"{where}: {what} must be a vector, got shape {array.shape}")


class RaggedTensor:
    """A tensor with ragged (variable-length) dimensions, as TF's ``tf.RaggedTensor``.

    >>> rt = minitf.RaggedTensor.from_row_splits([3, 1, 4, 1, 5, 9, 2], [0, 4, 4, 7])
    >>> rt          # <tf.RaggedTensor [[3, 1, 4, 1], [], [5, 9, 2]]>
    >>> rt.shape    # TensorShape([3, None])

    Make one with the ``from_*`` class methods or ``minitf.ragged.constant``.
    """
    __slots__ = ("_values", "_splits", "_splits_tensor", "_uniform", "__weakref__")

    def __init__(self, values=None, row_partition=None, internal=False):
        raise ValueError("RaggedTensor's constructor is private; use RaggedTensor.from_row_splits"
                         ", from_row_lengths, from_value_rowids, from_row_starts, from_row_limits"
                         ", from_tensor or minitf.ragged.constant")

    @classmethod
    def _make(cls, values, splits, splits_tensor=None, uniform=None):
        """Internal: a RaggedTensor from parts known to fit together (host ``splits``)."""
        host_work("RaggedTensor")
        rt = object.__new__(cls)
        rt._values, rt._splits = values, splits
        rt._splits_tensor, rt._uniform = splits_tensor, uniform
        return rt

    @classmethod
    def _from_splits(cls, values, splits, source, where, what, uniform=None):
        """A validated RaggedTensor from host ``splits``, computed from ``what`` (a Tensor
        ``source`` or a Python value), whose integer dtype the splits take."""
        values = as_values(values, where)
        dtype = splits_dtype_of(source, values)
        if isinstance(values, RaggedTensor) and values._splits.dtype != dtype:
            raise ValueError(f"{where}: {what} of dtype {dtype.name} and the values' row_splits of "
                             f"dtype {values._splits.dtype.name} differ; use "
                             f"with_row_splits_dtype() to make them match")
        check_splits(splits, nvals(values), where, what)
        splits = splits.astype(dtype, copy=False)
        # the caller's row_splits Tensor serves as this tensor's row_splits when it fits
        given = source if what == "row_splits" and source is not None \
            and source.dtype.np == dtype and not source._is_variable else None
        return cls._make(values, splits, given, uniform)

    # --- factory methods ------------------------------------------------------------------
    @classmethod
    def from_row_splits(cls, values, row_splits, name=None, validate=True):
        """Rows ``values[row_splits[i]:row_splits[i + 1]]``. ``row_splits`` starts at 0, does
        not decrease and ends at ``len(values)`` (InvalidArgumentError otherwise)."""
        where = "RaggedTensor.from_row_splits"
        splits, source = host_ints(row_splits, where, "row_splits")
        return cls._from_splits(values, splits, source, where, "row_splits")

    @classmethod
    def from_row_lengths(cls, values, row_lengths, name=None, validate=True):
        """Consecutive rows of the given non-negative lengths, which sum to ``len(values)``."""
        where = "RaggedTensor.from_row_lengths"
        lengths, source = host_ints(row_lengths, where, "row_lengths")
        _require_vector(lengths, where, "row_lengths")
        if numpy.any(lengths < 0):
            raise InvalidArgumentError(f"{where}: row_lengths must be >= 0, got {shown(lengths)}")
        splits = numpy.concatenate([[0], numpy.cumsum(lengths)]).astype(_INT64)
        values = as_values(values, where)
        if splits[-1] != nvals(values):
            raise InvalidArgumentError(f"{where}: row_lengths {shown(lengths)} sum to "
                                       f"{int(splits[-1])} but values have {nvals(values)} rows")
        return cls._from_splits(values, splits, source, where, "row_lengths")

    @classmethod
    def from_value_rowids(cls, values, value_rowids, nrows=None, name=None, validate=True):
        """Row ``r`` holds the values whose ``value_rowids`` entry is ``r`` (sorted,
        non-negative); ``nrows`` (default ``value_rowids[-1] + 1``) adds empty trailing rows."""
        where = "RaggedTensor.from_value_rowids"
        rowids, source = host_ints(value_rowids, where, "value_rowids")
        values = as_values(values, where)
        if rowids.ndim != 1 or rowids.size != nvals(values):
            raise InvalidArgumentError(f"{where}: value_rowids must be a vector with one entry per "
                                       f"value ({nvals(values)}), got shape {rowids.shape}")
        if rowids.size and (rowids[0] < 0 or numpy.any(numpy.diff(rowids) < 0)):
            raise InvalidArgumentError(f"{where}: value_rowids must be non-negative and sorted, "
                                       f"got {shown(rowids)}")
        count = int(rowids[-1]) + 1 if rowids.size else 0
        if nrows is not None:
            nrows = int(host_value(nrows, where) if isinstance(nrows, Tensor) else nrows)
            if nrows < count:
                raise InvalidArgumentError(f"{where}: nrows={nrows} must be greater than the "
                                           f"largest value_rowids entry {count - 1}")
            count = nrows
        splits = numpy.searchsorted(rowids, numpy.arange(count + 1), side="left").astype(_INT64)
        return cls._from_splits(values, splits, source, where, "value_rowids")

    @classmethod
    def from_row_starts(cls, values, row_starts, name=None, validate=True):
        """Row ``i`` starts at ``row_starts[i]`` and ends where the next row starts."""
        where = "RaggedTensor.from_row_starts"
        starts, source = host_ints(row_starts, where, "row_starts")
        values = as_values(values, where)
        _require_vector(starts, where, "row_starts")
        splits = numpy.concatenate([starts, [nvals(values)]]).astype(_INT64)
        return cls._from_splits(values, splits, source, where, "row_starts (with len(values))")

    @classmethod
    def from_row_limits(cls, values, row_limits, name=None, validate=True):
        """Row ``i`` ends at ``row_limits[i]`` and starts where the previous row ends."""
        where = "RaggedTensor.from_row_limits"
        limits, source = host_ints(row_limits, where, "row_limits")
        _require_vector(limits, where, "row_limits")
        splits = numpy.concatenate([[0], limits]).astype(_INT64)
        return cls._from_splits(values, splits, source, where, "row_limits (after 0)")

    @classmethod
    def from_uniform_row_length(cls, values, uniform_row_length, nrows=None, validate=True,
                                name=None):
        """Rows of ``uniform_row_length`` values each; the dimension keeps its size in
        ``shape`` (``(2, 3)`` rather than ``(2, None)``)."""
        where = "RaggedTensor.from_uniform_row_length"
        values = as_values(values, where)
        length = int(host_value(uniform_row_length, where)
                     if isinstance(uniform_row_length, Tensor) else uniform_row_length)
        count = nvals(values)
        if length < 0:
            raise InvalidArgumentError(f"{where}: uniform_row_length must be >= 0, got {length}")
        if nrows is None:
            if length == 0 or count % length:
                if length == 0 and count == 0:
                    nrows = 0
                else:
                    raise InvalidArgumentError(f"{where}: {count} values do not split into rows "
                                               f"of length {length}")
            else:
                nrows = count // length
        nrows = int(nrows)
        if nrows * length != count:
            raise InvalidArgumentError(f"{where}: {nrows} rows of length {length} do not hold "
                                       f"{count} values")
        splits = numpy.arange(nrows + 1, dtype=_INT64) * length
        return cls._from_splits(values, splits, None, where, "row_splits", uniform=length)

    @classmethod
    def from_nested_row_splits(cls, flat_values, nested_row_splits, name=None, validate=True):
        """``from_row_splits`` applied from the innermost splits outward."""
        result = flat_values
        for splits in reversed(list(nested_row_splits)):
            result = cls.from_row_splits(result, splits)
        return result

    @classmethod
    def from_nested_row_lengths(cls, flat_values, nested_row_lengths, name=None, validate=True):
        """``from_row_lengths`` applied from the innermost lengths outward."""
        result = flat_values
        for lengths in reversed(list(nested_row_lengths)):
            result = cls.from_row_lengths(result, lengths)
        return result

    @classmethod
    def from_tensor(cls, tensor, lengths=None, padding=None, ragged_rank=1, name=None,
                    row_splits_dtype=dtypes.int64):
        """The rows of a dense ``tensor``, cut to ``lengths`` or with trailing ``padding``
        removed (see ``minitf.ragged_dense.from_tensor``)."""
        from .ragged_dense import from_tensor
        return from_tensor(tensor, lengths, padding, ragged_rank, row_splits_dtype)

    @classmethod
    def from_sparse(cls, st_input, name=None, row_splits_dtype=dtypes.int64):
        """The rows of a 2-D right-ragged SparseTensor."""
        from .ragged_dense import from_sparse
        return from_sparse(st_input, row_splits_dtype)

    # --- structure ------------------------------------------------------------------------
    @property
    def _nrows(self):
        return self._splits.shape[0] - 1

    def _ints(self, array):
        host_work("RaggedTensor's row partition")
        return Tensor(B.from_numpy(numpy.ascontiguousarray(array, self._splits.dtype)))

    @property
    def values(self):
        """The concatenated rows: a Tensor, or a RaggedTensor for nested ragged dimensions."""
        return self._values

    @property
    def flat_values(self):
        """The innermost values Tensor."""
        values = self._values
        while isinstance(values, RaggedTensor):
            values = values._values
        return values

    @property
    def row_splits(self):
        """int64 (or int32) vector: row ``i`` is ``values[row_splits[i]:row_splits[i+1]]``."""
        if self._splits_tensor is None:
            self._splits_tensor = self._ints(self._splits)
        return self._splits_tensor

    @property
    def nested_row_splits(self):
        """The ``row_splits`` of every ragged dimension, outermost first."""
        out, rt = [], self
        while isinstance(rt, RaggedTensor):
            out.append(rt.row_splits)
            rt = rt._values
        return tuple(out)

    @property
    def ragged_rank(self):
        """The number of ragged dimensions (nesting depth of ``values``)."""
        values = self._values
        return 1 + (values.ragged_rank if isinstance(values, RaggedTensor) else 0)

    @property
    def dtype(self):
        """The dtype of the values."""
        return self.flat_values.dtype

    @property
    def row_splits_dtype(self):
        return dtypes.as_dtype(self._splits.dtype)

    @property
    def shape(self):
        """TensorShape with ``None`` for ragged dimensions: ``(2, None)``, ``(2, None, 3)``."""
        inner = tuple(self._values.shape)[1:]
        return TensorShape((self._nrows, self._uniform) + inner)

    def get_shape(self):
        return self.shape

    @property
    def uniform_row_length(self):
        """The length of every row as a scalar Tensor, when the rows were made uniform
        (``from_uniform_row_length``, ``from_tensor``); otherwise None."""
        host_work("RaggedTensor.uniform_row_length")
        return None if self._uniform is None else Tensor(
            B.xp.asarray(self._uniform, dtype=self._splits.dtype))

    def nrows(self, out_type=None, name=None):
        """The number of rows, a scalar Tensor (of the row_splits dtype by default)."""
        host_work("RaggedTensor.nrows")
        dtype = self._splits.dtype if out_type is None else dtypes.as_dtype(out_type).np
        return Tensor(B.xp.asarray(self._nrows, dtype=dtype))

    def row_lengths(self, axis=1, name=None):
        """The length of each row (``axis=1``), or a ragged tensor of the lengths of the rows of
        a deeper ragged dimension (``axis=2, ...``)."""
        if axis == 0:
            return self.nrows()
        if axis == 1:
            return self._ints(numpy.diff(self._splits))
        if isinstance(self._values, RaggedTensor) and axis > 1:
            return self.with_values(self._values.row_lengths(axis - 1))
        raise ValueError(f"RaggedTensor.row_lengths: axis={axis} is not a ragged axis of a "
                         f"tensor with ragged_rank {self.ragged_rank}")

    def nested_row_lengths(self, name=None):
        """The ``row_lengths()`` of every ragged dimension, outermost first."""
        out, rt = [], self
        while isinstance(rt, RaggedTensor):
            out.append(rt.row_lengths())
            rt = rt._values
        return tuple(out)

    def _host_rowids(self):
        return numpy.repeat(numpy.arange(self._nrows, dtype=_INT64), numpy.diff(self._splits))

    def value_rowids(self, name=None):
        """For each value, the index of its row."""
        return self._ints(self._host_rowids())

    def row_starts(self, name=None):
        """``row_splits[:-1]``."""
        return self._ints(self._splits[:-1])

    def row_limits(self, name=None):
        """``row_splits[1:]``."""
        return self._ints(self._splits[1:])

    def _bounding_dims(self):
        """Host list: the number of rows, the longest row of every ragged dimension, and the
        dense inner dimensions."""
        dims, rt = [self._nrows], self
        while isinstance(rt, RaggedTensor):
            lengths = numpy.diff(rt._splits)
            dims.append(int(lengths.max()) if lengths.size else 0)
            rt = rt._values
        return dims + [int(d) for d in rt.shape[1:]]

    def bounding_shape(self, axis=None, name=None, out_type=None):
        """The shape of the smallest dense tensor holding this one (``to_tensor()``'s)."""
        dims = numpy.asarray(self._bounding_dims(), dtype=self._splits.dtype if out_type is None
                             else dtypes.as_dtype(out_type).np)
        host_work("RaggedTensor.bounding_shape")
        return Tensor(B.from_numpy(dims if axis is None else dims[axis]))

    # --- new tensors from this one ----------------------------------------------------------
    def with_values(self, new_values):
        """These rows over ``new_values`` (same number of rows as ``values``)."""
        new_values = as_values(new_values, "RaggedTensor.with_values")
        if nvals(new_values) != nvals(self._values):
            raise ValueError(f"RaggedTensor.with_values: new values have {nvals(new_values)} "
                             f"rows, the current values {nvals(self._values)}")
        if isinstance(new_values, RaggedTensor) and new_values._splits.dtype != self._splits.dtype:
            raise ValueError("RaggedTensor.with_values: self and new_values have different "
                             "row_splits dtypes; use with_row_splits_dtype() to match them")
        return RaggedTensor._make(new_values, self._splits, self._splits_tensor, self._uniform)

    def with_flat_values(self, new_values):
        """This ragged structure over ``new_values`` in place of ``flat_values``."""
        if isinstance(self._values, RaggedTensor):
            return self.with_values(self._values.with_flat_values(new_values))
        return self.with_values(new_values)

    def with_row_splits_dtype(self, dtype):
        """A copy whose row_splits (at every level) have ``dtype`` (int32 or int64)."""
        dtype = dtypes.as_dtype(dtype)
        if dtype not in (dtypes.int32, dtypes.int64):
            raise ValueError(f"with_row_splits_dtype: dtype must be int32 or int64, got "
                             f"{dtype.name}")
        if self._splits.dtype == dtype.np:
            return self
        values = self._values
        if isinstance(values, RaggedTensor):
            values = values.with_row_splits_dtype(dtype)
        return RaggedTensor._make(values, self._splits.astype(dtype.np), None, self._uniform)

    def _row_slice(self, start, stop):
        """Rows ``start:stop`` (0 <= start <= stop <= nrows)."""
        splits = self._splits[start:stop + 1]
        values = slice_values(self._values, int(splits[0]), int(splits[-1]))
        return RaggedTensor._make(values, splits - splits[0])

    def _take_rows(self, rows):
        """The rows at host indices ``rows``, in that order."""
        rows = numpy.asarray(rows, _INT64)
        starts = self._splits[:-1][rows]
        lengths = self._splits[1:][rows] - starts
        splits = numpy.concatenate([[0], numpy.cumsum(lengths)]).astype(self._splits.dtype)
        index = numpy.repeat(starts - splits[:-1], lengths) + numpy.arange(splits[-1])
        return RaggedTensor._make(take_values(self._values, index), splits)

    # --- conversions ------------------------------------------------------------------------
    def to_list(self):
        """The value as nested Python lists (strings as ``bytes``)."""
        values = self._values
        items = values.to_list() if isinstance(values, RaggedTensor) else values.numpy().tolist()
        s = self._splits.tolist()
        return [items[s[i]:s[i + 1]] for i in range(len(s) - 1)]

    def numpy(self):
        """As TF: a numpy array when every row has the same length, else a 1-D object array
        holding one array per row."""
        values = self._values.numpy()
        s = self._splits.tolist()
        rows = [values[s[i]:s[i + 1]] for i in range(len(s) - 1)]
        if not rows:
            return numpy.zeros((0, 0) + values.shape[1:], dtype=values.dtype)
        uniform = all(len(r) == len(rows[0]) for r in rows)
        jagged_inner = (isinstance(self._values, RaggedTensor) and values.dtype == object
                        and any(isinstance(v, numpy.ndarray) for v in values.reshape(-1)))
        if uniform and not jagged_inner:
            return numpy.stack(rows)
        out = numpy.empty((len(rows), len(rows[0])) if uniform else len(rows), dtype=object)
        for i, row in enumerate(rows):
            if uniform:
                for j, item in enumerate(row):
                    out[i, j] = item
            else:
                out[i] = row
        return out

    def to_tensor(self, default_value=None, name=None, shape=None):
        """A dense Tensor: short rows padded with ``default_value`` (0, ``b""`` or False by
        default); with ``shape``, padded or truncated to it (None keeps a dimension)."""
        from .ragged_dense import to_tensor
        return to_tensor(self, default_value, shape)

    def to_sparse(self, name=None):
        """A SparseTensor with these values at their (row, column, ...) positions."""
        from .ragged_dense import to_sparse
        return to_sparse(self)

    def __getitem__(self, key):
        """TF's ragged indexing: an int or slice of rows, then keys for inner dimensions
        (slices of ragged dimensions; no single index into a ragged dimension)."""
        from .ragged_dense import getitem
        return getitem(self, key)

    def __iter__(self):
        for i in range(self._nrows):
            yield self[i]

    def __repr__(self):
        return f"<tf.RaggedTensor {self.to_list()}>"

    __str__ = __repr__

    def __array__(self, dtype=None, copy=None):
        raise TypeError("a RaggedTensor is not converted to an array implicitly; use "
                        "rt.to_tensor() (padded), rt.numpy() or rt.to_list()")

    def __hash__(self):
        return object.__hash__(self)

    def _keras_op(self, fn, args, kwargs):
        """The registry's hook for an op argument that is not a Tensor (``as_keras_layer``):
        the op's ragged version (TF's dispatch: ``tf.add(rt, 1)``, ``tf.reduce_sum(rt, 1)``)."""
        from . import ragged_ops_more
        return ragged_ops_more.dispatch(fn, args, kwargs)


def _operator(op_name, reflected=False):
    """A RaggedTensor operator applying the Tensor operator's op to the flat values."""
    def operator(self, *other):
        from . import ragged_ops_more
        return ragged_ops_more.operator(op_name, self, *other, reflected=reflected)
    operator.__name__ = op_name
    return operator


for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and", "or", "xor"):
    setattr(RaggedTensor, f"__{_name}__", _operator(f"__{_name}__"))
    setattr(RaggedTensor, f"__r{_name}__", _operator(f"__{_name}__", reflected=True))
for _name in ("lt", "le", "gt", "ge", "neg", "abs", "invert"):
    setattr(RaggedTensor, f"__{_name}__", _operator(f"__{_name}__"))
del _name


def is_ragged(value):
    """Whether ``value`` is a RaggedTensor."""
    return isinstance(value, RaggedTensor)
