"""Neural-network ops: softmax family, fused cross-entropies, dropout, moments, batch norm.

Fused ops exist only where a composition would be numerically unstable (cross-entropies with
logits) or markedly slower; everything else composes primitives.
"""
import numpy

from .. import backend as B
from .. import native_nn
from ..tensor import Tensor
from ._samples import u
from .convert import convert_to_tensor, operand_pair
from .math_ops import (cast, elu, gelu, leaky_relu, log_sigmoid, relu, relu6, rsqrt, sigmoid,  # noqa: F401
                       softplus, square, tanh, silu, swish, softsign)
from .reduce_ops import extreme, reduce_mean
from . import fused_ops
from .derived import DerivedCache
from .registry import InvalidArgumentError, apply, as_keras_layer, defop
from . import random_ops


def _x(x):
    return x if isinstance(x, Tensor) else convert_to_tensor(x)


def _softmax_forward(logits, axis=-1):
    xp = B.xp
    e = logits - extreme(logits, axis, True, True)
    if getattr(e, "dtype", None) is not None and e.dtype.kind == "f" and e.ndim:
        xp.exp(e, out=e)      # in place: one pass and one array fewer
    else:
        e = xp.exp(e)
    e /= e.sum(axis=axis, keepdims=True)
    return e


def _softmax_vjp(F, g, x, y, axis=-1):
    # The softmax axis counted from the end, so a leading jacobian batch dimension in g is fine.
    ax = axis % len(F.shapes[0]) - len(F.shapes[0])
    gy = g * y
    return (gy - y * F.reduce_sum(gy, axis=(len(gy.shape) + ax,), keepdims=True),)


def _softmax_jvp(F, t, x, y, axis=-1):
    ty = t[0] * y
    return ty - y * F.reduce_sum(ty, axis=axis, keepdims=True)


_softmax = defop("softmax", _softmax_forward, vjp=_softmax_vjp, jvp=_softmax_jvp, save=("out",),
                 samples=lambda: [((u(3, 4),), {"axis": -1}), ((u(3, 4),), {"axis": 0})])


def softmax(logits, axis=None, name=None):
    """exp(x) / sum(exp(x)) along ``axis`` (the last by default)."""
    try:
        x = _x(logits)
    except TypeError:
        return as_keras_layer(softmax, (logits, axis), {})
    return apply(_softmax.op, (x,), {"axis": -1 if axis is None else int(axis) % x.ndim - x.ndim})


def _log_softmax_forward(logits, axis=-1):
    xp = B.xp
    shifted = logits - extreme(logits, axis, True, True)
    return shifted - xp.log(xp.exp(shifted).sum(axis=axis, keepdims=True))


def _log_softmax_vjp(F, g, x, y, axis=-1):
    ax = axis % len(F.shapes[0]) - len(F.shapes[0])
    return (g - F.exp(y) * F.reduce_sum(g, axis=(len(g.shape) + ax,), keepdims=True),)


def _log_softmax_jvp(F, t, x, y, axis=-1):
    return t[0] - F.reduce_sum(F.exp(y) * t[0], axis=axis, keepdims=True)


_log_softmax = defop("log_softmax", _log_softmax_forward, vjp=_log_softmax_vjp,
                     jvp=_log_softmax_jvp, save=("out",), type="LogSoftmax",
                     samples=lambda: [((u(3, 4),), {"axis": -1})])


def log_softmax(logits, axis=None, name=None):
    try:
        x = _x(logits)
    except TypeError:
        return as_keras_layer(log_softmax, (logits, axis), {})
    return apply(_log_softmax.op, (x,), {"axis": -1 if axis is None else int(axis) % x.ndim - x.ndim})


# The forward kernel computes the gradient ``softmax - onehot`` too (as TF's kernel does: one pass
# over the logits yields both), kept here by the logits' identity until the backward kernel
# takes it. Both ops are registered with ``identity_cache`` so a traced step keeps that sound.
_backprops = DerivedCache()
_backprops.size = 2


def _sparse_ce_forward(labels, logits):
    """Per-example -log softmax(logits)[label]; labels are integer class ids."""
    if fused_ops.sparse_ce_fused(labels, logits):   # the GPU: loss and gradient in one kernel
        loss, backprop = fused_ops.sparse_ce_forward(labels, logits)
    elif (native := native_nn.sparse_cross_entropy(labels, logits)) is not None:
        loss, backprop = native
    else:
        xp = B.xp
        shifted = logits - extreme(logits, -1, True, True)
        e = xp.exp(shifted)
        total = e.sum(axis=-1, keepdims=True)
        rows = shifted.reshape(-1, shifted.shape[-1])
        index = (xp.arange(rows.shape[0]), labels.reshape(-1))
        loss = xp.log(total[..., 0]) - rows[index].reshape(total.shape[:-1])
        backprop = e
        backprop /= total                       # the bits of _softmax_forward
        backprop.reshape(rows.shape)[index] -= 1   # the bits of probs - onehot
    _backprops.put(logits, (logits.shape, id(labels)), (labels, backprop))
    return loss


