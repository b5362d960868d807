"""Batch normalization in training mode as a few fused ops, over every axis but the last.

With ``xhat = (x - mean) * inv``, ``inv = 1 / sqrt(var + eps)`` (batch mean and biased
variance per channel, ``N`` values each):

- ``batch_norm_train(x, gamma, beta)`` = ``xhat * gamma + beta``;
- ``batch_norm_reduce_grads(x, g)`` = ``[sum(g), sum(g * xhat)]`` per channel, shape (2, C):
  beta's and gamma's gradients;
- ``batch_norm_input_grad(x, gamma, g, s)`` = ``gamma * inv * (g - s[0] / N - xhat * s[1] / N)``:
  x's gradient given ``s = batch_norm_reduce_grads(x, g)``;
- ``batch_norm_moments(x)`` = ``[mean, var]`` (not differentiable: the moving averages' update).

The composite (moments, then ~8 element-wise ops, each with its own backward) makes ~25 passes
over the activations per layer and step; these make ~6 forward and ~7 backward in numpy, and
one each (the statistics too: shifted sums in one pass) with the native kernels
(``minitf.native_nn``). The forward keeps the statistics (and, in numpy, ``xhat``) for the
gradient ops and ``batch_norm_moments`` (keyed by the input array's identity, as convolution
patches are). The Jacobian of ``xhat`` in ``x`` is symmetric, ``inv * (I - 1/N - xhat
xhat^T / N)`` per channel, so ``batch_norm_input_grad`` serves as both its VJP and its JVP;
every rule is written with registered ops, so higher-order gradients work.
"""
import numpy

from .. import backend as B
from .. import native_nn
from ._samples import pos, u
from .derived import derived as _derived
from .registry import defop


def _lead(x):
    return tuple(range(len(x.shape) - 1))


def _count(x):
    n = 1
    for d in x.shape[:-1]:
        n *= int(d)
    return n


def _key(x, epsilon):
    return ("batch_norm", float(epsilon), tuple(x.shape), str(x.dtype))


def _statistics(x, epsilon, cache=False):
    """``(xhat, inv, mean, var)`` of ``x``, the forward's when it cached them. ``xhat`` (as
    (N, C)) is None where the native kernels run: they recompute it in their one pass."""
    hit = _derived.get(x, _key(x, epsilon))
    if hit is not None:
        return hit
    xp = B.xp
    moments = native_nn.bn_moments(x)
    if moments is not None:
        xhat = None
        mean, var = (m.astype(x.dtype) for m in moments)
    else:
        x2 = x.reshape(-1, x.shape[-1])
        n = x2.shape[0]
        mean = _column_sums(x2) / n
        xhat = x2 - mean
        var = _column_dots(xhat, xhat) / n
    inv = 1.0 / xp.sqrt(var + epsilon)
    if xhat is not None:
        xhat *= inv
    value = (xhat, inv.astype(x.dtype, copy=False), mean.astype(x.dtype, copy=False),
             var.astype(x.dtype, copy=False))
    if cache:
        _derived.put(x, _key(x, epsilon), value)
    return value


def _normalized(x, stats):
    """``xhat`` as (N, C) from ``_statistics``' value."""
    xhat, inv, mean, _ = stats
    if xhat is None:
        xhat = x.reshape(-1, x.shape[-1]) - mean
        xhat *= inv
    return xhat


def _column_sums(a):
    """Sums over the rows of a 2-D array: a matrix-vector product (BLAS), ~8x faster than
    ``a.sum(axis=0)`` on numpy for tall arrays."""
    return B.xp.ones(a.shape[0], dtype=a.dtype) @ a


def _column_dots(a, b):
    """``sum(a * b, axis=0)`` without the product array where numpy's einsum can do it."""
    xp = B.xp
    if xp is numpy:
        return numpy.einsum("nc,nc->c", a, b)
    return (a * b).sum(axis=0)


def _composite_norm(F, x, epsilon):
    """``(xhat, inv)`` from registered ops (differentiable in x), for the higher-order rules."""
    axes = _lead(x)
    d = x - F.reduce_mean(x, axis=axes)
    inv = F.rsqrt(F.reduce_mean(d * d, axis=axes) + epsilon)
    return d * inv, inv


