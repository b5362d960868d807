"""The straight-line replay of a traced plan (minitf/replay.py) against the interpreted one:
same kernels in the same order, so bit-for-bit the same results and variable updates."""
import numpy as np

import minitf as tf


def _model_and_step():
    L = tf.keras.layers
    model = tf.keras.Sequential([L.Conv2D(4, 3, activation="relu"), L.MaxPooling2D(2),
                                 L.BatchNormalization(), L.Flatten(), L.Dense(3)])
    model.build((None, 8, 8, 2))
    opt = tf.keras.optimizers.Adam(1e-2)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def step(x, y, scale):
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss = loss_fn(y, logits) * scale
        grads = tape.gradient(loss, model.trainable_variables)
        opt.apply_gradients(zip(grads, model.trainable_variables))
        return {"loss": loss, "logits": logits, "kernel": model.layers[0].kernel, "tag": "ok"}

    return model, tf.function(step)


def _weights(model):
    return [v.numpy().copy() for v in model.variables]


def test_straight_line_replay_matches_the_interpreted_plan_bit_for_bit():
    rng = np.random.default_rng(0)
    batches = [(rng.standard_normal((5, 8, 8, 2)).astype(np.float32),
                rng.integers(0, 3, 5).astype(np.int32)) for _ in range(3)]
    runs = []
    for straight in (True, False):
        tf.random.set_seed(0)
        model, step = _model_and_step()
        step(*batches[0], 2.0)   # trace
        (plan,) = step._plans.values()
        if not straight:   # the interpreter: the program the plan would run without its code
            plan._straight_line = lambda args, p=plan: _interpreted(p, args)
        outs = [step(x, y, 2.0) for x, y in batches]
        runs.append(([{k: (v.numpy() if hasattr(v, "numpy") else v) for k, v in o.items()}
                      for o in outs], _weights(model)))
    (outs_a, w_a), (outs_b, w_b) = runs
    for a, b in zip(outs_a, outs_b):
        assert a["tag"] == b["tag"] == "ok"
        for key in ("loss", "logits", "kernel"):
            np.testing.assert_array_equal(a[key], b[key])
    for a, b in zip(w_a, w_b):
        np.testing.assert_array_equal(a, b)


def _interpreted(plan, args):
    """The interpreted program's outputs, as the generated code returns them."""
    leaves = tf.nest.flatten(plan._run(args, plan.steps))
    return [leaf._value if isinstance(leaf, tf.Tensor) else leaf for leaf in leaves]


def test_returned_variable_is_a_snapshot_and_intermediates_survive_the_next_call():
    v = tf.Variable([1.0, 2.0])

    @tf.function
    def f(x):
        y = x * 2.0
        v.assign_add(y)
        return v, y

    first_v, first_y = f(tf.constant([1.0, 1.0]))
    second_v, second_y = f(tf.constant([3.0, 3.0]))
    np.testing.assert_array_equal(first_v.numpy(), [3.0, 4.0])
    np.testing.assert_array_equal(first_y.numpy(), [2.0, 2.0])
    np.testing.assert_array_equal(second_v.numpy(), [9.0, 10.0])
    np.testing.assert_array_equal(second_y.numpy(), [6.0, 6.0])


def _resident_mib():
    with open("/proc/self/status") as f:
        line = next(line for line in f if line.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


def test_first_replay_gives_the_traces_freed_memory_back():
    """A trace keeps every intermediate alive (here 8 x 16 MiB); the kept-freed heap would then
    hold that peak for good. After the first replay the process must be back near its size
    before the trace (the replay itself needs about two of those arrays)."""
    import os

    import pytest

    from minitf import backend as B
    if not os.path.exists("/proc/self/status") or not B._allocator_tuned:
        pytest.skip("glibc heap tuning is off or /proc is unavailable")

    @tf.function
    def chain(x):
        for _ in range(8):
            x = x * 1.0001 + 1.0
        return tf.reduce_sum(x)

    x = tf.constant(np.ones(4 * 2 ** 20, np.float32))   # 16 MiB
    before = _resident_mib()
    first = chain(x)
    second = chain(x)
    grown = _resident_mib() - before
    assert first.numpy() == second.numpy()
    assert grown < 64, f"the process kept {grown:.0f} MiB after the trace"
