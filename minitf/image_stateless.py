"""``tf.image.stateless_random_*``: augmentations whose randomness is fixed by a seed pair.

The seed is a shape-[2] integer tensor (or a pair of Python ints), as for
``tf.random.stateless_uniform``, whose draws these functions use: the same seed gives the same
result on every call and in every traced function, different seeds give independent draws.
The draws follow TF's recipe (one scalar per image-wide adjustment, one value per image of a
batch for flips, an int32 offset per dimension for crops), though not TF's exact numbers.
"""
import numpy

from . import backend as B
from .image_color import adjust_hue, adjust_saturation, check_factor_range, check_hue_delta
from .image_ops import _through_float, flip_left_right, flip_up_down
from .ops import array_ops, math_ops, reduce_ops
from .ops.convert import convert_to_tensor
from .ops.random_more import _seed_tensor, stateless_uniform
from .ops.registry import InvalidArgumentError
from .tensor import Tensor

__all__ = ["stateless_random_brightness", "stateless_random_contrast", "stateless_random_crop",
           "stateless_random_flip_left_right", "stateless_random_flip_up_down",
           "stateless_random_hue", "stateless_random_saturation"]

_INT32_MAX = 2 ** 31 - 1


def _seed(seed, what):
    return _seed_tensor(seed, f"tf.image.{what}")


def _scalar(seed, low, high, what):
    """One float32 draw from ``[low, high)`` fixed by ``seed``."""
    return stateless_uniform((), _seed(seed, what), minval=low, maxval=high)


def stateless_random_brightness(image, max_delta, seed):
    """``adjust_brightness`` by a delta drawn from ``[-max_delta, max_delta)``."""
    if max_delta < 0:
        raise ValueError(f"tf.image.stateless_random_brightness: max_delta must be "
                         f"non-negative, got {max_delta}")
    delta = _scalar(seed, -max_delta, max_delta, "stateless_random_brightness")
    return _through_float(image, "stateless_random_brightness",
                          lambda x: x + math_ops.cast(delta, x.dtype))


def stateless_random_contrast(image, lower, upper, seed):
    """``adjust_contrast`` by a factor drawn from ``[lower, upper)``."""
    check_factor_range(lower, upper, "stateless_random_contrast")
    factor = _scalar(seed, lower, upper, "stateless_random_contrast")

    def contrast(x):
        mean = reduce_ops.reduce_mean(x, axis=[-3, -2], keepdims=True)
        return (x - mean) * math_ops.cast(factor, x.dtype) + mean
    return _through_float(image, "stateless_random_contrast", contrast)


def stateless_random_hue(image, max_delta, seed):
    """``adjust_hue`` by a delta drawn from ``[-max_delta, max_delta)``, ``max_delta`` in
    [0, 0.5]."""
    check_hue_delta(max_delta, "stateless_random_hue")
    return adjust_hue(image, _scalar(seed, -max_delta, max_delta, "stateless_random_hue"))


def stateless_random_saturation(image, lower, upper, seed=None):
    """``adjust_saturation`` by a factor drawn from ``[lower, upper)``."""
    check_factor_range(lower, upper, "stateless_random_saturation")
    return adjust_saturation(image, _scalar(seed, lower, upper, "stateless_random_saturation"))


def _sizes(size, what):
    values = B.to_numpy(size._value) if isinstance(size, Tensor) else numpy.asarray(size)
    if values.ndim != 1 or values.dtype.kind not in "iu":
        raise ValueError(f"tf.image.{what}: size must be a 1-D list of integers, got {size!r}")
    return [int(v) for v in values]


def stateless_random_crop(value, size, seed, name=None):
    """A ``size`` window of ``value`` (one entry per dimension) at offsets drawn uniformly
    from every position where it fits."""
    x = value if isinstance(value, Tensor) else convert_to_tensor(value)
    sizes = _sizes(size, "stateless_random_crop")
    shape = tuple(x.shape)
    if len(sizes) != len(shape):
        raise InvalidArgumentError(f"tf.image.stateless_random_crop: size {sizes} must have "
                                   f"one entry per dimension of the value's shape {shape}",
                                   op="stateless_random_crop")
    if any(s > d or s < 0 for s, d in zip(sizes, shape)):
        raise InvalidArgumentError(f"tf.image.stateless_random_crop: need value.shape >= "
                                   f"size >= 0, got shape {shape} and size {sizes}",
                                   op="stateless_random_crop")
    draws = stateless_uniform((len(shape),), _seed(seed, "stateless_random_crop"), minval=0,
                              maxval=_INT32_MAX, dtype="int32")
    limits = Tensor(B.xp.asarray([d - s + 1 for d, s in zip(shape, sizes)], dtype=numpy.int32))
    offsets = math_ops.floormod(draws, limits)
    for axis, s in enumerate(sizes):
        if s < shape[axis]:   # gathers keep the offsets symbolic inside a traced function
            index = offsets[axis] + Tensor(B.xp.arange(s, dtype=numpy.int32))
            x = array_ops.gather(x, index, axis=axis)
    return x


def _random_flip(image, seed, flip, what):
    """TF's ``_random_flip``: one image flips when its draw is below 1/2; in a batch each
    image flips when its own draw rounds to 1."""
    x = image if isinstance(image, Tensor) else convert_to_tensor(image)
    if x.ndim not in (3, 4):
        raise ValueError(f"tf.image.{what}: 'image' must have either 3 or 4 dimensions "
                         f"((height, width, channels) or a batch of them), got shape "
                         f"{tuple(x.shape)}")
    seed = _seed(seed, what)
    if x.ndim == 3:
        return math_ops.where(math_ops.less(stateless_uniform((), seed), 0.5), flip(x), x)
    draws = stateless_uniform((x.shape[0],), seed)
    flips = math_ops.greater(array_ops.reshape(draws, (x.shape[0], 1, 1, 1)), 0.5)
    return math_ops.where(flips, flip(x), x)


def stateless_random_flip_left_right(image, seed):
    """Mirror the width axis of the image (of each image of a batch) with probability 1/2."""
    return _random_flip(image, seed, flip_left_right, "stateless_random_flip_left_right")


def stateless_random_flip_up_down(image, seed):
    """Mirror the height axis of the image (of each image of a batch) with probability 1/2."""
    return _random_flip(image, seed, flip_up_down, "stateless_random_flip_up_down")


def install(tf):
    """Put these functions in ``tf.image`` (idempotent)."""
    for name in __all__:
        setattr(tf.image, name, globals()[name])
