"""The array backend: the only module that imports cupy.

Everything in minitf that touches arrays does so through ``backend.xp`` (numpy or cupy), so the
same code runs on CPU and GPU. The backend is chosen once, from ``MINITF_BACKEND`` or
``set_backend``, before any tensor is created. ``strict`` is numpy with cupy's rules (see
``minitf.strict_backend``): it makes host/device mistakes fail on a CPU.
"""
import math
import os
import sys

import numpy

_NAMES = ("numpy", "cupy", "strict")
xp = numpy
_name = "numpy"


def _load(name):
    if name == "numpy":
        return numpy
    if name == "cupy":
        try:
            import cupy
        except ImportError as exc:
            raise ImportError(
                "minitf backend 'cupy' needs the cupy package (pip install 'minitf[gpu]')") from exc
        return cupy
    if name == "strict":
        from . import strict_backend
        return strict_backend.xp
    raise ValueError(f"unknown minitf backend {name!r}; expected one of {_NAMES}")


def set_backend(name):
    """Select the array backend: ``"numpy"`` (CPU, default), ``"cupy"`` (NVIDIA GPU) or
    ``"strict"`` (CPU, refusing implicit host conversions as cupy does)."""
    global xp, _name
    xp = _load(name)
    _name = name
    if name == "numpy":
        _keep_freed_host_memory()
    elif name == "cupy":  # pragma: no cover - GPU only
        _float16_products_accumulate_in_float32(xp)


def _float16_products_accumulate_in_float32(cupy):  # pragma: no cover - GPU only
    """float16 matrix products (mixed_float16) on tensor cores with float32 accumulation:
    cuBLAS compute type 32F for float16 inputs."""
    try:
        from cupy._core import _routines_linalg as linalg
        linalg.set_compute_type(numpy.float16, linalg.COMPUTE_TYPE_FP32)
    except (ImportError, AttributeError):   # a cupy without the switch keeps its default
        pass


_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
_allocator_tuned = False


def _keep_freed_host_memory():
    """Ask glibc to keep freed memory for reuse instead of returning it to the OS.

    Training allocates and frees the same multi-megabyte arrays every step. By default glibc
    serves such blocks with fresh mmaps (or trims them off the heap when freed), so every step
    page-faults all of its memory in again: measured here, that was over a third of a CNN
    training step. Keeping blocks up to 32 MiB on the heap and never trimming it makes the
    steady state allocation-free, at the price of holding on to the peak's memory (as caching
    allocators in other frameworks do). numpy's request for transparent huge pages on large
    arrays is switched off too: with memory recycled this way it only adds page-compaction
    stalls (measured: a max-pool gradient went from 18.6 ms to 5.9 ms).
    ``MINITF_KEEP_FREED_MEMORY=0`` turns both off.
    """
    global _allocator_tuned
    if _allocator_tuned or os.environ.get("MINITF_KEEP_FREED_MEMORY", "1") == "0":
        return
    _allocator_tuned = True
    madvise = _hugepage_switch()
    if madvise is not None:
        madvise(False)
    try:
        import ctypes
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt(_M_MMAP_THRESHOLD, 32 * 2 ** 20)
        libc.mallopt(_M_TRIM_THRESHOLD, 2 ** 30)
    except (OSError, AttributeError):  # not glibc (macOS, musl): keep the platform's default
        pass


def _hugepage_switch():
    """numpy's switch for asking transparent huge pages on large arrays (None if absent)."""
    core = getattr(numpy, "_core", None) or getattr(numpy, "core")
    return getattr(core.multiarray, "_set_madvise_hugepage", None)


_LARGE_BYTES = 32 * 2 ** 20      # glibc's mmap ceiling: larger blocks come fresh from the OS
_LARGE_KEPT = 2                  # large blocks kept for reuse
_large_blocks = []               # flat uint8 numpy buffers, most recently used last


