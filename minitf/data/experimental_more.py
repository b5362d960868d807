"""More of ``tf.data.experimental``: ``from_list``, ``get_structure``, ``at``,
``parallel_interleave``, ``group_by_reducer`` / ``Reducer``, ``RandomDataset``,
``copy_to_device`` / ``prefetch_to_device``, ``parse_example_dataset``,
``make_batched_features_dataset``, the ``SHARD_HINT`` / ``AutotuneAlgorithm`` /
``ExternalStatePolicy`` constants.

``at(dataset, index)`` reads one element without iterating up to it, for the datasets that
allow it, as TF: ``range``, ``from_tensor_slices``, ``from_tensors``, ``from_list`` and
``map``, ``batch``, ``take``, ``skip``, ``enumerate``, ``zip``, ``prefetch`` of them.
"""
import enum

from .. import backend as B
from .. import dtypes
from ..errors import OutOfRangeError, UnimplementedError
from ..nest import assert_same_structure, flatten, map_structure, pack_sequence_as
from ..tensor import Tensor
from . import dataset as _ds
from .batching_more import CompositeSlices
from .dataset import Dataset, _call, _Elements, _merge_specs, _spec, _structure, _Unary
from .iterator import DatasetIterator
from .sources import random as _random

__all__ = ["SHARD_HINT", "AutotuneAlgorithm", "ExternalStatePolicy", "Reducer", "at",
           "copy_to_device", "enable_debug_mode", "from_list", "get_structure",
           "group_by_reducer", "make_batched_features_dataset", "parallel_interleave",
           "parse_example_dataset", "prefetch_to_device", "RandomDataset"]

SHARD_HINT = -1


class AutotuneAlgorithm(enum.Enum):
    """Accepted in ``tf.data.Options().autotune.autotune_algorithm``; minitf has no autotuner."""
    DEFAULT = 0
    HILL_CLIMB = 1
    GRADIENT_DESCENT = 2
    MAX_PARALLELISM = 3
    STAGE_BASED = 4


class ExternalStatePolicy(enum.Enum):
    """Accepted in ``Options().experimental_external_state_policy``."""
    WARN = 0
    IGNORE = 1
    FAIL = 2


# --- from_list / get_structure -------------------------------------------------------------------
def _dtype_names(spec):
    return [getattr(s, "dtype", None) for s in flatten(spec)]


def from_list(elements, name=None):
    """A dataset of the elements of the list ``elements`` (each a tensor or a nest of them,
    all of one structure and dtypes)."""
    elements = list(elements)
    if not elements:
        raise ValueError("from_list: `elements` should not be empty; use "
                         "tf.data.Dataset.range(0) for an empty dataset")
    converted = [_structure(tuple(e) if isinstance(e, list) else e) for e in elements]
    spec = map_structure(_spec, converted[0])
    for i, element in enumerate(converted[1:], 1):
        other = map_structure(_spec, element)
        try:
            assert_same_structure(spec, other)
        except (TypeError, ValueError):
            raise ValueError(f"from_list: element {i} has the structure {other}, which differs "
                             f"from element 0's {spec}") from None
        if _dtype_names(spec) != _dtype_names(other):
            raise TypeError(f"from_list: element {i} has dtypes {_dtype_names(other)}, element "
                            f"0 has {_dtype_names(spec)}")
        spec = pack_sequence_as(spec, [_merge_specs(a, b) for a, b in
                                       zip(flatten(spec), flatten(other))])
    return _List(converted, spec)


class _List(_Elements):
    def __init__(self, elements, spec):
        super().__init__(elements)
        self.spec = spec

    def _element_spec(self):
        return self.spec


def get_structure(dataset_or_iterator):
    """The ``element_spec`` of a dataset, an iterator or an Optional."""
    if isinstance(dataset_or_iterator, (Dataset, DatasetIterator)) or hasattr(
            dataset_or_iterator, "element_spec"):
        return dataset_or_iterator.element_spec
    raise TypeError(f"get_structure: expected a tf.data.Dataset, Iterator or Optional, got "
                    f"{type(dataset_or_iterator).__name__}")


# --- random access -------------------------------------------------------------------------------
def _unsupported(dataset):
    return UnimplementedError(None, None, f"tf.data.experimental.at: random access is not "
                              f"implemented for {type(dataset).__name__.lstrip('_')} datasets "
                              f"(only range, from_tensor_slices, from_tensors, from_list and "
                              f"map, batch, take, skip, enumerate, zip, prefetch of them)")


def _count(dataset):
    n = dataset._cardinality()
    if n < 0:
        raise _unsupported(dataset)
    return n


