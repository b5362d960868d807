"""Stateless random ops, categorical/gamma/poisson and tf.random.Generator: distributions within
statistical tolerance, determinism, shapes, dtypes and fresh draws in traced functions."""
import numpy as np
import pytest

import minitf as tf


def test_stateless_ops_are_deterministic_per_seed():
    a = tf.random.stateless_uniform([3, 4], seed=[1, 2])
    b = tf.random.stateless_uniform([3, 4], seed=[1, 2])
    c = tf.random.stateless_uniform([3, 4], seed=[2, 1])
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert not np.array_equal(a.numpy(), c.numpy())
    n1 = tf.random.stateless_normal([5], seed=tf.constant([7, 8], tf.int64), dtype=tf.float64)
    n2 = tf.random.stateless_normal([5], seed=[7, 8], dtype=tf.float64)
    np.testing.assert_array_equal(n1.numpy(), n2.numpy())
    assert n1.dtype == tf.float64 and a.dtype == tf.float32


def test_stateless_distributions():
    u = tf.random.stateless_uniform([200000], seed=[3, 4], minval=-2.0, maxval=4.0).numpy()
    assert u.min() >= -2.0 and u.max() < 4.0
    assert abs(u.mean() - 1.0) < 0.02 and abs(u.var() - 3.0) < 0.05      # (b - a)^2 / 12 = 3
    n = tf.random.stateless_normal([200000], seed=[5, 6], mean=1.5, stddev=2.0).numpy()
    assert abs(n.mean() - 1.5) < 0.02 and abs(n.std() - 2.0) < 0.02
    t = tf.random.stateless_truncated_normal([50000], seed=[1, 1]).numpy()
    assert np.abs(t).max() <= 2.0 and abs(t.std() - 0.8796) < 0.01     # truncated at 2 sigma
    i = tf.random.stateless_uniform([60000], seed=[1, 9], minval=3, maxval=7, dtype=tf.int32)
    assert i.dtype == tf.int32
    counts = np.bincount(i.numpy(), minlength=7)[3:]
    assert counts.sum() == 60000 and np.all(np.abs(counts - 15000) < 500)
    full = tf.random.stateless_uniform([1000], seed=[2, 2], minval=None, maxval=None,
                                       dtype=tf.int64).numpy()
    assert full.min() < -2 ** 60 and full.max() > 2 ** 60


def test_stateless_argument_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match="seed must be an integer tensor"):
        tf.random.stateless_uniform([2], seed=[1, 2, 3])
    with pytest.raises(ValueError, match="both minval and maxval"):
        tf.random.stateless_uniform([2], seed=[1, 2], maxval=5, minval=None, dtype=tf.int32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="minval < maxval"):
        tf.random.stateless_uniform([2], seed=[1, 2], minval=5, maxval=5, dtype=tf.int32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="logits must be a matrix"):
        tf.random.stateless_categorical([0.0, 1.0], 3, seed=[1, 2])
    with pytest.raises(TypeError, match="logits must be a floating-point"):
        tf.random.categorical([[1, 2]], 3)


def test_categorical_frequencies_follow_softmax():
    tf.random.set_seed(11)
    probs = np.array([[0.2, 0.5, 0.3], [0.9, 0.0, 0.1]])
    logits = tf.math.log(tf.constant(probs, tf.float64))
    draws = tf.random.categorical(logits, 30000)
    assert draws.dtype == tf.int64 and tuple(draws.shape) == (2, 30000)
    for row in range(2):
        freq = np.bincount(draws.numpy()[row], minlength=3) / 30000
        np.testing.assert_allclose(freq, probs[row], atol=0.012)
    assert (draws.numpy()[1] != 1).all()            # probability 0 (logit -inf) is never drawn
    assert tf.random.categorical(logits, 4, dtype=tf.int32).dtype == tf.int32
    same = tf.random.stateless_categorical(logits, 50, seed=[4, 4])
    np.testing.assert_array_equal(same.numpy(),
                                  tf.random.stateless_categorical(logits, 50, [4, 4]).numpy())


