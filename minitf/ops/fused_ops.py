"""Ops that fuse a chain of element-wise ops (see ``minitf.cuda_kernels``, ``minitf.native_nn``).

``bias_activation(x, b, activation)`` is ``activation(x + b)`` as one op: on cupy one kernel
forward and one backward; on numpy, relu runs ``native_nn.bias_relu`` (one pass), and
otherwise the plain ops' formulas (gradient-checked there). Dense and convolution layers use it
where ``use_fused_layers`` says a fused kernel runs it. Sparse softmax cross-entropy takes its
fused GPU kernel (loss and gradient in one launch) from ``nn_ops`` through ``sparse_ce_forward``.
"""
import numpy

from .. import backend as B
from .. import cuda_kernels, eager_fusion, native_nn
from ..tensor import Tensor
from .registry import RAW, apply, defop

__all__ = ["bias_activation", "use_fused_layers"]


def use_fused_layers(activation="linear", size=None):
    """Whether layers build ``activation(x + bias)`` (``x`` of ``size`` elements) with
    ``bias_activation``: on the GPU (its fused kernels) for every activation it has, on numpy
    for relu where the native kernel pays."""
    if cuda_kernels.enabled():
        return True
    return (activation == "relu" and native_nn.available()
            and (size is None or size >= native_nn.PAYS_FROM))


def _fused(x):
    return cuda_kernels.enabled() and x.dtype.name in cuda_kernels.FLOAT_TYPES


def _bias_activation_forward(x, b, activation="linear"):
    if _fused(x):
        return cuda_kernels.bias_activation(x, b, activation)
    if activation == "relu":
        fused = native_nn.bias_relu(x, b) if native_nn.pays(x) else None
        if fused is not None:
            return fused
    xp = B.xp
    z = x + b
    if activation == "relu":
        return B.relu(z, out=z)
    if activation == "sigmoid":
        return (1.0 / (1.0 + xp.exp(-z))).astype(z.dtype, copy=False)
    if activation == "tanh":
        return xp.tanh(z, out=z)
    return z


def _bias_activation_out(out, x, b, activation="linear"):
    if activation == "relu" and native_nn.pays(x) and \
            native_nn.bias_relu(x, b, out=out) is not None:
        return out
    out[...] = _bias_activation_forward(x, b, activation)
    return out


def _bias_activation_vjp(F, g, x, y, activation="linear"):
    if F is RAW and _fused(g):
        gz = cuda_kernels.activation_grad(g, y, activation)
    elif activation == "relu":
        # On bare arrays, a bias gradient to follow (a convolution's: per-channel sums of gz
        # over the images): the same pass leaves the sums for it (``relu_grad_sums``).
        sums = (F is RAW and eager_fusion.ENABLED and not F.nb and F.needs[1] and y.ndim == 4
                and len(F.shapes[1]) == 1)
        gz = F.relu_grad_sums(g, y) if sums else F.relu_grad(g, y)
    elif activation == "sigmoid":
        gz = g * y * (1.0 - y)
    elif activation == "tanh":
        gz = g * (1.0 - y * y)
    else:
        gz = g
    return gz, gz          # the tape sums b's gradient over the broadcast axes


def _samples():
    rng = numpy.random.default_rng(5)

    def pair():
        x = rng.standard_normal((3, 4))
        x[numpy.abs(x) < 0.1] += 0.3          # keep relu away from its kink
        return x, rng.standard_normal(4) * 0.05

    return [(pair(), {"activation": a}) for a in cuda_kernels.ACTIVATIONS]


_bias_activation = defop("bias_activation", _bias_activation_forward, arity=2,
                         vjp=_bias_activation_vjp, jvp="elementwise", save=("out",), smooth=False,
                         samples=_samples, out_forward=_bias_activation_out)


def bias_activation(x, bias, activation="linear"):
    """``activation(x + bias)`` (bias along the last axis) for ``activation`` in
    ``cuda_kernels.ACTIVATIONS``, as one op."""
    from .convert import convert_to_tensor
    if activation not in cuda_kernels.ACTIVATIONS:
        raise ValueError(f"bias_activation: activation must be one of "
                         f"{cuda_kernels.ACTIVATIONS}, got {activation!r}")
    # Variables go in as they are (as matmul's do): the op reads them at once, and a snapshot
    # would cost a copy of the bias in every step.
    operands = tuple(v if isinstance(v, Tensor) else convert_to_tensor(v) for v in (x, bias))
    return apply(_bias_activation.op, operands, {"activation": activation})


# --- sparse softmax cross-entropy: the forward kernel also computes the gradient -----------------

def sparse_ce_fused(labels, logits):
    return _fused(logits) and logits.ndim == 2 and labels.ndim == 1


def sparse_ce_forward(labels, logits):
    """Per-example losses and their gradient ``softmax - onehot`` from the fused kernel."""
    return cuda_kernels.softmax_cross_entropy(labels, logits)
