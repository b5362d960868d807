"""Shape, indexing and joining ops, and tensor constructors.

Rules here are careful with ``F.nb``: during a vectorised jacobian the incoming gradient carries
that many extra leading dimensions, so rules reshape to ``g.shape[:F.nb] + shape`` and count axes
from the end.
"""
import builtins

import numpy

from .. import backend as B
from .. import dtypes, native_nn
from ..tensor import Tensor, host_value, note_shape_read
from ._samples import u
from .convert import convert_to_tensor
from .derived import derived as _derived
from .math_ops import identity, stop_gradient  # noqa: F401 - re-exported
from .math_ops import ones_like_public, zeros_like_public
from .registry import InvalidArgumentError, RAW, TENSOR, apply, as_keras_layer, defop, helper
from .. import slice_cotangent
from ..slice_cotangent import SliceCotangent, add_at


def _x(x):
    return x if isinstance(x, Tensor) else convert_to_tensor(x)


def _shape_tuple(shape):
    if isinstance(shape, Tensor):
        return tuple(int(s) for s in numpy.reshape(host_value(shape, "a shape tensor"), -1))
    if isinstance(shape, (int, numpy.integer)):
        return (int(shape),)
    return tuple(int(s) for s in shape)


def _lead(F, g):
    return tuple(g.shape[:F.nb])


# --- reshape family --------------------------------------------------------------------------

def _reshape_vjp(F, g, x, y, shape):
    return (F.reshape(g, _lead(F, g) + tuple(F.shapes[0])),)


_reshape = defop("reshape", lambda x, shape: B.xp.reshape(x, shape), vjp=_reshape_vjp,
                 jvp="linear", samples=lambda: [((u(3, 4),), {"shape": (2, 6)}),
                                                ((u(2, 3, 2),), {"shape": (-1,)})])


def reshape(tensor, shape, name=None):
    """Same values in a new shape; one dimension may be -1."""
    try:
        x = _x(tensor)
    except TypeError:
        return as_keras_layer(reshape, (tensor, shape), {})
    return apply(_reshape.op, (x,), {"shape": _shape_tuple(shape)})


def _transpose_vjp(F, g, x, y, perm):
    nb = F.nb
    inverse = tuple(int(i) for i in numpy.argsort(perm))
    return (F.transpose(g, tuple(builtins.range(nb)) + tuple(nb + i for i in inverse)),)


_transpose = defop("transpose", lambda x, perm: B.xp.transpose(x, perm), vjp=_transpose_vjp,
                   jvp="linear", samples=lambda: [((u(2, 3, 4),), {"perm": (2, 0, 1)})])


def transpose(a, perm=None, conjugate=False, name=None):
    """Permute dimensions (reverse them when ``perm`` is None)."""
    try:
        a = _x(a)
    except TypeError:
        return as_keras_layer(transpose, (a, perm), {"conjugate": conjugate})
    if perm is None:
        perm = tuple(builtins.range(a.ndim))[::-1]
    perm = tuple(int(p) % max(a.ndim, 1) for p in _shape_tuple(perm))
    if sorted(perm) != list(builtins.range(a.ndim)):
        raise InvalidArgumentError(
            f"transpose: perm {perm} is not a permutation of the {a.ndim} "
            f"dimensions of a tensor of shape {tuple(a.shape)}")
    return apply(_transpose.op, (a,), {"perm": perm})


def matrix_transpose(a, name=None):
    a = _x(a)
    perm = list(builtins.range(a.ndim))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return transpose(a, perm)


def expand_dims(input, axis, name=None):  # noqa: A002 - TF's name
    """Insert a size-1 dimension at ``axis``."""
    try:
        x = _x(input)
    except TypeError:
        return as_keras_layer(expand_dims, (input, axis), {})
    shape = list(x._value.shape)
    axis = int(axis)
    if axis < 0:
        axis += len(shape) + 1
    if not 0 <= axis <= len(shape):
        raise InvalidArgumentError(
            f"expand_dims: axis {axis} out of range for shape {tuple(shape)}")
    shape.insert(axis, 1)
    return reshape(x, shape)


