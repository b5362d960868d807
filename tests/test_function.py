"""minitf.function: traced replay equals eager, retracing, untraceable code detected."""
import logging

import numpy as np
import pytest

import minitf as tf
from minitf import backend as B
from minitf.host import host_call


def _mlp_vars(seed=0):
    rng = np.random.default_rng(seed)
    return [tf.Variable(rng.standard_normal((4, 8)).astype(np.float32) * 0.3),
            tf.Variable(np.zeros(8, np.float32)),
            tf.Variable(rng.standard_normal((8, 3)).astype(np.float32) * 0.3),
            tf.Variable(np.zeros(3, np.float32))]


def _loss(vs, x, y):
    h = tf.nn.relu(tf.matmul(x, vs[0]) + vs[1])
    logits = tf.matmul(h, vs[2]) + vs[3]
    return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(y, logits))


def _sgd_step(vs, x, y, lr=0.1):
    with tf.GradientTape() as tape:
        loss = _loss(vs, x, y)
    grads = tape.gradient(loss, vs)
    for v, g in zip(vs, grads):
        v.assign_sub(lr * g)
    return loss


def _data(n=16, seed=1):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((n, 4)).astype(np.float32),
            rng.integers(0, 3, n).astype(np.int32))


def test_traced_sgd_steps_equal_eager_exactly():
    x, y = _data()
    eager_vars, traced_vars = _mlp_vars(), _mlp_vars()
    step = tf.function(lambda x, y: _sgd_step(traced_vars, x, y))
    for _ in range(5):
        le = _sgd_step(eager_vars, tf.constant(x), tf.constant(y))
        lt = step(tf.constant(x), tf.constant(y))
        assert float(le) == float(lt)
    for a, b in zip(eager_vars, traced_vars):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert step.trace_count == 1


def test_replay_runs_without_tensor_dispatch_after_first_call(monkeypatch):
    x, y = _data()
    vs = _mlp_vars()
    step = tf.function(lambda x, y: _sgd_step(vs, x, y))
    step(x, y)
    from minitf.ops import registry
    calls = []
    monkeypatch.setattr(registry, "apply", lambda *a, **k: calls.append(a))
    monkeypatch.setattr(registry, "apply2", lambda *a, **k: calls.append(a))
    step(x, y)
    assert calls == []


def test_new_shape_retraces_and_python_args_by_value():
    v = tf.Variable(2.0)

    @tf.function
    def f(x, scale):
        return tf.reduce_sum(x * v) * scale

    assert float(f(np.ones(3, np.float32), 2.0)) == 12.0
    assert float(f(np.ones(3, np.float32), 2.0)) == 12.0
    assert f.trace_count == 1
    assert float(f(np.ones(5, np.float32), 2.0)) == 20.0
    assert f.trace_count == 2
    assert float(f(np.ones(5, np.float32), 3.0)) == 30.0
    assert f.trace_count == 3


def test_retrace_warning_after_many_signatures(caplog):
    @tf.function
    def f(x):
        return x * 2.0

    with caplog.at_level(logging.WARNING, logger="minitf"):
        for n in range(1, 8):
            f(np.ones(n, np.float32))
    assert any("traces of function" in r.getMessage() for r in caplog.records)


def test_python_side_effects_run_at_trace_time_only():
    seen = []

    @tf.function
    def f(x):
        seen.append(1)
        return x + 1.0

    for _ in range(3):
        f(tf.constant(1.0))
    assert seen == [1]


def test_variable_reads_see_current_values():
    v = tf.Variable(1.0)

    @tf.function
    def f(x):
        return x * v

    assert float(f(tf.constant(3.0))) == 3.0
    v.assign(5.0)
    assert float(f(tf.constant(3.0))) == 15.0


@pytest.mark.parametrize("body", ["if", "float", "numpy"])
def test_untraceable_value_dependence_is_an_error_naming_the_line(body):
    @tf.function
    def f(x):
        y = x * 2.0
        if body == "if":
            if y > 0:  # noqa: this line is reported
                return y
            return -y
        if body == "float":
            return float(y)
        return y.numpy()

    with pytest.raises(tf.TraceError, match="test_function.py"):
        f(tf.constant(1.0))


