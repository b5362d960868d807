"""Updates of part of a Variable, in place: ``v[1:3].assign(x)``, TF's ``scatter_*`` methods and
``tf.IndexedSlices`` (the rows-and-indices value the sparse ``scatter_*`` methods take).

Each update runs as a kernel ``fn(variable_array, *arrays)``; inside a ``minitf.function`` trace it
is recorded as a state change, so every replay repeats it with that call's values.
"""
import weakref

from . import backend as B
from ._state import state
from .tensor import Tensor


class IndexedSlices:
    """Rows ``values`` of a tensor of shape ``dense_shape`` at ``indices`` along axis 0
    (``tf.IndexedSlices``). ``tf.convert_to_tensor`` turns it into the dense tensor, adding up
    repeated indices."""

    def __init__(self, values, indices, dense_shape=None):
        from .ops.convert import convert_to_tensor
        self.values = convert_to_tensor(values)
        self.indices = convert_to_tensor(indices)
        self.dense_shape = None if dense_shape is None else convert_to_tensor(dense_shape)

    @property
    def dtype(self):
        return self.values.dtype

    @property
    def shape(self):
        from .tensor import TensorShape
        if self.dense_shape is None:
            return TensorShape((None,) + tuple(self.values.shape[1:]))
        return TensorShape(int(d) for d in B.to_numpy(self.dense_shape._value))

    def to_dense(self):
        if self.dense_shape is None:
            raise ValueError("IndexedSlices without dense_shape cannot be made dense")
        from .ops.array_ops import _gather_grad
        return _gather_grad(self.values, self.indices, shape=tuple(self.shape), axis=0)

    def __repr__(self):
        return (f"IndexedSlices(indices={self.indices!r}, values={self.values!r}, "
                f"dense_shape={self.dense_shape!r})")


class VariableSlice(Tensor):
    """``variable[key]``: the sliced value, which can also be assigned to (TF's
    ``v[1:3].assign(x)``). Everything else behaves as the Tensor it is."""
    __slots__ = ()

    def assign(self, value, use_locking=None, name=None, read_value=True):
        """Write ``value`` (of this slice's shape) into the variable's slice; returns the
        variable."""
        variable, key = _SLICES[id(self)]
        value = _same_dtype(variable, value, "assign")
        if tuple(value.shape) != tuple(self.shape):
            raise ValueError(f"assign to {variable.name!r}[{_key_text(key)}]: the slice has "
                             f"shape {tuple(self.shape)}, the value {tuple(value.shape)}")

        def assign_slice(dst, src):
            dst[key] = src
        return _run(variable, "assign", assign_slice, (value,))


_SLICES = {}   # id(VariableSlice) -> (variable, normalised key), while the slice lives


def _variable_getitem(variable, key):
    from .ops.array_ops import _index_key, getitem
    sliced = getitem(variable, key)
    sliced.__class__ = VariableSlice   # same layout: the tapes and traces keep seeing it
    _SLICES[id(sliced)] = (variable, _index_key(key))
    weakref.finalize(sliced, _SLICES.pop, id(sliced), None)
    return sliced


def _key_text(key):
    return ", ".join(repr(k) if not isinstance(k, slice) else
                     f"{'' if k.start is None else k.start}:{'' if k.stop is None else k.stop}"
                     + ("" if k.step is None else f":{k.step}") for k in key)


def _same_dtype(variable, value, what):
    from .ops.convert import convert_to_tensor
    return convert_to_tensor(value, dtype=variable.dtype)


def _indices(value, what):
    from .ops.convert import convert_to_tensor
    indices = convert_to_tensor(value)
    if indices.dtype.np.kind not in "iu":
        raise TypeError(f"{what}: indices must be integers, got {indices.dtype.name}")
    return indices


def _run(variable, what, fn, tensors):
    state.before_variable_write(variable)
    if state.tracer is not None:
        state.tracer.record_update(variable, fn, tensors)
    try:
        fn(variable._value, *[t._value for t in tensors])
    except (IndexError, ValueError) as exc:
        from .ops.registry import InvalidArgumentError
        raise InvalidArgumentError(f"{what} on variable {variable.name!r} of shape "
                                   f"{tuple(variable.shape)}: {exc}", op=what) from None
    return variable