def _element_at(dataset, i):
    """Element ``i`` (0 <= i < cardinality, checked by the caller)."""
    kind = type(dataset)
    if kind is _ds._Range:
        return Tensor(B.xp.asarray(dataset.values[i], dtype=dataset.dtype.np))
    if kind is _ds._Slices:
        from ..string_tensors import row
        return pack_sequence_as(dataset.structure,
                                [Tensor(row(t._value, i)) for t in dataset.leaves])
    if kind is CompositeSlices:
        return pack_sequence_as(dataset.structure, [r.row(i) for r in dataset.rows])
    if kind is _Elements or kind is _List:
        return dataset.elements[i]
    if kind is _ds._Map:
        return _ds._apply(dataset.fn, _element_at(dataset.source, i))
    if kind is _ds._Passthrough:
        return _element_at(dataset.source, i)
    if kind is _ds._Take:
        return _element_at(dataset.source, i)
    if kind is _ds._Skip:
        return _element_at(dataset.source, i + max(dataset.count, 0))
    if kind is _ds._Enumerate:
        return (Tensor(B.xp.asarray(dataset.start + i, dtype=B.xp.int64)),
                _element_at(dataset.source, i))
    if kind is _ds._Zip:
        parts = [_element_at(d, i) for d in flatten(dataset.datasets)]
        return pack_sequence_as(dataset.datasets, parts) if not isinstance(
            dataset.datasets, dict) else _ds._pack_dict(dataset.datasets, parts)
    if kind is _ds._Batch:
        n = _count(dataset.source)
        start = i * dataset.size
        return dataset._combine([_element_at(dataset.source, j)
                                 for j in range(start, min(start + dataset.size, n))])
    raise _unsupported(dataset)


def at(dataset, index):
    """Element ``index`` of ``dataset``, read directly (see the module docstring for the
    datasets that allow it); OutOfRangeError outside ``[0, cardinality)``."""
    if not isinstance(dataset, Dataset):
        raise TypeError(f"at: `dataset` must be a tf.data.Dataset, got "
                        f"{type(dataset).__name__}")
    if isinstance(index, Tensor):
        index = B.to_numpy(index._value)
    index = int(index)
    n = _count(dataset)
    if not 0 <= index < n:
        raise OutOfRangeError(None, None, f"at: index out of range [0, {n}): {index}")
    return _element_at(dataset, index)


# --- transformations for apply -------------------------------------------------------------------
def parallel_interleave(map_func, cycle_length, block_length=1, sloppy=False,
                        buffer_output_elements=None, prefetch_input_elements=None):
    """``Dataset.interleave`` for ``apply`` (the deterministic order, also when ``sloppy``)."""
    return lambda dataset: dataset.interleave(map_func, cycle_length, block_length)


def copy_to_device(target_device, source_device="/cpu:0"):
    """The dataset unchanged: elements are made where minitf computes (one device)."""
    return lambda dataset: dataset


def prefetch_to_device(device, buffer_size=None):
    """The dataset unchanged: elements are made where minitf computes (one device)."""
    return lambda dataset: dataset


def enable_debug_mode():
    """Accepted for compatibility: minitf runs dataset functions eagerly, in order, always."""


def RandomDataset(seed=None, rerandomize_each_iteration=None, name=None):  # noqa: N802
    """``tf.data.experimental.RandomDataset``: ``Dataset.random``."""
    return _random(seed, rerandomize_each_iteration)


# --- group_by_reducer ----------------------------------------------------------------------------
class Reducer:
    """``init_func(key) -> state``, ``reduce_func(state, element) -> state`` and
    ``finalize_func(state) -> output`` for ``group_by_reducer``."""

    def __init__(self, init_func, reduce_func, finalize_func):
        self.init_func, self.reduce_func = init_func, reduce_func
        self.finalize_func = finalize_func


def _int64_key(value):
    if not (isinstance(value, Tensor) and value.dtype == dtypes.int64
            and value._value.shape == ()):
        got = (f"a {value.dtype.name} tensor of shape {tuple(value.shape)}"
               if isinstance(value, Tensor) else type(value).__name__)
        raise ValueError(f"group_by_reducer: `key_func` must return a single tf.int64 scalar, "
                         f"got {got}")
    return int(B.to_numpy(value._value))


class _GroupByReducer(_Unary):
    def __init__(self, source, key_func, reducer):
        super().__init__(source)
        self.key_func, self.reducer = key_func, reducer

    def _iterate(self):
        states = {}
        for element in self.source._iterate():
            key = _int64_key(_call(self.key_func, element))
            if key not in states:
                states[key] = _structure(self.reducer.init_func(
                    Tensor(B.xp.asarray(key, dtype=B.xp.int64))))
            new = self.reducer.reduce_func(states[key], element)
            states[key] = _structure(tuple(new) if isinstance(new, list) else new)
        for key in sorted(states):
            out = _call(self.reducer.finalize_func, states[key])
            yield _structure(tuple(out) if isinstance(out, list) else out)

    def _cardinality(self):
        return _ds.UNKNOWN_CARDINALITY


