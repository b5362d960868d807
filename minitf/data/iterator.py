"""The iterator of a ``Dataset`` (``iter(ds)``), readable inside ``minitf.function``.

TF's custom-loop guides pass an iterator to a traced step and read it there::

    iterator = iter(dataset)
    @tf.function
    def train_step(iterator):
        x, y = next(iterator)
        ...
    for _ in range(steps): train_step(iterator)

Every call must read the next element. A trace records each ``next`` as a *source*: the
element's tensors become inputs of the plan, and every replay first fetches that many elements
from the iterator (see ``function.py``). A replay that cannot use them (an element of another
shape, such as a last partial batch, or a guard on a traced value) pushes them back unread
before anything else happens, and the call traces or replays the plan that fits.

An iterator made inside the traced call (``for x in dataset:`` in the function body) is read in
full on every call in TF; a plan cannot repeat that, so such a function runs eagerly (with an
``EagerFallbackWarning``), and its results stay right.
"""
import collections
import itertools

from .. import backend as B
from .. import errors
from .._state import PauseRecording, state
from ..nest import flatten, map_structure, pack_sequence_as
from ..module import Module
from ..tensor import Tensor


class Iterator:
    """``tf.data.Iterator``: the type of ``iter(dataset)`` (``isinstance`` checks)."""

    @property
    def element_spec(self):
        raise NotImplementedError

    def get_next(self):
        raise NotImplementedError

    def get_next_as_optional(self):
        raise NotImplementedError


class DatasetIterator(Iterator, Module):
    """``iter(dataset)``: yields the dataset's elements once, in order.

    Checkpointable (``tf.train.Checkpoint(iterator=it)``) through its position, the number of
    elements read (see ``iterator_position.py``).
    """

    def __init__(self, dataset):
        from .iterator_position import IteratorPosition
        # Module's attributes set here (no name scope needed for one position variable).
        self._name, self._scope_name = "iterator", "iterator/"
        self._dataset = dataset
        self._elements = iter(dataset._iterate())
        self._pushed_back = collections.deque()
        self._made_in_trace = state.tracer is not None
        self._consumed = 0
        self._position = IteratorPosition(self)

    # Plain attributes: an iterator gets no Modules attached after a restore, and counting
    # elements read must stay cheap.
    __setattr__ = object.__setattr__

    def __iter__(self):
        return self

    def __next__(self):
        tracer = state.tracer
        if tracer is None:
            return self._next_element()
        if self._made_in_trace:
            tracer.run_eagerly("it iterates a dataset made during the call (`for x in "
                               "dataset` in the function); TF reads it in full on every call")
            return self._next_element()
        return self._read_in_trace(tracer)

    def get_next(self):
        """The next element; ``tf.errors.OutOfRangeError`` at the end (as TF)."""
        try:
            return next(self)
        except StopIteration:
            raise errors.OutOfRangeError(None, None, "End of sequence") from None

    def get_next_as_optional(self):
        """The next element as a ``tf.experimental.Optional``, empty at the end."""
        from .optional import Optional
        try:
            return Optional.from_value(next(self))
        except StopIteration:
            return Optional.empty(self._dataset.element_spec)

    @property
    def element_spec(self):
        return self._dataset.element_spec

    @property
    def _type_spec(self):
        from .optional import IteratorSpec
        return IteratorSpec(self.element_spec)

    # --- for function plans ------------------------------------------------------------------
    def _next_element(self):
        element = self._pushed_back.popleft() if self._pushed_back else next(self._elements)
        self._consumed += 1
        return element

    def _push_back(self, elements):
        """Return ``elements`` (read last, in reading order) to the front of the iterator."""
        self._pushed_back.extendleft(reversed(elements))
        self._consumed -= len(elements)

    def _seek(self, position):
        """Read the dataset again from its start and skip ``position`` elements."""
        elements = iter(self._dataset._iterate())
        skipped = sum(1 for _ in itertools.islice(elements, position))
        self._elements = elements
        self._pushed_back.clear()
        self._consumed = skipped

    def _read_in_trace(self, tracer):
        saved = state.tracer
        state.tracer = None     # the pipeline's own ops (map functions) are not the step's
        state.refresh()
        try:
            with PauseRecording():
                element = self._next_element()
        except StopIteration:
            tracer.run_eagerly("it reads an iterator to its end")
            raise
        finally:
            state.tracer = saved
            state.refresh()
        leaves = list(flatten(element))
        if not all(isinstance(leaf, Tensor) for leaf in leaves):
            tracer.run_eagerly("an element read from an iterator holds Python values")
            return element
        fresh = [Tensor(leaf._value) for leaf in leaves]
        tracer.add_source(self, fresh)
        return pack_sequence_as(element, fresh)


def fetch_sources(sources):
    """Read one element per ``(iterator, specs)`` of a plan, as its extra inputs: the arrays
    in order, and the ``(iterator, element)`` pairs read (to push back with ``push_back``).
    ``specs`` are the ``(shape, dtype)`` of each of the traced element's arrays; the
    second value is None, and nothing stays read, when an element differs from them."""
    arrays, read = [], []
    try:
        for iterator, specs in sources:
            element = iterator._next_element()
            read.append((iterator, element))
            values = [leaf._value if isinstance(leaf, Tensor) else None
                      for leaf in flatten(element)]
            if len(values) != len(specs) or any(
                    v is None or (v.shape, v.dtype) != spec for v, spec in zip(values, specs)):
                push_back(read)
                return None, None
            arrays.extend(values)
    except StopIteration:
        push_back(read)
        raise errors.OutOfRangeError(None, None, "End of sequence") from None
    return arrays, read


def push_back(read):
    """Undo ``fetch_sources``: every element goes back to its iterator, in order."""
    by_iterator = {}
    for iterator, element in read:
        by_iterator.setdefault(id(iterator), (iterator, []))[1].append(element)
    for iterator, elements in by_iterator.values():
        iterator._push_back(elements)


def _to_numpy(leaf):
    if isinstance(leaf, Tensor):
        value = B.to_numpy(leaf._value)
        return value[()] if value.ndim == 0 else value   # a numpy scalar, as TF gives
    from .dataset import Dataset
    if isinstance(leaf, Dataset):
        raise TypeError("Dataset.as_numpy_iterator() is not supported for datasets whose "
                        "elements are datasets (such as `window`'s)")
    from .composite import to_numpy
    return to_numpy(leaf)


class NumpyIterator:
    """``tf.data.NumpyIterator`` (``dataset.as_numpy_iterator()``): the elements once, in
    order, with numpy arrays (host copies) in place of tensors."""

    def __init__(self, dataset):
        self._dataset = dataset
        self._elements = iter(dataset._iterate())

    def __iter__(self):
        return self

    def __next__(self):
        return map_structure(_to_numpy, next(self._elements))

    def next(self):
        return self.__next__()

    @property
    def element_spec(self):
        return self._dataset.element_spec
