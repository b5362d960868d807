"""More ``tf.data.Dataset`` transformations, added to ``Dataset`` when ``minitf.data`` loads:
``reduce``, ``scan``, ``padded_batch``, ``interleave``, ``flat_map``, ``window``,
``take_while``, ``shard``, ``get_single_element`` and the static ``choose_from_datasets`` /
``sample_from_datasets``.

Functions are called as ``map`` calls them (a tuple element is passed as separate arguments);
``reduce_func``/``scan_func`` get ``(state, element)`` with the element whole, as in TF. Each
iteration starts from the source again (a scan from its initial state, a sampler from its
seed). ``window`` yields datasets: one per component, in the element's structure.
"""
import collections
import os

import numpy as np

from .. import backend as B
from .. import dtypes
from .._state import state
from ..nest import assert_same_structure, flatten, map_structure, pack_sequence_as
from ..ops.registry import InvalidArgumentError
from ..tensor import Tensor, TensorShape
from ..tensor_spec import TensorSpec
from .dataset import (INFINITE_CARDINALITY, UNKNOWN_CARDINALITY, AUTOTUNE, Dataset, _Batch,
                      _call, _Elements, _structure, _Unary)

__all__ = ["DatasetSpec", "experimental_scan", "choose_from_datasets",
           "sample_from_datasets"]


class DatasetSpec:
    """The type of an element that is itself a dataset (``window`` yields them)."""

    def __init__(self, element_spec, dataset_shape=()):
        self.element_spec = element_spec
        self.shape = TensorShape(dataset_shape)

    def __eq__(self, other):
        return (isinstance(other, DatasetSpec) and self.element_spec == other.element_spec
                and self.shape == other.shape)

    def __hash__(self):
        return hash(("DatasetSpec", repr(self.element_spec)))

    def __repr__(self):
        return f"DatasetSpec({self.element_spec!r}, {self.shape!r})"


def _method(fn):
    setattr(Dataset, fn.__name__, fn)
    return fn


def _no_trace(what):
    """Reading a whole dataset inside a ``minitf.function`` trace: TF reads it on every call,
    which a replayed plan cannot, so the function runs eagerly."""
    if state.tracer is not None:
        state.tracer.run_eagerly(f"it calls {what} (TF reads the dataset on every call)")


def _returned(value):
    return tuple(value) if isinstance(value, list) else value  # TF packs a list as a tuple


def _next_state(old, new, where):
    """``new`` as a state nest, checked against ``old``: same structure and dtypes (TF's
    TypeError), shapes free to change."""
    new = _structure(_returned(new))
    try:
        assert_same_structure(old, new)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{where}: the new state must have the structure of the initial state "
                        f"{_dtypes_of(old)}, got {_dtypes_of(new)} ({exc})") from None
    if _dtypes_of(old) != _dtypes_of(new):
        raise TypeError(f"{where}: the element types of the new state must match the initial "
                        f"state: expected {_dtypes_of(old)}, got {_dtypes_of(new)}")
    return new


def _dtypes_of(structure):
    return map_structure(lambda t: t.dtype.name, structure)


def _scalar_bool(value, where):
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, Tensor) and value.dtype == dtypes.bool and value._value.shape == ():
        return bool(B.to_numpy(value._value))
    got = (f"a {value.dtype.name} tensor of shape {tuple(value.shape)}"
           if isinstance(value, Tensor) else type(value).__name__)
    raise ValueError(f"{where}: `predicate` must return a scalar boolean tensor, got {got}")


def _dataset_result(fn, element, where):
    result = _call(fn, element)
    if not isinstance(result, Dataset):
        raise TypeError(f"{where}: `map_func` must return a `Dataset` object, got "
                        f"{type(result).__name__}")
    return result


def _positive(value, what, where):
    value = int(value)
    if value <= 0:
        raise InvalidArgumentError(f"{where}: {what} must be greater than zero, got {value}")
    return value