def test_random_ops_draw_fresh_values_each_call_in_eager_order():
    @tf.function
    def f(x):
        return tf.nn.dropout(x, rate=0.5)

    x = tf.ones((1000,))
    tf.random.set_seed(3)
    traced = [f(x).numpy() for _ in range(3)]
    tf.random.set_seed(3)
    eager = [tf.nn.dropout(x, rate=0.5).numpy() for _ in range(3)]
    assert not np.array_equal(traced[1], traced[2])
    for a, b in zip(traced, eager):
        np.testing.assert_array_equal(a, b)


def test_host_calls_replay_with_new_arrays():
    total = tf.Variable(0.0)
    seen = []

    def accumulate(value):
        seen.append(float(value))
        total._value += value

    @tf.function
    def f(x):
        host_call(accumulate, [x * 2.0])
        return x

    for k in range(3):
        f(tf.constant(float(k)))
    assert seen == [0.0, 2.0, 4.0]
    assert float(total) == 6.0


def test_nested_function_is_inlined():
    @tf.function
    def inner(x):
        return x * 3.0

    @tf.function
    def outer(x):
        return inner(x) + 1.0

    assert float(outer(tf.constant(2.0))) == 7.0
    assert float(outer(tf.constant(3.0))) == 10.0
    assert inner.trace_count == 0


def test_structured_outputs_and_python_values():
    @tf.function
    def f(x):
        return {"double": x * 2.0, "pair": (x + 1.0, 7)}

    out = f(tf.constant(1.0))
    out = f(tf.constant(2.0))
    assert float(out["double"]) == 4.0
    assert float(out["pair"][0]) == 3.0 and out["pair"][1] == 7


def test_second_order_inside_function():
    x0 = tf.Variable(2.0)

    @tf.function
    def f():
        with tf.GradientTape() as outer:
            with tf.GradientTape() as inner:
                y = x0 * x0 * x0
            dy = inner.gradient(y, x0)
        return dy, outer.gradient(dy, x0)

    for value in (2.0, 3.0):
        x0.assign(value)
        dy, d2y = f()
        assert float(dy) == 3 * value ** 2 and float(d2y) == 6 * value


def test_method_decoration_keeps_per_instance_traces():
    class Scaler:
        def __init__(self, k):
            self.k = tf.Variable(k)

        @tf.function
        def __call__(self, x):
            return x * self.k

    a, b = Scaler(2.0), Scaler(3.0)
    assert float(a(tf.constant(1.0))) == 2.0
    assert float(b(tf.constant(1.0))) == 3.0


def _keras_run(traced, steps=6):
    from minitf import keras
    tf.random.set_seed(7)
    model = keras.Sequential([keras.Input((6,)), keras.layers.Dense(16, activation="relu"),
                              keras.layers.BatchNormalization(), keras.layers.Dropout(0.3),
                              keras.layers.Dense(3)])
    rng = np.random.default_rng(5)
    for v in model.trainable_variables:
        v.assign(rng.standard_normal(v.shape).astype(np.float32) * 0.5)
    optimizer = keras.optimizers.Adam(1e-2, gradient_accumulation_steps=2, global_clipnorm=1.0)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    fn = tf.function(step) if traced else step
    data = np.random.default_rng(9)
    losses = []
    for _ in range(steps):
        x = tf.constant(data.standard_normal((8, 6)).astype(np.float32))
        y = tf.constant(data.integers(0, 3, 8).astype(np.int32))
        losses.append(float(fn(x, y)))
    return losses, [v.numpy() for v in model.variables], int(optimizer.iterations)


def test_traced_keras_step_equals_eager_with_batchnorm_dropout_accumulation_clipping():
    eager, traced = _keras_run(False), _keras_run(True)
    assert eager[2] == traced[2] == 3
    np.testing.assert_allclose(eager[0], traced[0], rtol=1e-6)
    for a, b in zip(eager[1], traced[1]):  # includes BatchNorm's moving statistics
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)


def test_variable_arguments_are_captured_by_identity():
    @tf.function
    def scaled(v, x):
        return v * x

    a, b = tf.Variable(2.0), tf.Variable(3.0)
    assert float(scaled(a, tf.constant(1.0))) == 2.0
    a.assign(4.0)
    assert float(scaled(a, tf.constant(1.0))) == 4.0
    assert float(scaled(b, tf.constant(2.0))) == 6.0
    assert scaled.trace_count == 2


def test_returned_variable_is_a_snapshot():
    v = tf.Variable(1.0)

    @tf.function
    def bump():
        v.assign_add(1.0)
        return v

    first = bump()
    second = bump()
    third = bump()
    assert (float(first), float(second), float(third)) == (2.0, 3.0, 4.0)


