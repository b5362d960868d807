"""Max pooling fused with the relu beside it, for traced steps (``minitf.plan_fusion``).

Each op computes exactly what the unfused pair computes (the same kernels, one pass):

- ``relu_pooled(x, ksize)`` / ``bias_relu_pooled(x, b, ksize)``: ``relu(x)`` /
  ``bias_activation(x, b, "relu")`` when a tiled max pool reads the result next. The output is
  the relu's; the pool's maxima and first-maximum offsets come out of the same pass, image by
  image while the image is in cache, and wait in the derived cache for that pool step and its
  gradient (``conv_ops.cache_pooled``).
- ``batch_norm_relu_pooled(x, gamma, beta, ksize)``: ``relu(batch_norm_train(x, gamma,
  beta))`` when a tiled max pool reads the result next (``BatchNormalization`` then ``ReLU``
  then ``MaxPooling2D``): the normalization, the relu and the pooling image by image, so the
  normalized activations are never written out. The statistics are the batch norm's own
  (cached for its gradient ops and moving averages as it caches them).
- ``tiled_max_relu_grad(x, g, ksize)``: ``relu_grad(tiled_max_grad(x, g), x)``, the backward
  of ``max_pool(relu(..))`` with respect to the relu's input (``x``: the relu's output), as one
  masked scatter. With ``sums=True`` (a bias gradient, ``sum_to``, reads the result next) the
  same pass leaves each image's channel sums in the derived cache, the bits ``sum_to``'s own
  kernel computes (``native_nn.image_sums``).
- ``tiled_max_relu_grad_bn(x, g, bn_x, ksize, epsilon)``: the same scatter where the relu's
  input is a batch norm's output (of ``bn_x``) and ``batch_norm_reduce_grads(bn_x, ..)`` reads
  the result next: the pass also adds up that op's sums, in its order, and leaves them in
  the derived cache for it, so it does not read the whole gradient again.

Where numpy's native kernels do not run (another backend, small arrays, no compiler) each op
runs the unfused pair's own path.
"""
import numpy

from .. import native_nn
from . import conv_ops, norm_ops
from .array_ops import image_sums_key
from .derived import derived as _derived
from ._samples import away, pos, u
from .registry import RAW, defop


def _relu_and_pool(x, b, ksize):
    """The relu's output with the pooling cached for it, or None (the unfused path runs)."""
    if not native_nn.pays(x):     # the unfused relu's numpy path below this size
        return None
    done = native_nn.relu_pool(x, b, ksize)
    if done is None:
        return None
    a, pooled, arg = done
    conv_ops.cache_pooled(a, ksize, pooled, arg)
    return a


def _relu_pooled_forward(x, ksize):
    a = _relu_and_pool(x, None, ksize)
    return RAW.relu(x) if a is None else a


def _bias_relu_pooled_forward(x, b, ksize):
    a = _relu_and_pool(x, b, ksize)
    return RAW.bias_activation(x, b, activation="relu") if a is None else a


def _tangent(F, t, y):
    """``relu_grad`` of the sum of the tangents ``t`` that are not None, masked by ``y``."""
    parts = [p for p in t if p is not None]
    if not parts:
        return None
    total = parts[0]
    for p in parts[1:]:
        total = total + p
    return F.relu_grad(total, y)


relu_pooled = defop(
    "relu_pooled", _relu_pooled_forward, save=("out",), smooth=False, type="ReluPooled",
    identity_cache=True, kink="relu'(0) = 0",
    vjp=lambda F, g, x, y, ksize: (F.relu_grad(g, y),),
    jvp=lambda F, t, x, y, ksize: _tangent(F, t, y),
    samples=lambda: [((away(2, 4, 5, 3),), {"ksize": (2, 2)})])
# The tape sums b's gradient over the broadcast axes, as for bias_activation.
bias_relu_pooled = defop(
    "bias_relu_pooled", _bias_relu_pooled_forward, arity=2, save=("out",), smooth=False,
    type="BiasReluPooled", identity_cache=True, kink="relu'(0) = 0",
    vjp=lambda F, g, x, y, ksize: (F.relu_grad(g, y),) * 2,
    jvp=lambda F, t, x, y, ksize: _tangent(F, t, y),
    samples=lambda: [((away(2, 4, 5, 3), u(3, lo=-0.1, hi=0.1)), {"ksize": (2, 2)})])


def _batch_norm_relu_pooled_forward(x, gamma, beta, ksize, epsilon=1e-3, cache=False):
    if native_nn.pays(x) and native_nn.available():
        stats = norm_ops._statistics(x, epsilon, cache)
        done = None if stats[0] is not None else native_nn.bn_relu_pool(
            x, stats[2], stats[1], gamma, beta, ksize)
        if done is not None:
            a, pooled, arg = done
            conv_ops.cache_pooled(a, ksize, pooled, arg)
            return a
    return RAW.relu(RAW.batch_norm_train(x, gamma, beta, epsilon=epsilon, cache=cache))


