"""``tf.data.Dataset``: input pipelines as chains of transformations, iterated in Python.

An element is a nest (tuple, dict, or a single tensor) of minitf Tensors. A pipeline is lazy:
each iteration (``for x in ds``, one ``fit`` epoch) runs the chain from its source again::

    ds = (tf.data.Dataset.from_tensor_slices((x_train, y_train))
          .shuffle(1024, seed=0).batch(64).map(augment).prefetch(tf.data.AUTOTUNE))
    for xb, yb in ds: ...
    model.fit(ds, epochs=3)

Differences from TensorFlow (see docs/compat.md): transformations run eagerly, one element at a
time, in the iterating thread; ``num_parallel_calls``, ``deterministic`` and ``prefetch`` are
accepted and change nothing (the order is always deterministic). ``element_spec`` of a
``map`` result comes from running the function on the first element and on a probe with the
unknown (None) input dims resized (see ``minitf.data.map_spec``); a ``filter`` keeps its
input's spec.

More transformations (``reduce``, ``scan``, ``padded_batch``, ``interleave``, ``flat_map``,
``window``, ``take_while``, ``shard``, ``choose_from_datasets``, ``sample_from_datasets``) are in
``transforms.py``.

Shuffling (as TF): ``shuffle(buffer_size)`` keeps a buffer of ``buffer_size`` elements and
yields a uniformly chosen one, refilling its slot from the input; a buffer at least as large as
the dataset gives a uniform permutation. With ``seed`` the order is reproducible; without it,
the seed is drawn from minitf's global generator when the dataset is created (so
``tf.random.set_seed`` makes it reproducible). ``reshuffle_each_iteration=True`` (the default)
gives a different order on each iteration (each epoch), ``False`` repeats the first order.
"""
import logging

import numpy as np

from .. import backend as B
from .. import dtypes, string_tensors
from ..nest import flatten, map_structure, pack_sequence_as
from ..ops.convert import convert_to_tensor
from ..ops.registry import InvalidArgumentError, OpError
from ..ragged_tensor import RaggedTensor
from ..tensor import Tensor, TensorShape  # noqa: F401
from ..tensor_spec import TensorSpec
from . import composite
from .binding import bind_now

__all__ = ["Dataset", "TensorSpec", "AUTOTUNE", "INFINITE_CARDINALITY", "UNKNOWN_CARDINALITY"]

AUTOTUNE = -1
INFINITE_CARDINALITY = -1
UNKNOWN_CARDINALITY = -2


def _structure(value):
    """Tuples and dicts are structure; anything else (lists included, as in TF) one tensor.
    A dataset (a ``window``, a ``map`` result) stays a dataset."""
    if isinstance(value, Dataset):
        return value
    if isinstance(value, dict):
        return {k: _structure(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return type(value)(*[_structure(v) for v in value]) if hasattr(value, "_fields") \
            else tuple(_structure(v) for v in value)
    return _as_tensor(value)


def _as_tensor(value):
    if isinstance(value, Tensor):
        return value
    if isinstance(value, composite.COMPOSITES):
        return value
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, Tensor) for v in value):
        return Tensor(B.xp.stack([v._value for v in value]))
    return convert_to_tensor(value)


def _host(t):
    value = B.to_numpy(t._value)
    return value[()] if value.ndim == 0 else value  # a numpy scalar, as TF gives


def _spec(t, batch_dim_none=False):
    if isinstance(t, Dataset):
        from .transforms import DatasetSpec
        return DatasetSpec(t.element_spec)
    if not isinstance(t, Tensor):
        return composite.spec_of(t)
    shape = tuple(t._value.shape)
    if batch_dim_none and shape:
        shape = (None,) + shape[1:]
    return TensorSpec(shape, t.dtype)


def _add_counts(a, b):
    if INFINITE_CARDINALITY in (a, b):
        return INFINITE_CARDINALITY
    if UNKNOWN_CARDINALITY in (a, b):
        return UNKNOWN_CARDINALITY
    return a + b