# --- reductions ----------------------------------------------------------------------------------
@_method
def reduce(self, initial_state, reduce_func, name=None):
    """Fold the elements into a state: ``state = reduce_func(state, element)`` from
    ``initial_state``; returns the final state (tensors in its structure)."""
    _no_trace("Dataset.reduce")
    current = _structure(initial_state)
    for element in self._iterate():
        current = _next_state(current, reduce_func(current, element), "Dataset.reduce")
    return current


@_method
def get_single_element(self, name=None):
    """The only element of a one-element dataset (InvalidArgumentError otherwise)."""
    _no_trace("Dataset.get_single_element")
    elements = iter(self._iterate())
    first = next(elements, None)
    if first is None:
        raise InvalidArgumentError("Dataset.get_single_element: Dataset was empty.")
    if next(elements, None) is not None:
        raise InvalidArgumentError("Dataset.get_single_element: Dataset had more than one "
                                   "element.")
    return first


# --- scan ----------------------------------------------------------------------------------------
class _Scan(_Unary):
    def __init__(self, source, initial_state, scan_func):
        super().__init__(source)
        self.initial, self.fn = _structure(initial_state), scan_func

    def _iterate(self):
        current = self.initial
        for element in self.source._iterate():
            result = self.fn(current, element)
            if not isinstance(result, (tuple, list)) or len(result) != 2:
                raise TypeError(f"Dataset.scan: `scan_func` must return a pair (new_state, "
                                f"output_element), got {type(result).__name__}")
            current = _next_state(current, result[0], "Dataset.scan")
            yield _structure(_returned(result[1]))


@_method
def scan(self, initial_state, scan_func, name=None):
    """A running transformation: ``new_state, out = scan_func(state, element)`` yields
    ``out`` for every element, the state starting at ``initial_state`` on each iteration."""
    return _Scan(self, initial_state, scan_func)


# --- padded_batch --------------------------------------------------------------------------------
def _per_component(structure, value, what, broadcast):
    """``value`` given per component of ``structure`` (TF's map_structure_up_to), as a flat
    list in component order; ``broadcast`` lets a single value serve every component."""
    if not isinstance(structure, (tuple, dict)):
        return [value]
    if broadcast and not isinstance(value, (tuple, dict, list)):
        return [value] * len(flatten(structure))
    if isinstance(structure, dict):
        if not isinstance(value, dict) or set(value) != set(structure):
            raise ValueError(f"Dataset.padded_batch: `{what}` must be a dict with the keys "
                             f"{sorted(structure)} of the elements, got {value!r:.80}")
        keys = sorted(structure)
    else:
        if not isinstance(value, (tuple, list)) or isinstance(value, TensorShape) \
                or len(value) != len(structure):
            raise ValueError(f"Dataset.padded_batch: `{what}` must have the structure of the "
                             f"elements ({len(structure)} components), got {value!r:.80}")
        keys = range(len(structure))
    return [v for k in keys for v in _per_component(structure[k], value[k], what, broadcast)]


def _dims(shape):
    """A padded shape as a tuple of ints, None where it pads to the batch's longest."""
    if shape is None:
        return None
    if isinstance(shape, Tensor):
        shape = B.to_numpy(shape._value).tolist()
    if isinstance(shape, (int, np.integer)):   # TF reads a number as a one-dimensional shape
        shape = [shape]
    return tuple(None if d is None or int(d) == -1 else int(d) for d in shape)


def _padding_array(value, dtype, index):
    if value is None:
        return np.zeros((), dtype=dtype)
    if isinstance(value, Tensor):
        if value._value.dtype != dtype:
            raise TypeError(f"Dataset.padded_batch: the padding value of component {index} "
                            f"has dtype {value.dtype.name}, which does not match the "
                            f"component's dtype {dtypes.as_dtype(dtype).name}")
        value = B.to_numpy(value._value)
    array = np.asarray(value)
    if array.shape != ():
        raise ValueError(f"Dataset.padded_batch: padding values must be scalars, got shape "
                         f"{array.shape} for component {index}")
    return array.astype(dtype)


