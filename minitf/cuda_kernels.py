"""Fused element-wise CUDA kernels for the GPU hot paths (cupy backend only).

On a GPU a chain of small element-wise ops is bound by kernel launches and memory passes, not
arithmetic: Adam's update is twelve passes as ufuncs. Here each chain is one
``cupy.ElementwiseKernel`` (compiled on first use, cached per dtype by cupy):

- ``adam``: m, v and w of Adam/AdamW (decoupled weight decay folded in) in one pass;
- ``bias_activation`` / ``activation_grad``: ``act(x + b)`` and its input gradient;
- ``softmax_cross_entropy``: per-example sparse cross-entropy and its logits gradient from one
  row-wise kernel (the gradient is kept for the backward pass).

Nothing here runs unless ``enabled()``: the cupy backend is active and
``MINITF_FUSED_KERNELS`` is not ``0``. numpy and strict never import cupy through this module.
Results agree with the unfused ops to rounding (the GPU contracts multiply-adds), not bitwise.
"""
import os

import numpy

from . import backend as B

__all__ = ["enabled", "adam", "bias_activation", "activation_grad", "softmax_cross_entropy"]

ACTIVATIONS = ("relu", "sigmoid", "tanh", "linear")

_FORWARD = {"relu": "y = v > 0 ? v : (v != v ? v : (T)0)",   # NaN stays NaN, as in B.relu
            "sigmoid": "y = 1 / (1 + exp(-v))", "tanh": "y = tanh(v)", "linear": "y = v"}
FLOAT_TYPES = ("float32", "float64")   # the activation kernels' types (float16: unfused ops)
_GRAD = {"relu": "gx = g * (T)(y > 0)",   # a NaN gradient stays NaN, as in TF's ReluGrad
         "sigmoid": "gx = g * y * (1 - y)", "tanh": "gx = g * (1 - y * y)", "linear": "gx = g"}

_kernels = {}


def enabled():
    """Whether the fused kernels are used: cupy backend, not turned off."""
    return B.get_backend() == "cupy" and os.environ.get("MINITF_FUSED_KERNELS", "1") != "0"


def _compiled(name, make):
    kernel = _kernels.get(name)
    if kernel is None:
        kernel = _kernels[name] = make()
    return kernel


def _elementwise(name, in_params, out_params, body):
    cupy = B.xp   # enabled(): the cupy module (backend.py stays the only place importing it)
    return _compiled(name, lambda: cupy.ElementwiseKernel(in_params, out_params, body,
                                                          f"minitf_{name}"))


def adam(w, g, m, v, b1, c1, b2, c2, eps, scale, decay):
    """In place: ``m = b1*m + c1*g; v = b2*v + c2*g*g; w = decay*w + scale*m/(sqrt(v)+eps)``
    (the update ``native.adam`` and the ufunc path compute). False, changing nothing, where the
    arrays do not share one float dtype and shape (the caller then runs its ufunc path)."""
    if not (g.dtype == w.dtype == m.dtype == v.dtype and g.shape == w.shape == m.shape == v.shape
            and w.dtype.kind == "f" and w.dtype.itemsize >= 4):
        return False
    kernel = _elementwise(
        "adam", "T g, T b1, T c1, T b2, T c2, T eps, T scale, T decay", "T w, T m, T v",
        "m = b1 * m + c1 * g; v = b2 * v + c2 * g * g; "
        "w = decay * w + scale * (m / (sqrt(v) + eps));")
    t = w.dtype.type
    kernel(g, t(b1), t(c1), t(b2), t(c2), t(eps), t(scale), t(decay), w, m, v)
    return True


def bias_activation(x, b, activation):
    """``activation(x + b)`` in one pass (``b`` broadcast over the last axis)."""
    body = "T v = x + b; " + _FORWARD[activation] + ";"
    return _elementwise(f"bias_{activation}", "T x, T b", "T y", body)(x, b)


def activation_grad(g, y, activation):
    """The input gradient of ``activation`` from its output ``y``: ``g * act'(...)``."""
    return _elementwise(f"{activation}_grad", "T g, T y", "T gx",
                        _GRAD[activation] + ";")(g, y)


_CE_SOURCE = r"""
extern "C" __global__ void minitf_softmax_ce(const T* logits, const L* labels, T* loss,
                                              T* grad, int rows, int classes) {
    // One block of 256 threads per row: the max, the sum of exponentials, then the loss and
    // (softmax - onehot) in one sweep. Computed in T (float or double).
    int row = blockIdx.x;
    if (row >= rows) return;
    const T* x = logits + (long long)row * classes;
    T* gr = grad + (long long)row * classes;
    const T nan = (T)__int_as_float(0x7fffffff);
    __shared__ T shared[256];
    T m = (T)__int_as_float(0xff800000);   // -inf
    for (int j = threadIdx.x; j < classes; j += blockDim.x) m = fmax(m, x[j]);
    shared[threadIdx.x] = m;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            shared[threadIdx.x] = fmax(shared[threadIdx.x], shared[threadIdx.x + s]);
        __syncthreads();
    }
    m = shared[0];
    __syncthreads();
    T total = 0;
    for (int j = threadIdx.x; j < classes; j += blockDim.x) total += exp(x[j] - m);
    shared[threadIdx.x] = total;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) shared[threadIdx.x] += shared[threadIdx.x + s];
        __syncthreads();
    }
    total = shared[0];
    long long label = (long long)labels[row];
    bool valid = label >= 0 && label < classes;   // TF's GPU kernel: NaN for a bad label
    for (int j = threadIdx.x; j < classes; j += blockDim.x)
        gr[j] = valid ? exp(x[j] - m) / total - (j == label ? (T)1 : (T)0) : nan;
    if (threadIdx.x == 0)
        loss[row] = valid ? log(total) - (x[label] - m) : nan;
}
"""

_CE_TYPES = {"float32": "float", "float64": "double"}


def softmax_cross_entropy(labels, logits):
    """Per-example ``-log softmax(logits)[label]`` and its gradient ``softmax - onehot`` with
    respect to the logits (2-D logits, 1-D integer labels), from one kernel launch."""
    cupy = B.xp
    if logits.dtype.name not in _CE_TYPES or logits.ndim != 2 or labels.ndim != 1:
        raise ValueError(f"softmax_cross_entropy: expected 2-D float logits and 1-D labels, got "
                         f"{logits.shape} {logits.dtype} and {labels.shape} {labels.dtype}")
    label_type = {"i": "long long", "u": "unsigned long long"}[labels.dtype.kind]
    labels = labels.astype(numpy.int64 if labels.dtype.kind == "i" else numpy.uint64, copy=False)
    name = f"ce_{logits.dtype.name}_{labels.dtype.name}"
    source = f"typedef {_CE_TYPES[logits.dtype.name]} T; typedef {label_type} L;\n" + _CE_SOURCE
    kernel = _compiled(name, lambda: cupy.RawKernel(source, "minitf_softmax_ce"))
    logits = cupy.ascontiguousarray(logits)
    rows, classes = logits.shape
    loss = cupy.empty(rows, dtype=logits.dtype)
    grad = cupy.empty_like(logits)
    if rows:
        kernel((rows,), (256,), (logits, labels, loss, grad, numpy.int32(rows),
                                 numpy.int32(classes)))
    return loss, grad

