"""2-D convolution and pooling (NHWC).

``conv2d`` = ``conv2d_valid`` with the padding (SAME: TF's split, the odd pixel at the end) as
its attribute ``pads``. It runs Winograd's F(2x2, 3x3) or F(4x4, 3x3) where it applies and
pays (``minitf.winograd``: 3x3, stride 1, 16+ channels, large enough outputs, the native
kernels loaded), a direct kernel for 3x3 filters over one- or three-channel images
(``minitf.direct_conv``), and otherwise ``extract_patches`` (sliding windows,
``(N, OH, OW, KH, KW, C)``) -> one matmul with the filters as a ``(KH*KW*C, O)`` matrix. The
patches' gradient (col2im) adds each window back. Winograd's tiles and the native patches read
the padding as zeros and the input gradient comes out without it, so no padded copy of the
activations is made forward and no cropped view of the gradient backward (the direct kernels
and the non-native path pad a copy). Pools reduce the same patches over the window axes, or,
for windows that tile the image, run a native one-pass kernel.
"""
import numpy

from .. import backend as B
from .. import direct_conv, native_nn, winograd
from .._state import state
from ..tensor import Tensor, Variable
from ._samples import u
from .array_ops import pad, reshape, transpose
from .convert import convert_to_tensor, operand_pair
from .derived import derived as _derived
from .linalg_ops import matrix_product
from .reduce_ops import reduce_mean, reduce_sum
from .registry import TENSOR, apply, defop


def _x(x):
    return x if isinstance(x, Tensor) else convert_to_tensor(x)


# --- patches -------------------------------------------------------------------------------------

def _out_size(size, k, s, d):
    return (size - (k - 1) * d - 1) // s + 1


def _window_counts(size, ksize, strides, dilations):
    """``(OH, OW)``: how many windows fit down and across an image of ``size`` (H, W); a
    ValueError where none does."""
    (h, w), (kh, kw), (sh, sw), (dh, dw) = size, ksize, strides, dilations
    oh, ow = _out_size(h, kh, sh, dh), _out_size(w, kw, sw, dw)
    if oh <= 0 or ow <= 0:
        raise ValueError(f"a {kh}x{kw} window (dilation {dh}x{dw}) does not fit in {h}x{w}")
    return oh, ow


def _patches_forward(x, ksize, strides, dilations=(1, 1)):
    """Windows over axes -3, -2 of ``(..., H, W, C)``: ``(..., OH, OW, KH, KW, C)``, contiguous."""
    (kh, kw), (sh, sw), (dh, dw) = ksize, strides, dilations
    *lead, h, w, c = x.shape
    oh, ow = _window_counts((h, w), ksize, strides, dilations)
    out = native_nn.patches(x, ksize, strides, dilations)
    if out is not None:
        return out
    out = B.xp.empty((*lead, oh, ow, kh, kw, c), dtype=x.dtype)
    # One strided copy per kernel offset (few, large copies; fast for any channel count).
    for i in range(kh):
        for j in range(kw):
            out[..., i, j, :] = x[..., i * dh:i * dh + sh * (oh - 1) + 1:sh,
                                  j * dw:j * dw + sw * (ow - 1) + 1:sw, :]
    return out


def _patches_vjp(F, g, x, y, ksize, strides, dilations=(1, 1)):
    size = tuple(F.shapes[0][-3:-1])
    return (F.col2im(g, size=size, ksize=ksize, strides=strides, dilations=dilations),)


def _patches_samples():
    return [((u(2, 4, 5, 3),), {"ksize": (2, 3), "strides": (1, 2), "dilations": (1, 1)}),
            ((u(1, 6, 5, 2),), {"ksize": (2, 2), "strides": (3, 1), "dilations": (2, 1)})]


extract_patches = defop("extract_patches", _patches_forward, vjp=_patches_vjp, jvp="linear",
                        samples=_patches_samples, type="ExtractPatches")


def _col2im_forward(g, size, ksize, strides, dilations=(1, 1)):
    """The adjoint of ``extract_patches``: add each window back where it came from."""
    (kh, kw), (sh, sw), (dh, dw) = ksize, strides, dilations
    *lead, oh, ow, _, _, c = g.shape
    if (oh, ow) != (_out_size(size[0], kh, sh, dh), _out_size(size[1], kw, sw, dw)):
        raise ValueError(f"{oh}x{ow} windows do not tile a {size[0]}x{size[1]} image")
    if len(lead) == 1:
        out = native_nn.col2im(g, size, ksize, strides, dilations)
        if out is not None:
            return out
    out = B.xp.zeros((*lead, size[0], size[1], c), dtype=g.dtype)
    disjoint = sh > (kh - 1) * dh and sw > (kw - 1) * dw  # each pixel in at most one window
    for i in range(kh):
        for j in range(kw):
            dst = (Ellipsis, slice(i * dh, i * dh + sh * (oh - 1) + 1, sh),
                   slice(j * dw, j * dw + sw * (ow - 1) + 1, sw), slice(None))
            if disjoint:
                out[dst] = g[..., i, j, :]
            else:
                out[dst] += g[..., i, j, :]
    return out


