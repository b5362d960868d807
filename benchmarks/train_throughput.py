"""Training throughput: GEMM floor, hand-written numpy, PyTorch and minitf, side by side.

    python benchmarks/train_throughput.py                 # all rows in one process, interleaved
    python benchmarks/train_throughput.py --per-process   # each row in its own process (median of 3)
    python benchmarks/train_throughput.py --memory        # peak memory of a step, per process
    python benchmarks/train_throughput.py --workload cnn --row "minitf function"   # one row

Workloads (Adam, softmax cross-entropy): ``big`` MLP 784-512-512-10 batch 128, ``tiny`` MLP
784-32-10 batch 32, ``cnn`` Conv32-pool-Conv64-pool-Dense10 (3x3 valid, NHWC) batch 128 and
``cnn-shipped``, models/cnn.py as configs/fashion_mnist_cnn.yaml builds it, batch 128, and
``cnn-rgb``, a small VGG-style network on 32x32 RGB images (two SAME 3x3 convolutions before
each pool, no batch norm, Dense 256), batch 64.

Rows: the ``GEMM floor`` (the step's matrix products alone, with the convolutions' patches made
in advance), the ``hand-written numpy`` step, ``PyTorch eager`` (torch.optim.Adam's default),
``PyTorch fused Adam`` (fused=True, foreach where unsupported), ``minitf eager`` and ``minitf
function``. Samples/s are followed by ratios to numpy, to the floor and to PyTorch fused. The
PyTorch rows need the optional ``bench`` extra (``pip install minitf[bench]``). Data preparation
is excluded: each timed window reuses prepared batches.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)

import minitf as tf  # noqa: E402
from minitf.testing import sparse_ce_step  # noqa: E402
import _torch_peers as peers  # noqa: E402
from _numpy_cnn import NumpyCNN  # noqa: E402
from _numpy_mlp import NumpyMLP  # noqa: E402

ROWS = ("GEMM floor", "hand-written numpy", "PyTorch eager", "PyTorch fused Adam",
        "minitf eager", "minitf function")
WORKLOADS = {  # name: (title, input shape, batch)
    "big": ("MLP 784-512-512-10, batch 128", (784,), 128),
    "tiny": ("MLP 784-32-10, batch 32", (784,), 32),
    "cnn": ("CNN Conv32-pool-Conv64-pool-Dense10 (valid), batch 128", (28, 28, 1), 128),
    "cnn-shipped": ("models/cnn.py (fashion_mnist_cnn.yaml), batch 128", (28, 28, 1), 128),
    "cnn-rgb": ("CNN on 32x32 RGB, Conv32-Conv32-pool-Conv64-Conv64-pool-Dense256-Dense10 "
                "(same), batch 64", (32, 32, 3), 64),
}
SIZES = {"big": (784, 512, 512, 10), "tiny": (784, 32, 10)}


# --- minitf models ---------------------------------------------------------------------------------

def mlp(sizes):
    layers = [tf.keras.layers.Dense(n, activation="relu") for n in sizes[1:-1]]
    layers.append(tf.keras.layers.Dense(sizes[-1]))
    model = tf.keras.Sequential(layers)
    model.build((None, sizes[0]))
    return model


def cnn():
    L = tf.keras.layers
    model = tf.keras.Sequential([
        L.Conv2D(32, 3, activation="relu"), L.MaxPooling2D(2),
        L.Conv2D(64, 3, activation="relu"), L.MaxPooling2D(2),
        L.Flatten(), L.Dense(10)])
    model.build((None, 28, 28, 1))
    return model


def rgb_cnn():
    L = tf.keras.layers
    model = tf.keras.Sequential([
        L.Conv2D(32, 3, padding="same", activation="relu"),
        L.Conv2D(32, 3, padding="same", activation="relu"), L.MaxPooling2D(2),
        L.Conv2D(64, 3, padding="same", activation="relu"),
        L.Conv2D(64, 3, padding="same", activation="relu"), L.MaxPooling2D(2),
        L.Flatten(), L.Dense(256, activation="relu"), L.Dense(10)])
    model.build((None, 32, 32, 3))
    return model


def shipped_cnn(sample):
    from models.cnn import CNN
    model = CNN(filters=(32, 64), kernel_size=3, dense_units=128, dropout=0.3)
    model(sample, training=False)
    return model


def copy_weights(model, params):
    for var, value in zip(model.trainable_variables, params):
        var.assign(value)


def instruction_sets():
    """What each party's kernels run on: numpy's widest SIMD target, OpenBLAS's kernel set,
    minitf's native kernels' -march. ``NPY_DISABLE_CPU_FEATURES="X86_V4 AVX512_ICL
    AVX512_SPR" OPENBLAS_CORETYPE=Haswell MINITF_NATIVE_MARCH=x86-64-v3`` (and PyTorch's
    ``ATEN_CPU_CAPABILITY=avx2``) run this AVX-512 CPU as one without AVX-512."""
    from minitf import mkl_blas, native, openblas
    try:
        from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
        simd = [t for t in __cpu_dispatch__ if __cpu_features__.get(t)]
        simd = simd[-1] if simd else "baseline"
    except ImportError:
        simd = "unknown"
    torch_isa = peers.torch.backends.cpu.get_cpu_capability() if peers.available() else "-"
    products = "MKL" if mkl_blas.active() else "numpy's BLAS"
    return (f"instruction sets: numpy {simd}, OpenBLAS {openblas.core_name() or 'unknown'}, "
            f"minitf native {native.march()}, PyTorch {torch_isa}; minitf's products on "
            f"{products} (the GEMM floor is numpy's)")


# --- the GEMM floor ------------------------------------------------------------------------------

def _products(workload, batch):
    """(M, K, N, input gradient needed) of each layer's product: forward (M,K)@(K,N), weight
    gradient (K,M)@(M,N) and, past the first layer, input gradient (M,N)@(N,K)."""
    if workload in SIZES:
        s = SIZES[workload]
        return [(batch, a, b, i > 0) for i, (a, b) in enumerate(zip(s[:-1], s[1:]))]
    if workload == "cnn":
        return [(batch * 26 * 26, 9, 32, False), (batch * 11 * 11, 288, 64, True),
                (batch, 1600, 10, True)]
    if workload == "cnn-rgb":
        return [(batch * 32 * 32, 27, 32, False), (batch * 32 * 32, 288, 32, True),
                (batch * 16 * 16, 288, 64, True), (batch * 16 * 16, 576, 64, True),
                (batch, 4096, 256, True), (batch, 256, 10, True)]
    return [(batch * 28 * 28, 9, 32, False), (batch * 14 * 14, 288, 64, True),
            (batch, 3136, 128, True), (batch, 128, 10, True)]


def gemm_floor(workload, batch):
    rng = np.random.default_rng(0)
    layers = [(rng.standard_normal((m, k), np.float32), rng.standard_normal((k, n), np.float32),
               rng.standard_normal((m, n), np.float32), grad)
              for m, k, n, grad in _products(workload, batch)]

    def step(x, y):
        for a, w, g, grad in layers:
            a @ w
            a.T @ g
            if grad:
                g @ w.T

    return step


# --- rows ----------------------------------------------------------------------------------------

def batches_for(shape, batch, n=8, seed=0):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal((batch,) + shape).astype(np.float32),
             rng.integers(0, 10, batch).astype(np.int32)) for _ in range(n)]


def build_row(workload, row):
    """``(step, batches)`` for one row, or None where it does not apply (no such reference, or
    PyTorch not installed)."""
    title, shape, batch = WORKLOADS[workload]
    data = batches_for(shape, batch, n=8 if workload in SIZES else 4)
    tensors = [(tf.constant(x), tf.constant(y)) for x, y in data]
    if row == "GEMM floor":
        return gemm_floor(workload, batch), data
    if row == "hand-written numpy":
        if workload in SIZES:
            return NumpyMLP(SIZES[workload]).step, data
        return (NumpyCNN().step, data) if workload == "cnn" else None
    if row.startswith("PyTorch"):
        if not peers.available():
            return None
        net = (peers.mlp(SIZES[workload]) if workload in SIZES else
               peers.cnn_valid() if workload == "cnn" else
               peers.cnn_rgb() if workload == "cnn-rgb" else peers.cnn_shipped())
        kind = "eager" if row == "PyTorch eager" else "fused"
        return peers.training_step(net, kind), peers.batches(data)
    if workload in SIZES:
        model = mlp(SIZES[workload])
        copy_weights(model, NumpyMLP(SIZES[workload]).params)
    elif workload == "cnn":
        model = cnn()
    elif workload == "cnn-rgb":
        model = rgb_cnn()
    else:
        model = shipped_cnn(tensors[0][0])
    step = sparse_ce_step(model, tf.keras.optimizers.Adam(1e-3))
    return (tf.function(step) if row == "minitf function" else step), tensors


ROUNDS = 15   # short alternating windows: a burst of load on a shared host hits few of them


def interleaved(contenders, seconds, warmup=3, rounds=ROUNDS):
    """Samples/s per contender, timing them in alternating windows (so a burst of load on the
    machine hits all of them alike) and keeping each one's best window."""
    for step, batches in contenders.values():
        for i in range(warmup):
            step(*batches[i % len(batches)])
    best = {name: 0.0 for name in contenders}
    window = seconds / (rounds * len(contenders))
    for _ in range(rounds):
        for name, (step, batches) in contenders.items():
            n, start = 0, time.perf_counter()
            while time.perf_counter() - start < window or n == 0:
                step(*batches[n % len(batches)])
                n += 1
            rate = n * batches[0][0].shape[0] / (time.perf_counter() - start)
            best[name] = max(best[name], rate)
    return best


