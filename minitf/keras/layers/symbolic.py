"""The symbolic side of functional models: ``KerasTensor`` placeholders and the ``Node`` that
records each layer call on them, plus the helpers that walk nests of shapes and specs."""
from ... import dtypes
from ...nest import flatten
from ...tensor import TensorShape


class Node:
    """One symbolic layer call: ``layer(*args, **kwargs)`` with KerasTensors among the args."""
    __slots__ = ("layer", "args", "kwargs", "outputs", "inputs")

    def __init__(self, layer, args, kwargs):
        self.layer = layer
        self.args = args
        self.kwargs = kwargs
        self.inputs = [t for t in flatten(args) if isinstance(t, KerasTensor)]
        self.outputs = None


class KerasTensor:
    """A symbolic placeholder (shape with ``None`` for unknown dims, dtype) in a layer graph.

    Returned by ``keras.Input`` and by layers called on KerasTensors; a functional ``Model``
    replays the recorded layer calls on real tensors.
    """
    __slots__ = ("shape", "dtype", "name", "_node", "__weakref__")

    def __init__(self, shape, dtype="float32", name=None, node=None):
        self.shape = TensorShape(None if d is None else int(d) for d in shape)
        self.dtype = dtypes.as_dtype(dtype)
        self.name = name
        self._node = node

    @property
    def ndim(self):
        return len(self.shape)

    def __repr__(self):
        return (f"<KerasTensor shape={tuple.__repr__(self.shape)}, dtype={self.dtype.name}, "
                f"name={self.name}>")

    def __array__(self, *args, **kwargs):
        raise TypeError("a KerasTensor is a symbolic placeholder with no value: only Keras "
                        "layers can be applied to it (wrap other computations in a Layer)")

    def __bool__(self):
        raise TypeError("a KerasTensor has no value (it is a symbolic functional-model input)")


def _is_symbolic(inputs):
    if isinstance(inputs, KerasTensor):
        return True
    if isinstance(inputs, (list, tuple, dict)):
        return any(isinstance(t, KerasTensor) for t in flatten(inputs))
    return False


def _batchless(shape):
    """``shape`` with the batch dimension unknown, as summaries print it."""
    if shape is None or not len(shape):
        return shape
    return TensorShape((None,) + tuple(shape[1:]))



def _map_leaves(fn, value, is_leaf):
    """Apply ``fn`` to the leaves of a nest whose leaves may themselves be tuples (shapes)."""
    if is_leaf(value):
        return fn(value)
    if isinstance(value, dict):
        return {k: _map_leaves(fn, v, is_leaf) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_map_leaves(fn, v, is_leaf) for v in value)
    return value


def _is_shape(value):
    return isinstance(value, (tuple, list)) and all(
        d is None or isinstance(d, int) for d in value)


def _is_spec(value):
    return (isinstance(value, tuple) and len(value) == 2 and _is_shape(value[0])
            and isinstance(value[1], dtypes.DType))
