"""Backend helpers: the vectorised relu and parking numpy's OpenBLAS workers."""
import os
import threading

import numpy as np
import pytest

from minitf import backend as B
from minitf import openblas


@pytest.mark.parametrize("shape", [(), (0,), (3, 4), (1 << 16,), ((1 << 16) + 3,), (3, 50_000)])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_relu_matches_maximum_with_zero_across_chunk_boundaries(shape, dtype):
    rng = np.random.default_rng(0)
    x = B.xp.asarray(rng.standard_normal(shape).astype(dtype))
    flat = x.reshape(-1)
    if flat.size >= 3:
        flat[:3] = [np.nan, -0.0, -np.inf]
    expected = B.xp.maximum(x, 0)
    got = B.relu(x)
    np.testing.assert_array_equal(B.to_numpy(got), B.to_numpy(expected))
    assert got.dtype == x.dtype and got.shape == x.shape
    inplace = x.copy()
    assert B.relu(inplace, out=inplace) is inplace
    np.testing.assert_array_equal(B.to_numpy(inplace), B.to_numpy(expected))


def test_relu_of_strided_input_and_output():
    x = B.xp.asarray(np.random.default_rng(1).standard_normal((300, 200)).astype("float32"))
    np.testing.assert_array_equal(B.to_numpy(B.relu(x.T)), B.to_numpy(B.xp.maximum(x.T, 0)))
    out = B.xp.empty((200, 300), dtype="float32").T
    B.relu(x, out=out)
    np.testing.assert_array_equal(B.to_numpy(out), B.to_numpy(B.xp.maximum(x, 0)))


needs_openblas = pytest.mark.skipif(B.get_backend() != "numpy" or not openblas.available(),
                                    reason="numpy's BLAS is not a pthreads OpenBLAS")
needs_openblas_workers = pytest.mark.skipif(
    B.get_backend() != "numpy" or not openblas.available() or (openblas.threads() or 1) < 2,
    reason="OpenBLAS runs one thread here (or is not numpy's BLAS): no workers to park")


@needs_openblas_workers
@pytest.mark.usefixtures("openblas_own_threads")
def test_park_stops_the_workers_and_blas_restarts_them():
    a = np.random.default_rng(2).standard_normal((256, 256)).astype(np.float32)
    expected = a @ a
    assert openblas.workers_running()    # a product of this size starts the workers
    assert openblas.park() is True
    assert not openblas.workers_running()
    assert openblas.park() is True       # nothing left to stop
    assert not openblas.workers_running()
    np.testing.assert_array_equal(a @ a, expected)
    assert openblas.workers_running()



@needs_openblas_workers
@pytest.mark.usefixtures("openblas_own_threads")
def test_park_leaves_the_workers_alone_while_another_thread_lives():
    a = np.ones((256, 256), np.float32)
    a @ a
    release = threading.Event()
    other = threading.Thread(target=release.wait, name="user-thread")
    other.start()
    try:
        assert openblas.park() is False
        assert openblas.workers_running()
    finally:
        release.set()
        other.join()
    a @ a
    release = threading.Event()
    own = threading.Thread(target=release.wait, name=openblas.THREAD_PREFIX + "test")
    own.start()
    try:
        assert openblas.park() is True     # minitf's own threads never call BLAS
        assert not openblas.workers_running()
    finally:
        release.set()
        own.join()


@needs_openblas_workers
@pytest.mark.usefixtures("openblas_own_threads")
def test_park_waits_for_a_declared_thread_to_leave_its_blas_block():
    a = np.ones((256, 256), np.float32)
    inside, leave, done = threading.Event(), threading.Event(), threading.Event()

    def worker():
        with openblas.may_use_blas():
            inside.set()
            leave.wait()
        done.wait()                        # alive, declared, outside any block

    thread = threading.Thread(target=worker, name="prefetch-like")
    thread.start()
    try:
        inside.wait()
        a @ a
        assert openblas.park() is False    # inside its block: it may be in BLAS
        assert openblas.workers_running()
        leave.set()
        while openblas._blas_users:
            pass
        assert openblas.park() is True
        assert not openblas.workers_running()
    finally:
        leave.set()
        done.set()
        thread.join()


