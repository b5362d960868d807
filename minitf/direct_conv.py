"""Direct 3x3 convolution of one-channel images: a grayscale model's first layer.

With one input channel, im2col makes a ``(pixels, 9)`` matrix and the convolution a product
with only 9 terms per output, or, for the filter gradient, a ``(9, pixels) @ (pixels, O)``
product whose 9 x O result BLAS cannot split well: both run far below the core's speed and
the patches cost a pass of their own. Here each output pixel reads its 9 input values once:

- forward: per pixel, 9 multiply-adds into the vector of its output channels;
- filter gradient: a 9 x O accumulator (registers) runs over one image's pixels; each image's
  sums are added in float64.

Measured (128 images of 28x28 -> 32 channels, one thread): forward 0.48 ms against 1.33 ms
(patches and product), filter gradient 0.48 ms against 1.73 ms. The multiply-adds are fused
(``fma``), so values differ from the product's in the last bits, as two BLAS builds do. Images
split over ``minitf.kernel_threads``. The kernels take VALID, stride 1, no dilation, one
input channel and 32 or 64 output channels (each count compiled as a constant);
``applies`` says so, and other shapes take ``minitf.ops.conv_ops``'s general path.
"""
import ctypes

import numpy

from . import kernel_threads

SOURCE = r"""
/* x (n, h, w) one channel; f (9, O) the 3x3 taps row-major; out (n, h - 2, w - 2, O). O is a
   constant of each instance: with a runtime channel count the compiler kept the filter
   gradient's accumulators in memory (ten times slower). */
#define DIRECT3X3(NAME, T, FMA, O)                                                       \
void NAME##_forward(int64_t n, int64_t h, int64_t w, const T *restrict x,                \
                    const T *restrict f, T *restrict out) {                              \
    int64_t oh = h - 2, ow = w - 2;                                                      \
    for (int64_t b = 0; b < n; b++)                                                      \
    for (int64_t y = 0; y < oh; y++) {                                                   \
        const T *r0 = x + (b * h + y) * w, *r1 = r0 + w, *r2 = r1 + w;                   \
        T *restrict dst = out + (b * oh + y) * ow * O;                                   \
        for (int64_t xo = 0; xo < ow; xo++, dst += O) {                                  \
            T v[9] = {r0[xo], r0[xo + 1], r0[xo + 2], r1[xo], r1[xo + 1], r1[xo + 2],    \
                      r2[xo], r2[xo + 1], r2[xo + 2]};                                   \
            for (int oc = 0; oc < O; oc++) {                                             \
                T s = v[0] * f[oc];                                                      \
                for (int k = 1; k < 9; k++) s = FMA(v[k], f[k * O + oc], s);             \
                dst[oc] = s;                                                             \
            }                                                                            \
        }                                                                                \
    }                                                                                    \
}                                                                                        \
/* sums (9, O) in double: the filter gradient of n images */                             \
void NAME##_filter_grad(int64_t n, int64_t h, int64_t w, const T *restrict x,            \
                        const T *restrict g, double *restrict sums) {                    \
    int64_t oh = h - 2, ow = w - 2;                                                      \
    for (int64_t e = 0; e < 9 * O; e++) sums[e] = 0;                                     \
    for (int64_t b = 0; b < n; b++) {                                                    \
        T acc[9][O];                                                                     \
        memset(acc, 0, sizeof acc);                                                      \
        for (int64_t y = 0; y < oh; y++) {                                               \
            const T *r0 = x + (b * h + y) * w, *r1 = r0 + w, *r2 = r1 + w;               \
            const T *restrict gp = g + (b * oh + y) * ow * O;                            \
            for (int64_t xo = 0; xo < ow; xo++, gp += O) {                               \
                T v[9] = {r0[xo], r0[xo + 1], r0[xo + 2], r1[xo], r1[xo + 1],            \
                          r1[xo + 2], r2[xo], r2[xo + 1], r2[xo + 2]};                   \
                for (int k = 0; k < 9; k++)                                              \
                    for (int oc = 0; oc < O; oc++) acc[k][oc] = FMA(v[k], gp[oc], acc[k][oc]); \
            }                                                                            \
        }                                                                                \
        for (int k = 0; k < 9; k++)                                                      \
            for (int oc = 0; oc < O; oc++) sums[k * O + oc] += acc[k][oc];               \
    }                                                                                    \
}
DIRECT3X3(direct3x3_float32_32, float, fmaf, 32)
DIRECT3X3(direct3x3_float32_64, float, fmaf, 64)
DIRECT3X3(direct3x3_float64_32, double, fma, 32)
DIRECT3X3(direct3x3_float64_64, double, fma, 64)
"""