class _PaddedBatch(_Batch):
    def __init__(self, source, size, drop_remainder, padded_shapes, padding_values):
        super().__init__(source, size, drop_remainder)
        self.padded_shapes, self.padding_values = padded_shapes, padding_values

    def _combine(self, elements):
        structure = elements[0]
        shapes = _per_component(structure, self.padded_shapes, "padded_shapes", False) \
            if self.padded_shapes is not None else [None] * len(flatten(structure))
        values = _per_component(structure, self.padding_values, "padding_values", True)
        columns = list(zip(*[flatten(e) for e in elements]))
        for i, column in enumerate(columns):
            if not isinstance(column[0], Tensor):
                raise TypeError(f"Dataset.padded_batch: component {i} is a "
                                f"{type(column[0]).__name__}; padded_batch takes dense tensors "
                                f"only (use batch, or ragged_batch for varying shapes)")
        out = [self._pad_column(i, [t._value for t in column], _dims(shape), value)
               for i, (column, shape, value) in enumerate(zip(columns, shapes, values))]
        return pack_sequence_as(structure, out)

    def _pad_column(self, index, arrays, padded, value):
        rank = arrays[0].ndim
        if padded is None:
            padded = (None,) * rank
        for a in arrays:
            if a.ndim != len(padded):
                raise InvalidArgumentError(
                    f"Dataset.padded_batch: component {index} has shape {tuple(a.shape)}, "
                    f"which is not compatible with the padded shape {padded} (rank "
                    f"{len(padded)})")
        target = []
        for axis, dim in enumerate(padded):
            longest = max(int(a.shape[axis]) for a in arrays)
            if dim is not None and longest > dim:
                raise InvalidArgumentError(
                    f"Dataset.padded_batch: attempted to pad to a smaller size than the input "
                    f"element: component {index} has size {longest} in dimension {axis}, the "
                    f"padded shape {padded} allows {dim}")
            target.append(longest if dim is None else dim)
        fill = _padding_array(value, arrays[0].dtype, index)
        batch = B.xp.full((len(arrays),) + tuple(target), fill.item(), dtype=arrays[0].dtype)
        for row, a in enumerate(arrays):
            batch[(row,) + tuple(slice(0, n) for n in a.shape)] = a
        return Tensor(batch)

    def _element_spec(self):
        inner = self.source._element_spec()
        first = self.size if self.drop_remainder else None
        shapes = (_per_component(inner, self.padded_shapes, "padded_shapes", False)
                  if self.padded_shapes is not None else [None] * len(flatten(inner)))
        specs = []
        for spec, shape in zip(flatten(inner), shapes):
            if shape is not None:
                dims = _dims(shape)
            elif spec.shape is None:
                raise ValueError("Dataset.padded_batch: `padded_shapes` must be set when a "
                                 "component has an unknown rank")
            else:
                dims = tuple(spec.shape)
            specs.append(TensorSpec((first,) + dims, spec.dtype))
        return pack_sequence_as(inner, specs)


@_method
def padded_batch(self, batch_size, padded_shapes=None, padding_values=None,
                 drop_remainder=False, name=None):
    """Batch elements of different shapes: each component is padded (with
    ``padding_values``, 0 by default) to ``padded_shapes`` (None or -1 dimensions, and all
    dimensions without ``padded_shapes``: to the longest in the batch)."""
    batch_size = int(batch_size)
    if batch_size < 1:
        raise ValueError(f"Dataset.padded_batch: batch_size must be positive, got "
                         f"{batch_size}")
    return _PaddedBatch(self, batch_size, bool(drop_remainder), padded_shapes, padding_values)


# --- interleave / flat_map -----------------------------------------------------------------------
class _FlatMap(_Unary):
    def __init__(self, source, fn):
        super().__init__(source)
        self.fn = fn

    def _iterate(self):
        for element in self.source._iterate():
            yield from _dataset_result(self.fn, element, "Dataset.flat_map")._iterate()

    def _cardinality(self):
        return 0 if self.source._cardinality() == 0 else UNKNOWN_CARDINALITY

    def _element_spec(self):
        first = next(iter(self.source._iterate()), None)
        if first is None:
            return super()._element_spec()     # an empty dataset: the usual error
        return _dataset_result(self.fn, first, "Dataset.flat_map")._element_spec()


