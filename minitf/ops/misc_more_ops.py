"""Small top-level TF functions: ``bitcast``, ``realdiv``, ``parallel_stack``,
``histogram_fixed_width_bins``, ``edit_distance``, ``fingerprint``, ``invert_permutation``,
``approx_max_k``/``approx_min_k``, the graph-building helpers that are no-ops in eager code
(``no_op``, ``group``, ``tuple``), ``grad_pass_through``, ``no_gradient`` and
``AggregationMethod``."""
import functools

import numpy

from .. import backend as B
from .. import dtypes
from ..tensor import Tensor, host_value
from . import array_ops, math_ops
from .composite_ops import TopKV2, _flat_take, stable_argsort
from .convert import convert_to_tensor, operand_pair
from .registry import InvalidArgumentError, OPS, _ALIASES, defop


def _t(value, dtype=None):
    return value if isinstance(value, Tensor) else convert_to_tensor(value, dtype=dtype)


# --- bitcast -----------------------------------------------------------------------------------

def _view_forward(x, dtype):
    return B.xp.ascontiguousarray(x).reshape(x.shape).view(dtype)  # (which makes 0-d 1-d)


# The bits of an array read as another dtype (numpy's ``view``: a smaller item multiplies the
# last axis, a larger one divides it); ``bitcast`` and ``keras.ops.view`` shape around it.
# Reinterpreting bits has no derivative: the op has no gradient rule.
bitcast_view = defop("bitcast_view", _view_forward, type="BitcastView")


def bitcast(input, type, name=None):  # noqa: A002
    """Reinterpret the bytes of ``input`` as ``type`` without copying values (no gradient)."""
    x = _t(input)
    new = dtypes.as_dtype(type)
    for d, what in ((x.dtype, "input"), (new, "type")):
        if not (d.is_floating or d.is_integer or d.is_complex):
            raise TypeError(f"bitcast: {what} dtype must be numeric, got {d.name}")
    old_size, new_size = x.dtype.size, new.size
    if new_size > old_size:
        ratio = new_size // old_size
        if x.ndim == 0 or int(x.shape[-1]) != ratio:
            raise InvalidArgumentError(
                f"bitcast: cannot bitcast {x.dtype.name} of shape {tuple(x.shape)} to "
                f"{new.name}: the last dimension must be {ratio} ({new_size} / {old_size} "
                f"bytes)")
    if new_size == old_size:
        return bitcast_view(x, dtype=new.np)
    if new_size < old_size:    # a new last axis of old_size / new_size items
        return bitcast_view(array_ops.reshape(x, tuple(x.shape) + (1,)), dtype=new.np)
    return array_ops.reshape(bitcast_view(x, dtype=new.np), tuple(x.shape)[:-1])


# --- arithmetic and shapes ---------------------------------------------------------------------

def realdiv(x, y, name=None):
    """``x / y`` for floating-point or complex tensors (TF's ``RealDiv``)."""
    x, y = operand_pair("realdiv", x, y)
    if not (x.dtype.is_floating or x.dtype.is_complex):
        raise TypeError(f"realdiv: expects floating-point or complex tensors, got dtype "
                        f"{x.dtype.name}")
    return math_ops.divide(x, y)


def parallel_stack(values, name=None):
    """``stack(values, axis=0)``: TF's graph-only variant (copies the inputs in parallel),
    which minitf also runs eagerly."""
    return array_ops.stack([_t(v) for v in values], axis=0)


