"""Preprocessing layers: Rescaling and Normalization (with ``adapt``)."""
import numpy as np

from ... import backend as B
from ...ops import array_ops, math_ops
from ...tensor import Tensor
from .base import Layer


class Rescaling(Layer):
    """``inputs * scale + offset`` in the compute dtype (uint8 pixels: ``Rescaling(1/255)``)."""
    _cast_integers = True

    def __init__(self, scale, offset=0.0, **kwargs):
        super().__init__(**kwargs)
        self.scale = float(scale)
        self.offset = float(offset)

    def call(self, inputs):
        return inputs * self.scale + self.offset

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        return {**super().get_config(), "scale": self.scale, "offset": self.offset}


def _host_batches(data):
    """Host float64 arrays of ``data``: an array, a Tensor, or an iterable of (x or (x, ...))
    batches such as a ``tf.data`` dataset."""
    if isinstance(data, Tensor):
        return [B.to_numpy(data._value).astype(np.float64)]
    if isinstance(data, np.ndarray) or B.is_array(data):
        return [np.asarray(B.to_numpy(data), dtype=np.float64)]
    if isinstance(data, (list, tuple)) and data and not hasattr(data[0], "__iter__"):
        return [np.asarray(data, dtype=np.float64)]
    if isinstance(data, (list, tuple)) and all(isinstance(d, (int, float, list, tuple))
                                                for d in data):
        return [np.asarray(data, dtype=np.float64)]
    out = []
    for batch in data:
        if isinstance(batch, (tuple, list)) and batch and not isinstance(batch[0], (int, float)):
            batch = batch[0]
        out.extend(_host_batches(batch))
    return out


class Normalization(Layer):
    """``(inputs - mean) / sqrt(variance)`` per feature along ``axis`` (``invert=True``: the
    inverse). ``mean``/``variance`` are given, or learned from data by ``adapt(data)``."""
    _cast_integers = True

    def __init__(self, axis=-1, mean=None, variance=None, invert=False, **kwargs):
        super().__init__(**kwargs)
        self.axis = (axis,) if isinstance(axis, int) else (() if axis is None else tuple(axis))
        if (mean is None) != (variance is None):
            raise ValueError("Normalization: give both mean and variance, or neither")
        self.input_mean = mean
        self.input_variance = variance
        self.invert = bool(invert)
        object.__setattr__(self, "_stats", None)

    def _weight_shape(self, input_shape):
        rank = len(input_shape)
        axes = [a % rank for a in self.axis]
        if any(input_shape[a] is None for a in axes):
            raise ValueError(f"Normalization {self.name!r}: the axes {self.axis} of input shape "
                             f"{tuple(input_shape)} must be known")
        bshape = tuple(input_shape[i] if i in axes else 1 for i in range(rank))
        return tuple(input_shape[a] for a in axes), bshape, axes

    def build(self, input_shape):
        shape, bshape, _ = self._weight_shape(input_shape)
        object.__setattr__(self, "_bshape", bshape[1:])
        if self.input_mean is not None:
            mean = np.broadcast_to(np.asarray(self.input_mean, np.float32), shape)
            var = np.broadcast_to(np.asarray(self.input_variance, np.float32), shape)
        else:
            mean, var = np.zeros(shape, np.float32), np.ones(shape, np.float32)
        self.adapt_mean = self.add_weight(name="mean", shape=shape, initializer="zeros",
                                          trainable=False, autocast=False)
        self.adapt_variance = self.add_weight(name="variance", shape=shape, initializer="ones",
                                              trainable=False, autocast=False)
        self.count = self.add_weight(name="count", shape=(), initializer="zeros",
                                     dtype="int64", trainable=False)
        self.adapt_mean.assign(B.from_numpy(mean.copy()))
        self.adapt_variance.assign(B.from_numpy(var.copy()))

    def adapt(self, data, batch_size=None, steps=None):
        """Set mean and variance to those of ``data`` (an array, or batches of one) along every
        axis except ``axis``."""
        arrays = _host_batches(data)
        if not arrays:
            raise ValueError("Normalization.adapt: no data")
        x = np.concatenate([a.reshape((-1,) + a.shape[1:]) for a in arrays], axis=0)
        if x.ndim == 1:
            x = x[:, None]
        shape, _, axes = self._weight_shape((None,) + x.shape[1:])
        reduce = tuple(i for i in range(x.ndim) if i not in axes)
        mean = x.mean(axis=reduce).reshape(shape)
        var = x.var(axis=reduce).reshape(shape)
        if not self.built:
            self.build((None,) + x.shape[1:])
        self.adapt_mean.assign(B.from_numpy(mean.astype(np.float32)))
        self.adapt_variance.assign(B.from_numpy(var.astype(np.float32)))
        self.count.assign(B.from_numpy(np.asarray(x.shape[0], np.int64)))

    @property
    def mean(self):
        """The mean in the inputs' broadcast shape (``(1, features)``), as Keras 3."""
        return array_ops.reshape(self.adapt_mean, (1,) + self._bshape)

    @property
    def variance(self):
        """The variance in the inputs' broadcast shape (``(1, features)``), as Keras 3."""
        return array_ops.reshape(self.adapt_variance, (1,) + self._bshape)

    def call(self, inputs):
        mean = array_ops.reshape(math_ops.cast(self.adapt_mean, inputs.dtype), self._bshape)
        std = math_ops.maximum(math_ops.sqrt(array_ops.reshape(
            math_ops.cast(self.adapt_variance, inputs.dtype), self._bshape)), 1e-7)
        if self.invert:
            return inputs * std + mean
        return (inputs - mean) / std

    def compute_output_shape(self, input_shape):
        return tuple(input_shape)

    def get_config(self):
        def plain(v):
            return None if v is None else np.asarray(v, np.float64).tolist()
        return {**super().get_config(), "axis": self.axis if len(self.axis) != 1
                else self.axis[0], "mean": plain(self.input_mean),
                "variance": plain(self.input_variance), "invert": self.invert}


__all__ = ["Rescaling", "Normalization"]
