"""Training steps of models beyond train_throughput.py's workloads, as a user writes them.

Each model is a Keras ``Sequential`` stepped by the custom training loop of TensorFlow's
guides (``GradientTape``, a ``SparseCategoricalCrossentropy(from_logits=True)`` loss,
``Adam.apply_gradients``), eagerly and under ``minitf.function``, beside the same model in
PyTorch (eager, ``torch.optim.Adam``) in the same process, timed in alternating windows.
Prints samples/s and the ratio to PyTorch eager: a check that what the benchmark's workloads
show holds for other layer sizes, activations, kernel sizes, strides and normalisation, and
for a recurrent layer (PyTorch's ``nn.LSTM`` runs its whole sequence in one fused kernel).

Run: ``python benchmarks/other_models.py [--seconds S] [--only N ...]`` (PyTorch from the
``bench`` extra; without it only minitf's rows print).
"""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, ".."))

import train_throughput as bench  # noqa: E402
import minitf as tf  # noqa: E402
from minitf.testing import sparse_ce_step  # noqa: E402

peers = bench.peers
L = tf.keras.layers


def _torch_layers():
    from torch import nn
    return nn


def models():
    """(name, input shape, batch, minitf model builder, PyTorch model builder)."""
    def dense(units, activation, dropout=None):
        layers = []
        for n in units:
            layers.append(L.Dense(n, activation=activation))
            if dropout:
                layers.append(L.Dropout(dropout))
        return tf.keras.Sequential(layers + [L.Dense(10)])

    def torch_dense(units, activation, dropout=None):
        nn = _torch_layers()
        act = {"relu": nn.ReLU, "tanh": nn.Tanh, "gelu": nn.GELU, "sigmoid": nn.Sigmoid}
        layers, width = [], 784
        for n in units:
            layers += [nn.Linear(width, n), act[activation]()]
            if dropout:
                layers.append(nn.Dropout(dropout))
            width = n
        return nn.Sequential(*layers, nn.Linear(width, 10))

    def conv_pool(filters, kernel):
        return tf.keras.Sequential(
            [layer for f in filters for layer in (L.Conv2D(f, kernel, activation="relu"),
                                                  L.MaxPooling2D(2))]
            + [L.Flatten(), L.Dense(10)])

    def torch_conv_pool(filters, kernel):
        nn = _torch_layers()
        layers, channels, size = [], 1, 28
        for f in filters:
            layers += [nn.Conv2d(channels, f, kernel), nn.ReLU(), nn.MaxPool2d(2)]
            channels, size = f, (size - kernel + 1) // 2
        return nn.Sequential(*layers, nn.Flatten(), nn.Linear(channels * size * size, 10))

    def strided():
        return tf.keras.Sequential([
            L.Conv2D(32, 3, strides=2, padding="same", activation="relu"),
            L.Conv2D(64, 3, strides=2, padding="same", activation="relu"),
            L.GlobalAveragePooling2D(), L.Dense(10)])

    def torch_strided():
        nn = _torch_layers()
        return nn.Sequential(nn.Conv2d(1, 32, 3, stride=2, padding=1), nn.ReLU(),
                             nn.Conv2d(32, 64, 3, stride=2, padding=1), nn.ReLU(),
                             nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10))

    def batch_norm():
        return tf.keras.Sequential(
            [layer for f in (32, 64) for layer in (
                L.Conv2D(f, 3, padding="same", use_bias=False), L.BatchNormalization(),
                L.ReLU(), L.MaxPooling2D(2))] + [L.Flatten(), L.Dense(10)])

    def torch_batch_norm():
        nn = _torch_layers()
        layers, channels = [], 1
        for f in (32, 64):
            layers += [nn.Conv2d(channels, f, 3, padding=1, bias=False),
                       nn.BatchNorm2d(f, eps=1e-3), nn.ReLU(), nn.MaxPool2d(2)]
            channels = f
        return nn.Sequential(*layers, nn.Flatten(), nn.Linear(64 * 7 * 7, 10))

    def lstm():
        return tf.keras.Sequential([L.LSTM(128), L.Dense(10)])

    def torch_lstm():
        nn = _torch_layers()

        class LastStep(nn.Module):     # nn.LSTM returns (outputs, states): the last output
            def __init__(self):
                super().__init__()
                self.lstm, self.dense = nn.LSTM(32, 128, batch_first=True), nn.Linear(128, 10)

            def forward(self, x):
                return self.dense(self.lstm(x)[0][:, -1])
        return LastStep()

    flat, image = (784,), (28, 28, 1)
    return [
        ("MLP 784-256-256-256-10 relu, batch 64", flat, 64,
         lambda: dense((256,) * 3, "relu"), lambda: torch_dense((256,) * 3, "relu")),
        ("MLP 784-512-512-10 tanh, batch 128", flat, 128,
         lambda: dense((512,) * 2, "tanh"), lambda: torch_dense((512,) * 2, "tanh")),
        ("MLP 784-512-512-10 sigmoid, batch 128", flat, 128,
         lambda: dense((512,) * 2, "sigmoid"), lambda: torch_dense((512,) * 2, "sigmoid")),
        ("MLP 784-512-512-10 gelu + dropout 0.2, batch 128", flat, 128,
         lambda: dense((512,) * 2, "gelu", 0.2), lambda: torch_dense((512,) * 2, "gelu", 0.2)),
        ("CNN Conv16-pool-Conv32-pool-Dense10 (valid), batch 64", image, 64,
         lambda: conv_pool((16, 32), 3), lambda: torch_conv_pool((16, 32), 3)),
        ("CNN 5x5 Conv32-pool-Conv64-pool-Dense10 (valid), batch 128", image, 128,
         lambda: conv_pool((32, 64), 5), lambda: torch_conv_pool((32, 64), 5)),
        ("CNN stride-2 Conv32-Conv64 (same), global average pool, batch 128", image, 128,
         strided, torch_strided),
        ("CNN (Conv-BN-ReLU-pool) x2 (same), Dense10, batch 128", image, 128,
         batch_norm, torch_batch_norm),
        ("LSTM 128 over 32 steps of 32 features, Dense10, batch 64", (32, 32), 64,
         lstm, torch_lstm),
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="timing seconds per row")
    parser.add_argument("--only", type=int, nargs="*", help="model numbers (from 0)")
    parser.add_argument("--threads", type=int, default=os.cpu_count(),
                        help="BLAS and PyTorch threads")
    args = parser.parse_args()
    bench.set_threads(args.threads)
    print(f"backend {tf.get_backend()}, {os.cpu_count()} CPUs, {args.threads} BLAS/PyTorch "
          f"threads; samples/s (ratio to PyTorch eager), best of {bench.ROUNDS} interleaved "
          f"windows")
    for i, (name, shape, batch, build, build_torch) in enumerate(models()):
        if args.only and i not in args.only:
            continue
        data = bench.batches_for(shape, batch, n=4)
        tensors = [(tf.constant(x), tf.constant(y)) for x, y in data]
        rows = {}
        if peers.available():
            rows["PyTorch eager"] = (peers.training_step(build_torch(), "eager"),
                                     peers.batches(data))
        for label in ("minitf eager", "minitf function"):
            model = build()
            model.build((None,) + shape)
            step = sparse_ce_step(model, tf.keras.optimizers.Adam(1e-3))
            rows[label] = (tf.function(step) if label == "minitf function" else step, tensors)
        rates = bench.interleaved(rows, args.seconds * len(rows))
        reference = rates.get("PyTorch eager")
        cells = [f"{label.split()[-1] if label.startswith('minitf') else 'PyTorch'} "
                 f"{rate:9,.0f}" + (f" ({rate / reference:4.2f})" if reference else "")
                 for label, rate in rates.items()]
        print(f"{i}  {name:<66} " + "  ".join(cells), flush=True)


if __name__ == "__main__":
    main()
