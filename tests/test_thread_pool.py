"""minitf's thread pool as OpenBLAS's threading backend, and the Adam update split over it."""
import os
import threading
import time

import numpy as np
import pytest

import minitf  # noqa: F401  (selects the backend)
from minitf import backend as B
from minitf import kernel_threads, native, openblas, thread_pool

pytestmark = pytest.mark.skipif(
    B.get_backend() != "numpy" or native.kernels() is None or not thread_pool.active(),
    reason="minitf's thread pool runs OpenBLAS's threads only on numpy with the native kernels "
           "and a pthreads OpenBLAS that takes a threading callback")

needs_two_threads = pytest.mark.skipif((openblas.threads() or 1) < 2,
                                       reason="OpenBLAS runs one thread here")


def _operands(seed, m=384, k=300, n=257):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((m, k)).astype(np.float32),
            rng.standard_normal((k, n)).astype(np.float32))


@needs_two_threads
def test_products_on_the_pool_match_openblas_own_threads_bit_for_bit():
    """The pool runs the very jobs OpenBLAS cut the product into, so the bits are the same as
    on OpenBLAS's own threads (and close to a float64 product)."""
    pairs = [_operands(s) for s in range(3)] + [_operands(3, 128, 784, 512)]
    on_pool = [a @ b for a, b in pairs]
    assert thread_pool.workers() >= 1          # the products were split over the pool
    thread_pool.uninstall()
    try:
        assert not thread_pool.active()
        on_own_threads = [a @ b for a, b in pairs]
    finally:
        thread_pool.install(native.kernels().lib)
    assert thread_pool.active()
    for (a, b), x, y in zip(pairs, on_pool, on_own_threads):
        np.testing.assert_array_equal(x, y)
        np.testing.assert_allclose(x, a.astype(np.float64) @ b, rtol=1e-4, atol=1e-3)


