"""``tf.io.parse_single_example``, ``tf.io.parse_example`` and
``tf.io.parse_single_sequence_example``, with the feature specs ``tf.io.FixedLenFeature``,
``tf.io.VarLenFeature`` and ``tf.io.FixedLenSequenceFeature``.

    spec = {"image": tf.io.FixedLenFeature([28, 28], tf.float32),
            "label": tf.io.FixedLenFeature([], tf.int64, default_value=-1),
            "tags": tf.io.VarLenFeature(tf.string)}
    parsed = tf.data.TFRecordDataset(files).map(lambda r: tf.io.parse_single_example(r, spec))

Features are read as TF reads them: ``tf.float32`` from a ``float_list``, ``tf.int64`` from an
``int64_list``, ``tf.string`` from a ``bytes_list``; a list of another kind, a wrong number of
values or a missing required feature raises ``tf.errors.InvalidArgumentError`` naming the key.
"""
import collections

import numpy

from . import backend as B, dtypes, errors
from .example_proto import DecodeError, Example, SequenceExample
from .sparse_tensor import SparseTensor
from .string_tensors import OBJECT, bytes_array, string_tensor
from .tensor import Tensor

__all__ = ["FixedLenFeature", "VarLenFeature", "FixedLenSequenceFeature",
           "parse_single_example", "parse_example", "parse_single_sequence_example"]

_KIND_OF_DTYPE = {"float32": "float_list", "int64": "int64_list", "string": "bytes_list"}
_TYPE_NAME = {"float_list": "float", "int64_list": "int64", "bytes_list": "string"}
_NP_DTYPE = {"float32": numpy.float32, "int64": numpy.int64, "string": OBJECT}


def _dtype(dtype, where):
    dtype = dtypes.as_dtype(dtype)
    if dtype.name not in _KIND_OF_DTYPE:
        raise errors.InvalidArgumentError(
            None, None, f"{where}: unsupported dtype {dtype.name}; features are parsed as "
                        f"tf.float32, tf.int64 or tf.string")
    return dtype


def _shape(shape, where):
    if shape is None:
        return ()
    if isinstance(shape, int):
        shape = (shape,)
    dims = tuple(shape.as_list() if hasattr(shape, "as_list") else shape)
    if any(d is None or int(d) < 0 for d in dims):
        raise ValueError(f"{where}: shape must be fully defined with dims >= 0, got "
                         f"{list(dims)}")
    return tuple(int(d) for d in dims)


class FixedLenFeature(collections.namedtuple(
        "FixedLenFeature", ["shape", "dtype", "default_value"])):
    """``tf.io.FixedLenFeature(shape, dtype, default_value=None)``: a feature with exactly
    ``prod(shape)`` values, parsed into a tensor of ``shape``; ``default_value`` (of that
    shape, or a scalar) is used where it is missing, else it is required."""
    __slots__ = ()

    def __new__(cls, shape, dtype, default_value=None):
        return super().__new__(cls, shape, dtype, default_value)


class VarLenFeature(collections.namedtuple("VarLenFeature", ["dtype"])):
    """``tf.io.VarLenFeature(dtype)``: a feature with any number of values, parsed into a
    ``tf.SparseTensor``."""
    __slots__ = ()


class FixedLenSequenceFeature(collections.namedtuple(
        "FixedLenSequenceFeature", ["shape", "dtype", "allow_missing", "default_value"])):
    """``tf.io.FixedLenSequenceFeature(shape, dtype, allow_missing=False,
    default_value=None)``: any number of rows of ``shape``, parsed into a tensor of shape
    ``[rows] + shape`` (batches padded with ``default_value``, else 0 or b'')."""
    __slots__ = ()

    def __new__(cls, shape, dtype, allow_missing=False, default_value=None):
        return super().__new__(cls, shape, dtype, allow_missing, default_value)


def _numeric(array):
    return Tensor(B.from_numpy(numpy.array(array, order="C")))


def _tensor(array):
    """A Tensor holding a host array (string arrays stay on the host)."""
    return string_tensor(array) if array.dtype == OBJECT else _numeric(array)


def _values_array(values, dtype_name):
    if dtype_name == "string":
        out = numpy.empty(len(values), OBJECT)
        for i, value in enumerate(values):
            out[i] = value
        return out
    return numpy.asarray(values, _NP_DTYPE[dtype_name])


def _decode(message_cls, data, where):
    try:
        return message_cls.FromString(data)
    except DecodeError as exc:
        raise errors.InvalidArgumentError(
            None, None, f"{where}: could not parse the serialized "
                        f"{message_cls.__name__} {bytes(data[:40])!r}: {exc}") from None


def _feature_values(feature, key, dtype, where, what="Feature"):
    """The values of one ``Feature`` as a host array of ``dtype``; another kind of list
    raises."""
    kind = feature.WhichOneof("kind")
    wanted = _KIND_OF_DTYPE[dtype.name]
    if kind is not None and kind != wanted:
        raise errors.InvalidArgumentError(
            None, None, f"{where}: {what} {key!r}: data types don't match: the data has "
                        f"type {_TYPE_NAME[kind]}, the spec expects {dtype.name}")
    values = getattr(feature, wanted).value if kind is not None else []
    return _values_array(values, dtype.name)


