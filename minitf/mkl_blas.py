"""Intel MKL's matrix products, where the optional ``[mkl]`` extra is installed.

On Intel CPUs MKL's ``sgemm`` runs the products of a training step 20-25% faster than numpy's
OpenBLAS (the big MLP's five large products: 1.50-1.58 ms against 1.99-2.03 on a Xeon with
AVX-512; docs/performance-intel.md). minitf loads MKL's sequential library, which starts no
threads of its own, and splits each large product into blocks (rows, columns or the inner
dimension: ``blocks``) over ``minitf.thread_pool``: the workers that already run OpenBLAS's
products and the native kernels, so no second pool spins beside them. (MKL's own OpenMP
threads ran the products as fast, but spinning beside the pool's workers they left the step
no faster and numpy's own products slower; two halves started from Python ran slower than
OpenBLAS: each worker waited ~60 us for the GIL.)

``MINITF_BLAS`` chooses: ``auto`` (the default) uses MKL where it is installed, the CPU is
Intel's and the thread pool runs; ``mkl`` on any CPU (with the pool); ``openblas`` never.
``product(a, b)`` serves float32 and float64 matrices of at least ``MIN_WORK`` multiply-adds
and ``NARROW`` output columns (smaller ones cost less through numpy); the same shapes always
take the same path on the same number of threads, so the results are reproducible, but they
round differently from numpy's ``@`` (another order of summation; a product cut along its
inner dimension adds the threads' partial sums, so its rounding depends on the thread count).
"""
import ctypes
import logging
import os
import threading

import numpy

from . import kernel_threads, thread_pool

logger = logging.getLogger("minitf")