# --- forward -------------------------------------------------------------------------------------

def _train_forward(x, gamma, beta, epsilon=1e-3, cache=False):
    stats = _statistics(x, epsilon, cache)
    if stats[0] is None:
        y = native_nn.bn_apply(x, stats[2], stats[1], gamma, beta)
        if y is not None:
            return y
    y = _normalized(x, stats) * gamma
    y += beta
    return y.reshape(x.shape)


def _train_vjp(F, g, x, y, epsilon=1e-3, cache=False):
    xin, gamma, _ = x
    s = F.batch_norm_reduce_grads(xin, g, epsilon=epsilon)
    return (F.batch_norm_input_grad(xin, gamma, g, s, epsilon=epsilon) if F.needs[0] else None,
            s[1] if F.needs[1] else None,
            s[0] if F.needs[2] else None)


def _train_jvp(F, t, x, y, epsilon=1e-3, cache=False):
    xin, gamma, _ = x
    tx, tgamma, tbeta = t
    out = None
    if tx is not None:
        out = F.batch_norm_input_grad(xin, gamma, tx, F.batch_norm_reduce_grads(
            xin, tx, epsilon=epsilon), epsilon=epsilon)
    if tgamma is not None or tbeta is not None:
        ref = tgamma if tgamma is not None else tbeta
        part = F.batch_norm_train(xin, tgamma if tgamma is not None else F.zeros_like(ref),
                                  tbeta if tbeta is not None else F.zeros_like(ref),
                                  epsilon=epsilon)
        out = part if out is None else out + part
    return out


def _samples():
    return [((u(4, 3), pos(3), u(3)), {"epsilon": 1e-3}),
            ((u(2, 3, 2, 2), u(2), u(2)), {"epsilon": 0.1}),
            ((u(2, 2, 3, 2), u(2), u(2)), {"epsilon": 0.1, "cache": True})]


batch_norm_train = defop("batch_norm_train", _train_forward, arity=3, vjp=_train_vjp,
                         jvp=_train_jvp, save=(0, 1), samples=_samples, type="FusedBatchNormV3",
                         identity_cache=True, batch_unaware=True)


# --- beta's and gamma's gradients ----------------------------------------------------------------

def reduce_grads_key(g, epsilon):
    """The derived-cache key of ``batch_norm_reduce_grads``' sums of ``g``, left by the pass
    that wrote ``g`` (``minitf.ops.pool_fusion_ops``) with the input they were taken over."""
    return ("batch_norm_reduce_grads", float(epsilon), g.shape, g.dtype)


def _reduce_grads_forward(x, g, epsilon=1e-3):
    xp = B.xp
    done = _derived.take(g, reduce_grads_key(g, epsilon))
    if done is not None and done[0] is x:
        return done[1].astype(g.dtype)
    stats = _statistics(x, epsilon)
    if stats[0] is None:
        s = native_nn.bn_reduce(x, g, stats[2], stats[1])
        if s is not None:
            return s.astype(g.dtype)
    xhat = _normalized(x, stats)
    g2 = g.reshape(xhat.shape)
    out = xp.empty((2, xhat.shape[1]), dtype=g.dtype)
    out[0] = _column_sums(g2)
    out[1] = _column_dots(g2, xhat)
    return out


def _reduce_grads_vjp(F, h, x, y, epsilon=1e-3):
    xin, g = x
    return (F.batch_norm_input_grad(xin, h[1], g, y, epsilon=epsilon) if F.needs[0] else None,
            F.batch_norm_train(xin, h[1], h[0], epsilon=epsilon) if F.needs[1] else None)


def _reduce_grads_jvp(F, t, x, y, epsilon=1e-3):
    xin, g = x
    tx, tg = t
    out = None if tg is None else F.batch_norm_reduce_grads(xin, tg, epsilon=epsilon)
    if tx is not None:   # only sum(g * xhat) moves with x
        dxhat_g = F.batch_norm_input_grad(xin, F.ones_like(y[1]), g, y, epsilon=epsilon)
        row = F.reshape(F.reduce_sum(tx * dxhat_g, axis=_lead(xin)), shape=(1, -1))
        part = F.pad(row, paddings=((1, 0), (0, 0)))
        out = part if out is None else out + part
    return out


