"""``tf.io.SparseFeature`` and ``tf.io.RaggedFeature``: features of ``parse_example`` read
as VarLenFeatures of their keys (indices and values; values and row partitions) and then
built into a SparseTensor or RaggedTensor, as TF builds them."""
import collections

import numpy

from . import backend as B, dtypes
from .errors import InvalidArgumentError
from .sparse_tensor import SparseTensor
from .string_tensors import OBJECT
from .tensor import Tensor
from .tensor_proto import _host_array, _np_dtype, _tensor_of

__all__ = ["SparseFeature", "RaggedFeature", "composite_specs"]


class SparseFeature(collections.namedtuple(
        "SparseFeature", ["index_key", "value_key", "dtype", "size", "already_sorted"])):
    """``tf.io.SparseFeature(index_key, value_key, dtype, size, already_sorted=False)``: a
    SparseTensor of dense shape ``size`` whose indices come from the int64 feature(s)
    ``index_key`` (one per dimension) and values from the feature ``value_key``."""
    __slots__ = ()

    def __new__(cls, index_key, value_key, dtype, size, already_sorted=False):
        return super().__new__(cls, index_key, value_key, dtype, size, already_sorted)


def _partition(name, field):
    return type(name, (collections.namedtuple(name, [field]),), {"__slots__": ()})


class RaggedFeature(collections.namedtuple(
        "RaggedFeature", ["dtype", "value_key", "partitions", "row_splits_dtype", "validate"])):
    """``tf.io.RaggedFeature(dtype, value_key=None, partitions=(), row_splits_dtype=tf.int32,
    validate=False)``: a RaggedTensor of the values of ``value_key`` (the feature's own key by
    default), cut by ``partitions`` (outermost first): ``RaggedFeature.RowSplits(key)``,
    ``RowLengths``, ``RowStarts``, ``RowLimits``, ``ValueRowIds`` (int64 features) or
    ``UniformRowLength(length)``. Without partitions one example gives a vector."""
    __slots__ = ()
    RowSplits = _partition("RowSplits", "key")
    RowLengths = _partition("RowLengths", "key")
    RowStarts = _partition("RowStarts", "key")
    RowLimits = _partition("RowLimits", "key")
    ValueRowIds = _partition("ValueRowIds", "key")
    UniformRowLength = _partition("UniformRowLength", "length")

    def __new__(cls, dtype, value_key=None, partitions=(), row_splits_dtype=dtypes.int32,
                validate=False):
        return super().__new__(cls, dtype, value_key, tuple(partitions), row_splits_dtype,
                               validate)


def _per_example(sp, batched):
    """The host values of each example in a parsed VarLenFeature."""
    values = _host_array(sp.values, "parse_example")[0]
    if not batched:
        return [values]
    rows = numpy.asarray(B.to_numpy(sp.indices._value), numpy.int64)[:, 0]
    return [values[rows == b] for b in range(sp._dims[0])]


def _splits_of(part, data, count, what):
    """Row splits over ``count`` values from one partition's feature values ``data``."""
    kind = type(part).__name__
    if kind == "UniformRowLength":
        length = int(part.length)
        if length <= 0 and count or length and count % length:
            raise InvalidArgumentError(None, None, f"{what}: {count} values do not split into "
                                                   f"rows of length {length}")
        return numpy.arange(0, count + 1, max(length, 1), dtype=numpy.int64)
    data = numpy.asarray(data, numpy.int64)
    if kind == "RowSplits":
        splits = data
    elif kind == "RowLengths":
        splits = numpy.concatenate([[0], numpy.cumsum(data)])
    elif kind == "RowStarts":
        splits = numpy.concatenate([data, [count]])
    elif kind == "RowLimits":
        splits = numpy.concatenate([[0], data])
    else:   # ValueRowIds
        lengths = numpy.bincount(data, minlength=0) if data.size else numpy.zeros(0, int)
        splits = numpy.concatenate([[0], numpy.cumsum(lengths)])
    if splits.size == 0 or splits[0] != 0 or splits[-1] != count or \
            (numpy.diff(splits) < 0).any():
        raise InvalidArgumentError(None, None, f"{what}: {kind}({part.key!r}) = "
                                               f"{data.tolist()} does not partition "
                                               f"{count} values")
    return splits.astype(numpy.int64)


