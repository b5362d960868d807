"""Training throughput on an NVIDIA GPU: minitf (cupy) against PyTorch CUDA, in one process.

    python benchmarks/gpu.py [--steps 200] [--quick]
    python benchmarks/gpu.py --count-syncs      # host syncs per step only; runs on a CPU too

Models: the MLP 784-512-512-10 at batch 128 and 4096, and the CNN of ``models/cnn.py``
(filters 32/64, dense 128, no dropout so that a traced step can be captured as CUDA graphs) at
batch 128, all trained with Adam on sparse softmax cross-entropy. Variants:
  * minitf eager: the step as plain Python (tape, then ``apply_gradients``),
  * minitf function: the step traced with ``minitf.function`` (replayed as CUDA graphs),
  * minitf mixed: function under the ``mixed_float16`` policy with loss scaling,
  * PyTorch eager (``torch.optim.Adam(foreach=True)``) and PyTorch fused Adam (``fused=True``).
Samples per second over ``--steps`` steps after warm-up (the device is synchronised before the
clock stops), and the ratios to PyTorch. Data lives on the device.

Host syncs per step are counted on the strict backend, which counts every device-to-host read
(``float(a)``, ``.item()``, copies), with the GPU's choices switched on (``host_syncs_stall``):
cupy itself offers no count of implicit syncs.

Without cupy and a GPU (or without PyTorch's CUDA build) it says so and exits with status 2.
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import minitf as tf  # noqa: E402
from minitf import backend as B  # noqa: E402
from minitf import keras  # noqa: E402
from models import build_model  # noqa: E402

CASES = [("mlp", 128), ("mlp", 4096), ("cnn", 128)]
MODEL_ARGS = {"mlp": {"hidden_units": (512, 512), "num_classes": 10, "dropout": 0.0},
              "cnn": {"filters": (32, 64), "dense_units": 128, "num_classes": 10, "dropout": 0.0}}


def _data(batch, pool=4, seed=0):
    """``pool`` batches of images (batch, 28, 28) and labels, on the active backend."""
    rng = np.random.default_rng(seed)
    xs = [B.from_numpy(rng.random((batch, 28, 28), dtype=np.float32)) for _ in range(pool)]
    ys = [B.from_numpy(rng.integers(0, 10, batch).astype(np.int32)) for _ in range(pool)]
    return [(tf.constant(x), tf.constant(y)) for x, y in zip(xs, ys)]


def minitf_step(name, mixed, traced):
    """A fresh model, optimizer and training step (returns the loss tensor, never reads it)."""
    keras.mixed_precision.set_global_policy("mixed_float16" if mixed else "float32")
    try:
        model = build_model(name, **MODEL_ARGS[name])
        model(tf.zeros((1, 28, 28)), training=False)
    finally:
        keras.mixed_precision.set_global_policy("float32")
    opt = keras.optimizers.Adam(1e-3)
    if mixed:
        opt = keras.optimizers.LossScaleOptimizer(opt)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    variables = model.trainable_variables

    def step(x, y):
        with tf.GradientTape() as tape:
            logits = tf.cast(model(x, training=True), tf.float32)
            loss = loss_fn(y, logits)
            total = opt.get_scaled_loss(loss) if mixed else loss
        grads = tape.gradient(total, variables)
        if mixed:
            grads = opt.get_unscaled_gradients(grads)
        opt.apply_gradients(zip(grads, variables))
        return loss

    return tf.function(step) if traced else step


VARIANTS = [("minitf eager", False, False), ("minitf function", False, True),
            ("minitf mixed", True, True)]


def count_syncs(steps=3):
    """Host syncs per training step of each minitf variant, on the strict backend."""
    previous = B.get_backend()
    B.set_backend("strict")
    real = B.host_syncs_stall
    B.host_syncs_stall = lambda: True          # the GPU's choices
    try:
        tf.random.set_seed(0)
        rows = []
        for name, batch in CASES:
            data = _data(min(batch, 64), pool=1)   # sync counts do not depend on the batch
            for label, mixed, traced in VARIANTS:
                step = minitf_step(name, mixed, traced)
                for _ in range(2):
                    step(*data[0])             # trace and warm up
                before = B.sync_count()
                for _ in range(steps):
                    step(*data[0])
                rows.append((name, batch, label, (B.sync_count() - before) / steps))
        return rows
    finally:
        B.host_syncs_stall = real
        B.set_backend(previous)


def _time(run_step, data, steps, synchronize):
    for i in range(5):
        run_step(*data[i % len(data)])
    synchronize()
    start = time.perf_counter()
    for i in range(steps):
        run_step(*data[i % len(data)])
    synchronize()
    return time.perf_counter() - start


def torch_model(name):
    import torch.nn as nn
    if name == "mlp":
        return nn.Sequential(nn.Flatten(), nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512),
                             nn.ReLU(), nn.Linear(512, 10))
    return nn.Sequential(
        nn.Unflatten(1, (1, 28)),
        nn.Conv2d(1, 32, 3, padding=1, bias=False), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1, bias=False), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Linear(128, 10))


def torch_rate(name, batch, steps, fused):
    import torch
    torch.manual_seed(0)
    model = torch_model(name).cuda()
    opt = torch.optim.Adam(model.parameters(), 1e-3, eps=1e-7,
                           **({"fused": True} if fused else {"foreach": True}))
    loss_fn = torch.nn.CrossEntropyLoss()
    rng = np.random.default_rng(0)
    data = [(torch.from_numpy(rng.random((batch, 28, 28), dtype=np.float32)).cuda(),
             torch.from_numpy(rng.integers(0, 10, batch)).cuda()) for _ in range(4)]

    def step(x, y):
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        return loss

    return steps * batch / _time(step, data, steps, torch.cuda.synchronize)


def minitf_rate(name, batch, steps, mixed, traced):
    import cupy
    tf.random.set_seed(0)
    step = minitf_step(name, mixed, traced)
    return steps * batch / _time(step, _data(batch), steps, cupy.cuda.Device().synchronize)


def _gpu_missing():
    if not B.cupy_available():
        return "cupy with a visible NVIDIA GPU"
    try:
        import torch
    except ImportError:
        return "PyTorch"
    if not torch.cuda.is_available():
        return "a CUDA build of PyTorch"
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--quick", action="store_true", help="20 steps per measurement")
    parser.add_argument("--count-syncs", action="store_true",
                        help="only count host syncs per step (strict backend; no GPU needed)")
    args = parser.parse_args()
    if args.count_syncs:
        print(f"{'model':5} {'batch':>5}  {'variant':16} {'host syncs/step':>15}")
        for name, batch, label, syncs in count_syncs():
            print(f"{name:5} {batch:5d}  {label:16} {syncs:15.1f}")
        return 0
    missing = _gpu_missing()
    if missing:
        print(f"benchmarks/gpu.py: no GPU run possible here: it needs {missing}. Nothing was "
              "measured. (--count-syncs works without a GPU.)", file=sys.stderr)
        return 2
    steps = 20 if args.quick else args.steps
    syncs = {(n, b, v): s for n, b, v, s in count_syncs()}
    B.set_backend("cupy")
    import cupy
    print(f"GPU: {cupy.cuda.runtime.getDeviceProperties(0)['name'].decode()}, cupy "
          f"{cupy.__version__}; {steps} steps per measurement")
    print(f"{'model':5} {'batch':>5}  {'variant':18} {'samples/s':>12} {'/torch':>7} "
          f"{'/fused':>7} {'syncs/step':>10}")
    for name, batch in CASES:
        eager = torch_rate(name, batch, steps, fused=False)
        fused = torch_rate(name, batch, steps, fused=True)
        rows = [("torch eager", eager, None), ("torch fused adam", fused, None)]
        for label, mixed, traced in VARIANTS:
            rows.append((label, minitf_rate(name, batch, steps, mixed, traced),
                         syncs[(name, batch, label)]))
        for label, rate, sync in rows:
            sync_text = "" if sync is None else f"{sync:.1f}"
            print(f"{name:5} {batch:5d}  {label:18} {rate:12,.0f} {rate / eager:7.2f} "
                  f"{rate / fused:7.2f} {sync_text:>10}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
