"""Creation, shape and indexing functions of ``tf.experimental.numpy`` (NumPy's dtypes:
``ones``/``zeros``/``eye`` default to float64, ``arange(3)`` is int64)."""
import numpy as _np

from . import dtypes as _dtypes
from .experimental_numpy_base import _np_dtype, asarray, promote, result_type
from .keras.ops import numpy as _kn
from .ops import array_ops as _a, math_ops as _m


def _dtype(dtype, default=_dtypes.float64):
    return default if dtype is None else _dtypes.as_dtype(_np_dtype(dtype))


def zeros(shape, dtype=float):
    """Zeros of ``shape`` (float64 unless ``dtype`` is given)."""
    return _a.zeros(shape, _dtype(dtype))


def ones(shape, dtype=float):
    """Ones of ``shape`` (float64 unless ``dtype`` is given)."""
    return _a.ones(shape, _dtype(dtype))


empty = zeros


def zeros_like(a, dtype=None):
    """Zeros of ``a``'s shape and dtype (or ``dtype``)."""
    a = asarray(a)
    return _a.zeros(a.shape, _dtype(dtype, a.dtype))


def ones_like(a, dtype=None):
    """Ones of ``a``'s shape and dtype (or ``dtype``)."""
    a = asarray(a)
    return _a.ones(a.shape, _dtype(dtype, a.dtype))


empty_like = zeros_like


def full(shape, fill_value, dtype=None):
    """``fill_value`` broadcast to ``shape``; by default in ``fill_value``'s dtype."""
    value = asarray(fill_value, None if dtype is None else _np_dtype(dtype))
    shape = [shape] if isinstance(shape, int) else list(shape)
    return _a.broadcast_to(value, shape)


def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None):
    """``fill_value`` in ``a``'s shape (or ``shape``) and dtype (or ``dtype``)."""
    a = asarray(a)
    return full(a.shape if shape is None else shape, fill_value, _dtype(dtype, a.dtype))


def eye(N, M=None, k=0, dtype=float):  # noqa: N803 - NumPy's names
    """A 2-D tensor with ones on the ``k``-th diagonal (float64 by default)."""
    return _kn.eye(N, M, k=k, dtype=_dtype(dtype).name)


def identity(n, dtype=float):
    """The ``n`` x ``n`` identity matrix (float64 by default)."""
    return eye(n, dtype=dtype)


def tri(N, M=None, k=0, dtype=None):  # noqa: N803 - NumPy's names
    """Ones at and below the ``k``-th diagonal (float64 by default)."""
    return asarray(_np.tri(N, M, k), _dtype(dtype))


def _host(value):
    if hasattr(value, "numpy"):
        value = value.numpy()
    return _np.asarray(value).item() if _np.ndim(value) == 0 else _np.asarray(value)


def arange(start, stop=None, step=1, dtype=None):
    """Values from ``start`` to ``stop`` by ``step``; dtype from the arguments by default."""
    if not step:
        raise ValueError(f"tf.experimental.numpy.arange: step must be non-zero, got {step!r}")
    given = [v for v in (start, stop, step) if v is not None]
    target = _dtype(dtype, None) or result_type(*given)
    start, step = _host(start), _host(step)
    stop = None if stop is None else _host(stop)
    values = _np.arange(start, step=step) if stop is None else _np.arange(start, stop, step)
    return asarray(values, target)


def _space_dtype(start, stop, dtype):
    """``dtype``, or the dtype of ``start * 1.0`` and ``stop * 1.0`` (as TF on NumPy 2)."""
    if dtype is None or dtype is float:
        return result_type(start, stop, 1.0)
    return _dtype(dtype)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=float, axis=0):
    """``num`` evenly spaced values from ``start`` to ``stop``; float64 by default (float32
    for Python floats with ``prefer_float32``)."""
    target = _space_dtype(start, stop, dtype)
    work = target if target.is_floating else _dtypes.float64
    result = _kn.linspace(asarray(start, work), asarray(stop, work), num, endpoint=endpoint,
                          retstep=retstep, axis=axis)
    if retstep:
        result, step = result
    if not target.is_floating:
        result = _m.cast(_m.floor(result), target)
    return (result, step) if retstep else result


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """``base ** linspace(start, stop, num)``."""
    target = _space_dtype(start, stop, dtype)
    work = target if target.is_floating else _dtypes.float64
    exponents = linspace(start, stop, num, endpoint=endpoint, dtype=work, axis=axis)
    return _m.cast(_m.pow(asarray(base, work), exponents), target)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """``num`` values from ``start`` to ``stop`` spaced evenly on a log scale."""
    target = _space_dtype(start, stop, dtype)
    work = _dtypes.float64   # float32 logs would put 10.000003 between 1 and 100
    result = _kn.geomspace(asarray(start, work), asarray(stop, work), num, endpoint=endpoint,
                           axis=axis)
    return _m.cast(result, target)


