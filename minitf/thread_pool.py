"""One pool of native worker threads for OpenBLAS's products and minitf's own kernels.

numpy's OpenBLAS (pthreads build) runs its products on worker threads that keep spinning on
their cores for up to ~0.1 s after each product. A kernel of minitf's split over two threads
right after a product shared a core with a spinning worker and ran no faster than one thread;
stopping the workers (``openblas.park``) and restarting them cost ~80 us a step, more than a
670k-parameter Adam update gains from two threads.

Here OpenBLAS hands its parallel work to this pool instead (its caller-managed threading
callback, OpenBLAS 0.3.27 and later), and the native kernels (the fused Adam update) split
over the same threads. A product and the update that follows it then take turns on the same
workers, and nothing has to be stopped: measured here, a 784x512 weight gradient followed by
Adam on its 401k parameters took 610 us against 667 us with the update on one thread (826 us
splitting it beside OpenBLAS's spinning worker), and the product alone ran as fast as on
OpenBLAS's own threads.

The C side: ``pool_run(fn, arg, parts)`` runs ``fn(arg, k)`` for every part, part 0 on the
calling thread and the others on workers, and returns when all are done. Callers from several
threads take turns (a mutex); a call made from inside a part (which OpenBLAS does not do), or
one with more parts than the pool's 255 workers, gets threads of its own, since the parts of
one product wait for each other and cannot run one after another. Workers spin for
``MINITF_POOL_SPIN_US`` microseconds (default 2000) after a task, waiting for the next, and then
sleep. Between two large products a step runs small products and element-wise kernels on the
calling thread for several hundred us, and waking a sleeping worker in a virtual machine costs
~140 us: with 200 us of spin the big MLP's traced step ran 6-17% slower than with 2,000 on an
Intel host, the CNNs' 6% (on an AMD Zen 4 host spins of 0 to 1,000 us made no difference).
Where other busy processes share the cores, spinning takes time from them and from the step
(a CPU-bound process beside the big MLP's step: 8.0 ms with 2,000 us, 7.0 with 200; yielding
the core while spinning made it 21-24 ms): set ``MINITF_POOL_SPIN_US`` lower there.
``quiesce()`` sends spinning workers to sleep at once (minitf's Python helper threads call it
before they take the second core). After ``fork`` the child starts with no workers and
creates them on first use.

A worker keeps the Python thread state of its first Python part (``run_parts``): ctypes
otherwise creates one for every call into Python from a foreign thread and deletes it after,
with the 16 KB frame stack it maps and unmaps. Kept, a CNN step spent 0.4-0.55 ms of system
time instead of 1.2, and ran 3-5% faster (``MINITF_POOL_PIN_THREAD_STATE=0`` to compare).

``MINITF_THREAD_POOL=0`` (or ``MINITF_OPENBLAS=0``) leaves OpenBLAS's own threads in charge.
"""
import ctypes
import logging
import os
import threading

from . import openblas

logger = logging.getLogger("minitf")