def histogram_fixed_width_bins(values, value_range, nbins=100, dtype=dtypes.int32, name=None):
    """The bin index of each of ``values`` (same shape) among ``nbins`` equal bins over
    ``value_range = [lo, hi]``; values below go to bin 0, values above to ``nbins - 1``."""
    x = _t(values)
    bounds = _t(value_range, dtype=x.dtype if x.dtype.is_floating else None)
    if tuple(bounds.shape) != (2,):
        raise InvalidArgumentError(f"histogram_fixed_width_bins: value_range must have shape "
                                   f"[2], got {tuple(bounds.shape)}")
    nbins = int(host_value(nbins, "histogram_fixed_width_bins") if isinstance(nbins, Tensor)
                else nbins)
    if nbins < 1:
        raise InvalidArgumentError(f"histogram_fixed_width_bins: nbins must be >= 1, got "
                                   f"{nbins}")
    scaled = math_ops.truediv(x - bounds[0], bounds[1] - bounds[0])
    index = math_ops.floor(scaled * nbins)
    index = math_ops.clip_by_value(index, 0, nbins - 1)
    return math_ops.cast(index, dtype)


def invert_permutation(x, name=None):
    """``y`` with ``y[x[i]] = i`` for a permutation ``x`` of ``0..n-1`` (int32 or int64)."""
    x = _t(x)
    if x.dtype not in (dtypes.int32, dtypes.int64) or x.ndim != 1:
        raise InvalidArgumentError(f"invert_permutation: x must be a 1-D int32 or int64 tensor, "
                                   f"got shape {tuple(x.shape)} dtype {x.dtype.name}")
    perm = numpy.asarray(host_value(x, "invert_permutation")).reshape(-1)
    n = perm.size
    if not numpy.array_equal(numpy.sort(perm), numpy.arange(n)):
        raise InvalidArgumentError(f"invert_permutation: x must be a permutation of 0..{n - 1}, "
                                   f"got {perm.tolist()}")
    inverse = numpy.empty(n, perm.dtype)
    inverse[perm] = numpy.arange(n, dtype=perm.dtype)
    return Tensor(B.from_numpy(inverse))


# --- approximate top-k (computed exactly) ------------------------------------------------------

def _approx_k(fn, operand, k, reduction_dimension, largest):
    x = _t(operand)
    if x.ndim == 0:
        raise InvalidArgumentError(f"{fn}: operand must have rank >= 1, got a scalar")
    axis = int(reduction_dimension)
    if not -x.ndim <= axis < x.ndim:
        raise InvalidArgumentError(f"{fn}: reduction_dimension {axis} is out of range for an "
                                   f"operand of rank {x.ndim}")
    axis %= x.ndim
    k = int(k)
    if not 0 <= k <= int(x.shape[axis]):
        raise InvalidArgumentError(f"{fn}: k={k} must be in [0, {int(x.shape[axis])}] (the size "
                                   f"of reduction_dimension {axis})")
    perm = [i for i in range(x.ndim) if i != axis] + [axis]
    moved = array_ops.transpose(x, perm) if axis != x.ndim - 1 else x
    order = stable_argsort(moved, axis=-1, descending=largest)[..., :k]
    values, indices = _flat_take(moved, order), math_ops.cast(order, dtypes.int32)
    if axis != x.ndim - 1:
        back = numpy.argsort(perm).tolist()
        values, indices = array_ops.transpose(values, back), array_ops.transpose(indices, back)
    return TopKV2(values, indices)


def approx_max_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True, name=None):
    """``(values, indices)`` of the ``k`` largest entries along ``reduction_dimension``
    (sorted, ties to the lower index). Computed exactly: TF's ``recall_target`` is a lower
    bound, which exact results meet."""
    return _approx_k("approx_max_k", operand, k, reduction_dimension, largest=True)


def approx_min_k(operand, k, reduction_dimension=-1, recall_target=0.95,
                 reduction_input_size_override=-1, aggregate_to_topk=True, name=None):
    """``(values, indices)`` of the ``k`` smallest entries along ``reduction_dimension``
    (exactly, as ``approx_max_k``)."""
    return _approx_k("approx_min_k", operand, k, reduction_dimension, largest=False)


def approx_top_k(input, k, reduction_dimension=-1, recall_target=0.95, is_max_k=True,  # noqa: A002
                 reduction_input_size_override=-1, aggregate_to_topk=True, name=None):
    """TF's ``ApproxTopK`` op: ``approx_max_k`` (or ``approx_min_k`` for ``is_max_k=False``)."""
    return _approx_k("approx_top_k", input, k, reduction_dimension, largest=bool(is_max_k))


