"""``keras.ops.numpy``: array layout functions: joining, splitting, flipping, rolling, moving
axes, diagonals and triangles, each a composition of minitf ops (so differentiable where the
values pass through).

Mixed input dtypes are promoted as Keras does (Keras's TensorFlow backend): a float input
decides the result's float type (``int64`` with ``float32`` gives ``float32``), integers promote
as numpy's, and a Python scalar takes the other inputs' dtype.
"""
import builtins as _builtins

import numpy as _np

from ... import backend as _B
from ... import dtypes as _dtypes
from ...ops import array_ops as _a, math_ops as _m, reduce_ops as _r
from ...ops import slice_ops as _s
from ...ops.composite_ops import meshgrid as _meshgrid
from ...ops.convert import convert_to_tensor as _convert
from ...ops.misc_more_ops import bitcast_view as _bitcast_view
from ...tensor import Tensor as _Tensor, host_value as _host_value


# --- shared helpers (imported by the other numpy_* modules) ----------------------------------

def _t(x):
    return x if isinstance(x, _Tensor) else _convert(x)


def _floatx():
    from ..keras_backend import floatx
    return _dtypes.as_dtype(floatx())


def _is_python_scalar(v):
    return type(v) in (int, float, bool)


def _result_dtype(dtypes, weak=()):
    """Keras's promotion of tensor dtypes ``dtypes`` with Python scalars ``weak``: any float
    wins over integers (the widest float; float16 with bfloat16 gives float32), integers and
    bools promote as in numpy, and a Python float makes an integer result ``floatx``."""
    floats = [d for d in dtypes if d.is_floating]
    if floats:
        names = {d.name for d in floats}
        if {"float16", "bfloat16"} <= names and not names & {"float32", "float64"}:
            return _dtypes.float32
        return _builtins.max(floats, key=lambda d: d.size)
    if dtypes:
        out = dtypes[0].np
        for d in dtypes[1:]:
            out = _np.promote_types(out, d.np)
        out = _dtypes.as_dtype(out)
    else:
        out = None
    if any(type(v) is float for v in weak):
        return _floatx()
    if out is None or out.is_bool:
        if any(type(v) is int for v in weak):
            return _dtypes.int32
        return _dtypes.bool if out is None and weak else out
    return out


def _promote(*values):
    """``values`` as tensors of one dtype (Keras's promotion; see ``_result_dtype``)."""
    strong = [_t(v) for v in values if not _is_python_scalar(v)]
    weak = [v for v in values if _is_python_scalar(v)]
    dtype = _result_dtype([s.dtype for s in strong], weak)
    out, k = [], 0
    for v in values:
        if _is_python_scalar(v):
            out.append(_convert(v, dtype=dtype))
        else:
            s = strong[k]
            k += 1
            out.append(s if s.dtype == dtype else _m.cast(s, dtype))
    return out


def _axis(axis, ndim, op, what="axis"):
    """``axis`` as a non-negative int; TypeError/ValueError naming ``op`` when it is not an
    axis of a rank-``ndim`` tensor."""
    if isinstance(axis, (bool, _np.bool_)) or not isinstance(axis, (int, _np.integer)):
        raise TypeError(f"{op}: {what} must be an integer, got {axis!r}")
    if not -ndim <= axis < ndim:
        raise ValueError(f"{op}: {what}={axis} is out of range for a tensor of rank {ndim}")
    return int(axis) % ndim


def _axes(axis, ndim, op, what="axis"):
    """An int or a sequence of ints as a list of distinct non-negative axes."""
    items = list(axis) if isinstance(axis, (list, tuple, _np.ndarray)) else [axis]
    out = [_axis(a, ndim, op, what) for a in items]
    if len(set(out)) != len(out):
        raise ValueError(f"{op}: repeated axis in {what}={axis!r}")
    return out


def _along(ndim, axis, index):
    """An index key that applies ``index`` to ``axis`` and takes everything elsewhere."""
    return (slice(None),) * axis + (index,) + (slice(None),) * (ndim - axis - 1)


def _zero(x):
    return _Tensor(_B.xp.zeros((), dtype=x._value.dtype))


# --- shape and size ----------------------------------------------------------------------------

