"""Imports of TF's API namespaces by their dotted names.

TensorFlow code imports its namespaces as modules: ``import tensorflow.compat.v1 as tf``,
``from tensorflow.keras.preprocessing.image import ImageDataGenerator``, ``from
tensorflow.keras.backend import epsilon``, ``from tensorflow.nn import relu``. In minitf many of
these namespaces are attributes (``types.SimpleNamespace`` objects, or modules whose file has
another name, as ``keras.backend``'s ``keras_backend.py``), which ``tf.nn.relu`` reaches but an
``import`` statement does not.

``install()`` appends a finder to ``sys.meta_path`` that answers an import of
``minitf.<path>`` that no file provides with the object found at that attribute path, when it
is a namespace or a module (never a function or class: ``import minitf.nn.relu`` fails as it
does in Python). Both spellings then give the same object. Files always win: the finder runs
after Python's own.
"""
import importlib.abc
import importlib.machinery
import sys
import types

_ROOT = __name__.rpartition(".")[0]
# What importlib writes into the object it loads, put back (a module keeps its own spec) or
# taken away after the import, so that a namespace's attributes stay its API. A namespace keeps
# the ``__spec__`` and ``__path__`` given to it: importing a child of it reads both.
_WRITTEN = ("__name__", "__loader__", "__package__", "__spec__", "__file__", "__cached__")
_KEPT = ("__spec__",)
_MISSING = object()


class _AttributeLoader(importlib.abc.Loader):
    def __init__(self, target):
        self._target = target
        self._before = {}

    def create_module(self, spec):
        attrs = vars(self._target)
        self._before = {name: attrs.get(name, _MISSING) for name in _WRITTEN}
        return self._target

    def exec_module(self, module):
        attrs = vars(module)
        for name, value in self._before.items():
            if value is _MISSING:
                if name not in _KEPT:
                    attrs.pop(name, None)
            else:
                attrs[name] = value


class _NamespaceFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        parent_name, _, child = fullname.rpartition(".")
        if not (parent_name == _ROOT or parent_name.startswith(_ROOT + ".")):
            return None
        parent = sys.modules.get(parent_name)
        found = getattr(parent, child, None) if parent is not None else None
        if not isinstance(found, (types.SimpleNamespace, types.ModuleType)):
            return None
        return importlib.machinery.ModuleSpec(fullname, _AttributeLoader(found), is_package=True)


def install():
    """Add the finder to ``sys.meta_path`` (once)."""
    if not any(isinstance(finder, _NamespaceFinder) for finder in sys.meta_path):
        sys.meta_path.append(_NamespaceFinder())


def namespace(parent, name):
    """The namespace at ``parent.<name>`` (``tf.lookup``, ``tf.experimental``), a new
    ``SimpleNamespace`` set there when it is missing."""
    found = getattr(parent, name, None)
    if found is None:
        found = types.SimpleNamespace()
        setattr(parent, name, found)
    return found
