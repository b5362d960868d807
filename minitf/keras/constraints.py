"""Weight constraints: ``MaxNorm``, ``MinMaxNorm``, ``NonNeg``, ``UnitNorm`` (Keras 3's formulas).

A constraint maps a weight to its projected value. Passed as ``kernel_constraint=`` /
``bias_constraint=`` (or ``add_weight(constraint=...)``) it is kept on the variable, and the
optimizer applies it right after each update of that variable, inside its host kernel, so a
traced ``minitf.function`` training step applies it on every call too. The built-in constraints
compute on backend arrays (``_array``); any other callable of a tensor works as well.

    layer = Dense(4, kernel_constraint=constraints.MaxNorm(2.0))   # or "max_norm"
"""
from .. import backend as B
from ..ops.convert import convert_to_tensor
from ..tensor import Tensor
from .identifiers import resolve

_EPSILON = 1e-7  # keras.backend.epsilon()


class Constraint:
    """Base class: ``__call__(w)`` returns the constrained weight; ``get_config`` its
    arguments. Built-in subclasses implement ``_array(w)`` on backend arrays."""

    def __call__(self, w):
        if type(self)._array is Constraint._array:
            return w
        return Tensor(self._array(convert_to_tensor(w)._value))

    def _array(self, w):
        return w

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _norms(w, axis):
    axis = tuple(axis) if isinstance(axis, (list, tuple)) else axis
    return B.xp.sqrt(B.xp.sum(B.xp.square(w), axis=axis, keepdims=True))


class MaxNorm(Constraint):
    """Scale each slice along ``axis`` whose L2 norm exceeds ``max_value`` back to it:
    ``w * clip(norms, 0, max_value) / (epsilon + norms)``."""

    def __init__(self, max_value=2, axis=0):
        self.max_value = max_value
        self.axis = axis

    def _array(self, w):
        norms = _norms(w, self.axis)
        desired = B.xp.clip(norms, 0, self.max_value)
        return w * (desired / (_EPSILON + norms))

    def get_config(self):
        return {"max_value": self.max_value, "axis": self.axis}


class NonNeg(Constraint):
    """Zero the negative entries: ``w * (w >= 0)``."""

    def _array(self, w):
        return w * (w >= 0.0).astype(w.dtype)


class UnitNorm(Constraint):
    """Divide each slice along ``axis`` by its L2 norm: ``w / (norms + epsilon)``."""

    def __init__(self, axis=0):
        self.axis = axis

    def _array(self, w):
        return w / (_norms(w, self.axis) + _EPSILON)

    def get_config(self):
        return {"axis": self.axis}


class MinMaxNorm(Constraint):
    """Move each slice's L2 norm into ``[min_value, max_value]`` at ``rate``:
    ``w * (rate * clip(norms, min, max) + (1 - rate) * norms) / (epsilon + norms)``."""

    def __init__(self, min_value=0.0, max_value=1.0, rate=1.0, axis=0):
        self.min_value = min_value
        self.max_value = max_value
        self.rate = rate
        self.axis = axis

    def _array(self, w):
        norms = _norms(w, self.axis)
        desired = (self.rate * B.xp.clip(norms, self.min_value, self.max_value)
                   + (1 - self.rate) * norms)
        return w * (desired / (_EPSILON + norms))

    def get_config(self):
        return {"min_value": self.min_value, "max_value": self.max_value, "rate": self.rate,
                "axis": self.axis}


def apply_constraint(variable, array):
    """``variable.assign(constraint(variable))`` in place on its backend ``array`` (what the
    optimizer's host kernel runs after each update). Built-in constraints compute on the
    array; any other callable gets the Variable, outside any trace or tape."""
    c = variable._constraint
    if hasattr(c, "_array"):
        new = c._array(array)
    else:
        from .._state import PauseRecording
        from .._state import NoTrace
        with NoTrace(), PauseRecording():
            new = convert_to_tensor(c(variable))._value
    if new.shape != array.shape:
        raise ValueError(f"the constraint of {variable.path!r} returned shape "
                         f"{tuple(new.shape)}, expected {tuple(array.shape)}")
    B.xp.copyto(array, new, casting="unsafe")


max_norm, non_neg, unit_norm, min_max_norm = MaxNorm, NonNeg, UnitNorm, MinMaxNorm

_CLASSES = {c.__name__: c for c in (Constraint, MaxNorm, NonNeg, UnitNorm, MinMaxNorm)}
_NAMES = {"max_norm": MaxNorm, "non_neg": NonNeg, "unit_norm": UnitNorm,
          "min_max_norm": MinMaxNorm}


def serialize(constraint):
    """``{"class_name": ..., "config": ...}`` for an object with ``get_config``, or None."""
    if constraint is None:
        return None
    if hasattr(constraint, "get_config"):
        return {"class_name": type(constraint).__name__, "config": constraint.get_config()}
    raise ValueError(f"cannot serialize constraint {constraint!r}: give it a get_config() "
                     f"method (subclass keras.constraints.Constraint)")


def deserialize(config, custom_objects=None):
    """A constraint from ``{"class_name", "config"}`` (Keras 3's entries, with ``module``,
    are read too)."""
    classes = dict(_CLASSES, **_NAMES, **(custom_objects or {}))
    name = config.get("class_name")
    cls = classes.get(name)
    if cls is None:
        raise ValueError(f"unknown constraint {name!r}; known: {sorted(_CLASSES)}")
    return cls.from_config(dict(config.get("config") or {}))


def get(identifier):
    """A constraint from None, a name (``"max_norm"``, ``"NonNeg"``), a config dict, a class
    or a callable."""
    return resolve(identifier, "constraint", Constraint, {**_CLASSES, **_NAMES}, deserialize)


__all__ = ["Constraint", "MaxNorm", "MinMaxNorm", "NonNeg", "UnitNorm", "max_norm",
           "min_max_norm", "non_neg", "unit_norm", "get", "serialize", "deserialize"]
