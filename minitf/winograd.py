"""Winograd F(2x2, 3x3) convolution: 3x3, stride 1, VALID, NHWC, on the native kernels.

Each 2x2 block of outputs comes from a 4x4 input tile ``d`` and a 3x3 filter ``g`` as
``A^T [(G g G^T) * (B^T d B)] A``: 16 products per tile and channel pair instead of 36, so the
convolution becomes 16 matrix products of ``(tiles, C) @ (C, O)`` between three cheap
transforms. Its two gradients are the adjoints of the same linear maps:

- input:  ``dM = A dY A^T`` per output tile, ``dV = dM @ U^T``, then ``B dV B^T`` added back
  over the (overlapping) input tiles;
- filter: ``dU = V^T @ dM``, then ``G^T dU G``.

The input transform ``V`` is kept for the filter gradient (cached by the input array's
identity, as im2col patches are); each gradient transforms the output gradient a block at a
time. Measured on the shipped CNN's second layer (batch 128, 14x14, 32 -> 64 channels, one
thread, transforms included): forward 7.1 ms against 13.7 for im2col (patches included),
input gradient 7.8 against 11.6, filter gradient 7.6 against 13.4. Tiles that overhang the
image are padded with zeros (read) or cropped (written). Rounding differs from a direct
convolution by a few ulps of the inputs' magnitude (the transforms add at most 4 terms; ``G``
has halves, exact in binary).
"""
import ctypes

import numpy

from . import kernel_threads

