"""Segment reductions (``tf.math.segment_*`` with sorted ids, ``unsorted_segment_*`` with any
ids and a given number of segments), ``bincount`` and ``in_top_k``.

Segment ids index the leading dimensions of ``data`` (all of ``segment_ids.shape``); the result
has one row per segment. Unsorted ops drop negative ids and reject ids ``>= num_segments``;
empty segments get TF's fill: 0 for sums and means, 1 for products, the dtype's lowest (max) or
highest (min) value, and 0 for the sorted ``segment_max``/``segment_min``. Sorted ops, and
``bincount`` without a fixed length, size their output from the ids' values on every call.

Gradients follow TF's rules: sums gather the gradient back, maxima and minima send it to the
entries equal to the result (split between ties), products to the product of the other entries
(also with zeros in a segment).
"""
import numpy

from .. import backend as B
from .. import dtypes
from ..tensor import Tensor, host_value
from ._samples import away, u
from .array_ops import ones, reshape
from .convert import convert_to_tensor
from .math_ops import maximum, sqrt
from .registry import InvalidArgumentError, apply, defop
from .scatter_ops import scatter_reduce


def _x(x):
    return x if isinstance(x, Tensor) else convert_to_tensor(x)


# --- kernels ---------------------------------------------------------------------------------

_REDUCE = {"sum": "add", "prod": "mul", "max": "max", "min": "min"}


def _fill(kind, dtype):
    """TF's value for an empty segment of an unsorted reduction."""
    if kind == "sum":
        return 0
    if kind == "prod":
        return 1
    info = numpy.finfo(dtype) if dtype.kind == "f" else numpy.iinfo(dtype)
    return info.min if kind == "max" else info.max


def _segment_reduce(kind, what, data, segment_ids, num_segments, batch, drop_out_of_range):
    """The reduction of the rows of ``data`` sharing an id; negative ids (and, when
    ``drop_out_of_range``, ids ``>= num_segments``) are left out."""
    xp = B.xp
    shape = tuple(data.shape)
    lead, rest = shape[:batch], shape[batch + segment_ids.ndim:]
    ids = segment_ids.reshape(-1).astype(numpy.int64)
    if not drop_out_of_range and ids.size and bool((ids >= num_segments).any()):
        first = int(xp.argmax(ids >= num_segments))
        raise InvalidArgumentError(
            f"{what}: segment_ids[{first}] = {int(ids[first])} is out of range [0, "
            f"{num_segments})")
    values = data.reshape(lead + (int(ids.size),) + rest)
    keep = (ids >= 0) & (ids < num_segments)
    if not bool(keep.all()):
        kept = xp.nonzero(keep)[0]
        ids, values = ids[kept], xp.take(values, kept, axis=batch)
    out = xp.full(lead + (int(num_segments),) + rest, _fill(kind, data.dtype), dtype=data.dtype)
    return scatter_reduce(out, batch, ids, values, _REDUCE[kind])


def _sorted_segments(what, segment_ids):
    """The number of segments of sorted ids (the last id + 1), checking the order."""
    ids = segment_ids
    if ids.size == 0:
        return 0
    if ids.size > 1 and bool((ids[1:] < ids[:-1]).any()):
        at = int(B.xp.argmax(ids[1:] < ids[:-1])) + 1
        raise InvalidArgumentError(
            f"{what}: segment ids are not increasing: segment_ids[{at}] = {int(ids[at])} "
            f"follows {int(ids[at - 1])}")
    if int(ids[0]) < 0:
        raise InvalidArgumentError(f"{what}: segment ids must be >= 0, got {int(ids[0])}")
    return int(ids[-1]) + 1


def _unsorted_forward(kind):
    what = f"unsorted_segment_{kind}"

    def forward(data, segment_ids, num_segments, batch=0, drop_out_of_range=False):
        return _segment_reduce(kind, what, data, segment_ids, num_segments, batch,
                               drop_out_of_range)

    forward.__doc__ = f"The {kind} of the rows of ``data`` per segment id (any order)."
    return forward


