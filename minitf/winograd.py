"""Winograd convolution, F(2x2, 3x3) and F(4x4, 3x3): 3x3, stride 1, NHWC, native; VALID, or
zero-padded (``pads``: the tiles read the padding as zeros, no padded copy is made).

Each m x m block of outputs comes from an (m+2) x (m+2) input tile ``d`` and a 3x3 filter
``g`` as ``A^T [(G g G^T) * (B^T d B)] A``: (m+2)^2 products per tile and channel pair instead
of 9 m^2 (16 for 36 with m = 2, 36 for 144 with m = 4), so the convolution becomes (m+2)^2
matrix products of ``(tiles, C) @ (C, O)`` between cheap transforms. Its two gradients are
the adjoints of the same linear maps:

- input:  ``dM = A dY A^T`` per output tile, ``dV = dM @ U^T``, then ``B dV B^T`` added back
  over the (overlapping) input tiles;
- filter: ``dU = V^T @ dM``, then ``G^T dU G``.

``tile_size`` picks m by the output's size: 4 where its tiles make fewer transformed values
(an 11x11 output: 324 against 576 per channel), else 2. The input transform ``V`` is kept for
the filter gradient (cached by the input array's identity, as im2col patches are); each
gradient transforms the output gradient a block at a time. Tiles that overhang the image are
padded with zeros (read) or cropped (written).

Measured (batch 128, two threads, a 32 -> 64-channel layer): 13x13 inputs, forward + both
gradients + input transform 5.9 ms with m = 4 against 8.1 with m = 2; 16x16 inputs 10.3
against 11.2. On one thread, m = 2 against im2col (14x14, patches included): forward 7.1 ms
against 13.7, input gradient 7.8 against 11.6, filter gradient 7.6 against 13.4.

Rounding: m = 2 differs from a direct convolution by a few ulps of the inputs' magnitude (its
transforms add at most 4 terms; ``G`` has halves, exact in binary). m = 4's transforms scale
by up to 8 and its ``G`` has sixths: in float32 its error is about ten times a direct
convolution's (relative rms 1e-6 against 1e-7 for the output and both gradients), the known
price of F(4x4, 3x3)'s larger transforms. ``MINITF_WINOGRAD_TILE=2`` keeps every layer on
m = 2.
"""
import ctypes
import os

import numpy

from . import kernel_threads

