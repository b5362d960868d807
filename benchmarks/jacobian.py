"""Vectorised jacobian against the reference loop.

y = relu(x @ W1 + b1) @ W2 + b2 with x (64, 128), W1 (128, 32), W2 (32, 32) as Variables; the
jacobian of y (64, 32) w.r.t. W1 has shape (64, 32, 128, 32). The default path runs one backward
pass over a batch of 2,048 one-hot cotangents; ``experimental_use_pfor=False`` runs one backward
pass per target element. Then ``batch_jacobian`` of the same y w.r.t. x (each example's
(32, 128) jacobian), with the same forward pass and Jacobians written by hand in numpy beside
it: the loop's 32 passes run the same multiply-adds as the one product through ``W1`` that
any implementation needs, so loop / numpy bounds what a pass built on numpy's kernels can
reach here. Then ``batch_jacobian`` of a few other functions (an element-wise one with a large
result, a wider MLP, a SAME convolution, a 1-D convolution). Prints the times and speed-ups;
asserts only that they agree.

Run: ``python benchmarks/jacobian.py [--quick]``.
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import minitf as tf  # noqa: E402


def build():
    rng = np.random.default_rng(0)
    x = tf.constant(rng.normal(size=(64, 128)).astype(np.float32))
    W1 = tf.Variable(rng.normal(size=(128, 32)).astype(np.float32) * 0.1)
    b1 = tf.Variable(np.full(32, 0.01, np.float32))
    W2 = tf.Variable(rng.normal(size=(32, 32)).astype(np.float32) * 0.1)
    b2 = tf.Variable(np.zeros(32, np.float32))
    return x, W1, b1, W2, b2


def jac(params, use_pfor):
    x, W1, b1, W2, b2 = params
    with tf.GradientTape() as tape:
        y = tf.nn.relu(x @ W1 + b1) @ W2 + b2
    return tape.jacobian(y, W1, experimental_use_pfor=use_pfor)


def batch_jac(params, use_pfor):
    x, W1, b1, W2, b2 = params
    return batch_jac_of(lambda v: tf.nn.relu(v @ W1 + b1) @ W2 + b2, x, use_pfor)


def numpy_batch_jac(arrays):
    """The forward pass and the per-example Jacobians written by hand on numpy arrays:
    ``J[n] = W2^T diag(relu'(h[n])) W1^T`` as one (batch * 32, 32) @ (32, 128) product."""
    x, W1, b1, W2, b2 = arrays
    h = x @ W1 + b1
    np.maximum(h, 0) @ W2 + b2   # the forward's output: unused, timed as the other paths'
    seeds = W2.T[None] * (h > 0)[:, None, :].astype(h.dtype)
    return (seeds.reshape(-1, W2.shape[0]) @ W1.T).reshape(x.shape[0], W2.shape[1], -1)


def other_functions():
    """(name, function, source) for batch_jacobians beyond the benchmark's MLP."""
    rng = np.random.default_rng(1)

    def arr(*shape, scale=1.0):
        return (rng.normal(size=shape) * scale).astype(np.float32)

    w1, w2 = tf.Variable(arr(128, 256, scale=0.1)), tf.Variable(arr(256, 128, scale=0.1))
    k2, k1 = tf.Variable(arr(3, 3, 3, 4)), tf.Variable(arr(3, 4, 5))
    return [
        ("sin(x) * x, (64, 500)", lambda x: tf.sin(x) * x, tf.constant(arr(64, 500))),
        ("relu(x @ W1) @ W2, 128-256-128", lambda x: tf.nn.relu(x @ w1) @ w2,
         tf.constant(arr(64, 128))),
        ("relu(conv2d SAME), (16, 8, 8, 3) -> 4", lambda x: tf.nn.relu(
            tf.nn.conv2d(x, k2, 1, "SAME")), tf.constant(arr(16, 8, 8, 3))),
        ("conv1d SAME, (8, 20, 4) -> 5", lambda x: tf.nn.conv1d(x, k1, 1, "SAME"),
         tf.constant(arr(8, 20, 4))),
    ]


def batch_jac_of(fn, x, use_pfor):
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = fn(x)
    return tape.batch_jacobian(y, x, experimental_use_pfor=use_pfor)


def timed(fn, repeat):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    args = parser.parse_args()
    params = build()
    jac(params, True)  # warm up
    t_vec, j_vec = timed(lambda: jac(params, True), 3 if args.quick else 7)
    t_loop, j_loop = timed(lambda: jac(params, False), 1 if args.quick else 3)
    err = float(np.max(np.abs(j_vec.numpy() - j_loop.numpy())))
    print(f"jacobian of relu(x @ W1 + b1) @ W2 + b2 w.r.t. W1: shape {tuple(j_vec.shape)} "
          f"(backend {tf.get_backend()})")
    print(f"    vectorised (one batched backward pass): {t_vec * 1e3:9.2f} ms")
    print(f"    loop (experimental_use_pfor=False):     {t_loop * 1e3:9.2f} ms")
    print(f"    speed-up:                               {t_loop / t_vec:9.1f}x   (target >= 10x)")
    print(f"    max |vectorised - loop|:                {err:9.2e}")
    n = int(np.prod(j_vec.shape[:2]))
    print(f"    loop cost per target element:           {t_loop / n * 1e6:9.1f} us "
          f"({n} backward passes)")

    batch_jac(params, True)
    t_bvec, b_vec = timed(lambda: batch_jac(params, True), 9 if args.quick else 101)
    t_bloop, b_loop = timed(lambda: batch_jac(params, False), 3 if args.quick else 21)
    err = float(np.max(np.abs(b_vec.numpy() - b_loop.numpy())))
    print(f"batch_jacobian of the same y w.r.t. x: shape {tuple(b_vec.shape)}")
    print(f"    vectorised (one batched backward pass): {t_bvec * 1e3:9.2f} ms")
    print(f"    loop (experimental_use_pfor=False):     {t_bloop * 1e3:9.2f} ms")
    print(f"    speed-up:                               {t_bloop / t_bvec:9.1f}x   (target >= 10x)")
    print(f"    max |vectorised - loop|:                {err:9.2e}")
    arrays = [np.array(p.numpy()) for p in params]
    numpy_batch_jac(arrays)
    t_np, b_np = timed(lambda: numpy_batch_jac(arrays), 9 if args.quick else 101)
    err = float(np.max(np.abs(b_np - b_loop.numpy())))
    assert err <= 1e-5 * max(1.0, float(np.max(np.abs(b_np)))), err
    print(f"    the same by hand in numpy:              {t_np * 1e3:9.2f} ms "
          f"(loop / numpy: {t_bloop / t_np:.1f}x)")

    print("batch_jacobian of other functions (forward on a tape + batch_jacobian):")
    print(f"    {'function':<40} {'result':>22} {'vectorised':>11} {'loop':>11} {'speed-up':>9}")
    for name, fn, x in other_functions():
        batch_jac_of(fn, x, True)
        t_v, r_v = timed(lambda: batch_jac_of(fn, x, True), 3 if args.quick else 9)
        t_l, r_l = timed(lambda: batch_jac_of(fn, x, False), 1 if args.quick else 3)
        err = float(np.max(np.abs(r_v.numpy() - r_l.numpy())))
        assert err <= 1e-4 * max(1.0, float(np.max(np.abs(r_l.numpy())))), (name, err)
        print(f"    {name:<40} {str(tuple(r_v.shape)):>22} {t_v * 1e3:8.2f} ms "
              f"{t_l * 1e3:8.2f} ms {t_l / t_v:8.1f}x")


if __name__ == "__main__":
    main()
