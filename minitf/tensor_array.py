"""``minitf.TensorArray``: TF's list of tensors for accumulating values in a loop.

As in TF, ``write`` returns the updated array (use the returned value). Inside a
``minitf.function`` a Python loop over a fixed range unrolls into the trace; an index that is a
traced tensor's value makes that signature run eagerly (see ``EagerFallbackWarning``).
"""
from . import dtypes
from .ops import array_ops
from .ops.convert import convert_to_tensor


class TensorArray:
    """A list of same-dtype tensors: ``write(i, value)``, ``read(i)``, ``stack()``,
    ``unstack(value)``, ``gather(indices)``, ``concat()``, ``size()``."""

    def __init__(self, dtype, size=None, dynamic_size=None, clear_after_read=None,
                 tensor_array_name=None, handle=None, flow=None, infer_shape=True,
                 element_shape=None, colocate_with_first_write_call=True, name=None):
        self.dtype = dtypes.as_dtype(dtype)
        self._items = [None] * (0 if size is None else int(size))
        self._dynamic_size = bool(dynamic_size) or size is None
        self.element_shape = None if element_shape is None else tuple(element_shape)

    def _copy(self, items):
        new = TensorArray.__new__(TensorArray)
        new.dtype, new._dynamic_size, new.element_shape = (self.dtype, self._dynamic_size,
                                                           self.element_shape)
        new._items = items
        return new

    def _index(self, index, writing=False):
        i = int(index)
        n = len(self._items)
        if i < 0 or (i >= n and not (writing and self._dynamic_size)):
            raise IndexError(f"TensorArray: index {i} out of range for size {n}"
                             + ("" if writing else " (reading)"))
        return i

    def write(self, index, value, name=None):
        i = self._index(index, writing=True)
        value = convert_to_tensor(value, dtype=self.dtype)
        if self.element_shape is not None and tuple(value.shape) != self.element_shape:
            raise ValueError(f"TensorArray.write: value of shape {tuple(value.shape)} does not "
                             f"match the element shape {self.element_shape}")
        items = list(self._items) + [None] * max(0, i + 1 - len(self._items))
        items[i] = value
        return self._copy(items)

    def read(self, index, name=None):
        i = self._index(index)
        if self._items[i] is None:
            raise ValueError(f"TensorArray.read: index {i} has not been written")
        return self._items[i]

    def size(self, name=None):
        return convert_to_tensor(len(self._items), dtype="int32")

    def stack(self, name=None):
        missing = [i for i, t in enumerate(self._items) if t is None]
        if missing:
            raise ValueError(f"TensorArray.stack: indices {missing} have not been written")
        if not self._items:
            return array_ops.zeros((0,) + (self.element_shape or ()), dtype=self.dtype)
        return array_ops.stack(self._items)

    def gather(self, indices, name=None):
        return array_ops.stack([self.read(i) for i in indices])

    def concat(self, name=None):
        return array_ops.concat([self.read(i) for i in range(len(self._items))], axis=0)

    def unstack(self, value, name=None):
        value = convert_to_tensor(value, dtype=self.dtype)
        return self._copy(list(array_ops.unstack(value)))

    def scatter(self, indices, value, name=None):
        new = self
        for row, i in enumerate(indices):
            new = new.write(i, value[row])
        return new
