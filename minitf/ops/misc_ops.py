"""Small TF functions built from registered ops: ``confusion_matrix``, ``histogram_fixed_width``,
``unravel_index``, ``multiply_no_nan``, ``identity_n``, ``broadcast_*_shape``, ``gather`` with
``batch_dims`` and the stateless seed helpers of ``tf.random.experimental``."""
import numpy

from .. import backend as B
from .. import dtypes
from ..tensor import Tensor, TensorShape
from . import array_ops, math_ops, reduce_ops
from .convert import convert_to_tensor
from .registry import InvalidArgumentError


def _t(value, dtype=None):
    return value if isinstance(value, Tensor) else convert_to_tensor(value, dtype=dtype)


def _host_int(value):
    return int(B.to_numpy(value._value)) if isinstance(value, Tensor) else int(value)


def confusion_matrix(labels, predictions, num_classes=None, weights=None, dtype=dtypes.int32,
                     name=None):
    """``m[i, j]``: the (weighted) number of examples of label ``i`` predicted as ``j``.
    Without ``num_classes``, one more than the largest label or prediction."""
    from .segment_ops import unsorted_segment_sum
    labels = math_ops.cast(_t(labels), dtypes.int64)
    predictions = math_ops.cast(_t(predictions), dtypes.int64)
    if tuple(labels.shape) != tuple(predictions.shape) or labels.ndim != 1:
        raise InvalidArgumentError(f"confusion_matrix: labels and predictions must be 1-D of "
                                   f"the same length, got shapes {tuple(labels.shape)} and "
                                   f"{tuple(predictions.shape)}")
    if num_classes is None:
        top = max(int(B.to_numpy(reduce_ops.reduce_max(labels)._value)) if labels.shape[0] else 0,
                  int(B.to_numpy(reduce_ops.reduce_max(predictions)._value))
                  if labels.shape[0] else 0)
        num_classes = top + 1
    n = _host_int(num_classes)
    dtype = dtypes.as_dtype(dtype)
    values = (array_ops.ones(labels.shape, dtype) if weights is None
              else math_ops.cast(_t(weights), dtype))
    flat = unsorted_segment_sum(values, labels * n + predictions, n * n)
    return array_ops.reshape(flat, (n, n))


def histogram_fixed_width(values, value_range, nbins=100, dtype=dtypes.int32, name=None):
    """Counts of ``values`` in ``nbins`` equal bins over ``value_range = [lo, hi]``; values
    outside go to the first or last bin (TF's rule)."""
    from .segment_ops import bincount
    x = _t(values)
    bounds = _t(value_range, dtype=x.dtype if x.dtype.is_floating else None)
    lo, hi = bounds[0], bounds[1]
    nbins = _host_int(nbins)
    scaled = (math_ops.cast(x, "float64") - math_ops.cast(lo, "float64")) / \
        math_ops.cast(hi - lo, "float64")
    index = math_ops.clip_by_value(math_ops.floor(scaled * nbins), 0, nbins - 1)
    return bincount(math_ops.cast(array_ops.reshape(index, [-1]), "int32"), minlength=nbins,
                    maxlength=nbins, dtype=dtype)


def unravel_index(indices, dims, name=None):
    """The coordinates of flat ``indices`` in an array of shape ``dims``: shape
    ``(len(dims),) + indices.shape``."""
    flat = _t(indices)
    shape = [int(d) for d in (B.to_numpy(dims._value) if isinstance(dims, Tensor) else dims)]
    total = int(numpy.prod(shape))
    bad = B.to_numpy(((flat < 0) | (flat >= total))._value)
    if bad.any():
        raise InvalidArgumentError(f"unravel_index: indices must be in [0, {total}) for dims "
                                   f"{shape}")
    coords, rest = [], flat
    for size in reversed(shape):
        coords.append(math_ops.floormod(rest, size))
        rest = math_ops.floordiv(rest, size)
    return array_ops.stack(coords[::-1], axis=0)


def multiply_no_nan(x, y, name=None):
    """``x * y``, but 0 where ``y`` is 0 even if ``x`` is inf or NaN."""
    x, y = _t(x), _t(y)
    zero = array_ops.zeros_like(x * y)
    return math_ops.where(math_ops.equal(y, 0), zero, x * y)


def identity_n(input, name=None):  # noqa: A002
    return [math_ops.identity(_t(v)) for v in input]


def accumulate_n(inputs, shape=None, tensor_dtype=None, name=None):
    return math_ops.add_n(inputs)


