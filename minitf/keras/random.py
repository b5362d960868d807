"""``keras.random``: ``normal``, ``uniform``, ``truncated_normal`` and ``SeedGenerator``.

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
