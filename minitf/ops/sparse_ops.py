"""``tf.sparse``: functions on ``SparseTensor`` (``minitf.sparse_tensor``); the reordering and
reshaping ones are in ``sparse_layout_ops``, the index helpers in ``sparse_index``.

Everything is built from differentiable minitf ops on the values (``gather`` to read dense
operands at the indices, ``unsorted_segment_sum`` to write into dense results, ``multiply``,
...), so gradients reach the values of a SparseTensor and the dense operands.

Two kinds of index work:

- element-wise, as ops on the index tensor (``to_dense``, ``sparse_dense_matmul``, ``reduce_*``
  with a dense result, ``add`` with a dense operand, ``reshape``, ``slice``, ``retain``...):
  inside a ``minitf.function`` these replay on new indices;
- sorting and merging (``reorder``, ``transpose``, ``concat``, ``add`` of two SparseTensors,
  ``maximum``/``minimum``, sparse reductions, ``fill_empty_rows``): computed on the host from
  the indices' values, which a function trace reads as a value (new indices re-trace).

Indices are checked to lie inside ``dense_shape`` once per SparseTensor, by the first function
that needs it (also on every replay of a trace that made that check).
"""
import math

import numpy

from .. import backend as B
from .. import dtypes
from ..host import host_call
from ..nest import flatten, map_structure
from ..sparse_tensor import SparseTensor
from ..tensor import Tensor
from . import sparse_layout_ops as _layout
from .array_ops import boolean_mask, concat as dense_concat, gather, ones, reshape, zeros_like
from .array_ops import transpose as dense_transpose
from .convert import operand_pair
from .math_ops import (abs as abs_, cast, divide, exp, greater, greater_equal,
                       maximum as dense_maximum, minimum as dense_minimum, multiply, not_equal,
                       stop_gradient, where)
from .registry import InvalidArgumentError
from .scatter_ops import tensor_scatter_nd_add
from .segment_ops import unsorted_segment_max, unsorted_segment_sum
from .sparse_index import (as_tensor, check_indices, flat_positions, host_flat, host_unflat,
                           int64_tensor, int_list, require_sparse, scalar_like, unflatten)


# --- conversion ------------------------------------------------------------------------------

def to_dense(sp_input, default_value=None, validate_indices=True, name=None):
    """The dense tensor of ``sp_input``: its values at its indices, ``default_value`` (0)
    elsewhere. ``validate_indices`` checks that the indices are sorted and unique; without the
    check repeated indices are summed."""
    what = "sparse.to_dense"
    sp = require_sparse(what, sp_input)
    check_indices(what, sp, ordered=bool(validate_indices))
    dims, size = sp._dims, math.prod(sp._dims)
    positions = flat_positions(sp.indices, dims)
    if sp.values.dtype is dtypes.string:
        return _string_to_dense(sp, positions, dims, size, default_value)
    dense = reshape(unsorted_segment_sum(sp.values, positions, size), dims)
    if default_value is None or (not isinstance(default_value, Tensor)
                                 and numpy.ndim(default_value) == 0 and default_value == 0):
        return dense
    default = scalar_like(what, default_value, sp.values, "default_value")
    hits = unsorted_segment_sum(ones((int(positions.shape[0]),), dtype=dtypes.int32),
                                positions, size)
    return where(reshape(greater(hits, 0), dims), dense, default)


def _string_to_dense(sp, positions, dims, size, default_value):
    """``to_dense`` of string values (host object arrays; a repeated index keeps the last
    value, strings having no sum)."""
    from ..string_tensors import bytes_array, string_tensor
    default = b"" if default_value is None else bytes_array(default_value,
                                                            "sparse.to_dense's default_value")
    if numpy.ndim(default) != 0:
        raise ValueError(f"sparse.to_dense: default_value must be a scalar, got shape "
                         f"{numpy.shape(default)}")
    dense = numpy.full(size, default, dtype=object)
    dense[numpy.asarray(B.to_numpy(positions._value), numpy.int64)] = sp.values._value
    return string_tensor(dense.reshape(dims))