def _col2im_vjp(F, g, x, y, size, ksize, strides, dilations=(1, 1)):
    return (F.extract_patches(g, ksize=ksize, strides=strides, dilations=dilations),)


col2im = defop("col2im", _col2im_forward, vjp=_col2im_vjp, jvp="linear", type="Col2Im",
               samples=lambda: [((u(2, 2, 2, 2, 3, 3),), {"size": (3, 5), "ksize": (2, 3),
                                                          "strides": (1, 2),
                                                          "dilations": (1, 1)})])


# --- convolution as one op: patches @ filters forward, per-offset products backward ------------

def _may_cache(x):
    """Cache what a gradient kernel will reuse only when a gradient may follow (something is
    recording) and ``x`` is an activation, not a Variable's buffer (updated in place)."""
    return bool(state.active) and not isinstance(x, Variable)


def _padded_patches(x, ksize, strides, dilations, pads):
    """``extract_patches`` of ``x`` zero-padded by ``pads``: natively without a padded copy
    where the kernel runs."""
    if pads != _NO_PADS:
        _window_counts(_padded_shape(x.shape, pads)[1:3], ksize, strides, dilations)
        out = native_nn.patches(x, ksize, strides, dilations, pads)
        if out is not None:
            return out
    return _patches_forward(_padded(x, pads), ksize, strides, dilations)


def _cached_patches(x, ksize, strides, dilations, store, pads):
    key = ("patches", tuple(ksize), tuple(strides), tuple(dilations), pads, x.shape, x.dtype)
    patches = _derived.get(x, key)
    if patches is None:
        patches = _padded_patches(x, ksize, strides, dilations, pads)
        if store:
            _derived.put(x, key, patches)
    return patches


def _winograd(x_shape, w_shape, strides, dilations, dtype, *more_dtypes):
    """Whether Winograd's kernels take this convolution (one dtype for every operand, and
    faster than im2col: ``winograd.pays``)."""
    return all(d == dtype for d in more_dtypes) and winograd.applies(
        x_shape, w_shape, strides, dilations, dtype) and winograd.pays(x_shape, w_shape)


def _direct(x_shape, w_shape, strides, dilations, dtype, *more_dtypes):
    """Whether the direct kernels take this convolution (``minitf.direct_conv``)."""
    return all(d == dtype for d in more_dtypes) and direct_conv.applies(
        x_shape, w_shape, strides, dilations, dtype)


_NO_PADS = ((0, 0), (0, 0))


def _pads(pads):
    """``pads`` as ``((top, bottom), (left, right))`` of ints (hashable: a cache key)."""
    return tuple((int(a), int(b)) for a, b in pads)


def _padded_shape(shape, pads):
    (top, bottom), (left, right) = pads
    return (shape[0], shape[1] + top + bottom, shape[2] + left + right) + tuple(shape[3:])


def _padded(x, pads):
    """``x`` (N, H, W, C) zero-padded by ``pads`` (``((top, bottom), (left, right))``)."""
    if pads == _NO_PADS:
        return x
    return B.xp.pad(x, ((0, 0),) + tuple(pads) + ((0, 0),))


def _input_transform(x, store, pads=_NO_PADS):
    """Winograd's ``V`` of ``x`` zero-padded by ``pads``: cached by x's identity like
    patches."""
    key = ("winograd_v", x.shape, x.dtype, pads)
    v = _derived.get(x, key)
    if v is None and store:
        v = winograd.transform_input(x, pads)
        _derived.put(x, key, v)
    return v


def _conv_forward(x, w, strides, dilations=(1, 1), cache=True, pads=_NO_PADS):
    """Valid cross-correlation of (N, H, W, C), zero-padded by ``pads``, with (KH, KW, C, O):
    Winograd's tiles (3x3, stride 1, see ``minitf.winograd``; they read the padding as zeros,
    no padded copy), the direct 1- or 3-channel kernel (``minitf.direct_conv``) or patches @
    filters."""
    pads = _pads(pads)
    if _winograd(_padded_shape(x.shape, pads), w.shape, strides, dilations, x.dtype, w.dtype):
        return winograd.conv(x, w, _input_transform(x, cache, pads), pads=pads)
    if _direct(_padded_shape(x.shape, pads), w.shape, strides, dilations, x.dtype, w.dtype):
        return direct_conv.conv(_padded(x, pads), w)
    kh, kw, c, o = w.shape
    patches = _cached_patches(x, (kh, kw), strides, dilations, cache, pads)
    n, oh, ow = patches.shape[:3]
    return matrix_product(patches.reshape(n * oh * ow, kh * kw * c),
                          w.reshape(kh * kw * c, o)).reshape(n, oh, ow, o)


_COLS_BYTES = 8 << 20   # the product's rows per chunk: a few MB, not the whole batch's