SOURCE = r"""
/* Tiles: t = (b * th + ty) * tw + tx covers input rows 2ty..2ty+3, columns 2tx..2tx+3 and
   output rows 2ty, 2ty+1, columns 2tx, 2tx+1. Each kernel handles tiles t0 .. t0 + count - 1,
   whose transforms form a block of 16 planes (plane k = 4 * xi + nu) of count rows of
   channels, ld rows apart. Channels go in groups of WB, the vectorised inner loops. Input rows
   and columns count in the zero-padded image: (h, w) images with pt rows of zeros above and pl
   columns to the left (a SAME convolution's), read as zeros and never written. */
#define WB 32
#define TILES                                                                            \
    for (int64_t t = t0; t < t0 + count; t++)                                            \
    for (int64_t c0 = 0; c0 < c; c0 += WB)
#define TILE_INDEX                                                                       \
    int64_t b = t / (th * tw), ty = t / tw % th, tx = t % tw, u = t - t0;                \
    int64_t cb = c - c0 < WB ? c - c0 : WB;
#define PLANE(base, k) ((base) + ((int64_t)(k) * ld + u) * c + c0)
/* tile[i][j][0..cb) = images[b, y0 + i, x0 + j, c0..] for i, j < n, zeros outside (H, W)
   (y0, x0 < 0 in a padded image's first tiles). */
#define LOAD_TILE(tile, n, images, H, W, y0, x0)                                          \
    for (int i = 0; i < (n); i++)                                                        \
    for (int j = 0; j < (n); j++) {                                                      \
        int64_t yy = (y0) + i, xx = (x0) + j, at = ((b * (H) + yy) * (W) + xx) * c + c0; \
        if (yy >= 0 && yy < (H) && xx >= 0 && xx < (W))                                  \
            for (int64_t k = 0; k < cb; k++) tile[i][j][k] = (images)[at + k];          \
        else                                                                             \
            for (int64_t k = 0; k < cb; k++) tile[i][j][k] = 0;                          \
    }

#define WINOGRAD(NAME, T)                                                                \
/* v = B^T d B of each input tile d (zeros past the image). */                           \
void NAME##_wino_in(int64_t h, int64_t w, int64_t c, int64_t th, int64_t tw, int64_t t0, \
                    int64_t count, int64_t ld, int64_t pt, int64_t pl,                   \
                    const T *restrict x, T *restrict v) {                                \
    TILES {                                                                              \
        TILE_INDEX                                                                       \
        T d[4][4][WB], r[4][4][WB];                                                      \
        LOAD_TILE(d, 4, x, h, w, 2 * ty - pt, 2 * tx - pl);                              \
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
                     int64_t t0, int64_t count, int64_t ld, int64_t pt, int64_t pl,      \
                     const T *restrict m, T *restrict y) {                               \
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
                         int64_t t0, int64_t count, int64_t ld, int64_t pt, int64_t pl,  \
                         const T *restrict dy, T *restrict dm) {                         \
    TILES {                                                                              \
        TILE_INDEX                                                                       \
        T e[2][2][WB], p[4][2][WB];                                                      \
        LOAD_TILE(e, 2, dy, oh, ow, 2 * ty, 2 * tx);                                     \
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
                        int64_t t0, int64_t count, int64_t ld, int64_t pt, int64_t pl,   \
                        const T *restrict dv, T *restrict dx) {                          \
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
        for (int i = 0; i < 4 && 2 * ty + i - pt < h; i++) {                             \
            if (2 * ty + i - pt < 0)                                                     \
                continue;                                                                \
            T row[4][WB];                                                                \
            for (int64_t k = 0; k < cb; k++) {                                           \
                row[0][k] = q[i][0][k];                                                  \
                row[1][k] = q[i][1][k] - q[i][2][k] + q[i][3][k];                        \
                row[2][k] = q[i][1][k] + q[i][2][k] - q[i][0][k];                        \
                row[3][k] = -q[i][3][k];                                                 \
            }                                                                            \
            for (int j = 0; j < 4 && 2 * tx + j - pl < w; j++) {                         \
                if (2 * tx + j - pl < 0)                                                 \
                    continue;                                                            \
                T *o = dx + ((b * h + 2 * ty + i - pt) * w + 2 * tx + j - pl) * c + c0;  \
                for (int64_t k = 0; k < cb; k++) o[k] += row[j][k];                      \
            }                                                                            \
        }                                                                                \
    }                                                                                    \
}
WINOGRAD(nn_float32, float)
WINOGRAD(nn_float64, double)

/* F(4x4, 3x3): 6x6 input tiles 4 apart, 36 planes (k = 6 * row + column), the 1D transforms
   written out (B^T: 6 -> 6, A^T: 6 -> 4, and their adjoints B: 6 -> 6, A: 4 -> 6). */
#define W4_BT(o0, o1, o2, o3, o4, o5, d0, d1, d2, d3, d4, d5) do {                       \
    o0 = (4 * (d0) - 5 * (d2)) + (d4);                                                   \
    o1 = ((d4) + (d3)) - 4 * ((d1) + (d2));                                              \
    o2 = ((d4) - (d3)) + 4 * ((d1) - (d2));                                              \
    o3 = ((d4) - (d2)) + 2 * ((d3) - (d1));                                              \
    o4 = ((d4) - (d2)) - 2 * ((d3) - (d1));                                              \
    o5 = (4 * (d1) - 5 * (d3)) + (d5); } while (0)
#define W4_AT(o0, o1, o2, o3, m0, m1, m2, m3, m4, m5) do {                               \
    o0 = (m0) + (((m1) + (m2)) + ((m3) + (m4)));                                         \
    o1 = ((m1) - (m2)) + 2 * ((m3) - (m4));                                              \
    o2 = ((m1) + (m2)) + 4 * ((m3) + (m4));                                              \
    o3 = (((m1) - (m2)) + 8 * ((m3) - (m4))) + (m5); } while (0)
#define W4_A(o0, o1, o2, o3, o4, o5, e0, e1, e2, e3) do {                                \
    o0 = (e0);                                                                           \
    o1 = ((e0) + (e2)) + ((e1) + (e3));                                                  \
    o2 = ((e0) + (e2)) - ((e1) + (e3));                                                  \
    o3 = ((e0) + 4 * (e2)) + 2 * ((e1) + 4 * (e3));                                      \
    o4 = ((e0) + 4 * (e2)) - 2 * ((e1) + 4 * (e3));                                      \
    o5 = (e3); } while (0)
#define W4_B(o0, o1, o2, o3, o4, o5, v0, v1, v2, v3, v4, v5) do {                        \
    o0 = 4 * (v0);                                                                       \
    o1 = 4 * (((v2) - (v1)) + (v5)) + 2 * ((v4) - (v3));                                 \
    o2 = (-5 * (v0) - 4 * ((v1) + (v2))) - ((v3) + (v4));                                \
    o3 = (((v1) - (v2)) + 2 * ((v3) - (v4))) - 5 * (v5);                                 \
    o4 = ((v0) + ((v1) + (v2))) + ((v3) + (v4));                                         \
    o5 = (v5); } while (0)
#define SIX(a, i) a[0] i, a[1] i, a[2] i, a[3] i, a[4] i, a[5] i
#define FOUR(a, i) a[0] i, a[1] i, a[2] i, a[3] i
#define APPLY(f, ...) f(__VA_ARGS__)   /* expands SIX/FOUR into f's arguments first */

#define WINOGRAD4(NAME, T)                                                               \
void NAME##_wino4_in(int64_t h, int64_t w, int64_t c, int64_t th, int64_t tw,            \
                     int64_t t0, int64_t count, int64_t ld, int64_t pt, int64_t pl,      \
                     const T *restrict x, T *restrict v) {                               \
    TILES {                                                                              \
        TILE_INDEX                                                                       \
        T d[6][6][WB], r[6][6][WB];                                                      \
        LOAD_TILE(d, 6, x, h, w, 4 * ty - pt, 4 * tx - pl);                              \
        for (int j = 0; j < 6; j++)                                                      \
        for (int64_t k = 0; k < cb; k++)                                                 \
            APPLY(W4_BT, SIX(r, [j][k]), SIX(d, [j][k]));                                \
        for (int i = 0; i < 6; i++) {                                                    \
            T *o[6];                                                                     \
            for (int j = 0; j < 6; j++) o[j] = PLANE(v, 6 * i + j);                      \
            for (int64_t k = 0; k < cb; k++)                                             \
                APPLY(W4_BT, SIX(o, [k]), SIX(r[i], [k]));                               \
        }                                                                                \
    }                                                                                    \
}                                                                                        \
void NAME##_wino4_out(int64_t oh, int64_t ow, int64_t c, int64_t th, int64_t tw,         \
                      int64_t t0, int64_t count, int64_t ld, int64_t pt, int64_t pl,     \
                      const T *restrict m, T *restrict y) {                              \
    TILES {                                                                              \
        TILE_INDEX                                                                       \
        T s[4][6][WB];                                                                   \
        for (int j = 0; j < 6; j++) {                                                    \
            const T *p[6];                                                               \
            for (int i = 0; i < 6; i++) p[i] = PLANE(m, 6 * i + j);                      \
            for (int64_t k = 0; k < cb; k++)                                             \
                APPLY(W4_AT, FOUR(s, [j][k]), SIX(p, [k]));                              \
        }                                                                                \
        for (int i = 0; i < 4 && 4 * ty + i < oh; i++) {                                 \
            T row[4][WB];                                                                \
            for (int64_t k = 0; k < cb; k++)                                             \
                APPLY(W4_AT, FOUR(row, [k]), SIX(s[i], [k]));                            \
            for (int j = 0; j < 4 && 4 * tx + j < ow; j++) {                             \
                T *o = y + ((b * oh + 4 * ty + i) * ow + 4 * tx + j) * c + c0;           \
                for (int64_t k = 0; k < cb; k++) o[k] = row[j][k];                       \
            }                                                                            \
        }                                                                                \
    }                                                                                    \
}                                                                                        \
void NAME##_wino4_out_adj(int64_t oh, int64_t ow, int64_t c, int64_t th, int64_t tw,     \
                          int64_t t0, int64_t count, int64_t ld, int64_t pt, int64_t pl, \
                          const T *restrict dy, T *restrict dm) {                        \
    TILES {                                                                              \
        TILE_INDEX                                                                       \
        T e[4][4][WB], p[6][4][WB];                                                      \
        LOAD_TILE(e, 4, dy, oh, ow, 4 * ty, 4 * tx);                                     \
        for (int j = 0; j < 4; j++)                                                      \
        for (int64_t k = 0; k < cb; k++)                                                 \
            APPLY(W4_A, SIX(p, [j][k]), FOUR(e, [j][k]));                                \
        for (int i = 0; i < 6; i++) {                                                    \
            T *o[6];                                                                     \
            for (int j = 0; j < 6; j++) o[j] = PLANE(dm, 6 * i + j);                     \
            for (int64_t k = 0; k < cb; k++)                                             \
                APPLY(W4_A, SIX(o, [k]), FOUR(p[i], [k]));                               \
        }                                                                                \
    }                                                                                    \
}                                                                                        \
void NAME##_wino4_in_adj(int64_t h, int64_t w, int64_t c, int64_t th, int64_t tw,        \
                         int64_t t0, int64_t count, int64_t ld, int64_t pt, int64_t pl,  \
                         const T *restrict dv, T *restrict dx) {                         \
    TILES {                                                                              \
        TILE_INDEX                                                                       \
        T q[6][6][WB];                                                                   \
        for (int j = 0; j < 6; j++) {                                                    \
            const T *p[6];                                                               \
            for (int i = 0; i < 6; i++) p[i] = PLANE(dv, 6 * i + j);                     \
            for (int64_t k = 0; k < cb; k++)                                             \
                APPLY(W4_B, SIX(q, [j][k]), SIX(p, [k]));                                \
        }                                                                                \
        for (int i = 0; i < 6 && 4 * ty + i - pt < h; i++) {                             \
            if (4 * ty + i - pt < 0)                                                     \
                continue;                                                                \
            T row[6][WB];                                                                \
            for (int64_t k = 0; k < cb; k++)                                             \
                APPLY(W4_B, SIX(row, [k]), SIX(q[i], [k]));                              \
            for (int j = 0; j < 6 && 4 * tx + j - pl < w; j++) {                         \
                if (4 * tx + j - pl < 0)                                                 \
                    continue;                                                            \
                T *o = dx + ((b * h + 4 * ty + i - pt) * w + 4 * tx + j - pl) * c + c0;  \
                for (int64_t k = 0; k < cb; k++) o[k] += row[j][k];                      \
            }                                                                            \
        }                                                                                \
    }                                                                                    \
}
WINOGRAD4(nn_float32, float)
WINOGRAD4(nn_float64, double)
"""