_DTYPES = ("float32", "float64")
CHANNELS = (32, 64)   # the output channel counts compiled (16 ran slower than im2col)
MIN_PART = 8          # images per thread at least


class Kernels:
    """The compiled kernels, as ``fns[name][(dtype name, output channels)]``."""

    def __init__(self, lib):
        self.fns = {}
        for name in ("forward", "filter_grad"):
            self.fns[name] = {}
            for dtype in _DTYPES:
                for o in CHANNELS:
                    fn = getattr(lib, f"direct3x3_{dtype}_{o}_{name}")
                    fn.argtypes = [ctypes.c_int64] * 3 + [ctypes.c_void_p] * 3
                    fn.restype = None
                    self.fns[name][dtype, o] = fn


def _kernels():
    from . import native
    return native.family("direct_conv")


def applies(x_shape, w_shape, strides, dilations, dtype):
    """Whether this convolution runs here: a float32/float64 numpy batch of one-channel
    images, 3x3 filters, stride 1, no dilation, 32 or 64 output channels."""
    return (len(x_shape) == 4 and x_shape[3] == 1 and tuple(w_shape[:3]) == (3, 3, 1)
            and w_shape[3] in CHANNELS and tuple(strides) == (1, 1)
            and tuple(dilations) == (1, 1) and x_shape[1] >= 3 and x_shape[2] >= 3
            and numpy.dtype(dtype).name in _DTYPES and _kernels() is not None)


def conv(x, w):
    """Valid 3x3 cross-correlation of ``x`` (N, H, W, 1) with ``w`` (3, 3, 1, O)."""
    x = numpy.ascontiguousarray(x)
    taps = numpy.ascontiguousarray(w, dtype=x.dtype).reshape(9, -1)
    n, h, wd, _ = x.shape
    o = taps.shape[1]
    fn = _kernels().fns["forward"][x.dtype.name, o]
    out = numpy.empty((n, h - 2, wd - 2, o), x.dtype)
    kernel_threads.run(lambda a, b: fn(b - a, h, wd, x[a:].ctypes.data, taps.ctypes.data,
                                       out[a:].ctypes.data),
                       kernel_threads.split(n, MIN_PART))
    return out


def filter_grad(x, g):
    """The filter gradient ``(3, 3, 1, O)`` of ``conv`` for input ``x`` and output gradient
    ``g`` (N, H - 2, W - 2, O)."""
    x = numpy.ascontiguousarray(x)
    g = numpy.ascontiguousarray(g, dtype=x.dtype)
    n, h, wd, _ = x.shape
    o = g.shape[3]
    fn = _kernels().fns["filter_grad"][x.dtype.name, o]
    partial = kernel_threads.partial_sums((9 * o,))
    used = kernel_threads.run_numbered(
        lambda k, a, b: fn(b - a, h, wd, x[a:].ctypes.data, g[a:].ctypes.data,
                           partial[k].ctypes.data), kernel_threads.split(n, MIN_PART))
    return partial[:used].sum(axis=0).astype(x.dtype).reshape(3, 3, 1, o)


def matches_direct(kernels):
    """Every kernel against a float64 numpy convolution (a start-up check: a miscompiled
    kernel must never train a model)."""
    rng = numpy.random.default_rng(0)
    x = rng.standard_normal((2, 6, 5, 1))
    windows = numpy.stack([x[:, i:i + 4, j:j + 3, 0] for i in range(3) for j in range(3)], -1)
    for o in CHANNELS:
        w = rng.standard_normal((9, o))
        g = rng.standard_normal((2, 4, 3, o))
        want, want_dw = windows @ w, numpy.einsum("nhwk,nhwo->ko", windows, g)
        for dtype, tol in (("float64", 1e-12), ("float32", 1e-5)):
            xs, ws, gs = (a.astype(dtype) for a in (x, w, g))
            y = numpy.empty(want.shape, dtype)
            kernels.fns["forward"][dtype, o](2, 6, 5, xs.ctypes.data, ws.ctypes.data,
                                             y.ctypes.data)
            sums = numpy.empty(9 * o)
            kernels.fns["filter_grad"][dtype, o](2, 6, 5, xs.ctypes.data, gs.ctypes.data,
                                                 sums.ctypes.data)
            if not (numpy.allclose(y, want, rtol=tol, atol=tol)
                    and numpy.allclose(sums.reshape(9, o), want_dw, rtol=tol, atol=tol)):
                return False
    return True
