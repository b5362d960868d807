"""``keras.ops``: Keras 3's backend-neutral op names, mapped onto minitf's ops.

Each function is the minitf op of the same meaning (``keras.ops.sum(x, axis)`` is
``minitf.reduce_sum(x, axis)``), so gradients and tracing work as for any op. The functions
live by family, as in Keras: ``keras.ops.numpy``, ``math``, ``nn``, ``linalg``, ``core`` (all
also ``keras.ops.<name>``) and ``image`` (only ``keras.ops.image.<name>``); a family's functions
are those of this package's modules named after it (``nn.py``, ``nn_conv.py``...).

    from minitf import keras
    kl = -0.5 * keras.ops.mean(1 + log_var - keras.ops.square(mean) - keras.ops.exp(log_var))

As in Keras 3, every function also takes the KerasTensors of a functional model and then
returns KerasTensors: the call becomes a layer of the model (``layers.op_layers``). Registered
ops (``add``, ``exp``...) do this on their own; the other functions are wrapped below.
"""
import functools as _functools
import sys as _sys
import types as _types

import importlib as _importlib
import pkgutil as _pkgutil

_NOT_SYMBOLIC = ("convert_to_tensor", "convert_to_numpy")


def _symbolic_aware(fn):
    from ..layers.symbolic import KerasTensor

    def has_symbolic(values):
        for v in values:
            if type(v) is KerasTensor or (type(v) in (list, tuple) and has_symbolic(v)):
                return True
        return False

    @_functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if has_symbolic(args) or (kwargs and has_symbolic(kwargs.values())):
            from ..layers.op_layers import apply_symbolic
            return apply_symbolic(wrapper, args, kwargs)
        return fn(*args, **kwargs)
    return wrapper


def _shape_aware(fn):
    from ..layers.symbolic import KerasTensor

    @_functools.wraps(fn)
    def wrapper(x):
        return tuple(x.shape) if type(x) is KerasTensor else fn(x)
    return wrapper


def _dispatching(name, fn):
    if not isinstance(fn, _types.FunctionType) or hasattr(fn, "op") or name in _NOT_SYMBOLIC:
        return fn
    return _shape_aware(fn) if name == "shape" else _symbolic_aware(fn)


_FAMILIES = ("numpy", "math", "nn", "linalg", "core", "image")


def _family(family):
    """The public functions of the family's modules (``nn.py``, ``nn_conv.py``...),
    dispatching on KerasTensors, as a namespace."""
    functions = {}
    for info in sorted(_pkgutil.iter_modules(__path__), key=lambda i: i.name):
        if info.name == family or info.name.startswith(family + "_"):
            module = _importlib.import_module(f"{__name__}.{info.name}")
            functions.update({name: _dispatching(name, value)
                              for name, value in vars(module).items()
                              if not name.startswith("_") and callable(value)
                              and not isinstance(value, type)})
    return _types.SimpleNamespace(**functions)


numpy, math, nn, linalg, core, image = (_family(f) for f in _FAMILIES)
# ``import minitf.keras.ops.nn`` gives the family (``nn.py`` holds only part of it). So the
# modules named after a family are no longer importable for their private helpers once this
# package is loaded: share helpers from the ``<family>_*.py`` modules instead.
for _name in _FAMILIES:
    _sys.modules[f"{__name__}.{_name}"] = globals()[_name]
del _name
for _ns in (numpy, math, nn, linalg, core):   # later families win a shared name (core's cast)
    globals().update(vars(_ns))
del _ns
from . import ops_more as _ops_more  # noqa: E402 - slogdet, vectorize, rearrange
_ops_more.install(_sys.modules[__name__])