def test_set_seed_makes_stateful_draws_repeatable():
    def draws():
        tf.random.set_seed(123)
        return (tf.random.categorical([[0.0, 1.0, 2.0]], 10).numpy(),
                tf.random.gamma([4], 2.0).numpy(), tf.random.poisson([4], 3.0).numpy())

    first, second = draws(), draws()
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)


def test_gamma_shapes_moments_and_beta_gradient():
    tf.random.set_seed(5)
    alpha = tf.constant([0.5, 2.0, 9.0])
    beta = tf.constant([[1.0], [4.0]])
    sample = tf.random.gamma([20000], alpha, beta)
    assert tuple(sample.shape) == (20000, 2, 3) and sample.dtype == tf.float32
    values = sample.numpy().astype(np.float64)
    a, b = alpha.numpy()[None, :], beta.numpy()
    # Gamma(alpha, rate beta): mean alpha / beta, variance alpha / beta^2
    np.testing.assert_allclose(values.mean(0), a / b, rtol=0.03)
    np.testing.assert_allclose(values.var(0), a / b ** 2, rtol=0.08)
    assert tuple(tf.random.gamma([3, 2], 1.0).shape) == (3, 2)
    b64 = tf.Variable([2.0, 3.0], dtype=tf.float64)
    with tf.GradientTape() as tape:
        draw = tf.random.gamma([5], tf.constant([1.5, 2.5], tf.float64), b64, dtype=tf.float64)
    grad = tape.gradient(draw, b64).numpy()
    # draw = standard_gamma / beta, so d draw / d beta = -draw / beta
    np.testing.assert_allclose(grad, (-draw.numpy() / b64.numpy()).sum(0))


def test_poisson_shapes_moments_and_dtype():
    tf.random.set_seed(8)
    lam = tf.constant([[0.5, 4.0, 20.0]])
    sample = tf.random.poisson([30000], lam)
    assert tuple(sample.shape) == (30000, 1, 3) and sample.dtype == tf.float32
    values = sample.numpy()
    np.testing.assert_allclose(values.mean(0)[0], [0.5, 4.0, 20.0], rtol=0.03)
    np.testing.assert_allclose(values.var(0)[0], [0.5, 4.0, 20.0], rtol=0.06)
    assert tf.random.poisson([2], 1.0, dtype=tf.int64).dtype == tf.int64
    assert np.array_equal(values, np.round(values))
    with pytest.raises(tf.errors.InvalidArgumentError, match="lam must be non-negative"):
        tf.random.poisson([2], -1.0)


def test_traced_functions_draw_fresh_samples_each_call():
    @tf.function
    def f(logits, lam):
        return (tf.random.categorical(logits, 8), tf.random.gamma([8], lam),
                tf.random.poisson([8], lam), tf.random.stateless_normal([8], seed=[1, 2]))

    tf.random.set_seed(1)
    logits, lam = tf.constant([[0.0, 0.0, 0.0, 0.0]]), tf.constant(3.0)
    first = [t.numpy() for t in f(logits, lam)]
    second = [t.numpy() for t in f(logits, lam)]
    for k in range(3):
        assert not np.array_equal(first[k], second[k]), f"output {k} repeated"
    np.testing.assert_array_equal(first[3], second[3])         # stateless: the same values
    np.testing.assert_array_equal(first[3], tf.random.stateless_normal([8], seed=[1, 2]).numpy())
    # the traced calls follow the eager sequence of the global seed
    tf.random.set_seed(1)
    eager = [tf.random.categorical(logits, 8).numpy(), tf.random.gamma([8], lam).numpy()]
    np.testing.assert_array_equal(eager[0], first[0])
    np.testing.assert_array_equal(eager[1], first[1])