def squeeze(input, axis=None, name=None):  # noqa: A002
    """Remove size-1 dimensions (only those in ``axis`` when given)."""
    try:
        x = _x(input)
    except TypeError:
        return as_keras_layer(squeeze, (input, axis), {})
    shape = x._value.shape
    if axis is None:
        axes = {i for i, s in enumerate(shape) if s == 1}
    else:
        axes = {int(a) % len(shape) for a in ([axis] if numpy.isscalar(axis) else axis)}
        bad = [a for a in axes if shape[a] != 1]
        if bad:
            raise InvalidArgumentError(
                f"squeeze: dimension {bad[0]} of shape {tuple(shape)} is not 1")
    return reshape(x, [s for i, s in enumerate(shape) if i not in axes])


def _broadcast_to_vjp(F, g, x, y, shape):
    return (F.unbroadcast(g, F.shapes[0]),)


_broadcast_to = defop("broadcast_to", lambda x, shape: B.xp.broadcast_to(x, shape),
                      vjp=_broadcast_to_vjp, jvp="linear",
                      samples=lambda: [((u(3, 1),), {"shape": (2, 3, 4)})])


def broadcast_to(input, shape, name=None):  # noqa: A002
    return apply(_broadcast_to.op, (_x(input),), {"shape": _shape_tuple(shape)})


def _sum_to_forward(x, shape):
    """Sum ``x`` down to ``shape`` (undoing broadcasting): leading axes, then size-1 axes."""
    if (x.ndim == 2 and len(shape) == 1 and shape[0] == x.shape[1] and x.dtype.kind == "f"
            and x.itemsize >= 4 and x.flags.c_contiguous):   # a bias gradient: the hot case
        return _ones(x.shape[0], x.dtype) @ x
    lead = x.ndim - len(shape)
    axes = tuple(builtins.range(lead)) + tuple(lead + i for i, s in enumerate(shape)
                                      if s == 1 and x.shape[lead + i] != 1)
    if not axes:
        return x
    if (axes == tuple(builtins.range(x.ndim - 1)) and len(shape) == 1 and x.ndim > 2
            and type(x) is numpy.ndarray and native_nn.pays(x)):
        # A convolution's bias gradient: each image's channel sums in float64, added image
        # after image. The fused pooling gradient of the step before may have left them: the
        # entry sits on that identity-cache op's output (never overwritten in place) and is
        # taken here, its one reader.
        sums = _derived.take(x, image_sums_key(x))
        if sums is None:
            sums = native_nn.image_sums(x)
        if sums is not None:
            return sums.sum(axis=0).astype(x.dtype)
    if (axes == tuple(builtins.range(len(axes))) and x.dtype.kind == "f" and x.itemsize >= 4
            and x.flags.c_contiguous and x.ndim > 1):
        # Summing leading axes (a bias gradient) as ones @ x runs on BLAS: 3x faster than a
        # reduction over non-last axes, and it accumulates blockwise (no less accurately).
        rows = x.reshape(-1, int(numpy.prod(x.shape[len(axes):], dtype=numpy.int64)))
        return (_ones(rows.shape[0], x.dtype) @ rows).reshape(shape)
    out = x.sum(axis=axes, keepdims=True)
    return out.reshape(shape) if lead or out.shape != tuple(shape) else out


def image_sums_key(x):
    """The derived-cache key of ``x``'s per-image channel sums (``native_nn.image_sums``)."""
    return ("image_sums", x.shape, x.dtype)


_ONES = {}


def _ones(n, dtype):
    """A cached vector of ones (one per length, dtype and backend)."""
    key = (n, dtype, B.get_backend())
    ones = _ONES.get(key)
    if ones is None:
        if len(_ONES) > 64:
            _ONES.clear()
        ones = _ONES[key] = B.xp.ones(n, dtype=dtype)
    return ones


def _sum_to_vjp(F, g, x, y, shape):
    lead, xshape = _lead(F, g), tuple(F.shapes[0])
    extra = len(xshape) - len(shape)
    if lead and extra:  # align the summed shape with x's trailing axes, after the batch axes
        g = F.reshape(g, lead + (1,) * extra + tuple(shape))
    return (F.broadcast_to(g, lead + xshape),)


sum_to = defop("sum_to", _sum_to_forward, vjp=_sum_to_vjp, jvp="linear",
               samples=lambda: [((u(2, 3, 4),), {"shape": (3, 1)}),
                                ((u(2, 3, 4),), {"shape": (2, 1, 4)})])


@helper
def unbroadcast(F, g, shape):
    """Sum ``g`` back to an input's ``shape``, keeping ``F.nb`` leading batch dimensions."""
    lead, shape = _lead(F, g), tuple(shape)
    extra = len(g.shape) - len(lead) - len(shape)
    if lead and extra:
        return F.reshape(F.sum_to(g, lead + (1,) * extra + shape), lead + shape)
    return F.sum_to(g, lead + shape)


