"""LossScaleOptimizer: the exact scale sequence, skipped steps, the TF and Keras 3 patterns,
and float16 training that underflows without loss scaling."""

import numpy as np
import pytest

import minitf as tf
from minitf import backend as B
from fake_tracer import tracing
from minitf.keras import optimizers
from minitf.keras.optimizers import LossScaleOptimizer

F, N = "finite", "nonfinite"


def _g(kind, value=1.0):
    return tf.constant([value, np.inf if kind == N else value])


def test_defaults():
    opt = LossScaleOptimizer(optimizers.SGD())
    assert float(opt.loss_scale) == 2.0 ** 15
    assert opt.dynamic_growth_steps == 2000 and opt.dynamic
    assert opt.loss_scale.dtype == tf.float32
    assert opt.iterations is opt.inner_optimizer.iterations
    opt.learning_rate = 0.5
    assert float(opt.inner_optimizer.learning_rate) == 0.5


def test_exact_scale_sequence():
    v = tf.Variable([0.0, 0.0])
    opt = LossScaleOptimizer(optimizers.SGD(1.0), initial_scale=8, dynamic_growth_steps=2)
    pattern = [F, F, N, N, F, F, F, N, F]
    scales, counters, its = [], [], []
    for kind in pattern:
        before = v.numpy().copy()
        opt.apply_gradients([(_g(kind), v)])
        if kind == N:
            np.testing.assert_array_equal(v.numpy(), before)
        scales.append(float(opt.loss_scale))
        counters.append(int(opt.dynamic_counter))
        its.append(int(opt.iterations))
    assert scales == [8, 16, 8, 4, 4, 8, 8, 4, 4]
    assert counters == [1, 0, 0, 0, 1, 0, 1, 0, 1]
    assert its == [1, 2, 2, 2, 3, 4, 5, 5, 6]
    np.testing.assert_array_equal(v.numpy(), [-6.0, -6.0])


def test_skip_changes_nothing_but_the_scale():
    sched = optimizers.schedules.ExponentialDecay(0.1, 1, 0.5)
    variables = [tf.Variable(np.ones((3, 4), np.float32)), tf.Variable(np.ones(5, np.float32))]
    inner = optimizers.Adam(sched, gradient_accumulation_steps=2, global_clipnorm=1.0)
    opt = LossScaleOptimizer(inner, initial_scale=16)
    good = [tf.ones((3, 4)), tf.ones(5)]
    opt.apply_gradients(zip(good, variables))
    opt.apply_gradients(zip(good, variables))
    opt.apply_gradients(zip(good, variables))    # mid-cycle: one micro-gradient accumulated
    before = inner.get_state()
    weights = [v.numpy().copy() for v in variables]
    bad = [tf.fill((3, 4), np.nan), tf.ones(5)]
    opt.apply_gradients(zip(bad, variables))
    after = inner.get_state()
    assert sorted(before) == sorted(after)
    for key in before:
        np.testing.assert_array_equal(np.asarray(after[key]), np.asarray(before[key]))
    for v, w in zip(variables, weights):
        np.testing.assert_array_equal(v.numpy(), w)
    assert float(opt.loss_scale) == 8.0
    assert float(inner.learning_rate) == pytest.approx(0.05)


def test_scale_floor_and_error_when_overflowing_at_one():
    v = tf.Variable([0.0, 0.0])
    opt = LossScaleOptimizer(optimizers.SGD(1.0), initial_scale=2, dynamic_growth_steps=10)
    opt.apply_gradients([(_g(N), v)])
    assert float(opt.loss_scale) == 1.0
    opt.apply_gradients([(_g(N), v)])          # first skip at the minimum scale
    assert float(opt.loss_scale) == 1.0
    opt.apply_gradients([(_g(F), v)])          # a good step resets the run
    opt.apply_gradients([(_g(N), v)])
    with pytest.raises(FloatingPointError, match="minimum"):
        opt.apply_gradients([(_g(N), v)])
    assert float(opt.loss_scale) == 1.0
    np.testing.assert_array_equal(v.numpy(), [-1.0, -1.0])


def test_scaled_loss_and_unscaled_gradients():
    opt = LossScaleOptimizer(optimizers.SGD(), initial_scale=1024)
    assert float(opt.get_scaled_loss(tf.constant(2.0))) == 2048.0
    assert float(opt.get_scaled_loss(lambda: tf.constant(0.5))()) == 512.0
    assert float(opt.scale_loss(tf.constant(1.0))) == 1024.0
    g = opt.get_unscaled_gradients([tf.constant([1024.0, 2048.0]), None,
                                    tf.constant([512.0], dtype="float16")])
    np.testing.assert_array_equal(g[0].numpy(), [1.0, 2.0])
    assert g[1] is None
    assert g[2].dtype == tf.float16 and g[2].numpy()[0] == 0.5
    big = LossScaleOptimizer(optimizers.SGD(), initial_scale=2.0 ** 20)
    g16 = big.get_unscaled_gradients([tf.constant([2.0 ** 14], dtype="float16")])[0]
    assert g16.numpy()[0] == np.float16(2.0 ** -6)