def vander(x, N=None, increasing=False):  # noqa: N803 - NumPy's name
    """The Vandermonde matrix of the 1-D ``x`` (columns are powers of ``x``)."""
    return _kn.vander(asarray(x), N, increasing=increasing)


def diag_indices(n, ndim=2):
    """``ndim`` copies of ``arange(n)`` (int32, as TF gives them)."""
    return (asarray(_np.arange(n), _dtypes.int32),) * ndim


def ix_(*args):
    """Open meshes: the ``i``-th of ``len(args)`` 1-D index arrays shaped to broadcast."""
    count = len(args)
    out = []
    for i, arg in enumerate(args):
        arg = asarray(arg)
        if arg.shape.rank != 1:
            raise ValueError(f"tf.experimental.numpy.ix_: each argument must be 1-D, got shape "
                             f"{tuple(arg.shape)} for argument {i}")
        if arg.dtype.is_bool:
            arg = nonzero(arg)[0]
        out.append(_a.reshape(arg, [1] * i + [-1] + [1] * (count - i - 1)))
    return tuple(out)


def meshgrid(*xi, **kwargs):
    """Coordinate matrices (``indexing='xy'`` or ``'ij'``)."""
    return _kn.meshgrid(*promote(*xi), **kwargs)


# --- shapes ----------------------------------------------------------------------------------

def reshape(a, newshape, order="C"):
    """``a`` with shape ``newshape`` (C order only)."""
    if order != "C":
        raise ValueError(f"tf.experimental.numpy.reshape: only order='C' is supported, got "
                         f"order={order!r}")
    return _a.reshape(asarray(a), [newshape] if isinstance(newshape, int) else list(newshape))


def ravel(a):
    """``a`` flattened to 1-D."""
    return _a.reshape(asarray(a), [-1])


def flatten(a, order="C"):
    """``a`` flattened to 1-D (C order only)."""
    return reshape(a, [-1], order)


def transpose(a, axes=None):
    """``a`` with its axes reversed or permuted by ``axes``."""
    return _a.transpose(asarray(a), None if axes is None else list(axes))


def swapaxes(a, axis1, axis2):
    """``a`` with two axes exchanged."""
    return _kn.swapaxes(asarray(a), axis1, axis2)


def moveaxis(a, source, destination):
    """``a`` with axes moved from ``source`` to ``destination``."""
    return _kn.moveaxis(asarray(a), source, destination)


def expand_dims(a, axis):
    """``a`` with a new axis of size 1 at ``axis``."""
    return _a.expand_dims(asarray(a), axis)


def squeeze(a, axis=None):
    """``a`` without its size-1 axes (or only ``axis``)."""
    return _a.squeeze(asarray(a), axis)


def _at_least(ndim, place, arys):
    out = []
    for a in arys:
        a = asarray(a)
        rank = a.shape.rank
        if rank < ndim:
            a = _a.reshape(a, place(list(a.shape), ndim - rank))
        out.append(a)
    return out[0] if len(out) == 1 else out


def atleast_1d(*arys):
    """Each input with at least one dimension."""
    return _at_least(1, lambda s, n: [1] * n + s, arys)


def atleast_2d(*arys):
    """Each input with at least two dimensions (new axes in front)."""
    return _at_least(2, lambda s, n: [1] * n + s, arys)