SOURCE = r"""
#include <stdint.h>
#include <string.h>

/* C = A @ B over the pool's threads, each block one sequential MKL gemm (row-major; trans
   111 = no transpose, 112 = transpose, CBLAS's codes). `by` chooses the blocks: 0 columns of C,
   1 rows of C, 2 the inner dimension (part 0 writes C, part p > 0 the m x n matrix p - 1 of
   `spare`; a second pass adds them to C row by row, in the order of the parts). `epi` then
   finishes each block of C on the thread that wrote it, while it is in cache, with native_nn's
   kernels: 1 its bias_relu (bias: n), 2 its relu_grad (mask: m x n, C-ordered). */
typedef void (*gemm_s_fn)(int, int, int, int, int, int, float, const float *, int,
                          const float *, int, float, float *, int);
typedef void (*gemm_d_fn)(int, int, int, int, int, int, double, const double *, int,
                          const double *, int, double, double *, int);
void nn_float32_bias_relu(int64_t, int64_t, const float *, const float *, float *);
void nn_float64_bias_relu(int64_t, int64_t, const double *, const double *, double *);
void nn_float32_relu_grad(int64_t, const float *, const float *, float *);
void nn_float64_relu_grad(int64_t, const double *, const double *, double *);
struct gemm_task {
    void *fn; int is_double, ta, tb, m, n, k, lda, ldb, ldc, by, step, parts, epi;
    const char *a, *b; char *c, *spare; const char *bias, *mask;
};
#define GEMM_EPILOGUE(T, NN)                                                              \
    for (int i = r0; i < r1; i++) {                                                       \
        T *row = (T *)t->c + (long)i * t->ldc + c0;           /* in place: out is x, g */ \
        if (t->epi == 1)                                                                  \
            NN##_bias_relu(1, c1 - c0, row, (const T *)t->bias + c0, row);                \
        else                                                                              \
            NN##_relu_grad(c1 - c0, row, (const T *)t->mask + (long)i * t->n + c0, row);  \
    }
static void gemm_epilogue(struct gemm_task *t, int r0, int r1, int c0, int c1) {
    if (!t->epi)
        return;
    if (t->is_double) {
        GEMM_EPILOGUE(double, nn_float64)
    } else {
        GEMM_EPILOGUE(float, nn_float32)
    }
}
static void gemm_block(void *arg, int part) {
    struct gemm_task *t = (struct gemm_task *)arg;
    long size = t->is_double ? 8 : 4;
    int total = t->by == 0 ? t->n : t->by == 1 ? t->m : t->k;
    int lo = part * t->step, hi = lo + t->step;
    if (hi > total) hi = total;
    const char *a = t->a, *b = t->b;
    char *c = t->c;
    int m = t->m, n = t->n, k = t->k, ldc = t->ldc;
    if (t->by == 2) {
        if (lo >= hi) {         /* an empty block: its spare matrix adds nothing */
            if (part > 0)
                memset(t->spare + (long)(part - 1) * m * n * size, 0, (size_t)m * n * size);
            return;
        }
        a += (long)lo * (t->ta == 111 ? 1 : t->lda) * size;
        b += (long)lo * (t->tb == 111 ? t->ldb : 1) * size;
        if (part > 0) {
            c = t->spare + (long)(part - 1) * m * n * size;
            ldc = n;
        }
        k = hi - lo;
    } else if (lo >= hi) {
        return;
    } else if (t->by == 1) {
        a += (long)lo * (t->ta == 111 ? t->lda : 1) * size;
        c += (long)lo * t->ldc * size;
        m = hi - lo;
    } else {
        b += (long)lo * (t->tb == 111 ? 1 : t->ldb) * size;
        c += (long)lo * size;
        n = hi - lo;
    }
    if (t->is_double)
        ((gemm_d_fn)t->fn)(101, t->ta, t->tb, m, n, k, 1.0, (const double *)a, t->lda,
                           (const double *)b, t->ldb, 0.0, (double *)c, ldc);
    else
        ((gemm_s_fn)t->fn)(101, t->ta, t->tb, m, n, k, 1.0f, (const float *)a, t->lda,
                           (const float *)b, t->ldb, 0.0f, (float *)c, ldc);
    if (t->by == 0)
        gemm_epilogue(t, 0, t->m, lo, hi);
    else if (t->by == 1)
        gemm_epilogue(t, lo, hi, 0, t->n);
    else if (t->parts == 1)
        gemm_epilogue(t, 0, t->m, 0, t->n);
}
#define GEMM_ADD_SPARE(T)                                                                 \
    for (int i = lo; i < hi; i++) {                                                       \
        T *restrict row = (T *)t->c + (long)i * t->ldc;                                   \
        for (int p = 1; p < t->parts; p++) {                                              \
            const T *restrict s = (const T *)t->spare + ((long)(p - 1) * t->m + i) * t->n; \
            for (int j = 0; j < t->n; j++)                                                \
                row[j] += s[j];                                                           \
        }                                                                                 \
    }
static void gemm_add_spare(void *arg, int part) {
    struct gemm_task *t = (struct gemm_task *)arg;
    int lo = (int)((long)t->m * part / t->parts), hi = (int)((long)t->m * (part + 1) / t->parts);
    if (t->is_double) {
        GEMM_ADD_SPARE(double)
    } else {
        GEMM_ADD_SPARE(float)
    }
    gemm_epilogue(t, lo, hi, 0, t->n);
}
void gemm_split(void *fn, int is_double, int ta, int tb, int m, int n, int k, const void *a,
                int lda, const void *b, int ldb, void *c, int ldc, int parts, int by,
                int step, void *spare, int epi, const void *bias, const void *mask) {
    struct gemm_task t = {fn, is_double, ta, tb, m, n, k, lda, ldb, ldc, by, step, parts, epi,
                          (const char *)a, (const char *)b, (char *)c, (char *)spare,
                          (const char *)bias, (const char *)mask};
    if (parts > 1) {
        pool_run(gemm_block, &t, parts);
        if (by == 2)
            pool_run(gemm_add_spare, &t, parts);
    } else {
        gemm_block(&t, 0);
    }
}
"""

MIN_WORK = 1 << 20          # multiply-adds: smaller products run faster on numpy's BLAS, one thread
PART_WORK = 1 << 20         # multiply-adds a thread at least
NARROW = 16                 # outputs narrower than this stay on numpy's BLAS: a 10-class
                            # layer's (128, 1600) @ (1600, 10) took 89 us on MKL, 68 on OpenBLAS