SOURCE = r"""
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#define POOL_MAX_WORKERS 255
typedef void (*pool_part_fn)(void *arg, int part);

/* Worker k runs part k + 1 of a task: it watches its own slot, so workers a task does not use
   sleep on undisturbed. */
struct pool_slot {
    _Atomic unsigned generation;   /* bumped to hand the worker a part */
    _Atomic int sleeping;
    pthread_mutex_t lock;
    pthread_cond_t wake;
} __attribute__((aligned(64)));

static struct pool_slot pool_slots[POOL_MAX_WORKERS];

static struct {
    int workers;                   /* started so far */
    _Atomic unsigned hurry;        /* bumped by pool_quiesce: spinning workers go to sleep */
    _Atomic int remaining;         /* parts of the current task not yet done by workers */
    pool_part_fn fn;
    void *arg;
    pthread_mutex_t run_lock;
} pool = {0, .run_lock = PTHREAD_MUTEX_INITIALIZER};

static _Atomic long pool_spin_ns = 2000000;
static __thread int pool_inside;   /* this thread runs a part of a task now */
static __thread int pool_is_worker;   /* this thread is one of the pool's workers */

static inline uint64_t pool_now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static inline void pool_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

struct pool_start { int index; unsigned seen; };   /* seen: the slot's generation at creation */

static void *pool_worker(void *start) {
    int index = ((struct pool_start *)start)->index;
    unsigned seen = ((struct pool_start *)start)->seen;
    free(start);
    pool_is_worker = 1;
    struct pool_slot *slot = &pool_slots[index];
    for (;;) {
        unsigned g, hurry = atomic_load(&pool.hurry);
        uint64_t since = pool_now_ns();
        long spin = atomic_load_explicit(&pool_spin_ns, memory_order_relaxed);
        int k = 0;
        while ((g = atomic_load_explicit(&slot->generation, memory_order_acquire)) == seen) {
            pool_relax();
            if (++k == 64) {
                k = 0;
                if (atomic_load_explicit(&pool.hurry, memory_order_relaxed) != hurry
                        || pool_now_ns() - since > (uint64_t)spin)
                    break;
            }
        }
        if (g == seen) {
            pthread_mutex_lock(&slot->lock);
            atomic_store(&slot->sleeping, 1);
            while ((g = atomic_load(&slot->generation)) == seen)
                pthread_cond_wait(&slot->wake, &slot->lock);
            atomic_store(&slot->sleeping, 0);
            pthread_mutex_unlock(&slot->lock);
        }
        seen = g;
        pool_inside = 1;
        pool.fn(pool.arg, index + 1);
        pool_inside = 0;
        atomic_fetch_sub_explicit(&pool.remaining, 1, memory_order_release);
    }
    return NULL;
}

/* A task started from inside a part, or too wide for the pool: threads of its own, joined at
   the end. */
struct pool_spawned { pool_part_fn fn; void *arg; int part; };

static void *pool_spawned_part(void *p) {
    struct pool_spawned *s = p;
    pool_inside = 1;
    s->fn(s->arg, s->part);
    return NULL;
}

static void pool_run_spawned(pool_part_fn fn, void *arg, int parts) {
    pthread_t *threads = malloc(sizeof(pthread_t) * (size_t)parts);
    struct pool_spawned *spawned = malloc(sizeof(struct pool_spawned) * (size_t)parts);
    if (threads == NULL || spawned == NULL)
        abort();   /* the parts wait for each other: running them in turn would hang */
    for (int k = 1; k < parts; k++) {
        spawned[k] = (struct pool_spawned){fn, arg, k};
        if (pthread_create(&threads[k], NULL, pool_spawned_part, &spawned[k]) != 0)
            abort();
    }
    fn(arg, 0);
    for (int k = 1; k < parts; k++)
        pthread_join(threads[k], NULL);
    free(threads);
    free(spawned);
}

void pool_run(pool_part_fn fn, void *arg, int parts) {
    if (parts <= 1) {
        if (parts == 1)
            fn(arg, 0);
        return;
    }
    if (pool_inside || parts > POOL_MAX_WORKERS + 1) {
        pool_run_spawned(fn, arg, parts);
        return;
    }
    pthread_mutex_lock(&pool.run_lock);
    while (pool.workers < parts - 1) {
        int k = pool.workers;
        struct pool_start *start = malloc(sizeof *start);
        pthread_t thread;
        if (start != NULL)
            *start = (struct pool_start){k, atomic_load(&pool_slots[k].generation)};
        if (start == NULL || pthread_create(&thread, NULL, pool_worker, start) != 0) {
            free(start);
            pthread_mutex_unlock(&pool.run_lock);
            pool_run_spawned(fn, arg, parts);
            return;
        }
        pthread_detach(thread);
        pool.workers++;
    }
    pool.fn = fn;
    pool.arg = arg;
    atomic_store_explicit(&pool.remaining, parts - 1, memory_order_relaxed);
    for (int k = 0; k < parts - 1; k++) {
        struct pool_slot *slot = &pool_slots[k];
        atomic_fetch_add(&slot->generation, 1);   /* seq_cst: ordered before reading sleeping */
        if (atomic_load(&slot->sleeping)) {
            pthread_mutex_lock(&slot->lock);
            pthread_cond_signal(&slot->wake);
            pthread_mutex_unlock(&slot->lock);
        }
    }
    pool_inside = 1;
    fn(arg, 0);
    pool_inside = 0;
    while (atomic_load_explicit(&pool.remaining, memory_order_acquire) > 0)
        pool_relax();
    pthread_mutex_unlock(&pool.run_lock);
}

void pool_quiesce(void) { atomic_fetch_add(&pool.hurry, 1); }

void pool_set_spin_us(long us) { atomic_store(&pool_spin_ns, us * 1000); }

int pool_workers(void) { return pool.workers; }

int pool_on_worker(void) { return pool_is_worker; }   /* a worker, not a thread of one task */

static void pool_after_fork(void) {   /* only the forking thread lives on in the child */
    pool.workers = 0;
    pthread_mutex_init(&pool.run_lock, NULL);
    for (int k = 0; k < POOL_MAX_WORKERS; k++) {
        atomic_store(&pool_slots[k].sleeping, 0);
        pthread_mutex_init(&pool_slots[k].lock, NULL);
        pthread_cond_init(&pool_slots[k].wake, NULL);
    }
    pool_inside = 0;
}

__attribute__((constructor)) static void pool_init(void) {
    for (int k = 0; k < POOL_MAX_WORKERS; k++) {
        pthread_mutex_init(&pool_slots[k].lock, NULL);
        pthread_cond_init(&pool_slots[k].wake, NULL);
    }
    pthread_atfork(NULL, NULL, pool_after_fork);
}

/* OpenBLAS's caller-managed threading: run its `numjobs` jobs at once on the pool. */
typedef void (*pool_blas_job_fn)(int thread, void *job, int data);
struct pool_blas_task { pool_blas_job_fn job; size_t size; char *jobs; int data; };

static void pool_blas_part(void *arg, int k) {
    struct pool_blas_task *t = arg;
    t->job(k, t->jobs + (size_t)k * t->size, t->data);
}

void pool_blas_callback(int sync, pool_blas_job_fn job, int numjobs, size_t size, void *jobs,
                        int data) {
    (void)sync;
    struct pool_blas_task task = {job, size, jobs, data};
    pool_run(pool_blas_part, &task, numjobs);
}

/* [lo, hi) of part k of n elements in `parts` parts, cut at multiples of 16 elements. */
static inline void pool_range(int64_t n, int parts, int k, int64_t *lo, int64_t *hi) {
    *lo = k == 0 ? 0 : (n * k / parts) & ~(int64_t)15;
    *hi = k + 1 == parts ? n : (n * (k + 1) / parts) & ~(int64_t)15;
}
"""