def print_table(workload, rates, how):
    print(f"\n{WORKLOADS[workload][0]}, Adam ({how})")
    numpy_rate = rates.get("hand-written numpy")
    floor = rates.get("GEMM floor")
    fused = rates.get("PyTorch fused Adam")
    print(f"  {'':<20} {'samples/s':>10}  {'/numpy':>6}  {'/floor':>6}  {'/PyTorch fused':>14}")
    for label, rate in rates.items():
        cells = [f"{rate / ref:6.2f}" if ref else f"{'-':>6}" for ref in (numpy_rate, floor)]
        cells.append(f"{rate / fused:14.2f}" if fused else f"{'-':>14}")
        print(f"  {label:<20} {rate:>10,.0f}  " + "  ".join(cells))


def run_in_process(workloads, seconds):
    for workload in workloads:
        contenders = {}
        for row in ROWS:
            built = build_row(workload, row)
            if built is not None:
                contenders[row] = built
        rates = interleaved(contenders, seconds * len(contenders))
        print_table(workload, rates, f"one process, best of {ROUNDS} interleaved windows")


def set_threads(n):
    """The same thread count for numpy's BLAS and PyTorch (children inherit it)."""
    from threadpoolctl import threadpool_limits
    threadpool_limits(n, user_api="blas")
    os.environ["BENCH_THREADS"] = str(n)
    peers.THREADS = n


