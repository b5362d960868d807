"""The rest of ``tf.test``: ``main``, build and device queries, ``Benchmark`` and decorators.

minitf has no build configuration: ``is_built_with_cuda()`` says whether the cupy package (the
GPU backend) is installed, ``is_gpu_available()`` whether a GPU is in use now.
"""
import functools
import importlib.util
import math
import platform
import sys
import time
import unittest
from types import SimpleNamespace

from . import backend as B
from . import config
from .debugging import get_logger
from .namespace_imports import namespace
from .test_case import TestCase
from .test_gradient import compute_gradient
from .test_util import evaluate


def main(argv=None):
    """Run the ``unittest`` tests of ``__main__`` and exit with 0 if all pass, else 1."""
    return unittest.main(module="__main__", argv=argv)


def is_built_with_cuda():
    """True when the cupy package (minitf's CUDA backend) is installed."""
    return importlib.util.find_spec("cupy") is not None


def is_built_with_rocm():
    """False: minitf has no ROCm backend."""
    return False


def is_built_with_gpu_support():
    """``is_built_with_cuda() or is_built_with_rocm()``."""
    return is_built_with_cuda() or is_built_with_rocm()


def is_built_with_xla():
    """False: minitf has no XLA compiler."""
    return False


_CPU_TARGETS = {"x86": ("x86_64", "amd64", "i386", "i686", "x86"),
                "x86_64": ("x86_64", "amd64"),
                "aarch64": ("aarch64", "arm64"), "arm64": ("aarch64", "arm64"),
                "arm": ("aarch64", "arm64", "armv7l", "arm"),
                "powerpc": ("ppc64le", "ppc64"), "ppc64le": ("ppc64le",)}


def is_cpu_target_available(target):
    """Whether ops run on a CPU of family ``target`` ("x86", "aarch64", ...): minitf runs on
    the host CPU only, so this is true when ``target`` names the host's architecture."""
    machine = platform.machine().lower()
    return machine in _CPU_TARGETS.get(str(target).lower(), (str(target).lower(),))


def is_gpu_available(cuda_only=False, min_cuda_compute_capability=None):
    """True when the cupy backend is active and sees a GPU."""
    return config._is_gpu_available(cuda_only, min_cuda_compute_capability)


def gpu_device_name():
    """``"/device:GPU:0"`` on the cupy backend with a GPU, else ``""``."""
    return config._gpu_device_name()


def benchmark_config():
    """The session configuration for benchmarks: minitf has none to tune, so ``None``."""
    return None


def sync_devices():
    """Wait until every queued device computation has finished (a no-op on the CPU)."""
    if B.get_backend() == "cupy":   # pragma: no cover - GPU only
        B.xp.cuda.Device().synchronize()


def with_eager_op_as_function(cls=None, only_as_function=False):
    """Class decorator kept for compatibility: returns the class unchanged."""
    def decorator(klass):
        return klass
    return decorator(cls) if cls is not None else decorator


def disable_with_predicate(pred, skip_message):
    """Test-method decorator: skip the test with ``skip_message`` when ``pred()`` is true."""
    def decorator(func):
        @functools.wraps(func)
        def wrapper(self, *args, **kwargs):
            if pred():
                self.skipTest(skip_message)
            return func(self, *args, **kwargs)
        return wrapper
    return decorator


class Benchmark:
    """``tf.test.Benchmark``: subclasses report timings with ``report_benchmark`` (logged to
    the ``"minitf"`` logger) or measure a computation with ``run_op_benchmark``."""

    @classmethod
    def is_abstract(cls):
        return len(cls.mro()) <= 2

    def _get_name(self, overwrite_name=None):
        """``Class.method`` of the outermost Benchmark method on the call stack."""
        frame, caller, method = sys._getframe(1), None, None
        while frame is not None:
            if isinstance(frame.f_locals.get("self"), Benchmark):
                caller, method = frame.f_locals["self"], frame.f_code.co_name
            frame = frame.f_back
        if caller is None:
            raise ValueError("Unable to determine calling Benchmark class.")
        return f"{type(caller).__name__}.{overwrite_name or method}"

    def report_benchmark(self, iters=None, cpu_time=None, wall_time=None, throughput=None,
                         extras=None, name=None, metrics=None):
        """Log one benchmark result, named ``Class.method`` (or ``Class.name``)."""
        if extras is not None and not isinstance(extras, dict):
            raise TypeError(f"report_benchmark: extras must be a dict, got {type(extras)}")
        name = self._get_name(overwrite_name=name)

        def num(value):
            return value if value is not None else -1

        get_logger().info("Benchmark [%s] iters: %d, wall_time: %g, cpu_time: %g,"
                          "throughput: %g, extras: %s, metrics: %s", name, num(iters),
                          num(wall_time), num(cpu_time), num(throughput),
                          str(extras) if extras else "None", str(metrics) if metrics else "None")

    def run_op_benchmark(self, sess, op_or_tensor, feed_dict=None, burn_iters=2, min_iters=10,
                         store_trace=False, store_memory_usage=True, name=None, extras=None,
                         mbs=0):
        """Time ``min_iters`` runs (after ``burn_iters``) of ``op_or_tensor`` and report the
        median. Under eager execution a Tensor is already computed, so pass a callable (it is
        called on every run); ``sess`` may be None. Returns the reported values, with
        ``wall_time_mean`` and ``wall_time_stdev`` added to ``extras``."""
        def run_once():
            fetch = op_or_tensor() if callable(op_or_tensor) else op_or_tensor
            if sess is None:
                evaluate(fetch)
            else:
                sess.run(fetch, feed_dict=feed_dict) if feed_dict else sess.run(fetch)

        for _ in range(burn_iters):
            run_once()
        deltas = []
        for _ in range(min_iters):
            start = time.time()
            run_once()
            deltas.append(time.time() - start)
        ordered = sorted(deltas)
        median = ((ordered[len(ordered) // 2] + ordered[(len(ordered) - 1) // 2]) / 2.0
                  if ordered else -1)
        values = {"iters": min_iters, "wall_time": median,
                  "extras": extras if extras is not None else {}, "name": name,
                  "throughput": mbs / median if median > 0 else 0.0}
        self.report_benchmark(**values)
        mean = sum(deltas) / len(deltas) if deltas else -1
        stdev = (math.sqrt(sum((d - mean) ** 2 for d in deltas) / (len(deltas) - 1))
                 if len(deltas) > 1 else -1)
        values["extras"].update(wall_time_mean=mean, wall_time_stdev=stdev)
        return values

    def evaluate(self, tensors):
        """Numpy values of a Tensor or a nest of them."""
        return evaluate(tensors)


def install(tf):
    """Set ``tf.test`` (idempotent)."""
    test = namespace(tf, "test")
    names = dict(TestCase=TestCase, main=main, compute_gradient=compute_gradient,
                 Benchmark=Benchmark, benchmark_config=benchmark_config,
                 is_gpu_available=is_gpu_available, gpu_device_name=gpu_device_name,
                 is_built_with_cuda=is_built_with_cuda, is_built_with_rocm=is_built_with_rocm,
                 is_built_with_gpu_support=is_built_with_gpu_support,
                 is_built_with_xla=is_built_with_xla,
                 is_cpu_target_available=is_cpu_target_available,
                 with_eager_op_as_function=with_eager_op_as_function,
                 disable_with_predicate=disable_with_predicate,
                 experimental=SimpleNamespace(sync_devices=sync_devices))
    for key, value in names.items():
        setattr(test, key, value)
