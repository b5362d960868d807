"""Compiled element-wise passes of an LSTM time step (``minitf.ops.lstm_ops``).

One step of Keras' LSTM cell outside its matrix product is about fifteen numpy passes over
(batch, units) arrays, each a call of a few microseconds; here it is three compiled passes
around numpy's own ``exp`` and ``tanh`` forward (so the gates, ``c`` and ``h`` are the bits of
the per-step ops: the same float operations in the same order, the transcendental functions
numpy's) and one pass backward. The layouts are ``lstm_ops``': time-major, per step and
example six slots of ``units`` values forward (``h, c, i, f, c~, o``), the four gates'
gradients backward.

A start-up check runs both directions on awkward values against the numpy path
(``lstm_ops._numpy_forward`` / ``_numpy_backward``) and turns the family off where a bit
differs.
"""
import ctypes

import numpy

from .native_nn import _address

_I, _P = ctypes.c_int64, ctypes.c_void_p

SOURCE = r"""
/* z = (x + b) + p; the arguments of numpy's exp (-|z| for the gates i, f, o, packed
   (rows, 3u)) and of its tanh (z of the candidate, (rows, u)) */
#define LSTM_ARGS(NAME, T)                                                               \
void NAME(int64_t rows, int64_t u, const T *restrict x, int64_t xs, const T *restrict b, \
          const T *restrict p, T *restrict z, T *restrict e, T *restrict a) {            \
    for (int64_t r = 0; r < rows; r++) {                                                 \
        const T *xr = x + r * xs, *pr = p + r * 4 * u;                                   \
        T *zr = z + r * 4 * u, *er = e + r * 3 * u, *ar = a + r * u;                     \
        for (int64_t j = 0; j < 2 * u; j++) {                                            \
            T v = (xr[j] + b[j]) + pr[j]; zr[j] = v; er[j] = -(v < 0 ? -v : v);         \
        }                                                                                \
        for (int64_t j = 2 * u; j < 3 * u; j++) {                                        \
            T v = (xr[j] + b[j]) + pr[j]; zr[j] = v; ar[j - 2 * u] = v;                  \
        }                                                                                \
        for (int64_t j = 3 * u; j < 4 * u; j++) {                                        \
            T v = (xr[j] + b[j]) + pr[j]; zr[j] = v; er[j - u] = -(v < 0 ? -v : v);     \
        }                                                                                \
    }                                                                                    \
}
/* the gates from e = exp(-|z|) (math_ops._sigmoid's formula) and tanh(z_c); c; the slots
   c, i, f, c~, o of y (row stride ys); c again, packed, for numpy's tanh */
#define LSTM_GATES(NAME, T)                                                              \
static inline T NAME##_sigmoid(T z, T e) {                                               \
    T s = (T)1 / (e + (T)1), m = z < 0 ? (T)1 : (T)0;                                    \
    return s * (e * m + ((T)1 - m));                                                     \
}                                                                                        \
void NAME(int64_t rows, int64_t u, const T *restrict z, const T *restrict e,             \
          const T *restrict a, const T *restrict c_prev, int64_t cs, T *restrict y,      \
          int64_t ys, T *restrict c_out) {                                               \
    for (int64_t r = 0; r < rows; r++) {                                                 \
        const T *zr = z + r * 4 * u, *er = e + r * 3 * u, *ar = a + r * u;               \
        const T *cp = c_prev + r * cs;                                                   \
        T *yr = y + r * ys, *co = c_out + r * u;                                         \
        for (int64_t j = 0; j < u; j++) {                                                \
            T i = NAME##_sigmoid(zr[j], er[j]);                                          \
            T f = NAME##_sigmoid(zr[u + j], er[u + j]);                                  \
            T o = NAME##_sigmoid(zr[3 * u + j], er[2 * u + j]);                          \
            T cc = ar[j];                                                                \
            T fc = f * cp[j], ic = i * cc;                                               \
            T c = fc + ic;                                                               \
            yr[u + j] = c; yr[2 * u + j] = i; yr[3 * u + j] = f;                         \
            yr[4 * u + j] = cc; yr[5 * u + j] = o; co[j] = c;                            \
        }                                                                                \
    }                                                                                    \
}
/* h = o tanh(c) into slot h of y and packed (the next step's product) */
#define LSTM_OUTPUT(NAME, T)                                                             \
void NAME(int64_t rows, int64_t u, const T *restrict tanh_c, T *restrict y, int64_t ys,  \
          T *restrict h) {                                                               \
    for (int64_t r = 0; r < rows; r++) {                                                 \
        const T *tr = tanh_c + r * u;                                                    \
        T *yr = y + r * ys, *hr = h + r * u;                                             \
        for (int64_t j = 0; j < u; j++) { T v = yr[5 * u + j] * tr[j]; yr[j] = v; hr[j] = v; } \
    }                                                                                    \
}
/* one step backward: from the cotangent slots g (row stride gs), y's slots, c_prev,
   tanh(c) and the gradients dh, dc arriving from the next step (NULL: none), dz (rows, 4u:
   the step's row of the result, and the input of the product with the recurrent kernel)
   and dc_prev for the step before */
#define LSTM_BACKWARD(NAME, T)                                                           \
void NAME(int64_t rows, int64_t u, const T *restrict g, int64_t gs, const T *restrict y, \
          int64_t ys, const T *restrict c_prev, int64_t cs, const T *restrict tanh_c,    \
          const T *restrict dh_next, const T *restrict dc_next, T *restrict dz,          \
          T *restrict dc_out) {                                                          \
    for (int64_t r = 0; r < rows; r++) {                                                 \
        const T *gr = g + r * gs, *yr = y + r * ys, *cp = c_prev + r * cs;               \
        const T *tr = tanh_c + r * u;                                                    \
        T *dzr = dz + r * 4 * u, *dco = dc_out + r * u;                                  \
        for (int64_t j = 0; j < u; j++) {                                                \
            T i = yr[2 * u + j], f = yr[3 * u + j], cc = yr[4 * u + j];                  \
            T o = yr[5 * u + j], tc = tr[j];                                             \
            T dh = dh_next ? dh_next[r * u + j] + gr[j] : gr[j];                         \
            T dc = dc_next ? dc_next[r * u + j] + gr[u + j] : gr[u + j];                 \
            dc = dc + dh * o * ((T)1 - tc * tc);                                         \
            dzr[j] = (dc * cc + gr[2 * u + j]) * i * ((T)1 - i);                         \
            dzr[u + j] = (dc * cp[j] + gr[3 * u + j]) * f * ((T)1 - f);                  \
            dzr[2 * u + j] = (dc * i + gr[4 * u + j]) * ((T)1 - cc * cc);                \
            dzr[3 * u + j] = (dh * tc + gr[5 * u + j]) * o * ((T)1 - o);                 \
            dco[j] = dc * f;                                                             \
        }                                                                                \
    }                                                                                    \
}
LSTM_ARGS(lstm_args_float32, float)
LSTM_ARGS(lstm_args_float64, double)
LSTM_GATES(lstm_gates_float32, float)
LSTM_GATES(lstm_gates_float64, double)
LSTM_OUTPUT(lstm_output_float32, float)
LSTM_OUTPUT(lstm_output_float64, double)
LSTM_BACKWARD(lstm_backward_float32, float)
LSTM_BACKWARD(lstm_backward_float64, double)
"""

