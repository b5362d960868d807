"""Scattering into and gathering from tensors at N-d indices: ``scatter_nd``, the
``tensor_scatter_nd_*`` family and the ``gather_nd`` op their gradients use.

Index tuples live in the last axis of ``indices`` and address the leading dimensions of the
target; each kernel turns them into flat positions once (``linear_index``), checking the range on
every call (also in a ``minitf.function`` replay), as TF does on CPU. Ops take a ``batch``
attribute: that many leading dimensions of the target (and of the updates) are carried along
unchanged, which is how rules handle the extra dimensions of a vectorised jacobian.

Repeated indices: ``scatter_nd``, ``_add`` and ``_sub`` sum them, ``_min``/``_max`` combine them,
``_update`` keeps one of them (which one is unspecified, as in TF).
"""
import numpy

from .. import backend as B
from .. import dtypes
from ..tensor import Tensor, host_value
from ._samples import u
from .convert import convert_to_tensor, operand_pair
from .registry import InvalidArgumentError, apply, defop


def _x(x):
    return x if isinstance(x, Tensor) else convert_to_tensor(x)


# --- kernel helpers --------------------------------------------------------------------------

def linear_index(what, indices, dims):
    """Flat int64 positions of the index tuples in the last axis of ``indices`` within ``dims``;
    an InvalidArgumentError names the first tuple out of range."""
    xp = B.xp
    depth = int(indices.shape[-1])
    idx = indices.reshape(-1, depth).astype(numpy.int64)
    n = int(idx.shape[0])
    if depth == 0 or n == 0:
        return xp.zeros(n, dtype=numpy.int64)
    limits = xp.asarray(numpy.asarray(dims, dtype=numpy.int64))
    bad = ((idx < 0) | (idx >= limits)).any(axis=1)
    if bool(bad.any()):
        first = int(xp.argmax(bad))
        raise InvalidArgumentError(
            f"{what}: indices[{first}] = {B.to_numpy(idx[first]).tolist()} does not index into "
            f"shape {list(dims)}")
    strides = numpy.ones(depth, dtype=numpy.int64)
    for i in range(depth - 2, -1, -1):
        strides[i] = strides[i + 1] * int(dims[i + 1])
    return (idx * xp.asarray(strides)).sum(axis=1)


def scatter_reduce(target, axis, positions, values, reduce):
    """In place: combine ``values`` into ``target`` at ``positions`` along ``axis``
    (``values.shape[axis] == len(positions)``), repeated positions combined with ``reduce``:
    ``"add"``, ``"mul"``, ``"max"``, ``"min"`` or ``"update"`` (one of the repeats wins)."""
    xp = B.xp
    key = (slice(None),) * axis + (positions,)
    if reduce == "add":
        B.scatter_add(target, key, values)
    elif reduce == "update":
        target[key] = values
    elif xp is numpy:
        {"mul": numpy.multiply, "max": numpy.maximum, "min": numpy.minimum}[reduce].at(
            target, key, values)
    else:
        _scatter_reduce_sorted(target, axis, positions, values, reduce)
    return target


def _scatter_reduce_sorted(target, axis, positions, values, reduce):
    """``scatter_reduce`` with array functions only (cupy has no ``ufunc.at``): sort by position,
    reduce each run of equal positions with a segmented doubling scan, then write each run's
    result once."""
    xp = B.xp
    n = int(positions.shape[0])
    if n == 0:
        return
    fn = {"mul": xp.multiply, "max": xp.maximum, "min": xp.minimum}[reduce]
    order = xp.argsort(positions, kind="stable")
    pos = positions[order]
    vals = xp.take(values, order, axis=axis)
    lead = (slice(None),) * axis
    tail = (1,) * (vals.ndim - axis - 1)
    step = 1
    while step < n:
        same = (pos[step:] == pos[:-step]).reshape((n - step,) + tail)
        head, prev = vals[lead + (slice(step, None),)], vals[lead + (slice(None, -step),)]
        vals = xp.concatenate([vals[lead + (slice(None, step),)],
                               xp.where(same, fn(head, prev), head)], axis=axis)
        step *= 2
    last = xp.concatenate([pos[1:] != pos[:-1], xp.ones(1, dtype=bool)])
    ends = xp.nonzero(last)[0]
    unique = pos[ends]
    key = lead + (unique,)
    target[key] = fn(target[key], xp.take(vals, ends, axis=axis))


def _layout(what, target, indices, updates, batch):
    """``target`` viewed as ``lead + (positions,) + rest``, the flat positions, and ``updates``
    reshaped to ``lead + (index tuples,) + rest``."""
    depth = int(indices.shape[-1])
    shape = tuple(target.shape)
    dims = shape[batch:batch + depth]
    size = 1
    for d in dims:
        size *= int(d)
    positions = linear_index(what, indices, dims)
    lead, rest = shape[:batch], shape[batch + depth:]
    view = target.reshape(lead + (size,) + rest)
    return view, positions, updates.reshape(lead + (int(positions.shape[0]),) + rest)


