"""Winograd against im2col for 3x3 stride-1 convolutions, and what ``winograd.pays`` picks.

For each shape (batch, image side, input and output channels, VALID or SAME) the script
times ``tf.nn.conv2d`` forward and its two gradients (one ``GradientTape.gradient``) on
Winograd's kernels and on im2col, medians in one process, and prints the ratio
im2col / Winograd (above 1: Winograd is faster) beside the choice ``winograd.pays`` makes.
The constants of ``minitf/winograd.py``'s rule come from this table; rerun it on another CPU
to check them there.

Run: ``python benchmarks/conv_algorithms.py [--quick] [--threads N]``
"""
import argparse
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, ".."))

import numpy  # noqa: E402

import train_throughput as bench  # noqa: E402
import minitf as tf  # noqa: E402
from minitf import winograd  # noqa: E402


def _step(x, w, g, padding):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.nn.conv2d(x, w, 1, padding)
    tape.gradient(y, [x, w], output_gradients=g)


def _median_us(fn, calls):
    for _ in range(3):
        fn()
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(numpy.median(times)) * 1e6


def compare(n, side, c, o, padding, rng, budget=2e4):
    """(Winograd us, im2col us) for one shape."""
    out = side if padding == "SAME" else side - 2
    x = tf.constant(rng.standard_normal((n, side, side, c)).astype(numpy.float32))
    w = tf.Variable(rng.standard_normal((3, 3, c, o)).astype(numpy.float32))
    g = tf.constant(rng.standard_normal((n, out, out, o)).astype(numpy.float32))
    calls = int(min(60, max(5, budget / (n * side * side * c * o / 1e4))))
    real = winograd.pays
    try:
        winograd.pays = lambda x_shape, w_shape: True
        on_winograd = _median_us(lambda: _step(x, w, g, padding), calls)
        winograd.pays = lambda x_shape, w_shape: False
        on_im2col = _median_us(lambda: _step(x, w, g, padding), calls)
    finally:
        winograd.pays = real
    return on_winograd, on_im2col


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="batch 64 and fewer shapes")
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    args = parser.parse_args()
    bench.set_threads(args.threads)
    if not winograd.applies((1, 8, 8, 16), (3, 3, 16, 16), (1, 1), (1, 1), numpy.float32):
        sys.exit("Winograd's native kernels are not available here (backend "
                 f"{tf.get_backend()}, or no C compiler)")
    batches, sides = ((64,), (7, 14, 28)) if args.quick else ((64, 128), (7, 10, 14, 20, 28))
    rng = numpy.random.default_rng(0)
    print(f"{args.threads} threads; forward + both gradients, median us; ratio = im2col / "
          f"Winograd (> 1: Winograd faster); 'pays' = what winograd.pays picks")
    print(f"{'batch':>5} {'side':>4} {'C':>4} {'O':>4} {'padding':>7} {'Winograd':>9} "
          f"{'im2col':>9} {'ratio':>6}  pays  right")
    wrong = 0
    for n in batches:
        for side in sides:
            for c in (8, 16, 32, 64):
                for o in (32, 64, 128):
                    for padding in ("VALID", "SAME"):
                        on_winograd, on_im2col = compare(n, side, c, o, padding, rng)
                        out = side if padding == "SAME" else side - 2
                        picked = winograd.pays((n, out + 2, out + 2, c), (3, 3, c, o))
                        ratio = on_im2col / on_winograd
                        right = picked == (ratio > 1) or 0.9 < ratio < 1.1
                        wrong += not right
                        print(f"{n:5d} {side:4d} {c:4d} {o:4d} {padding:>7} "
                              f"{on_winograd:9.0f} {on_im2col:9.0f} {ratio:6.2f}  "
                              f"{'yes' if picked else 'no':>4}  {'' if right else 'WRONG'}",
                              flush=True)
    print(f"{wrong} choices more than 10% off the faster algorithm")


if __name__ == "__main__":
    main()
