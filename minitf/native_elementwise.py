"""Compiled element-wise kernels where numpy's path is many passes or a slow loop.

- GELU and its gradient (float32; both forms). ``minitf.ops.math_ops`` evaluates them as a
  dozen to twenty numpy passes over the activations (erfc's Chebyshev fit, or the tanh form).
  Here one pass computes the argument of the exponential (or of tanh), numpy's own ``exp`` /
  ``tanh`` runs on it in place, and a second pass finishes.
- ``sigmoid`` (float32, float64): numpy's exp of ``-|x|``, then one pass for the rest.
- ``select``: ``numpy.where`` for float arrays, whose loop takes a branch per element (20x
  slower with a mask that varies, as a relu-like activation's).

Each does the float operations of the numpy path in its order, with its constants
(``minitf.normal_fit``), so the results are its bits; the transcendental functions stay
numpy's so that no C library rounds them differently. A start-up check compares every kernel
with the numpy path bit for bit on awkward values; where they differ the family is off and
the numpy paths run. Measured on a 128x512 float32 layer (one Xeon thread): GELU's exact form
forward 91 us against 312, its gradient 137 against 408; sigmoid 67 against 141; where() with
a random mask 20 against 275.

Other dtypes, strided arrays and gradients of another shape than the input (a vectorised
jacobian's stack of cotangents) keep the numpy path. Large arrays split over
``minitf.kernel_threads``, each part running its passes while it is in cache.
"""
import ctypes

import numpy

from . import native_nn, normal_fit
from .native_nn import _address, _split

_I, _P = ctypes.c_int64, ctypes.c_void_p


def _c(value):
    """A Python float as C's float of it: the double literal rounded once, as numpy rounds a
    Python scalar to an array's float32."""
    return f"((float){value!r})"


_FIT_STEPS = "".join(f"    acc = (acc + {_c(c)}) * t;\n" for c in normal_fit.ERFC_FIT[1:])