def from_dense(tensor, name=None):
    """The SparseTensor of the non-zero entries of ``tensor``, in row-major order."""
    x = as_tensor(tensor)
    flat = reshape(x, (-1,))
    positions = reshape(where(not_equal(flat, zeros_like(flat))), (-1,))
    dims = tuple(x.shape)
    return SparseTensor._trusted(unflatten(positions, dims), gather(flat, positions), dims)


def eye(num_rows, num_columns=None, dtype=dtypes.float32, name=None):
    """A sparse identity matrix of shape ``(num_rows, num_columns)`` (square by default)."""
    rows = int_list(num_rows, "sparse.eye's num_rows")[0]
    cols = rows if num_columns is None else int_list(num_columns, "sparse.eye's num_columns")[0]
    if rows < 0 or cols < 0:
        raise InvalidArgumentError(f"sparse.eye: num_rows and num_columns must be >= 0, got "
                                   f"{rows} and {cols}")
    diagonal = numpy.arange(min(rows, cols), dtype=numpy.int64)
    return SparseTensor._trusted(int64_tensor(numpy.stack([diagonal, diagonal], axis=1)),
                                 ones((len(diagonal),), dtype=dtype), (rows, cols))


def to_indicator(sp_input, vocab_size, name=None):
    """A bool tensor of shape ``dense_shape[:-1] + [vocab_size]``, true at
    ``indices[i, :-1] + [values[i]]``: the integer values are ids in the last dimension."""
    what = "sparse.to_indicator"
    sp = require_sparse(what, sp_input)
    vocab = int_list(vocab_size, f"{what}'s vocab_size")[0]
    if not sp.dtype.is_integer or not sp._dims:
        raise InvalidArgumentError(f"{what}: needs integer values and rank >= 1, got "
                                   f"{sp.dtype.name} values of dense shape {list(sp._dims)}")
    check_indices(what, sp)

    def check(ids):
        if ids.size and bool(((ids < 0) | (ids >= vocab)).any()):
            i = int(B.xp.argmax((ids < 0) | (ids >= vocab)))
            raise InvalidArgumentError(f"{what}: values[{i}] = {int(ids[i])} is not in "
                                       f"[0, {vocab}) (vocab_size)")
    check.reads_only = True
    host_call(check, (sp.values,))
    lead = sp._dims[:-1]
    ids = cast(sp.values, dtypes.int64)
    positions = flat_positions(sp.indices, lead, range(len(lead))) * vocab + ids
    size = math.prod(lead) * vocab
    hits = unsorted_segment_sum(ones((int(ids.shape[0]),), dtype=dtypes.int32), positions, size)
    return reshape(greater(hits, 0), lead + (vocab,))


def map_values(op, *args, **kwargs):
    """``op`` applied to the values of the SparseTensors among ``args``/``kwargs`` (which must
    share indices and dense shape); returns a SparseTensor with those indices."""
    sparse = [x for x in flatten([list(args), kwargs]) if isinstance(x, SparseTensor)]
    if not sparse:
        raise ValueError("sparse.map_values: no SparseTensor among the arguments")
    first = sparse[0]
    for other in sparse[1:]:
        same = other.indices is first.indices or (
            tuple(other.indices.shape) == tuple(first.indices.shape)
            and bool(B.xp.array_equal(other.indices._value, first.indices._value)))
        if other._dims != first._dims or not same:
            raise InvalidArgumentError(
                "sparse.map_values: the SparseTensors must have the same indices and dense "
                f"shape, got dense shapes {list(first._dims)} and {list(other._dims)}"
                + ("" if other._dims != first._dims else " with different indices"))
    unpack = (lambda x: x.values if isinstance(x, SparseTensor) else x)
    values = as_tensor(op(*map_structure(unpack, list(args)),
                          **map_structure(unpack, dict(kwargs))))
    if tuple(values.shape) != tuple(first.values.shape):
        raise InvalidArgumentError(f"sparse.map_values: op must keep the shape of the values "
                                   f"{tuple(first.values.shape)}, got {tuple(values.shape)}")
    return first._with(values)


# --- element-wise arithmetic -----------------------------------------------------------------

