"""Fused element-wise kernels in C, compiled with the system C compiler at first use.

numpy runs one pass over memory per ufunc, and inside a training step the optimizer's update is
bound by that traffic: Adam is seven passes (48 MB for 670k parameters) even with
``backend.axpby``. ``adam`` below reads ``g, m, v, w`` and writes ``m, v, w`` once, in one C
loop that does exactly the ufuncs' arithmetic in the same order, in float32 (or float64) with no
fused multiply-adds (``-ffp-contract=off``). A start-up check compares it bit for bit with the
ufunc path on values that include NaN, infinities, zeros and subnormals; it is used only if
they agree. Measured here: 137 us against 506 us for one 670k-parameter Adam update.
``AdamBatch`` runs the same loop over all the variables of a step in one call, split over the
thread pool by elements across variables (the 784-32-10 MLP's four variables: 15 us against
51 us for the ufunc path on their flat slots).

The library is built once per machine and cached (``$MINITF_CACHE_DIR``, else
``$XDG_CACHE_HOME/minitf/native`` or ``~/.cache/minitf/native``, a directory only this user may
write), keyed by the source, the flags, the compiler and the CPU's instruction sets (the
processors' feature flags and what ``-march=native`` expands to), so nodes of a cluster that
share one home directory never load a binary built for another CPU. It targets
``-march=native``; ``$MINITF_NATIVE_MARCH`` names another instruction set this CPU has
(``x86-64-v3``). Without a compiler, or with ``MINITF_NATIVE=0``, ``kernels()`` is None and the
optimizers keep their ufunc path; results are the same bits either way.
"""
import bisect
import ctypes
import hashlib
import logging
import math
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import threading

import numpy as _numpy

from . import (backend, direct_conv, kernel_threads, mkl_blas, native_elementwise, native_lstm,
               native_nn, native_nn_checks, native_nn_source, thread_pool, winograd)

logger = logging.getLogger("minitf")

