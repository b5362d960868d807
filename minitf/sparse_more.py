"""More of ``tf.sparse``: ``bincount``, ``cross``, ``cross_hashed``, ``mask``, ``reset_shape``,
``sampled_addmm`` and ``split``.

Counting and crossing read the values on the host (they have no gradient in TF either); inside
a ``minitf.function`` they make the function run its Python body on every call, so each call
sees its own values. ``mask``, ``split`` and ``sampled_addmm`` pick and combine values with
differentiable minitf ops, so gradients reach the values and matrices.
"""
import itertools

import numpy

from . import backend as B
from . import dtypes
from .ops.array_ops import gather
from .ops.composite_ops import gather_nd
from .ops.convert import convert_to_tensor
from .ops.linalg_ops import matmul
from .ops.math_ops import cast
from .ops.registry import InvalidArgumentError
from .ops.sparse_index import int64_tensor, int_list
from .ops.sparse_layout_ops import slice_sparse
from ._state import state
from .ragged_tensor import RaggedTensor
from .sparse_tensor import SparseTensor
from .string_tensors import OBJECT, string_tensor
from .tensor import Tensor
from .variable_updates import IndexedSlices

__all__ = ["bincount", "cross", "cross_hashed", "mask", "reset_shape", "sampled_addmm", "split"]

_I64 = numpy.int64
DEFAULT_HASH_KEY = 0xDECAFCAFFE   # TF's hash_key of cross_hashed
_MUL = numpy.uint64(0xc6a4a7935bd1e995)
_INT64_MAX = numpy.uint64((1 << 63) - 1)


def runs_in_python(where):
    """Inside a ``minitf.function`` trace: the function must run its Python body on every
    call, as ``where`` reads values on the host."""
    if state.tracer is not None:
        state.tracer.run_eagerly(f"it calls tf.{where}, which runs in Python")


def _tensor(value):
    return value if isinstance(value, Tensor) else convert_to_tensor(value)


def _host(tensor):
    """A Tensor's value on the host (string arrays are there already)."""
    array = tensor._value
    return array if array.dtype == OBJECT else numpy.asarray(B.to_numpy(array))


def _to_backend(array):
    return string_tensor(array) if array.dtype == OBJECT else Tensor(
        B.from_numpy(numpy.require(array, requirements='C')))


# --- bincount -----------------------------------------------------------------------------
def _rows_and_values(values, where, what="values"):
    """``(row of each value, host values, number of rows)`` of a rank-1 or rank-2 dense
    Tensor, a rank-2 SparseTensor or a RaggedTensor (rank 1: all values in row 0)."""
    if isinstance(values, SparseTensor):
        host = _host(values.values)
        indices = numpy.asarray(B.to_numpy(values.indices._value), _I64)
        dims = values._dims
        if len(dims) == 1:
            return numpy.zeros(len(host), _I64), host, 1
        if len(dims) != 2:
            raise InvalidArgumentError(f"{where}: a SparseTensor {what} must have rank 1 or 2, "
                                       f"got dense shape {list(dims)}")
        return indices[:, 0], host, dims[0]
    if isinstance(values, RaggedTensor):
        if values.ragged_rank != 1 or values.flat_values.ndim != 1:
            raise InvalidArgumentError(f"{where}: a RaggedTensor {what} must have rank 2, got "
                                       f"shape {values.shape}")
        return values._host_rowids(), _host(values.flat_values), values._nrows
    host = _host(_tensor(values))
    if host.ndim not in (1, 2):
        raise InvalidArgumentError(f"{where}: {what} must have rank 1 or 2, got shape "
                                   f"{list(host.shape)}")
    if host.ndim == 1:
        return numpy.zeros(host.size, _I64), host, 1
    return numpy.repeat(numpy.arange(host.shape[0], dtype=_I64), host.shape[1]), \
        host.reshape(-1), host.shape[0]


def _weights_values(weights, values, count, where):
    if isinstance(weights, SparseTensor) or isinstance(weights, RaggedTensor):
        host = _host(weights.values if isinstance(weights, SparseTensor)
                     else weights.flat_values)
        dtype = weights.dtype
    else:
        t = _tensor(weights)
        host, dtype = _host(t).reshape(-1), t.dtype
    if host.size != count:
        raise InvalidArgumentError(f"{where}: weights must have the shape of values ({count} "
                                   f"values), got {host.size} weights")
    return host, dtype