def _sorted_forward(kind):
    what = f"segment_{kind}"

    def forward(data, segment_ids):
        xp = B.xp
        n = _sorted_segments(what, segment_ids)
        out = _segment_reduce(kind, what, data, segment_ids, n, 0, False)
        if kind in ("max", "min") and n:
            # Sorted max/min fill empty segments with 0, not the dtype's limit.
            present = xp.zeros(n, dtype=bool)
            present[segment_ids.astype(numpy.int64)] = True
            out = xp.where(present.reshape((n,) + (1,) * (out.ndim - 1)), out,
                           xp.zeros((), dtype=out.dtype))
        return out

    forward.__doc__ = f"The {kind} of the rows of ``data`` per segment id (sorted ids)."
    return forward


def _segment_gather_forward(params, segment_ids, batch=0):
    """The rows of ``params`` (along axis ``batch``) at ``segment_ids``; zeros for ids outside
    ``[0, params.shape[batch])``."""
    xp = B.xp
    shape = tuple(params.shape)
    n = shape[batch]
    lead, rest = shape[:batch], shape[batch + 1:]
    ids = segment_ids.reshape(-1).astype(numpy.int64)
    out_shape = lead + tuple(segment_ids.shape) + rest
    if n == 0:
        return xp.zeros(out_shape, dtype=params.dtype)
    valid = (ids >= 0) & (ids < n)
    taken = xp.take(params, xp.where(valid, ids, 0), axis=batch)
    mask = valid.reshape((1,) * batch + (-1,) + (1,) * len(rest))
    return xp.where(mask, taken, xp.zeros((), dtype=params.dtype)).reshape(out_shape)


# --- gradient rules --------------------------------------------------------------------------

def _segments_of(y, batch):
    return int(tuple(y.shape)[batch])


def _sum_vjp(F, g, x, y, batch=0, **_):
    return F.segment_gather(g, x[1], batch=F.nb + batch), None


def _segment_gather_vjp(F, g, x, y, batch=0):
    n = int(F.shapes[0][batch])
    return F.unsorted_segment_sum(g, x[1], num_segments=n, batch=F.nb + batch,
                                  drop_out_of_range=True), None


def _selected(F, x, y, batch):
    """Entries equal to their segment's result (and with a valid id), and how many tie."""
    data, ids = x
    valid = F.segment_gather(F.ones_like(y), ids, batch=batch)
    chosen = F.cast(F.equal(data, F.segment_gather(y, ids, batch=batch)), y.dtype) * valid
    ties = F.unsorted_segment_sum(chosen, ids, num_segments=_segments_of(y, batch),
                                  batch=batch, drop_out_of_range=True)
    return chosen, F.maximum(ties, F.ones_like(ties))


def _extreme_vjp(F, g, x, y, batch=0, **_):
    chosen, ties = _selected(F, x, y, batch)
    return F.segment_gather(g / ties, x[1], batch=F.nb + batch) * chosen, None


def _extreme_jvp(F, t, x, y, batch=0, **_):
    if t[0] is None:
        return None
    chosen, ties = _selected(F, x, y, batch)
    return F.unsorted_segment_sum(t[0] * chosen, x[1], num_segments=_segments_of(y, batch),
                                  batch=batch, drop_out_of_range=True) / ties


def _prod_partials(F, x, y, batch):
    """For each entry, the product of the other entries of its segment (exact with zeros)."""
    data, ids = x
    n = _segments_of(y, batch)
    zero = F.equal(data, F.zeros_like(data))
    safe = F.where(zero, F.ones_like(data), data)
    zeros = F.unsorted_segment_sum(F.cast(zero, y.dtype), ids, num_segments=n, batch=batch,
                                   drop_out_of_range=True)
    rest = F.unsorted_segment_prod(safe, ids, num_segments=n, batch=batch)
    one_zero = F.where(F.equal(zeros, F.ones_like(zeros)), rest, F.zeros_like(rest))
    return F.where(zero, F.segment_gather(one_zero, ids, batch=batch),
                   F.segment_gather(y, ids, batch=batch) / safe)