def _check_updates(what, indices, updates_shape, shape, batch=0):
    """TF's shape rule: ``updates.shape == indices.shape[:-1] + shape[depth:]``."""
    if len(indices.shape) < 1:
        raise InvalidArgumentError(f"{what}: indices must have at least one dimension, got a "
                                   f"scalar")
    depth = int(indices.shape[-1])
    if depth > len(shape) - batch:
        raise InvalidArgumentError(
            f"{what}: index depth {depth} (last dimension of indices of shape "
            f"{tuple(indices.shape)}) exceeds the rank of shape {tuple(shape)}")
    want = tuple(shape[:batch]) + tuple(indices.shape[:-1]) + tuple(shape[batch + depth:])
    if tuple(updates_shape) != want:
        raise InvalidArgumentError(
            f"{what}: updates must have shape {want} (indices.shape[:-1] + shape[{depth}:]) "
            f"for indices of shape {tuple(indices.shape)} and shape {tuple(shape)}, got "
            f"{tuple(updates_shape)}")


# --- scatter_nd and gather_nd ----------------------------------------------------------------

def _scatter_nd_forward(indices, updates, shape, batch=0):
    """Zeros of ``shape`` with ``updates`` added at ``indices`` (repeats summed)."""
    out = B.xp.zeros(shape, dtype=updates.dtype)
    view, positions, values = _layout("scatter_nd", out, indices, updates, batch)
    scatter_reduce(view, batch, positions, values, "add")
    return out


def _scatter_nd_vjp(F, g, x, y, shape, batch=0):
    return None, F.gather_nd_op(g, x[0], batch=F.nb + batch)


def _gather_nd_forward(params, indices, batch=0):
    """The slices of ``params`` at the index tuples of ``indices``."""
    depth = int(indices.shape[-1])
    shape = tuple(params.shape)
    dims = shape[batch:batch + depth]
    size = 1
    for d in dims:
        size *= int(d)
    positions = linear_index("gather_nd", indices, dims)
    lead, rest = shape[:batch], shape[batch + depth:]
    taken = B.xp.take(params.reshape(lead + (size,) + rest), positions, axis=batch)
    return taken.reshape(lead + tuple(indices.shape[:-1]) + rest)


def _gather_nd_vjp(F, g, x, y, batch=0):
    shape = tuple(g.shape[:F.nb]) + tuple(F.shapes[0])
    return F.scatter_nd(x[1], g, shape=shape, batch=F.nb + batch), None


def _index_samples():
    return numpy.array([[1], [3], [1]]), numpy.array([[0, 1], [2, 0]])


_scatter_nd = defop(
    "scatter_nd", _scatter_nd_forward, arity=2, vjp=_scatter_nd_vjp, jvp="linear", save=(0,),
    type="ScatterNd", samples=lambda: [
        ((_index_samples()[0], u(3, 2)), {"shape": (5, 2)}),
        ((_index_samples()[1], u(2)), {"shape": (3, 2)})])

_gather_nd = defop(
    "gather_nd_op", _gather_nd_forward, arity=2, vjp=_gather_nd_vjp, jvp="linear", save=(1,),
    type="GatherNd", samples=lambda: [((u(4, 3), _index_samples()[0]), {}),
                                      ((u(3, 2), _index_samples()[1]), {})])


# --- tensor_scatter_nd_* ---------------------------------------------------------------------

def _tensor_scatter_forward(mode):
    reduce = {"update": "update", "add": "add", "sub": "add", "min": "min", "max": "max"}[mode]
    what = f"tensor_scatter_nd_{mode}"

    def forward(tensor, indices, updates, batch=0):
        out = B.xp.array(tensor, copy=True)
        view, positions, values = _layout(what, out, indices, updates, batch)
        if mode == "sub":
            values = -values
        scatter_reduce(view, batch, positions, values, reduce)
        return out

    forward.__doc__ = f"``tensor`` with ``updates`` combined in at ``indices`` ({mode})."
    return forward


def _update_vjp(F, g, x, y, batch=0):
    nb = F.nb + batch
    gathered = F.gather_nd_op(g, x[1], batch=nb)
    tensor_grad = None
    if F.needs[0]:
        tensor_grad = F.tensor_scatter_nd_update(g, x[1], F.zeros_like(gathered), batch=nb)
    return tensor_grad, None, gathered


def _add_vjp(F, g, x, y, batch=0):
    return g, None, F.gather_nd_op(g, x[1], batch=F.nb + batch) if F.needs[2] else None


def _sub_vjp(F, g, x, y, batch=0):
    return g, None, -F.gather_nd_op(g, x[1], batch=F.nb + batch) if F.needs[2] else None


def _winners(F, x, y, batch):
    """Indicators of the entries of ``tensor`` and ``updates`` equal to the output they went
    into, and how many entries tie for each output element (at least 1)."""
    tensor, indices, updates = x
    from_tensor = F.cast(F.equal(tensor, y), y.dtype)
    from_updates = F.cast(F.equal(updates, F.gather_nd_op(y, indices, batch=batch)), y.dtype)
    ties = from_tensor + F.scatter_nd(indices, from_updates, shape=tuple(y.shape), batch=batch)
    return from_tensor, from_updates, ties