def test_replay_writes_into_planned_buffers_instead_of_allocating():
    """After the trace, the step's intermediates live in buffers planned once (reused across
    steps, and in place for element-wise ops): a replay allocates a small fraction of what the
    eager step does, and the buffers it keeps are no larger than the eager step's peak."""
    import tracemalloc
    rng = np.random.default_rng(3)
    vs = [tf.Variable(rng.standard_normal((64, 256)).astype(np.float32) * 0.1),
          tf.Variable(np.zeros(256, np.float32)),
          tf.Variable(rng.standard_normal((256, 10)).astype(np.float32) * 0.1),
          tf.Variable(np.zeros(10, np.float32))]
    x = tf.constant(rng.standard_normal((128, 64)).astype(np.float32))
    y = tf.constant(rng.integers(0, 10, 128).astype(np.int32))
    step = tf.function(lambda x, y: _sgd_step(vs, x, y, lr=0.01))
    peaks = {}
    for label, fn in (("eager", lambda x, y: _sgd_step(vs, x, y, lr=0.01)), ("traced", step)):
        fn(x, y)
        fn(x, y)
        tracemalloc.start()
        fn(x, y)
        peaks[label] = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    assert peaks["traced"] < 0.25 * peaks["eager"]
    assert 0 < step.resident_bytes() <= peaks["eager"]


def test_returned_intermediates_are_not_overwritten_by_later_calls():
    x, y = _data()
    vs = _mlp_vars()

    def forward(x, y):
        h = tf.nn.relu(tf.matmul(x, vs[0]) + vs[1])
        logits = tf.matmul(h, vs[2]) + vs[3]
        return h, logits * 2.0

    step = tf.function(forward)
    h1, out1 = step(x, y)
    kept = h1.numpy().copy(), out1.numpy().copy()
    step(x * 3.0, y)
    np.testing.assert_array_equal(h1.numpy(), kept[0])
    np.testing.assert_array_equal(out1.numpy(), kept[1])


def test_traced_conv_pool_steps_equal_eager_exactly():
    """Convolution and pooling cache values keyed by array identity (patches of the input,
    maxima of the pooling output). Planned buffers keep their identity across replays and are
    written in place, so the plan leaves those arrays alone: here the convolution's input is
    an element-wise result (a planned buffer) and the pooling output dies in an element-wise
    op (an in-place candidate)."""
    rng = np.random.default_rng(1)
    kernel = tf.Variable(rng.standard_normal((3, 3, 2, 4)).astype(np.float32) * 0.3)
    dense = tf.Variable(rng.standard_normal((16, 3)).astype(np.float32) * 0.3)

    def step(x, y):
        with tf.GradientTape() as tape:
            h = tf.nn.conv2d(x * 0.5, kernel, 1, "VALID")
            p = tf.nn.max_pool2d(h, 2, 2, "VALID")
            q = tf.nn.relu(p - 0.1)
            logits = tf.reshape(q, (-1, 16)) @ dense
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(y, logits))
        grads = tape.gradient(loss, [kernel, dense])
        return loss, grads[0], grads[1]

    traced = tf.function(step)
    data = np.random.default_rng(2)
    for _ in range(4):
        x = tf.constant(data.standard_normal((6, 6, 6, 2)).astype(np.float32))
        y = tf.constant(data.integers(0, 3, 6).astype(np.int32))
        for a, b in zip(step(x, y), traced(x, y)):
            np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_a_call_while_the_plan_is_in_use_runs_without_its_buffers():
    """Planned buffers serve one run at a time; a concurrent call (another thread) gets the
    unplanned program and the same numbers, and leaves the buffers alone."""
    import threading
    x, y = _data()
    vs = _mlp_vars()
    step = tf.function(lambda x, y: _loss(vs, x, y) * 1.0)
    expected = float(step(x, y))
    plan = next(iter(step._plans.values()))
    assert plan.buffers
    before = [B.to_numpy(b).copy() for b in plan.buffers]
    with plan._in_use:      # as if another thread were inside a replay
        assert float(step(x * 2.0, y)) == float(_loss(vs, tf.constant(x * 2.0), tf.constant(y)))
    for a, b in zip(before, plan.buffers):
        np.testing.assert_array_equal(a, B.to_numpy(b))
    results = []
    threads = [threading.Thread(target=lambda: results.extend(float(step(x, y))
                                                              for _ in range(50)))
               for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [expected] * 100
