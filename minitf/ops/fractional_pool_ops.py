"""Fractional max and average pooling (``tf.nn.fractional_max_pool`` / ``fractional_avg_pool``).

Each spatial axis of length ``n`` is cut into ``floor(n / ratio)`` regions by a pooling
sequence ``0 = a_0 < a_1 < ... < a_m = n`` whose steps are ``floor(n / m)`` or one more (TF's
rules: a random permutation of the steps, or Graham's pseudo-random ``a_i = ceil(alpha (i +
u))``). Region ``i`` spans ``a_i .. a_{i+1} - 1`` (``.. a_{i+1}`` when ``overlapping``).

The regions are gathered from the input (``gather``, every region padded to the longest by
repeating its first element, which never changes a maximum and never takes its gradient) into
windows ``(N, OH, OW, L, M, C)`` that ``window_max`` or a masked mean reduces, so the gradients
are those ops': the max-pool gradient goes to the first maximum of each region in row-major
order, as TF's FractionalMaxPoolGrad; the average-pool gradient is spread evenly over each
region, as FractionalAvgPoolGrad.
"""
import math
from collections import namedtuple

import numpy

from .. import backend as B
from ..tensor import Tensor
from . import array_ops, conv_ops
from .convert import convert_to_tensor
from .reduce_ops import reduce_sum
from .registry import InvalidArgumentError

FractionalMaxPool = namedtuple("FractionalMaxPool",
                               ["output", "row_pooling_sequence", "col_pooling_sequence"])
FractionalAvgPool = namedtuple("FractionalAvgPool",
                               ["output", "row_pooling_sequence", "col_pooling_sequence"])


def _ratios(pooling_ratio, what):
    """TF's forms: a float, or 1, 2 or 4 floats (4: one per NHWC dimension, 1 for N and C)."""
    if isinstance(pooling_ratio, (int, float, numpy.number)):
        values = [float(pooling_ratio)]
    else:
        values = [float(v) for v in pooling_ratio]
    if len(values) == 1:
        values = [1.0, values[0], values[0], 1.0]
    elif len(values) == 2:
        values = [1.0] + values + [1.0]
    elif len(values) != 4:
        raise InvalidArgumentError(f"{what}: pooling_ratio must be a float or a list of 1, 2 or "
                                   f"4 floats, got {pooling_ratio!r}")
    if values[0] != 1.0 or values[3] != 1.0:
        raise InvalidArgumentError(f"{what}: pooling_ratio {values}: only rows and columns can "
                                   f"be pooled (the batch and channel ratios must be 1.0)")
    if min(values) < 1.0:
        raise InvalidArgumentError(f"{what}: pooling_ratio {values}: every ratio must be >= 1.0")
    return values[1], values[2]