def empty_result(shape, dtype):
    """An uninitialised array for a large result handed to the caller (a jacobian).

    Blocks above 32 MiB bypass glibc's free lists: each one is mapped fresh and page-faulted in
    (13 ms for a 33 MiB jacobian here, more than computing it). On numpy such results are
    carved out of kept blocks instead (beyond two, unused ones are released when the next
    large result is made). A block is reused only when nothing references it any more: its
    reference count shows no view alive. New blocks are faulted in as transparent huge pages,
    with ``minitf.thread_pool``'s spinning workers sent to sleep first: mapping and unmapping
    memory while a worker runs on another core costs that core an interrupt per change of the
    mappings (measured: the jacobian benchmark's vectorised pass 9.2 ms against 10.4-11.7 with
    the workers spinning). ``MINITF_KEEP_FREED_MEMORY=0`` turns the reuse off.
    """
    dtype = numpy.dtype(dtype)
    nbytes = math.prod(int(s) for s in shape) * dtype.itemsize
    if xp is not numpy or nbytes < _LARGE_BYTES:
        return xp.empty(shape, dtype=dtype)
    keep = _allocator_tuned
    block = None
    if keep:
        for i in range(len(_large_blocks)):
            # Two references mean unused: the list's and getrefcount's argument.
            if _large_blocks[i].nbytes >= nbytes and sys.getrefcount(_large_blocks[i]) <= 2:
                block = _large_blocks.pop(i)
                break
    if block is None:
        from . import thread_pool   # imported here: it loads after the backend
        thread_pool.quiesce()
        madvise = _hugepage_switch()
        previous = madvise(True) if madvise is not None else None
        try:
            block = numpy.empty(nbytes, dtype=numpy.uint8)
        finally:
            if madvise is not None:
                madvise(previous)
    if keep:
        _large_blocks.append(block)
        i = 0
        while len(_large_blocks) > _LARGE_KEPT and i < len(_large_blocks) - 1:
            if sys.getrefcount(_large_blocks[i]) <= 2:   # the oldest unused ones go first
                del _large_blocks[i]
            else:
                i += 1
    return block[:nbytes].view(dtype).reshape(shape)


_ZERO_CHUNK = 1 << 16
_zero_chunks = {}                # dtype -> a read-only block of _ZERO_CHUNK zeros


def relu(x, out=None):
    """``maximum(x, 0)``, NaN propagating, into ``out`` when given (may be ``x``).

    numpy 2's ``maximum`` against a scalar runs an unvectorised loop: 22 us for 64k float32
    elements, against 4 us with an array of zeros. On numpy, contiguous inputs are therefore
    compared with a cached block of zeros, in chunks of 64k elements (a 2.8M-element
    activation: 920 us with the scalar, 320 us chunked)."""
    if xp is not numpy or not (x.flags.c_contiguous and x.dtype.kind == "f"):
        return xp.maximum(x, 0, out=out)
    if out is None:
        out = numpy.empty_like(x)
    elif not out.flags.c_contiguous:
        return numpy.maximum(x, 0, out=out)
    zeros = _zero_chunks.get(x.dtype)
    if zeros is None:
        zeros = _zero_chunks[x.dtype] = numpy.zeros(_ZERO_CHUNK, dtype=x.dtype)
        zeros.flags.writeable = False
    n = x.size
    if n <= _ZERO_CHUNK:
        numpy.maximum(x, zeros[:n].reshape(x.shape), out=out)
        return out
    flat_x, flat_out = x.reshape(-1), out.reshape(-1)
    for start in range(0, n, _ZERO_CHUNK):
        stop = min(start + _ZERO_CHUNK, n)
        numpy.maximum(flat_x[start:stop], zeros[:stop - start], out=flat_out[start:stop])
    return out


_AXPBY_MIN = 4096          # below this, the ctypes call costs more than the passes it saves
_axpby_kernels = {}        # dtype -> (OpenBLAS ?axpby, largest n) or None


