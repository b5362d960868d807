"""Helpers that write layer constructor arguments into ``get_config`` dicts (Keras' layout)."""
from .. import constraints, initializers, regularizers


def initializer(value):
    return initializers.serialize(value)


def regularizer(value):
    return regularizers.serialize(value)


def constraint(value):
    """None, or ``{"class_name", "config"}`` for a constraint object with ``get_config``."""
    return constraints.serialize(value)


def weights(layer, *names):
    """``<name>_initializer``, ``<name>_regularizer`` and ``<name>_constraint`` for each
    weight name (``"kernel"``, ``"bias"``...) read from the layer's attributes."""
    out = {}
    for name in names:
        out[f"{name}_initializer"] = initializer(getattr(layer, f"{name}_initializer"))
        out[f"{name}_regularizer"] = regularizer(getattr(layer, f"{name}_regularizer"))
        out[f"{name}_constraint"] = constraint(getattr(layer, f"{name}_constraint"))
    return out