def _ragged_result(spec, key, values, parts, batched):
    from .ragged_tensor import RaggedTensor
    what = f"parse_example: RaggedFeature {key!r}"
    splits_dtype = dtypes.as_dtype(spec.row_splits_dtype).np
    examples = []   # per example: (values, [splits per partition, outermost first])
    for e, vals in enumerate(values):
        levels, count = [], len(vals)
        for i in reversed(range(len(spec.partitions))):
            part = spec.partitions[i]
            data = None if type(part).__name__ == "UniformRowLength" else parts[i][e]
            levels.insert(0, _splits_of(part, data, count, what))
            count = len(levels[0]) - 1
        examples.append((vals, levels))
    uniform = [int(p.length) if type(p).__name__ == "UniformRowLength" else None
               for p in spec.partitions]
    if not batched:
        vals, levels = examples[0]
        if all(u is not None for u in uniform):
            return _tensor_of(_name_of(vals), vals.reshape((-1,) + tuple(uniform)))
        result = _tensor_of(_name_of(vals), vals)
        for level, u in zip(reversed(levels), reversed(uniform)):
            result = RaggedTensor._make(result, level.astype(splits_dtype), uniform=u)
        return result
    dtype_name = dtypes.as_dtype(spec.dtype).name
    flat = numpy.concatenate([v for v, _ in examples]) if examples else \
        numpy.zeros(0, _np_dtype(dtype_name))
    result = _tensor_of(dtype_name, flat)
    for depth in reversed(range(len(spec.partitions))):
        pieces, offset = [numpy.zeros(1, numpy.int64)], 0
        for _, levels in examples:
            pieces.append(levels[depth][1:] + offset)
            offset += int(levels[depth][-1])
        result = RaggedTensor._make(result, numpy.concatenate(pieces).astype(splits_dtype),
                                    uniform=uniform[depth])
    counts = [len(levels[0]) - 1 if levels else len(v) for v, levels in examples]
    outer = numpy.concatenate([[0], numpy.cumsum(counts)]).astype(splits_dtype)
    return RaggedTensor._make(result, outer)


def _name_of(array):
    return "string" if array.dtype == OBJECT else dtypes.as_dtype(array.dtype).name


def composite_specs(features, where):
    """The specs with each SparseFeature/RaggedFeature replaced by VarLenFeatures of its keys,
    and ``finish(parsed, batched)`` that builds their results from those (None if there are
    none)."""
    from .example_parsing import VarLenFeature
    composite = {k: v for k, v in features.items()
                 if isinstance(v, (SparseFeature, RaggedFeature))}
    if not composite:
        return features, None
    plain = {k: v for k, v in features.items() if k not in composite}
    added = set()

    def need(key, dtype):
        spec = VarLenFeature(dtypes.as_dtype(dtype))
        if key in plain and plain[key] != spec:
            raise ValueError(f"{where}: feature {key!r} is read both as {plain[key]} and, "
                             f"for a SparseFeature/RaggedFeature, as {spec}")
        if key not in plain:
            plain[key] = spec
            added.add(key)

    for key, spec in composite.items():
        if isinstance(spec, SparseFeature):
            index_keys = [spec.index_key] if isinstance(spec.index_key, str) \
                else list(spec.index_key)
            for k in index_keys:
                need(k, dtypes.int64)
            need(spec.value_key, spec.dtype)
        else:
            need(spec.value_key or key, spec.dtype)
            for part in spec.partitions:
                if type(part).__name__ != "UniformRowLength":
                    need(part.key, dtypes.int64)

    def finish(parsed, batched):
        out = {k: v for k, v in parsed.items() if k not in added}
        for key, spec in composite.items():
            if isinstance(spec, SparseFeature):
                out[key] = _sparse_result(spec, key, parsed, batched)
            else:
                values = _per_example(parsed[spec.value_key or key], batched)
                parts = [None if type(p).__name__ == "UniformRowLength"
                         else _per_example(parsed[p.key], batched) for p in spec.partitions]
                out[key] = _ragged_result(spec, key, values, parts, batched)
        return out
    return plain, finish


def _sparse_result(spec, key, parsed, batched):
    what = f"parse_example: SparseFeature {key!r}"
    index_keys = [spec.index_key] if isinstance(spec.index_key, str) else list(spec.index_key)
    size = [int(spec.size)] if numpy.ndim(spec.size) == 0 else [int(d) for d in spec.size]
    if len(size) != len(index_keys):
        raise ValueError(f"{what}: size {size} needs one entry per index key {index_keys}")
    columns = [_per_example(parsed[k], batched) for k in index_keys]
    values = _per_example(parsed[spec.value_key], batched)
    rows, all_values = [], []
    for e, vals in enumerate(values):
        idx = numpy.stack([c[e].astype(numpy.int64) for c in columns], axis=1) \
            if all(len(c[e]) == len(vals) for c in columns) else None
        if idx is None:
            raise InvalidArgumentError(None, None, f"{what}: example {e} has {len(vals)} values "
                                                   f"but {[len(c[e]) for c in columns]} indices")
        bad = (idx < 0) | (idx >= numpy.asarray(size))
        if bad.any():
            i = int(numpy.argmax(bad.any(axis=1)))
            raise InvalidArgumentError(None, None, f"{what}: index {idx[i].tolist()} of example "
                                                   f"{e} is out of bounds for size {size}")
        if not spec.already_sorted and len(idx):
            order = numpy.lexsort(idx.T[::-1])
            idx, vals = idx[order], vals[order]
        if batched:
            idx = numpy.concatenate([numpy.full((len(idx), 1), e, numpy.int64), idx], axis=1)
        rows.append(idx)
        all_values.append(vals)
    dims = ([len(values)] if batched else []) + size
    indices = numpy.concatenate(rows) if rows else numpy.zeros((0, len(dims)), numpy.int64)
    flat = numpy.concatenate(all_values)
    return SparseTensor._trusted(Tensor(B.from_numpy(indices.reshape(-1, len(dims)))),
                                 _tensor_of(_name_of(flat), flat), dims)