SOURCE = r"""
/* Phi's fit at x: the exponent of erfc(|x| / sqrt 2)'s fit, and Phi(x) from its exp.  */
static inline float gelu_cdf_arg(float x) {
    float z = fabsf(x) * """ + _c(normal_fit.SQRT_HALF) + r""";
    float t = 1.0f / (z * 0.5f + 1.0f);
    float acc = t * """ + _c(normal_fit.ERFC_FIT[0]) + r""";
""" + _FIT_STEPS + r"""    return acc + (-(z * z) - """ + _c(normal_fit.ERFC_FIT_SHIFT) + r""");
}
static inline float gelu_cdf(float x, float e) {
    float z = fabsf(x) * """ + _c(normal_fit.SQRT_HALF) + r""";
    float t = 1.0f / (z * 0.5f + 1.0f);
    float acc = e * t * 0.5f;                 /* erfc(|x| / sqrt 2) / 2 = Phi(-|x|) */
    return copysignf(0.5f - acc, x) + 0.5f;
}
static inline float gelu_tanh_u(float x) {
    return (x * x * """ + _c(normal_fit.GELU_CUBIC) + r""" + 1.0f) * x * """ + _c(
    normal_fit.SQRT_2_OVER_PI) + r""";
}
/* exact form: arg = the exponent; numpy's exp; y = Phi(x) x, written over e */
void gelu_exact_arg(int64_t n, const float *restrict x, float *restrict arg) {
    for (int64_t i = 0; i < n; i++) arg[i] = gelu_cdf_arg(x[i]);
}
void gelu_exact_finish(int64_t n, const float *restrict x, float *restrict e) {
    for (int64_t i = 0; i < n; i++) e[i] = gelu_cdf(x[i], e[i]) * x[i];
}
/* its gradient: the two exponents (Phi's, phi's); numpy's exp of both;
   out = (phi(x) x + Phi(x)) g (out may be ec or g) */
void gelu_exact_grad_arg(int64_t n, const float *restrict x, float *restrict ec,
                         float *restrict ep) {
    for (int64_t i = 0; i < n; i++) {
        ec[i] = gelu_cdf_arg(x[i]);
        ep[i] = x[i] * x[i] * -0.5f;
    }
}
void gelu_exact_grad_finish(int64_t n, const float *x, const float *ec, const float *ep,
                            const float *g, float *out) {
    for (int64_t i = 0; i < n; i++) {
        float d = ep[i] * """ + _c(normal_fit.INV_SQRT_2PI) + r""" * x[i];
        out[i] = (d + gelu_cdf(x[i], ec[i])) * g[i];
    }
}
/* tanh form: arg = u = c (x + a x^3); numpy's tanh; y = (t + 1) / 2 x, written over t */
void gelu_tanh_arg(int64_t n, const float *restrict x, float *restrict arg) {
    for (int64_t i = 0; i < n; i++) arg[i] = gelu_tanh_u(x[i]);
}
void gelu_tanh_finish(int64_t n, const float *restrict x, float *restrict t) {
    for (int64_t i = 0; i < n; i++) t[i] = (t[i] + 1.0f) * 0.5f * x[i];
}
/* its gradient from t = tanh(u): ((1 - t^2) u' x + t + 1) / 2 g (out may be t or g) */
void gelu_tanh_grad_finish(int64_t n, const float *x, const float *t, const float *g,
                           float *out) {
    for (int64_t i = 0; i < n; i++) {
        float du = x[i] * x[i] * """ + _c(normal_fit.GELU_CUBIC_SLOPE) + r""" + """ + _c(
    normal_fit.SQRT_2_OVER_PI) + r""";
        float d = (1.0f - t[i] * t[i]) * du * x[i];
        out[i] = (d + t[i] + 1.0f) * 0.5f * g[i];
    }
}
/* where(c, a, b) with a and b each a full array (stride 1) or one value (stride 0): both
   values loaded, then one chosen, so that the loop becomes a vector blend */
#define SELECT(NAME, T)                                                                  \
void NAME(int64_t n, const uint8_t *restrict c, const T *restrict a, int64_t sa,         \
          const T *restrict b, int64_t sb, T *restrict out) {                            \
    if (sa && sb)                                                                        \
        for (int64_t i = 0; i < n; i++) { T x = a[i], y = b[i]; out[i] = c[i] ? x : y; } \
    else if (sa) {                                                                       \
        T y = b[0];                                                                      \
        for (int64_t i = 0; i < n; i++) { T x = a[i]; out[i] = c[i] ? x : y; }           \
    } else if (sb) {                                                                     \
        T x = a[0];                                                                      \
        for (int64_t i = 0; i < n; i++) { T y = b[i]; out[i] = c[i] ? x : y; }           \
    } else {                                                                             \
        T x = a[0], y = b[0];                                                            \
        for (int64_t i = 0; i < n; i++) out[i] = c[i] ? x : y;                           \
    }                                                                                    \
}
SELECT(select_float32, float)
SELECT(select_float64, double)
/* sigmoid from e = exp(-|x|): s = 1 / (1 + e) is sigmoid(|x|), e s sigmoid(x) for x < 0,
   chosen arithmetically as s (e m + (1 - m)), m = 1 where x < 0 (math_ops._sigmoid) */
#define SIGMOID_FINISH(NAME, T)                                                          \
void NAME(int64_t n, const T *restrict x, const T *restrict e, T *restrict out) {        \
    for (int64_t i = 0; i < n; i++) {                                                    \
        T s = (T)1 / (e[i] + (T)1), m = x[i] < 0 ? (T)1 : (T)0;                          \
        out[i] = s * (e[i] * m + ((T)1 - m));                                            \
    }                                                                                    \
}
SIGMOID_FINISH(sigmoid_finish_float32, float)
SIGMOID_FINISH(sigmoid_finish_float64, double)
"""

_SIGNATURES = {"gelu_exact_arg": [_I, _P, _P], "gelu_exact_finish": [_I, _P, _P],
               "gelu_exact_grad_arg": [_I, _P, _P, _P],
               "gelu_exact_grad_finish": [_I] + [_P] * 5,
               "gelu_tanh_arg": [_I, _P, _P], "gelu_tanh_finish": [_I, _P, _P],
               "gelu_tanh_grad_finish": [_I] + [_P] * 4,
               "select_float32": [_I, _P, _P, _I, _P, _I, _P],
               "select_float64": [_I, _P, _P, _I, _P, _I, _P],
               "sigmoid_finish_float32": [_I, _P, _P, _P],
               "sigmoid_finish_float64": [_I, _P, _P, _P]}
_SELECT = {numpy.dtype(numpy.float32): "select_float32",
           numpy.dtype(numpy.float64): "select_float64"}