def _extreme_vjp(F, g, x, y, batch=0):
    # TF's rule: the gradient goes to the entries that won, split evenly between ties.
    from_tensor, from_updates, ties = _winners(F, x, y, batch)
    share = g / ties
    return (share * from_tensor, None,
            F.gather_nd_op(share, x[1], batch=F.nb + batch) * from_updates)


def _extreme_jvp(F, t, x, y, batch=0):
    from_tensor, from_updates, ties = _winners(F, x, y, batch)
    total = None
    if t[0] is not None:
        total = t[0] * from_tensor
    if t[2] is not None:
        part = F.scatter_nd(x[1], t[2] * from_updates, shape=tuple(y.shape), batch=batch)
        total = part if total is None else total + part
    return None if total is None else total / ties


def _tensor_scatter_samples(duplicates):
    index = numpy.array([[1], [3], [1]]) if duplicates else numpy.array([[1], [3]])
    n = index.shape[0]
    return lambda: [((u(5, 2), index, u(n, 2)), {}),
                    ((u(3, 2), numpy.array([[0, 1], [2, 0]]), u(2)), {})]


_TENSOR_SCATTER = {}
for _mode, _type, _vjp, _jvp in (("update", "TensorScatterUpdate", _update_vjp, "linear"),
                                 ("add", "TensorScatterAdd", _add_vjp, "linear"),
                                 ("sub", "TensorScatterSub", _sub_vjp, "linear"),
                                 ("min", "TensorScatterMin", _extreme_vjp, _extreme_jvp),
                                 ("max", "TensorScatterMax", _extreme_vjp, _extreme_jvp)):
    _TENSOR_SCATTER[_mode] = defop(
        f"tensor_scatter_nd_{_mode}", _tensor_scatter_forward(_mode), arity=3, vjp=_vjp,
        jvp=_jvp, save=(0, 1, 2, "out") if _mode in ("min", "max") else (1,), type=_type,
        smooth=_mode not in ("min", "max"),
        kink=("ties split the gradient evenly" if _mode in ("min", "max") else None),
        samples=_tensor_scatter_samples(duplicates=_mode != "update"))


# --- public functions ------------------------------------------------------------------------

def _indices(what, indices):
    indices = _x(indices)
    if indices.dtype not in (dtypes.int32, dtypes.int64):
        raise TypeError(f"{what}: indices must be int32 or int64, got {indices.dtype.name}")
    return indices


def _shape_arg(shape):
    if isinstance(shape, Tensor):
        shape = host_value(shape, "scatter_nd's shape")
    return tuple(int(s) for s in numpy.reshape(numpy.asarray(shape), -1))


def scatter_nd(indices, updates, shape, name=None):
    """A tensor of ``shape`` (zeros) with ``updates`` added at the index tuples in the last axis
    of ``indices``; repeated indices are summed."""
    indices = _indices("scatter_nd", indices)
    updates = _x(updates)
    shape = _shape_arg(shape)
    if any(s < 0 for s in shape):
        raise InvalidArgumentError(f"scatter_nd: shape {shape} has a negative dimension")
    _check_updates("scatter_nd", indices, updates.shape, shape)
    return apply(_scatter_nd.op, (indices, updates), {"shape": shape, "batch": 0})


def _tensor_scatter(mode, tensor, indices, updates):
    what = f"tensor_scatter_nd_{mode}"
    indices = _indices(what, indices)
    tensor, updates = operand_pair(what, tensor, updates)
    _check_updates(what, indices, updates.shape, tuple(tensor.shape))
    return apply(_TENSOR_SCATTER[mode].op, (tensor, indices, updates), {"batch": 0})


def tensor_scatter_nd_update(tensor, indices, updates, name=None):
    """``tensor`` with the slices at ``indices`` replaced by ``updates``."""
    return _tensor_scatter("update", tensor, indices, updates)


def tensor_scatter_nd_add(tensor, indices, updates, name=None):
    """``tensor`` with ``updates`` added at ``indices`` (repeats summed)."""
    return _tensor_scatter("add", tensor, indices, updates)


def tensor_scatter_nd_sub(tensor, indices, updates, name=None):
    """``tensor`` with ``updates`` subtracted at ``indices`` (repeats summed)."""
    return _tensor_scatter("sub", tensor, indices, updates)


def tensor_scatter_nd_min(tensor, indices, updates, name=None):
    """``tensor`` with each element at ``indices`` replaced by the minimum of it and the
    updates going there."""
    return _tensor_scatter("min", tensor, indices, updates)


def tensor_scatter_nd_max(tensor, indices, updates, name=None):
    """``tensor`` with each element at ``indices`` replaced by the maximum of it and the
    updates going there."""
    return _tensor_scatter("max", tensor, indices, updates)
