"""Ops along one axis of ordered data: ``cumprod``, ``searchsorted`` and ``sequence_mask``.

``cumprod``'s gradient is exact also where the input has zeros (TF's divides by the input and
gives NaN there): up to the first zero of the scanned axis it is the usual ``cumsum(g * y) / x``;
at the first zero it is the same sum over the products that skip that zero; after it, 0.
Second derivatives are exact away from zeros.
"""
import numpy

from .. import backend as B
from .. import dtypes
from ..tensor import Tensor, host_value
from ._samples import away, u
from .convert import convert_to_tensor, operand_pair
from .registry import InvalidArgumentError, RAW, apply, defop


def _x(x):
    return x if isinstance(x, Tensor) else convert_to_tensor(x)


# --- cumprod ---------------------------------------------------------------------------------

def _shift_in_array(x, axis, fill):
    """``x`` moved one step along ``axis``: ``fill`` enters at the start, the last entry leaves."""
    xp = B.xp
    if x.shape[axis] == 0:
        return x
    head_shape = list(x.shape)
    head_shape[axis] = 1
    body = xp.take(x, xp.arange(x.shape[axis] - 1), axis=axis)
    return xp.concatenate([xp.full(head_shape, fill, dtype=x.dtype), body], axis=axis)


def _cumprod_forward(x, axis=0, exclusive=False, reverse=False):
    """Cumulative product along ``axis``."""
    xp = B.xp
    if reverse:
        x = xp.flip(x, axis)
    if exclusive:
        x = _shift_in_array(x, axis, 1)
    out = xp.cumprod(x, axis=axis, dtype=x.dtype)
    return xp.flip(out, axis) if reverse else out


def _tail(k):
    """Key parts after the scanned axis, for an axis ``k`` places from the end."""
    return (slice(None),) * (k - 1)


def _flip(F, t, k):
    return F.getitem(t, key=(Ellipsis, slice(None, None, -1)) + _tail(k))


def _shift(F, t, k, fill, into_start):
    """``t`` moved one step along the axis ``k`` places from the end, ``fill`` entering at the
    start (``into_start``) or at the end."""
    part = slice(None, -1) if into_start else slice(1, None)
    pads = ((0, 0),) * (t.ndim - k) + (((1, 0) if into_start else (0, 1)),) + ((0, 0),) * (k - 1)
    return F.pad(F.getitem(t, key=(Ellipsis, part) + _tail(k)), paddings=pads,
                 constant_values=fill)


def _zero_masks(F, x, axis):
    """Where ``x`` is before the first zero of its scan, and where that first zero is."""
    zero = F.equal(x, F.zeros_like(x))
    seen = F.cumsum_op(F.cast(zero, x.dtype), axis=axis)
    before = F.equal(seen, F.zeros_like(x))
    first = F.logical_and(zero, F.equal(seen, F.ones_like(x)))
    return zero, before, first


def _inclusive_grad(F, g, x, y, k):
    """The gradient of the inclusive ``y = cumprod(x)`` along the axis ``k`` from the end."""
    g_axis, x_axis = g.ndim - k, x.ndim - k
    tail = F.cumsum_op(g * y, axis=g_axis, reverse=True)
    if F is RAW and bool((x != 0).all()):  # the common case (RAW rules are never traced)
        return tail / x
    zero, before, first = _zero_masks(F, x, x_axis)
    safe = F.where(zero, F.ones_like(x), x)
    skipping = F.cumprod_op(F.where(first, F.ones_like(x), x), axis=x_axis)
    at_first = F.cumsum_op(g * skipping, axis=g_axis, reverse=True)
    return F.where(before, tail / safe, F.where(first, at_first, F.zeros_like(g)))


def _cumprod_vjp(F, g, x, y, axis=0, exclusive=False, reverse=False):
    shape = F.shapes[0]
    k = len(shape) - axis
    if shape[axis] == 0:
        return (g,)
    x = x[0]
    if reverse:
        g, x, y = _flip(F, g, k), _flip(F, x, k), _flip(F, y, k)
    if exclusive:
        x = _shift(F, x, k, 1, into_start=True)
    grad = _inclusive_grad(F, g, x, y, k)
    if exclusive:
        grad = _shift(F, grad, k, 0, into_start=False)
    return (_flip(F, grad, k) if reverse else grad,)


def _cumprod_jvp(F, t, x, y, axis=0, exclusive=False, reverse=False):
    t, x = t[0], x[0]
    if t is None:
        return None
    k = x.ndim - axis
    if tuple(x.shape)[axis] == 0:
        return t
    if reverse:
        t, x, y = _flip(F, t, k), _flip(F, x, k), _flip(F, y, k)
    if exclusive:
        t, x = _shift(F, t, k, 0, into_start=True), _shift(F, x, k, 1, into_start=True)
    zero, before, first = _zero_masks(F, x, axis)
    safe = F.where(zero, F.ones_like(x), x)
    # Before the first zero: dy = y * cumsum(t / x); from it on only that zero's tangent
    # counts, times the product that skips it.
    inner = F.cumsum_op(F.where(before, t / safe, F.zeros_like(t)), axis=axis)
    skipping = F.cumprod_op(F.where(first, F.ones_like(x), x), axis=axis)
    at_first = F.reduce_sum(F.where(first, t, F.zeros_like(t)), axis=(axis,), keepdims=True)
    out = F.where(before, y * inner, skipping * at_first)
    return _flip(F, out, k) if reverse else out


