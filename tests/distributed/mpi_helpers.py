"""Launching ``mpiexec -n N`` from tests, with a hard time limit."""
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scripts")
TRAIN = os.path.join(ROOT, "train.py")


def _mpiexec():
    beside = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    return beside if os.path.exists(beside) else shutil.which("mpiexec")


def _missing():
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return "mpi4py is not installed (pip install -e \".[mpi]\")"
    if _mpiexec() is None:
        return "no mpiexec (pip install -e \".[mpi]\" installs MPICH's)"
    return None


needs_mpi = pytest.mark.skipif(_missing() is not None, reason=str(_missing()))


def env():
    out = dict(os.environ)
    out["PYTHONPATH"] = ROOT + os.pathsep + out.get("PYTHONPATH", "")
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        out[name] = "1"
    return out


def run(argv, timeout=120):
    """Run ``argv`` in its own process group; kill the whole group past ``timeout`` seconds.
    Returns (CompletedProcess, seconds)."""
    start = time.monotonic()
    proc = subprocess.Popen(argv, cwd=ROOT, env=env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"{' '.join(argv)} did not finish in {timeout} s\n--- stdout\n{out}\n"
                    f"--- stderr\n{err}")
    return subprocess.CompletedProcess(argv, proc.returncode, out, err), \
        time.monotonic() - start


def mpirun(n, *argv, timeout=120):
    """``mpiexec -n n python *argv``."""
    return run([_mpiexec(), "-n", str(n), sys.executable, *argv], timeout=timeout)


def mpmd(*commands, timeout=120):
    """``mpiexec -n 1 python A : -n 1 python B``: one rank per argument list."""
    argv = [_mpiexec()]
    for i, command in enumerate(commands):
        argv += ([":"] if i else []) + ["-n", "1", sys.executable, *command]
    return run(argv, timeout=timeout)


def python(*argv, timeout=120):
    return run([sys.executable, *argv], timeout=timeout)


def check(result, expect=0):
    proc, _ = result
    assert proc.returncode == expect, (f"exit {proc.returncode}, expected {expect}\n"
                                       f"--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr}")
    return proc
