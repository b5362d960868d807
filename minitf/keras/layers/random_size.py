"""``RandomHeight`` and ``RandomWidth``: while training, resize a batch of images (or one
image) to a random height / width, ``int(size * (1 + f))`` with ``f`` drawn uniformly from
``factor`` (a number ``x`` means ``(-x, x)``), one draw per call as in Keras. At inference the
input passes through unchanged. Inputs are ``(..., height, width, channels)``; the output has
the compute dtype, and its resized dimension is unknown (``None``) in a model's shapes.

    augment = keras.Sequential([keras.layers.RandomHeight(0.2), keras.layers.RandomWidth(0.2)])
"""
import numbers

from ... import image_ops
from ...ops import array_ops, random_ops
from .base import Layer

__all__ = ["RandomHeight", "RandomWidth"]

_INTERPOLATIONS = ("bilinear", "nearest")
# tf.image.resize methods Keras accepts that minitf's resize does not implement.
_UNSUPPORTED = ("bicubic", "area", "lanczos3", "lanczos5", "gaussian", "mitchellcubic")


def _factor_range(factor, layer):
    """``(lower, upper)`` from a number or a pair, checked as Keras checks it."""
    if isinstance(factor, (tuple, list)):
        if len(factor) != 2:
            raise ValueError(f"{layer}: `factor` must be a number or a (lower, upper) pair. "
                             f"Received: factor={factor}")
        lower, upper = factor
    elif isinstance(factor, numbers.Real) and not isinstance(factor, bool):
        lower, upper = -factor, factor
    else:
        raise TypeError(f"{layer}: `factor` must be a number or a (lower, upper) pair. "
                        f"Received: factor={factor!r}")
    lower, upper = float(lower), float(upper)
    if upper < lower:
        raise ValueError(f"{layer}: `factor` argument cannot have an upper bound lesser than "
                         f"the lower bound. Received: factor={factor}")
    if lower < -1.0 or upper < -1.0:
        raise ValueError(f"{layer}: `factor` argument must have values larger than -1. "
                         f"Received: factor={factor}")
    return lower, upper


class _RandomSize(Layer):
    """Shared code: ``_axis`` is the resized axis counted from the end (-3 height, -2
    width)."""
    _axis = None
    _cast_integers = True

    def __init__(self, factor, interpolation="bilinear", seed=None, **kwargs):
        super().__init__(**kwargs)
        name = type(self).__name__
        self.factor = factor
        self._lower, self._upper = _factor_range(factor, name)
        if interpolation in _UNSUPPORTED:
            raise NotImplementedError(f"{name}: interpolation {interpolation!r} is not "
                                      f"supported; use one of {_INTERPOLATIONS}")
        if interpolation not in _INTERPOLATIONS:
            raise ValueError(f"{name}: unknown interpolation {interpolation!r}; expected one "
                             f"of {_INTERPOLATIONS}")
        self.interpolation = interpolation
        self.seed = seed

    def call(self, inputs, training=True):
        if not training:
            return inputs
        if inputs.ndim not in (3, 4):
            raise ValueError(f"{type(self).__name__}: expected images of rank 3 (one image) or "
                             f"4 (a batch), got shape {tuple(inputs.shape)}")
        single = inputs.ndim == 3
        x = array_ops.expand_dims(inputs, 0) if single else inputs
        size = [int(x.shape[1]), int(x.shape[2])]
        scale = random_ops.uniform((), 1.0 + self._lower, 1.0 + self._upper, seed=self.seed)
        index = 0 if self._axis == -3 else 1
        # int() truncates toward zero, as Keras' cast of the scaled size to int32.
        size[index] = int(float(scale) * size[index])
        if size[index] <= 0:
            raise ValueError(f"{type(self).__name__}: the random {self._dim} is {size[index]}; "
                             f"the input {self._dim} {int(x.shape[index + 1])} with factor "
                             f"{self.factor} must scale to at least 1")
        y = image_ops.resize(x, size, method=self.interpolation)
        if y.dtype != inputs.dtype:
            y = array_ops.cast(y, inputs.dtype)
        return y[0] if single else y

    def compute_output_shape(self, input_shape):
        shape = list(input_shape)
        shape[self._axis] = None
        return tuple(shape)

    def get_config(self):
        return {**super().get_config(), "factor": self.factor,
                "interpolation": self.interpolation, "seed": self.seed}


class RandomHeight(_RandomSize):
    """While training, resize images to a random height ``int(height * (1 + f))``, ``f``
    uniform in ``factor`` (a number ``x`` means ``(-x, x)``; bounds above -1)."""
    _axis = -3
    _dim = "height"


class RandomWidth(_RandomSize):
    """While training, resize images to a random width ``int(width * (1 + f))``, ``f``
    uniform in ``factor`` (a number ``x`` means ``(-x, x)``; bounds above -1)."""
    _axis = -2
    _dim = "width"