_SIGMOID = {numpy.dtype(numpy.float32): "sigmoid_finish_float32",
            numpy.dtype(numpy.float64): "sigmoid_finish_float64"}


class Kernels:
    """The compiled functions by name."""

    def __init__(self, lib):
        self.fns = {}
        for name, argtypes in _SIGNATURES.items():
            fn = getattr(lib, name)
            fn.argtypes = argtypes
            fn.restype = None
            self.fns[name] = fn


def _fns(*arrays):
    """GELU's kernels for these arrays: float32 numpy arrays, C-ordered, of one shape, large
    enough to beat numpy's passes (``native_nn.pays``); None where they do not run."""
    x = arrays[0]
    if not native_nn.pays(x):
        return None
    for a in arrays:
        if (type(a) is not numpy.ndarray or a.dtype != numpy.float32
                or not a.flags.c_contiguous or a.shape != x.shape):
            return None
    family = _family()
    return None if family is None else family.fns


def _family():
    """The compiled family (checked at start-up), or None; imported here, not at the top:
    ``minitf.native`` imports this module to build its source."""
    from . import native
    return native.family("elementwise")


def gelu(x, approximate=False, fns=None):
    """GELU of a float32 array as ``math_ops``' numpy path computes it (its bits), or None
    where the kernels do not run. ``fns``: the kernels to use (the start-up check's)."""
    fns = fns or _fns(x)
    if fns is None:
        return None
    x1 = x.reshape(-1)
    y = numpy.empty_like(x1)
    if approximate:
        arg, finish, transcendental = fns["gelu_tanh_arg"], fns["gelu_tanh_finish"], numpy.tanh
    else:
        arg, finish, transcendental = fns["gelu_exact_arg"], fns["gelu_exact_finish"], numpy.exp

    def part(_, lo, hi):
        xs, ys = _address(x1[lo:]), y[lo:hi]
        arg(hi - lo, xs, _address(ys))
        transcendental(ys, out=ys)
        finish(hi - lo, xs, _address(ys))

    _split(x1.size, 1, part)
    return y.reshape(x.shape)


def gelu_grad(g, x, approximate=False, fns=None):
    """``g * gelu'(x)`` for float32 ``g`` and ``x`` of one shape, as ``math_ops``' numpy path
    computes it (its bits), or None where the kernels do not run."""
    fns = fns or _fns(x, g)
    if fns is None:
        return None
    x1, g1 = x.reshape(-1), g.reshape(-1)
    out = numpy.empty_like(x1)
    phi = None if approximate else numpy.empty_like(x1)   # the exact form's second exp

    def part(_, lo, hi):
        n, xs, gs, os_ = hi - lo, _address(x1[lo:]), _address(g1[lo:]), out[lo:hi]
        if approximate:
            fns["gelu_tanh_arg"](n, xs, _address(os_))
            numpy.tanh(os_, out=os_)
            fns["gelu_tanh_grad_finish"](n, xs, _address(os_), gs, _address(os_))
        else:
            ps = phi[lo:hi]
            fns["gelu_exact_grad_arg"](n, xs, _address(os_), _address(ps))
            numpy.exp(os_, out=os_)
            numpy.exp(ps, out=ps)
            fns["gelu_exact_grad_finish"](n, xs, _address(os_), _address(ps), gs,
                                          _address(os_))

    _split(x1.size, 1, part)
    return out.reshape(x.shape)


def select(condition, a, b):
    """``numpy.where(condition, a, b)`` for a boolean ``condition`` and float32 or float64
    ``a`` and ``b`` of one dtype, each of the condition's shape or a single value, C-ordered;
    None where the kernel does not run. (numpy's where takes a branch per element: 266 us on
    a 128x512 layer with a random mask, against 20 here.)"""
    if (type(condition) is not numpy.ndarray or type(a) is not numpy.ndarray
            or type(b) is not numpy.ndarray or condition.dtype != numpy.bool_
            or a.dtype != b.dtype or not native_nn.pays(condition)
            or not condition.flags.c_contiguous):
        return None
    name = _SELECT.get(a.dtype)
    family = _family() if name is not None else None
    if family is None:
        return None
    shape, strides = condition.shape, []
    for v in (a, b):
        if v.size == 1 and v.ndim <= condition.ndim:
            strides.append(0)
        elif v.shape == shape and v.flags.c_contiguous:
            strides.append(1)
        else:
            return None
    fn, size = family.fns[name], a.itemsize
    out = numpy.empty(shape, a.dtype)
    c0, a0, b0, o0 = _address(condition), _address(a), _address(b), _address(out)
    sa, sb = strides

    def part(_, lo, hi):
        fn(hi - lo, c0 + lo, a0 + lo * sa * size, sa, b0 + lo * sb * size, sb, o0 + lo * size)

    _split(condition.size, 1, part)
    return out