_ALIGN = 16                 # block edges on 16 rows / columns (a cache line of float32)
_NO_TRANS, _TRANS = 111, 112
_BY_COLUMNS, _BY_ROWS, _BY_DEPTH = 0, 1, 2
_SEQUENTIAL, _LP64 = 1, 0   # MKL_Set_Threading_Layer / MKL_Set_Interface_Layer codes

_lock = threading.Lock()
_state = None               # None: not looked at yet; False: not used; else (split, gemms,
                            # whether the epilogues' kernels run)


def _find_library():
    """The path of MKL's runtime library from the installed ``mkl`` distribution, or None."""
    try:
        from importlib import metadata
        dist = metadata.distribution("mkl")
    except Exception:   # noqa: BLE001 -- not installed, or unreadable metadata
        return None
    for entry in dist.files or ():
        if os.path.basename(str(entry)).startswith("libmkl_rt.so"):
            path = str(dist.locate_file(entry))
            if os.path.exists(path):
                return path
    return None


def _intel_cpu(cpuinfo="/proc/cpuinfo"):
    try:
        with open(cpuinfo) as f:
            for line in f:
                if line.startswith("vendor_id"):
                    return line.split(":", 1)[1].strip() == "GenuineIntel"
    except OSError:
        pass
    return False


def choice():
    """``MINITF_BLAS``: ``auto``, ``mkl`` or ``openblas``."""
    value = os.environ.get("MINITF_BLAS", "auto").strip().lower() or "auto"
    if value not in ("auto", "mkl", "openblas"):
        raise ValueError(f"MINITF_BLAS={value!r}: expected 'auto', 'mkl' or 'openblas'")
    return value


def _load():
    wanted = choice()
    if wanted == "openblas" or (wanted == "auto" and not _intel_cpu()):
        return False
    path = _find_library()         # before the native kernels: no compiling without MKL
    if path is None:
        if wanted == "mkl":
            logger.warning("minitf: MINITF_BLAS=mkl but MKL is not installed "
                           "(pip install 'minitf[mkl]'); using numpy's BLAS")
        return False
    from . import native
    kernels = native.kernels()
    if kernels is None or not thread_pool.active():
        return False
    try:
        mkl = ctypes.CDLL(path)
        mkl.MKL_Set_Interface_Layer.argtypes = [ctypes.c_int]
        mkl.MKL_Set_Threading_Layer.argtypes = [ctypes.c_int]
        if (mkl.MKL_Set_Interface_Layer(_LP64) != _LP64
                or mkl.MKL_Set_Threading_Layer(_SEQUENTIAL) != _SEQUENTIAL):
            return False
        gemms = {numpy.dtype(numpy.float32): ctypes.cast(mkl.cblas_sgemm, ctypes.c_void_p).value,
                 numpy.dtype(numpy.float64): ctypes.cast(mkl.cblas_dgemm, ctypes.c_void_p).value}
    except (OSError, AttributeError) as exc:
        logger.debug("minitf: MKL not usable (%s)", exc)
        return False
    split = kernels.lib.gemm_split
    i, p = ctypes.c_int, ctypes.c_void_p
    split.argtypes = [p, i, i, i, i, i, i, p, i, p, i, p, i, i, i, i, p, i, p, p]
    split.restype = None
    logger.debug("minitf: matrix products run on MKL (%s)", path)
    return split, gemms, kernels.nn is not None     # the epilogues are native_nn's kernels


def active():
    """Whether products run on MKL in this process."""
    global _state
    if _state is None:
        with _lock:
            if _state is None:
                _state = _load()
    return _state is not False


def reset():
    """Look at ``MINITF_BLAS`` and the installation again on the next product (tests)."""
    global _state
    with _lock:
        _state = None


def _layout(x):
    """``(trans code, leading dimension)`` of a matrix MKL can read in place, or None."""
    rows, cols = x.shape
    if x.flags.c_contiguous:
        return _NO_TRANS, max(cols, 1)
    if x.flags.f_contiguous:
        return _TRANS, max(rows, 1)
    return None