def _prod_vjp(F, g, x, y, batch=0, **_):
    return F.segment_gather(g, x[1], batch=F.nb + batch) * _prod_partials(F, x, y, batch), None


def _prod_jvp(F, t, x, y, batch=0, **_):
    if t[0] is None:
        return None
    return F.unsorted_segment_sum(t[0] * _prod_partials(F, x, y, batch), x[1],
                                  num_segments=_segments_of(y, batch), batch=batch,
                                  drop_out_of_range=True)


_RULES = {"sum": (_sum_vjp, "linear", (1,), True),
          "prod": (_prod_vjp, _prod_jvp, (0, 1, "out"), True),
          "max": (_extreme_vjp, _extreme_jvp, (0, 1, "out"), False),
          "min": (_extreme_vjp, _extreme_jvp, (0, 1, "out"), False)}


def _samples(kind, sorted_ids):
    data = (lambda *s: away(*s, lo=0.5)) if kind == "prod" else u
    if sorted_ids:
        return lambda: [((data(5, 2), numpy.array([0, 0, 1, 3, 3])), {}),
                        ((data(4), numpy.array([0, 1, 1, 1])), {})]
    return lambda: [((data(5, 2), numpy.array([2, 0, -1, 2, 0])), {"num_segments": 4}),
                    ((data(2, 3, 2), numpy.array([[1, 0, 1], [0, 2, 1]])), {"num_segments": 3})]


_OPS = {}
for _kind, (_vjp, _jvp, _save, _smooth) in _RULES.items():
    _title = _kind.capitalize()
    _OPS["unsorted", _kind] = defop(
        f"unsorted_segment_{_kind}", _unsorted_forward(_kind), arity=2, vjp=_vjp, jvp=_jvp,
        save=_save, smooth=_smooth, type=f"UnsortedSegment{_title}",
        kink=None if _smooth else "ties split the gradient evenly",
        samples=_samples(_kind, sorted_ids=False))
    _OPS["sorted", _kind] = defop(
        f"segment_{_kind}", _sorted_forward(_kind), arity=2, vjp=_vjp, jvp=_jvp, save=_save,
        smooth=_smooth, type=f"Segment{_title}",
        kink=None if _smooth else "ties split the gradient evenly",
        samples=_samples(_kind, sorted_ids=True))

_segment_gather = defop(
    "segment_gather", _segment_gather_forward, arity=2, vjp=_segment_gather_vjp, jvp="linear",
    save=(1,), samples=lambda: [((u(3, 2), numpy.array([2, -1, 0, 2, 5])), {}),
                                ((u(3), numpy.array([[1, 1], [0, 2]])), {})])


# --- public segment functions ----------------------------------------------------------------

def _ids(what, segment_ids):
    ids = _x(segment_ids)
    if ids.dtype not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"{what}: segment_ids must be int32 or int64, got {ids.dtype.name}")
    return ids


def _unsorted(kind, data, segment_ids, num_segments):
    what = f"unsorted_segment_{kind}"
    data, ids = _x(data), _ids(what, segment_ids)
    if isinstance(num_segments, Tensor):
        num_segments = host_value(num_segments, f"{what}'s num_segments")
    if numpy.ndim(num_segments) != 0:
        raise InvalidArgumentError(f"{what}: num_segments must be a scalar, got "
                                   f"{num_segments!r}")
    num_segments = int(num_segments)
    if num_segments < 0:
        raise InvalidArgumentError(f"{what}: num_segments must be >= 0, got {num_segments}")
    if tuple(data.shape[:ids.ndim]) != tuple(ids.shape):
        raise InvalidArgumentError(
            f"{what}: data.shape = {tuple(data.shape)} does not start with segment_ids.shape = "
            f"{tuple(ids.shape)}")
    return apply(_OPS["unsorted", kind].op, (data, ids),
                 {"num_segments": num_segments, "batch": 0, "drop_out_of_range": False})


