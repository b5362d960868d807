"""numpy's OpenBLAS, used directly where numpy falls short (numpy backend only).

**Parking the workers.** After a matrix product, OpenBLAS's worker threads (pthreads builds, the
BLAS in numpy's wheels) keep spinning on their cores for up to about 0.1 s, waiting for the
next product. A second thread of minitf's own (the optimizer's update split in two halves) then
shares its core with a spinning worker and runs no faster than one thread. ``park()`` stops the
workers; OpenBLAS starts them again by itself on its next multi-threaded call. Measured here:
about 25 us to stop them and 25-40 us to restart them; twelve element-wise passes over 670k
floats, split over two threads right after a product, took 0.57 ms with the worker parked
against 1.07 ms with it spinning (0.88 ms on one thread).

Stopping the workers while another thread is inside OpenBLAS would break that call, so
``park()`` only acts when every other live thread is known to stay out of BLAS: minitf's own
threads (named ``minitf-...``, they never call it), a few library threads known to stay out
of it (tqdm's monitor, tensorboardX's event writer and its queue feeder), and threads that
call BLAS only inside ``may_use_blas()`` blocks (a data prefetch thread running the user's
preprocessing), none of them inside such a block now. Any other live thread keeps the workers
spinning, and the kernels that would have split over two threads then run on one
(``minitf.kernel_threads``): register such a thread with ``may_use_blas()``. Threads started
outside Python (a C library's own pool calling BLAS) are invisible to this check: set
``MINITF_OPENBLAS=0`` in such a program.

**Kernels.** ``axpby_kernel`` looks up ``?axpby`` (``y = a*x + b*y`` in one pass), which
``backend.axpby`` uses for the optimizers' slot updates; ``threads()`` reads the thread count
OpenBLAS is set to, which ``minitf.kernel_threads`` follows.

Other BLAS libraries (MKL, Accelerate, OpenMP builds of OpenBLAS) are left alone. Setting
``MINITF_OPENBLAS=0`` turns all of this off.
"""
import contextlib
import ctypes
import os
import threading
import weakref

THREAD_PREFIX = "minitf-"    # minitf's own threads: they never call BLAS

_PARALLEL_NAMES = ("openblas_get_parallel", "openblas_get_parallel64_",
                   "scipy_openblas_get_parallel", "scipy_openblas_get_parallel64_")
_PTHREADS = 1                # openblas_get_parallel(): 0 sequential, 1 pthreads, 2 OpenMP
_AXPBY_NAMES = {"float32": ("scipy_cblas_saxpby64_", "cblas_saxpby64_", "scipy_cblas_saxpby",
                            "cblas_saxpby"),
                "float64": ("scipy_cblas_daxpby64_", "cblas_daxpby64_", "scipy_cblas_daxpby",
                            "cblas_daxpby")}
_THREADS_NAMES = ("scipy_openblas_get_num_threads64_", "openblas_get_num_threads64_",
                  "scipy_openblas_get_num_threads", "openblas_get_num_threads")
_CORENAME_NAMES = ("scipy_openblas_get_corename64_", "openblas_get_corename64_",
                   "scipy_openblas_get_corename", "openblas_get_corename")
_LOCAL_THREADS_NAMES = ("scipy_openblas_set_num_threads_local64_",
                       "scipy_openblas_set_num_threads_local", "openblas_set_num_threads_local")
_CALLBACK_NAMES = ("scipy_openblas_set_threads_callback_function64_",
                   "scipy_openblas_set_threads_callback_function",
                   "openblas_set_threads_callback_function64_",
                   "openblas_set_threads_callback_function")
_library = None              # numpy's OpenBLAS, once found
_get_threads = None          # its get_num_threads, once looked up (False: it has none)
_handle = None               # (shutdown function, blas_server_avail flag) for parking
_searched = False
_set_local = None            # its set_num_threads_local, once looked up (False: it has none)


def _loaded_openblas_paths():
    try:
        with open("/proc/self/maps") as f:
            lines = f.read().splitlines()
    except OSError:          # not Linux
        return []
    paths = {line.split(None, 5)[5] for line in lines
             if line.count(" ") >= 5 and "openblas" in line.lower() and ".so" in line}
    # numpy's own copy first (scipy may have loaded another OpenBLAS beside it).
    return sorted((p for p in paths if os.path.isfile(p)), key=lambda p: ("numpy" not in p, p))


def _search():
    """Find numpy's OpenBLAS among the loaded libraries (once)."""
    global _library, _handle, _searched
    if _searched:
        return
    _searched = True
    if os.environ.get("MINITF_OPENBLAS", "1") == "0":
        return
    import numpy  # noqa: F401  (numpy loads its BLAS on import)
    for path in _loaded_openblas_paths():
        try:
            lib = ctypes.CDLL(path)     # already loaded by numpy: this only looks it up
        except OSError:
            continue
        if not any(hasattr(lib, n) for names in _AXPBY_NAMES.values() for n in names):
            continue
        _library = lib
        try:
            shutdown = lib.blas_thread_shutdown_
            running = ctypes.c_int.in_dll(lib, "blas_server_avail")
        except (AttributeError, ValueError):
            return
        parallel = next((getattr(lib, n) for n in _PARALLEL_NAMES if hasattr(lib, n)), None)
        if parallel is not None and parallel() == _PTHREADS:
            shutdown.restype = ctypes.c_int
            shutdown.argtypes = []
            _handle = shutdown, running
        return


def available():
    """True when numpy's BLAS is a pthreads OpenBLAS whose workers ``park()`` can stop."""
    _search()
    return _handle is not None