def dense_cwise(kind, sp, other):
    """``sp * other`` or ``sp / other`` for a dense tensor or number ``other`` that broadcasts
    to ``sp``'s shape: a SparseTensor with the same indices (TF's SparseDenseCwise ops)."""
    what = "SparseTensor.__mul__" if kind == "mul" else "SparseTensor.__truediv__"
    if isinstance(other, SparseTensor):
        raise TypeError(f"{what}: both operands are SparseTensors; the operator takes a dense "
                        f"tensor or a number (tf.sparse.map_values(tf.multiply, a, b) combines "
                        f"SparseTensors with the same indices)")
    values, dense = operand_pair(what, sp.values, other)
    dims, shape = sp._dims, tuple(dense.shape)
    if len(shape) > len(dims) or any(d not in (1, s) for d, s in zip(shape[::-1], dims[::-1])):
        raise InvalidArgumentError(
            f"{what}: the dense operand of shape {shape} does not broadcast to the "
            f"SparseTensor's dense shape {list(dims)} (only the dense side broadcasts)")
    aligned = (1,) * (len(dims) - len(shape)) + shape
    columns = [i for i, d in enumerate(aligned) if d != 1]
    if columns:
        check_indices(what, sp)
        at = gather(reshape(dense, (-1,)),
                    flat_positions(sp.indices, [aligned[c] for c in columns], columns))
    else:
        at = reshape(dense, ())
    return sp._with(multiply(values, at) if kind == "mul" else divide(values, at))


def add(a, b, threshold=0, name=None):
    """``a + b`` where at least one is a SparseTensor (same shapes, no broadcasting): a dense
    Tensor when the other is dense; a SparseTensor (repeated indices summed) when both are
    sparse, leaving out sums whose magnitude is below ``threshold``."""
    what = "sparse.add"
    a_sparse, b_sparse = isinstance(a, SparseTensor), isinstance(b, SparseTensor)
    if not (a_sparse or b_sparse):
        raise TypeError(f"{what}: at least one of a and b must be a tf.SparseTensor, got "
                        f"{type(a).__name__} and {type(b).__name__} (tf.add adds dense tensors)")
    if a_sparse and b_sparse:
        return _add_sparse(what, a, b, threshold)
    sp, dense = (a, b) if a_sparse else (b, a)
    values, dense = operand_pair(what, sp.values, dense)
    if tuple(dense.shape) != sp._dims:
        raise InvalidArgumentError(
            f"{what}: the dense operand has shape {tuple(dense.shape)}, the SparseTensor's "
            f"dense shape is {list(sp._dims)}; they must be equal (no broadcasting)")
    check_indices(what, sp)
    positions = reshape(flat_positions(sp.indices, sp._dims), (-1, 1))
    return reshape(tensor_scatter_nd_add(reshape(dense, (-1,)), positions, values), sp._dims)


def _same_shape(what, a, b):
    if a._dims != b._dims:
        raise InvalidArgumentError(f"{what}: the SparseTensors have dense shapes "
                                   f"{list(a._dims)} and {list(b._dims)}; they must be equal")


def _union(what, a, b):
    """Sorted unique positions of both operands, and each entry's place among them."""
    _same_shape(what, a, b)
    check_indices(what, a)
    check_indices(what, b)
    pa = host_flat(a._host_indices(what), a._dims)
    pb = host_flat(b._host_indices(what), b._dims)
    union = numpy.union1d(pa, pb)
    return union, numpy.searchsorted(union, pa), numpy.searchsorted(union, pb)


def _add_sparse(what, a, b, threshold):
    va, vb = operand_pair(what, a.values, b.values)
    union, at_a, at_b = _union(what, a, b)
    values = unsorted_segment_sum(dense_concat([va, vb], axis=0),
                                  int64_tensor(numpy.concatenate([at_a, at_b])), len(union))
    indices = int64_tensor(host_unflat(union, a._dims))
    if isinstance(threshold, Tensor) or threshold != 0:
        keep = greater_equal(abs_(values), scalar_like(what, threshold, values, "threshold"))
        indices, values = boolean_mask(indices, keep), boolean_mask(values, keep)
    return SparseTensor._trusted(indices, values, a._dims)