_SIGNATURES = {"lstm_args": [_I, _I, _P, _I, _P, _P, _P, _P, _P],
               "lstm_gates": [_I, _I, _P, _P, _P, _P, _I, _P, _I, _P],
               "lstm_output": [_I, _I, _P, _P, _I, _P],
               "lstm_backward": [_I, _I, _P, _I, _P, _I, _P, _I, _P, _P, _P, _P, _P]}
_DTYPES = {numpy.dtype(numpy.float32): "float32", numpy.dtype(numpy.float64): "float64"}


class Kernels:
    """The compiled functions: ``fns[name][dtype]``."""

    def __init__(self, lib):
        self.fns = {}
        for name, argtypes in _SIGNATURES.items():
            self.fns[name] = {}
            for dtype, suffix in _DTYPES.items():
                fn = getattr(lib, f"{name}_{suffix}")
                fn.argtypes = argtypes
                fn.restype = None
                self.fns[name][dtype] = fn


def _fns(dtype):
    from . import native
    family = native.family("lstm")
    if family is None or dtype not in _DTYPES:
        return None
    return {name: fns[dtype] for name, fns in family.fns.items()}


def forward(x_proj, bias, h0, c0, kernel, out, product, fns=None):
    """``lstm_ops``' forward into ``out`` (steps, batch, 6, u), or False where the kernels do
    not run (the caller then takes the numpy path). ``product(a, b, out)`` is the matrix
    product the per-step ops use."""
    steps, batch, width = x_proj.shape
    u = width // 4
    fns = fns or _kernels_for(x_proj, bias, h0, c0, kernel, out)
    size = x_proj.itemsize
    if fns is None or x_proj.strides[2] != size or x_proj.strides[1] % size \
            or x_proj.strides[0] % size:
        return False
    dtype = x_proj.dtype
    z, e, a, c, h, p = (numpy.empty((batch, n * u), dtype) for n in (4, 3, 1, 1, 1, 4))
    h[...] = h0
    z_, e_, a_, c_, h_, p_ = (_address(b) for b in (z, e, a, c, h, p))
    args, gates, output = fns["lstm_args"], fns["lstm_gates"], fns["lstm_output"]
    xs, ys = x_proj.strides[1] // size, 6 * u
    x0, x_step = x_proj.ctypes.data, x_proj.strides[0]
    y0, y_step = out.ctypes.data, out.strides[0]
    c0 = numpy.ascontiguousarray(c0)      # held: the first step reads it by address
    c_prev, c_stride = _address(c0), u
    bias = numpy.ascontiguousarray(bias)  # held too
    b_ = _address(bias)
    for t in range(steps):
        product(h, kernel, p)
        args(batch, u, x0 + t * x_step, xs, b_, p_, z_, e_, a_)
        numpy.exp(e, out=e)
        numpy.tanh(a, out=a)
        y_t = y0 + t * y_step
        gates(batch, u, z_, e_, a_, c_prev, c_stride, y_t, ys, c_)
        c_prev, c_stride = y_t + u * size, ys
        numpy.tanh(c, out=c)
        output(batch, u, c_, y_t, ys, h_)
    return True


