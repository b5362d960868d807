"""Time of one Adam step on the parameters of an MLP: minitf vs a hand-written numpy Adam.

    python benchmarks/optimizer_step.py [--quick]

For the MLP 784-512-512-10 (and the small 784-32-10) with fixed float32 gradients, prints the
time per step of
  * hand-written numpy Adam, ``_numpy_mlp.NumpyAdam`` (Keras' formula,
    ``m[:] = b1 * m + (1 - b1) * g`` ..., temporaries allocated by numpy),
  * minitf ``Adam.apply_gradients`` on one thread (eager: Python dispatch plus the host kernel,
    the fused native pass of ``minitf.native`` where a C compiler is available),
  * the host kernel alone (what a traced ``minitf.function`` step replays),
  * the host kernel on numpy ufuncs only, as on a machine without a C compiler,
and the ratio numpy / minitf (> 1: minitf is faster). Updates run on one thread here; the
two-thread split (from 1M elements with the fused kernel) is measured in training steps.
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import minitf as tf  # noqa: E402
from minitf import native  # noqa: E402
from minitf._state import state  # noqa: E402
from minitf.keras import optimizers  # noqa: E402
from _numpy_mlp import NumpyAdam, glorot_params  # noqa: E402


def params_for(sizes, seed=0):
    rng = np.random.default_rng(seed)
    params = glorot_params(sizes, rng)
    grads = [(rng.standard_normal(p.shape) * 1e-2).astype(np.float32) for p in params]
    return params, grads


class _Recorder:
    """Captures the host kernel the way a minitf.function trace would."""

    def __init__(self):
        self.fn = None

    def record_op(self, *args):
        pass

    def record_assign(self, *args):
        pass

    def record_host(self, fn, tensors):
        self.fn = fn

    def is_symbolic(self, t):
        return False

    def untraceable(self, what):
        raise RuntimeError(what)


def best_times(candidates, seconds, rounds=15):
    """Per-call time of each candidate: the best of ``rounds`` windows, the candidates'
    windows interleaved so that background load hits them alike (timeit's convention: noise
    only ever adds time)."""
    for fn in candidates.values():
        for _ in range(3):
            fn()
    window = seconds / rounds / len(candidates)
    best = {name: float("inf") for name in candidates}
    for _ in range(rounds):
        for name, fn in candidates.items():
            n, start = 0, time.perf_counter()
            while True:
                fn()
                n += 1
                elapsed = time.perf_counter() - start
                if elapsed >= window:
                    break
            best[name] = min(best[name], elapsed / n)
    return best


def traced_kernel(opt, pairs):
    rec = _Recorder()
    state.tracer = rec
    state.refresh()
    try:
        opt.apply_gradients(pairs)
    finally:
        state.tracer = None
        state.refresh()
    return rec.fn


def without_native(call):
    """Run ``call()`` on the ufunc path, as on a machine without a C compiler."""
    saved = native._kernels
    native._kernels = None
    try:
        return call()
    finally:
        native._kernels = saved


def row(sizes, seconds):
    params, grads = params_for(sizes)
    ref = NumpyAdam([p.copy() for p in params])
    tgrads = [tf.constant(g) for g in grads]
    candidates = {"hand-written numpy": lambda: ref.step(grads)}
    compiled = native.kernels()
    for label, fused in (("", True), (", ufuncs only", False)):
        if fused is False and compiled is None:
            continue                       # no compiler: the first row already is this one
        variables = [tf.Variable(p) for p in params]
        opt = optimizers.Adam(1e-3)
        opt.parallel = False
        pairs = list(zip(tgrads, variables))
        if fused:
            candidates["minitf apply_gradients"] = lambda opt=opt, pairs=pairs: \
                opt.apply_gradients(pairs)
            fn = traced_kernel(opt, pairs)
            candidates["minitf host kernel"] = lambda fn=fn: fn(*grads)
        else:
            fn = without_native(lambda: traced_kernel(opt, pairs))
            candidates["minitf host kernel" + label] = \
                lambda fn=fn: without_native(lambda: fn(*grads))
    best = best_times(candidates, seconds)
    t_numpy = best.pop("hand-written numpy")
    n = sum(p.size for p in params)
    print(f"\nAdam step, MLP {'-'.join(map(str, sizes))} ({n:,} parameters, "
          f"{len(params)} variables), best of 15 interleaved windows")
    print(f"  {'hand-written numpy':<32} {t_numpy * 1e3:8.3f} ms")
    for label, t in best.items():
        print(f"  {label:<32} {t * 1e3:8.3f} ms   numpy / minitf = {t_numpy / t:5.2f}x")
    return t_numpy, best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short timing windows")
    args = parser.parse_args()
    seconds = 2.0 if args.quick else 8.0
    print(f"backend {tf.get_backend()}, {os.cpu_count()} CPUs, numpy {np.__version__}")
    row((784, 512, 512, 10), seconds)
    row((784, 32, 10), seconds)


if __name__ == "__main__":
    main()