_ENV_OFF = os.environ.get("MINITF_THREAD_POOL", "1") == "0"
_library = None      # the loaded kernels library, once the pool runs OpenBLAS's threads


def install(lib):
    """Make the pool in ``lib`` (the compiled kernels) OpenBLAS's threading backend. Returns
    True when it is (a pthreads OpenBLAS with the callback, and not turned off)."""
    global _library
    if _library is not None:
        return True
    if _ENV_OFF or not openblas.available():
        return False
    setter = openblas.threads_callback_setter()
    if setter is None:
        return False
    spin = os.environ.get("MINITF_POOL_SPIN_US")
    lib.pool_quiesce.argtypes, lib.pool_quiesce.restype = [], None
    lib.pool_set_spin_us.argtypes, lib.pool_set_spin_us.restype = [ctypes.c_long], None
    lib.pool_workers.argtypes, lib.pool_workers.restype = [], ctypes.c_int
    lib.pool_on_worker.argtypes, lib.pool_on_worker.restype = [], ctypes.c_int
    lib.pool_run.argtypes, lib.pool_run.restype = [_PART, ctypes.c_void_p, ctypes.c_int], None
    if spin is not None:
        lib.pool_set_spin_us(max(0, int(spin)))
    setter(ctypes.cast(lib.pool_blas_callback, ctypes.c_void_p))
    # OpenBLAS's own workers get no more work and go to sleep after their spin. Stopping
    # them would not do: OpenBLAS starts them again on its next parallel call.
    _library = lib
    logger.debug("minitf: OpenBLAS's parallel work runs on minitf's thread pool")
    return True