def bincount(values, weights=None, axis=0, minlength=None, maxlength=None,
             binary_output=False, name=None):
    """Counts of each non-negative integer in ``values`` as a SparseTensor: over all values
    (``axis=0``, shape ``[size]``) or per row (``axis=-1``, shape ``[rows, size]``). ``size``
    is ``max(values) + 1``, at least ``minlength``, at most ``maxlength`` (larger values are
    dropped). ``weights`` sums weights instead of counting; ``binary_output`` gives 1 for
    each present value."""
    where = "sparse.bincount"
    runs_in_python(where)
    if axis not in (0, -1):
        raise ValueError(f"{where}: axis must be 0 or -1, got {axis!r}")
    if weights is not None and binary_output:
        raise ValueError(f"{where}: weights and binary_output=True cannot be used together")
    rows, host, nrows = _rows_and_values(values, where)
    dtype = values.dtype if isinstance(values, (SparseTensor, RaggedTensor)) else \
        _tensor(values).dtype
    if not dtype.is_integer:
        raise TypeError(f"{where}: values must be integers, got {dtype.name}")
    host = host.astype(_I64)
    if host.size and host.min() < 0:
        raise InvalidArgumentError(f"{where}: input values must all be non-negative, got "
                                   f"{int(host.min())}")
    weight_host = None
    if weights is not None:
        weight_host, dtype = _weights_values(weights, values, host.size, where)
    size = int(host.max()) + 1 if host.size else 0
    if minlength is not None:
        size = max(size, int(minlength))
    if maxlength is not None:
        size = min(size, int(maxlength))
    keep = host < size
    rows, host = rows[keep], host[keep]
    if axis == 0:
        rows = numpy.zeros_like(rows)
    keys = rows * max(size, 1) + host
    present, inverse = numpy.unique(keys, return_inverse=True)
    inverse = inverse.reshape(-1)
    if binary_output:
        sums = numpy.ones(len(present), dtype.np)
    elif weight_host is None:
        sums = numpy.bincount(inverse, minlength=len(present)).astype(dtype.np)
    else:
        sums = numpy.zeros(len(present), dtype.np)
        numpy.add.at(sums, inverse, weight_host[keep].astype(dtype.np))
    bins, out_rows = present % max(size, 1), present // max(size, 1)
    if axis == 0:
        indices, dims = bins.reshape(-1, 1), (size,)
    else:
        indices, dims = numpy.stack([out_rows, bins], axis=1), (nrows, size)
    return SparseTensor._trusted(int64_tensor(indices.reshape(-1, len(dims))),
                                 Tensor(B.from_numpy(sums)), dims)


# --- cross --------------------------------------------------------------------------------
def _shift_mix(v):
    return v ^ (v >> numpy.uint64(47))


def fingerprint_cat64(fp1, fp2):
    """TF's ``FingerprintCat64`` of two uint64 numbers (wrapping arithmetic)."""
    with numpy.errstate(over="ignore"):
        result = numpy.uint64(fp1) ^ _MUL
        result ^= _shift_mix(numpy.uint64(fp2) * _MUL) * _MUL
        result *= _MUL
        result = _shift_mix(result) * _MUL
        return _shift_mix(result)


def feature_rows(value, where, index):
    """The features of each row of one cross input: a list of host arrays (strings or
    int64). A SparseTensor or dense Tensor of rank 2, or a RaggedTensor of rank 2."""
    if isinstance(value, SparseTensor):
        if len(value._dims) != 2:
            raise InvalidArgumentError(f"{where}: inputs[{index}] must have rank 2, got dense "
                                       f"shape {list(value._dims)}")
        host = _host(value.values)
        rows = numpy.asarray(B.to_numpy(value.indices._value), _I64)[:, 0]
        nrows = value._dims[0]
        order = numpy.argsort(rows, kind="stable")
        bounds = numpy.searchsorted(rows[order], numpy.arange(nrows + 1))
        out = [host[order[bounds[i]:bounds[i + 1]]] for i in range(nrows)]
    elif isinstance(value, RaggedTensor):
        if value.ragged_rank != 1 or value.flat_values.ndim != 1:
            raise InvalidArgumentError(f"{where}: inputs[{index}] must have rank 2, got shape "
                                       f"{value.shape}")
        host, splits = _host(value.flat_values), value._splits
        out = [host[splits[i]:splits[i + 1]] for i in range(value._nrows)]
    else:
        host = _host(_tensor(value))
        if host.ndim != 2:
            raise InvalidArgumentError(f"{where}: inputs[{index}] must have rank 2, got shape "
                                       f"{list(host.shape)}")
        out = list(host)
    if host.dtype != OBJECT and host.dtype.kind not in "iu":
        raise TypeError(f"{where}: inputs[{index}] must hold strings or integers, got "
                        f"{host.dtype}")
    return out