def test_generator_from_seed():
    g1, g2 = tf.random.Generator.from_seed(42), tf.random.Generator.from_seed(42)
    a, b = g1.normal([4]), g1.normal([4])
    assert not np.array_equal(a.numpy(), b.numpy())
    np.testing.assert_array_equal(a.numpy(), g2.normal([4]).numpy())
    u = tf.random.Generator.from_seed(7).uniform([100000], minval=1.0, maxval=3.0).numpy()
    assert u.min() >= 1.0 and u.max() < 3.0 and abs(u.mean() - 2.0) < 0.01
    ints = g1.uniform([1000], minval=0, maxval=3, dtype=tf.int32).numpy()
    assert set(np.unique(ints)) == {0, 1, 2}
    seeds = g1.make_seeds(3)
    assert tuple(seeds.shape) == (2, 3) and seeds.dtype == tf.int64
    children = g1.split(2)
    assert not np.array_equal(children[0].normal([3]).numpy(), children[1].normal([3]).numpy())
    g1.reset_from_seed(42)
    np.testing.assert_array_equal(g1.normal([4]).numpy(), a.numpy())
    assert isinstance(tf.random.get_global_generator(), tf.random.Generator)
    with pytest.raises(ValueError, match="integer dtypes need maxval"):
        g1.uniform([2], dtype=tf.int32)


def test_generator_in_tf_function_advances():
    g = tf.random.Generator.from_seed(3)
    reference = tf.random.Generator.from_seed(3)

    @tf.function
    def draw():
        return g.normal([3], dtype=tf.float64)

    calls = [draw().numpy() for _ in range(3)]
    for c in calls:
        np.testing.assert_array_equal(c, reference.normal([3], dtype=tf.float64).numpy())
    assert not np.array_equal(calls[0], calls[1])


def test_scalar_shapes_give_scalar_draws():
    # tf.random.gamma(shape=[], alpha=2.0) is a scalar in TF; a 0-d draw is the first draw of
    # the same stream as shape (1,).
    seed = (1, 2)
    one = tf.random.stateless_gamma((), seed, 2.0)
    assert one.shape == () and one.numpy() == tf.random.stateless_gamma((1,), seed, 2.0).numpy()[0]
    count = tf.random.stateless_poisson((), seed, 3.0)
    assert count.shape == () and count.numpy() == tf.random.stateless_poisson((1,), seed, 3.0)[0]
    assert tf.random.gamma((), 2.0).shape == () and tf.random.poisson((), 2.0).shape == ()
    assert tf.keras.random.gamma((), 2.0).shape == ()
    draw = tf.keras.random.beta((), 2.0, 3.0)
    assert draw.shape == () and 0.0 < float(draw) < 1.0


def test_generator_is_checkpointable_and_binomial(tmp_path):
    g = tf.random.Generator.from_seed(1)
    checkpoint = tf.train.Checkpoint(generator=g)
    g.normal([])
    path = checkpoint.write(str(tmp_path / "ckpt"))
    after_save = [float(g.normal([]).numpy()) for _ in range(2)]
    checkpoint.restore(path)
    assert [float(g.normal([]).numpy()) for _ in range(2)] == after_save
    draws = tf.random.Generator.from_seed(5).binomial([20000], counts=[10.0], probs=0.3)
    assert draws.dtype == tf.int32 and draws.shape == [20000]
    values = draws.numpy()
    assert values.min() >= 0 and values.max() <= 10
    assert abs(values.mean() - 3.0) < 0.05      # mean counts * probs
    assert abs(values.var() - 2.1) < 0.1        # variance counts * probs * (1 - probs)


def test_generator_algorithms_and_state():
    # TF 2.21: alg names map to tf.random.Algorithm numbers
    assert tf.random.Generator.from_seed(1).algorithm == 1
    assert tf.random.Generator.from_seed(1, alg="threefry").algorithm == 2
    assert tf.random.Generator.from_seed(1, alg="philox").split(2)[1].algorithm == 1
    with pytest.raises(ValueError, match="unsupported alg 'foo'.*'philox'"):
        tf.random.Generator.from_seed(1, alg="foo")
    with pytest.raises(ValueError, match="state must be 3 integers"):
        tf.random.Generator(state=[1, 2])
    g = tf.random.Generator.from_seed(9)
    copy = tf.random.Generator(copy_from=g)
    np.testing.assert_array_equal(g.normal([3]).numpy(), copy.normal([3]).numpy())
    state = g.state.numpy().copy()
    first = g.uniform([2]).numpy()
    g.reset(state)
    np.testing.assert_array_equal(g.uniform([2]).numpy(), first)