_DTYPES = ("float32", "float64")
_NAMES = ("wino_in", "wino_out", "wino_out_adj", "wino_in_adj")
# G of each tile size m (outputs per tile side): U = G g G^T.
_G = {2: numpy.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0.0, 0.0, 1.0]]),
      4: numpy.array([[1 / 4, 0, 0], [-1 / 6, -1 / 6, -1 / 6], [-1 / 6, 1 / 6, -1 / 6],
                      [1 / 24, 1 / 12, 1 / 6], [1 / 24, -1 / 12, 1 / 6], [0, 0, 1]])}
MIN_CHANNELS = 8       # below this the transforms cost more than the products save
# Tiles per block: as many as keep each plane's product within MAX_PLANE_WORK multiply-adds,
# with the block's transforms (planes x tiles x channels) between MIN_BLOCK_BYTES and
# BLOCK_BYTES. Larger blocks make larger products (4 MB against 1 MB: the valid CNN's step
# +12%); OpenBLAS's small-matrix kernels take products up to 100^3 multiply-adds, and past
# that two threads' concurrent products stalled now and then (a filter gradient's 36
# (32, 576) @ (576, 64) planes: 20-360 ms instead of 3).
BLOCK_BYTES = 1 << 22
MIN_BLOCK_BYTES = 1 << 20
MAX_PLANE_WORK = 100 ** 3
MIN_PART_PLANES = 8192   # tile planes per thread at least: fewer do not pay for the handoff
# The largest tile size used: 4 (F(4x4, 3x3)) or 2 (F(2x2, 3x3) only, the more accurate).
MAX_TILE = int(os.environ.get("MINITF_WINOGRAD_TILE", "4"))


