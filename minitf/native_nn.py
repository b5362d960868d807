"""Native kernels for convolutional layers' memory-bound steps (see ``minitf.native``).

In a CNN's training step the products run in BLAS; what is left is a chain of passes over
large activations that numpy makes one ufunc at a time: the bias add and relu after each
convolution, the max pool and the selection of each window's maximum, their gradients. Each
kernel here is one pass over memory:

- ``max_pool(x, ksize)``: non-overlapping max pooling of ``(N, H, W, C)``, returning the maxima
  and, per output, the offset (row-major, a byte) of the window's first maximum, the element
  TF's MaxPoolGrad sends the gradient to (a NaN window: its last element, as the ufunc path).
- ``max_pool_grad(g, arg, shape, ksize)``: that scatter, ``g * (offset == arg)`` at every
  window position (so a NaN gradient stays NaN, as numpy's mask multiply), zeros in the strip a
  window does not cover; optionally masked by a following relu's gradient in the same pass,
  and optionally summing each image's channels of the result as ``image_sums`` does.
- ``image_sums(x)``: each image's per-channel sums in float64, pixels in memory order (a
  convolution's bias gradient, ``sum_to``).
- ``bias_relu(x, b)``: ``maximum(x + b, 0)`` with ``b`` along the last axis.
- ``relu(x)``: ``maximum(x, 0)``; ``relu_grad(g, y)``: ``g * (y > 0)``; ``relu_grad_rows``,
  the same for a gradient read in place in evenly spaced runs (the interior of a padded
  image's gradient), optionally with ``image_sums`` of the result in the same pass.
- ``relu_pool(x, b, ksize)``: ``bias_relu`` (or ``relu``) and then ``max_pool`` of its result,
  image by image while the image is in cache; ``bn_relu_pool``, the same after ``bn_apply``.
- ``bn_moments``, ``bn_apply``, ``bn_reduce``, ``bn_input_grad``: batch normalization's
  statistics (summed in float64), output, parameter gradients and input gradient, one pass
  each over the activations (``minitf.ops.norm_ops`` has the formulas).
- ``patches(x, ksize, strides, dilations)``: a convolution's sliding windows (im2col), a
  ``memcpy`` per window row instead of numpy's strided copy per kernel offset; ``col2im``, its
  adjoint, adds each window back (the input gradient after one product).

Every wrapper returns None where it cannot run (no compiler, another array type or dtype, a
layout it does not handle) and the caller keeps its numpy path. The element-wise arithmetic is
numpy's (one add, one compare, one multiply per element; NaN propagating as ``numpy.maximum``),
so both paths give the same values; BatchNorm's sums run in float64 (numpy's, in the array's
dtype, round more). The tests compare them. Each kernel splits its rows over
``minitf.kernel_threads`` (from ``MIN_PART`` elements a thread). The C source is in
``minitf.native_nn_source``.
"""
import ctypes

import numpy

from . import kernel_threads


_DTYPES = ("float32", "float64")
_I, _P = ctypes.c_int64, ctypes.c_void_p
_SIGNATURES = {"fwd": [_I] * 6 + [_P] * 3, "bwd": [_I] * 6 + [_P] * 10,
               "image_sums": [_I] * 3 + [_P] * 2,
               "bias_relu": [_I, _I, _P, _P, _P], "relu_grad": [_I, _P, _P, _P],
               "relu_grad_rows": [_I] * 4 + [_P, _I, _I, _P, _I, _I, _P, _I, _I, _P],
               "relu": [_I, _P, _P], "relu_pool": [_I] * 6 + [_P] * 5,
               "bn_relu_pool": [_I] * 6 + [_P] * 8,
               "patches": [_I] * 14 + [_P] * 2, "col2im": [_I] * 14 + [_P] * 2,
               "bn_sums": [_I, _I] + [_P] * 3, "bn_shifted_sums": [_I, _I] + [_P] * 4,
               "bn_apply": [_I, _I] + [_P] * 6, "bn_reduce": [_I, _I] + [_P] * 6,
               "bn_input_grad": [_I, _I] + [_P] * 8, "ce_shift": [_I, _I, _P, _P],
               "ce_finish_int32": [_I, _I] + [_P] * 5, "ce_finish_int64": [_I, _I] + [_P] * 5}
