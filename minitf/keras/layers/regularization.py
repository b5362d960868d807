"""The dropout variants of Keras 3: SpatialDropout1D/2D/3D, GaussianDropout and AlphaDropout.

Each draws its noise with the global random ops, so a traced training step draws anew on every
call; at inference (``training`` false or unset) each layer is the identity.
"""
import math

from ...ops import math_ops, nn_ops, random_ops
from .base import Layer

# SELU's constants (Klambauer et al., 2017), which AlphaDropout preserves.
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _check_rate(layer, rate):
    rate = float(rate)
    if not 0 <= rate < 1:
        raise ValueError(f"{type(layer).__name__}: rate must be in [0, 1), got {rate}")
    return rate


def _concrete_noise_shape(inputs, noise_shape):
    shape = tuple(inputs._value.shape)
    if noise_shape is None:
        return shape
    return tuple(shape[i] if s is None else int(s) for i, s in enumerate(noise_shape))


class _SpatialDropout(Layer):
    """Dropout of whole feature maps: one keep/drop draw per (example, channel)."""
    _rank = None        # input rank the layer takes (3, 4 or 5)
    _passthrough_dtype = True

    def __init__(self, rate, data_format=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.rate = _check_rate(self, rate)
        self.seed = seed
        if data_format is None:
            data_format = "channels_last"
        if data_format not in ("channels_last", "channels_first"):
            raise ValueError(f"{type(self).__name__}: data_format must be 'channels_last' or "
                             f"'channels_first', got {data_format!r}")
        self.data_format = data_format

    def build(self, input_shape):
        self._check_rank(len(input_shape))

    def _check_rank(self, ndim):
        if ndim != self._rank:
            raise ValueError(f"{type(self).__name__} {self.name!r}: expected inputs of rank "
                             f"{self._rank}, got rank {ndim}")

    def _noise_shape(self, shape):
        if self.data_format == "channels_first":
            return (shape[0], shape[1]) + (1,) * (self._rank - 2)
        return (shape[0],) + (1,) * (self._rank - 2) + (shape[-1],)

    def call(self, inputs, training=None):
        self._check_rank(len(inputs._value.shape))
        if training and self.rate > 0:
            return nn_ops.dropout(inputs, self.rate,
                                  noise_shape=self._noise_shape(tuple(inputs._value.shape)))
        return inputs

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        config = {**super().get_config(), "rate": self.rate, "seed": self.seed}
        if self._rank > 3:
            config["data_format"] = self.data_format
        return config


class SpatialDropout1D(_SpatialDropout):
    """Dropout of entire 1-D feature maps: inputs ``(batch, steps, channels)``, one draw per
    (example, channel), kept channels scaled by ``1 / (1 - rate)``."""
    _rank = 3

    def __init__(self, rate, seed=None, **kwargs):
        super().__init__(rate, data_format="channels_last", seed=seed, **kwargs)


class SpatialDropout2D(_SpatialDropout):
    """Dropout of entire 2-D feature maps of 4-D inputs (``data_format`` says where the
    channels are): one draw per (example, channel)."""
    _rank = 4


class SpatialDropout3D(_SpatialDropout):
    """Dropout of entire 3-D feature maps of 5-D inputs: one draw per (example, channel)."""
    _rank = 5


class GaussianDropout(Layer):
    """Multiplies the inputs by noise drawn from ``N(1, rate / (1 - rate))`` when training (the
    mean is kept, the variance is that of a dropout of ``rate``)."""
    _passthrough_dtype = True

    def __init__(self, rate, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.rate = _check_rate(self, rate)
        self.seed = seed

    def call(self, inputs, training=None):
        if training and self.rate > 0:
            stddev = math.sqrt(self.rate / (1.0 - self.rate))
            return inputs * random_ops.normal(tuple(inputs._value.shape), mean=1.0,
                                              stddev=stddev, dtype=inputs.dtype)
        return inputs

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "rate": self.rate, "seed": self.seed}


class AlphaDropout(Layer):
    """Dropout that keeps the mean and variance of SELU activations when training.

    Dropped values are set to ``alpha' = -scale * alpha`` (SELU's negative saturation), then
    all values are transformed by ``a * x + b`` with ``a = ((1 - rate) * (1 + rate *
    alpha'^2)) ** -0.5`` and ``b = -a * alpha' * rate``, so inputs of zero mean and unit
    variance keep them.
    """
    _passthrough_dtype = True

    def __init__(self, rate, noise_shape=None, seed=None, **kwargs):
        super().__init__(**kwargs)
        self.rate = _check_rate(self, rate)
        self.noise_shape = None if noise_shape is None else tuple(noise_shape)
        self.seed = seed

    def call(self, inputs, training=None):
        if not (training and self.rate > 0):
            return inputs
        alpha_p = -_SELU_ALPHA * _SELU_SCALE
        keep = math_ops.cast(
            random_ops.uniform(_concrete_noise_shape(inputs, self.noise_shape),
                               dtype=inputs.dtype) >= self.rate, inputs.dtype)
        a = ((1.0 - self.rate) * (1.0 + self.rate * alpha_p ** 2)) ** -0.5
        b = -a * alpha_p * self.rate
        x = inputs * keep + alpha_p * (1.0 - keep)
        return x * a + b

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "rate": self.rate, "noise_shape": self.noise_shape,
                "seed": self.seed}


__all__ = ["SpatialDropout1D", "SpatialDropout2D", "SpatialDropout3D", "GaussianDropout",
           "AlphaDropout"]