_cumprod = defop("cumprod_op", _cumprod_forward, vjp=_cumprod_vjp, jvp=_cumprod_jvp,
                 save=(0, "out"), type="Cumprod", samples=lambda: [
                     ((away(3, 4, lo=0.5),), {"axis": 1}),
                     ((away(3, 4, lo=0.5),), {"axis": 0, "exclusive": True, "reverse": True}),
                     ((away(2, 3, 2, lo=0.5),), {"axis": 1, "reverse": True}),
                     ((away(4, 2, lo=0.5),), {"axis": 0, "exclusive": True})])


def cumprod(x, axis=0, exclusive=False, reverse=False, name=None):
    """Cumulative product along ``axis``; ``exclusive`` starts from 1 (leaving out each
    element itself), ``reverse`` runs from the end."""
    x = _x(x)
    ndim = max(x.ndim, 1)
    axis = int(axis)
    if not -ndim <= axis < ndim:
        raise InvalidArgumentError(f"cumprod: axis {axis} is out of range for a tensor of shape "
                                   f"{tuple(x.shape)}")
    return apply(_cumprod.op, (x,), {"axis": axis % ndim, "exclusive": bool(exclusive),
                                     "reverse": bool(reverse)})


# --- searchsorted ----------------------------------------------------------------------------

_COMPARE_LIMIT = 1 << 24   # elements of the comparison block before searching row by row


def _searchsorted_forward(sorted_sequence, values, side="left", out_type=numpy.int32):
    """For each value, the insertion point into the last axis of ``sorted_sequence``."""
    xp = B.xp
    n, m = int(sorted_sequence.shape[-1]), int(values.shape[-1])
    seq = sorted_sequence.reshape(-1, n)
    vals = values.reshape(-1, m)
    rows = int(seq.shape[0])
    if rows == 1:
        out = xp.searchsorted(seq[0], vals[0], side=side).reshape(1, m)
    elif rows * n * m <= _COMPARE_LIMIT:
        # Counting the entries below each value is the insertion point in a sorted row.
        below = (seq[:, None, :] < vals[:, :, None]) if side == "left" else (
            seq[:, None, :] <= vals[:, :, None])
        out = below.sum(axis=2)
    else:
        out = xp.stack([xp.searchsorted(seq[r], vals[r], side=side) for r in range(rows)])
    return out.reshape(values.shape).astype(out_type)


_searchsorted = defop("searchsorted", _searchsorted_forward, arity=2, type="LowerBound",
                      aliases=("UpperBound",), samples=lambda: [
                          ((numpy.sort(u(2, 5), axis=-1), u(2, 3)), {"side": "right"})])


def searchsorted(sorted_sequence, values, side="left", out_type=dtypes.int32, name=None):
    """Where each of ``values`` would be inserted into the innermost dimension of
    ``sorted_sequence`` to keep it sorted: before equal entries (``side="left"``) or after them
    (``"right"``). The leading dimensions of both must match."""
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    out_type = dtypes.as_dtype(out_type)
    if out_type not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"searchsorted: out_type must be int32 or int64, got {out_type.name}")
    seq, values = operand_pair("searchsorted", sorted_sequence, values)
    if seq.ndim < 1 or values.ndim < 1:
        raise InvalidArgumentError(
            f"searchsorted: sorted_sequence and values need at least one dimension, got shapes "
            f"{tuple(seq.shape)} and {tuple(values.shape)}")
    if tuple(seq.shape[:-1]) != tuple(values.shape[:-1]):
        raise InvalidArgumentError(
            f"searchsorted: the leading dimensions of sorted_sequence {tuple(seq.shape)} and "
            f"values {tuple(values.shape)} must match")
    return apply(_searchsorted.op, (seq, values), {"side": side, "out_type": out_type.np})


# --- sequence_mask ---------------------------------------------------------------------------

def _sequence_mask_forward(lengths, maxlen=None, dtype=numpy.bool_):
    """``mask[..., j] = j < lengths[...]`` for ``j < maxlen`` (the largest length when None)."""
    xp = B.xp
    if maxlen is None:
        maxlen = int(lengths.max()) if lengths.size else 0
        maxlen = max(maxlen, 0)
    mask = xp.arange(maxlen, dtype=lengths.dtype) < lengths[..., None]
    return mask if dtype == numpy.bool_ else mask.astype(dtype)


_sequence_mask = defop("sequence_mask", _sequence_mask_forward, type="SequenceMask",
                       samples=lambda: [((numpy.array([[1, 3], [0, 2]]),), {"maxlen": 4})])


def sequence_mask(lengths, maxlen=None, dtype=dtypes.bool, name=None):
    """A mask of shape ``lengths.shape + (maxlen,)`` that is true in the first ``lengths[i]``
    entries of row ``i``. Without ``maxlen`` the rows are as long as the largest length."""
    lengths = _x(lengths)
    if not lengths.dtype.is_integer:
        raise TypeError(f"sequence_mask: lengths must be integers, got {lengths.dtype.name}")
    if maxlen is not None:
        if isinstance(maxlen, Tensor):
            maxlen = host_value(maxlen, "sequence_mask's maxlen")
        if numpy.ndim(maxlen) != 0:
            raise InvalidArgumentError(f"sequence_mask: maxlen must be a scalar, got {maxlen!r}")
        maxlen = int(maxlen)
        if maxlen < 0:
            raise InvalidArgumentError(f"sequence_mask: maxlen must be non-negative, got "
                                       f"{maxlen}")
    return apply(_sequence_mask.op, (lengths,), {"maxlen": maxlen,
                                                 "dtype": dtypes.as_dtype(dtype).np})