def _rows(variable, sparse_delta, what, combine):
    """``variable[indices] <combine>= values`` along axis 0, for IndexedSlices ``sparse_delta``."""
    if not isinstance(sparse_delta, IndexedSlices):
        raise TypeError(f"{what}: sparse_delta must be a tf.IndexedSlices, got "
                        f"{type(sparse_delta).__name__}")
    values = _same_dtype(variable, sparse_delta.values, what)
    indices = _indices(sparse_delta.indices, what)
    want = tuple(indices.shape) + tuple(variable.shape[1:])
    if tuple(values.shape) != want:
        raise ValueError(f"{what} on {variable.name!r}: values of shape {tuple(values.shape)} "
                         f"for indices of shape {tuple(indices.shape)}; expected {want}")
    return _run(variable, what, combine, (indices, values))


def _nd(variable, indices, updates, what, combine):
    """``variable[indices[..., 0], indices[..., 1], ...] <combine>= updates``."""
    updates = _same_dtype(variable, updates, what)
    indices = _indices(indices, what)
    depth = indices.shape[-1] if indices.ndim else 0
    want = tuple(indices.shape[:-1]) + tuple(variable.shape[depth:])
    if not indices.ndim or depth > variable.ndim or tuple(updates.shape) != want:
        raise ValueError(f"{what} on {variable.name!r} of shape {tuple(variable.shape)}: indices "
                         f"of shape {tuple(indices.shape)} need updates of shape {want}, got "
                         f"{tuple(updates.shape)}")

    def nd(dst, idx, src):
        _check_bounds(idx, dst.shape[:idx.shape[-1]], what)
        combine(dst, tuple(B.xp.moveaxis(idx, -1, 0)), src)
    nd.__name__ = what
    return _run(variable, what, nd, (indices, updates))


def _check_bounds(idx, bounds, what):
    # Negative indices would wrap around in numpy; TF refuses them.
    if idx.size and (bool((idx < 0).any()) or bool((idx >= B.xp.asarray(bounds)).any())):
        raise IndexError(f"an index is out of range: each index must be in [0, n) for the "
                         f"indexed dimensions of sizes {tuple(bounds)}")


def _set(dst, key, src):
    dst[key] = src


def _add(dst, key, src):
    B.scatter_add(dst, key, src)


def _sub(dst, key, src):
    B.scatter_add(dst, key, -src)


def _row_kernel(combine, what):
    def rows(dst, idx, src):
        _check_bounds(idx[..., None], dst.shape[:1], what)
        combine(dst, idx, src)
    rows.__name__ = what
    return rows


def _install():
    """The ``scatter_*`` methods of ``Variable`` (TF's ResourceVariable) and ``v[key].assign``."""
    from .tensor import Variable
    Variable.__getitem__ = _variable_getitem
    for name, combine in (("update", _set), ("add", _add), ("sub", _sub)):
        rows = _row_kernel(combine, f"scatter_{name}")

        def scatter(self, sparse_delta, use_locking=False, name=None, _rows_fn=rows,
                    _what=f"scatter_{name}"):
            return _rows(self, sparse_delta, _what, _rows_fn)

        def scatter_nd(self, indices, updates, name=None, _combine=combine,
                       _what=f"scatter_nd_{name}"):
            return _nd(self, indices, updates, _what, _combine)
        scatter.__name__ = f"scatter_{name}"
        scatter.__doc__ = (f"``variable[indices] {'' if name == 'update' else _OP[name]}= values`` "
                           f"for a tf.IndexedSlices (rows along axis 0); returns the variable.")
        scatter_nd.__name__ = f"scatter_nd_{name}"
        scatter_nd.__doc__ = (f"``variable[tuple(indices[..., k])] "
                              f"{'' if name == 'update' else _OP[name]}= updates``; returns the "
                              f"variable.")
        setattr(Variable, scatter.__name__, scatter)
        setattr(Variable, scatter_nd.__name__, scatter_nd)


_OP = {"add": "+", "sub": "-"}
_install()
