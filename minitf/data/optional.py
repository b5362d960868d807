"""``tf.experimental.Optional`` (also ``tf.data.experimental.Optional``), ``tf.OptionalSpec``
and ``tf.data.IteratorSpec``.

An Optional holds one value (a nest of tensors) or none::

    opt = iterator.get_next_as_optional()
    if opt.has_value():
        x = opt.get_value()
"""
from .. import backend as B
from .. import dtypes
from ..nest import flatten, map_structure
from ..ops.registry import InvalidArgumentError
from ..tensor import Tensor

__all__ = ["Optional", "OptionalSpec", "IteratorSpec"]


def _structure(value):
    from .dataset import _structure as structure
    return structure(value)


def _spec_of(value):
    from .dataset import _spec
    return map_structure(_spec, value)


class OptionalSpec:
    """The type of an Optional: the ``element_spec`` of its value."""

    def __init__(self, element_spec):
        self.element_spec = element_spec

    @classmethod
    def from_value(cls, value):
        return cls(value.element_spec)

    def __eq__(self, other):
        return isinstance(other, OptionalSpec) and self.element_spec == other.element_spec

    def __hash__(self):
        return hash(("OptionalSpec", repr(self.element_spec)))

    def __repr__(self):
        return f"OptionalSpec({self.element_spec!r})"


class Optional:
    """A value that may be missing. Make one with ``Optional.from_value(value)`` or
    ``Optional.empty(element_spec)`` (or ``iterator.get_next_as_optional()``)."""

    def __init__(self, value, has_value, element_spec):
        self._value, self._has_value, self._element_spec = value, has_value, element_spec

    @staticmethod
    def from_value(value):
        """An Optional holding ``value`` (a tensor or a nest of them)."""
        value = _structure(value)
        return Optional(value, True, _spec_of(value))

    @staticmethod
    def empty(element_spec):
        """An Optional without a value, of type ``element_spec``."""
        return Optional(None, False, element_spec)

    def has_value(self, name=None):
        """A boolean scalar tensor: whether there is a value."""
        return Tensor(B.xp.asarray(self._has_value, dtype=dtypes.bool.np))

    def get_value(self, name=None):
        """The value; InvalidArgumentError when there is none."""
        if not self._has_value:
            raise InvalidArgumentError("Optional.get_value: the given optional does not have a "
                                       "value (check has_value() first)")
        return self._value

    @property
    def element_spec(self):
        """The structure of the value, with a spec per component."""
        return self._element_spec

    @property
    def _type_spec(self):
        return OptionalSpec(self._element_spec)

    def __repr__(self):
        if not self._has_value:
            return f"<Optional (empty) element_spec={self._element_spec!r}>"
        return f"<Optional value={self._value!r}>"


class IteratorSpec:
    """The type of a ``tf.data.Iterator``: the ``element_spec`` of its elements."""

    def __init__(self, element_spec):
        self.element_spec = element_spec

    @classmethod
    def from_value(cls, value):
        return cls(value.element_spec)

    @property
    def value_type(self):
        from .iterator import Iterator
        return Iterator

    def is_compatible_with(self, other):
        spec = other.element_spec if hasattr(other, "element_spec") else other
        return list(flatten(spec)) == list(flatten(self.element_spec))

    def __eq__(self, other):
        return isinstance(other, IteratorSpec) and self.element_spec == other.element_spec

    def __hash__(self):
        return hash(("IteratorSpec", repr(self.element_spec)))

    def __repr__(self):
        return f"IteratorSpec({self.element_spec!r},)"