def _kernel_name(name, m):
    return name if m == 2 else name.replace("wino", "wino4", 1)


class Kernels:
    """The compiled transforms, as ``fns[name][dtype name]`` (F(4x4, 3x3)'s named wino4_*)."""

    def __init__(self, lib):
        self.fns = {}
        for base in _NAMES:
            for name in (base, _kernel_name(base, 4)):
                self.fns[name] = {}
                for dtype in _DTYPES:
                    fn = getattr(lib, f"nn_{dtype}_{name}")
                    fn.argtypes = [ctypes.c_int64] * 10 + [ctypes.c_void_p] * 2
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


# Where Winograd beats im2col (``pays``): the forward and both gradients, measured against
# im2col + MKL's products on a 2-core Xeon (AVX-512), batches of 64 and 128, 7x7 to 28x28
# images, 16 to 128 channels (docs/performance-intel.md). Small outputs lose (7x7: 0.3-0.6x
# im2col's speed; the transforms and the (tiles, C) @ (C, O) products of few tiles cost more
# than the multiply-adds they save), as do 16 input channels on 14x14 images (0.6-0.95x);
# 32 channels from 12x12 outputs win or tie (0.9-3.6x), 16 from 26x26 mostly (0.8-1.9x).
MIN_OUTPUT_PIXELS = 100
MIN_OUTPUT_PIXELS_FEW_CHANNELS = 400
FEW_CHANNELS = 32       # input channels below this need the larger outputs
MIN_CHANNELS_TO_PAY = 16