def backward(c0, kernel, y, g, out, product, fns=None):
    """``lstm_ops``' backward loop into the first ``steps`` rows of ``out`` (steps + 1,
    batch, 4u); returns the gradients of h0 and c0, or None where the kernels do not run.
    ``product(a, b, out)`` computes ``dz @ kernel^T``."""
    steps, batch, _, u = y.shape
    fns = fns or _kernels_for(y, g, c0, kernel, out)
    size = y.itemsize
    if fns is None or steps == 0 or not y.flags.c_contiguous or g.strides[3] != size \
            or g.strides[2] != u * size or g.strides[0] % size or g.strides[1] % size:
        return None
    dtype = y.dtype
    ys, gs = 6 * u, g.strides[1] // size
    tanh_c, dh = numpy.empty((batch, u), dtype), numpy.empty((batch, u), dtype)
    dc = numpy.empty((2, batch, u), dtype)    # the step's dc_prev, the next step's (read)
    tanh_c_, dh_ = _address(tanh_c), _address(dh)
    dc_ = (_address(dc[0]), _address(dc[1]))
    c0 = numpy.ascontiguousarray(c0)      # held: the last step reads it by address
    c0_ = _address(c0)
    y0, g0, out0 = y.ctypes.data, g.ctypes.data, out.ctypes.data
    y_step, g_step, out_step = y.strides[0], g.strides[0], out.strides[0]
    kernel_t = kernel.T
    step_back = fns["lstm_backward"]
    for t in range(steps - 1, -1, -1):
        numpy.tanh(y[t, :, 1], out=tanh_c)
        c_prev, cs = (c0_, u) if t == 0 else (y0 + (t - 1) * y_step + u * size, ys)
        last = t == steps - 1
        step_back(batch, u, g0 + t * g_step, gs, y0 + t * y_step, ys, c_prev, cs, tanh_c_,
                  None if last else dh_, None if last else dc_[(t + 1) % 2],
                  out0 + t * out_step, dc_[t % 2])
        product(out[t], kernel_t, dh)
    return dh, dc[0]


def _kernels_for(*arrays):
    """The kernels for these arrays (numpy, one float dtype, the last one C-ordered), or
    None."""
    dtype = arrays[0].dtype
    for a in arrays:
        if type(a) is not numpy.ndarray or a.dtype != dtype:
            return None
    if not arrays[-1].flags.c_contiguous:
        return None
    return _fns(dtype)


def _product(a, b, out=None):
    return numpy.matmul(a, b, out=out)


def matches_numpy(kernels):
    """Both directions against ``lstm_ops``' numpy path, bit for bit, in both dtypes, on
    pre-activations from tiny to saturating (a start-up check)."""
    from .ops import lstm_ops
    rng = numpy.random.default_rng(0)
    for dtype in _DTYPES:
        fns = {name: by_dtype[dtype] for name, by_dtype in kernels.fns.items()}
        batch, steps, u = 3, 4, 5
        x_proj = (rng.standard_normal((steps, batch, 4 * u)) * 4).astype(dtype)
        x_proj[0, 0, :3] = (0.0, -0.0, 1e-30)
        x_proj[1, 1, :3] = (30.0, -30.0, 200.0)
        h0, c0 = (rng.standard_normal((2, batch, u)) * 0.5).astype(dtype)
        kernel = (rng.standard_normal((u, 4 * u)) * 0.5).astype(dtype)
        bias = rng.standard_normal(4 * u).astype(dtype)
        y = lstm_ops._numpy_forward(x_proj, bias, h0, c0, kernel, xp=numpy, product=_product)
        got = numpy.empty_like(y)
        if not forward(x_proj, bias, h0, c0, kernel, got, _product, fns) \
                or not numpy.array_equal(got, y):
            return False
        g = rng.standard_normal(y.shape).astype(dtype)
        expected = lstm_ops._numpy_backward(c0, kernel, y, g, xp=numpy, product=_product)
        got = numpy.empty_like(expected)
        initial = backward(c0, kernel, y, g, got, _product, fns)
        if initial is None:
            return False
        lstm_ops.last_row(got, *initial)
        if not numpy.array_equal(got, expected):
            return False
    return True