SOURCE = r"""
/* Tiles: t = (b * th + ty) * tw + tx covers input rows 2ty..2ty+3, columns 2tx..2tx+3 and
   output rows 2ty, 2ty+1, columns 2tx, 2tx+1. Each kernel handles tiles t0 .. t0 + count - 1,
   whose transforms form a block of 16 planes (plane k = 4 * xi + nu) of count rows of
   channels, ld rows apart. Channels go in groups of WB, the vectorised inner loops. */
#define WB 32
#define TILES                                                                            \
    for (int64_t t = t0; t < t0 + count; t++)                                            \
    for (int64_t c0 = 0; c0 < c; c0 += WB)
#define TILE_INDEX                                                                       \
    int64_t b = t / (th * tw), ty = t / tw % th, tx = t % tw, u = t - t0;                \
    int64_t cb = c - c0 < WB ? c - c0 : WB;
#define PLANE(base, k) ((base) + ((int64_t)(k) * ld + u) * c + c0)

#define WINOGRAD(NAME, T)                                                                \
/* v = B^T d B of each input tile d (zeros past the image). */                           \
void NAME##_wino_in(int64_t h, int64_t w, int64_t c, int64_t th, int64_t tw, int64_t t0, \
                    int64_t count, int64_t ld, const T *restrict x, T *restrict v) {     \
    TILES {                                                                              \
        TILE_INDEX                                                                       \
        T d[4][4][WB], r[4][4][WB];                                                      \
        for (int i = 0; i < 4; i++)                                                      \
        for (int j = 0; j < 4; j++) {                                                    \
            int64_t y = 2 * ty + i, xx = 2 * tx + j;                                     \
            if (y < h && xx < w) {                                                       \
                const T *src = x + ((b * h + y) * w + xx) * c + c0;                      \
                for (int64_t k = 0; k < cb; k++) d[i][j][k] = src[k];                    \
            } else {                                                                     \
                for (int64_t k = 0; k < cb; k++) d[i][j][k] = 0;                         \
            }                                                                            \
        }                                                                                \
        for (int j = 0; j < 4; j++)                                                      \
        for (int64_t k = 0; k < cb; k++) {                                               \
            r[0][j][k] = d[0][j][k] - d[2][j][k];                                        \
            r[1][j][k] = d[1][j][k] + d[2][j][k];                                        \
            r[2][j][k] = d[2][j][k] - d[1][j][k];                                        \
            r[3][j][k] = d[1][j][k] - d[3][j][k];                                        \
        }                                                                                \
        for (int i = 0; i < 4; i++) {                                                    \
            T *o0 = PLANE(v, 4 * i), *o1 = PLANE(v, 4 * i + 1);                          \
            T *o2 = PLANE(v, 4 * i + 2), *o3 = PLANE(v, 4 * i + 3);                      \
            for (int64_t k = 0; k < cb; k++) {                                           \
                o0[k] = r[i][0][k] - r[i][2][k];                                         \
                o1[k] = r[i][1][k] + r[i][2][k];                                         \
                o2[k] = r[i][2][k] - r[i][1][k];                                         \
                o3[k] = r[i][1][k] - r[i][3][k];                                         \
            }                                                                            \
        }                                                                                \
    }                                                                                    \
}                                                                                        \
/* y = A^T m A of each tile, cropped to the output (oh, ow). */                          \
void NAME##_wino_out(int64_t oh, int64_t ow, int64_t c, int64_t th, int64_t tw,          \
                     int64_t t0, int64_t count, int64_t ld, const T *restrict m,        \
                     T *restrict y) {                                                    \
    TILES {                                                                              \
        TILE_INDEX                                                                       \
        T s[2][4][WB];                                                                   \
        for (int j = 0; j < 4; j++) {                                                    \
            const T *m0 = PLANE(m, j), *m1 = PLANE(m, 4 + j);                            \
            const T *m2 = PLANE(m, 8 + j), *m3 = PLANE(m, 12 + j);                       \
            for (int64_t k = 0; k < cb; k++) {                                           \
                s[0][j][k] = m0[k] + m1[k] + m2[k];                                      \
                s[1][j][k] = m1[k] - m2[k] - m3[k];                                      \
            }                                                                            \
        }                                                                                \
        for (int i = 0; i < 2 && 2 * ty + i < oh; i++) {                                 \
            T *o = y + ((b * oh + 2 * ty + i) * ow + 2 * tx) * c + c0;                   \
            for (int64_t k = 0; k < cb; k++)                                             \
                o[k] = s[i][0][k] + s[i][1][k] + s[i][2][k];                             \
            if (2 * tx + 1 < ow)                                                         \
                for (int64_t k = 0; k < cb; k++)                                         \
                    o[c + k] = s[i][1][k] - s[i][2][k] - s[i][3][k];                     \
        }                                                                                \
    }                                                                                    \
}                                                                                        \
/* The adjoint of wino_out: dm = A e A^T of each output-gradient tile e (zeros past it). */ \
void NAME##_wino_out_adj(int64_t oh, int64_t ow, int64_t c, int64_t th, int64_t tw,      \
                         int64_t t0, int64_t count, int64_t ld, const T *restrict dy,    \
                         T *restrict dm) {                                               \
    TILES {                                                                              \
        TILE_INDEX                                                                       \
        T e[2][2][WB], p[4][2][WB];                                                      \
        for (int i = 0; i < 2; i++)                                                      \
        for (int j = 0; j < 2; j++) {                                                    \
            int64_t yy = 2 * ty + i, xx = 2 * tx + j;                                    \
            if (yy < oh && xx < ow) {                                                    \
                const T *src = dy + ((b * oh + yy) * ow + xx) * c + c0;                  \
                for (int64_t k = 0; k < cb; k++) e[i][j][k] = src[k];                    \
            } else {                                                                     \
                for (int64_t k = 0; k < cb; k++) e[i][j][k] = 0;                         \
            }                                                                            \
        }                                                                                \
        for (int j = 0; j < 2; j++)                                                      \
        for (int64_t k = 0; k < cb; k++) {                                               \
            p[0][j][k] = e[0][j][k];                                                     \
            p[1][j][k] = e[0][j][k] + e[1][j][k];                                        \
            p[2][j][k] = e[0][j][k] - e[1][j][k];                                        \
            p[3][j][k] = -e[1][j][k];                                                    \
        }                                                                                \
        for (int i = 0; i < 4; i++) {                                                    \
            T *o0 = PLANE(dm, 4 * i), *o1 = PLANE(dm, 4 * i + 1);                        \
            T *o2 = PLANE(dm, 4 * i + 2), *o3 = PLANE(dm, 4 * i + 3);                    \
            for (int64_t k = 0; k < cb; k++) {                                           \
                o0[k] = p[i][0][k];                                                      \
                o1[k] = p[i][0][k] + p[i][1][k];                                         \
                o2[k] = p[i][0][k] - p[i][1][k];                                         \
                o3[k] = -p[i][1][k];                                                     \
            }                                                                            \
        }                                                                                \
    }                                                                                    \
}                                                                                        \
/* The adjoint of wino_in: B dv B^T of each tile added into dx (n, h, w, c). */          \
void NAME##_wino_in_adj(int64_t h, int64_t w, int64_t c, int64_t th, int64_t tw,         \
                        int64_t t0, int64_t count, int64_t ld, const T *restrict dv,     \
                        T *restrict dx) {                                                \
    TILES {                                                                              \
        TILE_INDEX                                                                       \
        T q[4][4][WB];                                                                   \
        for (int j = 0; j < 4; j++) {                                                    \
            const T *v0 = PLANE(dv, j), *v1 = PLANE(dv, 4 + j);                          \
            const T *v2 = PLANE(dv, 8 + j), *v3 = PLANE(dv, 12 + j);                     \
            for (int64_t k = 0; k < cb; k++) {                                           \
                q[0][j][k] = v0[k];                                                      \
                q[1][j][k] = v1[k] - v2[k] + v3[k];                                      \
                q[2][j][k] = v1[k] + v2[k] - v0[k];                                      \
                q[3][j][k] = -v3[k];                                                     \
            }                                                                            \
        }                                                                                \
        for (int i = 0; i < 4 && 2 * ty + i < h; i++) {                                  \
            T row[4][WB];                                                                \
            for (int64_t k = 0; k < cb; k++) {                                           \
                row[0][k] = q[i][0][k];                                                  \
                row[1][k] = q[i][1][k] - q[i][2][k] + q[i][3][k];                        \
                row[2][k] = q[i][1][k] + q[i][2][k] - q[i][0][k];                        \
                row[3][k] = -q[i][3][k];                                                 \
            }                                                                            \
            for (int j = 0; j < 4 && 2 * tx + j < w; j++) {                              \
                T *o = dx + ((b * h + 2 * ty + i) * w + 2 * tx + j) * c + c0;            \
                for (int64_t k = 0; k < cb; k++) o[k] += row[j][k];                      \
            }                                                                            \
        }                                                                                \
    }                                                                                    \
}
WINOGRAD(nn_float32, float)
WINOGRAD(nn_float64, double)
"""

