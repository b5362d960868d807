"""Random number ops. One global generator (reseeded by ``random.set_seed``); each draw is an op
with no inputs, so a traced function draws fresh numbers on every call, in eager order."""
import numpy

from .. import backend as B
from .. import dtypes
from .registry import apply, defop

_state = {"seed": None, "rng": None}


def set_seed(seed):
    """Seed the global generator: the same seed gives the same sequence of draws."""
    _state["seed"] = int(seed)
    _state["rng"] = _make(int(seed))


def _make(seed):
    if B.xp is numpy:
        return numpy.random.Generator(numpy.random.PCG64(seed))
    return B.xp.random.default_rng(seed)  # pragma: no cover - GPU only


def generator():
    if _state["rng"] is None:
        _state["rng"] = _make(numpy.random.SeedSequence().entropy % (2 ** 63))
    return _state["rng"]


def get_state():
    """The generator state as a dict of plain values (for checkpoints)."""
    rng = generator()
    if B.get_backend() != "cupy":   # numpy's PCG64 (strict wraps the same generator)
        return rng.bit_generator.state
    raise NotImplementedError("saving the cupy generator state is not supported")


def set_state(value):
    generator().bit_generator.state = value


def _normal_forward(shape, mean, stddev, dtype):
    out = generator().standard_normal(size=shape, dtype=numpy.float64 if dtype.itemsize == 2 else dtype)
    return (out * stddev + mean).astype(dtype, copy=False)


def _uniform_forward(shape, minval, maxval, dtype):
    rng = generator()
    if dtype.kind in "iu":
        return rng.integers(minval, maxval, size=shape, dtype=dtype)
    out = rng.random(size=shape, dtype=numpy.float64 if dtype.itemsize == 2 else dtype)
    return (out * (maxval - minval) + minval).astype(dtype, copy=False)


def _bernoulli_forward(shape, keep, dtype):
    # The mask already carries the 1/keep scale, so dropout is a single multiply.
    kept = generator().random(size=shape, dtype=numpy.float32) < keep
    dtype = numpy.dtype(dtype)
    if keep > 0 and dtype in _SCALED_DIRECTLY:
        # kept / keep's bits in dtype without its float64 temporary (a third of the time of
        # a 128x512 float32 mask): 1 / keep rounded once to dtype, times 1 or 0.
        return numpy.multiply(kept, dtype.type(1.0 / keep), dtype=dtype)
    return (kept / keep).astype(dtype)


_SCALED_DIRECTLY = (numpy.dtype(numpy.float32), numpy.dtype(numpy.float64))


_normal = defop("random_normal", _normal_forward, arity=0, type="RandomStandardNormal")
_uniform = defop("random_uniform", _uniform_forward, arity=0, type="RandomUniform")
_bernoulli = defop("bernoulli_mask", _bernoulli_forward, arity=0)


def _shape(shape):
    from .array_ops import _shape_tuple
    return _shape_tuple(shape)


def normal(shape, mean=0.0, stddev=1.0, dtype="float32", seed=None, name=None):
    """Samples from N(mean, stddev^2)."""
    if seed is not None and _state["rng"] is None:
        set_seed(seed)
    return apply(_normal.op, (), {"shape": _shape(shape), "mean": float(mean),
                                  "stddev": float(stddev), "dtype": dtypes.as_dtype(dtype).np})


def uniform(shape, minval=0, maxval=None, dtype="float32", seed=None, name=None):
    """Samples uniform in [minval, maxval) (maxval defaults to 1 for floats)."""
    dt = dtypes.as_dtype(dtype)
    if maxval is None:
        if not dt.is_floating:
            raise ValueError("random.uniform: integer dtypes need maxval")
        maxval = 1.0
    if seed is not None and _state["rng"] is None:
        set_seed(seed)
    return apply(_uniform.op, (), {"shape": _shape(shape), "minval": minval, "maxval": maxval,
                                   "dtype": dt.np})


def _truncated_forward(shape, mean, stddev, dtype):
    xp = B.xp
    rng = generator()
    out = rng.standard_normal(size=shape)
    bad = xp.abs(out) > 2
    while bool(bad.any()):
        out[bad] = rng.standard_normal(size=int(bad.sum()))
        bad = xp.abs(out) > 2
    return (out * stddev + mean).astype(dtype)


_truncated = defop("truncated_normal", _truncated_forward, arity=0, type="TruncatedNormal")


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype="float32", seed=None, name=None):
    """N(mean, stddev^2) resampled beyond two standard deviations."""
    if seed is not None and _state["rng"] is None:
        set_seed(seed)
    return apply(_truncated.op, (), {"shape": _shape(shape), "mean": float(mean),
                                     "stddev": float(stddev), "dtype": dtypes.as_dtype(dtype).np})


def set_batch_shard(rank, size):
    """Make per-example draws (dropout masks) those of a global batch ``size`` times larger, of
    which this process keeps block ``rank``: a data-parallel job then drops exactly the units
    one process would for the same samples. ``set_batch_shard(0, 1)`` turns it off."""
    _state["shard"] = None if int(size) <= 1 else (int(rank), int(size))


def batch_shard():
    """``(rank, size)`` set by ``set_batch_shard``, or None."""
    return _state.get("shard")


def bernoulli_mask(shape, keep_prob, dtype, seed=None):
    """1/keep_prob with probability keep_prob, else 0 (dropout's scaled keep mask)."""
    return apply(_bernoulli.op, (), {"shape": tuple(shape), "keep": float(keep_prob),
                                     "dtype": dtypes.as_dtype(dtype).np})


_shuffle = defop("shuffle", lambda v: v[B.xp.asarray(generator().permutation(v.shape[0]))],
                 type="RandomShuffle")


def shuffle(value, seed=None, name=None):
    """``value`` with its first dimension randomly permuted."""
    from .convert import convert_to_tensor
    if seed is not None and _state["rng"] is None:
        set_seed(seed)
    return apply(_shuffle.op, (convert_to_tensor(value),), {})