def threads():
    """The thread count numpy's OpenBLAS is set to (``threadpoolctl`` and
    ``OPENBLAS_NUM_THREADS`` set it), or None where that is unknown."""
    global _get_threads
    if _get_threads is None:
        _get_threads = False
        if available():
            fn = next((getattr(_library, n) for n in _THREADS_NAMES if hasattr(_library, n)),
                      None)
            if fn is not None:
                fn.restype, fn.argtypes = ctypes.c_int, []
                _get_threads = fn
    return _get_threads() if _get_threads else None


def core_name():
    """The kernel set numpy's OpenBLAS runs on this CPU (``SkylakeX``, ``Haswell``, ``Zen``;
    ``OPENBLAS_CORETYPE`` overrides it), or None where that is unknown."""
    _search()
    fn = next((getattr(_library, n) for n in _CORENAME_NAMES if hasattr(_library, n)), None)
    if fn is None:
        return None
    fn.restype, fn.argtypes = ctypes.c_char_p, []
    return fn().decode(errors="replace")


def local_threads_setter():
    """OpenBLAS's ``openblas_set_num_threads_local`` (0.3.27 and later) or None: it sets the
    thread count for the next BLAS calls (0: the global count again) and returns the count in
    force before. Despite its name it acts on the whole process in the OpenBLAS measured here
    (0.3.31: another thread's setting made this thread's products run on one thread)."""
    global _set_local
    if _set_local is None:
        _search()
        fn = next((getattr(_library, n) for n in _LOCAL_THREADS_NAMES
                   if _library is not None and hasattr(_library, n)), None)
        if fn is not None:
            fn.restype, fn.argtypes = ctypes.c_int, [ctypes.c_int]
        _set_local = fn if fn is not None else False
    return _set_local or None


def axpby_kernel(dtype):
    """OpenBLAS's ``?axpby(n, a, x, incx, b, y, incy)`` for ``dtype`` (float32 or float64) as
    ``(function, largest n)``, or None."""
    _search()
    names = _AXPBY_NAMES.get(str(dtype), ())
    name = next((n for n in names if _library is not None and hasattr(_library, n)), None)
    if name is None:
        return None
    index = ctypes.c_int64 if name.endswith("64_") else ctypes.c_int32
    scalar = ctypes.c_float if str(dtype) == "float32" else ctypes.c_double
    fn = getattr(_library, name)
    fn.argtypes = [index, scalar, ctypes.c_void_p, index, scalar, ctypes.c_void_p, index]
    fn.restype = None
    return fn, 2 ** (8 * ctypes.sizeof(index) - 1) - 1


_lock = threading.Lock()
_blas_users = 0                   # threads inside may_use_blas() now
_declared = weakref.WeakSet()     # threads that call BLAS only inside may_use_blas()


def _reset_after_fork():
    # Only the forking thread lives on in the child: no one else holds the lock or uses BLAS.
    global _lock, _blas_users
    _lock = threading.Lock()
    _blas_users = 0


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)


@contextlib.contextmanager
def may_use_blas():
    """Wrap code that may call BLAS on a helper thread (say, the user's preprocessing).

    The first use declares the thread as one that calls BLAS only inside such blocks; from
    then on ``park()`` goes ahead while the thread is outside them, never while it is inside.
    Entering waits for a ``park()`` under way."""
    global _blas_users
    with _lock:
        _declared.add(threading.current_thread())
        _blas_users += 1
    try:
        yield
    finally:
        with _lock:
            _blas_users -= 1


# Threads of other libraries known never to call BLAS: (module, class name) ...
_BLAS_FREE_CLASSES = {
    ("tqdm._monitor", "TMonitor"),                            # tqdm's progress-bar monitor
    ("tensorboardX.event_file_writer", "_EventLoggerThread"),  # writes event records to a file
}
# ... and plain threads by the module of their target: a multiprocessing queue's feeder
# (tensorboardX's writer has one) only pickles objects into a pipe.
_BLAS_FREE_TARGETS = {"multiprocessing.queues"}


def _stays_out_of_blas(thread):
    cls = type(thread)
    target = getattr(thread, "_target", None)
    return (thread.name.startswith(THREAD_PREFIX) or thread in _declared
            or (cls.__module__, cls.__name__) in _BLAS_FREE_CLASSES
            or getattr(target, "__module__", None) in _BLAS_FREE_TARGETS)


def _others_stay_out_of_blas():
    current = threading.current_thread()
    return all(t is current or _stays_out_of_blas(t) for t in threading.enumerate())


def park():
    """Free the second core for a thread of minitf's own: send ``minitf.thread_pool``'s
    spinning workers to sleep where that pool runs OpenBLAS's threads, else stop OpenBLAS's
    spinning workers if that is safe now (``stop_workers``). Returns True when none is left
    spinning; False when they run and must be left alone (or numpy's BLAS is not a pthreads
    OpenBLAS)."""
    from . import thread_pool
    if thread_pool.active():
        thread_pool.quiesce()
        return True
    return stop_workers()


def stop_workers():
    """Stop OpenBLAS's own workers if that is safe now (see ``park``)."""
    if not available():
        return False
    shutdown, running = _handle
    if not running.value:
        return True
    with _lock:
        if _blas_users or not _others_stay_out_of_blas():
            return False
        shutdown()
    return True


def threads_callback_setter():
    """OpenBLAS's ``openblas_set_threads_callback_function`` (0.3.27 and later), which hands
    its parallel work to the caller's threads, or None."""
    _search()
    name = next((n for n in _CALLBACK_NAMES if _library is not None and hasattr(_library, n)),
                None)
    if name is None:
        return None
    fn = getattr(_library, name)
    fn.argtypes, fn.restype = [ctypes.c_void_p], None
    return fn


def workers_running():
    """True while OpenBLAS's worker threads exist (spinning or busy)."""
    return available() and bool(_handle[1].value)
