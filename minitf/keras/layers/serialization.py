"""``keras.layers.serialize`` / ``deserialize``: a layer as Keras 3's ``{"module",
"class_name", "config", "registered_name"}`` entry and back (see ``keras/serialization.py``)."""


def serialize(layer):
    """The Keras 3 dict describing ``layer`` (its class and ``get_config()``)."""
    from ..serialization import serialize_keras_object
    return serialize_keras_object(layer)


def deserialize(config, custom_objects=None):
    """The layer ``serialize`` described; ``custom_objects`` maps class names of your own
    layers to their classes. Classes are only looked up by name; no code is imported or run."""
    from ..serialization import deserialize_keras_object
    return deserialize_keras_object(config, custom_objects)


def from_config_with_nested(cls, config, key, custom_objects=None):
    """``cls(nested, **rest)`` for a wrapper's config whose entry ``key`` is the serialized
    layer or cell it wraps (``Bidirectional``'s layer, ``RNN``'s cell)."""
    config = dict(config)
    nested = config.pop(key)
    if isinstance(nested, dict):
        nested = deserialize(nested, custom_objects)
    return cls(nested, **config)
