"""``TensorSpec`` (TF's description of a tensor: shape with unknown dimensions, dtype) and the
matching of call arguments against a ``minitf.function``'s ``input_signature``.

Trace keys: a call's arguments are described by a tuple of parts, one per leaf of
``[args, kwargs]``: ``("t", shape, dtype)`` for tensors (a shape may hold None dimensions, or be
None for an unknown rank), ``("var", id)`` for variables, ``("py", type, value)`` for hashable
Python values and ``("obj", id)`` for the rest. ``key_matches`` and ``generalize`` implement TF's
subtyping of these descriptions (a fixed dimension is a subtype of an unknown one).
"""
import inspect

from . import dtypes
from .nest import flatten
from .ops.registry import InvalidArgumentError
from .tensor import Tensor, TensorShape, Variable


class InputSignatureError(InvalidArgumentError, TypeError):
    """Arguments that do not match a function's ``input_signature`` (TF raises TypeError or
    ValueError depending on the version; this is both)."""


class TensorSpec:
    """Describes a tensor for ``minitf.function(input_signature=...)``.

    >>> minitf.TensorSpec(shape=[None, 3], dtype=minitf.float32)
    TensorSpec(shape=(None, 3), dtype=tf.float32, name=None)

    A None dimension matches any size; ``shape=None`` matches any rank.
    """

    def __init__(self, shape, dtype=dtypes.float32, name=None):
        self._dims = None if shape is None else tuple(None if d is None else int(d)
                                                      for d in shape)
        self.dtype = dtypes.as_dtype(dtype)
        self.name = name

    @classmethod
    def from_tensor(cls, tensor, name=None):
        return cls(tensor.shape, tensor.dtype, name)

    @property
    def shape(self):
        """The shape as a ``TensorShape`` (None dimensions unknown); None for an unknown rank."""
        return None if self._dims is None else TensorShape(self._dims)

    def is_compatible_with(self, other):
        """True when ``other`` (a tensor, array or TensorSpec) fits this spec."""
        if isinstance(other, TensorSpec):
            dims, dtype = other._dims, other.dtype
        else:
            dims, dtype = tuple(other.shape), dtypes.as_dtype(other.dtype)
        return dtype == self.dtype and shape_matches(dims, self._dims)

    def key_part(self):
        return ("t", self._dims, self.dtype.np)

    def __eq__(self, other):
        return (isinstance(other, TensorSpec) and self._dims == other._dims
                and self.dtype == other.dtype and self.name == other.name)

    def __hash__(self):
        return hash((self._dims, self.dtype.name, self.name))

    def __repr__(self):
        shape = "None" if self._dims is None else tuple.__repr__(self._dims)
        return f"TensorSpec(shape={shape}, dtype={self.dtype!r}, name={self.name!r})"


def shape_matches(dims, general):
    """Whether a shape ``dims`` is a subtype of ``general`` (None dims/rank match anything)."""
    if general is None:
        return True
    if dims is None or len(dims) != len(general):
        return False
    return all(g is None or d == g for d, g in zip(dims, general))


def key_matches(key, general):
    """Whether a call described by ``key`` can use a trace made for ``general``."""
    if len(key) != len(general):
        return False
    for part, other in zip(key, general):
        if part == other:
            continue
        if not (part[0] == other[0] == "t" and part[2] == other[2]
                and shape_matches(part[1], other[1])):
            return False
    return True


def generalize(key, other):
    """The most specific key both ``key`` and ``other`` match, when they differ only in tensor
    dimensions (``reduce_retracing``); else None."""
    if len(key) != len(other):
        return None
    parts = []
    for part, theirs in zip(key, other):
        if part == theirs:
            parts.append(part)
        elif (part[0] == theirs[0] == "t" and part[2] == theirs[2] and part[1] is not None
              and theirs[1] is not None and len(part[1]) == len(theirs[1])):
            parts.append(("t", tuple(d if d == e else None for d, e in zip(part[1], theirs[1])),
                          part[2]))
        else:
            return None
    return tuple(parts)


def signature_key(input_signature):
    return tuple(spec.key_part() for spec in flatten(list(input_signature)))


def conform_to_signature(func, input_signature, args, kwargs, py_signature=None):
    """The positional arguments for ``func`` as ``input_signature`` describes them: Python
    numbers, lists and arrays converted to tensors of the spec's dtype. Raises
    ``InputSignatureError`` for arguments that do not fit. ``py_signature``: ``func``'s
    ``inspect.signature``, when the caller keeps it."""
    from .ops.convert import convert_to_tensor
    name = getattr(func, "__qualname__", None) or repr(func)
    signature = list(input_signature)
    try:
        py_signature = py_signature or inspect.signature(func)
        bound = py_signature.bind(*args, **kwargs)
        params = []
        for param, value in bound.arguments.items():
            kind = py_signature.parameters[param].kind
            if kind is inspect.Parameter.VAR_POSITIONAL:
                params.extend((f"{param}[{i}]", v) for i, v in enumerate(value))
            elif kind is inspect.Parameter.VAR_KEYWORD:
                raise TypeError(f"keyword arguments {sorted(value)} are not in the "
                                f"input_signature")
            else:
                params.append((param, value))
    except (TypeError, ValueError) as exc:
        if kwargs:
            raise InputSignatureError(f"function {name}: {exc}") from None
        params = [(f"argument {i}", a) for i, a in enumerate(args)]
    if len(params) != len(signature):
        raise InputSignatureError(
            f"function {name} takes {len(signature)} argument(s) by its input_signature "
            f"{signature}, got {len(params)}")
    out = []
    for (param, value), spec in zip(params, signature):
        if isinstance(spec, TensorSpec):   # a nested list is one tensor's value here
            specs, values = [spec], [value]
        else:
            specs, values = list(flatten(spec)), list(flatten(value))
        if len(specs) != len(values) or not all(isinstance(s, TensorSpec) for s in specs):
            raise InputSignatureError(f"function {name}: {param}={value!r:.80} does not have "
                                      f"the structure of its input_signature entry {spec}")
        conformed = []
        for leaf, leaf_spec in zip(values, specs):
            if not isinstance(leaf, Tensor):
                try:
                    leaf = convert_to_tensor(leaf, dtype=leaf_spec.dtype)
                except (TypeError, ValueError) as exc:
                    raise InputSignatureError(
                        f"function {name}: {param}={leaf!r:.80} cannot be converted to "
                        f"{leaf_spec} ({exc})") from None
            if not leaf_spec.is_compatible_with(leaf):
                raise InputSignatureError(
                    f"function {name}: {param} has shape {tuple.__repr__(tuple(leaf.shape))} "
                    f"and dtype {leaf.dtype!r}, which does not match its input_signature "
                    f"{leaf_spec}")
            conformed.append(leaf)
        out.append(conformed[0] if not isinstance(spec, (list, tuple, dict))
                   else _pack(spec, conformed))
    return tuple(out)


def _pack(structure, leaves):
    from .nest import pack_sequence_as
    return pack_sequence_as(structure, leaves)


def spec_of(value):
    """A TensorSpec describing a tensor or array argument (variables keep their identity)."""
    if isinstance(value, TensorSpec) or isinstance(value, Variable):
        return value
    return TensorSpec(tuple(value.shape), dtypes.as_dtype(value.dtype))