_ADAM_SOURCE = r"""
#include <math.h>
#include <stdint.h>

/* Adam on one contiguous chunk, with the ufunc path's roundings:
   m = m*b1 + g*c1;  v = v*b2 + (g*g)*c2;  w = w*decay + (m / (sqrt(v) + eps))*scale
   NAME_split runs it in `parts` parts on the thread pool, NAME_many over `count` variables of
   one step in one call (in `parts` parts: a (parts + 1) x count table of element bounds). */
#define ADAM(NAME, T, SQRT)                                                              \
static inline void NAME##_one(int64_t n, T *restrict w, const T *restrict g,             \
                              T *restrict m, T *restrict v, T b1, T c1, T b2, T c2,      \
                              T eps, T scale, T decay) {                                 \
    for (int64_t i = 0; i < n; i++) {                                                    \
        T gi = g[i];                                                                     \
        T mi = m[i] * b1 + gi * c1;                                                      \
        T vi = v[i] * b2 + (gi * gi) * c2;                                               \
        m[i] = mi;                                                                       \
        v[i] = vi;                                                                       \
        T t = mi / (SQRT(vi) + eps);                                                     \
        w[i] = w[i] * decay + t * scale;                                                 \
    }                                                                                    \
}                                                                                        \
void NAME(int64_t n, T *w, const T *g, T *m, T *v,                                       \
          T b1, T c1, T b2, T c2, T eps, T scale, T decay) {                             \
    NAME##_one(n, w, g, m, v, b1, c1, b2, c2, eps, scale, decay);                        \
}                                                                                        \
struct NAME##_task { int64_t n; T *w; const T *g; T *m, *v;                             \
                     T b1, c1, b2, c2, eps, scale, decay; int parts; };                  \
static void NAME##_part(void *arg, int k) {                                              \
    struct NAME##_task *t = arg;                                                         \
    int64_t lo, hi;                                                                      \
    pool_range(t->n, t->parts, k, &lo, &hi);                                             \
    NAME##_one(hi - lo, t->w + lo, t->g + lo, t->m + lo, t->v + lo, t->b1, t->c1, t->b2,  \
               t->c2, t->eps, t->scale, t->decay);                                       \
}                                                                                        \
void NAME##_split(int parts, int64_t n, T *w, const T *g, T *m, T *v,                    \
                  T b1, T c1, T b2, T c2, T eps, T scale, T decay) {                     \
    struct NAME##_task t = {n, w, g, m, v, b1, c1, b2, c2, eps, scale, decay, parts};     \
    pool_run(NAME##_part, &t, parts);                                                    \
}                                                                                        \
struct NAME##_many_task { int64_t count; const int64_t *bounds; T *const *w;             \
                          const T *const *g; T *const *m, *const *v;                     \
                          T b1, c1, b2, c2, eps, scale; const T *decay; };               \
static void NAME##_many_part(void *arg, int k) {                                         \
    /* Part k: elements bounds[k][j] to bounds[k + 1][j] of every variable j. */         \
    struct NAME##_many_task *t = arg;                                                    \
    const int64_t *lo = t->bounds + (int64_t)k * t->count, *hi = lo + t->count;          \
    for (int64_t j = 0; j < t->count; j++)                                               \
        if (lo[j] < hi[j])                                                               \
            NAME##_one(hi[j] - lo[j], t->w[j] + lo[j], t->g[j] + lo[j], t->m[j] + lo[j], \
                       t->v[j] + lo[j], t->b1, t->c1, t->b2, t->c2, t->eps, t->scale,    \
                       t->decay[j]);                                                     \
}                                                                                        \
void NAME##_many(int parts, int64_t count, const int64_t *bounds, T *const *w,           \
                 const T *const *g, T *const *m, T *const *v, T b1, T c1, T b2, T c2,    \
                 T eps, T scale, const T *decay) {                                       \
    struct NAME##_many_task t = {count, bounds, w, g, m, v, b1, c1, b2, c2, eps, scale,  \
                                 decay};                                                 \
    pool_run(NAME##_many_part, &t, parts);                                               \
}
ADAM(adam_float32, float, sqrtf)
ADAM(adam_float64, double, sqrt)
"""
_SOURCE = (thread_pool.SOURCE + mkl_blas.SOURCE + _ADAM_SOURCE + native_nn_source.SOURCE
           + winograd.SOURCE + direct_conv.SOURCE + native_elementwise.SOURCE
           + native_lstm.SOURCE)
# -fno-trapping-math: no code here reads the floating-point exception flags, and without it GCC
# may not evaluate a multiply on both sides of a comparison, so ``g * (T)(y > 0)`` stays a
# scalar branch per element where AVX-512's masked operations are missing (AVX2: 150 us
# against 8 us for the 65k-element relu gradient). The values are the same; the start-up check
# compares every kernel with the ufunc path bit for bit.
_FLAGS = ["-O3", "-ffp-contract=off", "-fno-math-errno", "-fno-trapping-math", "-fPIC", "-shared",
          "-pthread"]
_ARGS = {"float32": ctypes.c_float, "float64": ctypes.c_double}

# AdamBatch copies gradients up to this size into its own buffers rather than reading their
# addresses (measured: 0.2 us to copy 32 floats, 1 us for ``ndarray.ctypes.data``).
_COPY_MAX = 1 << 13

# ``adam`` splits over the thread pool from this many elements a part (measured: 401k floats,
# 122 us on one thread, 66 us on two).
ADAM_MIN_PART = 1 << 15

_lock = threading.Lock()
_loaded = False
_kernels = None


def _cache_dir():
    explicit = os.environ.get("MINITF_CACHE_DIR")
    if explicit:
        return explicit
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "minitf", "native")


def _cpu_signature(cpuinfo_path="/proc/cpuinfo"):
    """The instruction sets of this machine's CPUs: the union of every processor's feature
    flags (``flags`` on x86, ``Features`` on ARM) and the model names. Nodes that share one home
    directory but differ here get different cache entries."""
    flags, models = set(), set()
    try:
        with open(cpuinfo_path) as f:
            for line in f:
                key, _, value = line.partition(":")
                key = key.strip().lower()
                if key in ("flags", "features"):
                    flags.update(value.split())
                elif key in ("model name", "cpu part", "cpu implementer"):
                    models.add(value.strip())
    except OSError:
        pass
    if not flags and not models:
        return platform.processor()
    return " ".join(sorted(models)) + "\n" + " ".join(sorted(flags))