class _Rank:
    """``keras.ops.ndim``: the number of dimensions of ``x`` as a Python int. A rank is
    static, also for the KerasTensors of a functional model, so this answers without adding an
    op to the model (hence an object, not a function wrapped for KerasTensors)."""
    __name__ = "ndim"

    def __call__(self, x):
        rank = getattr(x, "ndim", None)
        return int(rank) if rank is not None else _t(x).ndim


ndim = _Rank()


def size(x):
    """The number of elements of ``x`` (an int32 scalar tensor, as Keras's TensorFlow
    backend)."""
    return _a.size(_t(x))


def ravel(x):
    return _a.reshape(_t(x), (-1,))


def broadcast_to(x, shape):
    x = _t(x)
    shape = (int(shape),) if isinstance(shape, (int, _np.integer)) else tuple(int(s) for s in
                                                                               shape)
    have = tuple(x.shape)
    lead = len(shape) - len(have)
    if lead < 0 or any(h not in (1, w) for h, w in zip(have, shape[lead:])):
        raise ValueError(f"broadcast_to: cannot broadcast a tensor of shape {have} to shape "
                         f"{shape}")
    return x if have == shape else _a.broadcast_to(x, shape)


def get_item(x, key):
    """``x[key]``."""
    return _t(x)[key]


# --- moving axes -------------------------------------------------------------------------------

def swapaxes(x, axis1, axis2):
    x = _t(x)
    a = _axis(axis1, x.ndim, "swapaxes", "axis1")
    b = _axis(axis2, x.ndim, "swapaxes", "axis2")
    perm = list(range(x.ndim))
    perm[a], perm[b] = perm[b], perm[a]
    return x if a == b else _a.transpose(x, perm)


