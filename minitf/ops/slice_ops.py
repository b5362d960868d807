"""TF's slicing functions: ``slice``, ``strided_slice``, ``reverse`` and ``roll``.

``slice``, ``strided_slice`` and ``reverse`` become an index key for the ``getitem`` op (TF's
StridedSlice), so they share its gradient. Their begin/end/size/axis arguments are read when the
op is built: inside a ``minitf.function`` a tensor there is read as a value (the replay checks it
did not change, else traces again).
"""
import builtins

import numpy

from .. import backend as B
from ..tensor import Tensor, host_value
from ._samples import u
from .array_ops import getitem
from .convert import convert_to_tensor
from .registry import InvalidArgumentError, apply, defop


def _x(x):
    return x if isinstance(x, Tensor) else convert_to_tensor(x)


def _ints(value, what):
    """A Python list of ints from a list, array or tensor (a scalar gives one entry)."""
    if isinstance(value, Tensor):
        if value.dtype.is_floating:
            raise TypeError(f"{what} must be integers, got {value.dtype.name}")
        value = host_value(value, what)
    arr = numpy.asarray(value)
    if arr.size == 0:
        return []
    if arr.dtype.kind not in "iu":
        raise TypeError(f"{what} must be integers, got {arr.dtype}")
    return [int(v) for v in arr.reshape(-1)]


def slice(input_, begin, size, name=None):  # noqa: A001 - TF's name
    """The block of ``input_`` starting at ``begin`` with extent ``size`` per dimension;
    a size of -1 takes everything to the end of that dimension."""
    x = _x(input_)
    begin, size = _ints(begin, "slice: begin"), _ints(size, "slice: size")
    shape = tuple(x.shape)
    if len(begin) != len(shape) or len(size) != len(shape):
        raise InvalidArgumentError(
            f"slice: begin {begin} and size {size} need one entry per dimension of the input "
            f"of shape {shape}")
    key = []
    for i, (b, s, n) in enumerate(zip(begin, size, shape)):
        if not 0 <= b <= n:
            raise InvalidArgumentError(
                f"slice: expected begin[{i}] in [0, {n}] for input shape {shape}, got {b}")
        if s == -1:
            s = n - b
        if not 0 <= s <= n - b:
            raise InvalidArgumentError(
                f"slice: expected size[{i}] in [0, {n - b}] (begin {b}, input shape {shape}), "
                f"got {s}")
        key.append(builtins.slice(b, b + s))
    return getitem(x, tuple(key))


def _bit(mask, i):
    return bool((int(mask) >> i) & 1)


def strided_slice(input_, begin, end, strides=None, begin_mask=0, end_mask=0, ellipsis_mask=0,
                  new_axis_mask=0, shrink_axis_mask=0, var=None, name=None):
    """``input_[begin:end:strides]`` per dimension, with TF's masks: bit ``i`` of
    ``begin_mask``/``end_mask`` ignores ``begin[i]``/``end[i]`` (the widest range),
    ``ellipsis_mask`` puts ``...`` at position ``i``, ``new_axis_mask`` inserts a size-1
    dimension and ``shrink_axis_mask`` takes the single index ``begin[i]``, removing the
    dimension. Out-of-range bounds are clamped, as in Python."""
    if var is not None:
        raise NotImplementedError("strided_slice: var (sliced assignment) is not supported")
    x = _x(input_)
    begin, end = _ints(begin, "strided_slice: begin"), _ints(end, "strided_slice: end")
    strides = [1] * len(begin) if strides is None else _ints(strides, "strided_slice: strides")
    if not len(begin) == len(end) == len(strides):
        raise InvalidArgumentError(
            f"strided_slice: begin {begin}, end {end} and strides {strides} must have the same "
            f"length")
    if bin(int(ellipsis_mask)).count("1") > 1:
        raise InvalidArgumentError(
            f"strided_slice: only one bit of ellipsis_mask may be set, got {ellipsis_mask}")
    kinds = []
    for i in range(len(begin)):
        if _bit(ellipsis_mask, i):
            kinds.append("...")
        elif _bit(new_axis_mask, i):
            kinds.append("new")
        elif _bit(shrink_axis_mask, i):
            kinds.append("index")
        else:
            kinds.append("slice")
    shape = tuple(x.shape)
    consumed = sum(k in ("index", "slice") for k in kinds)
    if consumed > len(shape):
        raise InvalidArgumentError(
            f"strided_slice: {consumed} sliced dimensions for an input of shape {shape}")
    key, dim = [], 0
    for i, kind in enumerate(kinds):
        if kind == "...":
            key.append(Ellipsis)
            dim += len(shape) - consumed
        elif kind == "new":
            key.append(None)
        elif kind == "index":
            n, b = shape[dim], begin[i]
            if not -n <= b < n:
                raise InvalidArgumentError(
                    f"strided_slice: slice index {b} of dimension {dim} out of bounds for input "
                    f"shape {shape}")
            key.append(b)
            dim += 1
        else:
            if strides[i] == 0:
                raise InvalidArgumentError(f"strided_slice: strides[{i}] must be non-zero")
            key.append(builtins.slice(None if _bit(begin_mask, i) else begin[i],
                                      None if _bit(end_mask, i) else end[i], strides[i]))
            dim += 1
    return getitem(x, tuple(key))


def _axes(axis, ndim, what):
    axes = _ints(axis, f"{what}: axis")
    out = []
    for i, a in enumerate(axes):
        if not -ndim <= a < ndim:
            raise InvalidArgumentError(
                f"{what}: axis[{i}] = {a} is out of the valid range [{-ndim}, {ndim}) for a "
                f"tensor of rank {ndim}")
        out.append(a % ndim)
    return out


def reverse(tensor, axis, name=None):
    """``tensor`` with the order of elements reversed along each axis in ``axis``."""
    x = _x(tensor)
    axes = _axes(axis, x.ndim, "reverse")
    if len(set(axes)) != len(axes):
        raise InvalidArgumentError(f"reverse: an axis is given more than once in {list(axis)}")
    if not axes:
        return getitem(x, (Ellipsis,))
    key = tuple(builtins.slice(None, None, -1) if d in axes else builtins.slice(None)
                for d in range(x.ndim))
    return getitem(x, key)


def _roll_forward(x, shift, axis):
    """Elements shifted by ``shift`` along ``axis`` (tuples), wrapping around."""
    return B.xp.roll(x, shift, axis)


def _roll_vjp(F, g, x, y, shift, axis):
    return (F.roll(g, shift=tuple(-s for s in shift), axis=tuple(a + F.nb for a in axis)),)


_roll = defop("roll", _roll_forward, vjp=_roll_vjp, jvp="linear", type="Roll",
              samples=lambda: [((u(3, 4),), {"shift": (1,), "axis": (1,)}),
                               ((u(2, 3, 4),), {"shift": (-1, 5, 2), "axis": (0, 2, 0)})])


def roll(input, shift, axis, name=None):  # noqa: A002 - TF's name
    """Shift elements along ``axis`` by ``shift`` (a scalar or one per axis), wrapping around;
    shifts given for the same axis add up."""
    x = _x(input)
    shifts = _ints(shift, "roll: shift")
    axes = _axes(axis, max(x.ndim, 1), "roll")
    if len(shifts) != len(axes):
        raise InvalidArgumentError(
            f"roll: shift {shifts} and axis {axes} must have the same number of entries")
    return apply(_roll.op, (x,), {"shift": tuple(shifts), "axis": tuple(axes)})
