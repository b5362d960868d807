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
    __slots__ = ("shape", "dtype", "name", "_node", "_keras_mask", "__weakref__")

    def __init__(self, shape, dtype="float32", name=None, node=None):
        self.shape = TensorShape(None if d is None else int(d) for d in shape)
        self.dtype = dtypes.as_dtype(dtype)
        self.name = name
        self._node = node
        self._keras_mask = None   # a bool KerasTensor where the layer that made it masks

    @property
    def ndim(self):
        return len(self.shape)

    def __repr__(self):
        return (f"<KerasTensor shape={tuple.__repr__(self.shape)}, dtype={self.dtype.name}, "
                f"name={self.name}>")

    # numpy defers to the reflected operators (``array * x`` is ``x.__rmul__(array)``)
    __array_ufunc__ = None

    def __array__(self, *args, **kwargs):
        from ...ops.registry import caller_line
        raise TypeError(
            f"a KerasTensor is a symbolic placeholder with no value (at {caller_line()}). "
            f"Apply Keras layers, the KerasTensor's operators (x * 2, x[:, 0], x @ w) or "
            f"keras.ops functions (keras.ops.concatenate, keras.ops.sum, keras.ops.relu...) "
            f"to it; most tf.* functions do not take KerasTensors: wrap such code in a "
            f"keras.layers.Lambda")

    def __bool__(self):
        raise TypeError("a KerasTensor has no value (it is a symbolic functional-model input)")

    def __iter__(self):
        raise TypeError("a KerasTensor cannot be iterated over: index it (x[:, 0]) or use "
                        "keras.ops.unstack")

    def _keras_op(self, fn, args, kwargs):
        """``fn(*args, **kwargs)`` as a layer of the functional model (see ``op_layers``)."""
        from .op_layers import apply_symbolic
        return apply_symbolic(fn, args, kwargs)

    def _operator(name, reflected=False):  # noqa: N805 - builds the methods below
        def method(self, other):
            from ...ops import array_ops, linalg_ops, math_ops
            fn = getattr(math_ops, name, None) or getattr(linalg_ops, name, None) or \
                getattr(array_ops, name)
            return self._keras_op(fn, (other, self) if reflected else (self, other), {})
        method.__name__ = f"__r{name}__" if reflected else f"__{name}__"
        return method

    def _unary(name):  # noqa: N805
        def method(self):
            from ...ops import math_ops
            return self._keras_op(getattr(math_ops, name), (self,), {})
        method.__name__ = f"__{name}__"
        return method

    __add__, __radd__ = _operator("add"), _operator("add", True)
    __sub__, __rsub__ = _operator("subtract"), _operator("subtract", True)
    __mul__, __rmul__ = _operator("multiply"), _operator("multiply", True)
    __truediv__, __rtruediv__ = _operator("divide"), _operator("divide", True)
    __floordiv__, __rfloordiv__ = _operator("floordiv"), _operator("floordiv", True)
    __mod__, __rmod__ = _operator("floormod"), _operator("floormod", True)
    __pow__, __rpow__ = _operator("pow"), _operator("pow", True)
    __matmul__, __rmatmul__ = _operator("matmul"), _operator("matmul", True)
    __and__, __rand__ = _operator("logical_and"), _operator("logical_and", True)
    __or__, __ror__ = _operator("logical_or"), _operator("logical_or", True)
    __xor__, __rxor__ = _operator("logical_xor"), _operator("logical_xor", True)
    # == and != keep their identity meaning (KerasTensors are dict keys and list members);
    # element-wise equality is keras.ops.equal / keras.ops.not_equal
    __lt__, __le__ = _operator("less"), _operator("less_equal")
    __gt__, __ge__ = _operator("greater"), _operator("greater_equal")
    __neg__, __abs__, __invert__ = _unary("negative"), _unary("abs"), _unary("logical_not")
    del _operator, _unary

    def __pos__(self):
        return self

    def __getitem__(self, key):
        from ...ops.array_ops import getitem
        return self._keras_op(getitem, (self, key), {})


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