# --- indexing --------------------------------------------------------------------------------

def _scatter_add(target, key, values):
    B.scatter_add(target, key, values)
    return target


def _getitem_vjp(F, g, x, y, key):
    dtype = getattr(g, "_value", g).dtype     # a Tensor's in a recorded pass
    if not F.nb and dtype.kind == "f" and slice_cotangent.ENABLED:
        # kept as a piece: the slices of one tensor add up without a zero-fill each (complex
        # rules conjugate their results: those stay dense)
        return (SliceCotangent(F.shapes[0], dtype, [(key, g)]),)
    return (F.getitem_grad(g, shape=_lead(F, g) + tuple(F.shapes[0]),
                           key=(slice(None),) * F.nb + key),)


_getitem = defop("getitem", lambda x, key: x[key], vjp=_getitem_vjp, jvp="linear",
                 type="StridedSlice", aliases=("strided_slice",),
                 samples=lambda: [((u(4, 5),), {"key": (slice(1, 3), slice(None, None, 2))}),
                                  ((u(4, 5),), {"key": (numpy.array([0, 2, 2]),)}),
                                  ((u(4, 5),), {"key": (Ellipsis, 1)}),
                                  ((u(4, 5),), {"key": (None, slice(None), 3)})])


def _getitem_grad_forward(g, shape, key):
    return add_at(B.xp.zeros(shape, dtype=g.dtype), key, g)


def _getitem_grad_vjp(F, g, x, y, shape, key):
    return (F.getitem(g, key=(slice(None),) * F.nb + key),)


def _slice_pieces_forward(*values, shape, keys):
    return slice_cotangent.assemble(shape, values[0].dtype, zip(keys, values))


def _slice_pieces_vjp(F, g, x, y, shape, keys):
    lead = (slice(None),) * F.nb
    return tuple(F.getitem(g, key=lead + key) if need else None
                 for need, key in zip(F.needs, keys))


# The gradient of several slices of one tensor (``minitf.slice_cotangent`` on Tensors: a
# traced or recorded backward pass): zeros of ``shape`` with each value added at its key.
_slice_pieces = defop("slice_pieces", _slice_pieces_forward, arity=-1, vjp=_slice_pieces_vjp,
                      jvp="linear",
                      samples=lambda: [((u(2, 3), u(2, 3)), {
                          "shape": (4, 3), "keys": ((slice(0, 2),), (slice(1, 3),))}),
                          ((u(2,), u(3, 2)), {"shape": (3, 2), "keys": (
                              (1,), (numpy.array([0, 0, 2]),))})])


def slice_pieces(values, shape, keys):
    """Zeros of ``shape`` with each of ``values`` added at its key of ``keys``."""
    return apply(_slice_pieces.op, tuple(values), {"shape": tuple(shape), "keys": tuple(keys)})


_getitem_grad = defop("getitem_grad", _getitem_grad_forward, vjp=_getitem_grad_vjp, jvp="linear",
                      samples=lambda: [((u(2, 3),), {"shape": (4, 3),
                                                     "key": (numpy.array([1, 1]),)})])


def _index_key(key):
    if not isinstance(key, tuple):
        key = (key,)
    out = []
    for k in key:
        if isinstance(k, Tensor):
            k = k._value
        elif isinstance(k, list):
            k = B.xp.asarray(k)
        elif isinstance(k, numpy.ndarray) and B.xp is not numpy:
            k = B.xp.asarray(k)
        out.append(k)
    return tuple(out)


def getitem(tensor, key):
    """``tensor[key]``: basic slicing, ``None``/``...``, integer and boolean array indexing."""
    x = _x(tensor)
    parts = key if isinstance(key, tuple) else (key,)
    at = [i for i, k in enumerate(parts) if isinstance(k, Tensor)]
    if len(at) == 1:
        out = _getitem_tensor_index(x, parts, at[0])
        if out is not None:
            return out
    return apply(_getitem.op, (x,), {"key": _index_key(key)})