_RESTYPES = {"ce_finish_int32": _I, "ce_finish_int64": _I}


class Kernels:
    """The compiled NN functions, as ``fns[name][dtype]``: by dtype name, and by numpy dtype
    (reading ``ndarray.dtype.name`` costs 2 us, a dict lookup of the dtype 0.05 us)."""

    def __init__(self, lib):
        self.fns = {}
        for name, argtypes in _SIGNATURES.items():
            self.fns[name] = {}
            for dtype in _DTYPES:
                fn = getattr(lib, f"nn_{dtype}_{name}")
                fn.argtypes = argtypes
                fn.restype = _RESTYPES.get(name)
                self.fns[name][dtype] = self.fns[name][numpy.dtype(dtype)] = fn


PAYS_FROM = 1 << 14   # elements: below, a numpy ufunc's call costs less than this module's


def pays(a):
    """Whether an element-wise kernel here beats numpy on ``a`` (large enough)."""
    return getattr(a, "size", 0) >= PAYS_FROM


def available():
    """Whether the kernels are built and loaded (numpy's backend only)."""
    from . import native
    return native.family("nn") is not None


def has_kernel(name, dtype):
    """Whether the kernel ``name`` is built and loaded for arrays of ``dtype``."""
    from . import native
    family = native.family("nn")
    return family is not None and dtype in family.fns[name]


_CHAR = ctypes.c_char


def _address(a):
    """The address of a numpy array's first element: 0.35 us through the buffer protocol
    where ``a.ctypes.data`` takes 1 us (six calls a kernel add up in a training step), which
    is the fallback for arrays the buffer protocol refuses (read-only, non-contiguous, empty)."""
    try:
        return ctypes.addressof(_CHAR.from_buffer(a))
    except (TypeError, ValueError):
        return a.ctypes.data


def _fn(name, *arrays):
    """The kernel for these numpy arrays (one float dtype, C-contiguous), or None."""
    from . import native
    dtype = arrays[0].dtype
    for a in arrays:
        if type(a) is not numpy.ndarray or a.dtype != dtype or not a.flags.c_contiguous:
            return None
    family = native.family("nn")
    return None if family is None else family.fns[name].get(dtype)


def _output(out, like, shape=None):
    shape = like.shape if shape is None else shape
    if out is None:
        return numpy.empty(shape, like.dtype)
    if (type(out) is not numpy.ndarray or out.shape != tuple(shape) or out.dtype != like.dtype
            or not out.flags.c_contiguous or not out.flags.writeable):
        return None
    return out


MIN_PART = 1 << 17    # elements per thread at least: fewer do not pay for the handoff