def _random_steps(n, m, rng):
    """Steps ``n // m`` with ``n % m`` of them one longer, in random order."""
    steps = numpy.full(m, n // m, dtype=numpy.int64)
    steps[:n % m] += 1
    return steps[rng.permutation(m)]


def _pseudo_random_steps(n, m, rng):
    """Graham's ``a_i = ceil(alpha (i + u))``, ``u`` drawn as TF draws it (bounded so that
    every step stays ``floor(alpha)`` or one more)."""
    alpha = n / m
    k = n // m
    u = rng.random() * min((k + 2) / alpha - 1, (n + 1 - k) / alpha - (m - 1))
    cum = [1] + [int(math.ceil(alpha * (i + u))) for i in range(1, m)] + [n + 1]
    return numpy.diff(numpy.asarray(cum, dtype=numpy.int64))


def pooling_sequence(n, m, pseudo_random, rng):
    """A pooling sequence of ``m + 1`` int64 boundaries from 0 to ``n`` (TF's rules)."""
    steps = (_pseudo_random_steps if pseudo_random else _random_steps)(n, m, rng)
    return numpy.concatenate([[0], numpy.cumsum(steps)]).astype(numpy.int64)


def _regions(sequence, size, overlapping):
    """(index matrix (m, L), mask (m, L)) of the input positions of each region."""
    starts = sequence[:-1]
    ends = numpy.minimum(sequence[1:] if overlapping else sequence[1:] - 1, size - 1)
    lengths = ends - starts + 1
    offsets = numpy.arange(int(lengths.max()))
    mask = offsets[None, :] < lengths[:, None]
    index = numpy.where(mask, starts[:, None] + offsets[None, :], starts[:, None])
    return index.astype(numpy.int64), mask


def _windows(x, rows, cols):
    """The regions of ``x`` (N, H, W, C) as ``(N, OH, OW, L, M, C)``."""
    n, _, _, c = x._value.shape
    (oh, lr), (ow, lc) = rows.shape, cols.shape
    y = array_ops.gather(x, Tensor(B.xp.asarray(rows.reshape(-1))), axis=1)
    y = array_ops.gather(y, Tensor(B.xp.asarray(cols.reshape(-1))), axis=2)
    y = array_ops.reshape(y, (n, oh, lr, ow, lc, c))
    return array_ops.transpose(y, (0, 1, 3, 2, 4, 5))


def pool_with_sequences(value, row_sequence, col_sequence, overlapping, kind):
    """Pool ``value`` (N, H, W, C) over the regions of the given pooling sequences;
    ``kind`` is ``"max"`` or ``"avg"``."""
    x = value if isinstance(value, Tensor) else convert_to_tensor(value)
    h, w = x._value.shape[1:3]
    rows, row_mask = _regions(numpy.asarray(row_sequence, dtype=numpy.int64), h, overlapping)
    cols, col_mask = _regions(numpy.asarray(col_sequence, dtype=numpy.int64), w, overlapping)
    windows = _windows(x, rows, cols)
    if kind == "max":
        return conv_ops.window_max(windows)
    weights = row_mask[:, None, :, None] * col_mask[None, :, None, :]
    weights = weights / weights.sum(axis=(2, 3), keepdims=True)
    scale = Tensor(B.xp.asarray(weights[..., None], dtype=x._value.dtype))
    return reduce_sum(windows * scale, axis=(3, 4))


def _fractional_pool(value, pooling_ratio, pseudo_random, overlapping, seed, kind, what):
    x = value if isinstance(value, Tensor) else convert_to_tensor(value)
    if x.ndim != 4:
        raise InvalidArgumentError(f"{what}: value must be 4-D (N, H, W, C), got shape "
                                   f"{tuple(x.shape)}")
    ratio_h, ratio_w = _ratios(pooling_ratio, what)
    h, w = (int(d) for d in x._value.shape[1:3])
    oh, ow = int(math.floor(h / ratio_h)), int(math.floor(w / ratio_w))
    if oh < 1 or ow < 1:
        raise InvalidArgumentError(f"{what}: pooling_ratio ({ratio_h}, {ratio_w}) leaves no "
                                   f"output for an input of {h}x{w}")
    rng = numpy.random.default_rng(None if not seed else int(seed))
    row_seq = pooling_sequence(h, oh, pseudo_random, rng)
    col_seq = pooling_sequence(w, ow, pseudo_random, rng)
    out = pool_with_sequences(x, row_seq, col_seq, overlapping, kind)
    return out, convert_to_tensor(row_seq), convert_to_tensor(col_seq)


def fractional_max_pool(value, pooling_ratio, pseudo_random=False, overlapping=False, seed=0,
                        name=None):
    """Max pooling of ``value`` (N, H, W, C) over ``floor(H / ratio_h) x floor(W / ratio_w)``
    irregular regions: ``(output, row_pooling_sequence, col_pooling_sequence)``. ``seed`` 0
    draws fresh sequences each call; another seed makes them repeatable."""
    return FractionalMaxPool(*_fractional_pool(value, pooling_ratio, pseudo_random, overlapping,
                                               seed, "max", "fractional_max_pool"))


def fractional_avg_pool(value, pooling_ratio, pseudo_random=False, overlapping=False, seed=0,
                        name=None):
    """Average pooling over fractional regions, as ``fractional_max_pool``."""
    return FractionalAvgPool(*_fractional_pool(value, pooling_ratio, pseudo_random, overlapping,
                                               seed, "avg", "fractional_avg_pool"))


def install(tf):
    """Set ``tf.nn.fractional_max_pool`` and ``tf.nn.fractional_avg_pool``."""
    tf.nn.fractional_max_pool = fractional_max_pool
    tf.nn.fractional_avg_pool = fractional_avg_pool


__all__ = ["fractional_max_pool", "fractional_avg_pool"]