class Dataset:
    """A re-iterable sequence of elements; build one with ``from_tensor_slices``,
    ``from_tensors``, ``range`` or ``from_generator`` and chain transformations."""

    # True where elements may hold the dense rows of a ragged tensor, which ``batch`` must
    # join as a RaggedTensor (their spec says so; see composite.py)
    _ragged_rows = False

    # --- what subclasses provide --------------------------------------------------------------
    def _iterate(self):
        raise NotImplementedError

    def _cardinality(self):
        return UNKNOWN_CARDINALITY

    # --- sources ---------------------------------------------------------------------------------
    @staticmethod
    def from_tensor_slices(tensors, name=None):
        """One element per row (first dimension) of every tensor in ``tensors`` (a tensor, a
        tuple or a dict of them; a list counts as one tensor, as in TF; SparseTensors and
        RaggedTensors give their rows)."""
        structure = _structure(tensors)
        if any(isinstance(leaf, composite.COMPOSITES) for leaf in flatten(structure)):
            from .batching_more import CompositeSlices
            return CompositeSlices(structure)
        return _Slices(structure)

    @staticmethod
    def from_tensors(tensors, name=None):
        """A dataset of exactly one element, ``tensors``."""
        element = _structure(tensors)
        dataset = _Elements([element])
        dataset._ragged_rows = any(isinstance(leaf, RaggedTensor) for leaf in flatten(element))
        return dataset

    @staticmethod
    def range(*args, output_type=dtypes.int64, name=None):
        """``range(stop)``, ``range(start, stop[, step])`` as int64 scalars."""
        if not 1 <= len(args) <= 3:
            raise TypeError(f"Dataset.range takes 1 to 3 arguments, got {len(args)}")
        if len(args) == 3 and int(args[2]) == 0:
            raise InvalidArgumentError("Dataset.range: step size cannot be 0")
        return _Range(range(*[int(a) for a in args]), dtypes.as_dtype(output_type))

    @staticmethod
    def from_generator(generator, output_types=None, output_shapes=None, args=None,
                       output_signature=None, name=None):
        """Elements from ``generator(*args)``, called anew on each iteration."""
        if not callable(generator):
            raise TypeError("Dataset.from_generator: `generator` must be callable (a "
                            "function returning an iterator), got "
                            f"{type(generator).__name__}")
        from .generator import _Generator, signature_of
        if output_signature is None and output_types is not None:
            output_signature = signature_of(output_types, output_shapes)
        return _Generator(generator, tuple(args or ()), output_signature)

    @staticmethod
    def zip(*datasets, name=None):
        """Elements of several datasets side by side; ends with the shortest. Pass a tuple or
        a dict of datasets (or several datasets)."""
        if len(datasets) == 1 and isinstance(datasets[0], (tuple, dict)):
            datasets = datasets[0]
        return _Zip(datasets)

    # --- transformations -----------------------------------------------------------------------
    def map(self, map_func, num_parallel_calls=None, deterministic=None, name=None):
        """``map_func(*element)`` for tuple elements, ``map_func(element)`` otherwise; the
        Python values it reads are those of this call, as when TF traces it here."""
        return _Map(self, bind_now(map_func))

    def filter(self, predicate, name=None):
        """Only the elements for which ``predicate`` (called like ``map_func``) is true."""
        return _Filter(self, bind_now(predicate))

    def batch(self, batch_size, drop_remainder=False, num_parallel_calls=None,
              deterministic=None, name=None):
        """Consecutive elements stacked along a new first dimension; the last batch is smaller
        unless ``drop_remainder``."""
        batch_size = int(batch_size)
        if batch_size < 1:
            raise ValueError(f"Dataset.batch: batch_size must be positive, got {batch_size}")
        return _Batch(self, batch_size, bool(drop_remainder))

    def unbatch(self, name=None):
        """Split each element along its first dimension (the inverse of ``batch``)."""
        return _Unbatch(self)

    def shuffle(self, buffer_size, seed=None, reshuffle_each_iteration=True, name=None):
        """Randomly shuffle through a buffer of ``buffer_size`` elements (see the module
        docstring for the order and its seeds)."""
        buffer_size = int(buffer_size)
        if buffer_size < 1 and buffer_size != AUTOTUNE:
            raise ValueError(f"Dataset.shuffle: buffer_size must be positive, got "
                             f"{buffer_size}")
        if seed is None:
            from ..ops import random_ops
            seed = int(B.to_numpy(random_ops.uniform((), 0, 2 ** 31 - 1,
                                                     dtype="int64")._value))
        return _Shuffle(self, buffer_size, int(seed), bool(reshuffle_each_iteration))

    def take(self, count, name=None):
        """The first ``count`` elements (all of them for -1)."""
        return _Take(self, int(count))

    def skip(self, count, name=None):
        """All but the first ``count`` elements (none for -1)."""
        return _Skip(self, int(count))

    def repeat(self, count=None, name=None):
        """The dataset ``count`` times over (forever for None or -1)."""
        return _Repeat(self, -1 if count is None else int(count))

    def cache(self, filename="", name=None):
        """Keep the elements in memory after the first complete iteration."""
        if filename:
            raise NotImplementedError("Dataset.cache: only the in-memory cache (filename='') "
                                      "is supported")
        return _Cache(self)

    def prefetch(self, buffer_size, name=None):
        """Accepted for compatibility: elements are produced on demand (no background
        thread), so this returns an equivalent dataset."""
        return _Passthrough(self)

    def concatenate(self, dataset, name=None):
        """This dataset's elements, then ``dataset``'s."""
        return _Concatenate(self, dataset)

    def enumerate(self, start=0, name=None):
        """``(index, element)`` pairs, the index an int64 scalar counting from ``start``."""
        return _Enumerate(self, int(start))

    def ignore_errors(self, log_warning=False, name=None):
        """Drop the elements whose computation raised a ``tf.errors`` error (a failed check, a
        bad value in a ``map`` or ``filter`` function) and go on with the rest."""
        return _IgnoreErrors(self, bool(log_warning))

    def _iterate_ignoring(self, skip):
        """``_iterate``, calling ``skip(error)`` for an element that failed. A transformation
        that computes elements one by one (``map``, ``filter``) drops the failed one and goes
        on; elsewhere the error ends the input, which cannot resume after it."""
        elements = self._iterate()
        while True:
            try:
                element = next(elements)
            except StopIteration:
                return
            except OpError as exc:
                skip(exc)
                return
            yield element

    def apply(self, transformation_func):
        return transformation_func(self)

    # --- inspection ----------------------------------------------------------------------------
    def __iter__(self):
        from .iterator import DatasetIterator
        return DatasetIterator(self)

    def as_numpy_iterator(self):
        """A ``tf.data.NumpyIterator``: the elements with numpy arrays (host copies) in place
        of tensors."""
        from .iterator import NumpyIterator
        return NumpyIterator(self)

    def cardinality(self):
        """The number of elements as an int64 scalar tensor; ``INFINITE_CARDINALITY`` (-1)
        or ``UNKNOWN_CARDINALITY`` (-2) when it is infinite or unknown (after ``filter``)."""
        return convert_to_tensor(np.int64(self._cardinality()))

    def __len__(self):
        n = self._cardinality()
        if n == INFINITE_CARDINALITY:
            raise TypeError("The dataset is infinite.")
        if n == UNKNOWN_CARDINALITY:
            raise TypeError("The dataset length is unknown.")
        return n

    def __bool__(self):
        return True

    @property
    def element_spec(self):
        """The structure of an element with a ``TensorSpec`` per tensor."""
        return self._element_spec()

    def _element_spec(self):
        first = next(iter(self._iterate()), None)
        if first is None:
            raise ValueError("element_spec: the dataset is empty, its element structure "
                             "cannot be inspected")
        return map_structure(_spec, first)

    def __repr__(self):
        try:
            spec = self.element_spec
        except Exception:  # noqa: BLE001 - a repr must not fail
            spec = "?"
        return f"<{type(self).__name__.lstrip('_')}Dataset element_spec={spec}>"