_DTYPES = ("float32", "float64")
_NAMES = ("wino_in", "wino_out", "wino_out_adj", "wino_in_adj")
_G = numpy.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0.0, 0.0, 1.0]])
MIN_CHANNELS = 8       # below this the transforms cost more than the products save
BLOCK_BYTES = 1 << 20  # tiles per block: a block's transforms stay in the core's cache
MIN_PART_TILES = 2048  # tiles per thread at least: fewer do not pay for the handoff


class Kernels:
    """The compiled transforms, as ``fns[name][dtype name]``."""

    def __init__(self, lib):
        self.fns = {}
        for name in _NAMES:
            self.fns[name] = {}
            for dtype in _DTYPES:
                fn = getattr(lib, f"nn_{dtype}_{name}")
                fn.argtypes = [ctypes.c_int64] * 8 + [ctypes.c_void_p] * 2
                fn.restype = None
                self.fns[name][dtype] = fn


def _kernels():
    from . import native
    return native.family("winograd")


def applies(x_shape, w_shape, strides, dilations, dtype):
    """Whether this convolution runs here: 3x3, stride 1, no dilation, a float32/float64
    numpy batch of images with enough channels on both sides, the native kernels loaded."""
    return (len(x_shape) == 4 and tuple(w_shape[:2]) == (3, 3) and tuple(strides) == (1, 1)
            and tuple(dilations) == (1, 1) and x_shape[1] >= 3 and x_shape[2] >= 3
            and min(w_shape[2], w_shape[3]) >= MIN_CHANNELS
            and numpy.dtype(dtype).name in _DTYPES and _kernels() is not None)


