"""The checkpointable position of a ``Dataset`` iterator.

``tf.train.Checkpoint(iterator=iter(ds))`` saves where the iterator stands and ``restore``
puts it back there. The position is the number of elements read so far, kept as a plain int
by the iterator (no per-element cost beyond that count) and exposed to checkpoints as an int64
``Variable`` whose value is read from the iterator when saved; assigning it (what a restore
does) re-reads the dataset from its start and skips that many elements. That is exact for a
deterministic pipeline; an unseeded ``shuffle`` draws a new order when re-read.
"""
import numpy as np

from .. import backend as B
from ..tensor import Tensor, Variable

_STORED_VALUE = Tensor.__dict__["_value"]   # the slot that Tensor.__init__ fills


class IteratorPosition(Variable):
    """An int64 scalar Variable that reads and moves the position of ``iterator``."""
    __slots__ = ("_iterator",)

    def __init__(self, iterator):
        Tensor.__init__(self, B.from_numpy(np.asarray(0, np.int64)))
        self._trainable, self._name, self._constraint = False, "iterator_position", None
        self._iterator = iterator

    @property
    def _value(self):
        return B.from_numpy(np.asarray(self._iterator._consumed, np.int64))

    @_value.setter
    def _value(self, value):
        _STORED_VALUE.__set__(self, value)

    def assign(self, value, read_value=True):
        """Move the iterator to element ``value`` (counted from the dataset's start)."""
        position = int(B.to_numpy(self._check_assignable(value, "assign")._value))
        if position < 0:
            raise ValueError(f"Iterator position: cannot move to {position}; expected a "
                             f"non-negative number of elements read")
        self._iterator._seek(position)
        return self if read_value else None

    def assign_add(self, delta, read_value=True):
        step = int(B.to_numpy(self._check_assignable(delta, "assign_add")._value))
        return self.assign(self._iterator._consumed + step, read_value)

    def assign_sub(self, delta, read_value=True):
        step = int(B.to_numpy(self._check_assignable(delta, "assign_sub")._value))
        return self.assign(self._iterator._consumed - step, read_value)
