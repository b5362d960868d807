"""``keras.random``: ``normal``, ``uniform``, ``truncated_normal``, ``randint``, ``dropout``,
``shuffle`` and ``SeedGenerator``.

Draws come from minitf's global generator (``minitf.random.set_seed``); a ``SeedGenerator``
passed as ``seed=`` is accepted for Keras compatibility and seeds the global generator once if
nothing else has, so sequences differ from Keras' own generators.
"""
from ..ops import random_ops as _r


class SeedGenerator:
    """Keras' seed state object; here a holder of the initial seed."""

    def __init__(self, seed=None, **kwargs):
        self.seed = None if seed is None else int(seed)


def _seed(seed):
    if isinstance(seed, SeedGenerator):
        return seed.seed
    return seed


def normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    return _r.normal(shape, mean=mean, stddev=stddev, dtype=dtype or "float32", seed=_seed(seed))


def uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None):
    return _r.uniform(shape, minval=minval, maxval=maxval, dtype=dtype or "float32",
                      seed=_seed(seed))


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    return _r.truncated_normal(shape, mean=mean, stddev=stddev, dtype=dtype or "float32",
                               seed=_seed(seed))


def randint(shape, minval, maxval, dtype="int32", seed=None):
    """Integers drawn uniformly from ``[minval, maxval)``."""
    return _r.uniform(shape, minval=minval, maxval=maxval, dtype=dtype, seed=_seed(seed))


def dropout(inputs, rate, noise_shape=None, seed=None):
    """``inputs`` with each entry zeroed with probability ``rate`` and the rest scaled by
    ``1 / (1 - rate)`` (what a custom dropout layer calls in training)."""
    from ..ops.nn_ops import dropout as _dropout
    return _dropout(inputs, rate, noise_shape=noise_shape, seed=_seed(seed))


def shuffle(x, axis=0, seed=None):
    """``x`` with its entries along ``axis`` (only 0, the batch axis) randomly permuted."""
    if axis != 0:
        raise ValueError(f"keras.random.shuffle: only axis=0 is supported, got axis={axis}")
    return _r.shuffle(x, seed=_seed(seed))