def moveaxis(x, source, destination):
    """``x`` with the axes ``source`` moved to positions ``destination`` (ints or sequences of
    the same length); the other axes keep their order."""
    x = _t(x)
    src = _axes(source, x.ndim, "moveaxis", "source")
    dst = _axes(destination, x.ndim, "moveaxis", "destination")
    if len(src) != len(dst):
        raise ValueError(f"moveaxis: source {source!r} and destination {destination!r} must "
                         f"have the same number of elements")
    order = [i for i in range(x.ndim) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return x if order == list(range(x.ndim)) else _a.transpose(x, order)


# --- joining -----------------------------------------------------------------------------------

def append(x1, x2, axis=None):
    """``x2`` appended to ``x1`` along ``axis`` (both flattened when None)."""
    x1, x2 = _promote(x1, x2)
    if axis is None:
        return _a.concat([ravel(x1), ravel(x2)], axis=0)
    if x1.ndim != x2.ndim:
        raise ValueError(f"append: x1 and x2 must have the same rank to be joined along an "
                         f"axis, got shapes {tuple(x1.shape)} and {tuple(x2.shape)}")
    return _join([x1, x2], _axis(axis, x1.ndim, "append"), "append")


def _join(xs, axis, op):
    shapes = [tuple(x.shape) for x in xs]
    rest = {s[:axis] + s[axis + 1:] for s in shapes}
    if len({len(s) for s in shapes}) > 1 or len(rest) > 1:
        raise ValueError(f"{op}: all shapes must match except along axis {axis}, got "
                         f"{', '.join(map(str, shapes))}")
    return _a.concat(list(xs), axis=axis)


def _stack_inputs(xs, op):
    """The tensors to join, promoted to one dtype; a tensor stands for the list of its
    slices along the first axis, as in numpy."""
    if isinstance(xs, (_Tensor, _np.ndarray)):
        xs = _t(xs)
        xs = _a.unstack(xs) if xs.ndim else []
    if not len(xs):
        raise ValueError(f"{op}: expected a non-empty list or tuple of tensors")
    return _promote(*xs)


def _at_least(x, ndim, place):
    """``x`` reshaped to ``ndim`` dimensions as numpy's ``atleast_{1,2,3}d``."""
    if x.ndim >= ndim:
        return x
    shape = tuple(x.shape)
    return _a.reshape(x, place[len(shape)](shape))


_AS_2D = {0: lambda s: (1, 1), 1: lambda s: (1,) + s}
_AS_3D = {0: lambda s: (1, 1, 1), 1: lambda s: (1,) + s + (1,), 2: lambda s: s + (1,)}


def hstack(xs):
    """Join along the second axis (the first for 1-D tensors)."""
    xs = [_at_least(x, 1, {0: lambda s: (1,)}) for x in _stack_inputs(xs, "hstack")]
    return _join(xs, 0 if xs[0].ndim == 1 else 1, "hstack")


def vstack(xs):
    """Join along the first axis, 1-D tensors as rows."""
    xs = [_at_least(x, 2, _AS_2D) for x in _stack_inputs(xs, "vstack")]
    return _join(xs, 0, "vstack")


def dstack(xs):
    """Join along the third axis (1-D ``(n,)`` as ``(1, n, 1)``, 2-D ``(m, n)`` as
    ``(m, n, 1)``)."""
    xs = [_at_least(x, 3, _AS_3D) for x in _stack_inputs(xs, "dstack")]
    return _join(xs, 2, "dstack")


# --- splitting ---------------------------------------------------------------------------------

def _pieces(x, bounds, axis):
    return [x[_along(x.ndim, axis, slice(a, b))] for a, b in zip(bounds[:-1], bounds[1:])]


def _split(x, indices_or_sections, axis, op):
    """numpy's ``split``: an int cuts ``x`` into that many equal parts, a sequence of indices
    cuts it before each index (as Python slices: ``x[:i0], x[i0:i1], ..., x[ik:]``)."""
    n = int(x.shape[axis])
    if isinstance(indices_or_sections, (int, _np.integer)):
        sections = int(indices_or_sections)
        if sections <= 0 or n % sections:
            raise ValueError(f"{op}: cannot split axis {axis} of size {n} into {sections} equal "
                             f"sections")
        return _pieces(x, [i * (n // sections) for i in range(sections + 1)], axis)
    return _pieces(x, [0] + [int(i) for i in indices_or_sections] + [n], axis)


def array_split(x, indices_or_sections, axis=0):
    """``indices_or_sections`` parts along ``axis``; when they cannot be equal the first
    ``size % sections`` parts are one longer."""
    if isinstance(indices_or_sections, bool) or not isinstance(indices_or_sections,
                                                               (int, _np.integer)):
        raise TypeError(f"array_split: indices_or_sections must be an int, got "
                        f"{indices_or_sections!r}")
    if indices_or_sections <= 0:
        raise ValueError(f"array_split: indices_or_sections must be positive, got "
                         f"{indices_or_sections}")
    x = _t(x)
    axis = _axis(axis, x.ndim, "array_split")
    q, r = divmod(int(x.shape[axis]), int(indices_or_sections))
    sizes = [q + 1] * r + [q] * (int(indices_or_sections) - r)
    return _pieces(x, [_builtins.sum(sizes[:i]) for i in range(len(sizes) + 1)], axis)


def hsplit(x, indices_or_sections):
    """Split along the second axis (the first for 1-D tensors)."""
    x = _t(x)
    if x.ndim == 0:
        raise ValueError("hsplit: x must have at least 1 dimension, got a scalar")
    return _split(x, indices_or_sections, 1 if x.ndim > 1 else 0, "hsplit")


def vsplit(x, indices_or_sections):
    """Split along the first axis of a tensor of rank >= 2."""
    x = _t(x)
    if x.ndim < 2:
        raise ValueError(f"vsplit: x must have at least 2 dimensions, got shape "
                         f"{tuple(x.shape)}")
    return _split(x, indices_or_sections, 0, "vsplit")


def dsplit(x, indices_or_sections):
    """Split along the third axis of a tensor of rank >= 3."""
    x = _t(x)
    if x.ndim < 3:
        raise ValueError(f"dsplit: x must have at least 3 dimensions, got shape "
                         f"{tuple(x.shape)}")
    return _split(x, indices_or_sections, 2, "dsplit")


def meshgrid(*x, indexing="xy"):
    """Coordinate grids of 1-D tensors; ``"xy"`` swaps the first two output axes."""
    return _meshgrid(*x, indexing=indexing)


# --- flipping and rolling ----------------------------------------------------------------------

def flip(x, axis=None):
    """``x`` reversed along ``axis`` (an int, a tuple, or None for every axis)."""
    x = _t(x)
    axes = list(range(x.ndim)) if axis is None else _axes(axis, x.ndim, "flip")
    return _s.reverse(x, axes) if axes else x


def fliplr(x):
    """``x`` reversed along its second axis (left/right)."""
    x = _t(x)
    if x.ndim < 2:
        raise ValueError(f"fliplr: x must have at least 2 dimensions, got shape "
                         f"{tuple(x.shape)}")
    return _s.reverse(x, [1])


def flipud(x):
    """``x`` reversed along its first axis (up/down)."""
    x = _t(x)
    if x.ndim < 1:
        raise ValueError("flipud: x must have at least 1 dimension, got a scalar")
    return _s.reverse(x, [0])


def _int_list(value, op, what):
    if isinstance(value, _Tensor):
        value = _host_value(value, f"{op}'s {what}")
    items = _np.atleast_1d(_np.asarray(value))
    if items.dtype.kind not in "iu":
        raise TypeError(f"{op}: {what} must be integers, got {value!r}")
    return [int(v) for v in items.reshape(-1)]


def roll(x, shift, axis=None):
    """``x`` shifted by ``shift`` places along ``axis``, wrapping around; with ``axis`` None
    the flattened tensor is rolled and reshaped back. ``shift`` and ``axis`` may be
    sequences (a single value pairs with every entry of the other)."""
    x = _t(x)
    shifts = _int_list(shift, "roll", "shift")
    if axis is None:
        return _a.reshape(roll(ravel(x), shifts, 0), tuple(x.shape))
    axes = [_axis(a, x.ndim, "roll") for a in _int_list(axis, "roll", "axis")]
    if len(shifts) == 1:
        shifts = shifts * len(axes)
    elif len(axes) == 1:
        axes = axes * len(shifts)
    if len(shifts) != len(axes):
        raise ValueError(f"roll: shift {shift!r} and axis {axis!r} must have the same number "
                         f"of entries (or one of them a single value)")
    return _s.roll(x, shifts, axes)


def rot90(array, k=1, axes=(0, 1)):
    """``array`` rotated by 90 degrees ``k`` times, from the first of ``axes`` towards the
    second (counterclockwise for a matrix)."""
    x = _t(array)
    if x.ndim < 2:
        raise ValueError(f"rot90: the input must have at least 2 dimensions, got shape "
                         f"{tuple(x.shape)}")
    if len(axes) != 2:
        raise ValueError(f"rot90: axes must be two different axes, got {axes!r}")
    a, b = (_axis(v, x.ndim, "rot90", "axes") for v in axes)
    if a == b:
        raise ValueError(f"rot90: axes must be two different axes, got {axes!r}")
    k = int(k) % 4
    perm = list(range(x.ndim))
    perm[a], perm[b] = perm[b], perm[a]
    if k == 0:
        return x
    if k == 2:
        return _s.reverse(x, [a, b])
    if k == 1:
        return _a.transpose(_s.reverse(x, [b]), perm)
    return _s.reverse(_a.transpose(x, perm), [b])


# --- diagonals and triangles -------------------------------------------------------------------

def diagonal(x, offset=0, axis1=0, axis2=1):
    """The diagonal ``offset`` (> 0 above the main one) of the 2-D slices in ``axis1`` and
    ``axis2``: those axes are removed and the diagonal becomes the last axis."""
    x = _t(x)
    if x.ndim < 2:
        raise ValueError(f"diagonal: x must have at least 2 dimensions, got shape "
                         f"{tuple(x.shape)}")
    a = _axis(axis1, x.ndim, "diagonal", "axis1")
    b = _axis(axis2, x.ndim, "diagonal", "axis2")
    if a == b:
        raise ValueError(f"diagonal: axis1 and axis2 must differ, got {axis1} and {axis2}")
    offset = int(offset)
    rest = [i for i in range(x.ndim) if i not in (a, b)]
    y = _a.transpose(x, rest + [a, b])
    rows, cols = int(x.shape[a]), int(x.shape[b])
    length = _builtins.max(0, _builtins.min(rows - _builtins.max(-offset, 0),
                                            cols - _builtins.max(offset, 0)))
    i = _np.arange(length)
    flat_index = (i + _builtins.max(-offset, 0)) * cols + i + _builtins.max(offset, 0)
    flat = _a.reshape(y, tuple(y.shape[:-2]) + (rows * cols,))
    return _a.gather(flat, _Tensor(_B.xp.asarray(flat_index.astype(_np.int64))),
                     axis=len(rest))


def _diag_matrix(v, k):
    """The square matrix with the 1-D ``v`` on diagonal ``k`` and zeros elsewhere."""
    n = int(v.shape[0])
    m = n + abs(k)
    if n == 0:
        return _a.zeros((m, m), dtype=v.dtype)
    r = _np.arange(m)[:, None]
    c = _np.arange(m)[None, :]
    on_diagonal = _Tensor(_B.xp.asarray(c - r == k))
    # along diagonal k the entry in row r (k >= 0) or column c (k < 0) is element r or c
    position = _np.clip(_np.broadcast_to(r if k >= 0 else c, (m, m)), 0, n - 1)
    spread = _a.gather(v, _Tensor(_B.xp.asarray(position.astype(_np.int64))))
    return _m.where(on_diagonal, spread, _zero(v))


def diag(x, k=0):
    """For 1-D ``x`` the matrix with ``x`` on diagonal ``k``; for 2-D ``x`` its diagonal
    ``k``."""
    x = _t(x)
    if x.ndim == 1:
        return _diag_matrix(x, int(k))
    if x.ndim == 2:
        return diagonal(x, offset=k)
    raise ValueError(f"diag: x must be 1-D or 2-D, got shape {tuple(x.shape)}")


def diagflat(x, k=0):
    """The matrix with the flattened ``x`` on diagonal ``k``."""
    return _diag_matrix(ravel(x), int(k))


_TRACE_DTYPES = {"bool": "int32", "int8": "int32", "int16": "int32", "uint8": "uint32",
                 "uint16": "uint32"}


def trace(x, offset=0, axis1=0, axis2=1):
    """The sum of ``diagonal(x, offset, axis1, axis2)``; small integer and bool inputs sum
    as int32 (uint32 for unsigned)."""
    d = diagonal(x, offset, axis1, axis2)
    wider = _TRACE_DTYPES.get(d.dtype.name)
    return _r.reduce_sum(d if wider is None else _m.cast(d, wider), axis=-1)


def _triangle(x, k, op, lower):
    x = _t(x)
    if x.ndim == 0:
        raise ValueError(f"{op}: x must have at least 1 dimension, got a scalar")
    rows, cols = (tuple(x.shape[-2:]) if x.ndim > 1 else (int(x.shape[0]),) * 2)
    offset = _np.arange(cols)[None, :] - _np.arange(rows)[:, None]
    keep = offset <= int(k) if lower else offset >= int(k)
    return _m.where(_Tensor(_B.xp.asarray(keep)), x, _zero(x))


def tril(x, k=0):
    """``x`` with the entries above diagonal ``k`` of its last two axes zeroed."""
    return _triangle(x, k, "tril", lower=True)


def triu(x, k=0):
    """``x`` with the entries below diagonal ``k`` of its last two axes zeroed."""
    return _triangle(x, k, "triu", lower=False)


# --- view --------------------------------------------------------------------------------------



def view(x, dtype=None):
    """The bits of ``x`` read as ``dtype``. A smaller item size multiplies the last axis, a
    larger one divides it (it must then divide evenly). No gradient (except for the same
    dtype, which returns ``x``)."""
    x = _t(x)
    if dtype is None or _dtypes.as_dtype(dtype) == x.dtype:
        return x
    new = _dtypes.as_dtype(dtype)
    old_size, new_size = x.dtype.size, new.size
    if old_size != new_size and (x.ndim == 0 or int(x.shape[-1]) * old_size % new_size):
        raise ValueError(f"view: cannot view a tensor of shape {tuple(x.shape)} and dtype "
                         f"{x.dtype.name} as {new.name}: the bytes of the last axis must "
                         f"divide into items of {new_size} bytes")
    return _bitcast_view(x, dtype=new.np)
