"""Reductions. Conventions: ``reduce_max``/``reduce_min`` split the gradient evenly between tied
extremes (as TF does); ``reduce_prod``'s gradient is the product of the other entries, also
where some are zero."""
import numpy

from .. import backend as B
from ..tensor import Tensor
from ._samples import away, u
from .convert import convert_to_tensor
from .registry import InvalidArgumentError, RAW, apply, as_keras_layer, defop, helper


def _x(x):
    return x if isinstance(x, Tensor) else convert_to_tensor(x)


def _axes(axis, ndim):
    """Normalise ``axis`` (None, int, list, Tensor) to a sorted tuple of non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, Tensor):
        axis = B.to_numpy(axis._value).tolist()
    if isinstance(axis, (int, numpy.integer)):
        axis = [axis]
    out = []
    for a in axis:
        a = int(a)
        if not -ndim <= a < max(ndim, 1):
            raise InvalidArgumentError(
                f"axis {a} is out of range for a tensor of rank {ndim}")
        out.append(a % max(ndim, 1))
    return tuple(sorted(set(out)))


@helper
def unreduce(F, g, shape, axis, keepdims):
    """Broadcast a reduction's gradient ``g`` back over the reduced ``axis`` of ``shape``."""
    lead = tuple(g.shape[:F.nb])
    if not keepdims:
        kept = tuple(1 if i in axis else s for i, s in enumerate(shape))
        g = F.reshape(g, lead + kept)
    return F.broadcast_to(g, lead + tuple(shape))


def _keep(F, y, shape, axis, keepdims):
    """The (saved, never batched) reduction result with the reduced axes kept as size 1."""
    if keepdims:
        return y
    return F.reshape(y, tuple(1 if i in axis else s for i, s in enumerate(shape)))


def _reduction(name, forward, vjp, save=(), smooth=True, samples=None, **kw):
    samples = samples or (lambda: [((u(3, 4),), {"axis": (1,), "keepdims": False}),
                                   ((u(2, 3, 4),), {"axis": (0, 2), "keepdims": True}),
                                   ((u(3, 4),), {"axis": (0, 1), "keepdims": False})])
    public = defop(name, forward, vjp=vjp, jvp="linear" if name in ("reduce_sum", "reduce_mean")
                   else (_derive_jvp_by_vjp if vjp else None), save=save, smooth=smooth,
                   samples=samples if vjp else None, **kw)

    def fn(input_tensor, axis=None, keepdims=False, name=None):
        try:
            x = _x(input_tensor)
        except TypeError:
            return as_keras_layer(fn, (input_tensor,), {"axis": axis, "keepdims": keepdims})
        return apply(public.op, (x,), {"axis": _axes(axis, x.ndim), "keepdims": bool(keepdims)})

    fn.__name__ = name
    fn.__doc__ = forward.__doc__
    fn.op = public.op
    return fn


_derive_jvp_by_vjp = "reduction"  # see registry: t -> sum(t * dy/dx) computed through the VJP


def _same_kind(x):
    """Sums keep the input's dtype (numpy would widen int32 to int64; TF does not)."""
    return None if x.dtype.kind == "b" else x.dtype


def _sum_forward(x, axis, keepdims=False):
    """Sum over ``axis`` (all axes when None)."""
    return x.sum(axis=axis, keepdims=keepdims, dtype=_same_kind(x))


reduce_sum = _reduction("reduce_sum", _sum_forward,
                        lambda F, g, x, y, axis, keepdims=False: (
                            F.unreduce(g, F.shapes[0], axis, keepdims),), type="Sum")


