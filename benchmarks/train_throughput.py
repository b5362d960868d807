"""Training throughput: hand-written numpy vs minitf eager vs minitf.function, in one process.

    python benchmarks/train_throughput.py [--quick]

Prints samples/s and the ratio to the numpy reference for the MLP 784-512-512-10 (batch 128,
Adam) and the overhead-bound MLP 784-32-10 (batch 32); samples/s of the CNN
(Conv32-pool-Conv64-pool-Dense10, batch 128, NHWC) under `function`; and the peak memory of an
eager and a traced training step. TensorFlow / PyTorch rows appear only when they are installed.
Data preparation is excluded: each timed window reuses prepared batches.
"""
import argparse
import gc
import os
import sys
import time
import tracemalloc

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import minitf as tf  # noqa: E402
from _numpy_mlp import NumpyMLP  # noqa: E402


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


def make_step(model, optimizer):
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    return step


def copy_weights(model, ref):
    for var, value in zip(model.trainable_variables, ref.params):
        var.assign(value)


def throughput(step, batches, seconds, warmup=3):
    """Samples/s of one step function: the best of several timing windows."""
    return interleaved({"step": (step, batches)}, seconds, warmup)["step"]


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
            while time.perf_counter() - start < window:
                step(*batches[n % len(batches)])
                n += 1
            rate = n * batches[0][0].shape[0] / (time.perf_counter() - start)
            best[name] = max(best[name], rate)
    return best


def peak_memory(step, batch, repeats=3):
    """Peak bytes allocated during a step, plus (for a function) the planned buffers it keeps
    between calls: they were allocated before the window but are part of every step."""
    step(*batch)
    gc.collect()
    tracemalloc.start()
    for _ in range(repeats):
        step(*batch)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak + (step.resident_bytes() if hasattr(step, "resident_bytes") else 0)


def batches_for(shape, batch, n=8, seed=0):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal((batch,) + shape).astype(np.float32),
             rng.integers(0, 10, batch).astype(np.int32)) for _ in range(n)]


def mlp_rows(sizes, batch, seconds):
    data = batches_for((sizes[0],), batch)
    tensors = [(tf.constant(x), tf.constant(y)) for x, y in data]
    contenders = {"hand-written numpy": (NumpyMLP(sizes).step, data)}
    for label, wrap in (("minitf eager", lambda s: s), ("minitf function", tf.function)):
        model = mlp(sizes)
        copy_weights(model, NumpyMLP(sizes))
        contenders[label] = (wrap(make_step(model, tf.keras.optimizers.Adam(1e-3))), tensors)
    contenders.update(optional_peers(sizes, batch, data))
    rates = interleaved(contenders, seconds * len(contenders))
    base = rates["hand-written numpy"]
    print(f"\nMLP {'-'.join(map(str, sizes))}, batch {batch}, Adam "
          f"(best of {ROUNDS} interleaved windows)")
    for label, rate in rates.items():
        print(f"  {label:<22} {rate:>10,.0f} samples/s   {rate / base:5.2f}x numpy")
    return rates, base


def optional_peers(sizes, batch, data):
    rows = {}
    try:
        import torch
    except ImportError:
        return rows
    torch.set_num_threads(os.cpu_count())
    layers = []
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        layers.append(torch.nn.Linear(a, b))
        if i < len(sizes) - 2:
            layers.append(torch.nn.ReLU())
    net = torch.nn.Sequential(*layers)
    opt = torch.optim.Adam(net.parameters(), 1e-3)
    tdata = [(torch.from_numpy(x), torch.from_numpy(y.astype(np.int64))) for x, y in data]

    def step(x, y):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(net(x), y)
        loss.backward()
        opt.step()

    rows["PyTorch eager"] = (step, tdata)
    return rows


def cnn_rows(batch, seconds):
    data = [(tf.constant(x), tf.constant(y)) for x, y in batches_for((28, 28, 1), batch, n=4)]
    model = cnn()
    step = tf.function(make_step(model, tf.keras.optimizers.Adam(1e-3)))
    rate = throughput(step, data, seconds, warmup=2)
    print(f"\nCNN Conv32-pool-Conv64-pool-Dense10, batch {batch}, Adam, function")
    print(f"  minitf function       {rate:>10,.0f} samples/s   (target >= 4,000)")


def memory_rows(sizes, batch):
    x, y = batches_for((sizes[0],), batch, n=1)[0]
    x, y = tf.constant(x), tf.constant(y)
    peaks = {}
    for label, wrap in (("eager", lambda s: s), ("function", tf.function)):
        model = mlp(sizes)
        peaks[label] = peak_memory(wrap(make_step(model, tf.keras.optimizers.Adam(1e-3))), (x, y))
    print(f"\nPeak memory of one training step (tracemalloc; function: plus its planned "
          f"buffers), MLP {'-'.join(map(str, sizes))}, batch {batch}")
    for label, peak in peaks.items():
        print(f"  {label:<9} {peak / 2 ** 20:8.2f} MiB")
    print(f"  function / eager = {peaks['function'] / peaks['eager']:.2f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short timing windows")
    parser.add_argument("--seconds", type=float, default=None)
    args = parser.parse_args()
    seconds = args.seconds or (1.5 if args.quick else 6.0)
    print(f"backend {tf.get_backend()}, {os.cpu_count()} CPUs, numpy {np.__version__}")
    mlp_rows((784, 512, 512, 10), 128, seconds)
    mlp_rows((784, 32, 10), 32, seconds)
    cnn_rows(128, seconds)
    memory_rows((784, 512, 512, 10), 128)


if __name__ == "__main__":
    main()
