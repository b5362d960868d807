"""The array backend: the only module that imports cupy.

Everything in minitf that touches arrays does so through ``backend.xp`` (numpy or cupy), so the
same code runs on CPU and GPU. The backend is chosen once, from ``MINITF_BACKEND`` or
``set_backend``, before any tensor is created.
"""
import math
import os
import sys

import numpy

_NAMES = ("numpy", "cupy")
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
    raise ValueError(f"unknown minitf backend {name!r}; expected one of {_NAMES}")


def set_backend(name):
    """Select the array backend: ``"numpy"`` (CPU, default) or ``"cupy"`` (NVIDIA GPU)."""
    global xp, _name
    xp = _load(name)
    _name = name
    if name == "numpy":
        _keep_freed_host_memory()


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
    reference count shows no view alive. New blocks are faulted in as transparent huge pages.
    ``MINITF_KEEP_FREED_MEMORY=0`` turns the reuse off.
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


def get_backend():
    """The name of the active backend, ``"numpy"`` or ``"cupy"``."""
    return _name


def cupy_available():
    """True when cupy imports and sees at least one GPU."""
    try:
        import cupy
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        return False


def to_numpy(array):
    """Copy an array of the active backend to a host numpy array (no copy on numpy)."""
    if xp is numpy:
        return numpy.asarray(array)
    return xp.asnumpy(array)


def from_numpy(array, dtype=None):
    """Move host data onto the active backend."""
    return xp.asarray(array, dtype=dtype)


def scatter_add(target, key, values):
    """``target[key] += values`` in place, adding repeated indices up (unbuffered)."""
    if xp is numpy:
        numpy.add.at(target, key, values)
    else:  # pragma: no cover - GPU only
        import cupyx
        cupyx.scatter_add(target, key, values)


def is_array(value):
    return isinstance(value, (numpy.ndarray, xp.ndarray))


def scalar(array):
    """A Python number from a 0-d or size-1 array (one device-to-host transfer on cupy)."""
    return to_numpy(array).item()


set_backend(os.environ.get("MINITF_BACKEND", "numpy"))
