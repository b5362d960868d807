"""The constructor arguments Keras 3 records for the default ``get_config`` of user layers.

``Layer.__new__`` calls ``record_init_args``: when a subclass defined outside minitf has its own
``__init__`` and every argument it was called with is a plain value (numbers, strings, None,
lists/tuples/dicts of them), they are kept as ``_auto_config``; ``Layer.get_config`` returns
them so such a layer can be rebuilt with ``from_config`` without writing ``get_config``.
"""
import inspect

_PLAIN = (int, float, str, bool, type(None))


def _plain(value):
    if isinstance(value, _PLAIN):
        return True
    if isinstance(value, (list, tuple)):
        return all(_plain(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _plain(v) for k, v in value.items())
    return False


def has_own_init(cls):
    return any("__init__" in c.__dict__ for c in cls.__mro__
               if c.__module__.split(".")[0] != "minitf")


def record_init_args(obj, cls, args, kwargs):
    """Keep the constructor arguments of a user subclass for the default ``get_config``."""
    if not has_own_init(cls):
        return
    signature = inspect.signature(cls.__init__)
    try:
        bound = signature.bind(None, *args, **kwargs)
    except TypeError:
        return
    config = {}
    for name, value in list(bound.arguments.items())[1:]:
        kind = signature.parameters[name].kind
        if kind is inspect.Parameter.VAR_KEYWORD:
            config.update(value)
        elif kind is inspect.Parameter.VAR_POSITIONAL:
            if value:
                return
        else:
            config[name] = value
    if _plain(config):
        object.__setattr__(obj, "_auto_config", config)