def group_by_reducer(key_func, reducer):
    """Group the elements by ``key_func(element)`` (an int64 scalar) and reduce each group
    with ``reducer``: one output per key, in increasing key order, after the input ends."""
    if not isinstance(reducer, Reducer):
        raise TypeError(f"group_by_reducer: `reducer` must be a tf.data.experimental.Reducer, "
                        f"got {type(reducer).__name__}")
    return lambda dataset: _GroupByReducer(dataset, key_func, reducer)


# --- Example parsing -----------------------------------------------------------------------------
def parse_example_dataset(features, num_parallel_calls=1, deterministic=None):
    """Map batches of serialized ``tf.train.Example`` strings to dicts of features
    (``tf.io.parse_example``), for ``apply``."""
    from ..example_parsing import parse_example
    if not isinstance(features, dict) or not features:
        raise ValueError(f"parse_example_dataset: `features` must be a non-empty dict of "
                         f"feature specs, got {features!r:.80}")
    spec = _parsed_spec(features)
    return lambda dataset: _ds._Map(
        dataset, lambda serialized: parse_example(serialized, features), spec)


def _parsed_spec(features):
    """The element_spec TF states for parsed batches (None: inferred, as for any map)."""
    from ..example_parsing import FixedLenFeature, FixedLenSequenceFeature, VarLenFeature
    from ..tensor_spec import TensorSpec
    from .composite import SparseTensorSpec
    spec = {}
    for key, feature in features.items():
        if isinstance(feature, (FixedLenFeature, FixedLenSequenceFeature)):
            shape = feature.shape
            shape = (shape,) if isinstance(shape, int) else tuple(shape)
            lead = (None, None) if isinstance(feature, FixedLenSequenceFeature) else (None,)
            spec[key] = TensorSpec(lead + shape, feature.dtype)
        elif isinstance(feature, VarLenFeature):
            spec[key] = SparseTensorSpec((None, None), feature.dtype)
        else:
            return None
    return spec


def make_batched_features_dataset(file_pattern, batch_size, features, reader=None,
                                  label_key=None, reader_args=None, num_epochs=None,
                                  shuffle=True, shuffle_buffer_size=10000, shuffle_seed=None,
                                  prefetch_buffer_size=None, reader_num_threads=None,
                                  parser_num_threads=None, sloppy_ordering=False,
                                  drop_final_batch=False):
    """Batches of parsed ``tf.train.Example`` records read from the files matching
    ``file_pattern`` (TFRecord by default): dicts of features, or ``(features, label)``
    with ``label_key``. Files and records are shuffled unless ``shuffle=False``; the data
    repeats ``num_epochs`` times (None: forever)."""
    from .tfrecord_dataset import TFRecordDataset
    reader = TFRecordDataset if reader is None else reader
    reader_args = list(reader_args or [])
    if label_key is not None and label_key not in features:
        raise ValueError(f"make_batched_features_dataset: label_key {label_key!r} is not among "
                         f"the features {sorted(features)}")
    files = Dataset.list_files(file_pattern, shuffle=shuffle, seed=shuffle_seed)
    cycle = 1 if reader_num_threads is None else int(reader_num_threads)
    dataset = files.interleave(lambda name: reader(name, *reader_args),
                               cycle_length=cycle if cycle > 0 else None)
    if shuffle:
        dataset = dataset.shuffle(shuffle_buffer_size, seed=shuffle_seed)
    if num_epochs != 1:
        dataset = dataset.repeat(num_epochs)
    dataset = dataset.batch(batch_size, drop_remainder=drop_final_batch)
    dataset = dataset.apply(parse_example_dataset(features))
    if label_key is not None:
        dataset = dataset.map(lambda parsed: (
            {k: v for k, v in parsed.items() if k != label_key}, parsed[label_key]))
    return dataset


def install(tf):
    """Set the top-level names: ``tf.SparseTensorSpec``, ``tf.RaggedTensorSpec``,
    ``tf.OptionalSpec`` and ``tf.experimental.Optional``."""
    from ..namespace_imports import namespace
    from .composite import RaggedTensorSpec, SparseTensorSpec
    from .optional import Optional, OptionalSpec
    tf.SparseTensorSpec, tf.RaggedTensorSpec = SparseTensorSpec, RaggedTensorSpec
    tf.OptionalSpec = OptionalSpec
    namespace(tf, "experimental").Optional = Optional