def test_scaled_loss_is_differentiable():
    w = tf.Variable([3.0])
    opt = LossScaleOptimizer(optimizers.SGD(), initial_scale=4)
    with tf.GradientTape() as tape:
        scaled = opt.get_scaled_loss(tf.reduce_sum(w * w))
    assert tape.gradient(scaled, w).numpy()[0] == 24.0


def _train(use_lso, pattern):
    rng = np.random.default_rng(0)
    w = tf.Variable(rng.standard_normal((4, 3)).astype(np.float32))
    x = tf.constant(rng.standard_normal((8, 4)).astype(np.float32))
    inner = optimizers.Adam(1e-2, clipnorm=0.5)
    opt = LossScaleOptimizer(inner, initial_scale=2.0 ** 10) if use_lso else inner
    for _ in range(5):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(tf.matmul(x, w)))
            if use_lso:
                loss = opt.get_scaled_loss(loss)
        grads = tape.gradient(loss, [w])
        if pattern == "tf":
            opt.apply_gradients(zip(opt.get_unscaled_gradients(grads) if use_lso else grads, [w]))
        else:
            opt.apply(grads, [w])
    return w.numpy()


def test_tf_and_keras3_patterns_match_the_unscaled_optimizer():
    plain = _train(False, "tf")
    np.testing.assert_array_equal(_train(True, "tf"), plain)      # powers of two: exact
    np.testing.assert_array_equal(_train(True, "keras3"), plain)


def test_clipping_sees_unscaled_gradients():
    v = tf.Variable([0.0, 0.0])
    opt = LossScaleOptimizer(optimizers.SGD(1.0, clipnorm=1.0), initial_scale=2.0 ** 14)
    opt.apply([tf.constant([0.3, 0.4]) * 2.0 ** 14], [v])        # Keras 3 pattern: scaled in
    np.testing.assert_allclose(v.numpy(), [-0.3, -0.4], rtol=1e-6)
    opt.apply_gradients([(tf.constant([3.0, 4.0]), v)])        # TF pattern: unscaled in
    np.testing.assert_allclose(v.numpy(), [-0.9, -1.2], rtol=1e-6)


def test_keras3_apply_unscales_float16_gradients_in_float32():
    v = tf.Variable([0.0, 0.0])
    opt = LossScaleOptimizer(optimizers.SGD(1.0), initial_scale=2.0 ** 15)
    scaled16 = tf.constant([2.0 ** -10, 1.0], dtype="float16")   # unscaled: 2**-25, 2**-15
    opt.apply([scaled16], [v])
    np.testing.assert_array_equal(v.numpy(), [-(2.0 ** -25), -(2.0 ** -15)])


def test_accumulation_skips_non_finite_micro_steps():
    v = tf.Variable([0.0, 0.0])
    opt = LossScaleOptimizer(optimizers.SGD(1.0, gradient_accumulation_steps=2), initial_scale=4)
    its = []
    for kind, value in ((F, 1.0), (N, 5.0), (F, 3.0)):
        opt.apply_gradients([(_g(kind, value), v)])
        its.append(int(opt.iterations))
    assert its == [0, 0, 1]
    np.testing.assert_array_equal(v.numpy(), [-2.0, -2.0])
    assert float(opt.loss_scale) == 2.0


def test_fixed_scale_applies_every_step():
    v = tf.Variable([0.0, 0.0])
    opt = LossScaleOptimizer(optimizers.SGD(1.0), dynamic=False, initial_scale=128)
    opt.apply_gradients([(_g(F), v)])
    opt.apply_gradients([(_g(N), v)])
    assert float(opt.loss_scale) == 128 and int(opt.iterations) == 2
    assert np.isinf(v.numpy()[1])
    with pytest.raises(ValueError):
        LossScaleOptimizer(optimizers.SGD(), dynamic=False)


def test_growth_stops_at_float32_range():
    v = tf.Variable([0.0])
    opt = LossScaleOptimizer(optimizers.SGD(0.0), initial_scale=2.0 ** 126,
                             dynamic_growth_steps=1)
    for _ in range(4):
        opt.apply_gradients([(tf.constant([0.0]), v)])
    assert np.isfinite(float(opt.loss_scale)) and float(opt.loss_scale) == 2.0 ** 127


def test_one_host_call_and_replay():
    v = tf.Variable([0.0, 0.0])
    opt = LossScaleOptimizer(optimizers.Adam(0.1), initial_scale=8, dynamic_growth_steps=2)
    with tracing() as tracer:
        opt.apply_gradients([(_g(F), v)])
    assert len(tracer.hosts) == 1 and tracer.ops == [] and tracer.assigns == []
    fn, _ = tracer.hosts[0]
    fn(B.from_numpy(np.array([1.0, np.inf], np.float32)))
    assert float(opt.loss_scale) == 4.0 and int(opt.iterations) == 1
    fn(B.from_numpy(np.array([1.0, 1.0], np.float32)))
    fn(B.from_numpy(np.array([1.0, 1.0], np.float32)))
    assert float(opt.loss_scale) == 8.0 and int(opt.iterations) == 3