def march():
    """The ``-march`` flag: ``$MINITF_NATIVE_MARCH`` (an instruction set such as ``x86-64-v3``,
    for the oldest CPU of a cluster, or to run this code as a CPU without AVX-512 would), else
    ``native``."""
    return "-march=" + (os.environ.get("MINITF_NATIVE_MARCH") or "native")


def _target_macros(compiler, march):
    """``compiler``'s predefined macros for ``march`` (``__AVX2__``, ``__ARM_FEATURE_SVE``,
    ...): the instruction sets a binary built for it may use. Empty if the compiler fails."""
    try:
        return subprocess.run([compiler, march, "-E", "-dM", "-x", "c", os.devnull],
                              capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError):
        return ""


def _native_target(compiler):
    """What ``march()`` means to ``compiler`` on this CPU."""
    return _target_macros(compiler, march())


_FEATURE_MACRO = re.compile(r"^#define (__[A-Z0-9_]+__) 1$", re.MULTILINE)


def _check_march(compiler):
    """A ``$MINITF_NATIVE_MARCH`` this compiler knows and this CPU can run: every instruction
    set it enables (``__AVX512F__``, ...) is one ``-march=native`` enables too."""
    flag = march()
    if flag == "-march=native":
        return
    name = flag[len("-march="):]
    wanted = _target_macros(compiler, flag)
    if not wanted:
        raise ValueError(f"MINITF_NATIVE_MARCH={name!r}: {compiler} does not accept "
                         f"{flag}; expected an instruction set it knows, such as x86-64-v3")
    missing = (set(_FEATURE_MACRO.findall(wanted))
               - set(_FEATURE_MACRO.findall(_target_macros(compiler, "-march=native"))))
    if missing:
        raise ValueError(f"MINITF_NATIVE_MARCH={name!r} enables {sorted(missing)}, which "
                         f"this CPU lacks (what -march=native enables); expected an older "
                         f"instruction set, or unset it")


def _cache_key(compiler, version):
    """The cache entry's name: source, flags, compiler, machine type and instruction sets."""
    parts = [_SOURCE, " ".join(_FLAGS), march(), version, platform.machine(), _cpu_signature(),
             _native_target(compiler)]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:16]


def _private_dir(directory):
    """Create ``directory`` (mode 0700) if needed and check that only this user can write it:
    a library loaded from it runs as this user."""
    os.makedirs(directory, mode=0o700, exist_ok=True)
    info = os.stat(directory)
    if info.st_uid != os.getuid() or info.st_mode & 0o022:
        raise PermissionError(f"{directory} is writable by other users")


def _build(compiler, path):
    """Compile the source into ``path`` (a temp file renamed into place: never half-written)."""
    directory = os.path.dirname(path)
    with tempfile.TemporaryDirectory(dir=directory) as work:
        source = os.path.join(work, "kernels.c")
        with open(source, "w") as f:
            f.write(_SOURCE)
        built = os.path.join(work, "kernels.so")
        subprocess.run([compiler, march(), *_FLAGS, source, "-o", built, "-lm"], check=True,
                       capture_output=True, timeout=120)
        os.replace(built, path)