def pays(x_shape, w_shape):
    """Whether Winograd runs this 3x3 convolution (``applies``) faster than im2col: by the
    output's size per image and the input channels (measured; see the constants)."""
    pixels = (x_shape[1] - 2) * (x_shape[2] - 2)
    channels = w_shape[2]
    if channels < MIN_CHANNELS_TO_PAY or pixels < MIN_OUTPUT_PIXELS:
        return False
    return channels >= FEW_CHANNELS or pixels >= MIN_OUTPUT_PIXELS_FEW_CHANNELS


def tile_size(oh, ow):
    """Outputs per tile side for an (oh, ow) output: 4 where its 6x6 tiles make fewer
    transformed values (so fewer multiplies) than 2's 4x4 tiles, else 2. Fixed by the shape,
    so a forward pass and its gradients always agree."""
    def planes(m):
        return -(-oh // m) * -(-ow // m) * (m + 2) ** 2
    return 4 if MAX_TILE >= 4 and planes(4) < planes(2) else 2


_NO_PADS = ((0, 0), (0, 0))


class _Tiles:
    """The tiling of (N, H, W) images for a 3x3 valid convolution of the images zero-padded by
    ``pads`` (``((top, bottom), (left, right))``), in blocks of tiles or in parts of whole
    images (``kernel_threads``)."""

    def __init__(self, n, h, w, channels, dtype, kernels=None, m=None, product=None,
                 pads=_NO_PADS):
        (top, bottom), (left, right) = pads
        self.n, self.h, self.w, self.top, self.left = n, h, w, top, left
        self.oh, self.ow = h + top + bottom - 2, w + left + right - 2
        self.m = tile_size(self.oh, self.ow) if m is None else m
        self.planes = (self.m + 2) ** 2
        self.th, self.tw = -(-self.oh // self.m), -(-self.ow // self.m)
        self.count = n * self.th * self.tw
        self.fns = (kernels or _kernels()).fns
        self.dtype = numpy.dtype(dtype)
        tile_bytes = self.planes * channels * self.dtype.itemsize
        self.block = max(1, BLOCK_BYTES // tile_bytes)
        if product is not None:   # (C, O): a plane's product is (tiles, C) @ (C, O)
            small = MAX_PLANE_WORK // max(1, product[0] * product[1])
            self.block = max(1, min(self.block, max(small, MIN_BLOCK_BYTES // tile_bytes)))

    def parts(self):
        """Tile ranges of whole images, one per thread (tiles of one image overlap in the
        input, so two threads never add into one image)."""
        per_image = self.th * self.tw
        minimum = -(-MIN_PART_PLANES // (per_image * self.planes))
        return [(a * per_image, b * per_image) for a, b in kernel_threads.split(self.n, minimum)]

    def blocks(self, start, stop):
        for t0 in range(start, stop, self.block):
            yield t0, min(self.block, stop - t0)

    def run(self, name, src, dst, t0, count, ld=None):
        """One kernel over tiles ``t0 .. t0 + count - 1``; the block (``src`` or ``dst``,
        whichever is not the images) has planes ``ld`` rows apart (default ``count``)."""
        if name in ("wino_in", "wino_in_adj"):      # input-side images (N, H, W, C)
            size, image = (self.h, self.w), src if name == "wino_in" else dst
            pads = self.top, self.left
        else:                                       # output-side images (N, OH, OW, O)
            size, image = (self.oh, self.ow), dst if name == "wino_out" else src
            pads = 0, 0
        self.fns[_kernel_name(name, self.m)][self.dtype.name](
            *size, image.shape[-1], self.th, self.tw, t0, count, count if ld is None else ld,
            *pads, src.ctypes.data, dst.ctypes.data)
        return dst

    def new_block(self, count, channels):
        return numpy.empty((self.planes, count, channels), self.dtype)

    def scratch(self, channels):
        """A block's transforms (planes, block, channels), reused block after block by one
        part: a few buffers per call instead of a few per block (less to allocate, and less
        for the allocator's per-thread arenas to hold)."""
        return self.new_block(self.block, channels)

    def input_block(self, x, t0, count, out):
        """V of tiles ``t0 .. t0 + count - 1``, written into ``out`` (a ``scratch``)."""
        self.run("wino_in", x, out, t0, count, ld=self.block)
        return out[:, :count]

    def output_grad_block(self, g, t0, count, out):
        """A e A^T of the output gradient's tiles, written into ``out`` (a ``scratch``)."""
        self.run("wino_out_adj", g, out, t0, count, ld=self.block)
        return out[:, :count]

    def filters(self, w):
        """``U``: (planes, C, O) = G w G^T per (C, O) pair. F(2x2, 3x3)'s G (halves) is exact
        in w's dtype; F(4x4, 3x3)'s (sixths) is applied in float64 and rounded once."""
        g = _G[self.m]
        work = w.dtype if self.m == 2 else numpy.float64
        u = _sandwich(g.astype(work), w.astype(work, copy=False), g.astype(work))
        return numpy.ascontiguousarray(u.reshape(self.planes, *w.shape[2:]), dtype=w.dtype)

    def filters_adjoint(self, du, dtype):
        """G^T dU G per (C, O) pair: the filter gradient from dU (planes, C, O)."""
        t = self.m + 2
        g = _G[self.m]
        return _sandwich(g.T, du.reshape(t, t, *du.shape[1:]), g.T).astype(dtype)


def transform_input(x, pads=_NO_PADS):
    """``V``: (planes, tiles, C) of images ``x`` (N, H, W, C) zero-padded by ``pads``, for
    ``conv`` and ``filter_grad`` to share."""
    x = numpy.ascontiguousarray(x)
    tiles = _Tiles(*x.shape, x.dtype, pads=pads)
    v = tiles.new_block(tiles.count, x.shape[-1])

    def part(start, stop):   # planes of the whole array: tiles.count rows apart
        tiles.run("wino_in", x, v[:, start:], start, stop - start, ld=tiles.count)

    kernel_threads.run(part, tiles.parts())
    return v


def _sandwich(left, a, right):
    """``left @ a[:, :, c, o] @ right.T`` for every (c, o) of ``a`` (I, J, C, O)."""
    rows = numpy.tensordot(left, a, axes=(1, 0))                # (A, J, C, O)
    return numpy.moveaxis(numpy.tensordot(rows, right, axes=(1, 1)), -1, 1)   # (A, B, C, O)


# The products run a block of tiles at a time (its transforms stay in cache), each thread
# taking the blocks of its own images.

def conv(x, w, v=None, pads=_NO_PADS):
    """Valid 3x3 cross-correlation of ``x`` (N, H, W, C) zero-padded by ``pads``
    (``((top, bottom), (left, right))``, no padded copy made) with ``w`` (3, 3, C, O); ``v``
    is ``transform_input(x, pads)`` when the caller has it."""
    x = numpy.ascontiguousarray(x)
    n, h, wd, c = x.shape
    o = w.shape[3]
    tiles = _Tiles(n, h, wd, max(c, o), x.dtype, product=(c, o), pads=pads)
    u = tiles.filters(w)
    y = numpy.empty((n, tiles.oh, tiles.ow, o), x.dtype)

    def part(start, stop):
        vbuf, mbuf = tiles.scratch(c) if v is None else None, tiles.scratch(o)
        for t0, count in tiles.blocks(start, stop):
            vb = tiles.input_block(x, t0, count, vbuf) if v is None else v[:, t0:t0 + count]
            numpy.matmul(vb, u, out=mbuf[:, :count])
            tiles.run("wino_out", mbuf, y, t0, count, ld=tiles.block)

    kernel_threads.run(part, tiles.parts(), uses_blas=True)
    return y


def input_grad(g, w, size, pads=_NO_PADS):
    """x's gradient (N, H, W, C), ``size`` = (H, W), from the output gradient ``g``
    (N, OH, OW, O) of ``conv(x, w, pads=pads)``."""
    g = numpy.ascontiguousarray(g)
    n, o, c = g.shape[0], g.shape[-1], w.shape[2]
    tiles = _Tiles(n, *size, max(c, o), g.dtype, product=(c, o), pads=pads)
    ut = numpy.ascontiguousarray(tiles.filters(w).transpose(0, 2, 1))
    dx = numpy.zeros((n,) + tuple(size) + (c,), g.dtype)

    def part(start, stop):
        dmbuf, dvbuf = tiles.scratch(o), tiles.scratch(c)
        for t0, count in tiles.blocks(start, stop):
            numpy.matmul(tiles.output_grad_block(g, t0, count, dmbuf), ut,
                         out=dvbuf[:, :count])
            tiles.run("wino_in_adj", dvbuf, dx, t0, count, ld=tiles.block)

    kernel_threads.run(part, tiles.parts(), uses_blas=True)
    return dx


def filter_grad(x, g, v=None, pads=_NO_PADS):
    """w's gradient (3, 3, C, O) from the input ``x`` (or its ``transform_input``, ``v``)
    and the output gradient ``g`` of ``conv(x, w, pads=pads)``."""
    x, g = numpy.ascontiguousarray(x), numpy.ascontiguousarray(g)
    c, o = x.shape[-1], g.shape[-1]
    tiles = _Tiles(*x.shape[:3], max(c, o), g.dtype, product=(c, o), pads=pads)
    parts = tiles.parts()
    sums = {start: numpy.zeros((tiles.planes, c, o), g.dtype) for start, _ in parts}

    def part(start, stop):
        du = sums[start]
        vbuf, dmbuf = tiles.scratch(c) if v is None else None, tiles.scratch(o)
        product = numpy.empty_like(du)
        for t0, count in tiles.blocks(start, stop):
            vb = tiles.input_block(x, t0, count, vbuf) if v is None else v[:, t0:t0 + count]
            du += numpy.matmul(vb.transpose(0, 2, 1),
                               tiles.output_grad_block(g, t0, count, dmbuf), out=product)

    kernel_threads.run(part, parts, uses_blas=True)
    du = sum(sums[start] for start, _ in parts)    # a fixed order: deterministic
    return tiles.filters_adjoint(du, g.dtype)


def matches_direct(kernels):
    """The forward and both gradients of both tile sizes against a direct convolution in
    float64, over several blocks of tiles, both odd and even output sizes, unpadded and
    zero-padded images (a start-up check: a miscompiled transform must never train a model)."""
    rng = numpy.random.default_rng(0)
    x = rng.standard_normal((2, 11, 8, 9))
    w = rng.standard_normal((3, 3, 9, 8))
    for pads in (_NO_PADS, ((1, 1), (2, 1))):
        (top, bottom), (left, right) = pads
        padded = numpy.pad(x, ((0, 0), (top, bottom), (left, right), (0, 0)))
        oh, ow = padded.shape[1] - 2, padded.shape[2] - 2
        g = rng.standard_normal((2, oh, ow, 8))
        direct = numpy.zeros((2, oh, ow, 8))
        dx = numpy.zeros_like(padded)
        for i in range(3):
            for j in range(3):
                direct += padded[:, i:i + oh, j:j + ow] @ w[i, j]
                dx[:, i:i + oh, j:j + ow] += g @ w[i, j].T
        dx = dx[:, top:top + 11, left:left + 8]
        dw = numpy.stack([numpy.stack([numpy.einsum("nhwc,nhwo->co",
                                                    padded[:, i:i + oh, j:j + ow], g)
                                       for j in range(3)]) for i in range(3)])
        for m in (2, 4):
            tiles = _Tiles(2, 11, 8, 9, numpy.float64, kernels, m=m, pads=pads)
            tiles.block = 5                                  # several blocks, one part-filled
            u = tiles.filters(w)
            y = numpy.empty_like(direct)
            got_dx = numpy.zeros_like(x)
            du = numpy.zeros((tiles.planes, 9, 8))
            vbuf, dmbuf = tiles.scratch(9), tiles.scratch(8)
            for t0, count in tiles.blocks(0, tiles.count):
                vb = tiles.input_block(x, t0, count, vbuf)
                tiles.run("wino_out", numpy.matmul(vb, u), y, t0, count)
                dm = tiles.output_grad_block(g, t0, count, dmbuf)
                tiles.run("wino_in_adj", numpy.matmul(dm, u.transpose(0, 2, 1)), got_dx, t0,
                          count)
                du += numpy.matmul(vb.transpose(0, 2, 1), dm)
            got_dw = tiles.filters_adjoint(du, numpy.float64)
            if not all(numpy.allclose(a, b, rtol=1e-11, atol=1e-11)
                       for a, b in [(y, direct), (got_dx, dx), (got_dw, dw)]):
                return False
    return True