def crossed_values(rows, hashed):
    """The crosses of all rows end to end: an int64 tensor (hashed) or a string tensor."""
    flat = [v for r in rows for v in r]
    if hashed:
        return Tensor(B.from_numpy(numpy.asarray(flat, _I64).reshape(-1)))
    array = numpy.empty(len(flat), OBJECT)
    array[:] = flat
    return string_tensor(array)


def crossed_rows(columns, where, hashed=False, num_buckets=0, hash_key=None, separator=b"_X_"):
    """The crosses of each row: every combination of one feature per column (the last
    column varying fastest), joined by ``separator`` (bytes) or hashed (int64)."""
    from .keras.layers.farmhash import fingerprint64
    counts = {len(c) for c in columns}
    if len(counts) != 1:
        raise InvalidArgumentError(f"{where}: the inputs have different batch sizes "
                                   f"{[len(c) for c in columns]}")
    key = numpy.uint64(DEFAULT_HASH_KEY if hash_key is None else int(hash_key))
    out = []
    for row in zip(*columns):
        if hashed:
            parts = [fingerprint64(list(f)) if f.dtype == OBJECT
                     else f.astype(_I64).view(numpy.uint64) for f in row]
            crosses = []
            for combo in itertools.product(*parts):
                h = key
                for part in combo:
                    h = fingerprint_cat64(h, part)
                modulus = numpy.uint64(num_buckets) if num_buckets > 0 else _INT64_MAX
                crosses.append(int(h % modulus))
        else:
            parts = [list(f) if f.dtype == OBJECT else [str(int(v)).encode() for v in f]
                     for f in row]
            crosses = [separator.join(combo) for combo in itertools.product(*parts)]
        out.append(crosses)
    return out


def _cross(inputs, where, hashed, num_buckets=0, hash_key=None, separator=b"_X_"):
    runs_in_python(where)
    if not isinstance(inputs, (list, tuple)) or not inputs:
        raise TypeError(f"{where}: inputs must be a non-empty list of SparseTensors or "
                        f"Tensors, got {type(inputs).__name__}")
    # TF crosses the SparseTensors first, then the dense inputs.
    numbered = list(enumerate(inputs))
    order = [(i, x) for i, x in numbered if isinstance(x, SparseTensor)] + \
        [(i, x) for i, x in numbered if not isinstance(x, SparseTensor)]
    columns = [feature_rows(x, where, i) for i, x in order]
    rows = crossed_rows(columns, where, hashed, num_buckets, hash_key, separator)
    width = max((len(r) for r in rows), default=0)
    indices = numpy.asarray([[i, j] for i, r in enumerate(rows) for j in range(len(r))],
                            _I64).reshape(-1, 2)
    return SparseTensor._trusted(int64_tensor(indices), crossed_values(rows, hashed),
                                 (len(rows), width))


def cross(inputs, name=None, separator=None):
    """The crosses of the features in each row of ``inputs`` (rank-2 SparseTensors and
    Tensors of strings or integers), as a SparseTensor of strings joined by ``separator``
    (default ``"_X_"``); SparseTensors are crossed before dense inputs, as in TF."""
    where = "sparse.cross"
    sep = b"_X_" if separator is None else (separator.encode("utf-8")
                                           if isinstance(separator, str) else bytes(separator))
    return _cross(inputs, where, False, separator=sep)


def cross_hashed(inputs, num_buckets=0, hash_key=None, name=None):
    """The crosses of ``cross``, each hashed to an int64 (``FingerprintCat64`` of the
    features' ``Fingerprint64``, or of integer features themselves, starting from
    ``hash_key``), modulo ``num_buckets`` when it is > 0."""
    where = "sparse.cross_hashed"
    if int(num_buckets) < 0:
        raise InvalidArgumentError(f"{where}: num_buckets must be >= 0, got {num_buckets}")
    return _cross(inputs, where, True, int(num_buckets), hash_key)


# --- mask, reset_shape, split, sampled_addmm ---------------------------------------------
def mask(a, mask_indices, name=None):
    """The ``IndexedSlices`` ``a`` without the slices whose index is in ``mask_indices``."""
    where = "sparse.mask"
    if not isinstance(a, IndexedSlices):
        raise TypeError(f"{where}: a must be a tf.IndexedSlices, got {type(a).__name__}")
    runs_in_python(where)
    indices = numpy.asarray(B.to_numpy(a.indices._value))
    removed = numpy.asarray(B.to_numpy(_tensor(mask_indices)._value)).reshape(-1)
    keep = numpy.flatnonzero(~numpy.isin(indices, removed))
    return IndexedSlices(gather(a.values, int64_tensor(keep)),
                         Tensor(B.from_numpy(indices[keep])), a.dense_shape)


