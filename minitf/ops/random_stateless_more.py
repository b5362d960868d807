"""More of ``tf.random``: ``Algorithm``, ``create_rng_state``, ``stateless_binomial`` and
``stateless_parameterized_truncated_normal``.

The samplers are stateless ops like those of ``random_more``: a Philox generator keyed by the
seed pair draws on the host, so the values depend only on the seed (and are the same on every
backend), and a ``minitf.function`` replays the op on each call's inputs. The values are not
TF's bits; the distributions are the same.
"""
import enum

import numpy

from .. import backend as B
from .. import dtypes
from ..tensor import Tensor
from .array_ops import _shape_tuple
from .convert import convert_to_tensor
from .random_more import _host_rng, _seed_tensor
from .registry import InvalidArgumentError, apply, defop

__all__ = ["Algorithm", "create_rng_state", "stateless_binomial",
           "stateless_parameterized_truncated_normal"]


class Algorithm(enum.Enum):
    """The random number algorithms of ``tf.random`` (minitf draws every one with Philox)."""
    PHILOX = 1
    THREEFRY = 2
    AUTO_SELECT = 3


_STATE_SIZE = {1: 3, 2: 2, 3: 3}   # int64 words of state per algorithm (AUTO_SELECT: Philox)
_ALG_NAMES = {"philox": 1, "threefry": 2, "auto_select": 3}


def _alg_number(alg):
    if isinstance(alg, Algorithm):
        return alg.value
    if isinstance(alg, str) and alg.lower() in _ALG_NAMES:
        return _ALG_NAMES[alg.lower()]
    if isinstance(alg, (int, numpy.integer)) and not isinstance(alg, bool) and int(alg) in \
            _STATE_SIZE:
        return int(alg)
    raise ValueError(f"create_rng_state: unknown alg {alg!r}; expected a tf.random.Algorithm, "
                     f"'philox', 'threefry', 'auto_select' or 1, 2, 3")


def create_rng_state(seed, alg):
    """The int64 state vector a ``tf.random.Generator`` with algorithm ``alg`` starts from:
    an integer seed cut into 64-bit words, lowest first (3 words for Philox, 2 for ThreeFry);
    an array seed padded with zeros at the front, or cut to its first words."""
    size = _STATE_SIZE[_alg_number(alg)]
    if isinstance(seed, Tensor):
        seed = B.to_numpy(seed._value)
    if isinstance(seed, (int, numpy.integer)) and not isinstance(seed, bool):
        seed, words = int(seed), []
        for _ in range(size):
            words.append(seed & ((1 << 64) - 1))
            seed >>= 64
        state = numpy.asarray(words, numpy.uint64).view(numpy.int64)
    else:
        array = numpy.asarray(seed)
        if array.dtype.kind not in "iu" or array.ndim != 1:
            raise ValueError(f"create_rng_state: seed must be an integer or a vector of "
                             f"integers, got {seed!r:.60}")
        state = array.astype(numpy.int64)
        state = state[:size] if state.size >= size else numpy.concatenate(
            [numpy.zeros(size - state.size, numpy.int64), state])
    return Tensor(B.from_numpy(state))


# --- binomial --------------------------------------------------------------------------------
def _binomial_forward(seed, counts, probs, shape, dtype):
    counts_h = numpy.broadcast_to(B.to_numpy(counts).astype(numpy.float64), shape)
    probs_h = numpy.broadcast_to(B.to_numpy(probs).astype(numpy.float64), shape)
    if (counts_h < 0).any() or numpy.isnan(counts_h).any():
        raise ValueError(f"stateless_binomial: counts must be >= 0, got {counts_h.min()}")
    if ((probs_h < 0) | (probs_h > 1)).any() or numpy.isnan(probs_h).any():
        raise ValueError(f"stateless_binomial: probs must be in [0, 1], got values in "
                         f"[{probs_h.min()}, {probs_h.max()}]")
    values = _host_rng(seed).binomial(numpy.floor(counts_h).astype(numpy.int64), probs_h)
    return B.from_numpy(numpy.asarray(values, dtype=dtype, order="C"))


_SEED = numpy.array([1, 2], dtype=numpy.int64)
_binomial = defop("stateless_random_binomial", _binomial_forward, arity=3,
                  type="StatelessRandomBinomial",
                  samples=lambda: [((_SEED, numpy.array([3.0, 10.0]), numpy.array([0.2, 0.7])),
                                    {"shape": (2, 2), "dtype": numpy.dtype("int32")})])


def stateless_binomial(shape, seed, counts, probs, output_dtype=dtypes.int32, name=None):
    """Binomial(counts, probs) samples of ``shape`` determined by ``seed`` (shape [2]
    integers); ``counts`` and ``probs`` broadcast to ``shape``."""
    where = "stateless_binomial"
    out = dtypes.as_dtype(output_dtype)
    if not (out.is_integer or out.is_floating):
        raise ValueError(f"{where}: output_dtype must be an integer or float type, got "
                         f"{out.name}")
    seed = _seed_tensor(seed, where)
    shape = _shape_tuple(shape)
    probs = probs if isinstance(probs, Tensor) else convert_to_tensor(probs,
                                                                      dtype_hint="float32")
    counts = counts if isinstance(counts, Tensor) else convert_to_tensor(counts,
                                                                         dtype=probs.dtype)
    for arg, value in (("counts", counts), ("probs", probs)):
        try:
            numpy.broadcast_shapes(tuple(value.shape), shape)
        except ValueError:
            raise InvalidArgumentError(f"{where}: {arg} of shape {tuple(value.shape)} does not "
                                       f"broadcast to shape {shape}", op=where) from None
    return apply(_binomial.op, (seed, counts, probs), {"shape": shape, "dtype": out.np})