def _default_array(spec, shape, where, key):
    dtype_name = spec.dtype.name
    if spec.default_value is None:
        return None
    default = spec.default_value
    if isinstance(default, Tensor):
        default = default.numpy()
    if dtype_name == "string":
        array = bytes_array(default, f"{where}: default_value of {key!r}")
    else:
        array = numpy.asarray(default, _NP_DTYPE[dtype_name])
    if array.size == 1 and int(numpy.prod(shape)) != 1:
        array = numpy.broadcast_to(array.reshape(()), shape)
    if array.size != int(numpy.prod(shape)):
        raise ValueError(f"{where}: default_value of {key!r} has {array.size} values, the "
                         f"feature's shape {list(shape)} needs {int(numpy.prod(shape))}")
    return array.reshape(shape)


def _pad_value(spec):
    if spec.default_value is not None:
        value = spec.default_value
        value = value.numpy() if isinstance(value, Tensor) else value
        if spec.dtype.name == "string":
            return bytes_array(value, "FixedLenSequenceFeature default_value")[()]
        return numpy.asarray(value, _NP_DTYPE[spec.dtype.name]).reshape(())[()]
    return b"" if spec.dtype.name == "string" else 0


def _check_specs(features, where, sequence=False):
    if not isinstance(features, dict):
        raise TypeError(f"{where}: features must be a dict of feature names to "
                        f"FixedLenFeature / VarLenFeature / FixedLenSequenceFeature, got "
                        f"{type(features).__name__}")
    checked = {}
    for key, spec in features.items():
        if isinstance(spec, VarLenFeature):
            checked[key] = (spec, _dtype(spec.dtype, where), None)
        elif isinstance(spec, FixedLenSequenceFeature):
            if not (spec.allow_missing or sequence):
                raise ValueError(f"{where}: unsupported: FixedLenSequenceFeature {key!r} "
                                 f"requires allow_missing=True in an Example")
            checked[key] = (spec, _dtype(spec.dtype, where), _shape(spec.shape, where))
        elif isinstance(spec, FixedLenFeature) and not sequence:
            checked[key] = (spec, _dtype(spec.dtype, where), _shape(spec.shape, where))
        else:
            expected = "FixedLenSequenceFeature or VarLenFeature" if sequence else \
                "FixedLenFeature, VarLenFeature or FixedLenSequenceFeature"
            raise TypeError(f"{where}: feature {key!r}: expected a {expected}, got "
                            f"{type(spec).__name__} {spec!r:.80}")
    return checked


