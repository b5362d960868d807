"""``keras.layers.serialize`` / ``deserialize``: a layer as ``{"module", "class_name",
"config", "registered_name"}`` (Keras 3's layout) and back.

Deserialization only ever looks classes up by name (the built-in layers and models, plus
``custom_objects``) and calls their ``from_config``; it never imports modules or runs code
named by the config.
"""


def _builtin_classes():
    from .. import layers, models
    classes = {name: obj for name, obj in vars(layers).items()
               if isinstance(obj, type) and issubclass(obj, layers.Layer)}
    classes.update({"Model": models.Model, "Functional": models.Functional,
                    "Sequential": models.Sequential})
    return classes


def serialize(layer):
    """The Keras 3 dict describing ``layer`` (its class and ``get_config()``)."""
    from .base import Layer
    if not isinstance(layer, Layer):
        raise TypeError(f"keras.layers.serialize: expected a Layer, got {type(layer).__name__}")
    cls = type(layer)
    builtin = _builtin_classes().get(cls.__name__) is cls
    return {"module": "keras.layers" if builtin else cls.__module__,
            "class_name": cls.__name__, "config": layer.get_config(),
            "registered_name": None if builtin else cls.__name__}


def deserialize(config, custom_objects=None):
    """The layer ``serialize`` described; ``custom_objects`` maps class names of your own
    layers to their classes."""
    if not isinstance(config, dict) or "class_name" not in config:
        raise ValueError(f"keras.layers.deserialize: expected a dict with 'class_name' and "
                         f"'config', got {config!r:.100}")
    custom_objects = custom_objects or {}
    names = [config.get("registered_name"), config["class_name"]]
    cls = next((custom_objects[n] for n in names if n and n in custom_objects), None)
    if cls is None:
        cls = _builtin_classes().get(config["class_name"])
    if cls is None:
        raise ValueError(f"unknown layer class {config['class_name']!r}: pass it in "
                         f"custom_objects={{'{config['class_name']}': TheClass}}")
    inner = dict(config.get("config", {}))
    if "custom_objects" in _from_config_params(cls):
        return cls.from_config(inner, custom_objects=custom_objects)
    return cls.from_config(inner)


def _from_config_params(cls):
    import inspect
    try:
        return inspect.signature(cls.from_config).parameters
    except (TypeError, ValueError):
        return {}