def _mean_forward(x, axis, keepdims=False):
    """Mean over ``axis``; integer tensors give an integer mean, as in TF."""
    if x.dtype.kind in "iu":
        return (x.sum(axis=axis, keepdims=keepdims) // _count(x.shape, axis)).astype(x.dtype)
    # numpy's mean is this sum and division, behind several microseconds of Python.
    return x.sum(axis=axis, keepdims=keepdims, dtype=x.dtype) / _count(x.shape, axis)


def _count(shape, axis):
    n = 1
    for a in axis:
        n *= shape[a]
    return n


reduce_mean = _reduction("reduce_mean", _mean_forward,
                         lambda F, g, x, y, axis, keepdims=False: (
                             F.unreduce(g, F.shapes[0], axis, keepdims)
                             * (1.0 / max(_count(F.shapes[0], axis), 1)),), type="Mean")


def _extreme_vjp(F, g, x, y, axis, keepdims=False):
    x = x[0]
    shape = F.shapes[0]
    mask = F.cast(F.equal(x, _keep(F, y, shape, axis, keepdims)), x.dtype)
    share = mask / F.reduce_sum(mask, axis=axis, keepdims=True)
    return (F.unreduce(g, shape, axis, keepdims) * share,)


def extreme(x, axis, keepdims, largest):
    """``x.max``/``x.min`` over ``axis`` (an int, tuple or None). Over an empty axis the result
    is the reduction's identity, as in TF: -inf/+inf for floats, the dtype's limits for ints."""
    reduced = [d for d in range(x.ndim)] if axis is None else [
        a % x.ndim for a in (axis if isinstance(axis, tuple) else (axis,))]
    if x.size or not any(x.shape[a] == 0 for a in reduced) or x.dtype.kind not in "fiu":
        return x.max(axis=axis, keepdims=keepdims) if largest else x.min(axis=axis,
                                                                          keepdims=keepdims)
    if keepdims:
        shape = tuple(1 if i in reduced else s for i, s in enumerate(x.shape))
    else:
        shape = tuple(s for i, s in enumerate(x.shape) if i not in reduced)
    if x.dtype.kind == "f":
        fill = -numpy.inf if largest else numpy.inf
    else:
        info = numpy.iinfo(x.dtype)
        fill = info.min if largest else info.max
    return B.xp.full(shape, fill, dtype=x.dtype)


reduce_max = _reduction("reduce_max", lambda x, axis, keepdims=False: extreme(x, axis, keepdims,
                                                                              True),
                        _extreme_vjp, save=(0, "out"), smooth=False, type="Max",
                        kink="ties split the gradient evenly")
reduce_min = _reduction("reduce_min", lambda x, axis, keepdims=False: extreme(x, axis, keepdims,
                                                                              False),
                        _extreme_vjp, save=(0, "out"), smooth=False, type="Min",
                        kink="ties split the gradient evenly")


def _prod_vjp(F, g, x, y, axis, keepdims=False):
    # d prod / d x_i = product of the others: y / x_i without zeros; with one zero in a group
    # only that entry gets the product of the rest, with two or more all get 0 (as TF). Second
    # derivatives are exact away from zeros only (TF's give NaN there).
    shape, x = F.shapes[0], x[0]
    gx = F.unreduce(g, shape, axis, keepdims)
    if F is RAW and bool((x != 0).all()):  # the common case (RAW rules are never traced)
        return (gx * _keep(F, y, shape, axis, keepdims) / x,)
    zero = F.equal(x, F.zeros_like(x))
    safe = F.where(zero, F.ones_like(x), x)
    rest = F.reduce_prod(safe, axis=axis, keepdims=True)  # product of the non-zero entries
    zeros = F.reduce_sum(F.cast(zero, x.dtype), axis=axis, keepdims=True)
    others = F.where(zero, F.where(zeros == 1, rest, F.zeros_like(rest)),
                     F.where(zeros == 0, rest / safe, F.zeros_like(safe)))
    return (gx * others,)


reduce_prod = _reduction("reduce_prod", lambda x, axis, keepdims=False: x.prod(
    axis=axis, keepdims=keepdims, dtype=_same_kind(x)), _prod_vjp, save=(0, "out"), type="Prod",
    samples=lambda: [((away(3, 4, lo=0.5),), {"axis": (1,), "keepdims": False}),
                     ((away(2, 3), ), {"axis": (0, 1), "keepdims": True})])


def _logsumexp_forward(x, axis, keepdims=False):
    """log(sum(exp(x))) over ``axis``, computed without overflow."""
    xp = B.xp
    m = extreme(x, axis, True, True)
    m = xp.where(xp.isfinite(m), m, 0)
    out = xp.log(xp.exp(x - m).sum(axis=axis, keepdims=True)) + m
    return out if keepdims else out.reshape(tuple(s for i, s in enumerate(x.shape)
                                                  if i not in axis))


def _logsumexp_vjp(F, g, x, y, axis, keepdims=False):
    shape = F.shapes[0]
    yk = _keep(F, y, shape, axis, keepdims)
    return (F.unreduce(g, shape, axis, keepdims) * F.exp(x[0] - yk),)


reduce_logsumexp = _reduction("reduce_logsumexp", _logsumexp_forward, _logsumexp_vjp,
                              save=(0, "out"), type="ReduceLogSumExp")


# Index and boolean reductions: ops without gradients (so a traced function replays them).

def _arg(fn_name, op_type):
    op = defop(fn_name, lambda x, axis, output_type: getattr(B.xp, fn_name)(
        x, axis=axis).astype(output_type), type=op_type).op

    def fn(input, axis=None, output_type="int64", name=None):  # noqa: A002
        from .. import dtypes
        x = _x(input)
        axis = 0 if axis is None else int(axis)
        return apply(op, (x,), {"axis": axis, "output_type": dtypes.as_dtype(output_type).np})
    fn.__name__ = fn_name
    fn.__doc__ = f"Index of the {fn_name[3:]}imum along ``axis`` (0 by default), int64."
    fn.op = op
    return fn


argmax = _arg("argmax", "ArgMax")
argmin = _arg("argmin", "ArgMin")

_any = defop("reduce_any", lambda x, axis, keepdims=False: B.xp.any(x, axis=axis,
                                                                     keepdims=keepdims),
             type="Any")
_all = defop("reduce_all", lambda x, axis, keepdims=False: B.xp.all(x, axis=axis,
                                                                     keepdims=keepdims),
             type="All")


def _count_forward(x, axis, keepdims=False, dtype=numpy.int64):
    return B.xp.asarray((x != 0).sum(axis=axis, keepdims=keepdims), dtype=dtype)


_count_nonzero = defop("count_nonzero", _count_forward)


def reduce_any(input_tensor, axis=None, keepdims=False, name=None):
    """Logical or over ``axis``."""
    x = _x(input_tensor)
    return apply(_any.op, (x,), {"axis": _axes(axis, x.ndim), "keepdims": bool(keepdims)})


def reduce_all(input_tensor, axis=None, keepdims=False, name=None):
    """Logical and over ``axis``."""
    x = _x(input_tensor)
    return apply(_all.op, (x,), {"axis": _axes(axis, x.ndim), "keepdims": bool(keepdims)})


def count_nonzero(input, axis=None, keepdims=False, dtype="int64", name=None):  # noqa: A002
    """Number of non-zero entries over ``axis``."""
    from .. import dtypes
    x = _x(input)
    return apply(_count_nonzero.op, (x,), {"axis": _axes(axis, x.ndim),
                                           "keepdims": bool(keepdims),
                                           "dtype": dtypes.as_dtype(dtype).np})