def _parts(rows, row_size):
    """How ``_split`` divides ``rows`` rows of ``row_size`` elements: ``[(start, stop), ...]``."""
    if rows * row_size < 2 * MIN_PART:   # one part (a 128x512 layer's activations)
        return [(0, rows)]
    return kernel_threads.split(rows, -(-MIN_PART // max(row_size, 1)))


def _split(rows, row_size, body, parts=None):
    """``body(part, start, stop)`` over ``rows`` rows of ``row_size`` elements (or over the
    given ``parts``), split over ``kernel_threads``; returns the number of parts."""
    parts = _parts(rows, row_size) if parts is None else parts
    if len(parts) == 1:
        body(0, *parts[0])
        return 1
    return kernel_threads.run_numbered(body, parts)


def _padded_out_size(size, k, s, d, before, after):
    return (size + before + after - (k - 1) * d - 1) // s + 1


def patches(x, ksize, strides, dilations, pads=((0, 0), (0, 0))):
    """Sliding windows ``(N, OH, OW, KH, KW, C)`` of ``x`` (N, H, W, C) zero-padded by
    ``pads`` (``((top, bottom), (left, right))``, read as zeros: no padded copy), or None where
    the kernel cannot run. (It beats numpy's strided copies for any channel count: 128
    one-channel 28x28 images' 5x5 windows 0.9 ms against 7.6; two channels 0.85 against 16.)"""
    if getattr(x, "ndim", 0) != 4:
        return None
    fn = _fn("patches", x)
    if fn is None:
        return None
    (kh, kw), (sh, sw), (dh, dw), ((pt, pb), (pl, pr)) = ksize, strides, dilations, pads
    n, h, w, c = x.shape
    oh, ow = _padded_out_size(h, kh, sh, dh, pt, pb), _padded_out_size(w, kw, sw, dw, pl, pr)
    out = numpy.empty((n, oh, ow, kh, kw, c), x.dtype)
    _split(n, out[0].size, lambda _, a, b: fn(b - a, h, w, c, kh, kw, sh, sw, dh, dw,
                                              pt, pb, pl, pr, _address(x[a:]),
                                              _address(out[a:])))
    return out


def col2im(cols, size, ksize, strides, dilations, out=None, pads=((0, 0), (0, 0))):
    """The adjoint of ``patches``: windows ``(N, OH, OW, KH, KW, C)`` added back into an
    ``(N, H, W, C)`` image of ``size`` (H, W) (into ``out`` when given), the entries over the
    padding ``pads`` dropped; or None where the kernel cannot run."""
    if getattr(cols, "ndim", 0) != 6:
        return None
    fn = _fn("col2im", cols)
    if fn is None:
        return None
    (kh, kw), (sh, sw), (dh, dw), (h, w) = ksize, strides, dilations, size
    (pt, pb), (pl, pr) = pads
    n, oh, ow, _, _, c = cols.shape
    if (_padded_out_size(h, kh, sh, dh, pt, pb), _padded_out_size(w, kw, sw, dw, pl, pr)) \
            != (oh, ow) or cols.shape[3:5] != (kh, kw):
        return None
    out = _output(out, cols, (n, h, w, c))
    if out is None:
        return None
    _split(n, cols[0].size, lambda _, a, b: fn(b - a, h, w, c, kh, kw, sh, sw, dh, dw,
                                               pt, pb, pl, pr, _address(cols[a:]),
                                               _address(out[a:])))
    return out


def _rows(x, *channel_arrays):
    """``x`` as contiguous (rows, C) and the kernel-ready per-channel arrays, or None."""
    if getattr(x, "ndim", 0) < 1 or type(x) is not numpy.ndarray:
        return None
    c = x.shape[-1]
    arrays = [numpy.ascontiguousarray(a, dtype=x.dtype) for a in channel_arrays]
    if any(a.shape != (c,) for a in arrays):
        return None
    return x.reshape(-1, c), arrays


def _channel_sums(fn, x2, mean=None):
    """Per-channel sums (float64) of ``x2`` (rows, C), or of ``(x2 - mean)**2``: partial sums
    per thread, added in a fixed order."""
    rows, c = x2.shape
    partial = kernel_threads.partial_sums((c,))
    center = None if mean is None else _address(mean)
    used = _split(rows, c, lambda k, a, b: fn(b - a, c, _address(x2[a:]), center,
                                              _address(partial[k])))
    return partial[:used].sum(axis=0)


def bn_moments(x):
    """Per-channel mean and biased variance of ``x`` over every axis but the last, in
    float64, or None where the kernel cannot run.

    One pass: the sums of ``d = x - shift`` and ``d**2`` with each channel's first value as
    ``shift`` (close to the data, so the squares do not cancel as raw ``x**2`` sums would);
    ``var = mean(d**2) - mean(d)**2``. Where that is not finite (infinities), the two passes
    of the mean and then the centered squares give numpy's NaN and infinite results."""
    fn = _fn("bn_shifted_sums", x)
    if fn is None or x.ndim < 1 or x.shape[-1] == 0:
        return None
    x2 = x.reshape(-1, x.shape[-1])
    rows, c = x2.shape
    if rows == 0:
        return numpy.full(c, numpy.nan), numpy.full(c, numpy.nan)    # as numpy's mean
    shift = numpy.ascontiguousarray(x2[0])
    partial = kernel_threads.partial_sums((2, c))
    used = _split(rows, c, lambda k, a, b: fn(b - a, c, _address(x2[a:]), _address(shift),
                                              _address(partial[k, 0]), _address(partial[k, 1])))
    s1, s2 = partial[:used].sum(axis=0) / rows
    with numpy.errstate(invalid="ignore", over="ignore"):
        mean, var = shift + s1, numpy.maximum(s2 - s1 * s1, 0.0)
    if numpy.isfinite(mean).all() and numpy.isfinite(var).all():
        return mean, var
    two_pass = _fn("bn_sums", x)
    with numpy.errstate(invalid="ignore"):
        mean = _channel_sums(two_pass, x2) / rows
        return mean, _channel_sums(two_pass, x2, mean) / rows


def bn_apply(x, mean, inv, gamma, beta):
    """``((x - mean) * inv) * gamma + beta`` per channel (last axis), or None."""
    fn = _fn("bn_apply", x)
    rows = None if fn is None else _rows(x, mean, inv, gamma, beta)
    if rows is None:
        return None
    x2, arrays = rows
    y = numpy.empty(x2.shape, x.dtype)
    pointers = [_address(a) for a in arrays]
    _split(x2.shape[0], x2.shape[1], lambda _, a, b: fn(
        b - a, x2.shape[1], _address(x2[a:]), *pointers, _address(y[a:])))
    return y.reshape(x.shape)


def bn_reduce(x, g, mean, inv):
    """``[sum(g), sum(g * xhat)]`` per channel (float64, shape (2, C)), or None."""
    fn = _fn("bn_reduce", x, g)
    rows = None if fn is None or g.shape != x.shape else _rows(x, mean, inv)
    if rows is None:
        return None
    x2, arrays = rows
    g2 = g.reshape(x2.shape)
    partial = kernel_threads.partial_sums((2, x2.shape[1]))
    pointers = [_address(a) for a in arrays]
    used = _split(x2.shape[0], x2.shape[1], lambda k, a, b: fn(
        b - a, x2.shape[1], _address(x2[a:]), _address(g2[a:]), *pointers,
        _address(partial[k, 0]), _address(partial[k, 1])))
    return partial[:used].sum(axis=0)


def bn_input_grad(x, g, mean, inv, m1, b0, a):
    """``((xhat * m1 + g) - b0) * a`` per channel, ``xhat = (x - mean) * inv``, or None."""
    fn = _fn("bn_input_grad", x, g)
    rows = None if fn is None or g.shape != x.shape else _rows(x, mean, inv, m1, b0, a)
    if rows is None:
        return None
    x2, arrays = rows
    g2 = g.reshape(x2.shape)
    out = numpy.empty(x2.shape, x.dtype)
    pointers = [_address(p) for p in arrays]
    _split(x2.shape[0], x2.shape[1], lambda _, lo, hi: fn(
        hi - lo, x2.shape[1], _address(x2[lo:]), _address(g2[lo:]), *pointers,
        _address(out[lo:])))
    return out.reshape(x.shape)


def max_pool(x, ksize, with_arg=True):
    """``(maxima, arg)`` of non-overlapping ``ksize`` windows over ``x`` (N, H, W, C); ``arg``
    (uint8, the maxima's shape) is None unless ``with_arg``. None where the kernel cannot run."""
    kh, kw = ksize
    if getattr(x, "ndim", 0) != 4 or kh * kw > 255:
        return None
    fn = _fn("fwd", x)
    if fn is None:
        return None
    n, h, w, c = x.shape
    shape = (n, h // kh, w // kw, c)
    out = numpy.empty(shape, x.dtype)
    arg = numpy.empty(shape, numpy.uint8) if with_arg else None
    _split(n, x[0].size, lambda _, a, b: fn(
        b - a, h, w, c, kh, kw, _address(x[a:]), _address(out[a:]),
        _address(arg[a:]) if with_arg else None))
    return out, arg


def max_pool_grad(g, arg, shape, ksize, relu_of=None, sums=None, bn=None):
    """Each window's gradient ``g`` at its first maximum ``arg`` (from ``max_pool``), zeros
    elsewhere: an array of ``shape`` (N, H, W, C). With ``relu_of`` (an array of ``shape``),
    that result then masked as ``relu_grad(result, relu_of)``, in the same pass. With ``sums``
    (float64, (N, C)), each image's channel sums of the result written into it, the bits of
    ``image_sums``. With ``bn = (x, mean, inv, out)``, ``bn_reduce(x, result, mean, inv)``
    written into ``out`` (float64, (2, C)), the same bits. None where the kernel cannot run
    (or, with ``bn``, where bn_reduce's split over threads falls inside an image)."""
    kh, kw = ksize
    n, h, w, c = shape
    if g.shape != (n, h // kh, w // kw, c) or arg.shape != g.shape:
        return None
    if type(g) is numpy.ndarray:   # a strided view (a padded convolution's gradient): copy it
        g = numpy.ascontiguousarray(g)
    fn = _fn("bwd", g) if relu_of is None else _fn("bwd", g, relu_of)
    if fn is None or not arg.flags.c_contiguous or (
            relu_of is not None and relu_of.shape != tuple(shape)):
        return None
    if sums is not None and not (sums.shape == (n, c) and sums.dtype == numpy.float64
                                 and sums.flags.c_contiguous):
        return None
    parts, bn_args, partial = None, (None,) * 3, None
    if bn is not None:
        x, mean, inv, bn_out = bn
        rows = _rows(x, mean, inv) if _fn("bwd", g, x) and x.shape == tuple(shape) else None
        pixels = h * w
        row_parts = _parts(n * pixels, c)        # bn_reduce's parts: its order of addition
        if (rows is None or bn_out.shape != (2, c) or bn_out.dtype != numpy.float64
                or any(lo % pixels or hi % pixels for lo, hi in row_parts)):
            return None
        parts = [(lo // pixels, hi // pixels) for lo, hi in row_parts]
        x3 = rows[0].reshape(n, pixels * c)
        bn_args = [_address(a) for a in rows[1]]
        partial = kernel_threads.partial_sums((2, c))
    dx = numpy.empty(shape, g.dtype)

    def part(k, a, b):
        fn(b - a, h, w, c, kh, kw, _address(g[a:]), _address(arg[a:]),
           None if relu_of is None else _address(relu_of[a:]), _address(dx[a:]),
           None if sums is None else _address(sums[a:]),
           *((None,) * 5 if bn is None else (_address(x3[a:]), *bn_args,
                                              _address(partial[k, 0]), _address(partial[k, 1]))))

    used = _split(n, h * w * c, part, parts)
    if bn is not None:
        bn_out[...] = partial[:used].sum(axis=0)
    return dx


def image_sums(x):
    """Per-channel sums of each image of ``x`` (N, ..., C), in float64: an (N, C) array, or
    None where the kernel cannot run. Each sum adds the image's pixels in memory order."""
    fn = _fn("image_sums", x) if getattr(x, "ndim", 0) >= 3 else None
    if fn is None:
        return None
    n, c = x.shape[0], x.shape[-1]
    rows = x.size // max(n * c, 1)
    sums = numpy.empty((n, c))
    if sums.size == 0:
        return sums
    x3 = x.reshape(n, rows, c)
    _split(n, rows * c, lambda _, a, b: fn(b - a, rows, c, _address(x3[a:]),
                                            _address(sums[a:])))
    return sums


def relu_pool(x, b, ksize):
    """``(a, maxima, arg)``: ``a = bias_relu(x, b)`` (``relu(x)`` for ``b`` None) and
    ``max_pool(a, ksize)``, image by image in one pass; None where the kernels cannot run."""
    kh, kw = ksize
    if getattr(x, "ndim", 0) != 4 or kh * kw > 255 or (
            b is not None and (getattr(b, "ndim", 0) != 1 or b.shape[0] != x.shape[-1])):
        return None
    fn = _fn("relu_pool", x) if b is None else _fn("relu_pool", x, b)
    if fn is None:
        return None
    return _pooled_pass(fn, x, ksize, [None if b is None else _address(b)])


def bn_relu_pool(x, mean, inv, gamma, beta, ksize):
    """``(a, maxima, arg)``: ``a = relu(bn_apply(x, mean, inv, gamma, beta))`` and
    ``max_pool(a, ksize)``, image by image in one pass (the batch norm's output is never
    written); None where the kernels cannot run."""
    kh, kw = ksize
    if getattr(x, "ndim", 0) != 4 or kh * kw > 255 or x.shape[0] == 0:
        return None
    fn = _fn("bn_relu_pool", x)
    rows = None if fn is None else _rows(x, mean, inv, gamma, beta)
    if rows is None:
        return None
    return _pooled_pass(fn, x, ksize, [_address(p) for p in rows[1]])


def _pooled_pass(fn, x, ksize, per_channel):
    """``(a, maxima, arg)`` from a kernel that writes an activation of ``x``'s shape and its
    max pooling image by image: ``fn(n, h, w, c, kh, kw, x, *per_channel, a, out, arg)``."""
    (kh, kw), (n, h, w, c) = ksize, x.shape
    shape = (n, h // kh, w // kw, c)
    a, out = numpy.empty(x.shape, x.dtype), numpy.empty(shape, x.dtype)
    arg = numpy.empty(shape, numpy.uint8)
    _split(n, h * w * c, lambda _, lo, hi: fn(
        hi - lo, h, w, c, kh, kw, _address(x[lo:]), *per_channel, _address(a[lo:]),
        _address(out[lo:]), _address(arg[lo:])))
    return a, out, arg


def bias_relu(x, b, out=None):
    """``maximum(x + b, 0)`` for ``b`` of shape ``(C,)`` and ``x`` of shape ``(..., C)``, or
    None where the kernel cannot run."""
    if getattr(b, "ndim", 0) != 1 or getattr(x, "ndim", 0) < 1 or x.shape[-1] != b.shape[0]:
        return None
    fn = _fn("bias_relu", x, b)
    out = _output(out, x) if fn is not None else None
    if out is None or out is b:
        return None
    c = b.size
    if c == 0:
        return out
    if x.size < 2 * MIN_PART:   # one part: no views, no closure (a traced step's hot path)
        fn(x.size // c, c, _address(x), _address(b), _address(out))
        return out
    x2, o2 = x.reshape(-1, c), out.reshape(-1, c)
    _split(x2.shape[0], c, lambda _, lo, hi: fn(hi - lo, c, _address(x2[lo:]),
                                                _address(b), _address(o2[lo:])))
    return out


def relu(x, out=None):
    """``maximum(x, 0)``, NaN propagating, or None where the kernel cannot run."""
    fn = _fn("relu", x)
    out = _output(out, x) if fn is not None else None
    if out is None:
        return None
    x1, o1 = x.reshape(-1), out.reshape(-1)
    _split(x1.size, 1, lambda _, lo, hi: fn(hi - lo, _address(x1[lo:]), _address(o1[lo:])))
    return out


def relu_grad(g, y, out=None):
    """``g * (y > 0)`` for arrays of one shape, or for a stack ``g`` of cotangents over one
    ``y`` (shape ``(N,) + y.shape``: a vectorised jacobian's); None where the kernel cannot
    run."""
    shape = getattr(g, "shape", None)
    if shape != getattr(y, "shape", ()):
        if shape is not None and shape[1:] == y.shape:
            return relu_grad_rows(g, y, out)
        return None
    if type(g) is numpy.ndarray and not g.flags.c_contiguous:
        return relu_grad_rows(g, y, out)
    fn = _fn("relu_grad", g, y)
    out = _output(out, g) if fn is not None else None
    if out is None:
        return None
    if g.size < 2 * MIN_PART:   # one part: no views, no closure (a traced step's hot path)
        fn(g.size, _address(g), _address(y), _address(out))
        return out
    g1, y1, o1 = g.reshape(-1), y.reshape(-1), out.reshape(-1)
    _split(g1.size, 1, lambda _, lo, hi: fn(hi - lo, _address(g1[lo:]), _address(y1[lo:]),
                                            _address(o1[lo:])))
    return out


def _runs(a):
    """``(rows, run, (image stride, row stride))`` of an (N, ...) array whose images are
    ``rows`` contiguous runs of ``run`` elements at even strides (in elements), or None."""
    size = a.itemsize
    if a.ndim < 2 or any(s % size for s in a.strides):
        return None
    run, d = 1, a.ndim - 1
    while d >= 1 and (a.shape[d] == 1 or a.strides[d] == run * size):
        run *= a.shape[d]
        d -= 1
    rows, row_stride = 1, 0
    for axis in range(d, 0, -1):   # the axes left must step evenly from one run to the next
        if a.shape[axis] == 1:
            continue
        if rows == 1:
            row_stride = a.strides[axis]
        elif a.strides[axis] != row_stride * rows:
            return None
        rows *= a.shape[axis]
    return rows, run, (a.strides[0] // size, row_stride // size)


def relu_grad_rows(g, y, out=None, sums=None):
    """``relu_grad(g, y)`` for ``g`` (N, ..., C) read in contiguous runs (a slice of a padded
    image's gradient: SAME convolutions), ``y`` C-contiguous, of ``g``'s shape or of one image's
    (a stack of cotangents over one ``y``, as a vectorised jacobian's, also stored example-major);
    into ``out`` (new, in ``g``'s memory order; ``g`` itself; or one read in the same runs). With
    ``sums`` ((N, C) float64, ``y`` of ``g``'s shape), also each image's channel sums of the
    result, as ``image_sums`` adds them. None where the kernel cannot run."""
    if (type(g) is not numpy.ndarray or type(y) is not numpy.ndarray
            or y.shape not in (g.shape, g.shape[1:]) or g.dtype != y.dtype
            or not y.flags.c_contiguous or g.ndim < 2 or g.size == 0):
        return None
    from . import native
    family = native.family("nn")
    fn = None if family is None else family.fns["relu_grad_rows"].get(g.dtype)
    if fn is None:
        return None
    stacked = y.shape != g.shape
    if out is None:
        out = numpy.empty_like(g)
    elif out is not g and (type(out) is not numpy.ndarray or out.shape != g.shape
                           or out.dtype != g.dtype or numpy.may_share_memory(out, g)
                           or numpy.may_share_memory(out, y)):
        return None
    if not out.flags.writeable:
        return None
    result, in_place = out, out is g
    if stacked and sums is None and g.ndim >= 3 and g.swapaxes(0, 1).flags.c_contiguous:
        # Example-major: walk memory in order, each example's N runs against its one run of y.
        run = y.size // y.shape[0]
        layout = (y.shape[0], g.shape[0], run, (g.shape[0] * run, run), (run, 0))
        g, out = g.swapaxes(0, 1), out.swapaxes(0, 1)
    else:
        runs = _runs(g)
        if runs is None or runs[1] % g.shape[-1] or (stacked and sums is not None):
            return None
        rows, run, strides = runs
        layout = (g.shape[0], rows, run, strides, (0, run) if stacked else (rows * run, run))
    n, rows, run, (gn, gr), (yn, yr) = layout
    if in_place:
        on, o_r = gn, gr
    elif out.flags.c_contiguous:
        on, o_r = rows * run, run
    else:
        out_runs = _runs(out)
        if out_runs is None or out_runs[:2] != (rows, run):
            return None
        on, o_r = out_runs[2]
    c, size = g.shape[-1], g.itemsize
    if sums is not None and (sums.shape != (n, c) or sums.dtype != numpy.float64
                             or not sums.flags.c_contiguous):
        return None
    g0, y0, out0 = g.ctypes.data, _address(y), out.ctypes.data
    s0 = None if sums is None else _address(sums)

    def part(_, lo, hi):
        fn(hi - lo, rows, run, c, g0 + lo * gn * size, gn, gr, y0 + lo * yn * size, yn, yr,
           out0 + lo * on * size, on, o_r, None if s0 is None else s0 + lo * c * 8)

    _split(n, rows * run, part)
    return result


_CE_FINISH = {numpy.dtype("int32"): "ce_finish_int32", numpy.dtype("int64"): "ce_finish_int64"}


def sparse_cross_entropy(labels, logits):
    """``(losses, softmax(logits) - onehot(labels))`` for int32/int64 ``labels`` of shape
    ``logits.shape[:-1]``, or None where the kernels cannot run them (or a label is out of
    range: the caller's numpy path then raises). Same bits as the numpy path: the max, the
    division and the picking are exact or single roundings, the exp and the sums are numpy's."""
    from . import native
    if (type(logits) is not numpy.ndarray or type(labels) is not numpy.ndarray
            or not logits.flags.c_contiguous or not labels.flags.c_contiguous):
        return None
    family = native.family("nn")
    name = _CE_FINISH.get(labels.dtype)
    if family is None or name is None or logits.dtype not in family.fns["ce_shift"]:
        return None
    classes, rows = logits.shape[-1], labels.size
    if classes == 0 or rows == 0 or rows * classes != logits.size:
        return None
    shifted = numpy.empty_like(logits)
    family.fns["ce_shift"][logits.dtype](rows, classes, _address(logits), _address(shifted))
    e = numpy.exp(shifted)
    total = e.sum(axis=-1)
    picked = numpy.empty_like(total)
    if family.fns[name][logits.dtype](rows, classes, _address(labels), _address(shifted),
                                      _address(e), _address(total), _address(picked)):
        return None
    loss = numpy.log(total, out=total)
    loss -= picked
    return loss, e