# --- truncated normal --------------------------------------------------------------------------
def _standard_truncated(rng, low, high):
    """Standard normal samples truncated to [low, high] (float64 arrays of one shape): normal
    rejection for wide intervals around 0, uniform rejection for narrow ones, and Robert's
    exponential rejection for intervals far in a tail (each accepts >= ~13% of draws)."""
    flip = high <= 0                      # a negative tail is the mirror of a positive one
    a = numpy.where(flip, -high, low)
    b = numpy.where(flip, -low, high)
    straddle = a < 0
    width = b - a
    normal = straddle & (width >= 2)
    uniform = ~normal & ((straddle & (width < 2)) | (b * b - a * a <= 4))
    alpha = numpy.where(a > 0, (a + numpy.sqrt(a * a + 4)) / 2, 1.0)
    out = numpy.empty(a.shape)
    todo = numpy.ones(a.shape, bool)
    while todo.any():
        idx = numpy.flatnonzero(todo)
        ai, bi, n = a.flat[idx], b.flat[idx], idx.size
        x = numpy.empty(n)
        ok = numpy.zeros(n, bool)
        u = rng.random(n)
        m = normal.flat[idx]
        x[m] = rng.standard_normal(int(m.sum()))
        ok[m] = (x[m] >= ai[m]) & (x[m] <= bi[m])
        m = uniform.flat[idx]
        x[m] = ai[m] + rng.random(int(m.sum())) * (bi[m] - ai[m])
        peak = numpy.where(ai[m] < 0, 0.0, ai[m])   # where the density is largest
        ok[m] = u[m] <= numpy.exp((peak * peak - x[m] * x[m]) / 2)
        m = ~(normal.flat[idx] | uniform.flat[idx])
        al = alpha.flat[idx][m]
        x[m] = ai[m] + rng.standard_exponential(int(m.sum())) / al
        ok[m] = (u[m] <= numpy.exp(-(x[m] - al) ** 2 / 2)) & (x[m] <= bi[m])
        out.flat[idx[ok]] = x[ok]
        todo.flat[idx[ok]] = False
    return numpy.where(flip, -out, out)


def _truncated_forward(seed, means, stddevs, minvals, maxvals, shape):
    host = [numpy.broadcast_to(B.to_numpy(p).astype(numpy.float64), shape)
            for p in (means, stddevs, minvals, maxvals)]
    mean, std, low, high = host
    if (std <= 0).any() or numpy.isnan(std).any():
        raise ValueError(f"stateless_parameterized_truncated_normal: stddevs must be > 0, got "
                         f"{std.min()}")
    if (~(low < high)).any():
        bad = numpy.argmax(~(low < high))
        raise ValueError(f"stateless_parameterized_truncated_normal: minvals must be less than "
                         f"maxvals, got {low.flat[bad]} and {high.flat[bad]}")
    z = _standard_truncated(_host_rng(seed), (low - mean) / std, (high - mean) / std)
    values = numpy.clip(mean + std * z, low, high)
    return B.from_numpy(numpy.asarray(values, dtype=means.dtype, order="C"))


_truncated = defop("stateless_parameterized_truncated_normal", _truncated_forward, arity=5,
                   type="StatelessParameterizedTruncatedNormal",
                   samples=lambda: [((_SEED, numpy.array([0.0, 1.0]), numpy.array(1.0),
                                      numpy.array(-1.0), numpy.array([1.0, 3.0])),
                                     {"shape": (3, 2)})])


def stateless_parameterized_truncated_normal(shape, seed, means=0.0, stddevs=1.0, minvals=-2.0,
                                             maxvals=2.0, name=None):
    """Normal(means, stddevs) samples of ``shape`` truncated to [minvals, maxvals],
    determined by ``seed``; the parameters broadcast to ``shape`` (float32 unless a parameter
    is a float tensor of another dtype)."""
    where = "stateless_parameterized_truncated_normal"
    seed = _seed_tensor(seed, where)
    shape = _shape_tuple(shape)
    dtype = next((p.dtype for p in (means, stddevs, minvals, maxvals)
                  if isinstance(p, Tensor) and p.dtype.is_floating), dtypes.float32)
    params = []
    for arg, value in (("means", means), ("stddevs", stddevs), ("minvals", minvals),
                       ("maxvals", maxvals)):
        t = convert_to_tensor(value, dtype=dtype)
        try:
            numpy.broadcast_shapes(tuple(t.shape), shape)
        except ValueError:
            raise InvalidArgumentError(f"{where}: {arg} of shape {tuple(t.shape)} does not "
                                       f"broadcast to shape {shape}", op=where) from None
        params.append(t)
    return apply(_truncated.op, (seed, *params), {"shape": shape})


def install(tf):
    """Set these functions on ``tf.random`` (idempotent)."""
    for name in __all__:
        setattr(tf.random, name, globals()[name])