def broadcast_static_shape(shape_x, shape_y):
    """The broadcast of two ``TensorShape``s (None dims stay unknown)."""
    a, b = list(TensorShape(shape_x)), list(TensorShape(shape_y))
    n = max(len(a), len(b))
    a, b = [1] * (n - len(a)) + a, [1] * (n - len(b)) + b
    out = []
    for x, y in zip(a, b):
        if x == 1 or x == y:
            out.append(y)
        elif y == 1:
            out.append(x)
        elif x is None or y is None:
            out.append(None if x is None and y is None else (x or y))
        else:
            raise ValueError(f"broadcast_static_shape: shapes {TensorShape(shape_x)} and "
                             f"{TensorShape(shape_y)} are incompatible")
    return TensorShape(out)


def broadcast_dynamic_shape(shape_x, shape_y):
    """The broadcast of two shapes given as 1-D integer tensors, as a tensor."""
    x = [int(d) for d in B.to_numpy(_t(shape_x)._value)]
    y = [int(d) for d in B.to_numpy(_t(shape_y)._value)]
    try:
        return _t(numpy.asarray(numpy.broadcast_shapes(tuple(x), tuple(y)), numpy.int32))
    except ValueError:
        raise InvalidArgumentError(f"broadcast_dynamic_shape: shapes {x} and {y} are "
                                   f"incompatible") from None


def gather_batched(params, indices, axis, batch_dims):
    """``tf.gather`` with ``batch_dims``: the leading ``batch_dims`` axes of ``params`` and
    ``indices`` are matched, and each batch gathers along ``axis`` with its own indices."""
    p, idx = _t(params), _t(indices)
    b = batch_dims % idx.ndim if batch_dims < 0 else batch_dims
    axis = b if axis is None else axis % p.ndim
    if tuple(p.shape[:b]) != tuple(idx.shape[:b]) or axis < b:
        raise InvalidArgumentError(
            f"gather: with batch_dims={batch_dims} the first {b} dimensions of params "
            f"{tuple(p.shape)} and indices {tuple(idx.shape)} must match and axis ({axis}) must "
            f"not be one of them")
    batch = int(numpy.prod(p.shape[:b])) if b else 1
    middle = list(p.shape[b:axis])
    n = p.shape[axis]
    # move the gathered axis right after the batch axes, then flatten batch and that axis
    order = list(range(b)) + [axis] + [i for i in range(b, p.ndim) if i != axis]
    moved = array_ops.transpose(p, order)
    flat = array_ops.reshape(moved, (batch * n,) + tuple(moved.shape[b + 1:]))
    offsets = Tensor(B.xp.arange(batch, dtype=idx.dtype.np).reshape(
        tuple(p.shape[:b]) + (1,) * (idx.ndim - b)) * n)
    out = array_ops.gather(flat, idx + offsets, axis=0)    # B + I + middle + rest
    k = idx.ndim - b
    if middle:    # TF's order: B + middle + I + rest
        perm = (list(range(b)) + list(range(b + k, b + k + len(middle))) +
                list(range(b, b + k)) + list(range(b + k + len(middle), out.ndim)))
        out = array_ops.transpose(out, perm)
    return out


def _seed_dtype(seed):
    """The integer dtype of a seed (int32 for Python ints, as TF converts them)."""
    dtype = _t(seed).dtype
    if not dtype.is_integer:
        raise ValueError(f"stateless seed must be integers, got dtype {dtype.name}")
    return dtype


def stateless_split(seed, num=2, alg="auto_select"):
    """``num`` new seed pairs derived from ``seed`` (shape ``(num, 2)``, the seed's dtype)."""
    from .random_more import stateless_uniform
    dtype = _seed_dtype(seed)
    return stateless_uniform((int(num), 2), seed, minval=None, maxval=None, dtype=dtype)


def stateless_fold_in(seed, data, alg="auto_select"):
    """A new seed pair from ``seed`` and the integer ``data`` (in ``data``'s dtype, int32 for
    a Python int, as TF returns it)."""
    from .random_more import stateless_uniform
    _seed_dtype(seed)
    data = _t(data)
    if not data.dtype.is_integer:
        raise ValueError(f"stateless_fold_in: data must be an integer, got dtype "
                         f"{data.dtype.name}")
    mixed = stateless_uniform((2,), seed, minval=None, maxval=None, dtype="int64")
    return stateless_uniform((2,), mixed + math_ops.cast(data, "int64"), minval=None,
                             maxval=None, dtype=data.dtype)


__all__ = ["confusion_matrix", "histogram_fixed_width", "unravel_index", "multiply_no_nan",
           "identity_n", "accumulate_n", "broadcast_static_shape", "broadcast_dynamic_shape",
           "stateless_split", "stateless_fold_in"]