def _rows(values, shape, key, where):
    """``values`` as ``[rows] + shape``."""
    per_row = int(numpy.prod(shape))
    if per_row == 0 or values.size % per_row:
        raise errors.InvalidArgumentError(
            None, None, f"{where}: feature {key!r}: the number of values should be divisible "
                        f"by {per_row} (shape {list(shape)}), found {values.size}")
    return values.reshape((values.size // per_row,) + shape)


def _sparse(per_example, dtype, batched):
    """A SparseTensor from each example's values (one example unless ``batched``)."""
    counts = [v.size for v in per_example]
    total = sum(counts)
    values = numpy.concatenate(per_example) if total else _values_array([], dtype.name)
    column = numpy.concatenate([numpy.arange(c, dtype=numpy.int64) for c in counts]) \
        if total else numpy.zeros(0, numpy.int64)
    longest = max(counts, default=0)
    if batched:
        row = numpy.repeat(numpy.arange(len(counts), dtype=numpy.int64), counts)
        indices, dims = numpy.stack([row, column], axis=1), (len(counts), longest)
    else:
        indices, dims = column.reshape(-1, 1), (longest,)
    return SparseTensor._trusted(_numeric(indices), _tensor(values), dims)


def _parse(serialized, features, where):
    """The parsed features of a scalar or vector of serialized Examples."""
    finish = None
    if isinstance(features, dict):   # SparseFeature / RaggedFeature: through VarLenFeatures
        from .example_features import composite_specs
        features, finish = composite_specs(features, where)
    checked = _check_specs(features, where)
    records = bytes_array(serialized, f"{where}: serialized")
    if records.ndim > 1:
        raise errors.InvalidArgumentError(
            None, None, f"{where}: expected serialized to be a scalar or vector, got shape "
                        f"{list(records.shape)}")
    batched = records.ndim == 1
    maps = [_decode(Example, r, where).features.feature for r in records.reshape(-1)]
    out = {}
    for key, (spec, dtype, shape) in checked.items():
        found = [m[key] if key in m else None for m in maps]
        if isinstance(spec, VarLenFeature):
            per_example = [_feature_values(f, key, dtype, where) if f is not None
                           else _values_array([], dtype.name) for f in found]
            out[key] = _sparse(per_example, dtype, batched)
            continue
        if isinstance(spec, FixedLenSequenceFeature):
            rows = [_rows(_feature_values(f, key, dtype, where), shape, key, where)
                    if f is not None else _values_array([], dtype.name).reshape((0,) + shape)
                    for f in found]
            if not batched:
                out[key] = _tensor(rows[0])
                continue
            longest = max((len(r) for r in rows), default=0)
            full = numpy.empty((len(rows), longest) + shape, _NP_DTYPE[dtype.name])
            full[...] = _pad_value(spec)
            for i, r in enumerate(rows):
                full[i, :len(r)] = r
            out[key] = _tensor(full)
            continue
        default = _default_array(spec, shape, where, key)
        size = int(numpy.prod(shape))
        results = []
        for f in found:
            if f is None:
                if default is None:
                    raise errors.InvalidArgumentError(
                        None, None, f"{where}: feature {key!r} (data type: {dtype.name}) is "
                                    f"required but could not be found")
                results.append(default)
                continue
            values = _feature_values(f, key, dtype, where)
            if values.size != size:
                raise errors.InvalidArgumentError(
                    None, None, f"{where}: feature {key!r}: expected {size} values for shape "
                                f"{list(shape)}, found {values.size}")
            results.append(values.reshape(shape))
        if batched:
            stacked = numpy.empty((len(results),) + shape, _NP_DTYPE[dtype.name])
            for i, r in enumerate(results):
                stacked[i] = r
            out[key] = _tensor(stacked)
        else:
            out[key] = _tensor(numpy.array(results[0], _NP_DTYPE[dtype.name]))
    return out if finish is None else finish(out, batched)


def parse_single_example(serialized, features, name=None, example_names=None):
    """The features of one serialized ``tf.train.Example`` (a scalar string): a dict of
    ``features``' keys to tensors (``SparseTensor`` for ``VarLenFeature``)."""
    if bytes_array(serialized, "parse_single_example: serialized").ndim != 0:
        raise errors.InvalidArgumentError(
            None, None, "parse_single_example: serialized must be a scalar string; use "
                        "tf.io.parse_example for a batch")
    return _parse(serialized, features, "parse_single_example")


def parse_example(serialized, features, example_names=None, name=None):
    """The features of a vector of serialized ``tf.train.Example``: each dense feature with
    a leading batch dimension, each ``VarLenFeature`` a 2-D ``SparseTensor``."""
    return _parse(serialized, features, "parse_example")


def parse_single_sequence_example(serialized, context_features=None, sequence_features=None,
                                  example_name=None, name=None):
    """``(context, sequences)`` of one serialized ``tf.train.SequenceExample``: the
    ``context_features`` parsed as ``parse_single_example`` does, and each of the
    ``sequence_features`` (``FixedLenSequenceFeature``: ``[steps] + shape``;
    ``VarLenFeature``: a 2-D SparseTensor) from the feature list of that name."""
    where = "parse_single_sequence_example"
    records = bytes_array(serialized, f"{where}: serialized")
    if records.ndim != 0:
        raise errors.InvalidArgumentError(
            None, None, f"{where}: serialized must be a scalar string, got shape "
                        f"{list(records.shape)}")
    message = _decode(SequenceExample, records[()], where)
    context = {}
    if context_features:
        context = _parse(Example(features=message.context).SerializeToString(),
                         context_features, where)
    sequences = {}
    lists = message.feature_lists.feature_list
    for key, (spec, dtype, shape) in _check_specs(sequence_features or {}, where,
                                                  sequence=True).items():
        steps = list(lists[key].feature) if key in lists else None
        if steps is None and isinstance(spec, FixedLenSequenceFeature) \
                and not spec.allow_missing:
            raise errors.InvalidArgumentError(
                None, None, f"{where}: feature list {key!r} is required but could not be "
                            f"found")
        steps = steps or []
        per_step = [_feature_values(f, key, dtype, where, "feature list") for f in steps]
        if isinstance(spec, VarLenFeature):
            sparse = _sparse(per_step, dtype, batched=True)
            sequences[key] = sparse
            continue
        size = int(numpy.prod(shape))
        for values in per_step:
            if values.size != size:
                raise errors.InvalidArgumentError(
                    None, None, f"{where}: feature list {key!r}: expected {size} values per "
                                f"step for shape {list(shape)}, found {values.size}")
        array = numpy.empty((len(per_step),) + shape, _NP_DTYPE[dtype.name])
        for i, values in enumerate(per_step):
            array[i] = values.reshape(shape)
        sequences[key] = _tensor(array)
    return context, sequences


def install(tf):
    """Set the parsing functions and feature specs on ``tf.io`` (idempotent)."""
    from .example_features import RaggedFeature, SparseFeature
    for name in __all__:
        setattr(tf.io, name, globals()[name])
    tf.io.SparseFeature, tf.io.RaggedFeature = SparseFeature, RaggedFeature