@pytest.mark.parametrize("n", [5, B._AXPBY_MIN - 1, B._AXPBY_MIN, 100_003])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_axpby_rounds_like_two_ufunc_passes(n, dtype):
    rng = np.random.default_rng(3)
    x = B.xp.asarray(rng.standard_normal(n).astype(dtype))
    y = B.xp.asarray(rng.standard_normal(n).astype(dtype))
    for a, b in [(0.1, 0.999), (-1e-3, 1.0), (1.0, 0.5), (-1.0, 1.0)]:
        expected = y * b + x * a
        got = y.copy()
        assert B.axpby(a, x, b, got) is got
        np.testing.assert_array_equal(B.to_numpy(got), B.to_numpy(expected))


def test_axpby_keeps_nan_and_inf_semantics_of_the_ufuncs():
    n = 2 * B._AXPBY_MIN
    x = B.xp.ones(n, dtype="float32")
    y = B.xp.ones(n, dtype="float32")
    x[0], y[1] = np.nan, np.inf
    for a, b in [(0.0, 0.5), (0.5, 0.0), (0.5, 0.5)]:   # a zero factor still meets NaN and inf
        got = y.copy()
        with np.errstate(all="ignore"):
            B.axpby(a, x, b, got)
            expected = y * b + x * a
        np.testing.assert_array_equal(B.to_numpy(got), B.to_numpy(expected))


def test_axpby_on_strided_arrays_and_with_scratch():
    rng = np.random.default_rng(4)
    x = B.xp.asarray(rng.standard_normal((300, 100)).astype("float32")).T
    y = B.xp.asarray(rng.standard_normal((100, 300)).astype("float32"))
    expected = y * 0.9 + x * 0.1
    scratch = B.xp.empty_like(y)
    B.axpby(0.1, x, 0.9, y, scratch=scratch)
    np.testing.assert_array_equal(B.to_numpy(y), B.to_numpy(expected))


@needs_openblas
@pytest.mark.usefixtures("openblas_own_threads")
def test_park_goes_ahead_beside_tqdms_monitor_thread():
    import io
    import time
    tqdm = pytest.importorskip("tqdm")
    for _ in tqdm.tqdm(range(2), file=io.StringIO()):   # starts tqdm's monitor thread
        time.sleep(0.001)
    assert any(type(t).__name__ == "TMonitor" for t in threading.enumerate())
    a = np.ones((256, 256), np.float32)
    a @ a
    assert openblas.park() is True
    assert not openblas.workers_running()


@needs_openblas
@pytest.mark.usefixtures("openblas_own_threads")
def test_park_goes_ahead_beside_tensorboardx_writer_threads(tmp_path):
    tensorboardX = pytest.importorskip("tensorboardX")
    writer = tensorboardX.SummaryWriter(str(tmp_path), flush_secs=30)
    try:
        writer.add_scalar("loss", 1.0, 0)       # starts its logger thread and queue feeder
        names = {type(t).__name__ for t in threading.enumerate()}
        assert "_EventLoggerThread" in names
        a = np.ones((256, 256), np.float32)
        a @ a
        assert openblas.park() is True
        assert not openblas.workers_running()
    finally:
        writer.close()


@needs_openblas_workers
@pytest.mark.usefixtures("openblas_own_threads")
def test_kernel_parts_run_on_the_calling_thread_while_the_workers_cannot_be_parked(monkeypatch):
    from minitf import kernel_threads
    monkeypatch.setattr(kernel_threads, "count", lambda: 2)
    ran_on = []

    def part(start, stop):
        ran_on.append((start, threading.current_thread()))

    a = np.ones((256, 256), np.float32)
    release = threading.Event()
    other = threading.Thread(target=release.wait, name="user-thread")   # may be in BLAS
    other.start()
    try:
        a @ a
        kernel_threads.run(part, [(0, 5), (5, 10)])
        assert openblas.workers_running()
    finally:
        release.set()
        other.join()
    assert sorted(start for start, _ in ran_on) == [0, 5]
    assert all(t is threading.current_thread() for _, t in ran_on)
    ran_on.clear()
    a @ a
    kernel_threads.run(part, [(0, 5), (5, 10)])     # now parked: the second part on a worker
    assert not openblas.workers_running()
    assert {start for start, t in ran_on if t is not threading.current_thread()} == {5}


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_does_not_inherit_a_held_lock():
    import time
    with openblas._lock:              # held at the fork, as by another thread
        pid = os.fork()
        if pid == 0:                  # child: would wait forever on the inherited lock
            try:
                with openblas.may_use_blas():
                    pass
                openblas.park()
            finally:
                os._exit(0)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            assert os.waitstatus_to_exitcode(status) == 0
            return
        time.sleep(0.01)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    pytest.fail("the forked child deadlocked on openblas._lock")
