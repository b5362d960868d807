"""``tf.Module``, ``tf.name_scope`` and ``tf.init_scope``.

A Module collects the Variables (and sub-Modules, Keras layers included) reachable from its
attributes, walking into lists, tuples and dicts, as TensorFlow does:

    class Dense(tf.Module):
        def __init__(self, in_features, out_features, name=None):
            super().__init__(name=name)
            self.w = tf.Variable(tf.random.normal([in_features, out_features]), name="w")
            self.b = tf.Variable(tf.zeros([out_features]), name="b")

        @tf.Module.with_name_scope
        def __call__(self, x):
            return tf.nn.relu(x @ self.w + self.b)

``tf.name_scope("block")`` prefixes the names of Variables created inside it
(``block/w:0``); minitf has no graph, so it affects nothing else.
"""
import functools
import re

from . import tensor as _tensor
from ._state import state
from .tensor import Variable


def _snake(name):
    name = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower()


class name_scope:
    """Context manager: Variables created inside get ``<scope>/`` prepended to their names.

    Scopes nest (``outer/inner/``); a name ending in ``/`` is absolute. ``__enter__`` returns
    the full scope string, ending in ``/``.
    """

    def __init__(self, name, *args, **kwargs):
        if not isinstance(name, str) or not name:
            raise ValueError(f"name_scope: name must be a non-empty string, got {name!r}")
        if not re.fullmatch(r"[A-Za-z0-9_.\-/>]+", name):
            raise ValueError(f"name_scope: {name!r} is not a valid scope name (letters, digits, "
                             f"'_', '.', '-', '/')")
        self._name = name
        self._saved = None

    @property
    def name(self):
        return self._name

    def __enter__(self):
        stack = _tensor._NAME_SCOPE
        self._saved = list(stack)
        if self._name.endswith("/"):
            stack[:] = [s for s in self._name.rstrip("/").split("/") if s]
        else:
            stack.append(self._name)
        return "/".join(stack) + "/"

    def __exit__(self, *exc):
        _tensor._NAME_SCOPE[:] = self._saved
        return False


class init_scope:
    """Context manager that lifts code out of any tape and ``minitf.function`` trace, for
    one-time initialisation (creating Variables on the first call of a traced function)."""

    def __enter__(self):
        self._saved = (state.tapes, state.accumulators, state.tracer)
        state.tapes, state.accumulators, state.tracer = [], [], None
        state.refresh()

    def __exit__(self, *exc):
        state.tapes, state.accumulators, state.tracer = self._saved
        state.refresh()
        return False


def _is_layer(value):
    from .keras.layers.base import Layer
    return isinstance(value, Layer)


class Module:
    """Base class of objects that own Variables and sub-Modules (TF's ``tf.Module``)."""

    def __init__(self, name=None):
        if name is None:
            name = _snake(type(self).__name__)
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.\-]*", name):
            raise ValueError(f"tf.Module: {name!r} is not a valid module name (a Python "
                             f"identifier-like name, e.g. 'dense_1')")
        self._name = name
        with name_scope(name) as scope:
            self._scope_name = scope

    def __setattr__(self, name, value):
        object.__setattr__(self, name, value)
        if self.__dict__.get("_pending_restore") is not None and name != "_pending_restore":
            from .checkpoint import restore_on_attach   # values restored before it existed
            restore_on_attach(self, name, value)

    @property
    def name(self):
        return self._name

    @property
    def name_scope(self):
        """A fresh context manager re-entering this module's scope (``with self.name_scope:``)."""
        return name_scope(self._scope_name)

    def _walk(self):
        """(variables, submodules) reachable from the attributes, attributes in sorted order,
        each object once; a Keras layer contributes its own variables and sublayers."""
        variables, modules, seen = [], [], {id(self)}

        def visit(value):
            if isinstance(value, Variable):
                if id(value) not in seen:
                    seen.add(id(value))
                    variables.append(value)
            elif isinstance(value, Module) or _is_layer(value):
                if id(value) in seen:
                    return
                seen.add(id(value))
                modules.append(value)
                if isinstance(value, Module):
                    for key in sorted(vars(value)):
                        visit(vars(value)[key])
                else:
                    for v in value.variables:
                        visit(v)
                    for layer in value.submodules:
                        if id(layer) not in seen:
                            seen.add(id(layer))
                            modules.append(layer)
            elif isinstance(value, dict):
                for key in sorted(value, key=str):
                    visit(value[key])
            elif isinstance(value, (list, tuple)):
                for item in value:
                    visit(item)

        d = vars(self)
        for key in sorted(d):
            if key not in ("_name", "_scope_name", "_pending_restore"):
                visit(d[key])
        return variables, modules

    @property
    def variables(self):
        """Every Variable reachable from this module's attributes (each once)."""
        return tuple(self._walk()[0])

    @property
    def trainable_variables(self):
        return tuple(v for v in self._walk()[0] if v.trainable)

    @property
    def non_trainable_variables(self):
        return tuple(v for v in self._walk()[0] if not v.trainable)

    @property
    def submodules(self):
        """Every Module (and Keras layer) reachable from the attributes, recursively."""
        return tuple(self._walk()[1])

    @classmethod
    def with_name_scope(cls, method):
        """Decorator: run ``method`` inside ``self.name_scope``."""
        @functools.wraps(method)
        def wrapper(self, *args, **kwargs):
            with self.name_scope:
                return method(self, *args, **kwargs)
        return wrapper

    def __repr__(self):   # (a subclass may skip Module.__init__)
        return f"<{type(self).__name__} name={getattr(self, '_name', None)}>"