def reset_shape(sp_input, new_shape=None):
    """``sp_input`` with dense shape ``new_shape`` (same rank, no dimension smaller), or by
    default the tightest shape holding its indices."""
    where = "sparse.reset_shape"
    if not isinstance(sp_input, SparseTensor):
        raise TypeError(f"{where}: sp_input must be a tf.SparseTensor, got "
                        f"{type(sp_input).__name__}")
    if new_shape is None:
        runs_in_python(where)
        indices = sp_input._host_indices(where)
        dims = indices.max(axis=0) + 1 if len(indices) else numpy.zeros(len(sp_input._dims))
        return SparseTensor._trusted(sp_input.indices, sp_input.values,
                                     [int(d) for d in dims])
    dims = int_list(new_shape, f"{where}'s new_shape")
    if len(dims) != len(sp_input._dims) or any(n < o for n, o in zip(dims, sp_input._dims)):
        raise ValueError(f"{where}: new_shape {dims} must have rank {len(sp_input._dims)} and "
                         f"no dimension smaller than sp_input's dense shape "
                         f"{list(sp_input._dims)}")
    return SparseTensor._trusted(sp_input.indices, sp_input.values, dims,
                                 checked=sp_input._checked)


def split(sp_input=None, num_split=None, axis=None, name=None):
    """``num_split`` SparseTensors cut from ``sp_input`` along ``axis``; the first
    ``size % num_split`` pieces are one longer than the others."""
    where = "sparse.split"
    if not isinstance(sp_input, SparseTensor):
        raise TypeError(f"{where}: sp_input must be a tf.SparseTensor, got "
                        f"{type(sp_input).__name__}")
    dims = sp_input._dims
    count = int_list(num_split, f"{where}'s num_split")[0] if num_split is not None else 0
    if count < 1:
        raise ValueError(f"{where}: num_split must be >= 1, got {num_split!r}")
    if axis is None:
        raise ValueError(f"{where}: axis is required")
    axis = int_list(axis, f"{where}'s axis")[0]
    if not -len(dims) <= axis < len(dims):
        raise InvalidArgumentError(f"{where}: axis {axis} is out of range for dense shape "
                                   f"{list(dims)}")
    axis %= len(dims)
    size = dims[axis]
    pieces, start = [], 0
    for i in range(count):
        length = size // count + (1 if i < size % count else 0)
        begin = [0] * len(dims)
        begin[axis] = start
        extent = list(dims)
        extent[axis] = length
        pieces.append(slice_sparse(sp_input, begin, extent))
        start += length
    return pieces


def sampled_addmm(indices, values, dense_shape, mat1, mat2, beta=1.0, alpha=1.0,
                  output_type=dtypes.float32):
    """``alpha * (mat1 @ mat2)`` at ``indices`` plus ``beta * values``: the components
    ``(indices, values, dense_shape)`` of the result (batched over leading dimensions)."""
    where = "sparse.sampled_addmm"
    out = dtypes.as_dtype(output_type)
    indices, dense_shape = _tensor(indices), _tensor(dense_shape)
    values = cast(_tensor(values), out)
    mat1, mat2 = cast(_tensor(mat1), out), cast(_tensor(mat2), out)
    if mat1.ndim < 2 or mat1.ndim != mat2.ndim or int(mat1.shape[-1]) != int(mat2.shape[-2]):
        raise InvalidArgumentError(f"{where}: mat1 {list(mat1.shape)} and mat2 "
                                   f"{list(mat2.shape)} must be (batches of) matrices with "
                                   f"matching inner dimensions")
    product_shape = list(mat1.shape[:-1]) + [int(mat2.shape[-1])]
    wanted = [int(d) for d in numpy.reshape(_host(dense_shape), -1)]
    if wanted != product_shape[-2:] and wanted != product_shape:
        raise InvalidArgumentError(f"{where}: dense_shape {wanted} does not match the shape "
                                   f"{product_shape} of mat1 @ mat2")
    picked = gather_nd(matmul(mat1, mat2), indices, batch_dims=indices.ndim - 2)
    return indices, alpha * picked + beta * values, dense_shape


def install(tf):
    """Set these functions on ``tf.sparse`` (idempotent)."""
    for name in __all__:
        setattr(tf.sparse, name, globals()[name])