def axpby(a, x, b, y, scratch=None):
    """``y = a * x + b * y`` in place, rounded as ``y *= b; y += x * a`` (two roundings).

    On numpy, large contiguous float32/float64 arrays take one pass through OpenBLAS's
    ``?axpby`` (numpy has no fused ufunc for it) instead of three ufunc passes: the optimizers'
    slot updates are bound by memory traffic. Used only where a start-up check shows the kernel
    rounds exactly like the ufuncs. Otherwise ``scratch`` (may be ``x`` itself) receives
    ``x * a``."""
    n = y.size
    if (n >= _AXPBY_MIN and a != 0 and b != 0 and x.dtype == y.dtype and x.shape == y.shape
            and x.flags.c_contiguous and y.flags.c_contiguous):
        kernel = _axpby_kernel(y.dtype)
        if kernel is not None and n <= kernel[1]:
            kernel[0](n, float(a), x.ctypes.data, 1, float(b), y.ctypes.data, 1)
            return y
    if b != 1:
        y *= b
    if a == 1:
        y += x
    elif a == -1:
        y -= x
    else:
        y += xp.multiply(x, a, out=scratch)
    return y


def _axpby_kernel(dtype):
    kernel = _axpby_kernels.get(dtype, False)
    if kernel is False:
        kernel = None
        if xp is numpy:
            from . import openblas
            found = openblas.axpby_kernel(dtype)
            if found is not None and _rounds_like_ufuncs(found[0], dtype):
                kernel = found
        _axpby_kernels[dtype] = kernel
    return kernel


def _rounds_like_ufuncs(kernel, dtype):
    """Whether ``kernel`` gives the bits of ``y * b + x * a`` (no fused multiply-add), on
    values that exercise both its vector loop and its tail."""
    rng = numpy.random.default_rng(0)
    x, y = (rng.standard_normal(1027).astype(dtype) for _ in range(2))
    a, b = 0.1, 0.999
    expected = y * b + x * a
    kernel(x.size, a, x.ctypes.data, 1, b, y.ctypes.data, 1)
    return bool(numpy.array_equal(y, expected))


def get_backend():
    """The name of the active backend, ``"numpy"``, ``"cupy"`` or ``"strict"``."""
    return _name


def host_syncs_stall():
    """Whether reading a value back to the host stalls the device's queue of work (cupy):
    training then reads the loss only when a log record is due, not every step."""
    return _name == "cupy"


def cupy_available():
    """True when cupy imports and sees at least one GPU."""
    try:
        import cupy
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


_host_reads = [0]                # to_numpy / scalar calls on a device backend


def to_numpy(array):
    """Copy an array of the active backend to a host numpy array (no copy on numpy)."""
    if xp is numpy:
        return numpy.asarray(array)
    _host_reads[0] += 1
    return xp.asnumpy(array)


def sync_count():
    """Host syncs so far: on strict every device-to-host read (``float(a)``, ``.item()``,
    ``to_numpy``...); on cupy the explicit ``to_numpy``/``scalar`` reads; 0 on numpy."""
    if _name == "strict":
        from . import strict_backend
        return strict_backend.sync_count()
    return _host_reads[0]


def from_numpy(array, dtype=None):
    """Move host data onto the active backend."""
    return xp.asarray(array, dtype=dtype)


def scatter_add(target, key, values):
    """``target[key] += values`` in place, adding repeated indices up (unbuffered)."""
    if xp is numpy:
        numpy.add.at(target, key, values)
    elif _name == "strict":
        from . import strict_backend
        strict_backend.scatter_add(target, key, values)
    else:  # pragma: no cover - GPU only
        import cupyx
        cupyx.scatter_add(target, key, values)


def is_array(value):
    return isinstance(value, (numpy.ndarray, xp.ndarray))


def scalar(array):
    """A Python number from a 0-d or size-1 array (one device-to-host transfer on cupy)."""
    return to_numpy(array).item()


set_backend(os.environ.get("MINITF_BACKEND", "numpy"))
