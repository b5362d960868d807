"""Activation functions by Keras name: ``get("relu")``, ``get(minitf.nn.relu)``, ``get(None)``.

Each is a differentiable composition of minitf ops; Keras' defaults (``leaky_relu`` slope 0.2,
exact ``gelu``, ``softmax`` over the last axis).
"""
from ..ops import math_ops as _m
from ..ops import nn_ops as _nn

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def linear(x):
    return x


def relu(x, negative_slope=0.0, max_value=None, threshold=0.0):
    if negative_slope == 0.0 and max_value is None and threshold == 0.0:
        return _nn.relu(x)
    y = _m.where(x > threshold, x, negative_slope * (x - threshold)) if negative_slope else \
        _m.where(x > threshold, x, _m.zeros_like_public(x))
    return y if max_value is None else _m.minimum(y, max_value)


def relu6(x):
    return _nn.relu6(x)


def leaky_relu(x, negative_slope=0.2):
    return _nn.leaky_relu(x, alpha=negative_slope)


def elu(x, alpha=1.0):
    return _nn.elu(x, alpha=alpha)


def selu(x):
    return _SELU_SCALE * _nn.elu(x, alpha=_SELU_ALPHA)


def gelu(x, approximate=False):
    return _nn.gelu(x, approximate=approximate)


def sigmoid(x):
    return _m.sigmoid(x)


def tanh(x):
    return _m.tanh(x)


def softplus(x):
    return _m.softplus(x)


def softsign(x):
    return _m.softsign(x)


def silu(x):
    return _m.silu(x)


swish = silu


def hard_sigmoid(x):
    return _nn.relu6(x + 3.0) * (1.0 / 6.0)


def hard_silu(x):
    return x * hard_sigmoid(x)


hard_swish = hard_silu


def mish(x):
    return x * _m.tanh(_m.softplus(x))


def exponential(x):
    return _m.exp(x)


def softmax(x, axis=-1):
    return _nn.softmax(x, axis=axis)


def log_softmax(x, axis=-1):
    return _nn.log_softmax(x, axis=axis)


_BY_NAME = {fn.__name__: fn for fn in (
    linear, relu, relu6, leaky_relu, elu, selu, gelu, sigmoid, tanh, softplus, softsign, silu,
    hard_sigmoid, hard_silu, mish, exponential, softmax, log_softmax)}
_BY_NAME.update(swish=silu, hard_swish=hard_silu)


def get(identifier):
    """A callable activation from a name, a callable or None (linear)."""
    if identifier is None:
        return linear
    if isinstance(identifier, str):
        try:
            return _BY_NAME[identifier]
        except KeyError:
            raise ValueError(f"unknown activation {identifier!r}; known: "
                             f"{sorted(_BY_NAME)}") from None
    if isinstance(identifier, dict):
        if identifier.get("class_name") == "function":  # a named function's entry
            from .serialization import deserialize_keras_object
            return deserialize_keras_object(identifier)
        return get(identifier.get("config", {}).get("name", identifier.get("class_name")))
    if callable(identifier):
        return identifier
    raise ValueError(f"cannot interpret {identifier!r} as an activation")


def serialize(activation):
    name = getattr(activation, "__name__", None)
    if _BY_NAME.get(name) is activation:
        return name
    return activation