class _Slices(Dataset):
    def __init__(self, structure):
        leaves = list(flatten(structure))
        if not leaves:
            raise ValueError("from_tensor_slices: no tensors given")
        lengths = {int(t._value.shape[0]) if t._value.ndim else None for t in leaves}
        if None in lengths:
            raise ValueError("from_tensor_slices: every tensor needs at least one dimension "
                             f"to slice, got shapes {[tuple(t.shape) for t in leaves]}")
        if len(lengths) != 1:
            raise ValueError(f"from_tensor_slices: all tensors must have the same first "
                             f"dimension, got shapes {[tuple(t.shape) for t in leaves]}")
        self.structure, self.leaves, self.n = structure, leaves, lengths.pop()

    def _iterate(self):
        for i in range(self.n):
            yield pack_sequence_as(self.structure, [Tensor(string_tensors.row(t._value, i)) for t in self.leaves])

    def _cardinality(self):
        return self.n

    def _element_spec(self):
        return pack_sequence_as(self.structure, [TensorSpec(tuple(t.shape)[1:], t.dtype)
                                                 for t in self.leaves])


class _Elements(Dataset):
    def __init__(self, elements):
        self.elements = list(elements)

    def _iterate(self):
        return iter(self.elements)

    def _cardinality(self):
        return len(self.elements)