def _getitem_tensor_index(x, parts, pos):
    """``x[parts]`` with one Tensor index, as ops rather than an index baked into an attribute
    (so a traced function replays it on new indices): basic slicing, then ``gather`` (integers)
    or ``boolean_mask`` (bools) along the indexed axis. None where numpy's rules for mixing
    advanced indices would place the axes differently (the attribute path handles those)."""
    index = parts[pos]
    others = parts[:pos] + parts[pos + 1:]
    is_bool = index._value.dtype.kind == "b"
    if (index._value.dtype.kind not in "biu" or (is_bool and index.ndim == 0)
            or any(isinstance(k, (Tensor, list)) or B.is_array(k) for k in others)
            or (index.ndim and any(isinstance(k, (int, numpy.integer)) for k in others))):
        return None
    width = index.ndim if is_bool else 1
    consumed = width + sum(1 for k in others if k is not None and k is not Ellipsis)
    axis = 0
    for k in parts[:pos]:
        axis += x.ndim - consumed if k is Ellipsis else (0 if isinstance(k, (int, numpy.integer))
                                                         else 1)
    basic = parts[:pos] + (slice(None),) * width + parts[pos + 1:]
    y = x if all(k == slice(None) for k in basic) else getitem(x, basic)
    if is_bool:
        return boolean_mask(y, index, axis=axis)
    return apply(_gather.op, (y, index), {"axis": axis})


def _gather_forward(params, indices, axis=0):
    """Slices of ``params`` along ``axis`` at ``indices`` (any shape)."""
    return B.xp.take(params, indices, axis=axis)


def _gather_vjp(F, g, x, y, axis=0):
    shape = _lead(F, g) + tuple(F.shapes[0])
    return F.gather_grad(g, x[1], shape=shape, axis=F.nb + axis), None


_gather = defop("gather", _gather_forward, arity=2, vjp=_gather_vjp, jvp="linear", save=(1,),
                type="GatherV2", samples=lambda: [
                    ((u(4, 3), numpy.array([[2, 0], [2, 3]])), {"axis": 0}),
                    ((u(2, 5), numpy.array([4, 4, 1])), {"axis": 1})])


def _gather_grad_forward(g, indices, shape, axis):
    """The adjoint of ``gather``: add the slices of ``g`` into zeros of ``shape`` at ``indices``."""
    out = B.xp.zeros(shape, dtype=g.dtype)
    return _scatter_add(out, (slice(None),) * axis + (indices,), g)


def _gather_grad_vjp(F, g, x, y, shape, axis):
    return F.gather(g, x[1], axis=F.nb + axis), None


_gather_grad = defop("gather_grad", _gather_grad_forward, arity=2, vjp=_gather_grad_vjp,
                     jvp="linear", save=(1,), samples=lambda: [
                         ((u(2, 3), numpy.array([1, 1])), {"shape": (4, 3), "axis": 0})])


def gather(params, indices, validate_indices=None, axis=None, batch_dims=0, name=None):
    """Slices of ``params`` along ``axis`` at integer ``indices``: shape
    ``params.shape[:axis] + indices.shape + params.shape[axis + 1:]``."""
    try:
        params = _x(params)
        indices = _x(indices)
    except TypeError:
        return as_keras_layer(gather, (params, indices), {"axis": axis, "batch_dims": batch_dims})
    if batch_dims:
        from .misc_ops import gather_batched
        return gather_batched(params, indices, axis, batch_dims)
    if indices._value.dtype.kind not in "iu":
        raise TypeError(f"gather: indices must be integers, got {indices.dtype.name}")
    axis = 0 if axis is None else int(axis) % params.ndim
    n = params._value.shape[axis]
    idx = indices._value
    if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= n):
        raise InvalidArgumentError(
            f"gather: indices out of range [0, {n}) for axis {axis} of params "
                         f"shape {tuple(params.shape)}")
    return apply(_gather.op, (params, indices), {"axis": axis})


def boolean_mask(tensor, mask, axis=None, name=None):
    """The elements (or slices) of ``tensor`` where ``mask`` is true."""
    from .math_ops import where
    tensor, mask = _x(tensor), _x(mask)
    axis = 0 if axis is None else int(axis)
    ms, ts = tuple(mask._value.shape), tuple(tensor._value.shape)
    if ts[axis:axis + len(ms)] != ms:
        raise ValueError(f"boolean_mask: mask shape {ms} does not match tensor shape {ts} at "
                         f"axis {axis}")
    # As ops (not a key baked into an attribute), so a traced function replays it on new masks.
    merged = ts[:axis] + (int(numpy.prod(ms, dtype=numpy.int64)),) + ts[axis + len(ms):]
    hits = reshape(where(reshape(mask, (-1,))), (-1,))
    return gather(reshape(tensor, merged), hits, axis=axis)


# --- joining and splitting -------------------------------------------------------------------