# --- edit distance -----------------------------------------------------------------------------

def _levenshtein(a, b):
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1,
                               previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


def _sequences(sp, what):
    """``{index prefix: [values in index order]}`` of a SparseTensor (host)."""
    indices = sp._host_indices(f"edit_distance: {what}")
    if sp.dtype == dtypes.string:
        values = sp.values._value
    else:
        values = numpy.asarray(host_value(sp.values, f"edit_distance: {what}")).reshape(-1)
    order = numpy.lexsort(indices.T[::-1]) if indices.size else numpy.arange(len(indices))
    items = values.tolist()    # Python ints/floats/bytes: exact equality, fast loops
    groups = {}
    for i in order:
        groups.setdefault(tuple(int(d) for d in indices[i, :-1]), []).append(items[i])
    return groups


def edit_distance(hypothesis, truth, normalize=True, name=None):
    """The Levenshtein distance between the sequences of two SparseTensors (the last dimension
    holds each sequence), divided by the truth's length when ``normalize`` (inf where only the
    hypothesis has a sequence). float32, shape: the larger of the two dense shapes without the
    last dimension."""
    from ..sparse_tensor import SparseTensor
    for value, what in ((hypothesis, "hypothesis"), (truth, "truth")):
        if not isinstance(value, SparseTensor):
            raise TypeError(f"edit_distance: {what} must be a SparseTensor, got "
                            f"{type(value).__name__}")
    if hypothesis.dtype != truth.dtype:
        raise TypeError(f"edit_distance: hypothesis and truth must have the same dtype, got "
                        f"{hypothesis.dtype.name} and {truth.dtype.name}")
    if len(hypothesis._dims) != len(truth._dims) or len(truth._dims) < 1:
        raise InvalidArgumentError(f"edit_distance: hypothesis and truth must have the same "
                                   f"rank (>= 1), got shapes {list(hypothesis._dims)} and "
                                   f"{list(truth._dims)}")
    shape = tuple(max(a, b) for a, b in zip(hypothesis._dims[:-1], truth._dims[:-1]))
    hyp, tru = _sequences(hypothesis, "hypothesis"), _sequences(truth, "truth")
    out = numpy.zeros(shape, numpy.float32)
    for key in set(hyp) | set(tru):
        h, t = hyp.get(key, []), tru.get(key, [])
        distance = float(_levenshtein(h, t))
        if normalize:
            distance = distance / len(t) if t else numpy.inf
        out[key] = distance
    return Tensor(B.from_numpy(out))


# --- fingerprint -------------------------------------------------------------------------------

def fingerprint(data, method="farmhash64", name=None):
    """TF's ``Fingerprint``: uint8 ``[data.shape[0], 8]``, the little-endian FarmHash
    ``Fingerprint64`` of each row's bytes. A row of several strings hashes the concatenated
    8-byte fingerprints of its strings."""
    from ..keras.layers.farmhash import fingerprint64
    if method != "farmhash64":
        raise InvalidArgumentError(f"fingerprint: unsupported method {method!r}; expected "
                                   f"'farmhash64'")
    x = _t(data)
    if x.ndim < 1:
        raise InvalidArgumentError(f"fingerprint: data must have rank >= 1, got shape "
                                   f"{tuple(x.shape)}")
    rows = int(x.shape[0])
    if x.dtype == dtypes.string:
        each = fingerprint64(x._value.reshape(-1)).astype("<u8")
        if x.ndim == 1:
            return _le_bytes(each, rows)
        row_bytes = each.view(numpy.uint8).reshape(rows, -1)
    else:
        host = numpy.ascontiguousarray(host_value(x, "fingerprint"))
        row_bytes = host.reshape(rows, -1).view(numpy.uint8).reshape(rows, -1) \
            if host.size else numpy.zeros((rows, 0), numpy.uint8)
    keys = numpy.empty(rows, object)
    keys[:] = [r.tobytes() for r in row_bytes]
    return _le_bytes(fingerprint64(keys) if rows else numpy.zeros(0, numpy.uint64), rows)