def _child(args):
    if os.environ.get("BENCH_THREADS"):
        args = args + ["--threads", os.environ["BENCH_THREADS"]]
    cmd = [sys.executable, os.path.abspath(__file__)] + args
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    match = re.search(r"^RESULT (\S+)$", out, re.M)
    return None if match is None or match.group(1) == "none" else float(match.group(1))


def run_per_process(workloads, seconds, repeats=3):
    for workload in workloads:
        rates = {}
        for row in ROWS:
            values = [_child(["--workload", workload, "--row", row, "--seconds", str(seconds)])
                      for _ in range(repeats)]
            if None not in values:
                rates[row] = statistics.median(values)
        print_table(workload, rates, f"each row in its own process, median of {repeats}")


# --- memory --------------------------------------------------------------------------------------

def _status_kib(field):
    with open("/proc/self/status") as f:
        return int(re.search(rf"^{field}:\s+(\d+)", f.read(), re.M).group(1))


def step_peak_mib(step, batches, steps=3):
    """Peak resident memory a step adds to the process: the high-water mark over a few steps
    (after warm-up and, for a function, its trace) minus the resident size before the first
    step. It counts what a step keeps between calls (planned buffers, optimizer slots) and what
    it allocates while it runs, for any framework (Linux only)."""
    base = _status_kib("VmRSS")
    for i in range(3):
        step(*batches[i % len(batches)])
    with open("/proc/self/clear_refs", "w") as f:   # restart the high-water mark from now
        f.write("5")
    for i in range(steps):
        step(*batches[i % len(batches)])
    return (_status_kib("VmHWM") - base) / 1024