class _Range(Dataset):
    def __init__(self, values, dtype):
        self.values, self.dtype = values, dtype

    def _iterate(self):
        for v in self.values:
            yield Tensor(B.xp.asarray(v, dtype=self.dtype.np))

    def _cardinality(self):
        return len(self.values)

    def _element_spec(self):
        return TensorSpec((), self.dtype)


class _Zip(Dataset):
    def __init__(self, datasets):
        for d in flatten(datasets):
            if not isinstance(d, Dataset):
                raise TypeError(f"Dataset.zip: expected datasets, got {type(d).__name__}")
        self.datasets = datasets

    @property
    def _ragged_rows(self):
        return any(d._ragged_rows for d in flatten(self.datasets))

    def _iterate(self):
        flat = list(flatten(self.datasets))
        for elements in zip(*[d._iterate() for d in flat]):
            yield pack_sequence_as(self.datasets, list(elements)) if not isinstance(
                self.datasets, dict) else _pack_dict(self.datasets, elements)

    def _cardinality(self):
        counts = [d._cardinality() for d in flatten(self.datasets)]
        finite = [c for c in counts if c >= 0]
        if finite:
            return min(finite) if UNKNOWN_CARDINALITY not in counts else UNKNOWN_CARDINALITY
        return UNKNOWN_CARDINALITY if UNKNOWN_CARDINALITY in counts else INFINITE_CARDINALITY


    def _element_spec(self):
        return map_structure(lambda d: d._element_spec(), self.datasets)


def _pack_dict(datasets, elements):
    keys = sorted(datasets)
    return {k: elements[keys.index(k)] for k in datasets}


class _Unary(Dataset):
    def __init__(self, source):
        self.source = source

    @property
    def _ragged_rows(self):
        return self.source._ragged_rows

    def _cardinality(self):
        return self.source._cardinality()


class _Passthrough(_Unary):
    def _iterate(self):
        return self.source._iterate()

    def _iterate_ignoring(self, skip):
        return self.source._iterate_ignoring(skip)

    def _element_spec(self):
        return self.source._element_spec()


class _IgnoreErrors(_Unary):
    def __init__(self, source, log_warning):
        super().__init__(source)
        self.log_warning = log_warning

    def _iterate(self):
        def skip(exc):
            if self.log_warning:
                logging.getLogger("minitf").warning("Dataset.ignore_errors: ignoring an "
                                                    "error: %s", exc)
        return self.source._iterate_ignoring(skip)

    def _cardinality(self):
        n = self.source._cardinality()
        return INFINITE_CARDINALITY if n == INFINITE_CARDINALITY else UNKNOWN_CARDINALITY

    def _element_spec(self):
        return self.source._element_spec()


def _call(fn, element):
    return fn(*element) if isinstance(element, tuple) and not hasattr(element, "_fields") \
        else fn(element)


def _apply(fn, element):
    result = _call(fn, element)
    if isinstance(result, list):    # TF packs a returned list as a tuple
        result = tuple(result)
    return _structure(result)


class _Map(_Unary):
    def __init__(self, source, fn, spec=None):
        super().__init__(source)
        self.fn = fn
        self._spec = spec   # computed once (see _map_spec); a caller may state it

    def _iterate(self):
        for element in self.source._iterate():
            yield _apply(self.fn, element)

    def _iterate_ignoring(self, skip):
        for element in self.source._iterate_ignoring(skip):
            try:
                out = _apply(self.fn, element)
            except OpError as exc:
                skip(exc)
                continue
            yield out

    def _element_spec(self):
        if self._spec is None:
            from .map_spec import map_spec
            self._spec = map_spec(self.fn, self.source)
        return self._spec


def _dims(spec):
    return None if spec._dims is None else tuple(spec._dims)


def _merge_specs(a, b):
    if not (isinstance(a, TensorSpec) and isinstance(b, TensorSpec)):
        return a._merge(b) if hasattr(a, "_merge") else a
    da, db = _dims(a), _dims(b)
    if da is None or db is None or len(da) != len(db):
        return TensorSpec(None, a.dtype)
    return TensorSpec(tuple(x if x == y else None for x, y in zip(da, db)), a.dtype)