batch_norm_reduce_grads = defop(
    "batch_norm_reduce_grads", _reduce_grads_forward, arity=2, vjp=_reduce_grads_vjp,
    jvp=_reduce_grads_jvp, save=(0, 1, "out"), identity_cache=True, batch_unaware=True,
    samples=lambda: [((u(5, 3), u(5, 3)), {"epsilon": 1e-3}),
                     ((u(2, 2, 3, 2), u(2, 2, 3, 2)), {"epsilon": 0.1})])


# --- x's gradient --------------------------------------------------------------------------------

def _input_grad_forward(x, gamma, g, s, epsilon=1e-3):
    stats = _statistics(x, epsilon)
    inv, n = stats[1], _count(x)
    if stats[0] is None:
        out = native_nn.bn_input_grad(x, g, stats[2], inv, -s[1] / n, s[0] / n, gamma * inv)
        if out is not None:
            return out
    xhat = _normalized(x, stats)
    # gamma * inv * (g - s0 / n - xhat * s1 / n) in four passes and one array.
    out = xhat * (-s[1] / n)
    out += g.reshape(xhat.shape)
    out -= s[0] / n
    out *= gamma * inv
    return out.reshape(x.shape)


def _input_grad_vjp(F, h, x, y, epsilon=1e-3):
    xin, gamma, g, s = x
    n = _count(xin)
    axes = _lead(xin)
    xhat, inv = _composite_norm(F, xin, epsilon)
    a = gamma * inv
    dgamma = F.reduce_sum(h * (g - s[0] / n - xhat * (s[1] / n)), axis=axes) * inv
    dx = None
    if F.needs[0]:
        dx = xhat * (-(gamma * dgamma / n) * inv) + F.batch_norm_input_grad(
            xin, -(s[1] / n) * a, h, F.batch_norm_reduce_grads(xin, h, epsilon=epsilon),
            epsilon=epsilon)
    ha = h * a
    return (dx,
            dgamma if F.needs[1] else None,
            ha if F.needs[2] else None,
            F.batch_norm_reduce_grads(xin, ha, epsilon=epsilon) * (-1.0 / n)
            if F.needs[3] else None)


def _input_grad_jvp(F, t, x, y, epsilon=1e-3):
    xin, gamma, g, s = x
    tx, tgamma, tg, ts = t
    n = _count(xin)
    parts = []
    if tg is not None or ts is not None:   # linear in (g, s)
        parts.append(F.batch_norm_input_grad(
            xin, gamma, tg if tg is not None else F.zeros_like(g),
            ts if ts is not None else F.zeros_like(s), epsilon=epsilon))
    if tgamma is not None:
        parts.append(F.batch_norm_input_grad(xin, tgamma, g, s, epsilon=epsilon))
    if tx is not None:
        _, inv = _composite_norm(F, xin, epsilon)
        st = F.batch_norm_reduce_grads(xin, tx, epsilon=epsilon)
        parts.append(y * (-(st[1] / n) * inv))
        parts.append(F.batch_norm_input_grad(xin, -(s[1] / n) * gamma * inv, tx, st,
                                            epsilon=epsilon))
    if not parts:
        return None
    out = parts[0]
    for p in parts[1:]:
        out = out + p
    return out


batch_norm_input_grad = defop(
    "batch_norm_input_grad", _input_grad_forward, arity=4, vjp=_input_grad_vjp,
    jvp=_input_grad_jvp, save=(0, 1, 2, 3), identity_cache=True, batch_unaware=True,
    samples=lambda: [((u(5, 3), pos(3), u(5, 3), u(2, 3)), {"epsilon": 1e-3}),
                     ((u(2, 2, 3, 2), u(2), u(2, 2, 3, 2), u(2, 2)), {"epsilon": 0.1})])


# --- the batch statistics for the moving averages ------------------------------------------------

def _moments_forward(x, epsilon=1e-3):
    _, _, mean, var = _statistics(x, epsilon)
    return B.xp.stack([mean, var])


batch_norm_moments = defop("batch_norm_moments", _moments_forward, identity_cache=True,
                           batch_unaware=True, samples=lambda: [((u(4, 3),), {"epsilon": 1e-3})])