def _sparse_ce_backprop_forward(labels, logits):
    """``softmax(logits) - onehot(labels)``: the gradient of the per-example loss."""
    kept = _backprops.take(logits, (logits.shape, id(labels)))
    if kept is not None and kept[0] is labels:
        return kept[1]
    xp = B.xp
    probs = _softmax_forward(logits)
    rows = probs.reshape(-1, probs.shape[-1])
    rows[xp.arange(rows.shape[0]), labels.reshape(-1)] -= 1
    return probs


def _sparse_ce_backprop_vjp(F, g, x, y):
    # d(softmax - onehot) = d softmax: the softmax rule.
    labels, logits = x
    probs = F.softmax(logits)
    gp = g * probs
    return None, gp - probs * F.reduce_sum(gp, axis=(len(gp.shape) - 1,), keepdims=True)


def _sparse_ce_backprop_jvp(F, t, x, y):
    probs = F.softmax(x[1])
    tp = t[1] * probs
    return tp - probs * F.reduce_sum(tp, axis=-1, keepdims=True)


def _sparse_ce_samples():
    return [((numpy.array([0, 2, 1]), u(3, 4)), {})]


_sparse_ce_backprop = defop(
    "sparse_softmax_cross_entropy_backprop", _sparse_ce_backprop_forward, arity=2,
    vjp=_sparse_ce_backprop_vjp, jvp=_sparse_ce_backprop_jvp, save=(0, 1),
    samples=_sparse_ce_samples, identity_cache=True)


def _sparse_ce_vjp(F, g, x, y):
    labels, logits = x
    return None, F.expand_dims_last(g) * F.sparse_softmax_cross_entropy_backprop(labels, logits)


_sparse_ce = defop("sparse_softmax_cross_entropy_with_logits", _sparse_ce_forward, arity=2,
                   vjp=_sparse_ce_vjp, jvp="elementwise_last", save=(0, 1),
                   type="SparseSoftmaxCrossEntropyWithLogits", samples=_sparse_ce_samples,
                   identity_cache=True)


def sparse_softmax_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """Cross-entropy between integer ``labels`` (shape [...]) and ``logits`` (shape [..., C])."""
    labels, logits = _x(labels), _x(logits)
    if labels._value.dtype.kind not in "iu":
        raise TypeError(f"sparse_softmax_cross_entropy_with_logits: labels must be integers, got "
                        f"{labels.dtype.name}")
    if tuple(labels._value.shape) != tuple(logits._value.shape[:-1]):
        raise InvalidArgumentError(
            f"sparse_softmax_cross_entropy_with_logits: labels shape "
            f"{tuple(labels.shape)} must equal logits shape without the last "
            f"dimension {tuple(logits.shape[:-1])}")
    n = logits._value.shape[-1]
    lab = labels._value
    # One comparison pass (as unsigned, negatives wrap to huge values) instead of min and max.
    # Skipped on a GPU, where reading the answer would stall every step (TF's GPU kernel does
    # not check either).
    if (lab.size and not B.host_syncs_stall()
            and bool((lab.astype(numpy.uint64, copy=False) >= n).any())):
        raise InvalidArgumentError(
            f"sparse_softmax_cross_entropy_with_logits: labels must be in [0, {n}), "
            f"got values in [{int(lab.min())}, {int(lab.max())}]")
    return apply(_sparse_ce.op, (labels, logits), {})


def _ce_forward(labels, logits, axis=-1):
    xp = B.xp
    shifted = logits - extreme(logits, axis, True, True)
    log_probs = shifted - xp.log(xp.exp(shifted).sum(axis=axis, keepdims=True))
    return -(labels * log_probs).sum(axis=axis)


def _ce_vjp(F, g, x, y, axis=-1):
    labels, logits = x
    log_probs = F.log_softmax(logits)
    gx = F.expand_dims_last(g)
    glabels = -gx * log_probs if F.needs[0] else None
    glogits = gx * (F.exp(log_probs) * F.reduce_sum(labels, axis=(len(labels.shape) - 1,),
                                                     keepdims=True) - labels) if F.needs[1] else None
    return glabels, glogits


_ce = defop("softmax_cross_entropy_with_logits", _ce_forward, arity=2, vjp=_ce_vjp,
            jvp="elementwise_last", save=(0, 1), type="SoftmaxCrossEntropyWithLogits",
            samples=lambda: [((u(3, 4, lo=0, hi=1), u(3, 4)), {})])