class _Tiles:
    """The tiling of (N, H, W) images for a 3x3 valid convolution, in blocks of tiles or in
    parts of whole images (``kernel_threads``)."""

    def __init__(self, n, h, w, channels, dtype, kernels=None, block_bytes=None):
        self.n, self.h, self.w, self.oh, self.ow = n, h, w, h - 2, w - 2
        self.th, self.tw = (h - 1) // 2, (w - 1) // 2      # ceil(oh / 2), ceil(ow / 2)
        self.count = n * self.th * self.tw
        self.fns = (kernels or _kernels()).fns
        self.dtype = numpy.dtype(dtype)
        block_bytes = BLOCK_BYTES if block_bytes is None else block_bytes
        self.block = max(1, block_bytes // (16 * channels * self.dtype.itemsize))

    def parts(self):
        """Tile ranges of whole images, one per thread (tiles of one image overlap in the
        input, so two threads never add into one image)."""
        per_image = self.th * self.tw
        return [(a * per_image, b * per_image)
                for a, b in kernel_threads.split(self.n, -(-MIN_PART_TILES // per_image))]

    def blocks(self, start, stop):
        for t0 in range(start, stop, self.block):
            yield t0, min(self.block, stop - t0)

    def run(self, name, src, dst, t0, count, ld=None):
        """One kernel over tiles ``t0 .. t0 + count - 1``; the block (``src`` or ``dst``,
        whichever is not the images) has planes ``ld`` rows apart (default ``count``)."""
        if name in ("wino_in", "wino_in_adj"):      # input-side images (N, H, W, C)
            size, image = (self.h, self.w), src if name == "wino_in" else dst
        else:                                       # output-side images (N, OH, OW, O)
            size, image = (self.oh, self.ow), dst if name == "wino_out" else src
        self.fns[name][self.dtype.name](*size, image.shape[-1], self.th, self.tw, t0, count,
                                        count if ld is None else ld,
                                        src.ctypes.data, dst.ctypes.data)
        return dst

    def input_block(self, x, t0, count):
        return self.run("wino_in", x, numpy.empty((16, count, x.shape[-1]), self.dtype),
                        t0, count)

    def output_grad_block(self, g, t0, count):
        return self.run("wino_out_adj", g, numpy.empty((16, count, g.shape[-1]), self.dtype),
                        t0, count)


def transform_input(x):
    """``V``: (16, tiles, C) of images ``x`` (N, H, W, C), for ``conv`` and ``filter_grad``
    to share."""
    x = numpy.ascontiguousarray(x)
    tiles = _Tiles(*x.shape, x.dtype)
    v = numpy.empty((16, tiles.count, x.shape[-1]), x.dtype)

    def part(start, stop):   # planes of the whole array: tiles.count rows apart
        tiles.run("wino_in", x, v[:, start:], start, stop - start, ld=tiles.count)

    kernel_threads.run(part, tiles.parts())
    return v


def _sandwich(left, a, right):
    """``left @ a[:, :, c, o] @ right.T`` for every (c, o) of ``a`` (I, J, C, O)."""
    rows = numpy.tensordot(left, a, axes=(1, 0))                # (A, J, C, O)
    return numpy.moveaxis(numpy.tensordot(rows, right, axes=(1, 1)), -1, 1)   # (A, B, C, O)


def _filters(w):
    """``U``: (16, C, O) = G w G^T per (C, O) pair."""
    u = _sandwich(_G.astype(w.dtype), w, _G.astype(w.dtype))
    return numpy.ascontiguousarray(u.reshape(16, *w.shape[2:]))


# The products run a block of tiles at a time (its transforms stay in cache), each thread
# taking the blocks of its own images.

def conv(x, w, v=None):
    """Valid 3x3 cross-correlation of ``x`` (N, H, W, C) with ``w`` (3, 3, C, O); ``v`` is
    ``transform_input(x)`` when the caller has it."""
    x = numpy.ascontiguousarray(x)
    n, h, wd, c = x.shape
    o = w.shape[3]
    tiles = _Tiles(n, h, wd, max(c, o), x.dtype)
    u = _filters(w)
    y = numpy.empty((n, h - 2, wd - 2, o), x.dtype)

    def part(start, stop):
        for t0, count in tiles.blocks(start, stop):
            vb = tiles.input_block(x, t0, count) if v is None else v[:, t0:t0 + count]
            tiles.run("wino_out", numpy.matmul(vb, u), y, t0, count)

    kernel_threads.run(part, tiles.parts(), uses_blas=True)
    return y


def input_grad(g, w, size):
    """x's gradient (N, H, W, C) from the output gradient ``g`` (N, OH, OW, O)."""
    g = numpy.ascontiguousarray(g)
    n, o, c = g.shape[0], g.shape[-1], w.shape[2]
    tiles = _Tiles(n, *size, max(c, o), g.dtype)
    ut = numpy.ascontiguousarray(_filters(w).transpose(0, 2, 1))
    dx = numpy.zeros((n,) + tuple(size) + (c,), g.dtype)

    def part(start, stop):
        for t0, count in tiles.blocks(start, stop):
            dv = numpy.matmul(tiles.output_grad_block(g, t0, count), ut)
            tiles.run("wino_in_adj", dv, dx, t0, count)

    kernel_threads.run(part, tiles.parts(), uses_blas=True)
    return dx


def filter_grad(x, g, v=None):
    """w's gradient (3, 3, C, O) from the input ``x`` (or its ``transform_input``, ``v``)
    and the output gradient ``g``."""
    x, g = numpy.ascontiguousarray(x), numpy.ascontiguousarray(g)
    c, o = x.shape[-1], g.shape[-1]
    tiles = _Tiles(*x.shape[:3], max(c, o), g.dtype)
    parts = tiles.parts()
    sums = {start: numpy.zeros((16, c, o), g.dtype) for start, _ in parts}

    def part(start, stop):
        du = sums[start]
        for t0, count in tiles.blocks(start, stop):
            vb = tiles.input_block(x, t0, count) if v is None else v[:, t0:t0 + count]
            du += numpy.matmul(vb.transpose(0, 2, 1), tiles.output_grad_block(g, t0, count))

    kernel_threads.run(part, parts, uses_blas=True)
    du = sum(sums[start] for start, _ in parts)    # a fixed order: deterministic
    return _sandwich(_G.T, du.reshape(4, 4, c, o), _G.T).astype(g.dtype)


def matches_direct(kernels):
    """The forward and both gradients against a direct convolution in float64, over several
    blocks of tiles and both odd and even output sizes (a start-up check: a miscompiled
    transform must never train a model)."""
    rng = numpy.random.default_rng(0)
    x = rng.standard_normal((2, 7, 6, 9))
    w = rng.standard_normal((3, 3, 9, 8))
    g = rng.standard_normal((2, 5, 4, 8))
    direct = numpy.zeros((2, 5, 4, 8))
    dx = numpy.zeros_like(x)
    for i in range(3):
        for j in range(3):
            direct += x[:, i:i + 5, j:j + 4] @ w[i, j]
            dx[:, i:i + 5, j:j + 4] += g @ w[i, j].T
    dw = numpy.stack([numpy.stack([numpy.einsum("nhwc,nhwo->co", x[:, i:i + 5, j:j + 4], g)
                                   for j in range(3)]) for i in range(3)])
    tiles = _Tiles(2, 7, 6, 9, numpy.float64, kernels, block_bytes=5 * 16 * 9 * 8)
    u = _filters(w)                                     # blocks of 5 of the 12 tiles
    y = numpy.empty_like(direct)
    got_dx = numpy.zeros_like(x)
    du = numpy.zeros((16, 9, 8))
    for t0, count in tiles.blocks(0, tiles.count):
        vb = tiles.input_block(x, t0, count)
        tiles.run("wino_out", numpy.matmul(vb, u), y, t0, count)
        dm = tiles.output_grad_block(g, t0, count)
        tiles.run("wino_in_adj", numpy.matmul(dm, u.transpose(0, 2, 1)), got_dx, t0, count)
        du += numpy.matmul(vb.transpose(0, 2, 1), dm)
    got_dw = _sandwich(_G.T, du.reshape(4, 4, 9, 8), _G.T)       # filter_grad's own step
    return all(numpy.allclose(a, b, rtol=1e-12, atol=1e-12)
               for a, b in [(y, direct), (got_dx, dx), (got_dw, dw)])