def atleast_3d(*arys):
    """Each input with at least three dimensions (1-D ``(N,)`` becomes ``(1, N, 1)``)."""
    def place(shape, n):
        return {0: [1, 1, 1], 1: [1] + shape + [1], 2: shape + [1]}[len(shape)]
    return _at_least(3, place, arys)


def broadcast_to(array, shape):
    """``array`` broadcast to ``shape``."""
    return _a.broadcast_to(asarray(array), [shape] if isinstance(shape, int) else list(shape))


def broadcast_arrays(*args, **kwargs):
    """The inputs broadcast against each other (``subok`` is ignored)."""
    arrays = [asarray(a) for a in args]
    common = _np.broadcast_shapes(*(tuple(a.shape) for a in arrays))
    return [_a.broadcast_to(a, list(common)) for a in arrays]


def concatenate(arys, axis=0):
    """The inputs, promoted to one dtype, joined along ``axis``."""
    arys = promote(*arys)
    if axis is None:
        return _a.concat([ravel(a) for a in arys], 0)
    return _a.concat(arys, axis)


def stack(arrays, axis=0):
    """The inputs, promoted to one dtype, stacked along a new ``axis``."""
    return _a.stack(promote(*arrays), axis)


def hstack(tup):
    """The inputs joined along axis 1 (axis 0 for 1-D inputs)."""
    return _kn.hstack(promote(*tup))


def vstack(tup):
    """The inputs (at least 2-D) joined along axis 0."""
    return _kn.vstack(promote(*tup))


def dstack(tup):
    """The inputs (at least 3-D) joined along axis 2."""
    return _kn.dstack(promote(*tup))


def append(arr, values, axis=None):
    """``values`` appended to ``arr`` (both flattened when ``axis`` is None)."""
    return _kn.append(*promote(arr, values), axis=axis)


def split(ary, indices_or_sections, axis=0):
    """``ary`` split into equal sections or at indices along ``axis``."""
    return _kn.split(asarray(ary), indices_or_sections, axis=axis)


def hsplit(ary, indices_or_sections):
    """``split`` along axis 1 (axis 0 for 1-D)."""
    return _kn.hsplit(asarray(ary), indices_or_sections)


def vsplit(ary, indices_or_sections):
    """``split`` along axis 0."""
    return _kn.vsplit(asarray(ary), indices_or_sections)


def dsplit(ary, indices_or_sections):
    """``split`` along axis 2."""
    return _kn.dsplit(asarray(ary), indices_or_sections)


def tile(a, reps):
    """``a`` repeated ``reps`` times along each axis."""
    a = asarray(a)
    reps = [reps] if isinstance(reps, int) else list(reps)
    rank = max(a.shape.rank, len(reps))
    a = _a.reshape(a, [1] * (rank - a.shape.rank) + list(a.shape))
    return _a.tile(a, [1] * (rank - len(reps)) + reps)


def repeat(a, repeats, axis=None):
    """Each element of ``a`` repeated ``repeats`` times."""
    return _kn.repeat(asarray(a), repeats, axis=axis)


def roll(a, shift, axis=None):
    """``a`` shifted cyclically by ``shift`` along ``axis``."""
    return _kn.roll(asarray(a), shift, axis=axis)


def rot90(m, k=1, axes=(0, 1)):
    """``m`` rotated by 90 degrees ``k`` times in the plane of ``axes``."""
    return _kn.rot90(asarray(m), k=k, axes=axes)


def flip(m, axis=None):
    """``m`` reversed along ``axis`` (all axes by default)."""
    return _kn.flip(asarray(m), axis=axis)


def fliplr(m):
    """``m`` reversed along axis 1."""
    return _kn.fliplr(asarray(m))


def flipud(m):
    """``m`` reversed along axis 0."""
    return _kn.flipud(asarray(m))


def pad(array, pad_width, mode, **kwargs):
    """``array`` padded: ``mode`` is ``'constant'`` (``constant_values``), ``'reflect'`` or
    ``'symmetric'``."""
    if mode not in ("constant", "reflect", "symmetric"):
        raise ValueError(f"tf.experimental.numpy.pad: mode={mode!r} is not supported; expected "
                         f"'constant', 'reflect' or 'symmetric'")
    array = asarray(array)
    pad_width = _np.broadcast_to(_np.asarray(pad_width, _np.int64), (array.shape.rank, 2))
    return _kn.pad(array, pad_width.tolist(), mode=mode,
                   constant_values=kwargs.get("constant_values", 0))