def _sorted(kind, data, segment_ids):
    what = f"segment_{kind}"
    data, ids = _x(data), _ids(what, segment_ids)
    if ids.ndim != 1 or data.ndim < 1 or int(ids.shape[0]) != int(data.shape[0]):
        raise InvalidArgumentError(
            f"{what}: segment_ids must be a vector as long as the first dimension of data; got "
            f"segment_ids of shape {tuple(ids.shape)} for data of shape {tuple(data.shape)}")
    return apply(_OPS["sorted", kind].op, (data, ids), {})


def unsorted_segment_sum(data, segment_ids, num_segments, name=None):
    """Sum of the rows of ``data`` per id in ``segment_ids`` (shape a prefix of
    ``data.shape``), for ids ``0 .. num_segments - 1``; negative ids are dropped."""
    return _unsorted("sum", data, segment_ids, num_segments)


def unsorted_segment_prod(data, segment_ids, num_segments, name=None):
    """Product per segment (1 for an empty segment); see ``unsorted_segment_sum``."""
    return _unsorted("prod", data, segment_ids, num_segments)


def unsorted_segment_max(data, segment_ids, num_segments, name=None):
    """Maximum per segment (the dtype's lowest value for an empty one)."""
    return _unsorted("max", data, segment_ids, num_segments)


def unsorted_segment_min(data, segment_ids, num_segments, name=None):
    """Minimum per segment (the dtype's highest value for an empty one)."""
    return _unsorted("min", data, segment_ids, num_segments)


def _float_data(what, data):
    data = _x(data)
    if not data.dtype.is_floating:
        raise TypeError(f"{what}: data must be a float tensor, got {data.dtype.name}")
    return data


def _counts_shape(data, ids):
    return (-1,) + (1,) * (data.ndim - ids.ndim)


def unsorted_segment_mean(data, segment_ids, num_segments, name=None):
    """Mean per segment (0 for an empty one): the sum over ``max(count, 1)``."""
    data = _float_data("unsorted_segment_mean", data)
    ids = _ids("unsorted_segment_mean", segment_ids)
    total = unsorted_segment_sum(data, ids, num_segments)
    counts = unsorted_segment_sum(ones(tuple(ids.shape), dtype=data.dtype), ids, num_segments)
    return total / reshape(maximum(counts, 1.0), _counts_shape(data, ids))


def unsorted_segment_sqrt_n(data, segment_ids, num_segments, name=None):
    """The sum per segment over ``sqrt(max(count, 1))``."""
    data = _float_data("unsorted_segment_sqrt_n", data)
    ids = _ids("unsorted_segment_sqrt_n", segment_ids)
    total = unsorted_segment_sum(data, ids, num_segments)
    counts = unsorted_segment_sum(ones(tuple(ids.shape), dtype=data.dtype), ids, num_segments)
    return total / reshape(sqrt(maximum(counts, 1.0)), _counts_shape(data, ids))


def segment_sum(data, segment_ids, name=None):
    """Sum of the rows of ``data`` per id in the sorted vector ``segment_ids``; there are
    ``segment_ids[-1] + 1`` segments."""
    return _sorted("sum", data, segment_ids)


def segment_prod(data, segment_ids, name=None):
    """Product per segment of sorted ids (1 for an empty segment)."""
    return _sorted("prod", data, segment_ids)


def segment_max(data, segment_ids, name=None):
    """Maximum per segment of sorted ids (0 for an empty segment)."""
    return _sorted("max", data, segment_ids)


def segment_min(data, segment_ids, name=None):
    """Minimum per segment of sorted ids (0 for an empty segment)."""
    return _sorted("min", data, segment_ids)


def segment_mean(data, segment_ids, name=None):
    """Mean per segment of sorted ids (0 for an empty segment)."""
    data = _float_data("segment_mean", data)
    ids = _ids("segment_mean", segment_ids)
    total = segment_sum(data, ids)
    counts = segment_sum(ones(tuple(ids.shape), dtype=data.dtype), ids)
    return total / reshape(maximum(counts, 1.0), _counts_shape(data, ids))


# --- bincount --------------------------------------------------------------------------------

