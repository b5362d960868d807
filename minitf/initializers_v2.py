"""TF 2's top-level initializers (``tf.zeros_initializer``, ``tf.ones_initializer``,
``tf.constant_initializer``, ``tf.random_normal_initializer``,
``tf.random_uniform_initializer``): classes called as ``init(shape, dtype=tf.float32)`` that
return a Tensor, with ``get_config``/``from_config``.

They differ from the Keras initializers of the same names in their dtype rules: ``Constant``
takes the value's own dtype when none is given, ``RandomUniform`` also draws integers, and
the draws share the Keras generators (seeded: the same values on every call).
"""
import math

import numpy

from . import backend as B
from . import dtypes
from .keras import initializers as _keras
from .ops.convert import convert_to_tensor
from .tensor import Tensor, TensorShape


def _shape(shape):
    if isinstance(shape, TensorShape):
        shape = shape.as_list()
    if isinstance(shape, Tensor):
        shape = B.to_numpy(shape._value).tolist()
    return tuple(int(d) for d in shape)


def _checked_dtype(cls, dtype, allowed, expected):
    d = dtypes.as_dtype(dtype)
    if not allowed(d):
        raise ValueError(f"{cls}: argument `dtype` is expected to be {expected}. Received: "
                         f"{d.name}")
    return d


def _numeric_or_bool(d):
    return d.is_floating or d.is_integer or d.is_bool


class Initializer(_keras.Initializer):
    """Base class of TF 2's initializers: ``__call__(shape, dtype=None, **kwargs)``."""

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config.pop("dtype", None)
        return cls(**config)


class Zeros(Initializer):
    """``tf.zeros_initializer``: tensors of zeros (numeric or bool dtypes, float32 default)."""

    def __call__(self, shape, dtype=dtypes.float32, **kwargs):
        d = _checked_dtype("zeros_initializer", dtype, _numeric_or_bool, "numeric or boolean")
        return Tensor(B.xp.zeros(_shape(shape), dtype=d.np))


class Ones(Initializer):
    """``tf.ones_initializer``: tensors of ones (numeric or bool dtypes, float32 default)."""

    def __call__(self, shape, dtype=dtypes.float32, **kwargs):
        d = _checked_dtype("ones_initializer", dtype, _numeric_or_bool, "numeric or boolean")
        return Tensor(B.xp.ones(_shape(shape), dtype=d.np))


class Constant(Initializer):
    """``tf.constant_initializer(value)``: a scalar ``value`` fills the shape; a list or array
    with as many elements as the shape is reshaped to it. Without ``dtype`` the tensor has the
    value's own dtype (``3`` gives int32, ``3.0`` float32)."""

    def __init__(self, value=0, support_partition=False):
        if not (numpy.isscalar(value) or isinstance(value, (list, tuple, numpy.ndarray))):
            raise TypeError(f"constant_initializer: invalid type for value: "
                            f"{type(value).__name__}. Expected a Python scalar, list or tuple "
                            f"of values, or numpy.ndarray")
        self.value = value
        self.support_partition = support_partition

    def __call__(self, shape, dtype=None, **kwargs):
        shape = _shape(shape)
        value = convert_to_tensor(self.value, dtype=None if dtype is None else
                                  dtypes.as_dtype(dtype))
        size = int(numpy.prod(value.shape, dtype=numpy.int64))
        total = math.prod(shape)
        if size == 1:
            array = B.xp.broadcast_to(value._value.reshape(()), shape)
        elif size == total:
            array = value._value.reshape(shape)
        else:
            raise TypeError(f"constant_initializer: value has {size} elements, but the shape "
                            f"{list(shape)} has {total}")
        return Tensor(B.xp.array(array, copy=True))

    def get_config(self):
        return {"value": self.value}


class RandomNormal(Initializer):
    """``tf.random_normal_initializer``: normal values (floating dtypes only)."""

    def __init__(self, mean=0.0, stddev=0.05, seed=None):
        self.mean, self.stddev, self.seed = mean, stddev, seed

    def __call__(self, shape, dtype=dtypes.float32, **kwargs):
        d = _checked_dtype("random_normal_initializer", dtype, lambda d: d.is_floating,
                           "floating point")
        return _keras._normal(_shape(shape), d, self.mean, self.stddev, self.seed)

    def get_config(self):
        return {"mean": self.mean, "stddev": self.stddev, "seed": self.seed}


class RandomUniform(Initializer):
    """``tf.random_uniform_initializer``: uniform values in ``[minval, maxval)``, floating or
    integer dtypes."""

    def __init__(self, minval=-0.05, maxval=0.05, seed=None):
        self.minval, self.maxval, self.seed = minval, maxval, seed

    def __call__(self, shape, dtype=dtypes.float32, **kwargs):
        d = _checked_dtype("random_uniform_initializer", dtype,
                           lambda d: d.is_floating or d.is_integer, "floating point or integer")
        if d.is_floating:
            return _keras._uniform(_shape(shape), d, self.minval, self.maxval, self.seed)
        lo, hi = int(self.minval), int(self.maxval)
        if hi <= lo:
            raise ValueError(f"random_uniform_initializer: integer draws need minval < maxval, "
                             f"got {self.minval} and {self.maxval}")
        draws = _keras._generator(self.seed).random(size=_shape(shape), dtype=B.xp.float64)
        values = B.xp.minimum(B.xp.floor(draws * (hi - lo)) + lo, hi - 1)
        return Tensor(values.astype(d.np))

    def get_config(self):
        return {"minval": self.minval, "maxval": self.maxval, "seed": self.seed}


def install(tf):
    """Set the initializer names on ``tf``."""
    tf.zeros_initializer = Zeros
    tf.ones_initializer = Ones
    tf.constant_initializer = Constant
    tf.random_normal_initializer = RandomNormal
    tf.random_uniform_initializer = RandomUniform


__all__ = ["Initializer", "Zeros", "Ones", "Constant", "RandomNormal", "RandomUniform"]
