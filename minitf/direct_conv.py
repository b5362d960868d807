"""Direct 3x3 convolution of one- or three-channel images: a model's first layer on grayscale
or RGB images.

With one input channel, im2col makes a ``(pixels, 9)`` matrix and the convolution a product
with only 9 terms per output (27 with three), or, for the filter gradient, a
``(9 * C, pixels) @ (pixels, O)`` product whose small result BLAS cannot split well: both run
far below the core's speed and the patches cost a pass of their own. Here each output pixel
reads its 9 * C input values once:

- forward: per pixel, 9 * C multiply-adds into the vector of its output channels;
- filter gradient: a (9 * C) x O accumulator runs over one image's pixels; each image's sums
  are added in float64.

Measured (one thread, 128 images of 28x28 -> 32 channels): forward 0.48 ms against 1.33 ms
(patches and product), filter gradient 0.48 ms against 1.73 ms. Two threads on a Xeon, 64 RGB
images of 34x34 (a SAME layer on 32x32) -> 32 channels: forward 1.57 ms against 5.25, filter
gradient 1.41 against 7.87; -> 64 channels: 2.85 against 5.89 and 2.29 against 9.65. The
multiply-adds are fused (``fma``), so values differ from the product's in the last bits, as
two BLAS builds do. Images split over ``minitf.kernel_threads``. The kernels take VALID,
stride 1, no dilation, 1 or 3 input channels and 32 or 64 output channels (each count compiled
as a constant); ``applies`` says so, and other shapes take ``minitf.ops.conv_ops``'s general
path.
"""
import ctypes

import numpy

from . import kernel_threads

SOURCE = r"""
/* v = the 3x3 window at column xo of rows r0, r1, r2, in (row, column, channel) order. */
#define DIRECT3X3_WINDOW(v, C)                                                           \
    for (int t = 0; t < 3 * (C); t++) {                                                  \
        v[t] = r0[xo * (C) + t];                                                         \
        v[3 * (C) + t] = r1[xo * (C) + t];                                               \
        v[6 * (C) + t] = r2[xo * (C) + t];                                               \
    }
/* x (n, h, w, C); f (9 * C, O) the 3x3 taps in (row, column, channel) order; out
   (n, h - 2, w - 2, O). C and O are constants of each instance: with a runtime channel count
   the compiler kept the filter gradient's accumulators in memory (ten times slower). */
#define DIRECT3X3(NAME, T, FMA, C, O)                                                    \
void NAME##_forward(int64_t n, int64_t h, int64_t w, const T *restrict x,                \
                    const T *restrict f, T *restrict out) {                              \
    int64_t oh = h - 2, ow = w - 2;                                                      \
    for (int64_t b = 0; b < n; b++)                                                      \
    for (int64_t y = 0; y < oh; y++) {                                                   \
        const T *r0 = x + (b * h + y) * w * C, *r1 = r0 + w * C, *r2 = r1 + w * C;       \
        T *restrict dst = out + (b * oh + y) * ow * O;                                   \
        for (int64_t xo = 0; xo < ow; xo++, dst += O) {                                  \
            T v[9 * C];                                                                  \
            DIRECT3X3_WINDOW(v, C)                                                       \
            for (int oc = 0; oc < O; oc++) {                                             \
                T s = v[0] * f[oc];                                                      \
                for (int k = 1; k < 9 * C; k++) s = FMA(v[k], f[k * O + oc], s);         \
                dst[oc] = s;                                                             \
            }                                                                            \
        }                                                                                \
    }                                                                                    \
}                                                                                        \
/* sums (9 * C, O) in double: the filter gradient of n images */                         \
void NAME##_filter_grad(int64_t n, int64_t h, int64_t w, const T *restrict x,            \
                        const T *restrict g, double *restrict sums) {                    \
    int64_t oh = h - 2, ow = w - 2;                                                      \
    for (int64_t e = 0; e < 9 * C * O; e++) sums[e] = 0;                                 \
    for (int64_t b = 0; b < n; b++) {                                                    \
        T acc[9 * C][O];                                                                 \
        memset(acc, 0, sizeof acc);                                                      \
        for (int64_t y = 0; y < oh; y++) {                                               \
            const T *r0 = x + (b * h + y) * w * C, *r1 = r0 + w * C, *r2 = r1 + w * C;   \
            const T *restrict gp = g + (b * oh + y) * ow * O;                            \
            for (int64_t xo = 0; xo < ow; xo++, gp += O) {                               \
                T v[9 * C];                                                              \
                DIRECT3X3_WINDOW(v, C)                                                   \
                for (int k = 0; k < 9 * C; k++)                                          \
                    for (int oc = 0; oc < O; oc++) acc[k][oc] = FMA(v[k], gp[oc], acc[k][oc]); \
            }                                                                            \
        }                                                                                \
        for (int k = 0; k < 9 * C; k++)                                                  \
            for (int oc = 0; oc < O; oc++) sums[k * O + oc] += acc[k][oc];               \
    }                                                                                    \
}
DIRECT3X3(direct3x3_float32_1_32, float, fmaf, 1, 32)
DIRECT3X3(direct3x3_float32_1_64, float, fmaf, 1, 64)
DIRECT3X3(direct3x3_float64_1_32, double, fma, 1, 32)
DIRECT3X3(direct3x3_float64_1_64, double, fma, 1, 64)
DIRECT3X3(direct3x3_float32_3_32, float, fmaf, 3, 32)
DIRECT3X3(direct3x3_float32_3_64, float, fmaf, 3, 64)
DIRECT3X3(direct3x3_float64_3_32, double, fma, 3, 32)
DIRECT3X3(direct3x3_float64_3_64, double, fma, 3, 64)
"""