def _bins(arr, minlength, maxlength, per_row):
    """The number of bins, and each value's flat bin (-1 where it falls past ``maxlength``)."""
    if arr.size and bool((arr < 0).any()):
        raise InvalidArgumentError(f"bincount: arr must be non-negative, got the value "
                                   f"{int(arr.min())}")
    length = int(arr.max()) + 1 if arr.size else 0
    if minlength is not None:
        length = max(length, minlength)
    if maxlength is not None:
        length = min(length, maxlength)
    return length, _flat_bins_forward(arr, length, per_row).reshape(-1)


def _bincount_forward(arr, minlength=None, maxlength=None, dtype=numpy.int32,
                      binary_output=False, per_row=False):
    """How often each value occurs in ``arr`` (per row of a matrix with ``per_row``)."""
    xp = B.xp
    length, flat = _bins(arr, minlength, maxlength, per_row)
    rows = int(arr.shape[0]) if per_row else 1
    out = xp.zeros(rows * length, dtype=dtype)
    kept = xp.nonzero(flat >= 0)[0]
    scatter_reduce(out, 0, flat[kept], xp.ones(int(kept.size), dtype=dtype), "add")
    if binary_output:
        out = (out > 0).astype(dtype)
    return out.reshape((rows, length) if per_row else (length,))


def _weighted_bincount_forward(arr, weights, minlength=None, maxlength=None, per_row=False):
    """The sum of ``weights`` per value of ``arr``."""
    xp = B.xp
    length, flat = _bins(arr, minlength, maxlength, per_row)
    rows = int(arr.shape[0]) if per_row else 1
    out = xp.zeros(rows * length, dtype=weights.dtype)
    kept = xp.nonzero(flat >= 0)[0]
    scatter_reduce(out, 0, flat[kept], weights.reshape(-1)[kept], "add")
    return out.reshape((rows, length) if per_row else (length,))


def _weighted_bincount_vjp(F, g, x, y, minlength=None, maxlength=None, per_row=False):
    arr = x[0]
    length = int(tuple(y.shape)[-1])
    rows = int(tuple(y.shape)[0]) if per_row else 1
    lead = tuple(g.shape[:F.nb])
    # Each weight's gradient is the gradient of its bin (0 past maxlength).
    bins = _flat_bins(arr, length, per_row)
    flat_g = F.reshape(g, lead + (rows * length,))
    return None, F.segment_gather(flat_g, bins, batch=F.nb)


def _flat_bins(arr, length, per_row):
    """The flat bin of each value (RAW arrays or Tensors alike), -1 past ``length``."""
    if isinstance(arr, Tensor):
        return apply(_flat_bins_op.op, (arr,), {"length": length, "per_row": per_row})
    return _flat_bins_forward(arr, length, per_row)


def _flat_bins_forward(arr, length, per_row):
    """Each value's bin in the flattened output (rows of ``length`` bins with ``per_row``),
    -1 past ``length``."""
    xp = B.xp
    flat = arr.astype(numpy.int64)
    if per_row:
        flat = flat + xp.arange(arr.shape[0], dtype=numpy.int64).reshape(-1, 1) * length
    return xp.where(arr < length, flat, -1)


_flat_bins_op = defop("bincount_bins", _flat_bins_forward, samples=lambda: [
    ((numpy.array([[0, 2, 9], [1, 1, 3]]),), {"length": 4, "per_row": True})])
_bincount = defop("bincount", _bincount_forward, type="DenseBincount", samples=lambda: [
    ((numpy.array([3, 1, 1, 0, 5]),), {"minlength": 8})])
_weighted_bincount = defop(
    "weighted_bincount", _weighted_bincount_forward, arity=2, vjp=_weighted_bincount_vjp,
    jvp="linear", save=(0, "out"), type="Bincount", samples=lambda: [
        ((numpy.array([3, 1, 1, 0, 5]), u(5)), {}),
        ((numpy.array([3, 1, 1, 0, 5]), u(5)), {"minlength": 8, "maxlength": 4}),
        ((numpy.array([[0, 2, 2], [1, 1, 3]]), u(2, 3)), {"per_row": True})])


