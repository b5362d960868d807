"""``tf.experimental.numpy.random``: NumPy's random functions on minitf's random ops (float64
samples, int64 integers); ``seed`` sets the global seed as ``tf.random.set_seed`` does."""
from . import dtypes as _dtypes
from .experimental_numpy_base import _np_dtype, asarray as _asarray, result_type as _result_type
from .ops import math_ops as _m, random_ops as _random


def _shape(size, name):
    if size is None:
        return []
    if isinstance(size, int):
        return [size]
    try:
        return [int(d) for d in size]
    except TypeError:
        raise TypeError(f"tf.experimental.numpy.random.{name}: size must be None, an int or a "
                        f"sequence of ints, got {size!r}") from None


def seed(s):
    """Set the global random seed."""
    _random.set_seed(int(s))


def rand(*size):
    """Uniform float64 samples in [0, 1) of shape ``size``."""
    return _random.uniform(_shape(size, "rand"), 0.0, 1.0, dtype=_dtypes.float64)


def randn(*args):
    """Standard normal float64 samples of shape ``args``."""
    return _random.normal(_shape(args, "randn"), dtype=_dtypes.float64)


def standard_normal(size=None):
    """Standard normal float64 samples of shape ``size``."""
    return _random.normal(_shape(size, "standard_normal"), dtype=_dtypes.float64)


def random(size=None):
    """Uniform float64 samples in [0, 1) of shape ``size``."""
    return _random.uniform(_shape(size, "random"), 0.0, 1.0, dtype=_dtypes.float64)


def uniform(low=0.0, high=1.0, size=None):
    """Uniform samples in [``low``, ``high``) (float64 unless the bounds are float tensors)."""
    dtype = _result_type(low, high)
    dtype = dtype if dtype.is_floating else _dtypes.float64
    low, high = _asarray(low, dtype), _asarray(high, dtype)
    unit = _random.uniform(_shape(size, "uniform"), 0.0, 1.0, dtype=dtype)
    return low + unit * (high - low)


def randint(low, high=None, size=None, dtype=_dtypes.int64.np.type):
    """Integers in [``low``, ``high``) (in [0, ``low``) without ``high``)."""
    target = _dtypes.as_dtype(_np_dtype(dtype))
    if not target.is_integer:
        raise TypeError(f"tf.experimental.numpy.random.randint: dtype must be an integer type, "
                        f"got {target.name}")
    if high is None:
        low, high = 0, low
    if int(high) <= int(low):
        raise ValueError(f"tf.experimental.numpy.random.randint: low must be less than high, "
                         f"got low={low}, high={high}")
    samples = _random.uniform(_shape(size, "randint"), int(low), int(high), dtype=_dtypes.int64)
    return _m.cast(samples, target)


def poisson(lam=1.0, size=None):
    """Poisson samples with rate ``lam`` (int64)."""
    from .ops import random_more
    return random_more.poisson(_shape(size, "poisson"), lam, dtype=_dtypes.int64)