def _concat_forward(*xs, axis):
    return B.xp.concatenate(xs, axis=axis)


def _concat_vjp(F, g, x, y, axis):
    shapes = F.shapes
    ndim = len(shapes[0])
    axis = axis % ndim - ndim  # from the end, so leading batch dims do not shift it
    grads, start = [], 0
    for shape in shapes:
        stop = start + shape[axis]
        grads.append(F.getitem(g, key=(Ellipsis, slice(start, stop)) + (slice(None),) * (-axis - 1)))
        start = stop
    return tuple(grads)


_concat = defop("concat", _concat_forward, arity=-1, vjp=_concat_vjp, jvp="linear",
                type="ConcatV2", samples=lambda: [((u(2, 3), u(2, 1)), {"axis": 1}),
                                                  ((u(1, 3), u(2, 3), u(1, 3)), {"axis": 0})])


def concat(values, axis, name=None):
    """Join tensors along an existing ``axis``."""
    try:
        values = [_x(v) for v in values]
    except TypeError:
        return as_keras_layer(concat, (list(values), axis), {})
    _same_dtype("concat", values)
    if len(values) == 1:
        return values[0]
    ndim = values[0].ndim
    return apply(_concat.op, tuple(values), {"axis": int(axis) % max(ndim, 1)})


def _same_dtype(what, values):
    kinds = {v._value.dtype for v in values}
    if len(kinds) > 1:
        raise TypeError(f"{what}: all tensors need the same dtype, got "
                        f"{[v.dtype.name for v in values]}")


def stack(values, axis=0, name=None):
    """Join tensors along a new ``axis``."""
    try:
        values = [_x(v) for v in values]
    except TypeError:
        return as_keras_layer(stack, (list(values), axis), {})
    if not values:
        raise ValueError("stack: needs at least one tensor")
    shapes = {tuple(v._value.shape) for v in values}
    if len(shapes) > 1:
        raise InvalidArgumentError(
            f"stack: all tensors need the same shape, got {sorted(shapes)}")
    ndim = values[0].ndim + 1
    axis = int(axis) % ndim
    return concat([expand_dims(v, axis) for v in values], axis)


def unstack(value, num=None, axis=0, name=None):
    """Split along ``axis`` into a list of tensors with that dimension removed."""
    value = _x(value)
    axis = int(axis) % value.ndim
    n = value._value.shape[axis]
    return [getitem(value, (slice(None),) * axis + (i,)) for i in builtins.range(n)]


