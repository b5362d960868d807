"""``keras.Variable``: Keras 3's variable class (a ``tf.Variable`` with Keras' constructor).

    keras.Variable(initializer, shape=None, dtype=None, trainable=True, name=None)

``initializer`` is a value (number, list, array, tensor) or an initializer (a name such as
``"zeros"``, an ``Initializer`` or a callable ``(shape, dtype)``), which needs ``shape``. As in
Keras, a value's dtype is kept except that 64-bit floats become ``floatx()`` and 64-bit integers
``int32``. Assigned to a layer attribute it is tracked like any variable (it shows up in
``layer.weights`` and ``trainable_weights``).
"""
import numpy as np

from ..tensor import Tensor
from ..tensor import Variable as _TFVariable

__all__ = ["Variable"]


class Variable(_TFVariable):
    """Keras 3's ``keras.Variable``; see the module docstring."""
    __slots__ = ("_keras_name", "_autocast")

    def __init__(self, initializer, shape=None, dtype=None, trainable=True, autocast=True,
                 aggregation="none", synchronization="auto", name=None, **kwargs):
        from . import initializers
        from .keras_backend import floatx
        if name is not None and (not isinstance(name, str) or "/" in name):
            raise ValueError(f"Argument `name` must be a string and cannot contain character "
                             f"`/`. Received: name={name}")
        if isinstance(initializer, str):
            initializer = initializers.get(initializer)
        if callable(initializer):
            if shape is None:
                raise ValueError("When creating a Variable from an initializer, the `shape` "
                                 f"argument should be specified. Received: "
                                 f"initializer={initializer} and shape={shape}")
            dtype = dtype or floatx()
            value = initializer(tuple(int(d) for d in shape), dtype=dtype)
        else:
            value = initializer
            if dtype is None:
                kind = np.asarray(value._value if isinstance(value, Tensor) else value).dtype
                dtype = {"float64": floatx(), "int64": "int32"}.get(kind.name, kind.name)
        name = name or "variable"
        super().__init__(value, trainable=trainable, name=name, dtype=dtype)
        if shape is not None and tuple(self._value.shape) != tuple(shape):
            raise ValueError(f"Variable {name!r}: the initial value has shape "
                             f"{tuple(self._value.shape)}, expected {tuple(shape)}")
        self._keras_name = name
        self._autocast = bool(autocast)

    @property
    def name(self):
        """The name given at creation (Keras: no ``:0`` suffix, no path)."""
        return self._keras_name

    def __repr__(self):
        value = self.numpy()
        return (f"<Variable path={self.path}, shape={tuple(self._value.shape)}, "
                f"dtype={self.dtype.name}, value={value}>")

    __str__ = __repr__

    def __deepcopy__(self, memo):
        return Variable(self._value.copy(), trainable=self._trainable, name=self._keras_name,
                        dtype=self.dtype.name)