def diag(v, k=0):
    """The ``k``-th diagonal of a 2-D ``v``, or a matrix with the 1-D ``v`` on it."""
    return _kn.diag(asarray(v), k)


def diagflat(v, k=0):
    """A matrix with the flattened ``v`` on its ``k``-th diagonal."""
    return _kn.diagflat(asarray(v), k)


def diagonal(a, offset=0, axis1=0, axis2=1):
    """The diagonal(s) of ``a`` in the plane of ``axis1`` and ``axis2``."""
    return _kn.diagonal(asarray(a), offset, axis1, axis2)


def trace(a, offset=0, axis1=0, axis2=1, dtype=None):
    """The sum along a diagonal of ``a``."""
    from .experimental_numpy_reduce import sum as _sum
    return _sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


def tril(m, k=0):
    """``m`` with the elements above the ``k``-th diagonal zeroed."""
    return _kn.tril(asarray(m), k)


def triu(m, k=0):
    """``m`` with the elements below the ``k``-th diagonal zeroed."""
    return _kn.triu(asarray(m), k)


# --- indexing --------------------------------------------------------------------------------

def take(a, indices, axis=None, out=None, mode="clip"):
    """Elements of ``a`` at ``indices`` along ``axis`` (flattened when None); out-of-range
    indices are clipped (``mode='clip'``) or wrapped (``'wrap'``)."""
    if out is not None:
        raise ValueError("tf.experimental.numpy.take: out= is not supported")
    if mode not in ("clip", "wrap", "raise"):
        raise ValueError(f"tf.experimental.numpy.take: mode={mode!r}; expected 'clip', 'wrap' "
                         f"or 'raise'")
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    indices = asarray(indices, _dtypes.int64)
    n = int(a.shape[axis])
    if mode == "clip":
        indices = _m.clip_by_value(indices, _np.int64(0), _np.int64(n - 1))
    elif mode == "wrap":
        indices = _m.floormod(indices, asarray(n, _dtypes.int64))
    return _a.gather(a, indices, axis=axis)


def take_along_axis(arr, indices, axis):
    """Elements of ``arr`` at ``indices`` along ``axis``."""
    return _kn.take_along_axis(asarray(arr), asarray(indices), axis=axis)


def nonzero(a):
    """A tuple of int64 index tensors, one per axis, where ``a`` is non-zero."""
    a = asarray(a)
    return tuple(_m.cast(i, _dtypes.int64) for i in _kn.nonzero(atleast_1d(a)))


def where(condition, x=None, y=None):
    """``x`` where ``condition`` holds, else ``y``; ``nonzero(condition)`` without them."""
    if x is None and y is None:
        return nonzero(condition)
    if x is None or y is None:
        raise ValueError("tf.experimental.numpy.where: x and y must both be given or both "
                         "be None")
    x, y = promote(x, y)
    return _m.where(asarray(condition, _dtypes.bool), x, y)


def select(condlist, choicelist, default=0):
    """From the first true condition's choice, else ``default``."""
    values = promote(*choicelist, default)
    conds = [asarray(c, _dtypes.bool) for c in condlist]
    result = values[-1]
    for cond, choice in reversed(list(zip(conds, values[:-1]))):
        result = _m.where(cond, choice, result)
    return result


def compress(condition, a, axis=None):
    """The slices of ``a`` along ``axis`` (flattened when None) where ``condition`` holds."""
    cond = _np.asarray(_host(condition), bool).reshape(-1)
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    picked = _np.nonzero(cond)[0]
    return _a.gather(a, asarray(picked, _dtypes.int64), axis=axis)


def sort(a, axis=-1, kind="quicksort", order=None):
    """``a`` sorted along ``axis`` (flattened when None)."""
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    return _kn.sort(a, axis=axis)


def argsort(a, axis=-1, kind="quicksort", order=None):
    """The int64 indices that sort ``a`` along ``axis`` (flattened when None)."""
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    return _m.cast(_kn.argsort(a, axis=axis), _dtypes.int64)