class Kernels:
    """The compiled functions, by dtype name and by numpy dtype (see ``native_nn.Kernels``)."""

    def __init__(self, lib):
        import numpy
        self.lib = lib
        self.adam = {}
        self.adam_split = {}
        self.adam_many = {}
        for dtype, scalar in _ARGS.items():
            fn = getattr(lib, f"adam_{dtype}")
            fn.argtypes = [ctypes.c_int64] + [ctypes.c_void_p] * 4 + [scalar] * 7
            fn.restype = None
            self.adam[dtype] = self.adam[numpy.dtype(dtype)] = fn
            fn = getattr(lib, f"adam_{dtype}_split")
            fn.argtypes = [ctypes.c_int, ctypes.c_int64] + [ctypes.c_void_p] * 4 + [scalar] * 7
            fn.restype = None
            self.adam_split[dtype] = self.adam_split[numpy.dtype(dtype)] = fn
            fn = getattr(lib, f"adam_{dtype}_many")
            fn.argtypes = [ctypes.c_int, ctypes.c_int64] + [ctypes.c_void_p] * 5 + [
                scalar] * 6 + [ctypes.c_void_p]
            fn.restype = None
            self.adam_many[dtype] = self.adam_many[numpy.dtype(dtype)] = fn
        self.nn = native_nn.Kernels(lib)
        self.winograd = winograd.Kernels(lib)
        self.direct_conv = direct_conv.Kernels(lib)
        self.elementwise = native_elementwise.Kernels(lib)
        self.lstm = native_lstm.Kernels(lib)


def _load():
    if os.environ.get("MINITF_NATIVE", "1") == "0" or not sys.platform.startswith("linux"):
        return None
    compiler = os.environ.get("CC") or "cc"
    if shutil.which(compiler) is None:
        return None
    try:
        version = subprocess.run([compiler, "--version"], capture_output=True, text=True,
                                 timeout=30).stdout
        _check_march(compiler)
        key = _cache_key(compiler, version)
        directory = _cache_dir()
        _private_dir(directory)
        path = os.path.join(directory, f"kernels-{key}.so")
        if not os.path.exists(path):
            _build(compiler, path)
        kernels = Kernels(ctypes.CDLL(path))
    except (OSError, subprocess.SubprocessError, AttributeError) as exc:
        logger.debug("minitf: no native kernels (%s); using numpy ufuncs", exc)
        return None
    if not _matches_ufuncs(kernels):
        logger.debug("minitf: native kernels round differently from numpy; not used")
        return None
    thread_pool.install(kernels.lib)
    for name, matches, reference in _FAMILY_CHECKS:
        if not matches(getattr(kernels, name)):
            logger.debug("minitf: native %s kernels differ from %s; not used", name, reference)
            setattr(kernels, name, None)
    return kernels


# Each family's start-up check: (attribute of Kernels, check, what it is compared with).
_FAMILY_CHECKS = (("nn", native_nn_checks.matches_numpy, "numpy"),
                  ("winograd", winograd.matches_direct, "a direct convolution"),
                  ("direct_conv", direct_conv.matches_direct, "numpy's convolution"),
                  ("elementwise", native_elementwise.matches_numpy, "numpy"),
                  ("lstm", native_lstm.matches_numpy, "numpy"))


def kernels():
    """The compiled kernels, or None (no compiler, not numpy's platform, or turned off)."""
    global _loaded, _kernels
    if not _loaded:
        with _lock:
            if not _loaded:
                _kernels = _load()
                _loaded = True
    return _kernels


def family(name):
    """One family of the compiled kernels (``"nn"``, ``"winograd"``, ``"direct_conv"``,
    ``"elementwise"``, ``"lstm"``) for the numpy backend, or None (another backend, no
    kernels, or a family that failed its start-up check)."""
    if backend.xp is not _numpy:
        return None
    compiled = _kernels if _loaded else kernels()
    return None if compiled is None else getattr(compiled, name)


