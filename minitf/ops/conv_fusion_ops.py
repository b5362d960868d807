"""A convolution layer's relu gradient fused with its bias gradient, for traced steps
(``minitf.plan_fusion``).

- ``relu_grad_sums(g, y)``: ``relu_grad(g, y)`` where ``sum_to`` of the result down to the
  channels (the bias gradient of ``Conv2D(..., activation="relu")`` whose output a convolution
  reads, not a pool) comes next. The same pass leaves each image's channel sums in the derived
  cache, the bits ``sum_to``'s own kernel computes (``native_nn.image_sums``), so ``sum_to``
  does not read the whole gradient again. ``g`` may be a slice of a padded image's gradient
  (a SAME convolution's input gradient): the kernel reads it in place, row by row.

Where numpy's native kernels do not run (another backend, small arrays, no compiler) the op
runs ``relu_grad``'s own path.
"""
import numpy

from .. import native_nn
from ._samples import away, u
from .array_ops import image_sums_key
from .derived import derived as _derived
from .math_ops import _relu_grad_forward, _relu_grad_vjp
from .registry import defop


def _relu_grad_sums_forward(g, y):
    # The sums only where sum_to's kernel would compute them itself (the same size test).
    if (type(g) is numpy.ndarray and g.ndim == 4 and g.shape == y.shape
            and native_nn.pays(g)):
        sums = numpy.empty((g.shape[0], g.shape[-1]))
        out = native_nn.relu_grad_rows(g, y, sums=sums)
        if out is not None:
            _derived.put(out, image_sums_key(out), sums)
            return out
    return _relu_grad_forward(g, y)


relu_grad_sums = defop(
    "relu_grad_sums", _relu_grad_sums_forward, arity=2, save=(1,), smooth=False,
    type="ReluGradSums", kink="the mask y > 0 is locally constant: d/dy = 0",
    identity_cache=True, vjp=_relu_grad_vjp,
    jvp=lambda F, t, x, y: (None if t[0] is None else F.relu_grad(t[0], x[1])),
    samples=lambda: [((u(2, 3, 4, 5), away(2, 3, 4, 5)), {})])