def uninstall():
    """Give OpenBLAS its own threads back (it starts them on its next parallel product); the
    kernels stop splitting over the pool. Call it while no other thread is inside BLAS."""
    global _library
    if _library is None:
        return
    openblas.threads_callback_setter()(None)
    _library.pool_quiesce()
    _library = None


def active():
    """True when the pool runs OpenBLAS's threads (and so may split minitf's kernels too)."""
    return _library is not None


_PART = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int)
_adopted = set()     # the pool workers that keep a Python thread state
PIN_THREAD_STATE = os.environ.get("MINITF_POOL_PIN_THREAD_STATE", "1") != "0"


def _adopt_worker():
    """On a pool worker's first part: name it as minitf's (it runs BLAS only as OpenBLAS's
    threads while the pool is installed, so it never keeps ``openblas.park`` from stopping
    OpenBLAS's workers), keep its Python thread state from one part to the next (without that,
    ctypes creates a thread state for every call into Python from a foreign thread and deletes
    it after, with the frame stack it allocates: a 16 KB mmap and munmap per part). A thread
    made for one task is only named."""
    thread = threading.current_thread()
    if not thread.name.startswith(openblas.THREAD_PREFIX):
        thread.name = openblas.THREAD_PREFIX + "pool-worker"
    if not _library.pool_on_worker():   # a thread made for one task: it ends after it
        return
    if PIN_THREAD_STATE and hasattr(ctypes, "pythonapi"):   # CPython's C API
        ctypes.pythonapi.PyGILState_Ensure()   # never released: the thread state stays
    _adopted.add(threading.get_ident())


if hasattr(os, "register_at_fork"):   # the child's workers are new threads
    os.register_at_fork(after_in_child=_adopted.clear)


def run_parts(fn, parts, uses_blas=True):
    """``fn(start, stop)`` for every ``(start, stop)`` of ``parts`` on the pool's threads (the
    first on the calling thread); returns when all are done and raises the first error. Each
    part takes the GIL only around its Python call: ``fn`` is expected to spend its time in a
    ctypes call, which lets the GIL go.

    With ``uses_blas`` (parts that may multiply), each part's products run on its own thread:
    a product OpenBLAS split inside a part would start a pool task inside the pool's task, on
    threads made for that one call, and two such products at once gave wrong results
    (``tests/test_thread_pool.py``). OpenBLAS's thread count is set to one for the whole task
    and back to the global count after (unless it was one before: a task inside a task leaves
    that to the enclosing one): ``openblas_set_num_threads_local`` acts on the whole
    process in the OpenBLAS measured here (another thread's setting made this thread's
    products run on one thread), so setting it per part let the first part to finish restore
    two threads under the others, and set inside a task it cost ~35 us a call. Parts that
    never multiply leave the count alone."""
    errors = [None] * len(parts)

    def part(_, k):
        if k and threading.get_ident() not in _adopted:   # a pool worker's first part
            _adopt_worker()
        try:
            fn(*parts[k])
        except BaseException as exc:   # noqa: BLE001 -- raised on the calling thread below
            errors[k] = exc

    set_count = openblas.local_threads_setter() if uses_blas else None
    previous = set_count(1) if set_count is not None else None
    try:
        _library.pool_run(_PART(part), None, len(parts))
    finally:
        if set_count is not None and previous != 1:   # one already: an enclosing task's
            set_count(0)
    for error in errors:
        if error is not None:
            raise error


def quiesce():
    """Send the pool's spinning workers to sleep now (they wake on the next task)."""
    if _library is not None:
        _library.pool_quiesce()


def workers():
    """How many worker threads the pool has started (0 before its first parallel task)."""
    return _library.pool_workers() if _library is not None else 0