class _Interleave(_FlatMap):
    def __init__(self, source, fn, cycle_length, block_length):
        super().__init__(source, fn)
        self.cycle_length, self.block_length = cycle_length, block_length

    def _iterate(self):
        # TF's order: take block_length elements from each open input in turn; an exhausted
        # input frees its slot, which the next input element fills when the cycle returns.
        inputs = iter(self.source._iterate())
        slots = [None] * self.cycle_length
        index = block = open_count = 0
        inputs_done = False
        while not inputs_done or open_count:
            current = slots[index]
            if current is not None:
                element = next(current, _END)
                if element is not _END:
                    block += 1
                    if block == self.block_length:
                        index, block = (index + 1) % self.cycle_length, 0
                    yield element
                    continue
                slots[index] = None
                open_count -= 1
                index, block = (index + 1) % self.cycle_length, 0
            elif not inputs_done:
                element = next(inputs, _END)
                if element is _END:
                    inputs_done = True
                else:
                    dataset = _dataset_result(self.fn, element, "Dataset.interleave")
                    slots[index] = iter(dataset._iterate())
                    open_count += 1
            else:
                index, block = (index + 1) % self.cycle_length, 0


_END = object()


def _default_cycle_length():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


@_method
def flat_map(self, map_func, name=None):
    """``map_func`` maps each element to a dataset; their elements one after another."""
    return _FlatMap(self, map_func)


@_method
def interleave(self, map_func, cycle_length=None, block_length=None, num_parallel_calls=None,
               deterministic=None, name=None):
    """Elements of the datasets ``map_func`` makes from ``cycle_length`` input elements at a
    time, ``block_length`` (1) from each in turn, in TF's order. ``cycle_length`` None or
    AUTOTUNE: the number of CPU cores, as TF chooses."""
    if cycle_length is None or int(cycle_length) == AUTOTUNE:
        cycle_length = _default_cycle_length()
    cycle_length = _positive(cycle_length, "cycle_length", "Dataset.interleave")
    block_length = _positive(1 if block_length is None else block_length, "block_length",
                             "Dataset.interleave")
    return _Interleave(self, map_func, cycle_length, block_length)