_DTYPES = ("float32", "float64")
INPUT_CHANNELS = (1, 3)   # grayscale and RGB images
CHANNELS = (32, 64)   # the output channel counts compiled (16 ran slower than im2col)
MIN_PART = 8          # images per thread at least


class Kernels:
    """The compiled kernels, as ``fns[name][(dtype name, input channels, output channels)]``."""

    def __init__(self, lib):
        self.fns = {}
        for name in ("forward", "filter_grad"):
            self.fns[name] = {}
            for dtype in _DTYPES:
                for c in INPUT_CHANNELS:
                    for o in CHANNELS:
                        fn = getattr(lib, f"direct3x3_{dtype}_{c}_{o}_{name}")
                        fn.argtypes = [ctypes.c_int64] * 3 + [ctypes.c_void_p] * 3
                        fn.restype = None
                        self.fns[name][dtype, c, o] = fn


def _kernels():
    from . import native
    return native.family("direct_conv")


def applies(x_shape, w_shape, strides, dilations, dtype):
    """Whether this convolution runs here: a float32/float64 numpy batch of one- or
    three-channel images, 3x3 filters, stride 1, no dilation, 32 or 64 output channels."""
    return (len(x_shape) == 4 and x_shape[3] in INPUT_CHANNELS and len(w_shape) == 4
            and tuple(w_shape[:3]) == (3, 3, x_shape[3]) and w_shape[3] in CHANNELS
            and tuple(strides) == (1, 1)
            and tuple(dilations) == (1, 1) and x_shape[1] >= 3 and x_shape[2] >= 3
            and numpy.dtype(dtype).name in _DTYPES and _kernels() is not None)


def conv(x, w):
    """Valid 3x3 cross-correlation of ``x`` (N, H, W, C) with ``w`` (3, 3, C, O)."""
    x = numpy.ascontiguousarray(x)
    n, h, wd, c = x.shape
    taps = numpy.ascontiguousarray(w, dtype=x.dtype).reshape(9 * c, -1)
    o = taps.shape[1]
    fn = _kernels().fns["forward"][x.dtype.name, c, o]
    out = numpy.empty((n, h - 2, wd - 2, o), x.dtype)
    kernel_threads.run(lambda a, b: fn(b - a, h, wd, x[a:].ctypes.data, taps.ctypes.data,
                                       out[a:].ctypes.data),
                       kernel_threads.split(n, MIN_PART))
    return out


def filter_grad(x, g):
    """The filter gradient ``(3, 3, C, O)`` of ``conv`` for input ``x`` (N, H, W, C) and
    output gradient ``g`` (N, H - 2, W - 2, O)."""
    x = numpy.ascontiguousarray(x)
    g = numpy.ascontiguousarray(g, dtype=x.dtype)
    n, h, wd, c = x.shape
    o = g.shape[3]
    fn = _kernels().fns["filter_grad"][x.dtype.name, c, o]
    partial = kernel_threads.partial_sums((9 * c * o,))
    used = kernel_threads.run_numbered(
        lambda k, a, b: fn(b - a, h, wd, x[a:].ctypes.data, g[a:].ctypes.data,
                           partial[k].ctypes.data), kernel_threads.split(n, MIN_PART))
    return partial[:used].sum(axis=0).astype(x.dtype).reshape(3, 3, c, o)


def matches_direct(kernels):
    """Every kernel against a float64 numpy convolution (a start-up check: a miscompiled
    kernel must never train a model)."""
    rng = numpy.random.default_rng(0)
    for c in INPUT_CHANNELS:
        x = rng.standard_normal((2, 6, 5, c))
        windows = numpy.stack([x[:, i:i + 4, j:j + 3] for i in range(3) for j in range(3)],
                              3).reshape(2, 4, 3, 9 * c)
        for o in CHANNELS:
            w = rng.standard_normal((9 * c, o))
            g = rng.standard_normal((2, 4, 3, o))
            want, want_dw = windows @ w, numpy.einsum("nhwk,nhwo->ko", windows, g)
            for dtype, tol in (("float64", 1e-12), ("float32", 1e-5)):
                xs, ws, gs = (a.astype(dtype) for a in (x, w, g))
                y = numpy.empty(want.shape, dtype)
                kernels.fns["forward"][dtype, c, o](2, 6, 5, xs.ctypes.data, ws.ctypes.data,
                                                    y.ctypes.data)
                sums = numpy.empty(9 * c * o)
                kernels.fns["filter_grad"][dtype, c, o](2, 6, 5, xs.ctypes.data, gs.ctypes.data,
                                                        sums.ctypes.data)
                if not (numpy.allclose(y, want, rtol=tol, atol=tol)
                        and numpy.allclose(sums.reshape(9 * c, o), want_dw, rtol=tol, atol=tol)):
                    return False
    return True