def _batch_norm_relu_pooled_jvp(F, t, x, y, ksize, epsilon=1e-3, cache=False):
    tangent = norm_ops._train_jvp(F, t, x, None, epsilon=epsilon)
    return None if tangent is None else F.relu_grad(tangent, y)


def _bn_relu_samples():
    """Each channel's 8 values a permutation of -3..4: the normalized values are at least
    0.2 from 0, and with gamma >= 0.5 and |beta| < 0.05 the relu's input stays off its kink."""
    rng = numpy.random.default_rng(7)
    x = numpy.stack([rng.permutation(numpy.arange(-3.0, 5.0)) * 0.7 for _ in range(2)], -1)
    return [((x.reshape(2, 2, 2, 2), pos(2), u(2, lo=-0.05, hi=0.05)),
             {"ksize": (2, 2), "epsilon": 1e-3}),
            ((x.reshape(1, 4, 2, 2)[:, ::-1].copy(), pos(2), u(2, lo=-0.05, hi=0.05)),
             {"ksize": (2, 1), "epsilon": 0.1, "cache": True})]


batch_norm_relu_pooled = defop(
    "batch_norm_relu_pooled", _batch_norm_relu_pooled_forward, arity=3, save=(0, 1, "out"),
    smooth=False, type="BatchNormReluPooled", identity_cache=True, batch_unaware=True,
    kink="relu'(0) = 0",
    vjp=lambda F, g, x, y, ksize, epsilon=1e-3, cache=False: norm_ops._train_vjp(
        F, F.relu_grad(g, y), x, None, epsilon=epsilon),
    jvp=_batch_norm_relu_pooled_jvp, samples=_bn_relu_samples)


def _tiled_max_relu_grad_forward(x, g, ksize, sums=False):
    # The sums only where sum_to's kernel would compute them itself (the same size test).
    image_sums = (numpy.empty((x.shape[0], x.shape[-1]))
                  if sums and x.ndim == 4 and native_nn.pays(x) else None)
    out = conv_ops.native_scatter(x, g, ksize, relu_of=x, sums=image_sums)
    if out is None:
        return RAW.relu_grad(conv_ops._tiled_max_grad_forward(x, g, ksize), x)
    if image_sums is not None:
        _derived.put(out, image_sums_key(out), image_sums)
    return out


tiled_max_relu_grad = defop(
    "tiled_max_relu_grad", _tiled_max_relu_grad_forward, arity=2, save=(0,),
    type="MaxPoolReluGrad", identity_cache=True,
    vjp=lambda F, g, x, y, ksize, sums=False: (
        None, F.tiled_max_pick(x[0], F.relu_grad(g, x[0]), ksize=ksize)),
    jvp=lambda F, t, x, y, ksize, sums=False: None if t[1] is None else F.tiled_max_relu_grad(
        x[0], t[1], ksize=ksize),
    samples=lambda: [((away(2, 4, 5, 3), u(2, 2, 2, 3)), {"ksize": (2, 2)}),
                     ((away(2, 4, 5, 3), u(2, 2, 2, 3)), {"ksize": (2, 2), "sums": True})])


def _tiled_max_relu_grad_bn_forward(x, g, bn_x, ksize, epsilon=1e-3):
    if native_nn.pays(x) and bn_x.shape == x.shape and native_nn.available():
        stats = norm_ops._statistics(bn_x, epsilon)
        sums = numpy.empty((2, x.shape[-1]))
        out = None if stats[0] is not None else conv_ops.native_scatter(
            x, g, ksize, relu_of=x, bn=(bn_x, stats[2], stats[1], sums))
        if out is not None:
            _derived.put(out, norm_ops.reduce_grads_key(out, epsilon), (bn_x, sums))
            return out
    return _tiled_max_relu_grad_forward(x, g, ksize)


tiled_max_relu_grad_bn = defop(
    "tiled_max_relu_grad_bn", _tiled_max_relu_grad_bn_forward, arity=3, save=(0,),
    type="MaxPoolReluGradBatchNorm", identity_cache=True,
    vjp=lambda F, g, x, y, ksize, epsilon=1e-3: (
        None, F.tiled_max_pick(x[0], F.relu_grad(g, x[0]), ksize=ksize), None),
    jvp=lambda F, t, x, y, ksize, epsilon=1e-3: None if t[1] is None else
    F.tiled_max_relu_grad(x[0], t[1], ksize=ksize),
    samples=lambda: [((away(2, 4, 5, 3), u(2, 2, 2, 3), u(2, 4, 5, 3)),
                      {"ksize": (2, 2), "epsilon": 1e-3})])