def test_float16_training_needs_loss_scaling():
    """A float16 model with float32 master weights: its weight gradients (~5e-9) underflow in
    float16 without loss scaling, so Adam never moves; with scaling the model trains."""
    x16 = tf.constant(np.full((16, 4), 1e-4, np.float16))

    def run(scaled):
        w = tf.Variable(np.zeros((1, 4), np.float32))            # float32 master weights
        inner = optimizers.Adam(0.2)
        opt = LossScaleOptimizer(inner) if scaled else inner
        losses = []
        for _ in range(60):
            with tf.GradientTape() as tape:
                pred16 = tf.reduce_sum(x16 * tf.cast(w, "float16"), axis=1)   # float16 compute
                loss = tf.reduce_mean(tf.square(tf.cast(pred16, "float32") - 4e-4))
                loss_for_grad = opt.get_scaled_loss(loss) if scaled else loss
            grads = tape.gradient(loss_for_grad, [w])
            if scaled:
                grads = opt.get_unscaled_gradients(grads)
            opt.apply_gradients(zip(grads, [w]))
            losses.append(float(loss))
        return w.numpy(), losses

    w_plain, losses_plain = run(False)
    np.testing.assert_array_equal(w_plain, 0.0)       # underflow: gradients were exactly zero
    assert losses_plain[-1] == losses_plain[0]
    w_scaled, losses_scaled = run(True)
    assert (w_scaled > 0.5).all()
    assert losses_scaled[-1] < 0.1 * losses_scaled[0]


def test_minimize():
    v = tf.Variable([3.0])
    opt = LossScaleOptimizer(optimizers.SGD(0.25), initial_scale=64)
    opt.minimize(lambda: tf.reduce_sum(v * v), [v])
    np.testing.assert_allclose(v.numpy(), [1.5])
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(v * v)
    opt.minimize(loss, [v], tape=tape)
    np.testing.assert_allclose(v.numpy(), [0.75])
    assert int(opt.dynamic_counter) == 2


def test_config_round_trip():
    opt = LossScaleOptimizer(optimizers.Adam(1e-3, beta_1=0.8), initial_scale=64,
                             dynamic_growth_steps=10)
    again = LossScaleOptimizer.from_config(opt.get_config())
    assert again.initial_scale == 64 and again.dynamic_growth_steps == 10
    assert isinstance(again.inner_optimizer, optimizers.Adam)
    assert again.inner_optimizer.beta_1 == 0.8
    assert again.beta_1 == 0.8   # hyperparameters read through to the inner optimizer


@pytest.mark.skipif(not hasattr(tf, "function"), reason="minitf.function not available")
@pytest.mark.filterwarnings("ignore::RuntimeWarning")   # the forward pass of the inf batch
def test_traced_training_step_matches_eager_through_overflows():
    """A minitf.function step (scaled loss, unscale, apply, metric) replays the host kernel:
    overflow skips, scale changes, accumulation and the schedule follow the eager run exactly."""
    from minitf.keras import losses, metrics
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal((8, 3)).astype(np.float32)
    xs = [rng.standard_normal((16, 8)).astype(np.float32) for _ in range(10)]
    xs[3][0, 0] = np.inf                       # a batch whose gradients overflow
    y = tf.constant(rng.integers(0, 3, 16).astype(np.int32))
    results = []
    for traced in (False, True):
        w = tf.Variable(w0)
        opt = LossScaleOptimizer(
            optimizers.Adam(optimizers.schedules.ExponentialDecay(1e-2, 2, 0.5),
                            gradient_accumulation_steps=2, global_clipnorm=1.0),
            initial_scale=2.0 ** 10, dynamic_growth_steps=3)
        acc = metrics.SparseCategoricalAccuracy()
        loss_fn = losses.SparseCategoricalCrossentropy(from_logits=True)

        def step(x):
            with tf.GradientTape() as tape:
                logits = tf.matmul(x, w)
                loss = loss_fn(y, logits)
                scaled = opt.get_scaled_loss(loss)
            grads = opt.get_unscaled_gradients(tape.gradient(scaled, [w]))
            opt.apply_gradients(zip(grads, [w]))
            acc.update_state(y, logits)
            return loss

        fn = tf.function(step) if traced else step
        scales = []
        for x in xs:
            fn(tf.constant(x))
            scales.append(float(opt.loss_scale))
        results.append((w.numpy().copy(), scales, int(opt.iterations), float(acc.result())))
    (w_eager, s_eager, it_eager, acc_eager), (w_traced, s_traced, it_traced, acc_traced) = results
    np.testing.assert_array_equal(w_traced, w_eager)
    assert s_traced == s_eager and s_eager[:4] == [1024.0, 1024.0, 2048.0, 1024.0]
    assert it_traced == it_eager == 4 and acc_traced == acc_eager