def _extreme(what, pick, sp_a, sp_b):
    a, b = require_sparse(what, sp_a, "sp_a"), require_sparse(what, sp_b, "sp_b")
    va, vb = operand_pair(what, a.values, b.values)
    union, at_a, at_b = _union(what, a, b)
    # An index missing from one operand is an implicit zero there.
    dense_a = unsorted_segment_sum(va, int64_tensor(at_a), len(union))
    dense_b = unsorted_segment_sum(vb, int64_tensor(at_b), len(union))
    return SparseTensor._trusted(int64_tensor(host_unflat(union, a._dims)), pick(dense_a, dense_b),
                                 a._dims)


def maximum(sp_a, sp_b, name=None):
    """Element-wise maximum of two SparseTensors of the same shape, over the union of their
    indices (a missing entry counts as 0)."""
    return _extreme("sparse.maximum", dense_maximum, sp_a, sp_b)


def minimum(sp_a, sp_b, name=None):
    """Element-wise minimum of two SparseTensors of the same shape, over the union of their
    indices (a missing entry counts as 0)."""
    return _extreme("sparse.minimum", dense_minimum, sp_a, sp_b)


# --- products and reductions -----------------------------------------------------------------

def sparse_dense_matmul(sp_a, b, adjoint_a=False, adjoint_b=False, name=None):
    """``op(sp_a) @ op(b)`` for a rank-2 SparseTensor and a dense matrix (or a dense ``sp_a``
    and a SparseTensor ``b``), ``op`` transposing where ``adjoint_*`` is set; a dense Tensor."""
    what = "sparse.sparse_dense_matmul"
    if not isinstance(sp_a, SparseTensor):
        if isinstance(b, SparseTensor):
            # a @ B = (B^T @ a^T)^T
            return dense_transpose(sparse_dense_matmul(
                b, sp_a, adjoint_a=not adjoint_b, adjoint_b=not adjoint_a))
        raise TypeError(f"{what}: one of sp_a and b must be a tf.SparseTensor, got "
                        f"{type(sp_a).__name__} and {type(b).__name__} (tf.matmul multiplies "
                        f"dense matrices)")
    if isinstance(b, SparseTensor):
        raise TypeError(f"{what}: both operands are SparseTensors; make one dense with "
                        f"tf.sparse.to_dense")
    values, b = operand_pair(what, sp_a.values, b)
    if len(sp_a._dims) != 2 or b.ndim != 2:
        raise InvalidArgumentError(f"{what}: needs a rank-2 SparseTensor and a rank-2 dense "
                                   f"matrix, got dense shapes {list(sp_a._dims)} and "
                                   f"{list(b.shape)}")
    check_indices(what, sp_a)
    rows, cols = sp_a.indices[:, 0], sp_a.indices[:, 1]
    m, k = sp_a._dims
    if adjoint_a:
        rows, cols, m, k = cols, rows, k, m
    if adjoint_b:
        b = dense_transpose(b)
    if int(b.shape[0]) != k:
        raise InvalidArgumentError(
            f"{what}: inner dimensions differ: {'adjoint(a)' if adjoint_a else 'a'} has shape "
            f"{[m, k]}, {'adjoint(b)' if adjoint_b else 'b'} has shape {list(b.shape)}")
    products = gather(b, cols) * reshape(values, (-1, 1))
    return unsorted_segment_sum(products, rows, m)


def _axes(what, axis, rank):
    if axis is None:
        return tuple(range(rank))
    out = set()
    for a in int_list(axis, f"{what}'s axis"):
        if not -rank <= a < rank:
            raise InvalidArgumentError(f"{what}: axis {a} is out of range for a SparseTensor "
                                       f"of rank {rank}")
        out.add(a % rank)
    return tuple(sorted(out))