# sigmoid's kernel pays from fewer elements than the others: its numpy path is seven calls
# (an RNN's (64, 128) gate: 27 us through numpy, 11 here), and a strided gate is copied once.
SIGMOID_FROM = 1 << 10


def sigmoid(x, fns=None):
    """``math_ops._sigmoid`` of a float32 or float64 array (its bits): numpy's exp of -|x|,
    then one compiled pass for the rest (five numpy passes and two temporaries); None where
    the kernel does not run."""
    if fns is None:
        if (type(x) is not numpy.ndarray or x.dtype not in _SIGMOID
                or x.size < SIGMOID_FROM):
            return None
        family = _family()
        if family is None:
            return None
        fns = family.fns
    fn = fns[_SIGMOID[x.dtype]]
    x1 = numpy.ascontiguousarray(x).reshape(-1)
    e = numpy.abs(x1)
    out = numpy.empty_like(x1)

    def part(_, lo, hi):
        es = e[lo:hi]
        numpy.negative(es, out=es)
        numpy.exp(es, out=es)
        fn(hi - lo, _address(x1[lo:]), _address(es), _address(out[lo:]))

    _split(x1.size, 1, part)
    return out.reshape(x.shape)


def _awkward(rng, size):
    """float32 values over GELU's whole range: normal ones, the fit's edges, huge and tiny
    magnitudes, NaN, infinities, signed zeros and subnormals."""
    x = numpy.concatenate([rng.standard_normal(size) * 3, rng.uniform(-12, 12, size),
                           [numpy.nan, numpy.inf, -numpy.inf, 0.0, -0.0, 1e-40, -1e-40, 3e38,
                            -3e38, 1e-20, -1e-20, 9.5, -9.5, 5.0, -5.0]]).astype(numpy.float32)
    rng.shuffle(x)
    return x


def matches_numpy(kernels):
    """GELU's forms, forward and gradient, against ``math_ops``' numpy path, and ``select``
    against ``numpy.where``, bit for bit (a start-up check: a compiler that rounds or orders
    differently turns the family off)."""
    from .ops import math_ops
    rng = numpy.random.default_rng(0)
    x, g = _awkward(rng, 2000), _awkward(rng, 2000)
    with numpy.errstate(all="ignore"):   # the infinities overflow, as in an op
        return (all(_matches(kernels, g, x, approximate) for approximate in (False, True))
                and _select_matches(kernels, rng, x, g)
                and all(numpy.array_equal(
                    sigmoid(x.astype(dtype), kernels.fns).view(f"u{dtype.itemsize}"),
                    math_ops._sigmoid_numpy(x.astype(dtype), numpy).view(f"u{dtype.itemsize}"))
                    for dtype in _SIGMOID))


def _select_matches(kernels, rng, x, g):
    condition = rng.random(x.size) < 0.5
    for dtype, name in _SELECT.items():
        a, b = x.astype(dtype), g.astype(dtype)
        for sa, sb in ((1, 1), (1, 0), (0, 1), (0, 0)):
            aa, bb = (a if sa else a[:1]), (b if sb else b[3:4])
            out = numpy.empty(x.size, dtype)
            kernels.fns[name](x.size, condition.ctypes.data, aa.ctypes.data, sa,
                              bb.ctypes.data, sb, out.ctypes.data)
            want = numpy.where(condition, aa if sa else aa[0], bb if sb else bb[0])
            if not numpy.array_equal(out.view(f"u{dtype.itemsize}"),
                                     want.view(f"u{dtype.itemsize}")):
                return False
    return True


def _matches(kernels, g, x, approximate):
    from .ops import math_ops
    pairs = ((gelu(x, approximate, kernels.fns), math_ops._gelu_numpy(x, approximate, numpy)),
             (gelu_grad(g, x, approximate, kernels.fns),
              math_ops._gelu_grad_numpy(g, x, approximate, numpy)))
    return all(numpy.array_equal(got.view(numpy.uint32), want.view(numpy.uint32))
               for got, want in pairs)