# --- window --------------------------------------------------------------------------------------
class _Window(_Unary):
    def __init__(self, source, size, shift, stride, drop_remainder):
        super().__init__(source)
        self.size, self.shift, self.stride = size, shift, stride
        self.drop_remainder = drop_remainder

    def _iterate(self):
        inputs = iter(self.source._iterate())
        span = (self.size - 1) * self.stride + 1
        buffer = collections.deque()
        exhausted = False
        while True:
            while len(buffer) < span and not exhausted:
                element = next(inputs, _END)
                if element is _END:
                    exhausted = True
                else:
                    buffer.append(element)
            if not buffer:
                return
            members = list(buffer)[::self.stride][:self.size]
            if len(members) < self.size and self.drop_remainder:
                return
            yield _window_of(members)
            skip = self.shift - len(buffer)
            for _ in range(min(self.shift, len(buffer))):
                buffer.popleft()
            for _ in range(max(skip, 0)):
                if exhausted or next(inputs, _END) is _END:
                    exhausted = True
                    break

    def _cardinality(self):
        n = self.source._cardinality()
        if n < 0:
            return n
        if self.drop_remainder:
            rest = n - ((self.size - 1) * self.stride + 1)
            return 0 if rest < 0 else rest // self.shift + 1
        return -(-n // self.shift)

    def _element_spec(self):
        return map_structure(DatasetSpec, self.source._element_spec())


def _window_of(members):
    """One window: a dataset per component, in the elements' structure."""
    columns = zip(*[flatten(m) for m in members])
    return pack_sequence_as(members[0], [_Elements(column) for column in columns])


@_method
def window(self, size, shift=None, stride=1, drop_remainder=False, name=None):
    """Windows of ``size`` elements (every ``stride``-th), a new one every ``shift`` (``size``)
    elements; each window is a dataset per component (``flat_map(lambda w: w.batch(n))``
    turns them into batches). Windows at the end are shorter unless ``drop_remainder``."""
    size = _positive(size, "window size", "Dataset.window")
    shift = _positive(size if shift is None else shift, "shift", "Dataset.window")
    stride = _positive(stride, "stride", "Dataset.window")
    return _Window(self, size, shift, stride, bool(drop_remainder))


# --- take_while / shard --------------------------------------------------------------------------
class _TakeWhile(_Unary):
    def __init__(self, source, predicate):
        super().__init__(source)
        self.predicate = predicate

    def _iterate(self):
        for element in self.source._iterate():
            if not _scalar_bool(_call(self.predicate, element), "Dataset.take_while"):
                return
            yield element

    def _cardinality(self):
        return 0 if self.source._cardinality() == 0 else UNKNOWN_CARDINALITY

    def _element_spec(self):
        return self.source._element_spec()


@_method
def take_while(self, predicate, name=None):
    """The elements up to (not including) the first for which ``predicate`` is false."""
    return _TakeWhile(self, predicate)


class _Shard(_Unary):
    def __init__(self, source, num_shards, index):
        super().__init__(source)
        self.num_shards, self.index = num_shards, index

    def _iterate(self):
        for i, element in enumerate(self.source._iterate()):
            if i % self.num_shards == self.index:
                yield element

    def _cardinality(self):
        n = self.source._cardinality()
        if n < 0:
            return n
        return n // self.num_shards + (1 if self.index < n % self.num_shards else 0)

    def _element_spec(self):
        return self.source._element_spec()


@_method
def shard(self, num_shards, index, name=None):
    """Every ``num_shards``-th element, starting at ``index`` (one worker's share)."""
    num_shards, index = int(num_shards), int(index)
    if num_shards <= 0:
        raise InvalidArgumentError(f"Dataset.shard: num_shards must be greater than zero, got "
                                   f"{num_shards}")
    if not 0 <= index < num_shards:
        raise InvalidArgumentError(f"Dataset.shard: index must be between 0 and "
                                   f"{num_shards - 1} (num_shards - 1), got {index}")
    return _Shard(self, num_shards, index)


# --- choosing between datasets -------------------------------------------------------------------
def _check_datasets(datasets, where):
    datasets = list(datasets)
    if not datasets:
        raise ValueError(f"{where}: `datasets` must be a non-empty list of datasets")
    for d in datasets:
        if not isinstance(d, Dataset):
            raise TypeError(f"{where}: `datasets` must hold datasets, got {type(d).__name__}")
    return datasets


class _Choose(Dataset):
    def __init__(self, datasets, choices, stop_on_empty):
        self.datasets, self.choices, self.stop_on_empty = datasets, choices, stop_on_empty

    def _iterate(self):
        iterators = [iter(d._iterate()) for d in self.datasets]
        done = [False] * len(iterators)
        for choice in self.choices._iterate():
            if not (isinstance(choice, Tensor) and choice.dtype == dtypes.int64
                    and choice._value.shape == ()):
                raise TypeError("choose_from_datasets: the elements of `choice_dataset` must "
                                "be int64 scalars")
            i = int(B.to_numpy(choice._value))
            if not 0 <= i < len(iterators):
                raise InvalidArgumentError(f"choose_from_datasets: selector index out of "
                                           f"range: {i} (there are {len(iterators)} datasets)")
            element = _END if done[i] else next(iterators[i], _END)
            if element is not _END:
                yield element
                continue
            done[i] = True
            if self.stop_on_empty or all(done):
                return

    def _element_spec(self):
        return self.datasets[0]._element_spec()


def choose_from_datasets(datasets, choice_dataset, stop_on_empty_dataset=True):
    """Element ``k`` comes from ``datasets[choice_k]``, ``choice_dataset`` giving int64
    indices. An exhausted chosen dataset ends the result (``stop_on_empty_dataset``) or is
    skipped."""
    datasets = _check_datasets(datasets, "choose_from_datasets")
    if not isinstance(choice_dataset, Dataset):
        raise TypeError(f"choose_from_datasets: `choice_dataset` must be a dataset of int64 "
                        f"scalars, got {type(choice_dataset).__name__}")
    return _Choose(datasets, choice_dataset, bool(stop_on_empty_dataset))


class _Sample(Dataset):
    def __init__(self, datasets, weights, seed, stop_on_empty, rerandomize):
        self.datasets, self.weights, self.seed = datasets, weights, seed
        self.stop_on_empty, self.rerandomize = stop_on_empty, rerandomize
        self._iterations = 0

    def _weight_stream(self):
        if not isinstance(self.weights, Dataset):
            while True:
                yield self.weights
        for w in self.weights._iterate():
            yield _weight_vector(w, len(self.datasets))

    def _iterate(self):
        epoch = self._iterations if self.rerandomize else 0
        self._iterations += 1
        rng = np.random.default_rng([self.seed, epoch])
        iterators = [iter(d._iterate()) for d in self.datasets]
        live = np.ones(len(iterators), dtype=bool)
        for weights in self._weight_stream():
            p = np.where(live, weights, 0.0)
            if p.sum() <= 0:
                return
            i = int(rng.choice(len(iterators), p=p / p.sum()))
            element = next(iterators[i], _END)
            if element is not _END:
                yield element
            elif self.stop_on_empty:
                return
            else:
                live[i] = False

    def _cardinality(self):
        counts = [d._cardinality() for d in self.datasets]
        if all(c == INFINITE_CARDINALITY for c in counts) and not isinstance(self.weights,
                                                                             Dataset):
            return INFINITE_CARDINALITY
        return UNKNOWN_CARDINALITY

    def _element_spec(self):
        return self.datasets[0]._element_spec()


def _weight_vector(weights, n):
    if isinstance(weights, Tensor):
        weights = B.to_numpy(weights._value)
    w = np.asarray(weights, dtype=np.float64)
    if w.shape != (n,):
        raise ValueError(f"sample_from_datasets: `weights` must have one entry per dataset "
                         f"({n}), got shape {w.shape}")
    if (w < 0).any() or not np.isfinite(w).all():
        raise InvalidArgumentError(f"sample_from_datasets: `weights` must be finite and "
                                   f"non-negative, got {w.tolist()}")
    return w


def sample_from_datasets(datasets, weights=None, seed=None, stop_on_empty_dataset=False,
                         rerandomize_each_iteration=None):
    """Elements drawn at random from ``datasets``, dataset ``i`` with probability
    ``weights[i]`` (normalised; uniform by default; a dataset of weight vectors gives one
    vector per draw). Exhausted datasets drop out unless ``stop_on_empty_dataset``. The order
    repeats on every iteration unless ``rerandomize_each_iteration``."""
    datasets = _check_datasets(datasets, "sample_from_datasets")
    if weights is None:
        weights = np.full(len(datasets), 1.0 / len(datasets))
    elif not isinstance(weights, Dataset):
        weights = _weight_vector(weights, len(datasets))
    if seed is None:
        from ..ops import random_ops
        seed = int(B.to_numpy(random_ops.uniform((), 0, 2 ** 31 - 1, dtype="int64")._value))
    return _Sample(datasets, weights, int(seed), bool(stop_on_empty_dataset),
                   bool(rerandomize_each_iteration))


Dataset.choose_from_datasets = staticmethod(choose_from_datasets)
Dataset.sample_from_datasets = staticmethod(sample_from_datasets)


def experimental_scan(initial_state, scan_func):
    """``tf.data.experimental.scan``: the transformation ``Dataset.scan`` applies, for
    ``dataset.apply``."""
    return lambda dataset: dataset.scan(initial_state, scan_func)