class _Filter(_Unary):
    def __init__(self, source, predicate):
        super().__init__(source)
        self.predicate = predicate

    def _iterate(self):
        for element in self.source._iterate():
            if self._keep(element):
                yield element

    def _iterate_ignoring(self, skip):
        for element in self.source._iterate_ignoring(skip):
            try:
                keep = self._keep(element)
            except OpError as exc:
                skip(exc)
                continue
            if keep:
                yield element

    def _keep(self, element):
        keep = _call(self.predicate, element)
        if isinstance(keep, Tensor):
            if keep._value.shape != ():
                raise ValueError(f"Dataset.filter: the predicate must return a scalar "
                                 f"boolean, got shape {tuple(keep.shape)}")
            keep = bool(B.to_numpy(keep._value))
        return keep

    def _cardinality(self):
        n = self.source._cardinality()
        return INFINITE_CARDINALITY if n == INFINITE_CARDINALITY else UNKNOWN_CARDINALITY

    def _element_spec(self):
        return self.source._element_spec()


def _stack(elements, ragged=()):
    """The elements batched; components in ``ragged`` (flat indices), SparseTensors and
    RaggedTensors are joined by ``composite``."""
    flat = [list(flatten(e)) for e in elements]
    out = []
    for i in range(len(flat[0])):
        column = [f[i] for f in flat]
        if i in ragged or not isinstance(column[0], Tensor):
            out.append(composite.batch_column(column, i, i in ragged))
            continue
        values = [t._value for t in column]
        shapes = {tuple(v.shape) for v in values}
        if len(shapes) != 1:
            raise ValueError(f"Dataset.batch: cannot batch tensors of different shapes "
                             f"{sorted(shapes)} (component {i}); pad or resize them first")
        out.append(Tensor(string_tensors.stack(values)))
    return pack_sequence_as(elements[0], out)


class _Batch(_Unary):
    def __init__(self, source, size, drop_remainder):
        super().__init__(source)
        self.size, self.drop_remainder = size, drop_remainder

    _ragged = None

    def _ragged_columns(self):
        """The flat indices of components typed ragged (computed once)."""
        if self._ragged is None:
            self._ragged = composite.ragged_columns(self.source._element_spec()) \
                if self.source._ragged_rows else ()
        return self._ragged

    def _iterate(self):
        self._ragged_columns()
        buf = []
        for element in self.source._iterate():
            buf.append(element)
            if len(buf) == self.size:
                yield self._combine(buf)
                buf = []
        if buf and not self.drop_remainder:
            yield self._combine(buf)

    def _combine(self, elements):
        ragged = self._ragged
        return _stack(elements, ragged if ragged is not None else self._ragged_columns())

    @property
    def static_batch_size(self):
        """The first dimension every batch has, or None when the last may be shorter."""
        return self.size if self.drop_remainder else None

    def _cardinality(self):
        n = self.source._cardinality()
        if n < 0:
            return n
        return n // self.size if self.drop_remainder else -(-n // self.size)

    def _element_spec(self):
        inner = self.source._element_spec()
        first = None if not self.drop_remainder else self.size
        return map_structure(lambda s: TensorSpec((first,) + tuple(s.shape), s.dtype)
                             if isinstance(s, TensorSpec) else s._batch(first), inner)


class _Unbatch(_Unary):
    def _iterate(self):
        for element in self.source._iterate():
            leaves = list(flatten(element))
            if not all(isinstance(t, Tensor) for t in leaves):
                yield from composite.unbatch_element(element, leaves)
                continue
            if any(t._value.ndim == 0 for t in leaves):
                raise ValueError("Dataset.unbatch: cannot unbatch an input with scalar "
                                 "components")
            sizes = {int(t._value.shape[0]) for t in leaves}
            if len(sizes) != 1:
                raise InvalidArgumentError(f"Dataset.unbatch: the components of an element "
                                           f"must have the same first dimension, got shapes "
                                           f"{[tuple(t.shape) for t in leaves]}")
            for i in range(sizes.pop()):
                yield pack_sequence_as(element, [Tensor(string_tensors.row(t._value, i)) for t in leaves])

    def _cardinality(self):
        n = self.source._cardinality()
        size = getattr(self.source, "static_batch_size", None)
        if n >= 0 and size is not None:
            return n * size
        return INFINITE_CARDINALITY if n == INFINITE_CARDINALITY else UNKNOWN_CARDINALITY


    def _element_spec(self):
        def inner(s):
            if isinstance(s, TensorSpec) and s._dims is not None:
                if not s._dims:
                    raise ValueError("Dataset.unbatch: cannot unbatch an input with scalar "
                                     "components")
                return TensorSpec(s._dims[1:], s.dtype)
            return s._unbatch() if hasattr(s, "_unbatch") else s
        return map_structure(inner, self.source._element_spec())