def test_products_from_several_threads_at_once():
    """Callers on several threads take turns on the pool; every result is right."""
    pairs = [_operands(10 + s) for s in range(4)]
    expected = [a.astype(np.float64) @ b for a, b in pairs]
    results = [[] for _ in pairs]

    def work(k):
        a, b = pairs[k]
        for _ in range(20):
            results[k].append(a @ b)

    threads = [threading.Thread(target=work, args=(k,), name=f"user-{k}")
               for k in range(len(pairs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k, want in enumerate(expected):
        assert len(results[k]) == 20
        for got in results[k]:
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)
            np.testing.assert_array_equal(got, results[k][0])


def test_quiesce_then_products_still_run():
    a, b = _operands(20)
    want = a @ b
    for _ in range(3):
        thread_pool.quiesce()          # workers asleep: the next product wakes them
        np.testing.assert_array_equal(a @ b, want)
    assert openblas.park() is True     # with the pool, parking only sends its workers to sleep


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_starts_its_own_workers():
    a, b = _operands(30)
    want = a @ b
    pid = os.fork()
    if pid == 0:   # the child: the parent's workers do not exist here
        try:
            ok = np.array_equal(a @ b, want) and np.array_equal(a @ b, want)
        finally:
            os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


@needs_two_threads
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("n", [native.ADAM_MIN_PART * 2, native.ADAM_MIN_PART * 5 + 7])
def test_adam_split_over_the_pool_gives_the_ufunc_bits(dtype, n):
    """``native.adam`` splits a large update over the pool: element by element the same
    arithmetic as the numpy ufunc path, so the same bits."""
    assert min(kernel_threads.count(), n // native.ADAM_MIN_PART) >= 2   # it does split
    rng = np.random.default_rng(4)
    g, m, w = (rng.standard_normal(n).astype(dtype) for _ in range(3))
    v = np.abs(rng.standard_normal(n)).astype(dtype)
    g[::1001] = np.nan
    v[::997] = 0.0
    scalars = (0.9, 0.1, 0.999, 0.001, 1e-7, -1e-3, 0.996)
    want = [a.copy() for a in (g, m, v, w)]
    with np.errstate(all="ignore"):
        native.adam_ufuncs(*want, np.empty(n, dtype), *scalars)
        got_g, got_m, got_v, got_w = (a.copy() for a in (g, m, v, w))
        b1, c1, b2, c2, eps, scale, decay = scalars
        assert native.adam(got_w, got_g, got_m, got_v, b1, c1, b2, c2, eps, scale, decay)
    for got, ref in zip((got_m, got_v, got_w), want[1:]):
        assert np.array_equal(got.view(f"u{got.itemsize}"), ref.view(f"u{ref.itemsize}"))


@needs_two_threads
def test_kernel_parts_run_on_the_pool_threads_and_raise_the_first_error():
    """``kernel_threads.run`` hands its parts to the pool: every part runs once, the first on
    the calling thread and the others on pool workers, and a part's error reaches the caller."""
    parts = kernel_threads.split(1000, 1)
    assert len(parts) >= 2
    seen = {}
    lock = threading.Lock()

    def body(start, stop):
        with lock:
            seen[(start, stop)] = threading.current_thread()

    kernel_threads.run(body, parts)
    assert sorted(seen) == parts
    assert seen[parts[0]] is threading.current_thread()
    others = [seen[p] for p in parts[1:]]
    assert all(t is not threading.current_thread() for t in others)
    # Native pool workers, not the Python executor's threads; named as minitf's own, so they
    # never keep openblas.park from stopping OpenBLAS's workers once the pool is uninstalled.
    assert {t.name for t in others} == {openblas.THREAD_PREFIX + "pool-worker"}
    assert openblas._others_stay_out_of_blas()

    def failing(start, stop):
        if start > 0:
            raise ValueError(f"part {start}:{stop} failed")

    with pytest.raises(ValueError, match=f"part {parts[1][0]}:{parts[1][1]} failed"):
        kernel_threads.run(failing, parts)
    total = np.zeros(1000)
    kernel_threads.run(lambda a, b: total.__setitem__(slice(a, b), np.arange(a, b)), parts)
    np.testing.assert_array_equal(total, np.arange(1000))


@needs_two_threads
@pytest.mark.parametrize("uses_blas", [True, False])
def test_parts_run_their_products_on_their_own_thread(uses_blas):
    """Parts declared to multiply run their products on their own thread (OpenBLAS's count one
    for the whole task, even after a faster part has ended, and back to the global count
    after): products OpenBLAS split inside two parts at once, each a pool task inside the
    pool's task, gave wrong results now and then. Parts declared not to multiply leave the
    count alone."""
    set_local = openblas.local_threads_setter()
    if set_local is None:
        pytest.skip("OpenBLAS without openblas_set_num_threads_local")
    parts = kernel_threads.split(1000, 1)
    a, b = _operands(9)
    want = a.astype(np.float64) @ b
    global_count = openblas.threads()
    for _ in range(20):
        counts = {}
        lock = threading.Lock()

        def body(start, stop):
            if start == 0:
                time.sleep(0.002)        # the calling thread's part ends last
            before = set_local(1)        # returns the count in force in this part
            set_local(before)
            with lock:
                counts[start] = before
            np.testing.assert_allclose(a @ b, want, rtol=1e-4, atol=1e-3)

        kernel_threads.run(body, parts, uses_blas=uses_blas)
        assert sorted(counts.values()) == [1 if uses_blas else global_count] * len(parts)
    assert set_local(0) == global_count != 1   # the global count again


@needs_two_threads
def test_a_worker_keeps_its_python_thread_state_between_parts():
    """A pool worker's thread-local Python data outlive its part (ctypes would otherwise delete
    the worker's thread state after every part); a thread made for one nested task does not
    join the workers."""
    if not thread_pool.PIN_THREAD_STATE:
        pytest.skip("MINITF_POOL_PIN_THREAD_STATE=0")
    parts = kernel_threads.split(1000, 1)
    local = threading.local()
    seen = []

    def body(start, stop):
        if start:
            seen.append(getattr(local, "mark", None))
            local.mark = ("set", threading.get_ident())

    for _ in range(3):
        thread_pool.run_parts(body, parts)
    assert seen[0] is None or seen[0][0] == "set"     # this worker's first parts ever, or not
    assert seen[1:] == [("set", seen[-1][1])] * 2     # the same worker, its data still there
    workers = set(thread_pool._adopted)
    assert seen[-1][1] in workers and len(workers) <= thread_pool.workers()

    def nested(start, stop):     # a task from inside a part runs on threads of its own
        if start:
            thread_pool.run_parts(lambda a, b: None, parts)

    thread_pool.run_parts(nested, parts)
    assert thread_pool._adopted == workers


@needs_two_threads
def test_a_task_inside_a_multiplying_task_leaves_the_count_at_one():
    """A task started inside a part of a task whose parts multiply ends without giving the
    enclosing task's parts two threads again."""
    set_local = openblas.local_threads_setter()
    if set_local is None:
        pytest.skip("OpenBLAS without openblas_set_num_threads_local")
    parts = kernel_threads.split(1000, 1)
    seen = []

    def outer(start, stop):
        if start == 0:
            thread_pool.run_parts(lambda a, b: None, parts, uses_blas=True)
            before = set_local(1)
            set_local(before)
            seen.append(before)

    thread_pool.run_parts(outer, parts, uses_blas=True)
    assert seen == [1]
    assert set_local(0) == openblas.threads() != 1
