"""The C source of ``minitf.native_nn``'s kernels (compiled by ``minitf.native``, one
instance per float dtype); ``minitf.native_nn`` has what each computes and its wrappers."""
SOURCE = r"""
#include <string.h>
/* Non-overlapping max pooling of contiguous NHWC x (n, h, w, c), windows kh x kw, VALID. */
#define MAXPOOL(NAME, T)                                                                 \
void NAME##_fwd(int64_t n, int64_t h, int64_t w, int64_t c, int64_t kh, int64_t kw,      \
                const T *restrict x, T *restrict out, uint8_t *restrict arg) {           \
    int64_t oh = h / kh, ow = w / kw;                                                    \
    for (int64_t b = 0; b < n; b++)                                                      \
    for (int64_t i = 0; i < oh; i++)                                                     \
    for (int64_t j = 0; j < ow; j++) {                                                   \
        T *restrict o = out + ((b * oh + i) * ow + j) * c;                               \
        const T *restrict base = x + ((b * h + i * kh) * w + j * kw) * c;                \
        memcpy(o, base, c * sizeof(T));                                                  \
        for (int64_t qi = 0; qi < kh; qi++)                                              \
        for (int64_t qj = (qi == 0); qj < kw; qj++) {                                    \
            const T *restrict p = base + (qi * w + qj) * c;                              \
            for (int64_t ch = 0; ch < c; ch++) {                                         \
                T m = o[ch], v = p[ch];                                                  \
                o[ch] = (m > v || m != m) ? m : v;                                       \
            }                                                                            \
        }                                                                                \
        if (!arg) continue;                                                              \
        uint8_t *restrict a = arg + ((b * oh + i) * ow + j) * c;                         \
        memset(a, (int)(kh * kw - 1), c);                                                \
        for (int64_t qi = kh - 1; qi >= 0; qi--)                                         \
        for (int64_t qj = kw - 1; qj >= 0; qj--) {                                       \
            const T *restrict p = base + (qi * w + qj) * c;                              \
            uint8_t q = (uint8_t)(qi * kw + qj);                                         \
            for (int64_t ch = 0; ch < c; ch++)                                           \
                a[ch] = p[ch] == o[ch] ? q : a[ch];                                      \
        }                                                                                \
    }                                                                                    \
}                                                                                        \
/* s[ch] += x[r * c + ch] over rows r in order, in double: the one order of per-channel sums */ \
static inline void NAME##_add_rows(int64_t rows, int64_t c, const T *restrict x,         \
                                   double *restrict s) {                                 \
    for (int64_t r = 0; r < rows; r++)                                                   \
        for (int64_t ch = 0; ch < c; ch++) s[ch] += x[r * c + ch];                       \
}                                                                                        \
/* Per-image channel sums of x (n, rows, c) into sums (n, c). */                         \
void NAME##_image_sums(int64_t n, int64_t rows, int64_t c, const T *restrict x,          \
                       double *restrict sums) {                                          \
    for (int64_t b = 0; b < n; b++) {                                                    \
        for (int64_t ch = 0; ch < c; ch++) sums[b * c + ch] = 0;                         \
        NAME##_add_rows(rows, c, x + b * rows * c, sums + b * c);                        \
    }                                                                                    \
}                                                                                        \
/* s0 += g, s1 += g * xhat per channel over rows (xhat = (x - mean) * inv), in double: the  \
   one order of batch norm's parameter gradients (bn_reduce). */                          \
static inline void NAME##_add_bn_rows(int64_t rows, int64_t c, const T *restrict g,      \
                                      const T *restrict x, const T *restrict mean,       \
                                      const T *restrict inv, double *restrict s0,        \
                                      double *restrict s1) {                             \
    for (int64_t r = 0; r < rows; r++)                                                   \
        for (int64_t ch = 0; ch < c; ch++) {                                             \
            T gv = g[r * c + ch];                                                        \
            T xhat = (x[r * c + ch] - mean[ch]) * inv[ch];                               \
            s0[ch] += gv;                                                                \
            s1[ch] += gv * xhat;                                                         \
        }                                                                                \
}                                                                                        \
/* y (x's shape) or NULL: with y, each element is then masked as relu_grad(dx, y) does.      \
   sums (n, c) or NULL: with sums, each image's per-channel sums of dx, in double and in the   \
   order NAME##_image_sums adds them (row by row, as each row is written). bn_x (x's shape)   \
   or NULL: with it, dx's batch norm parameter sums added into bn_s0 and bn_s1 (c each) as     \
   each row is written, in bn_reduce's order. */                                          \
void NAME##_bwd(int64_t n, int64_t h, int64_t w, int64_t c, int64_t kh, int64_t kw,      \
                const T *restrict g, const uint8_t *restrict arg, const T *restrict y,   \
                T *restrict dx, double *restrict sums, const T *restrict bn_x,           \
                const T *restrict mean, const T *restrict inv, double *restrict bn_s0,   \
                double *restrict bn_s1) {                                                \
    int64_t oh = h / kh, ow = w / kw, k = kh * kw;                                       \
    for (int64_t b = 0; b < n; b++) {                                                    \
    if (sums)                                                                            \
        for (int64_t ch = 0; ch < c; ch++) sums[b * c + ch] = 0;                         \
    for (int64_t r = 0; r < h; r++) {                                                    \
        T *restrict row = dx + (b * h + r) * w * c;                                      \
        if (r >= oh * kh) {                                                              \
            for (int64_t e = 0; e < w * c; e++) row[e] = 0;                              \
            if (sums) NAME##_add_rows(w, c, row, sums + b * c);                           \
            if (bn_x) NAME##_add_bn_rows(w, c, row, bn_x + (b * h + r) * w * c, mean, inv, \
                                         bn_s0, bn_s1);                                  \
            continue;                                                                    \
        }                                                                                \
        int64_t i = r / kh, qi = (r % kh) * kw;                                          \
        const T *restrict yrow = y ? y + (b * h + r) * w * c : 0;                        \
        for (int64_t j = 0; j < ow; j++) {                                               \
            const T *restrict gi = g + ((b * oh + i) * ow + j) * c;                      \
            const uint8_t *restrict a = arg + ((b * oh + i) * ow + j) * c;               \
            for (int64_t qj = 0; qj < kw; qj++) {                                        \
                T *restrict d = row + (j * kw + qj) * c;                                 \
                uint8_t q = (uint8_t)(qi + qj);                                          \
                if (yrow) {                                                              \
                    const T *restrict yy = yrow + (j * kw + qj) * c;                     \
                    for (int64_t ch = 0; ch < c; ch++)                                   \
                        d[ch] = (gi[ch] * (T)(a[ch] == q)) * (T)(yy[ch] > 0);            \
                } else {                                                                 \
                    for (int64_t ch = 0; ch < c; ch++)                                   \
                        d[ch] = gi[ch] * (T)(a[ch] == q);                                \
                }                                                                        \
            }                                                                            \
        }                                                                                \
        for (int64_t e = ow * kw * c; e < w * c; e++) row[e] = 0;                        \
        if (sums) NAME##_add_rows(w, c, row, sums + b * c);                               \
        if (bn_x) NAME##_add_bn_rows(w, c, row, bn_x + (b * h + r) * w * c, mean, inv,   \
                                     bn_s0, bn_s1);                                      \
    }                                                                                    \
    }                                                                                    \
    (void)k;                                                                             \
}                                                                                        \
void NAME##_bias_relu(int64_t rows, int64_t c, const T *x, const T *restrict bias,     \
                      T *out) {                                                          \
    for (int64_t r = 0; r < rows; r++) {      /* out may be x: element-wise in place */  \
        const T *xr = x + r * c;                                                         \
        T *o = out + r * c;                                                              \
        for (int64_t ch = 0; ch < c; ch++) {                                             \
            T z = xr[ch] + bias[ch];                                                     \
            o[ch] = (z > 0 || z != z) ? z : (T)0;                                        \
        }                                                                                \
    }                                                                                    \
}                                                                                        \
void NAME##_relu(int64_t size, const T *x, T *out) {              /* out may be x */     \
    for (int64_t e = 0; e < size; e++) out[e] = (x[e] > 0 || x[e] != x[e]) ? x[e] : (T)0;  \
}                                                                                        \
void NAME##_relu_grad(int64_t size, const T *g, const T *y, T *out) {  /* out may be g */ \
    for (int64_t e = 0; e < size; e++) out[e] = g[e] * (T)(y[e] > 0);                    \
}                                                                                        \
/* relu_grad of n images of `rows` contiguous runs of `len` elements each: g's and out's runs \
   at strides (gn, gr) and (on, or_) elements (a slice of a padded image's gradient), y's at  \
   (yn, yr) (0 where one run of y serves several: a stack of cotangents over one y). With     \
   sums (n, c), each image's channel sums of the result, pixels in memory order: image_sums'  \
   bits. */                                                                              \
void NAME##_relu_grad_rows(int64_t n, int64_t rows, int64_t len, int64_t c, const T *g,  \
                           int64_t gn, int64_t gr, const T *y, int64_t yn, int64_t yr,   \
                           T *out, int64_t on, int64_t or_, double *sums) {              \
    for (int64_t b = 0; b < n; b++) {                                                    \
        if (sums)                                                                        \
            for (int64_t ch = 0; ch < c; ch++) sums[b * c + ch] = 0;                     \
        for (int64_t r = 0; r < rows; r++) {                                             \
            T *o = out + b * on + r * or_;                                               \
            NAME##_relu_grad(len, g + b * gn + r * gr, y + b * yn + r * yr, o);          \
            if (sums) NAME##_add_rows(len / c, c, o, sums + b * c);                      \
        }                                                                                \
    }                                                                                    \
}                                                                                        \
/* a = relu(x + bias) (bias NULL: relu(x)), then its max pooling, image by image while the   \
   image's activations are in cache: the two kernels above, in one pass over memory. */       \
void NAME##_relu_pool(int64_t n, int64_t h, int64_t w, int64_t c, int64_t kh, int64_t kw, \
                      const T *x, const T *bias, T *a, T *out, uint8_t *arg) {           \
    int64_t image = h * w * c, pooled = (h / kh) * (w / kw) * c;                         \
    for (int64_t b = 0; b < n; b++) {                                                    \
        if (bias) NAME##_bias_relu(h * w, c, x + b * image, bias, a + b * image);       \
        else NAME##_relu(image, x + b * image, a + b * image);                           \
        NAME##_fwd(1, h, w, c, kh, kw, a + b * image, out + b * pooled, arg + b * pooled); \
    }                                                                                    \
}
MAXPOOL(nn_float32, float)
MAXPOOL(nn_float64, double)

/* Sliding windows of NHWC x (n, h, w, c) zero-padded by pt rows above, pb below, pl columns
   left and pr right (no padded copy: the padding reads as zeros): out (n, oh, ow, kh, kw, c). */
#define PATCHES(NAME, T)                                                                 \
void NAME##_patches(int64_t n, int64_t h, int64_t w, int64_t c, int64_t kh, int64_t kw,  \
                    int64_t sh, int64_t sw, int64_t dh, int64_t dw, int64_t pt,          \
                    int64_t pb, int64_t pl, int64_t pr, const T *restrict x,             \
                    T *restrict out) {                                                   \
    int64_t oh = (h + pt + pb - (kh - 1) * dh - 1) / sh + 1;                             \
    int64_t ow = (w + pl + pr - (kw - 1) * dw - 1) / sw + 1;                             \
    for (int64_t b = 0; b < n; b++)                                                      \
    for (int64_t y = 0; y < oh; y++)                                                     \
    for (int64_t xo = 0; xo < ow; xo++) {                                                \
        T *restrict o = out + ((b * oh + y) * ow + xo) * kh * kw * c;                    \
        int64_t x0 = xo * sw - pl;                                                       \
        int inside = x0 >= 0 && x0 + (kw - 1) * dw < w;                                  \
        for (int64_t i = 0; i < kh; i++) {                                               \
            int64_t r = y * sh + i * dh - pt;                                            \
            if (r < 0 || r >= h) {                                                       \
                memset(o, 0, kw * c * sizeof(T));                                        \
                o += kw * c;                                                             \
                continue;                                                                \
            }                                                                            \
            const T *row = x + (b * h + r) * w * c;                                      \
            if (dw == 1 && inside) {                                                     \
                memcpy(o, row + x0 * c, kw * c * sizeof(T));                             \
                o += kw * c;                                                             \
            } else {                                                                     \
                for (int64_t j = 0; j < kw; j++, o += c) {                               \
                    int64_t col = x0 + j * dw;                                           \
                    if (col >= 0 && col < w)                                             \
                        memcpy(o, row + col * c, c * sizeof(T));                         \
                    else                                                                 \
                        memset(o, 0, c * sizeof(T));                                     \
                }                                                                        \
            }                                                                            \
        }                                                                                \
    }                                                                                    \
}
PATCHES(nn_float32, float)
PATCHES(nn_float64, double)

/* The adjoint of PATCHES: out (n, h, w, c) = 0, then each window added back where it came
   from (entries over the padding dropped), windows in order (reading cols in order: three
   times faster than gathering each pixel's entries). */
#define COL2IM(NAME, T)                                                                  \
void NAME##_col2im(int64_t n, int64_t h, int64_t w, int64_t c, int64_t kh, int64_t kw,   \
                   int64_t sh, int64_t sw, int64_t dh, int64_t dw, int64_t pt,           \
                   int64_t pb, int64_t pl, int64_t pr, const T *restrict cols,           \
                   T *restrict out) {                                                    \
    int64_t oh = (h + pt + pb - (kh - 1) * dh - 1) / sh + 1;                             \
    int64_t ow = (w + pl + pr - (kw - 1) * dw - 1) / sw + 1;                             \
    memset(out, 0, n * h * w * c * sizeof(T));                                           \
    for (int64_t b = 0; b < n; b++)                                                      \
    for (int64_t y = 0; y < oh; y++)                                                     \
    for (int64_t x = 0; x < ow; x++) {                                                   \
        const T *src = cols + ((b * oh + y) * ow + x) * kh * kw * c;                     \
        int64_t x0 = x * sw - pl;                                                        \
        /* with dw == 1 a window row is one run of (j1 - j0) * c image elements */       \
        int64_t j0 = x0 < 0 ? -x0 : 0, j1 = x0 + kw > w ? w - x0 : kw;                   \
        for (int64_t i = 0; i < kh; i++) {                                               \
            int64_t r = y * sh + i * dh - pt;                                            \
            if (r < 0 || r >= h) continue;                                               \
            T *row = out + (b * h + r) * w * c;                                          \
            const T *s = src + i * kw * c;                                               \
            if (dw == 1) {                                                               \
                if (j1 <= j0) continue;            /* the whole window on the padding */ \
                T *restrict o = row + (x0 + j0) * c;                                     \
                const T *restrict sj = s + j0 * c;                                       \
                for (int64_t t = 0; t < (j1 - j0) * c; t++) o[t] += sj[t];               \
                continue;                                                                \
            }                                                                            \
            for (int64_t j = 0; j < kw; j++) {                                           \
                int64_t col = x0 + j * dw;                                               \
                if (col < 0 || col >= w) continue;                                       \
                T *o = row + col * c;                                                    \
                const T *sj = s + j * c;                                                 \
                for (int64_t ch = 0; ch < c; ch++) o[ch] += sj[ch];                      \
            }                                                                            \
        }                                                                                \
    }                                                                                    \
}
COL2IM(nn_float32, float)
COL2IM(nn_float64, double)

/* Batch normalization over the rows of x (n, c): sums in double, element-wise steps in T in
   the order of the numpy formulas (xhat = (x - mean) * inv). */
#define BATCHNORM(NAME, T)                                                               \
void NAME##_bn_sums(int64_t n, int64_t c, const T *restrict x,                        \
                    const double *restrict mean, double *restrict out) {                 \
    /* sums of x per channel, or of (x - mean)^2 where mean is given */                  \
    for (int64_t ch = 0; ch < c; ch++) out[ch] = 0;                                      \
    if (!mean) {                                                                         \
        for (int64_t r = 0; r < n; r++)                                                  \
            for (int64_t ch = 0; ch < c; ch++) out[ch] += x[r * c + ch];                 \
        return;                                                                          \
    }                                                                                    \
    for (int64_t r = 0; r < n; r++)                                                      \
        for (int64_t ch = 0; ch < c; ch++) {                                             \
            double d = x[r * c + ch] - mean[ch];                                         \
            out[ch] += d * d;                                                            \
        }                                                                                \
}                                                                                        \
void NAME##_bn_shifted_sums(int64_t n, int64_t c, const T *restrict x,                 \
                            const T *restrict shift, double *restrict s1,                \
                            double *restrict s2) {                                       \
    /* sums of d = x - shift and of d^2 per channel, in double: both moments in one pass */ \
    for (int64_t ch = 0; ch < c; ch++) s1[ch] = s2[ch] = 0;                              \
    for (int64_t r = 0; r < n; r++)                                                      \
        for (int64_t ch = 0; ch < c; ch++) {                                             \
            double d = (double)x[r * c + ch] - (double)shift[ch];                        \
            s1[ch] += d;                                                                 \
            s2[ch] += d * d;                                                             \
        }                                                                                \
}                                                                                        \
void NAME##_bn_apply(int64_t n, int64_t c, const T *restrict x, const T *restrict mean,  \
                     const T *restrict inv, const T *restrict gamma,                     \
                     const T *restrict beta, T *restrict y) {                            \
    for (int64_t r = 0; r < n; r++)                                                      \
        for (int64_t ch = 0; ch < c; ch++) {                                             \
            T xhat = (x[r * c + ch] - mean[ch]) * inv[ch];                               \
            y[r * c + ch] = xhat * gamma[ch] + beta[ch];                                 \
        }                                                                                \
}                                                                                        \
void NAME##_bn_reduce(int64_t n, int64_t c, const T *restrict x, const T *restrict g,    \
                      const T *restrict mean, const T *restrict inv,                     \
                      double *restrict s0, double *restrict s1) {                        \
    for (int64_t ch = 0; ch < c; ch++) s0[ch] = s1[ch] = 0;                              \
    NAME##_add_bn_rows(n, c, g, x, mean, inv, s0, s1);                                   \
}                                                                                        \
void NAME##_bn_input_grad(int64_t n, int64_t c, const T *restrict x, const T *restrict g, \
                          const T *restrict mean, const T *restrict inv,                 \
                          const T *restrict m1, const T *restrict b0,                    \
                          const T *restrict a, T *restrict out) {                        \
    for (int64_t r = 0; r < n; r++)                                                      \
        for (int64_t ch = 0; ch < c; ch++) {                                             \
            T xhat = (x[r * c + ch] - mean[ch]) * inv[ch];                               \
            out[r * c + ch] = ((xhat * m1[ch] + g[r * c + ch]) - b0[ch]) * a[ch];        \
        }                                                                                \
}
BATCHNORM(nn_float32, float)
BATCHNORM(nn_float64, double)
/* a = relu(batch norm of x) (bn_apply's output, then relu in place), then its max pooling,
   image by image while the image is in cache: bn_apply, relu_pool's relu and pool, in one
   pass over memory (the normalized values are never written out). */
#define BN_RELU_POOL(NAME, T)                                                            \
void NAME##_bn_relu_pool(int64_t n, int64_t h, int64_t w, int64_t c, int64_t kh,         \
                         int64_t kw, const T *x, const T *mean, const T *inv,            \
                         const T *gamma, const T *beta, T *a, T *out, uint8_t *arg) {    \
    int64_t image = h * w * c, pooled = (h / kh) * (w / kw) * c;                         \
    for (int64_t b = 0; b < n; b++) {                                                    \
        T *ab = a + b * image;                                                           \
        NAME##_bn_apply(h * w, c, x + b * image, mean, inv, gamma, beta, ab);            \
        NAME##_relu(image, ab, ab);                                                      \
        NAME##_fwd(1, h, w, c, kh, kw, ab, out + b * pooled, arg + b * pooled);          \
    }                                                                                    \
}
BN_RELU_POOL(nn_float32, float)
BN_RELU_POOL(nn_float64, double)
/* Sparse softmax cross-entropy around numpy's exp and sum (so the bits are numpy's):
   ce_shift: each row minus its maximum (NaN propagating); ce_finish_L (labels of type L): the
   exponentials divided by their row's total in place, 1 subtracted at each label, and the
   shifted logit at each label. Returns -1, changing nothing, if a label is out of range. */
#define CROSS_ENTROPY(NAME, T)                                                           \
void NAME##_ce_shift(int64_t rows, int64_t c, const T *restrict x, T *restrict out) {    \
    for (int64_t r = 0; r < rows; r++) {                                                 \
        const T *restrict xr = x + r * c;                                                \
        T m = xr[0];                                                                     \
        for (int64_t k = 1; k < c; k++)                                                  \
            m = (xr[k] > m || xr[k] != xr[k]) ? xr[k] : m;                               \
        for (int64_t k = 0; k < c; k++)                                                  \
            out[r * c + k] = xr[k] - m;                                                  \
    }                                                                                    \
}
#define CROSS_ENTROPY_FINISH(NAME, T, L, SUFFIX)                                          \
int64_t NAME##_ce_finish_##SUFFIX(int64_t rows, int64_t c, const L *restrict labels,      \
                                  const T *restrict shifted, T *restrict e,              \
                                  const T *restrict total, T *restrict picked) {         \
    for (int64_t r = 0; r < rows; r++)                                                   \
        if (labels[r] < 0 || (int64_t)labels[r] >= c)                                    \
            return -1;                                                                   \
    for (int64_t r = 0; r < rows; r++) {                                                 \
        T *restrict er = e + r * c;                                                      \
        T t = total[r];                                                                  \
        for (int64_t k = 0; k < c; k++)                                                  \
            er[k] = er[k] / t;                                                           \
        er[labels[r]] -= 1;                                                              \
        picked[r] = shifted[r * c + labels[r]];                                          \
    }                                                                                    \
    return 0;                                                                            \
}
CROSS_ENTROPY(nn_float32, float)
CROSS_ENTROPY(nn_float64, double)
CROSS_ENTROPY_FINISH(nn_float32, float, int32_t, int32)
CROSS_ENTROPY_FINISH(nn_float32, float, int64_t, int64)
CROSS_ENTROPY_FINISH(nn_float64, double, int32_t, int32)
CROSS_ENTROPY_FINISH(nn_float64, double, int64_t, int64)
"""