def heap_peak_mib(step, batches, steps=3):
    """Peak bytes numpy and Python allocate during a step (tracemalloc; PyTorch's allocator is
    not traced), plus, for a function, the planned buffers it keeps between calls: they were
    allocated before the window but serve every step."""
    import gc
    import tracemalloc
    step(*batches[0])
    gc.collect()
    tracemalloc.start()
    for i in range(steps):
        step(*batches[i % len(batches)])
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return (peak + (step.resident_bytes() if hasattr(step, "resident_bytes") else 0)) / 2 ** 20


MEMORY_ROWS = ("PyTorch eager", "minitf eager", "minitf function")


def run_memory(workloads):
    print("\nPeak memory of a training step, MiB (each row in its own process). resident: what "
          "the step adds to the process's resident size at its peak; heap: tracemalloc's peak "
          "inside the step plus a function's planned buffers (numpy only)")
    for workload in workloads:
        for measure in ("memory", "heap"):
            peaks = {row: _child(["--workload", workload, "--row", row, "--measure", measure])
                     for row in MEMORY_ROWS if measure == "memory" or row.startswith("minitf")}
            cells = "  ".join(f"{row} {peak:7.1f}" for row, peak in peaks.items()
                              if peak is not None)
            print(f"  {workload:<12} {'resident' if measure == 'memory' else 'heap':<9} {cells}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short timing windows")
    parser.add_argument("--seconds", type=float, default=None, help="timing seconds per row")
    parser.add_argument("--workload", choices=sorted(WORKLOADS), action="append",
                        help="only these workloads (repeatable)")
    parser.add_argument("--per-process", action="store_true", help="each row in its own process")
    parser.add_argument("--memory", action="store_true", help="peak memory rows only")
    parser.add_argument("--row", choices=ROWS, help="time one row and print 'RESULT <value>'")
    parser.add_argument("--measure", choices=("speed", "memory", "heap"), default="speed")
    parser.add_argument("--threads", type=int, default=None,
                        help="BLAS and PyTorch threads (default: every CPU); on a shared, "
                             "loaded host 1 gives steadier ratios")
    args = parser.parse_args()
    if args.threads:
        set_threads(args.threads)
    seconds = args.seconds or (1.5 if args.quick else 6.0)
    workloads = args.workload or list(WORKLOADS)
    if args.row:
        built = build_row(workloads[0], args.row)
        if built is None:
            print("RESULT none")
        elif args.measure == "memory":
            print(f"RESULT {step_peak_mib(*built):.2f}")
        elif args.measure == "heap":
            print(f"RESULT {heap_peak_mib(*built):.2f}")
        else:
            print(f"RESULT {interleaved({args.row: built}, seconds)[args.row]:.1f}")
        return
    print(f"backend {tf.get_backend()}, {os.cpu_count()} CPUs, "
          f"{args.threads or os.cpu_count()} BLAS/PyTorch threads, numpy {np.__version__}, "
          f"PyTorch {peers.torch.__version__ if peers.available() else 'not installed'}")
    print(instruction_sets())
    if args.memory:
        run_memory([w for w in workloads if w != "tiny"])
    elif args.per_process:
        run_per_process(workloads, seconds)
    else:
        run_in_process(workloads, seconds)


if __name__ == "__main__":
    main()
