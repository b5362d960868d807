"""Matrix products fused with the relu step beside them, for traced steps
(``minitf.plan_fusion``).

Each op computes exactly what the unfused pair computes:

- ``matmul_bias_relu(a, w, b)``: ``bias_activation(a @ w, b, "relu")`` (a ``Dense`` layer
  with ``activation="relu"``) where nothing else reads the product.
- ``matmul_relu_grad(a, w, y)``: ``relu_grad(a @ w, y)`` (the input gradient ``g @ W.T`` of
  the layer after a relu, masked by that relu's output ``y``) where nothing else reads the
  product.

Where the product runs on MKL (``minitf.mkl_blas``) each thread finishes the block of the
result it computed while the block is in its cache; the unfused pair wrote the product, and
then one thread read all of it back, half from the other core's cache. Elsewhere (another
backend, numpy's BLAS, batched products) each op runs the pair's own kernels.
"""
import numpy

from .. import mkl_blas
from ._samples import away, u
from .fused_ops import _bias_activation_forward, _bias_activation_out
from .linalg_ops import _matmul_forward, _matmul_out, _matmul_vjp
from .math_ops import _relu_grad_forward, _relu_grad_out
from .pool_fusion_ops import _tangent
from .registry import defop


def _on_mkl(a, w, out=None, **epilogue):
    if type(a) is numpy.ndarray and a.ndim == 2 and getattr(w, "ndim", 0) == 2:
        return mkl_blas.product(a, w, out, **epilogue)
    return None


def _matmul_bias_relu_forward(a, w, b):
    done = _on_mkl(a, w, bias=b)
    if done is not None:
        return done
    return _bias_activation_forward(_matmul_forward(a, w), b, activation="relu")


def _matmul_bias_relu_out(out, a, w, b):
    done = _on_mkl(a, w, out, bias=b)
    if done is not None:
        return done
    z = _matmul_out(out, a, w)
    if z is not out or getattr(b, "shape", None) != out.shape[-1:]:
        return _bias_activation_forward(z, b, activation="relu")
    return _bias_activation_out(out, out, b, activation="relu")


def _matmul_bias_relu_vjp(F, g, x, y):
    gz = F.relu_grad(g, y)
    ga, gw = _matmul_vjp(F, gz, x[:2], None)
    return ga, gw, gz        # the tape sums b's gradient over the broadcast axes


def _product_tangents(F, t, a, w):
    """The tangents of ``a @ w`` from those of ``a`` and ``w`` (None where they have none)."""
    return (None if t[0] is None else F.matmul(t[0], w),
            None if t[1] is None else F.matmul(a, t[1]))


def _matmul_bias_relu_jvp(F, t, x, y):
    return _tangent(F, _product_tangents(F, t, x[0], x[1]) + (t[2],), y)


def _matmul_bias_relu_samples():
    rng = numpy.random.default_rng(11)
    while True:       # keep a @ w + b away from relu's kink
        a, w, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 5)), u(5, lo=-0.1, hi=0.1)
        if numpy.abs(a @ w + b).min() > 0.1:
            return [((a, w, b), {})]


matmul_bias_relu = defop(
    "matmul_bias_relu", _matmul_bias_relu_forward, arity=3, save=(0, 1, "out"), smooth=False,
    type="MatMulBiasRelu", kink="relu'(0) = 0", vjp=_matmul_bias_relu_vjp,
    jvp=_matmul_bias_relu_jvp, out_forward=_matmul_bias_relu_out,
    samples=_matmul_bias_relu_samples)


def _matmul_relu_grad_forward(a, w, y):
    done = _on_mkl(a, w, mask=y)
    if done is not None:
        return done
    return _relu_grad_forward(_matmul_forward(a, w), y)


def _matmul_relu_grad_out(out, a, w, y):
    done = _on_mkl(a, w, out, mask=y)
    if done is not None:
        return done
    z = _matmul_out(out, a, w)
    if z is not out or getattr(y, "shape", None) != out.shape:
        return _relu_grad_forward(z, y)
    return _relu_grad_out(out, out, y)


def _matmul_relu_grad_vjp(F, g, x, y):
    ga, gw = _matmul_vjp(F, F.relu_grad(g, x[2]), x[:2], None)
    # As relu_grad's: the derivative in y is zero (the mask is locally constant).
    return ga, gw, (F.zeros_like(g) if F.needs[2] else None)


def _matmul_relu_grad_jvp(F, t, x, y):
    return _tangent(F, _product_tangents(F, t, x[0], x[1]), x[2])


matmul_relu_grad = defop(
    "matmul_relu_grad", _matmul_relu_grad_forward, arity=3, save=(0, 1, 2), smooth=False,
    type="MatMulReluGrad", kink="the mask y > 0 is locally constant: d/dy = 0",
    vjp=_matmul_relu_grad_vjp, jvp=_matmul_relu_grad_jvp, out_forward=_matmul_relu_grad_out,
    samples=lambda: [((u(3, 4), u(4, 5), away(3, 5)), {})])