def softmax_cross_entropy_with_logits(labels, logits, axis=-1, name=None):
    """Cross-entropy between label distributions and ``logits`` along the last axis."""
    labels, logits = operand_pair("softmax_cross_entropy_with_logits", labels, logits)
    if tuple(labels._value.shape) != tuple(logits._value.shape):
        raise InvalidArgumentError(
            f"softmax_cross_entropy_with_logits: labels shape {tuple(labels.shape)} "
            f"!= logits shape {tuple(logits.shape)}")
    if axis not in (-1, logits.ndim - 1):
        from .array_ops import transpose
        perm = [i for i in range(logits.ndim) if i != axis % logits.ndim] + [axis % logits.ndim]
        labels, logits = transpose(labels, perm), transpose(logits, perm)
    return apply(_ce.op, (labels, logits), {})


def _sigmoid_ce_forward(labels, logits):
    xp = B.xp
    return xp.maximum(logits, 0) - logits * labels + xp.log1p(xp.exp(-xp.abs(logits)))


def _sigmoid_ce_vjp(F, g, x, y):
    labels, logits = x
    return (-g * logits if F.needs[0] else None,
            g * (F.sigmoid(logits) - labels) if F.needs[1] else None)


_sigmoid_ce = defop("sigmoid_cross_entropy_with_logits", _sigmoid_ce_forward, arity=2,
                    vjp=_sigmoid_ce_vjp, jvp="elementwise", save=(0, 1),
                    samples=lambda: [((u(3, 4, lo=0, hi=1), u(3, 4)), {})])


def sigmoid_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """Element-wise logistic loss, stable for large |logits|."""
    labels, logits = operand_pair("sigmoid_cross_entropy_with_logits", labels, logits)
    if tuple(labels._value.shape) != tuple(logits._value.shape):
        raise InvalidArgumentError(
            f"sigmoid_cross_entropy_with_logits: labels shape "
            f"{tuple(labels.shape)} != logits shape {tuple(logits.shape)}")
    return apply(_sigmoid_ce.op, (labels, logits), {})


def dropout(x, rate, noise_shape=None, seed=None, name=None):
    """Zero elements with probability ``rate`` and scale the rest by 1 / (1 - rate)."""
    x = _x(x)
    rate = float(rate)
    if not 0 <= rate < 1:
        raise ValueError(f"dropout: rate must be in [0, 1), got {rate}")
    if rate == 0:
        return x
    shape = tuple(x._value.shape) if noise_shape is None else tuple(
        x._value.shape[i] if s is None else int(s) for i, s in enumerate(noise_shape))
    shard = random_ops.batch_shard()
    if shard is not None and len(shape) > 0 and x.ndim > 0 and shape[0] == x._value.shape[0] \
            and shape[0] > 1:
        # a data-parallel rank: this rank's rows of the global batch's mask
        rank, size = shard
        rows = shape[0]
        keep = random_ops.bernoulli_mask((rows * size,) + shape[1:], 1.0 - rate, x.dtype,
                                         seed=seed)[rank * rows:(rank + 1) * rows]
    else:
        keep = random_ops.bernoulli_mask(shape, 1.0 - rate, x.dtype, seed=seed)
    return x * keep


def moments(x, axes, shift=None, keepdims=False, name=None):
    """Mean and (biased) variance over ``axes``."""
    from .math_ops import stop_gradient, squared_difference
    x = _x(x)
    mean = reduce_mean(x, axis=axes, keepdims=True)
    variance = reduce_mean(squared_difference(x, stop_gradient(mean)), axis=axes,
                           keepdims=keepdims)
    if not keepdims:
        from .array_ops import squeeze
        mean = squeeze(mean, [a % x.ndim for a in ([axes] if numpy.isscalar(axes) else axes)])
    return mean, variance


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """(x - mean) * scale / sqrt(variance + eps) + offset, as TF computes it."""
    inv = rsqrt(variance + variance_epsilon)
    if scale is not None:
        inv = inv * scale
    return x * inv + ((offset - mean * inv) if offset is not None else -mean * inv)


def l2_loss(t, name=None):
    """sum(t ** 2) / 2."""
    from .reduce_ops import reduce_sum
    return reduce_sum(square(t)) * 0.5


def bias_add(value, bias, data_format=None, name=None):
    return value + bias


def _install_rule_helpers():
    from .registry import RAW, TENSOR
    from .array_ops import expand_dims

    RAW.expand_dims_last = lambda g: g[..., None]
    TENSOR.expand_dims_last = lambda g: expand_dims(g, -1)
    TENSOR.softmax = softmax
    TENSOR.log_softmax = log_softmax
    RAW.softmax = _softmax_forward
    RAW.log_softmax = _log_softmax_forward


_install_rule_helpers()


def embedding_lookup(params, ids, max_norm=None, name=None):
    """Rows of ``params`` at ``ids`` (TF's ``nn.embedding_lookup`` for one params tensor); the
    gradient is dense (see docs/compat.md)."""
    if isinstance(params, (list, tuple)):
        if len(params) != 1:
            raise NotImplementedError("embedding_lookup: sharded params (a list of several "
                                      "tensors) are not supported")
        params = params[0]
    if max_norm is not None:
        raise NotImplementedError("embedding_lookup: max_norm is not supported")
    from .array_ops import gather
    return gather(params, ids)
