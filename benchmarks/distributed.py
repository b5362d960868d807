"""Data-parallel throughput on 1 and 2 ranks, and the cost of an allreduce per message size.

    python benchmarks/distributed.py [--quick]

Launches itself with ``mpiexec -n 1`` and ``mpiexec -n 2`` (one BLAS thread per rank) and
prints, for the Fashion-MNIST MLP 784-512-512-10 (Adam, global batch 256, a traced step with
the fused gradient allreduce):
  * training samples per second of the job (all ranks together) and the speed-up over 1 rank,
  * per message size, the median time of one ``allreduce`` (float32 sum over 2 ranks) and the
    bandwidth: ``algbw = bytes / time``; ``busbw = algbw * 2 (n - 1) / n``, the traffic per
    link of a ring allreduce (NCCL's convention), comparable across rank counts.
Needs the ``[mpi]`` extra. On a shared machine the figures vary with the load.
"""
import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, ROOT)


def _worker(args):
    import numpy as np

    import minitf as tf
    import minitf.distributed as hvd
    import models

    hvd.init()
    rank, size = hvd.rank(), hvd.size()
    rng = np.random.default_rng(0)
    batch = args.batch
    x = rng.standard_normal((batch, 784)).astype(np.float32)
    y = rng.integers(0, 10, batch).astype(np.int32)
    part = slice(rank * batch // size, (rank + 1) * batch // size)
    xs, ys = tf.constant(x[part]), tf.constant(y[part])

    tf.random.set_seed(0)
    model = models.build_model("mlp", hidden_units=[512, 512], dropout=0.0)
    model(tf.zeros((1, 784)))
    opt = hvd.DistributedOptimizer(tf.keras.optimizers.Adam(1e-3))
    hvd.broadcast_variables(model.variables)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def step(xb, yb):
        with tf.GradientTape() as tape:
            loss = loss_fn(yb, model(xb, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    for _ in range(5):
        step(xs, ys)
    group = hvd.runtime.group()
    group.barrier()
    start = time.perf_counter()
    for _ in range(args.steps):
        step(xs, ys)
    group.barrier()
    seconds = time.perf_counter() - start
    result = {"ranks": size, "samples_per_s": args.steps * batch / seconds,
              "step_ms": 1e3 * seconds / args.steps}

    if size > 1:
        from minitf import backend as B
        rows = []
        for nbytes in args.sizes:
            a = B.xp.ones(nbytes // 4, dtype="float32")
            repeats = max(3, min(200, int(2e8 // max(nbytes, 1) // 10)))
            times = []
            for _ in range(repeats):
                group.barrier()
                t0 = time.perf_counter()
                group.allreduce_array(a, "sum")
                times.append(time.perf_counter() - t0)
            t = float(np.median(times))
            algbw = nbytes / t
            rows.append({"bytes": nbytes, "us": 1e6 * t, "algbw_GBps": algbw / 1e9,
                         "busbw_GBps": algbw * 2 * (size - 1) / size / 1e9})
        result["allreduce"] = rows
    if rank == 0:
        print("RESULT " + json.dumps(result), flush=True)


def _launch(n, argv):
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1",
               PYTHONPATH=ROOT)
    mpiexec = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    if not os.path.exists(mpiexec):
        mpiexec = "mpiexec"
    out = subprocess.run([mpiexec, "-n", str(n), sys.executable, os.path.abspath(__file__),
                          "--worker", *argv], env=env, capture_output=True, text=True,
                         timeout=900, check=True).stdout
    line = next(ln for ln in out.splitlines() if ln.startswith("RESULT "))
    return json.loads(line[len("RESULT "):])


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="fewer steps and message sizes")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--steps", type=int, default=None)
    p.add_argument("--batch", type=int, default=256)
    args = p.parse_args()
    if args.steps is None:
        args.steps = 10 if args.quick else 40
    args.sizes = [4 << 10, 256 << 10, 4 << 20] if args.quick else \
        [4 << 10, 64 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20]
    if args.worker:
        return _worker(args)
    forward = ["--steps", str(args.steps), "--batch", str(args.batch)] + \
        (["--quick"] if args.quick else [])
    one, two = _launch(1, forward), _launch(2, forward)
    print(f"MLP 784-512-512-10, Adam, global batch {args.batch}, traced step, "
          f"1 BLAS thread per rank, {args.steps} timed steps")
    print(f"{'ranks':>5} {'samples/s':>10} {'ms/step':>8} {'speed-up':>8}")
    for r in (one, two):
        print(f"{r['ranks']:>5} {r['samples_per_s']:>10.0f} {r['step_ms']:>8.2f} "
              f"{r['samples_per_s'] / one['samples_per_s']:>8.2f}")
    print("\nallreduce (float32 sum, 2 ranks): median time and bandwidth")
    print(f"{'bytes':>10} {'time us':>10} {'algbw GB/s':>11} {'busbw GB/s':>11}")
    for row in two["allreduce"]:
        print(f"{row['bytes']:>10} {row['us']:>10.1f} {row['algbw_GBps']:>11.3f} "
              f"{row['busbw_GBps']:>11.3f}")


if __name__ == "__main__":
    main()