def split(value, num_or_size_splits, axis=0, num=None, name=None):
    """Split along ``axis`` into equal parts (an int) or parts of the given sizes."""
    try:
        value = _x(value)
    except TypeError:
        return as_keras_layer(split, (value, num_or_size_splits, axis, num), {})
    axis = int(axis) % value.ndim
    dim = value._value.shape[axis]
    if isinstance(num_or_size_splits, (int, numpy.integer)):
        k = int(num_or_size_splits)
        if k <= 0 or dim % k:
            raise InvalidArgumentError(
                f"split: dimension {axis} of size {dim} cannot be split into {k} "
                f"equal parts")
        sizes = [dim // k] * k
    else:
        sizes = [int(s) for s in _shape_tuple(num_or_size_splits)]
        if -1 in sizes:
            sizes[sizes.index(-1)] = dim - (sum(sizes) + 1)
        if sum(sizes) != dim:
            raise InvalidArgumentError(
                f"split: sizes {sizes} do not add up to dimension {axis} of size "
                f"{dim}")
    out, start = [], 0
    for s in sizes:
        out.append(getitem(value, (slice(None),) * axis + (slice(start, start + s),)))
        start += s
    return out


def _tile_vjp(F, g, x, y, multiples):
    shape = F.shapes[0]
    lead = _lead(F, g)
    split_shape = lead
    for m, s in zip(multiples, shape):
        split_shape += (m, s)
    gs = F.reshape(g, split_shape)
    nb = F.nb
    axes = tuple(nb + 2 * i for i in builtins.range(len(shape)))
    return (F.reshape(F.reduce_sum(gs, axis=axes), lead + tuple(shape)),)


_tile = defop("tile", lambda x, multiples: B.xp.tile(x, multiples), vjp=_tile_vjp, jvp="linear",
              samples=lambda: [((u(2, 3),), {"multiples": (2, 3)})])


def tile(input, multiples, name=None):  # noqa: A002
    try:
        x = _x(input)
    except TypeError:
        return as_keras_layer(tile, (input, multiples), {})
    multiples = _shape_tuple(multiples)
    if len(multiples) != x.ndim:
        raise InvalidArgumentError(
            f"tile: multiples {multiples} must have one entry per dimension of "
            f"shape {tuple(x.shape)}")
    return apply(_tile.op, (x,), {"multiples": multiples})


def repeat(input, repeats, axis=None, name=None):  # noqa: A002
    """Repeat each element (or slice along ``axis``) ``repeats`` times, as ``numpy.repeat``;
    ``repeats`` is one count or one per slice. Without ``axis`` the input is flattened first.
    The counts must be known when the op runs (as a Python value or an eager tensor)."""
    x = _x(input)
    if axis is None:
        x, axis = reshape(x, [-1]), 0
    axis = int(axis) % max(x.ndim, 1)
    # Tensor.numpy(): inside a function trace a traced count raises instead of being baked in.
    counts = numpy.asarray(repeats.numpy() if isinstance(repeats, Tensor) else repeats)
    n = x._value.shape[axis]
    if counts.ndim > 1 or (counts.ndim == 1 and counts.size not in (1, n)) or (counts < 0).any():
        raise InvalidArgumentError(
            f"repeat: repeats {counts.tolist()} must be one non-negative count or one per slice "
            f"of axis {axis} (size {n}) of shape {tuple(x.shape)}")
    index = numpy.repeat(numpy.arange(n, dtype=numpy.int32), counts.reshape(-1)
                         if counts.size > 1 else int(counts.reshape(-1)[0]))
    return gather(x, index, axis=axis)


def _pad_forward(x, paddings, constant_values=0, mode="CONSTANT"):
    xp = B.xp
    if mode == "CONSTANT":
        return xp.pad(x, paddings, mode="constant", constant_values=constant_values)
    return xp.pad(x, paddings, mode={"REFLECT": "reflect", "SYMMETRIC": "symmetric"}[mode])


def _pad_vjp(F, g, x, y, paddings, constant_values=0, mode="CONSTANT"):
    if mode != "CONSTANT":
        return (_mirror_fold(F, g, paddings, F.shapes[0], mode == "SYMMETRIC"),)
    key = (Ellipsis,) + tuple(slice(lo, lo + s) for (lo, _), s in zip(paddings, F.shapes[0]))
    return (F.getitem(g, key=key),)


def _mirror_fold(F, g, paddings, shape, symmetric):
    """REFLECT/SYMMETRIC pad's gradient: fold each padded border back onto the edge it mirrors."""
    s = 0 if symmetric else 1  # REFLECT skips the edge element itself
    d = len(shape)
    for a, ((lo, hi), n) in enumerate(zip(paddings, shape)):
        if not (lo or hi):
            continue
        tail = (slice(None),) * (d - 1 - a)
        before = ((0, 0),) * (len(g.shape) - d + a)
        out = F.getitem(g, key=(Ellipsis, slice(lo, lo + n)) + tail)
        if lo:
            left = F.getitem(g, key=(Ellipsis, slice(lo - 1, None, -1)) + tail)
            out = out + F.pad(left, paddings=before + ((s, n - s - lo),) + ((0, 0),) * len(tail))
        if hi:
            right = F.getitem(g, key=(Ellipsis, slice(lo + n + hi - 1, lo + n - 1, -1)) + tail)
            out = out + F.pad(right, paddings=before + ((n - s - hi, s),) + ((0, 0),) * len(tail))
        g = out
    return g


_pad = defop("pad", _pad_forward, vjp=_pad_vjp, jvp="linear", type="PadV2",
             samples=lambda: [((u(2, 3),), {"paddings": ((1, 0), (2, 1))}),
                              ((u(3, 4),), {"paddings": ((2, 1), (1, 3)), "mode": "REFLECT"}),
                              ((u(3, 4),), {"paddings": ((0, 3), (2, 1)), "mode": "SYMMETRIC"})])


def pad(tensor, paddings, mode="CONSTANT", constant_values=0, name=None):
    """Pad with ``paddings[i] = (before, after)`` for each dimension."""
    try:
        x = _x(tensor)
    except TypeError:
        return as_keras_layer(pad, (tensor, paddings, mode, constant_values), {})
    mode = mode.upper()
    if mode not in ("CONSTANT", "REFLECT", "SYMMETRIC"):
        raise ValueError(f"pad: mode must be CONSTANT, REFLECT or SYMMETRIC, got {mode!r}")
    paddings = numpy.asarray(host_value(paddings, "pad's paddings") if isinstance(paddings, Tensor)
                             else paddings, dtype=int)
    if paddings.shape != (x.ndim, 2):
        raise ValueError(f"pad: paddings must have shape ({x.ndim}, 2) for a tensor of shape "
                         f"{tuple(x.shape)}, got {paddings.shape}")
    pads = tuple((int(a), int(b)) for a, b in paddings)
    limit = {"CONSTANT": None, "REFLECT": 1, "SYMMETRIC": 0}[mode]
    if limit is not None and any(max(p) > n - limit for p, n in zip(pads, x._value.shape)):
        raise ValueError(f"pad: {mode} paddings {pads} must be at most the dimension"
                         f"{' - 1' if limit else ''} of shape {tuple(x.shape)}")
    return apply(_pad.op, (x,), {"paddings": pads, "constant_values": constant_values,
                                 "mode": mode})


def _cumsum_forward(x, axis=0, exclusive=False, reverse=False):
    xp = B.xp
    if reverse:
        x = xp.flip(x, axis)
    out = xp.cumsum(x, axis=axis, dtype=x.dtype)
    if exclusive:
        out = out - x
    return xp.flip(out, axis) if reverse else out


def _cumsum_vjp(F, g, x, y, axis=0, exclusive=False, reverse=False):
    ndim = len(F.shapes[0])
    axis = axis % ndim - ndim + g.ndim  # the same axis counted in g (which may carry batch dims)
    return (F.cumsum_op(g, axis=axis, exclusive=exclusive, reverse=not reverse),)


_cumsum = defop("cumsum_op", _cumsum_forward, vjp=_cumsum_vjp, jvp="linear", type="Cumsum",
                samples=lambda: [((u(3, 4),), {"axis": 1}),
                                 ((u(3, 4),), {"axis": 0, "exclusive": True, "reverse": True})])


def cumsum(x, axis=0, exclusive=False, reverse=False, name=None):
    """Cumulative sum along ``axis``."""
    x = _x(x)
    return apply(_cumsum.op, (x,), {"axis": int(axis) % max(x.ndim, 1),
                                    "exclusive": bool(exclusive), "reverse": bool(reverse)})


def _one_hot_forward(indices, depth, on_value=1, off_value=0, axis=-1, dtype=numpy.float32):
    xp = B.xp
    hot = indices[..., None] == xp.arange(depth)
    out = xp.where(hot, on_value, off_value).astype(dtype)
    return out if axis == -1 else xp.moveaxis(out, -1, axis)


_one_hot = defop("one_hot", _one_hot_forward, type="OneHot")


def one_hot(indices, depth, on_value=None, off_value=None, axis=-1, dtype=None, name=None):
    """One-hot encoding of integer ``indices``; -1 or out of range: zeros.

    The dtype is ``dtype``, else that of ``on_value``/``off_value`` (int32 for Python ints),
    else float32; a TypeError when these disagree, as in TF.
    """
    given = {k: convert_to_tensor(v, dtype_hint=dtype) for k, v in
             (("on_value", on_value), ("off_value", off_value)) if v is not None}
    found = {t.dtype for t in given.values()}
    if dtype is not None:
        dtype = dtypes.as_dtype(dtype)
    else:
        dtype = next(iter(found)) if found else dtypes.float32
    if found - {dtype}:
        raise TypeError(f"one_hot: dtypes disagree: dtype={dtype.name}, " + ", ".join(
            f"{k} {t.dtype.name}" for k, t in given.items()))
    values = {k: host_value(t, "one_hot's values").item() for k, t in given.items()}
    return apply(_one_hot.op, (_x(indices),), {
        "depth": int(depth), "on_value": values.get("on_value", 1),
        "off_value": values.get("off_value", 0), "axis": int(axis), "dtype": dtype.np})


# --- constructors ----------------------------------------------------------------------------

def _dt(dtype, default="float32"):
    return dtypes.as_dtype(dtype if dtype is not None else default).np


def constant(value, dtype=None, shape=None, name=None):
    """A tensor from a Python value or array; Python floats become float32, ints int32."""
    t = convert_to_tensor(value, dtype=dtype) if not isinstance(value, Tensor) else (
        Tensor(B.xp.array(value._value)) if dtype is None else
        Tensor(value._value.astype(dtypes.as_dtype(dtype).np)))
    if t._value is value:   # an array of the right dtype: the constant must not alias it
        t = Tensor(B.xp.array(value, copy=True))
    if shape is not None:
        shape = _shape_tuple(shape)
        v = t._value
        t = Tensor(B.xp.broadcast_to(v, shape).copy() if v.size == 1 else v.reshape(shape))
    return t


def zeros(shape, dtype=None, name=None):
    if dtype is not None and dtypes.as_dtype(dtype) is dtypes.string:   # TF: empty strings
        return Tensor(numpy.full(_shape_tuple(shape), b"", object))
    return Tensor(B.xp.zeros(_shape_tuple(shape), dtype=_dt(dtype)))


def ones(shape, dtype=None, name=None):
    return Tensor(B.xp.ones(_shape_tuple(shape), dtype=_dt(dtype)))


def fill(dims, value, name=None):
    """A tensor of shape ``dims`` holding the scalar ``value`` (an op of ``value``: traced
    functions replay it with each call's value, and its gradient is the sum)."""
    v = convert_to_tensor(value)
    if v._value.ndim != 0:
        raise InvalidArgumentError(f"fill: value must be a scalar, got shape {tuple(v.shape)}")
    return broadcast_to(v, _shape_tuple(dims))


def eye(num_rows, num_columns=None, batch_shape=None, dtype=None, name=None):
    out = B.xp.eye(int(num_rows), None if num_columns is None else int(num_columns),
                   dtype=_dt(dtype))
    if batch_shape is not None:
        out = B.xp.broadcast_to(out, _shape_tuple(batch_shape) + out.shape).copy()
    return Tensor(out)


def linspace(start, stop, num, name=None, axis=0):
    """``num`` evenly spaced values from ``start`` to ``stop``; a Python bound takes the
    other bound's float dtype (``linspace(float64 tensor, 0.3, 4)`` ends at the double 0.3)."""
    if isinstance(stop, Tensor) and not isinstance(start, Tensor):
        stop = convert_to_tensor(stop)
        start = convert_to_tensor(start, dtype=stop.dtype if stop.dtype.is_floating else None)
    else:
        start = convert_to_tensor(start)
        stop = convert_to_tensor(stop, dtype=start.dtype if start.dtype.is_floating
                                 and not isinstance(stop, Tensor) else None)
    dtype = start._value.dtype if start._value.dtype.kind == "f" else numpy.float32
    return Tensor(B.xp.linspace(start._value, stop._value, int(num), dtype=dtype, axis=axis))


_RANGE_DTYPES = ("int32", "int64", "float32", "float64")


def range(start, limit=None, delta=1, dtype=None, name=None):  # noqa: A001 - TF's name
    """Like Python's range. Without ``dtype``, the widest of the arguments' dtypes in TF's order
    int32 < int64 < float32 < float64 (Python ints int32, floats float32)."""
    if limit is None:
        start, limit = 0, start
    args = (start, limit, delta)
    if dtype is None:
        kinds = [v.dtype.name if isinstance(v, Tensor) else convert_to_tensor(v).dtype.name
                 for v in args]
        dtype = max(kinds, key=lambda k: _RANGE_DTYPES.index(k) if k in _RANGE_DTYPES else 2)
    vals = [host_value(v, "tf.range's bounds") if isinstance(v, Tensor) else v for v in args]
    return Tensor(B.xp.arange(*vals, dtype=_dt(dtype)))


def shape(input, out_type=None, name=None):  # noqa: A002
    x = _x(input)
    note_shape_read(x, "tf.shape")
    return Tensor(B.xp.asarray(x._value.shape, dtype=_dt(out_type, "int32")))


def size(input, out_type=None, name=None):  # noqa: A002
    x = _x(input)
    note_shape_read(x, "tf.size")
    return Tensor(B.xp.asarray(x._value.size, dtype=_dt(out_type, "int32")))


def rank(input, name=None):  # noqa: A002
    return Tensor(B.xp.asarray(_x(input).ndim, dtype="int32"))


# One definition each, in math_ops (which cannot import this module).
zeros_like = zeros_like_public
ones_like = ones_like_public


def _install_rule_versions():
    TENSOR.reshape = reshape
    TENSOR.transpose = transpose
    TENSOR.broadcast_to = broadcast_to
    TENSOR.stack = stack
    TENSOR.getitem = lambda x, key: apply(_getitem.op, (_x(x),), {"key": key})
    RAW.getitem = lambda x, key: x[key]
    RAW.stack = lambda xs: B.xp.stack(xs)


_install_rule_versions()