def _le_bytes(hashes, rows):
    out = numpy.asarray(hashes, "<u8").view(numpy.uint8).reshape(rows, 8)
    return Tensor(B.from_numpy(numpy.ascontiguousarray(out)))


# --- graph-building helpers --------------------------------------------------------------------

def no_op(name=None):
    """Does nothing (TF's placeholder op); returns None."""


def group(*inputs, name=None):
    """TF's grouping of side effects: in eager code they have all run, so it returns None."""
    return None


def tuple_(tensors, name=None, control_inputs=None):
    """``tf.tuple``: the list of ``tensors`` (TF's barrier: in eager code every value is
    already there)."""
    return [math_ops.identity(t) if isinstance(t, Tensor) else t for t in tensors]


tuple_.__name__ = tuple_.__qualname__ = "tuple"


def get_current_name_scope():
    """The full name of the innermost active ``tf.name_scope`` (``"outer/inner"``), or ``""``."""
    from .. import tensor as _tensor
    return "/".join(_tensor._NAME_SCOPE)


def grad_pass_through(f):
    """``f`` whose gradient is the identity: the incoming gradient goes unchanged to the
    inputs (e.g. a straight-through estimator around a rounding)."""
    from ..custom_gradient import custom_gradient

    @custom_gradient
    def passed(*args, **kwargs):
        def grad(*dy, variables=None):
            if variables is not None:
                return dy, [None] * len(variables)
            return dy
        return f(*args, **kwargs), grad
    return functools.wraps(f)(passed)


#: Op type names declared without a gradient by ``no_gradient`` (ops minitf does not have).
NO_GRADIENT = set()


def no_gradient(op_type):
    """Declare that the op type ``op_type`` has no gradient. For a minitf op that already has a
    gradient this is an error, as registering a second gradient is in TF."""
    if not isinstance(op_type, str):
        raise TypeError(f"no_gradient: op_type must be a string, got {op_type!r}")
    op = OPS.get(op_type) or _ALIASES.get(op_type)
    if op is not None and op.differentiable:
        raise KeyError(f"Registering two gradient with name '{op_type}'! (the op already has a "
                       f"gradient)")
    NO_GRADIENT.add(op_type)


class AggregationMethod:
    """How ``gradients`` sums the gradient contributions of a tensor used several times
    (accepted; minitf's tape always adds them pairwise)."""
    ADD_N = 0
    DEFAULT = ADD_N
    EXPERIMENTAL_TREE = 1
    EXPERIMENTAL_ACCUMULATE_N = 2


_TOP_LEVEL = ["bitcast", "realdiv", "parallel_stack", "histogram_fixed_width_bins",
              "edit_distance", "fingerprint", "no_op", "group",
              "get_current_name_scope", "grad_pass_through", "no_gradient", "AggregationMethod",
              "approx_top_k", "invert_permutation"]


def install(tf):
    """Set the public names on ``tf``, ``tf.math`` and ``tf.nn``."""
    g = globals()
    for name in _TOP_LEVEL:
        setattr(tf, name, g[name])
    tf.tuple = tuple_
    tf.math.invert_permutation = invert_permutation
    tf.math.logical_xor = tf.logical_xor
    tf.math.scalar_mul = tf.scalar_mul
    tf.math.softsign = tf.nn.softsign
    tf.math.zero_fraction = tf.nn.zero_fraction
    tf.math.realdiv = realdiv
    tf.math.approx_max_k = tf.nn.approx_max_k = approx_max_k
    tf.math.approx_min_k = tf.nn.approx_min_k = approx_min_k


__all__ = _TOP_LEVEL + ["tuple_", "approx_max_k", "approx_min_k"]