def _input_grad_by_col2im(g, w, size, strides, dilations, pads=_NO_PADS):
    """``col2im(g @ W^T)`` (what falls on the padding ``pads`` dropped), a chunk of images at
    a time (bounded scratch memory), or None where the native kernel cannot run."""
    kh, kw, c, o = w.shape
    n, oh, ow, _ = g.shape
    wt = w.reshape(kh * kw * c, o).T
    out = numpy.empty((n,) + tuple(size) + (c,), dtype=g.dtype)
    per_image = oh * ow * kh * kw * c * g.dtype.itemsize
    step = max(1, _COLS_BYTES // max(per_image, 1))
    for start in range(0, n, step):
        part = g[start:start + step]
        cols = matrix_product(part.reshape(-1, o), wt).reshape(part.shape[:3] + (kh, kw, c))
        if native_nn.col2im(cols, size, (kh, kw), strides, dilations,
                            out=out[start:start + step], pads=pads) is None:
            return None     # not arrays the kernel takes: only the first chunk gets here
    return out


def _conv_input_grad_forward(g, w, size, strides, dilations=(1, 1), pads=_NO_PADS):
    """The adjoint of ``_conv_forward`` in x: (N, OH, OW, O) -> (N, H, W, C), ``size`` =
    (H, W) (the image's, without the padding).

    Winograd's adjoint where it applies. Otherwise, with the native kernels, one product
    ``g @ W^T`` per chunk of images and a native col2im (13.1 ms against 15.8 ms below on a
    64 -> 32-channel 3x3 layer, 128 images of 14x14). Without them, one product per kernel
    offset, added straight into the image: no (N*OH*OW, KH*KW*C) intermediate and no strided
    gather from it (measured 3x faster than numpy's col2im of g @ W^T).
    """
    xp = B.xp
    kh, kw, c, o = w.shape
    n, oh, ow, _ = g.shape
    pads = _pads(pads)
    full = _padded_shape((n,) + tuple(size) + (c,), pads)
    if _winograd(full, w.shape, strides, dilations, g.dtype, w.dtype):
        return winograd.input_grad(g, w, size, pads)
    # The dtype checked first: a product computed for a kernel that cannot take it is wasted.
    if g.dtype == w.dtype and native_nn.has_kernel("col2im", g.dtype):
        out = _input_grad_by_col2im(g, w, size, strides, dilations, pads)
        if out is not None:
            return out
    if pads != _NO_PADS:   # the per-offset products below on the padded image, then a crop
        (top, _), (left, _) = pads
        out = _conv_input_grad_forward(g, w, full[1:3], strides, dilations)
        return out[:, top:top + size[0], left:left + size[1]]
    (sh, sw), (dh, dw) = strides, dilations
    g2 = g.reshape(n * oh * ow, o)
    out = xp.zeros((n,) + tuple(size) + (c,), dtype=g.dtype)
    for i in range(kh):
        for j in range(kw):
            contrib = (g2 @ w[i, j].T).reshape(n, oh, ow, c)
            dst = out[:, i * dh:i * dh + sh * (oh - 1) + 1:sh,
                      j * dw:j * dw + sw * (ow - 1) + 1:sw, :]
            xp.add(dst, contrib, out=dst)
    return out


def _conv_filter_grad_forward(x, g, ksize, strides, dilations=(1, 1), pads=_NO_PADS):
    """The adjoint of ``_conv_forward`` in the filters: patches(x)^T @ g -> (KH, KW, C, O)."""
    kh, kw = ksize
    c, o = x.shape[-1], g.shape[-1]
    pads = _pads(pads)
    if _winograd(_padded_shape(x.shape, pads), tuple(ksize) + (c, o), strides, dilations,
                 x.dtype, g.dtype):
        return winograd.filter_grad(x, g, _input_transform(x, False, pads), pads=pads)
    if _direct(_padded_shape(x.shape, pads), tuple(ksize) + (c, o), strides, dilations, x.dtype,
               g.dtype):
        return direct_conv.filter_grad(_padded(x, pads), g)
    patches = _cached_patches(x, ksize, strides, dilations, False, pads).reshape(-1, kh * kw * c)
    g = g.reshape(-1, o)
    # BLAS runs these faster with the longer of the two small dimensions as the output's rows.
    grad = matrix_product(g.T, patches).T if kh * kw * c > o else matrix_product(patches.T, g)
    return grad.reshape(kh, kw, c, o)


def _conv_vjp(F, g, x, y, strides, dilations=(1, 1), cache=False, pads=_NO_PADS):
    xin, w = x
    kh, kw = F.shapes[1][:2]
    return (F.conv2d_input_grad(g, w, size=tuple(F.shapes[0][1:3]), strides=strides,
                                dilations=dilations, pads=pads) if F.needs[0] else None,
            F.conv2d_filter_grad(xin, g, ksize=(kh, kw), strides=strides,
                                 dilations=dilations, pads=pads) if F.needs[1] else None)


def _input_grad_vjp(F, gg, x, y, size, strides, dilations=(1, 1), pads=_NO_PADS):
    g, w = x
    return (F.conv2d_valid(gg, w, strides=strides, dilations=dilations, cache=False, pads=pads)
            if F.needs[0] else None,
            F.conv2d_filter_grad(gg, g, ksize=tuple(F.shapes[1][:2]), strides=strides,
                                 dilations=dilations, pads=pads) if F.needs[1] else None)


def _filter_grad_vjp(F, gw, x, y, ksize, strides, dilations=(1, 1), pads=_NO_PADS):
    xin, g = x
    return (F.conv2d_input_grad(g, gw, size=tuple(F.shapes[0][1:3]), strides=strides,
                                dilations=dilations, pads=pads) if F.needs[0] else None,
            F.conv2d_valid(xin, gw, strides=strides, dilations=dilations, cache=False,
                           pads=pads) if F.needs[1] else None)


def _conv_samples():
    return [((u(2, 5, 6, 3), u(2, 3, 3, 4)), {"strides": (1, 1), "dilations": (1, 1)}),
            ((u(1, 7, 6, 2), u(3, 2, 2, 3)), {"strides": (2, 1), "dilations": (1, 2)}),
            ((u(1, 5, 4, 8), u(3, 3, 8, 8)), {"strides": (1, 1), "dilations": (1, 1)}),  # Winograd
            ((u(1, 4, 5, 1), u(3, 3, 1, 32)), {"strides": (1, 1), "dilations": (1, 1)}),  # direct
            ((u(1, 4, 4, 3), u(3, 3, 3, 32)), {"strides": (1, 1), "dilations": (1, 1)}),  # RGB
            ((u(1, 5, 4, 8), u(3, 3, 8, 8)), {"strides": (1, 1), "dilations": (1, 1),
                                              "pads": ((1, 1), (2, 0))}),  # Winograd, padded
            ((u(1, 4, 5, 3), u(2, 3, 3, 4)), {"strides": (2, 1), "dilations": (1, 1),
                                              "pads": ((0, 1), (1, 1))}),  # padded patches
            ((u(2, 5, 4, 2), u(3, 2, 2, 3)), {"strides": (2, 2), "dilations": (1, 2),
                                              "pads": ((1, 1), (2, 1))})]


conv2d_valid = defop("conv2d_valid", _conv_forward, arity=2, save=(0, 1), vjp=_conv_vjp,
                     jvp="bilinear", type="Conv2D", batch_unaware=True, per_example=(0,),
                     samples=_conv_samples, identity_cache=True)
conv2d_input_grad = defop(
    "conv2d_input_grad", _conv_input_grad_forward, arity=2, save=(0, 1), vjp=_input_grad_vjp,
    jvp="bilinear", type="Conv2DBackpropInput", batch_unaware=True, per_example=(0,),
    samples=lambda: [((u(2, 3, 4, 4), u(2, 3, 3, 4)), {"size": (4, 6), "strides": (1, 1),
                                                      "dilations": (1, 1)}),
                     ((u(1, 3, 4, 3), u(2, 2, 2, 3)), {"size": (7, 6), "strides": (2, 1),
                                                      "dilations": (1, 2)}),
                     ((u(1, 3, 2, 8), u(3, 3, 8, 8)), {"size": (5, 4), "strides": (1, 1),
                                                      "dilations": (1, 1)}),
                     ((u(1, 5, 4, 8), u(3, 3, 8, 8)), {"size": (5, 4), "strides": (1, 1),
                                                      "dilations": (1, 1),
                                                      "pads": ((1, 1), (1, 1))}),
                     ((u(1, 2, 5, 4), u(2, 3, 3, 4)), {"size": (4, 5), "strides": (2, 1),
                                                      "dilations": (1, 1),
                                                      "pads": ((0, 1), (1, 1))})])
conv2d_filter_grad = defop(
    "conv2d_filter_grad", _conv_filter_grad_forward, arity=2, save=(0, 1), vjp=_filter_grad_vjp,
    jvp="bilinear", type="Conv2DBackpropFilter", batch_unaware=True, identity_cache=True,
    samples=lambda: [((u(2, 5, 6, 3), u(2, 3, 4, 4)), {"ksize": (3, 3), "strides": (1, 1),
                                                      "dilations": (1, 1)}),
                     ((u(1, 7, 6, 2), u(1, 3, 4, 3)), {"ksize": (2, 2), "strides": (2, 1),
                                                      "dilations": (1, 2)}),
                     ((u(1, 5, 4, 8), u(1, 3, 2, 8)), {"ksize": (3, 3), "strides": (1, 1),
                                                      "dilations": (1, 1)}),
                     ((u(1, 4, 5, 1), u(1, 2, 3, 32)), {"ksize": (3, 3), "strides": (1, 1),
                                                       "dilations": (1, 1)}),  # direct
                     ((u(1, 4, 4, 3), u(1, 2, 2, 32)), {"ksize": (3, 3), "strides": (1, 1),
                                                       "dilations": (1, 1)}),  # RGB
                     ((u(1, 5, 4, 8), u(1, 5, 3, 8)), {"ksize": (3, 3), "strides": (1, 1),
                                                      "dilations": (1, 1),
                                                      "pads": ((1, 1), (1, 0))}),
                     ((u(1, 4, 5, 3), u(1, 2, 5, 4)), {"ksize": (2, 3), "strides": (2, 1),
                                                      "dilations": (1, 1),
                                                      "pads": ((0, 1), (1, 1))})])


# --- max over a window ---------------------------------------------------------------------------

def _first_max_mask(x, y):
    """True at the first maximum (row-major) of each ``(KH, KW)`` window of ``(..., KH, KW, C)``;
    ``y`` holds the maxima."""
    xp = B.xp
    *lead, kh, kw, c = x.shape
    flat = x.reshape(*lead, kh * kw, c)
    mask = xp.empty(flat.shape, dtype=bool)
    free = xp.ones(y.shape, dtype=bool)  # windows whose maximum is not taken yet
    for k in range(kh * kw):  # a loop over window offsets: much faster than argmax on axis -2
        hit = xp.logical_and(flat[..., k, :] == y, free)
        mask[..., k, :] = hit
        free &= ~hit
    return mask.reshape(x.shape)


# An op, not a constant made from x's values, so a traced training step replays it. RAW keeps the
# bool mask (numpy multiplies it into float arrays directly); TENSOR needs x's dtype.
_mask = defop("first_max_mask", lambda x, y, as_float=False: (
    _first_max_mask(x, y).astype(x.dtype) if as_float else _first_max_mask(x, y)), arity=2)
TENSOR.first_max_mask = lambda x, y: apply(_mask.op, (x, y), {"as_float": True})


def _window_max_vjp(F, g, x, y):
    # Ties: the whole gradient goes to the first maximum, as TF's MaxPoolGrad does (unlike
    # reduce_max, which splits it).
    lead = tuple(g.shape[:-1])
    return (F.reshape(g, lead + (1, 1, g.shape[-1])) * F.first_max_mask(x[0], y),)


def _window_max_jvp(F, t, x, y):
    return F.reduce_sum(t[0] * F.first_max_mask(x[0], y), axis=(-3, -2))


def _window_max_forward(x):
    """Max over the window axes of patches ``(..., KH, KW, C)`` -> ``(..., C)``."""
    kh, kw = x.shape[-3:-1]
    out = x[..., 0, 0, :].copy()
    for k in range(1, kh * kw):  # ten times faster than x.max(axis=(-3, -2)) on numpy
        B.xp.maximum(out, x[..., k // kw, k % kw, :], out=out)
    return out


window_max = defop("window_max", _window_max_forward, vjp=_window_max_vjp,
                   jvp=_window_max_jvp, save=(0, "out"), smooth=False, type="WindowMax",
                   kink="ties: the first maximum in row-major window order takes the gradient",
                   samples=lambda: [((u(2, 3, 2, 2, 3, 2),), {})])


# --- non-overlapping max pooling (stride == window): strided views, no patches ----------------

def _windows(x, ksize):
    """The ``KH*KW`` strided views of ``x`` (..., H, W, C), one per window offset, each
    (..., OH, OW, C); rows/columns that do not fill a window are left out (VALID). Leading
    dimensions may include a jacobian's batch of cotangents."""
    kh, kw = ksize
    oh, ow = x.shape[-3] // kh, x.shape[-2] // kw
    return [x[..., i:i + kh * oh:kh, j:j + kw * ow:kw, :] for i in range(kh) for j in range(kw)]


def _tiled_max(x, ksize):
    views = _windows(x, ksize)
    out = views[0].copy()
    for v in views[1:]:
        B.xp.maximum(out, v, out=out)
    return out


def _arg_key(x, ksize):
    return ("tiled_max_arg", tuple(ksize), x.shape, x.dtype)


def _pooled_key(x, ksize):
    return ("tiled_max_pooled", tuple(ksize), x.shape, x.dtype)


def cache_pooled(x, ksize, pooled, arg):
    """Leave the maxima and first-maximum offsets of ``x``'s pooling (computed with ``x``, by
    ``minitf.ops.pool_fusion_ops``) for the pool step that reads ``x`` next and its gradient."""
    _derived.put(x, _arg_key(x, ksize), arg)
    _derived.put(x, _pooled_key(x, ksize), pooled)


def _tiled_max_forward(x, ksize, cache=False):
    if cache:
        done = _derived.take(x, _pooled_key(x, ksize))
        if done is not None:
            return done
    pooled = native_nn.max_pool(x, ksize, with_arg=cache)
    if pooled is not None:   # one pass, keeping each window's first-maximum offset
        out, arg = pooled
        if cache:
            _derived.put(x, _arg_key(x, ksize), arg)
        return out
    out = _tiled_max(x, ksize)
    if cache:  # the gradient reuses these maxima (see conv2d for when caching is allowed)
        _derived.put(x, ("tiled_max", tuple(ksize), x.shape, x.dtype), out)
    return out


def _first_max_selectors(x, ksize):
    """Per window offset, a bool (..., OH, OW, C) mask: true where that offset holds the
    window's first maximum (row-major), the element TF's MaxPoolGrad sends the gradient to."""
    xp = B.xp
    views = _windows(x, ksize)
    top = _derived.get(x, ("tiled_max", tuple(ksize), x.shape, x.dtype))
    if top is None:
        top = _tiled_max(x, ksize)
    masks = [xp.equal(views[0], top)]
    taken = masks[0].copy()
    for v in views[1:-1]:
        hit = xp.equal(v, top)
        hit &= ~taken
        taken |= hit
        masks.append(hit)
    if len(views) > 1:  # the maximum is somewhere: the last offset has it if no earlier one did
        masks.append(~taken)
    return masks


def native_scatter(x, g, ksize, relu_of=None, sums=None, bn=None):
    """The native kernel's scatter of ``g`` to each window's first maximum (the offsets the
    forward pass cached, else computed again), masked as ``relu_grad(.., relu_of)`` when
    given, with each image's channel sums written into ``sums`` and batch norm's parameter
    sums into ``bn`` when given (``native_nn.max_pool_grad``); None where the kernel cannot
    run (a jacobian's batch of cotangents, another backend)."""
    if g.shape[:-3] != x.shape[:-3]:
        return None
    arg = _derived.get(x, _arg_key(x, ksize))
    if arg is None:
        pooled = native_nn.max_pool(x, ksize)
        arg = None if pooled is None else pooled[1]
    return None if arg is None else native_nn.max_pool_grad(g, arg, x.shape, ksize,
                                                            relu_of=relu_of, sums=sums, bn=bn)


def _tiled_max_grad_forward(x, g, ksize):
    """Scatter ``g`` (..., OH, OW, C) to the first maximum of each window: shape of ``x``."""
    out = native_scatter(x, g, ksize)
    if out is not None:
        return out
    xp = B.xp
    (kh, kw), (h, w) = ksize, x.shape[-3:-1]
    shape = tuple(g.shape[:-3]) + tuple(x.shape[-3:])
    # The windows tile the image except for a remainder strip: write every window position
    # (no zero fill of the whole output) and zero only that strip.
    out = xp.empty(shape, dtype=g.dtype)
    if h % kh:
        out[..., h - h % kh:, :, :] = 0
    if w % kw:
        out[..., :, w - w % kw:, :] = 0
    for dst, mask in zip(_windows(out, ksize), _first_max_selectors(x, ksize)):
        xp.multiply(g, mask, out=dst)
    return out


def _tiled_max_pick_forward(x, gx, ksize):
    """Gather ``gx`` (shape of ``x``) at the first maximum of each window: (N, OH, OW, C)."""
    xp = B.xp
    out = None
    for src, mask in zip(_windows(gx, ksize), _first_max_selectors(x, ksize)):
        picked = xp.where(mask, src, 0).astype(gx.dtype, copy=False)
        out = picked if out is None else xp.add(out, picked, out=out)
    return out


def _tiled_samples(shape=(2, 5, 4, 3)):
    return lambda: [((u(*shape),), {"ksize": (2, 2)}), ((u(1, 6, 6, 2),), {"ksize": (3, 2)})]


tiled_max_pool = defop(
    "tiled_max_pool", _tiled_max_forward, save=(0,), smooth=False, type="MaxPool",
    vjp=lambda F, g, x, y, ksize, cache=False: (F.tiled_max_grad(x[0], g, ksize=ksize),),
    jvp=lambda F, t, x, y, ksize, cache=False: F.tiled_max_pick(x[0], t[0], ksize=ksize),
    kink="ties: the first maximum in row-major window order takes the gradient",
    samples=_tiled_samples(), identity_cache=True)
# The gradient scatter and its adjoint (the gather) are linear in their second input; the
# window maxima are recomputed from x, so x's own (zero almost everywhere) derivative is exact.
tiled_max_grad = defop(
    "tiled_max_grad", _tiled_max_grad_forward, arity=2, save=(0,), type="MaxPoolGrad",
    identity_cache=True,
    vjp=lambda F, g, x, y, ksize: (None, F.tiled_max_pick(x[0], g, ksize=ksize)),
    jvp=lambda F, t, x, y, ksize: None if t[1] is None else F.tiled_max_grad(x[0], t[1],
                                                                              ksize=ksize),
    samples=lambda: [((u(2, 4, 4, 3), u(2, 2, 2, 3)), {"ksize": (2, 2)})])
tiled_max_pick = defop(
    "tiled_max_pick", _tiled_max_pick_forward, arity=2, save=(0,), type="MaxPoolPick",
    identity_cache=True,
    vjp=lambda F, g, x, y, ksize: (None, F.tiled_max_grad(x[0], g, ksize=ksize)),
    jvp=lambda F, t, x, y, ksize: None if t[1] is None else F.tiled_max_pick(x[0], t[1],
                                                                              ksize=ksize),
    samples=lambda: [((u(2, 4, 4, 3), u(2, 4, 4, 3)), {"ksize": (2, 2)})])


# --- argument parsing (TF's forms) ---------------------------------------------------------------

def _pair(value, what, data_format="NHWC"):
    """An int, or a list of 1, 2 or 4 ints (4: one per dimension of ``data_format``)."""
    if isinstance(value, (int, numpy.integer)):
        return int(value), int(value)
    value = [int(v) for v in value]
    if len(value) == 1:
        return value[0], value[0]
    if len(value) == 2:
        return tuple(value)
    if len(value) == 4:
        h, w = (1, 2) if data_format == "NHWC" else (2, 3)
        if any(v != 1 for i, v in enumerate(value) if i not in (h, w)):
            raise ValueError(f"{what} {value}: the batch and channel entries must be 1")
        return value[h], value[w]
    raise ValueError(f"{what} must be an int or a list of 1, 2 or 4 ints, got {value}")


def _single(value, what):
    """An int, or a list of 1 or 3 ints (3: N, W, C with 1 for N and C)."""
    if isinstance(value, (int, numpy.integer)):
        return int(value)
    value = [int(v) for v in value]
    if len(value) == 1 or (len(value) == 3 and value[0] == value[2] == 1):
        return value[len(value) // 2]
    raise ValueError(f"{what} must be an int or a list of 1 or 3 ints ([1, k, 1]), got {value}")


def _paddings(padding, size, ksize, strides, dilations, data_format="NHWC"):
    """``((top, bottom), (left, right))`` for SAME (TF's split), VALID or explicit pairs."""
    if isinstance(padding, str):
        mode = padding.upper()
        if mode == "VALID":
            return (0, 0), (0, 0)
        if mode != "SAME":
            raise ValueError(f"padding must be 'SAME', 'VALID' or explicit pairs, got {padding!r}")
        out = []
        for n, k, s, d in zip(size, ksize, strides, dilations):
            total = max((-(-n // s) - 1) * s + (k - 1) * d + 1 - n, 0)
            out.append((total // 2, total - total // 2))
        return tuple(out)
    pairs = [tuple(int(v) for v in p) for p in padding]
    if len(pairs) == 4:
        h, w = (1, 2) if data_format == "NHWC" else (2, 3)
        if any(pairs[i] != (0, 0) for i in range(4) if i not in (h, w)):
            raise ValueError(f"explicit padding {padding}: batch and channel pads must be 0")
        pairs = [pairs[h], pairs[w]]
    if len(pairs) != 2 or any(len(p) != 2 or min(p) < 0 for p in pairs):
        raise ValueError(f"explicit padding must be 4 (or 2) non-negative (before, after) pairs, "
                         f"got {padding}")
    return tuple(pairs)


def _to_nhwc(x, data_format, what):
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(f"{what}: data_format must be 'NHWC' or 'NCHW', got {data_format!r}")
    if x.ndim != 4:
        raise ValueError(f"{what}: input must be 4-D ({data_format}), got shape {tuple(x.shape)}")
    return x if data_format == "NHWC" else transpose(x, (0, 2, 3, 1))


def _from_nhwc(y, data_format):
    return y if data_format == "NHWC" else transpose(y, (0, 3, 1, 2))


def _pad_hw(x, pads, value=0):
    if pads == ((0, 0), (0, 0)):
        return x
    return pad(x, ((0, 0),) + tuple(pads) + ((0, 0),), constant_values=value)


# --- public ops ----------------------------------------------------------------------------------

def conv2d(input, filters, strides, padding, data_format="NHWC", dilations=None,  # noqa: A002
           name=None):
    """2-D convolution (cross-correlation, as TF): ``input`` (N, H, W, C), ``filters``
    (KH, KW, C, O) -> (N, OH, OW, O).

    ``strides``/``dilations``: an int or 1, 2 or 4 ints; ``padding``: ``"SAME"``, ``"VALID"`` or
    explicit ``[[0, 0], [top, bottom], [left, right], [0, 0]]``.
    """
    x, w = operand_pair("conv2d", input, filters)
    x = _to_nhwc(x, data_format, "conv2d")
    if w.ndim != 4 or w._value.shape[2] != x._value.shape[3]:
        raise ValueError(f"conv2d: filters must be (KH, KW, C, O) with C = {x._value.shape[3]} "
                         f"input channels, got shape {tuple(w.shape)}")
    kh, kw, c, o = w._value.shape
    stride = _pair(strides, "conv2d: strides", data_format)
    dilation = _pair(1 if dilations is None else dilations, "conv2d: dilations", data_format)
    pads = _paddings(padding, x._value.shape[1:3], (kh, kw), stride, dilation, data_format)
    try:
        # Winograd's tiles and the native patches read the padding as zeros: no padded copy
        # of the activations (a copy only for the direct kernels and off the native path).
        out = conv2d_valid(x, w, strides=stride, dilations=dilation, cache=_may_cache(x),
                           pads=pads)
    except ValueError as exc:
        raise ValueError(f"conv2d: input shape {tuple(x.shape)}, filters {tuple(w.shape)}, "
                         f"padding {padding!r}: {exc}") from None
    return _from_nhwc(out, data_format)


def _pool_patches(input, ksize, strides, padding, data_format, what, pad_value):
    x = _x(input)
    if x.ndim == 3:  # 1-D pooling over (N, W, C), as tf.nn.max_pool/avg_pool accept
        k, s = _single(ksize, f"{what}: ksize"), _single(strides, f"{what}: strides")
        x4 = reshape(x, (x._value.shape[0], 1) + tuple(x._value.shape[1:]))
        return _pool_patches(x4, (1, k), (1, s), padding, "NHWC", what, pad_value)
    x = _to_nhwc(x, data_format, what)
    k = _pair(ksize, f"{what}: ksize", data_format)
    s = _pair(strides, f"{what}: strides", data_format)
    size = tuple(x._value.shape[1:3])
    pads = _paddings(padding, size, k, s, (1, 1), data_format)
    value = pad_value(x._value.dtype) if callable(pad_value) else pad_value
    try:
        patches = extract_patches(_pad_hw(x, pads, value), ksize=k, strides=s)
    except ValueError as exc:
        raise ValueError(f"{what}: input shape {tuple(x.shape)}, ksize {k}, padding "
                         f"{padding!r}: {exc}") from None
    return patches, (size, k, s, pads)


def _lowest(dtype):
    return numpy.finfo(dtype).min if dtype.kind == "f" else numpy.iinfo(dtype).min


def max_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    """Max over ``ksize`` windows of ``input`` (N, H, W, C); padding never wins a window.

    On ties the gradient goes to the first maximum of the window (TF's rule).
    """
    x = _x(input)
    rank = x.ndim
    if rank == 4 and data_format == "NHWC" and isinstance(padding, str):
        k = _pair(ksize, "max_pool2d: ksize", data_format)
        size = tuple(x._value.shape[1:3])
        if (k == _pair(strides, "max_pool2d: strides", data_format)
                and _paddings(padding, size, k, k, (1, 1)) == ((0, 0), (0, 0))
                and size[0] >= k[0] and size[1] >= k[1]):
            return tiled_max_pool(x, ksize=k, cache=_may_cache(x))
    patches, _ = _pool_patches(x, ksize, strides, padding, data_format, "max_pool2d",
                               _lowest)
    y = window_max(patches)
    if rank == 3:
        return reshape(y, (y._value.shape[0],) + tuple(y._value.shape[2:]))
    return _from_nhwc(y, data_format)


def avg_pool2d(input, ksize, strides, padding, data_format="NHWC", name=None):  # noqa: A002
    """Mean over ``ksize`` windows of ``input`` (N, H, W, C).

    With SAME padding each window is divided by its number of real (non-padded) pixels, as TF.
    """
    if not isinstance(padding, str):
        raise ValueError("avg_pool2d: padding must be 'SAME' or 'VALID'")
    rank = _x(input).ndim
    patches, (size, k, s, pads) = _pool_patches(input, ksize, strides, padding, data_format,
                                                "avg_pool2d", 0)
    if pads == ((0, 0), (0, 0)):
        y = reduce_mean(patches, axis=(3, 4))
    else:
        ones = numpy.pad(numpy.ones(size + (1,)), (pads[0], pads[1], (0, 0)))
        oh, ow = patches._value.shape[1:3]
        counts = sum(ones[i:i + s[0] * (oh - 1) + 1:s[0], j:j + s[1] * (ow - 1) + 1:s[1]]
                     for i in range(k[0]) for j in range(k[1]))
        scale = B.xp.asarray(1.0 / counts, dtype=patches._value.dtype)
        y = reduce_sum(patches, axis=(3, 4)) * Tensor(scale)
    if rank == 3:
        return reshape(y, (y._value.shape[0],) + tuple(y._value.shape[2:]))
    return _from_nhwc(y, data_format)


def max_pool(input, ksize, strides, padding, data_format=None, name=None):  # noqa: A002
    """``tf.nn.max_pool`` for 3-D (N, W, C) and 4-D (N, H, W, C) inputs."""
    return max_pool2d(input, ksize, strides, padding, data_format or "NHWC")


def avg_pool(input, ksize, strides, padding, data_format=None, name=None):  # noqa: A002
    """``tf.nn.avg_pool`` for 3-D (N, W, C) and 4-D (N, H, W, C) inputs."""
    return avg_pool2d(input, ksize, strides, padding, data_format or "NHWC")

