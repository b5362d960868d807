"""Shared test setup.

* The backend comes from ``MINITF_BACKEND`` (numpy by default) and is selected with
  ``minitf.set_backend`` before any test runs. Asking for cupy where cupy or a GPU is missing
  skips every test instead of failing to import.
* Native kernels (``minitf.native``) are built into a temporary cache for the session.
* ``@pytest.mark.cupy`` marks a test that needs cupy and a GPU; it is skipped without them.
* After every test: numeric checks are switched off again, and no GradientTape, forward
  accumulator or gradient override may be left active (a test that leaks one fails, and the
  leak is cleaned up so later tests are unaffected).
"""
import atexit
import os
import shutil
import tempfile

import pytest

BACKEND = os.environ.get("MINITF_BACKEND", "numpy")

# Native kernels are built into a throw-away cache, not the user's ~/.cache/minitf.
if "MINITF_CACHE_DIR" not in os.environ:
    os.environ["MINITF_CACHE_DIR"] = tempfile.mkdtemp(prefix="minitf-test-cache-")
    atexit.register(shutil.rmtree, os.environ["MINITF_CACHE_DIR"], ignore_errors=True)


def _cupy_usable():
    try:
        import cupy
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # ImportError, or a CUDA error without a driver or GPU
        return False


CUPY = _cupy_usable()
_BACKEND_MISSING = BACKEND == "cupy" and not CUPY
if _BACKEND_MISSING:  # minitf selects its backend on import: keep the import working
    os.environ["MINITF_BACKEND"] = "numpy"

import minitf  # noqa: E402
from minitf._state import state  # noqa: E402
from minitf.ops import registry  # noqa: E402

if not _BACKEND_MISSING:
    minitf.set_backend(BACKEND)


@pytest.fixture
def openblas_own_threads():
    """Run a test with OpenBLAS's own worker threads in charge (``minitf.thread_pool`` out of
    the way), as where the pool is unavailable or turned off."""
    from minitf import native, thread_pool
    native.kernels()   # loading them installs the pool: do it now, so that it is out below
    was_active = thread_pool.active()
    thread_pool.uninstall()
    yield
    if was_active:
        thread_pool.install(native.kernels().lib)


@pytest.fixture
def winograd_everywhere(monkeypatch):
    """Winograd's kernels for every convolution they can run, however small (``winograd.pays``
    leaves small ones to im2col): a test's layers can stay small."""
    from minitf import winograd
    monkeypatch.setattr(winograd, "pays", lambda x_shape, w_shape: True)


def pytest_configure(config):
    config.addinivalue_line("markers", "cupy: needs cupy and an NVIDIA GPU (skipped otherwise)")


def pytest_collection_modifyitems(config, items):
    if _BACKEND_MISSING:
        skip_all = pytest.mark.skip(reason="MINITF_BACKEND=cupy but cupy or a GPU is missing")
        for item in items:
            item.add_marker(skip_all)
    elif not CUPY:
        skip_gpu = pytest.mark.skip(reason="needs cupy and a GPU")
        for item in items:
            if "cupy" in item.keywords:
                item.add_marker(skip_gpu)


@pytest.fixture(autouse=True)
def _clean_autodiff_state():
    yield
    minitf.debugging.disable_check_numerics()
    leaks = []
    if state.tapes:
        leaks.append(f"{len(state.tapes)} GradientTape(s) still recording")
        state.tapes.clear()
    if state.accumulators:
        leaks.append(f"{len(state.accumulators)} ForwardAccumulator(s) still active")
        state.accumulators.clear()
    overridden = sorted({op.name for op in registry.OPS.values() if op.user_grad is not None})
    if overridden:
        leaks.append(f"gradient overrides left installed for {overridden}")
        for name in overridden:
            registry.clear_gradient_override(name)
    state.refresh()
    if leaks:
        pytest.fail("test leaked autodiff state: " + "; ".join(leaks))