def adam(w, g, m, v, b1, c1, b2, c2, eps, scale, decay):
    """One fused pass of ``adam_ufuncs`` over contiguous numpy arrays of one shape and dtype
    (float32 or float64). Returns False, changing nothing, where it cannot run: the caller
    then takes the ufunc path, which gives the same bits."""
    import numpy
    if not (type(w) is numpy.ndarray and type(g) is numpy.ndarray
            and type(m) is numpy.ndarray and type(v) is numpy.ndarray):
        return False
    if not (g.dtype == w.dtype == m.dtype == v.dtype and g.shape == w.shape == m.shape == v.shape
            and w.flags.c_contiguous and g.flags.c_contiguous and m.flags.c_contiguous
            and v.flags.c_contiguous and w.flags.writeable):
        return False
    compiled = kernels()
    fn = compiled.adam.get(w.dtype) if compiled is not None else None
    if fn is None:
        return False
    starts = [a.ctypes.data for a in (w, g, m, v)]
    ranges = sorted((start, start + w.nbytes) for start in starts)
    if any(end > start for (_, end), (start, _) in zip(ranges, ranges[1:])):
        return False   # overlapping arrays: the C loop assumes they do not alias
    parts = min(kernel_threads.count(), w.size // ADAM_MIN_PART) if thread_pool.active() else 1
    if parts > 1:
        compiled.adam_split[w.dtype](parts, w.size, *starts, b1, c1, b2, c2, eps, scale,
                                          decay)
    else:
        fn(w.size, *starts, b1, c1, b2, c2, eps, scale, decay)
    return True


class AdamBatch:
    """``adam`` over the variables of one step in one native call (small models are bound by
    per-call overhead; large ones split over the thread pool, by elements across variables).
    The pointers of the variables, their ``m`` / ``v`` slots and the gradient buffers are
    bound once. A small gradient is copied into its buffer (cheaper than reading an array's
    address from Python); a large one is read in place, its address read again only when
    another array object arrives. Make one with ``adam_batch``."""
    __slots__ = ("_fn", "_keep", "_count", "_dtype", "_shapes", "_w", "_g", "_m", "_v",
                 "_decay", "_decays", "_grads", "_copies", "_starts", "_ends", "_total",
                 "_bounds")

    def __init__(self, fn, ws, ms, vs, gbufs):
        count = len(ws)
        self._fn = fn
        self._keep = (tuple(ws), tuple(ms), tuple(vs), tuple(gbufs))   # pointers stay valid
        self._count = count
        self._dtype = ws[0].dtype
        self._shapes = tuple(w.shape for w in ws)
        self._total = sum(w.size for w in ws)
        self._bounds = {}
        pointers = ctypes.c_void_p * count
        self._w = pointers(*[w.ctypes.data for w in ws])
        self._m = pointers(*[m.ctypes.data for m in ms])
        self._v = pointers(*[v.ctypes.data for v in vs])
        self._g = pointers(*[0 if b is None else b.ctypes.data for b in gbufs])
        self._copies = [b if b is not None and b.size <= _COPY_MAX else None for b in gbufs]
        self._grads = list(self._copies)
        self._decay = (_ARGS[self._dtype.name] * count)()
        self._decays = None
        ranges = sorted((a.ctypes.data, a.ctypes.data + a.nbytes) for a in (*ws, *ms, *vs)
                        if a.nbytes)
        self._starts = [a for a, _ in ranges]
        self._ends = [b for _, b in ranges]

    def _bind_gradient(self, k, g):
        import numpy
        if type(g) is not numpy.ndarray:
            return False
        copy = self._copies[k]
        if copy is not None:
            copy[...] = g
            return True
        if not (g.dtype == self._dtype and g.shape == self._shapes[k] and g.flags.c_contiguous):
            return False
        start = g.ctypes.data
        end = start + g.nbytes
        i = bisect.bisect_right(self._starts, start)
        if (i > 0 and self._ends[i - 1] > start) or (
                i < len(self._ends) and self._starts[i] < end):
            return False    # a gradient inside a variable or slot: the C loop assumes no alias
        self._g[k] = start
        self._grads[k] = g
        return True

    def __call__(self, gs, b1, c1, b2, c2, eps, scale, decays):
        """Update every variable from ``gs`` (one array each, of its variable's shape and
        dtype; ``decays``: one factor each). Returns False, changing nothing, where it cannot
        run: the caller then updates the variables another way, with the same bits."""
        grads = self._grads
        for k, g in enumerate(gs):
            if g is not grads[k] and not self._bind_gradient(k, g):
                return False
        if decays != self._decays:
            self._decay[:] = decays
            self._decays = decays
        parts = (min(kernel_threads.count(), self._total // ADAM_MIN_PART)
                 if self._total >= 2 * ADAM_MIN_PART and thread_pool.active() else 1)
        bounds = self._bounds.get(parts)
        if bounds is None:
            bounds = self._bounds[parts] = _bounds_table(adam_parts(self._shapes, parts))
        self._fn(parts, self._count, bounds, self._w, self._g, self._m, self._v,
                 b1, c1, b2, c2, eps, scale, self._decay)
        return True


def adam_parts(shapes, parts):
    """Where ``AdamBatch`` cuts variables of ``shapes`` into ``parts``: a list of ``parts + 1``
    lists of element offsets, one per variable (part k updates elements ``[k][j]`` to
    ``[k + 1][j]`` of variable j). A variable of ``ADAM_MIN_PART`` elements or more is cut at
    the rows where ``mkl_blas`` cuts the products that read and write it (rows of its last
    dimension), so each thread updates what it read in the forward pass and wrote in the
    backward one: on two cores of a Xeon that took the big MLP's update from 470 to 340 us
    (docs/performance-intel.md). The smaller variables, laid end to end, even out the parts."""
    sizes = [math.prod(shape) for shape in shapes]
    bounds = [[0] * len(sizes) for _ in range(parts)] + [list(sizes)]
    load = [0] * parts
    small = []
    for j, (shape, size) in enumerate(zip(shapes, sizes)):
        if size < ADAM_MIN_PART or parts == 1:
            small.append(j)
            continue
        width = shape[-1] if len(shape) > 1 and shape[-1] else 1
        rows = size // width
        step = mkl_blas.block_step(rows, parts)
        for k in range(1, parts):
            bounds[k][j] = min(k * step, rows) * width
        for k in range(parts):
            load[k] += bounds[k + 1][j] - bounds[k][j]
    target = sum(sizes) / parts
    cut, cuts = 0, [0]
    remaining = sum(sizes[j] for j in small)
    for k in range(parts - 1):
        cut = min(remaining, cut + max(0, round(target - load[k])))
        cuts.append(cut)
    offset = 0
    for j in small:
        for k in range(1, parts):
            bounds[k][j] = min(max(cuts[k] - offset, 0), sizes[j])
        offset += sizes[j]
    return bounds


def _bounds_table(bounds):
    flat = [b for row in bounds for b in row]
    return (ctypes.c_int64 * len(flat))(*flat)


def adam_batch(ws, ms, vs, gbufs):
    """An ``AdamBatch`` over contiguous numpy arrays (one dtype, float32 or float64; variables
    ``ws``, slots ``ms`` and ``vs``, and buffers ``gbufs`` for small gradients, none of them
    overlapping; None for a variable larger than ``copy_max()``: its gradient is read in
    place), or None where the native kernels cannot run them."""
    import numpy
    if not ws or not (len(ws) == len(ms) == len(vs) == len(gbufs)):
        return None
    dtype = ws[0].dtype
    for w, m, v, b in zip(ws, ms, vs, gbufs):
        if b is None and w.size <= _COPY_MAX:
            return None
        for a in (w, m, v) if b is None else (w, m, v, b):
            if not (type(a) is numpy.ndarray and a.dtype == dtype and a.shape == w.shape
                    and a.flags.c_contiguous and a.flags.writeable):
                return None
    compiled = kernels()
    fn = compiled.adam_many.get(dtype.name) if compiled is not None else None
    if fn is None:
        return None
    arrays = (*ws, *ms, *vs, *[b for b in gbufs if b is not None])
    ranges = sorted((a.ctypes.data, a.ctypes.data + a.nbytes) for a in arrays if a.nbytes)
    if any(end > start for (_, end), (start, _) in zip(ranges, ranges[1:])):
        return None
    return AdamBatch(fn, ws, ms, vs, gbufs)


def copy_max():
    """The largest variable whose gradient an ``AdamBatch`` copies into a buffer of its own."""
    return _COPY_MAX


def adam_ufuncs(g, m, v, w, t, b1, c1, b2, c2, eps, scale, decay):
    """The ufunc path that ``adam`` fuses (the reference for the start-up check)."""
    import numpy
    m *= b1
    numpy.multiply(g, c1, out=t)
    m += t
    numpy.multiply(g, g, out=t)
    t *= c2
    v *= b2
    v += t
    numpy.sqrt(v, out=t)
    t += eps
    numpy.divide(m, t, out=t)
    t *= scale
    w *= decay
    w += t


def _matches_ufuncs(kernels):
    """Both kernels (one variable, and several in one call) against the ufunc path, bit for
    bit, on values that include NaN, infinities, zeros and subnormals."""
    import numpy
    rng = numpy.random.default_rng(0)
    specials = [numpy.nan, numpy.inf, -numpy.inf, 0.0, -0.0, 1e-40, -1e-40, 3e38, 1e-30]
    scalars = (0.9, 0.1, 0.999, 0.001, 1e-7, -1e-3)
    pieces = ((0, 400, 0.996), (400, 401, 1.0), (401, 1031, 0.5))
    for dtype in _ARGS:
        n = 1031
        g, m, w = (rng.standard_normal(n).astype(dtype) for _ in range(3))
        v = numpy.abs(rng.standard_normal(n)).astype(dtype)
        for a in (g, m, w, v):
            a[:len(specials)] = numpy.array(specials, dtype=dtype)
            rng.shuffle(a)
        v[:3] = 0.0
        # One variable, whole (decay 0.996), against the ufuncs.
        want = [a.copy() for a in (g, m, v, w)]
        one = [a.copy() for a in (g, m, v, w)]
        # Three variables of one step (one decay each) in one call, against the ufuncs.
        want_many = [a.copy() for a in (g, m, v, w)]
        many = [a.copy() for a in (g, m, v, w)]
        count = len(pieces)
        with numpy.errstate(all="ignore"):
            adam_ufuncs(*want, numpy.empty(n, dtype), *scalars, 0.996)
            g1, m1, v1, w1 = one
            kernels.adam[dtype](n, w1.ctypes.data, g1.ctypes.data, m1.ctypes.data,
                                v1.ctypes.data, *scalars, 0.996)
            for a, b, decay in pieces:
                adam_ufuncs(*(x[a:b] for x in want_many), numpy.empty(b - a, dtype), *scalars,
                            decay)
            g2, m2, v2, w2 = many
            pointers = [(ctypes.c_void_p * count)(*[x[a:].ctypes.data for a, _, _ in pieces])
                        for x in (w2, g2, m2, v2)]
            sizes = [b - a for a, b, _ in pieces]
            decays = (_ARGS[dtype] * count)(*[d for _, _, d in pieces])
            kernels.adam_many[dtype](1, count, _bounds_table([[0] * count, sizes]), *pointers,
                                     *scalars, decays)
            # And in three parts on the thread pool (one part boundary inside a variable).
            g4, m4, v4, w4 = many3 = [a.copy() for a in (g, m, v, w)]
            pointers = [(ctypes.c_void_p * count)(*[x[a:].ctypes.data for a, _, _ in pieces])
                        for x in (w4, g4, m4, v4)]
            table = _bounds_table([[0] * count, [400, 1, 200], [400, 1, 500], sizes])
            kernels.adam_many[dtype](3, count, table, *pointers, *scalars, decays)
            # The same variable in two parts on the thread pool.
            g3, m3, v3, w3 = split = [a.copy() for a in (g, m, v, w)]
            kernels.adam_split[dtype](2, n, w3.ctypes.data, g3.ctypes.data, m3.ctypes.data,
                                      v3.ctypes.data, *scalars, 0.996)
        for got, ref in [*zip(one[1:], want[1:]), *zip(many[1:], want_many[1:]),
                         *zip(many3[1:], want_many[1:]),
                         *zip(split[1:], want[1:])]:
            if not numpy.array_equal(got.view(f"u{got.itemsize}"), ref.view(f"u{ref.itemsize}")):
                return False
    return True