class _Shuffle(_Unary):
    def __init__(self, source, buffer_size, seed, reshuffle):
        super().__init__(source)
        self.buffer_size, self.seed, self.reshuffle = buffer_size, seed, reshuffle
        self._iterations = 0

    def _iterate(self):
        epoch = self._iterations if self.reshuffle else 0
        self._iterations += 1
        rng = np.random.default_rng([self.seed, epoch])
        size = self.buffer_size if self.buffer_size > 0 else 1 << 62
        buf = []
        it = self.source._iterate()
        for element in it:
            buf.append(element)
            if len(buf) >= size:
                break
        for element in it:
            i = int(rng.integers(len(buf)))
            yield buf[i]
            buf[i] = element
        while buf:
            i = int(rng.integers(len(buf)))
            buf[i], buf[-1] = buf[-1], buf[i]
            yield buf.pop()

    def _element_spec(self):
        return self.source._element_spec()


class _Take(_Unary):
    def __init__(self, source, count):
        super().__init__(source)
        self.count = count

    def _iterate(self):
        if self.count < 0:
            yield from self.source._iterate()
            return
        if self.count == 0:
            return
        for i, element in enumerate(self.source._iterate()):
            yield element
            if i + 1 >= self.count:
                return

    def _cardinality(self):
        n = self.source._cardinality()
        if self.count < 0:
            return n
        if n == INFINITE_CARDINALITY:
            return self.count
        if n == UNKNOWN_CARDINALITY:
            return UNKNOWN_CARDINALITY
        return min(n, self.count)

    def _element_spec(self):
        return self.source._element_spec()


class _Skip(_Unary):
    def __init__(self, source, count):
        super().__init__(source)
        self.count = count

    def _iterate(self):
        if self.count < 0:
            return
        for i, element in enumerate(self.source._iterate()):
            if i >= self.count:
                yield element

    def _cardinality(self):
        n = self.source._cardinality()
        if self.count < 0:
            return 0
        return max(0, n - self.count) if n >= 0 else n

    def _element_spec(self):
        return self.source._element_spec()


class _Repeat(_Unary):
    def __init__(self, source, count):
        super().__init__(source)
        self.count = count

    def _iterate(self):
        done = 0
        while self.count < 0 or done < self.count:
            empty = True
            for element in self.source._iterate():
                empty = False
                yield element
            done += 1
            if empty:
                return

    def _cardinality(self):
        n = self.source._cardinality()
        if self.count == 0 or n == 0:
            return 0
        if self.count < 0:
            return INFINITE_CARDINALITY if n != UNKNOWN_CARDINALITY else UNKNOWN_CARDINALITY
        return n * self.count if n >= 0 else n

    def _element_spec(self):
        return self.source._element_spec()


class _Cache(_Unary):
    def __init__(self, source):
        super().__init__(source)
        self._elements = None

    def _iterate(self):
        if self._elements is not None:
            yield from self._elements
            return
        elements = []
        for element in self.source._iterate():
            elements.append(element)
            yield element
        self._elements = elements  # only a complete pass is kept

    def _element_spec(self):
        return self.source._element_spec()


class _Concatenate(Dataset):
    def __init__(self, first, second):
        self.first, self.second = first, second

    def _iterate(self):
        yield from self.first._iterate()
        yield from self.second._iterate()

    def _cardinality(self):
        return _add_counts(self.first._cardinality(), self.second._cardinality())

    @property
    def _ragged_rows(self):
        return self.first._ragged_rows or self.second._ragged_rows

    def _element_spec(self):
        second = list(flatten(self.second._element_spec()))
        return pack_sequence_as(self.first._element_spec(), [
            _merge_specs(a, b) for a, b in zip(flatten(self.first._element_spec()), second)])


class _Enumerate(_Unary):
    def __init__(self, source, start):
        super().__init__(source)
        self.start = start

    def _iterate(self):
        for i, element in enumerate(self.source._iterate(), self.start):
            yield Tensor(B.xp.asarray(i, dtype=B.xp.int64)), element

    def _element_spec(self):
        return TensorSpec((), dtypes.int64), self.source._element_spec()


from . import transforms  # noqa: E402,F401 - adds reduce, scan, window, ... to Dataset