def _length_arg(value, what):
    if value is None:
        return None
    if isinstance(value, Tensor):
        value = host_value(value, f"bincount's {what}")
    value = int(value)
    if value < 0:
        raise InvalidArgumentError(f"bincount: {what} must be non-negative, got {value}")
    return value


def bincount(arr, weights=None, minlength=None, maxlength=None, dtype=dtypes.int32, name=None,
             axis=None, binary_output=False):
    """Counts of each value ``0 .. max(arr)`` in the non-negative integer tensor ``arr`` (at
    least ``minlength`` bins, at most ``maxlength``: larger values are not counted). With
    ``weights`` (same shape as ``arr``) their sums per value instead, in their dtype.
    ``axis=-1`` counts each row of a matrix separately; ``axis=None`` or 0 flattens ``arr``."""
    arr = _x(arr)
    if not arr.dtype.is_integer:
        raise TypeError(f"bincount: arr must be integers, got {arr.dtype.name}")
    if axis not in (None, 0, -1):
        raise InvalidArgumentError(f"bincount: only axis None, 0 and -1 are supported, got "
                                   f"{axis}")
    per_row = axis == -1
    if per_row and arr.ndim != 2:
        raise InvalidArgumentError(f"bincount: axis=-1 needs a matrix, got shape "
                                   f"{tuple(arr.shape)}")
    attrs = {"minlength": _length_arg(minlength, "minlength"),
             "maxlength": _length_arg(maxlength, "maxlength"), "per_row": per_row}
    if weights is None:
        return apply(_bincount.op, (arr,), dict(attrs, dtype=dtypes.as_dtype(dtype).np,
                                                binary_output=bool(binary_output)))
    if binary_output:
        raise ValueError("bincount: binary_output and weights are mutually exclusive")
    weights = _x(weights)
    if tuple(weights.shape) != tuple(arr.shape):
        raise InvalidArgumentError(f"bincount: weights of shape {tuple(weights.shape)} must "
                                   f"have the shape of arr {tuple(arr.shape)}")
    return apply(_weighted_bincount.op, (arr, weights), attrs)


# --- in_top_k --------------------------------------------------------------------------------

def _in_top_k_forward(targets, predictions, k):
    """Whether each target's prediction is among the ``k`` largest of its row (ties count
    in); false for a target out of range or a row with a non-finite prediction."""
    xp = B.xp
    n = int(predictions.shape[1])
    t = targets.astype(numpy.int64)
    valid = (t >= 0) & (t < n)
    if n == 0:
        return xp.zeros(t.shape, dtype=bool)
    mine = xp.take_along_axis(predictions, xp.where(valid, t, 0).reshape(-1, 1), axis=1)
    above = (predictions > mine).sum(axis=1)
    finite = xp.isfinite(predictions).all(axis=1)
    return valid & finite & (above < k)


_in_top_k = defop("in_top_k", _in_top_k_forward, arity=2, type="InTopKV2", samples=lambda: [
    ((numpy.array([2, 0, 5]), u(3, 4)), {"k": 2})])


def in_top_k(targets, predictions, k, name=None):
    """For each row ``i``, whether ``predictions[i, targets[i]]`` is among the ``k`` largest
    predictions of the row; classes tied at the boundary all count as in the top ``k``."""
    targets, predictions = _x(targets), _x(predictions)
    if not targets.dtype.is_integer:
        raise TypeError(f"in_top_k: targets must be integers, got {targets.dtype.name}")
    if predictions.ndim != 2 or targets.ndim != 1:
        raise InvalidArgumentError(
            f"in_top_k: predictions must be a matrix and targets a vector, got shapes "
            f"{tuple(predictions.shape)} and {tuple(targets.shape)}")
    if int(predictions.shape[0]) != int(targets.shape[0]):
        raise InvalidArgumentError(
            f"in_top_k: the first dimension of predictions {tuple(predictions.shape)} must "
            f"match the length of targets {tuple(targets.shape)}")
    if isinstance(k, Tensor):
        k = host_value(k, "in_top_k's k")
    return apply(_in_top_k.op, (targets, predictions), {"k": int(k)})