def blocks(m, n, k, threads, ta=_NO_TRANS, tb=_NO_TRANS):
    """``(by, parts, step)``: how ``gemm_split`` cuts an (m, k) @ (k, n) product (``ta``,
    ``tb``: whether A and B are stored transposed)."""
    by = _cut(m, n, k, ta, tb)
    if (n, m, k)[by] < 2 * _ALIGN:      # too short to cut: the longest dimension instead
        by = max((_BY_COLUMNS, _BY_ROWS, _BY_DEPTH), key=lambda d: (n, m, k)[d])
    total = (n, m, k)[by]
    step = block_step(total, max(1, min(threads, m * n * k // PART_WORK, total // _ALIGN)))
    return by, -(-total // step), step


def block_step(total, parts):
    """The size of the blocks that cut ``total`` rows (or columns) into ``parts``, on
    ``_ALIGN``-row edges."""
    step = -(-total // parts)
    return -(-step // _ALIGN) * _ALIGN


def _cut(m, n, k, ta, tb):
    """Each thread takes a block of stored rows of the largest of A, B and C: the weights'
    rows where an (batch, k) @ (k, n) product reads them, the same rows where the weight
    gradient writes them, and ``native.adam_parts`` updates them on the same thread. (Cutting
    the columns of a row-major weight instead left each core half of every row, and the
    update after it ran 470 us instead of 340 for the big MLP on two Xeon cores.)"""
    a, b, c = m * k, k * n, m * n
    if c >= a and c >= b:
        return _BY_ROWS if m >= n else _BY_COLUMNS
    if b >= a:
        return _BY_DEPTH if tb == _NO_TRANS else _BY_COLUMNS
    return _BY_ROWS if ta == _NO_TRANS else _BY_DEPTH


def _operand(x, shape, dtype):
    return (type(x) is numpy.ndarray and x.shape == shape and x.dtype == dtype
            and x.flags.c_contiguous)


def product(a, b, out=None, bias=None, mask=None):
    """``a @ b`` for two float32 (or float64) matrices on MKL, into ``out`` (C-ordered) when
    given; None where it does not run (not active, other arrays, too small). With ``bias``
    (n,): ``relu(a @ b + bias)``, native_nn's ``bias_relu`` of the product; with ``mask``
    (m, n): ``(a @ b) * (mask > 0)``, its ``relu_grad``; each block finished by the thread
    that computed it, the bits of the product followed by that kernel."""
    if _state is False or (
            type(a) is not numpy.ndarray or type(b) is not numpy.ndarray or a.ndim != 2
            or b.ndim != 2 or a.dtype != b.dtype or a.shape[1] != b.shape[0]):
        return None
    (m, k), n = a.shape, b.shape[1]
    if m * n * k < MIN_WORK or n < NARROW or not active():   # small ones never load MKL
        return None
    split, gemms, epilogues = _state
    fn = gemms.get(a.dtype)
    if fn is None:
        return None
    la, lb = _layout(a), _layout(b)
    if la is None or lb is None or max(m, n, k, la[1], lb[1]) >= 1 << 31:   # MKL's int
        return None
    epi, extra = 0, None
    if (bias is not None or mask is not None) and not epilogues:
        return None
    if bias is not None:
        if not _operand(bias, (n,), a.dtype) or mask is not None:
            return None
        epi, extra = 1, bias
    elif mask is not None:
        if not _operand(mask, (m, n), a.dtype):
            return None
        epi, extra = 2, mask
    if out is None:
        out = numpy.empty((m, n), a.dtype)
    elif (type(out) is not numpy.ndarray or out.shape != (m, n) or out.dtype != a.dtype
          or not out.flags.c_contiguous or not out.flags.writeable
          or any(numpy.may_share_memory(out, x) for x in (a, b, extra) if x is not None)):
        return None
    by, parts, step = blocks(m, n, k, kernel_threads.count(), la[0], lb[0])
    spare = numpy.empty((parts - 1, m, n), a.dtype) if by == _BY_DEPTH and parts > 1 else None
    split(fn, int(a.dtype == numpy.float64), la[0], lb[0], m, n, k, a.ctypes.data, la[1],
          b.ctypes.data, lb[1], out.ctypes.data, max(n, 1), parts, by, step,
          None if spare is None else spare.ctypes.data, epi,
          None if bias is None else bias.ctypes.data, None if mask is None else mask.ctypes.data)
    return out