def _reduce(kind, sp_input, axis, keepdims, output_is_sparse):
    what = f"sparse.reduce_{kind}"
    sp = require_sparse(what, sp_input)
    dims = sp._dims
    axes = _axes(what, axis, len(dims))
    kept = [d for d in range(len(dims)) if d not in axes]
    kept_dims = tuple(dims[d] for d in kept)
    out_dims = tuple(1 if d in axes else dims[d] for d in range(len(dims))) if keepdims \
        else kept_dims
    check_indices(what, sp)
    n = int(sp.values.shape[0])
    if output_is_sparse:
        positions = host_flat(sp._host_indices(what)[:, kept], kept_dims)
        present, segments = numpy.unique(positions, return_inverse=True)
        segments = int64_tensor(segments.reshape(-1))
        reduce = unsorted_segment_sum if kind == "sum" else unsorted_segment_max
        values = reduce(sp.values, segments, len(present))
        indices = numpy.zeros((len(present), len(out_dims)), dtype=numpy.int64)
        indices[:, kept if keepdims else slice(None)] = host_unflat(present, kept_dims)
        return SparseTensor._trusted(int64_tensor(indices), values, out_dims)
    size = math.prod(kept_dims)
    positions = flat_positions(sp.indices, kept_dims, kept)
    if kind == "sum":
        out = unsorted_segment_sum(sp.values, positions, size)
    else:
        # Only stored values take part; an output with none of them is 0 (TF's rule).
        out = unsorted_segment_max(sp.values, positions, size)
        hits = unsorted_segment_sum(ones((n,), dtype=dtypes.int32), positions, size)
        out = where(greater(hits, 0), out, zeros_like(out))
    return reshape(out, out_dims)


def reduce_sum(sp_input, axis=None, keepdims=None, output_is_sparse=False, name=None):
    """The sum over ``axis`` (all axes by default) of a SparseTensor: a dense Tensor, or a
    SparseTensor of the non-empty sums with ``output_is_sparse``."""
    return _reduce("sum", sp_input, axis, bool(keepdims), output_is_sparse)


def reduce_max(sp_input, axis=None, keepdims=None, output_is_sparse=False, name=None):
    """The maximum over ``axis`` of the stored values (implicit zeros do not take part; an
    output with no stored value is 0)."""
    return _reduce("max", sp_input, axis, bool(keepdims), output_is_sparse)


def softmax(sp_input, name=None):
    """Softmax over the last dimension of a SparseTensor of rank >= 2, over the stored values
    only (implicit zeros do not take part); same indices."""
    what = "sparse.softmax"
    sp = require_sparse(what, sp_input)
    rank = len(sp._dims)
    if rank < 2 or not sp.dtype.is_floating:
        raise InvalidArgumentError(f"{what}: needs a float SparseTensor of rank >= 2, got "
                                   f"{sp.dtype.name} values of dense shape {list(sp._dims)}")
    check_indices(what, sp)
    lead = sp._dims[:-1]
    groups, n = math.prod(lead), int(sp.values.shape[0])
    if groups > max(4 * n, 1 << 20):   # numbered densely only when that stays small
        positions = host_flat(sp._host_indices(what)[:, :-1], lead)
        present, segments = numpy.unique(positions, return_inverse=True)
        row, groups = int64_tensor(segments.reshape(-1)), len(present)
    else:
        row = flat_positions(sp.indices, lead, range(rank - 1))
    shift = stop_gradient(unsorted_segment_max(sp.values, row, groups))
    e = exp(sp.values - gather(shift, row))
    return sp._with(e / gather(unsorted_segment_sum(e, row, groups), row))


def sparse_aware_abs(x, name=None):
    """``tf.abs``, also for a SparseTensor (the absolute values at the same indices)."""
    return x.__abs__() if isinstance(x, SparseTensor) else abs_(x, name=name)


sparse_aware_abs.op = abs_.op   # the registered op, as on the other public op functions


#: ``tf.sparse``'s names.
PUBLIC = {"SparseTensor": SparseTensor, "add": add, "concat": _layout.concat,
          "expand_dims": _layout.expand_dims, "eye": eye,
          "fill_empty_rows": _layout.fill_empty_rows, "from_dense": from_dense,
          "map_values": map_values, "maximum": maximum, "minimum": minimum,
          "reduce_max": reduce_max, "reduce_sum": reduce_sum, "reorder": _layout.reorder,
          "reshape": _layout.reshape_sparse, "retain": _layout.retain,
          "segment_mean": _layout.segment_mean, "segment_sqrt_n": _layout.segment_sqrt_n,
          "segment_sum": _layout.segment_sum, "slice": _layout.slice_sparse, "softmax": softmax,
          "sparse_dense_matmul": sparse_dense_matmul, "to_dense": to_dense,
          "to_indicator": to_indicator, "transpose": _layout.transpose}
