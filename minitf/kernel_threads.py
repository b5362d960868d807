"""Native kernels split over the cores numpy's BLAS may use.

A CNN step spends half its time outside BLAS, in native kernels (``minitf.native_nn``,
``minitf.winograd``'s transforms) that run on the calling thread. ``run(fn, parts)`` runs
``fn(start, stop)`` for each part of a range, the first on the calling thread and the others
on worker threads (ctypes releases the GIL), and returns when all are done: those of
``minitf.thread_pool`` where it runs OpenBLAS's threads, else a Python thread pool. It
splits over as many threads as numpy's OpenBLAS is set to use (``threadpoolctl``,
``OPENBLAS_NUM_THREADS``), so one setting governs both, and ``threads=1`` runs stay
single-threaded.

Parts may run small products (Winograd's blocks: OpenBLAS runs those on the calling thread,
and two threads ran them twice as fast as one); large products stay whole on OpenBLAS's own
threads (two threads each running half of one large product ran no faster than one). Before a
split, OpenBLAS's spinning workers are parked (``openblas.park``), as for the optimizers' split
update: a 96 MB element-wise pass took 2.5 ms over two threads with them parked, 5 ms without.
On ``minitf.thread_pool``'s workers nothing is parked: the products and the kernels take turns
on the same threads, which keep spinning between them. Parked workers and a Python thread
woken for every split cost a CNN step ~10% on an Intel host (shipped CNN 42.6 against 38.0
ms, the valid one 19.3 against 17.3, in one process).
"""
import os
import threading

import numpy

from . import openblas, thread_pool

_OFF = os.environ.get("MINITF_KERNEL_THREADS", "1") == "0"
_pool = None
_pool_lock = threading.Lock()


def count():
    """How many threads kernels split over: OpenBLAS's thread count (1 where it is unknown,
    or with ``MINITF_KERNEL_THREADS=0``)."""
    if _OFF:
        return 1
    blas = openblas.threads()
    return max(1, blas) if blas is not None else 1


def split(total, minimum):
    """``[(start, stop), ...]``: ``range(total)`` in up to ``count()`` equal parts of at least
    ``minimum`` each (one part when the work is small)."""
    parts = max(1, min(count(), total // max(minimum, 1)))
    bounds = [total * k // parts for k in range(parts + 1)]
    return list(zip(bounds[:-1], bounds[1:]))


def partial_sums(shape):
    """One float64 array of ``shape`` per thread, as rows of one array padded so that no
    cache line holds two threads' sums (the kernels update theirs on every row: shared lines
    made two threads slower than one)."""
    size = int(numpy.prod(shape))
    rows = numpy.zeros((count(), size + 16))
    return rows[:, :size].reshape((-1,) + tuple(shape))


def _workers():
    global _pool
    with _pool_lock:
        if _pool is None:
            from concurrent.futures import ThreadPoolExecutor
            _pool = ThreadPoolExecutor(max_workers=max(1, (os.cpu_count() or 2) - 1),
                                       thread_name_prefix=openblas.THREAD_PREFIX + "kernel")
        return _pool


def _forget_pool():
    global _pool, _pool_lock
    _pool, _pool_lock = None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def _declared_blas_user(fn):
    def part(start, stop):
        with openblas.may_use_blas():    # park() waits while a worker is inside BLAS
            fn(start, stop)
    return part


def run(fn, parts, uses_blas=False):
    """``fn(start, stop)`` for every part (from ``split``), in parallel; returns when all
    are done and raises the first error. ``uses_blas``: ``fn`` runs small products (on the
    pool, each part's products then run on its own thread: ``thread_pool.run_parts``)."""
    if len(parts) > 1 and thread_pool.active():
        thread_pool.run_parts(fn, parts, uses_blas=uses_blas)
        return
    if len(parts) <= 1 or (openblas.available() and not openblas.park()):
        # A worker left spinning (another thread may be in BLAS) holds a core: two threads
        # sharing the other ran slower than one.
        for start, stop in parts:
            fn(start, stop)
        return
    worker = _declared_blas_user(fn) if uses_blas else fn
    futures = [_workers().submit(worker, start, stop) for start, stop in parts[1:]]
    try:
        fn(*parts[0])
    finally:
        errors = [f.exception() for f in futures]
    for error in errors:
        if error is not None:
            raise error


def run_numbered(body, parts):
    """``body(k, start, stop)`` for the k-th of ``parts`` (from ``split``), as ``run``; returns
    the number of parts (the rows of ``partial_sums`` that were written)."""
    index = {start: k for k, (start, _) in enumerate(parts)}
    run(lambda start, stop: body(index[start], start, stop), parts)
    return len(parts)
