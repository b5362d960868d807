"""tf.random.Algorithm, create_rng_state, stateless_binomial and
stateless_parameterized_truncated_normal. create_rng_state values were produced by
TensorFlow 2.21; the samplers are checked against the moments of their distributions (their
bits differ from TF's)."""
import math

import numpy as np
import pytest

import minitf as tf


def test_algorithm_enum():
    assert [a.name for a in tf.random.Algorithm] == ["PHILOX", "THREEFRY", "AUTO_SELECT"]
    assert [a.value for a in tf.random.Algorithm] == [1, 2, 3]


@pytest.mark.parametrize("seed,alg,expected", [
    (5, "philox", [5, 0, 0]), (5, "threefry", [5, 0]), (-1, 1, [-1, -1, -1]),
    (2 ** 40 + 3, tf.random.Algorithm.PHILOX, [1099511627779, 0, 0]),
    (7, "auto_select", [7, 0, 0]), ([1, 2], "philox", [0, 1, 2]),
    (np.array([1, 2, 3, 4]), "philox", [1, 2, 3]), (2 ** 64 + 9, "philox", [9, 1, 0]),
])
def test_create_rng_state_matches_tf(seed, alg, expected):
    state = tf.random.create_rng_state(seed, alg)
    assert state.dtype == tf.int64
    assert state.numpy().tolist() == expected


def test_create_rng_state_errors():
    with pytest.raises(ValueError, match="create_rng_state: unknown alg 'mt'"):
        tf.random.create_rng_state(1, "mt")
    with pytest.raises(ValueError, match="seed must be an integer or a vector of integers"):
        tf.random.create_rng_state([1.5], "philox")


def test_stateless_binomial_moments_and_determinism():
    n = 20000
    counts = tf.constant([10.0, 40.0])
    probs = tf.constant([0.3, 0.9])
    x = tf.random.stateless_binomial([n, 2], seed=[1, 2], counts=counts, probs=probs)
    assert x.dtype == tf.int32 and x.shape == (n, 2)
    v = x.numpy().astype(float)
    assert v.min() >= 0 and (v <= [10, 40]).all()
    mean, var = np.array([3.0, 36.0]), np.array([2.1, 3.6])
    assert (np.abs(v.mean(0) - mean) < 5 * np.sqrt(var / n)).all(), v.mean(0)
    np.testing.assert_allclose(v.var(0), var, rtol=0.06)
    again = tf.random.stateless_binomial([n, 2], seed=[1, 2], counts=counts, probs=probs)
    np.testing.assert_array_equal(again.numpy(), x.numpy())
    other = tf.random.stateless_binomial([n, 2], seed=[1, 3], counts=counts, probs=probs)
    assert (other.numpy() != x.numpy()).any()
    floats = tf.random.stateless_binomial([3], [1, 2], counts=5, probs=[0.1, 0.5, 0.9],
                                          output_dtype=tf.float32)
    assert floats.dtype == tf.float32


def test_stateless_binomial_errors():
    with pytest.raises(ValueError, match=r"probs must be in \[0, 1\]"):
        tf.random.stateless_binomial([2], [1, 2], counts=3.0, probs=1.5)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"counts of shape \(3,\) does not "
                                                             r"broadcast to shape \(2,\)"):
        tf.random.stateless_binomial([2], [1, 2], counts=[1.0, 2.0, 3.0], probs=0.5)


def _truncated_moments(lo, hi):
    """Mean and variance of a standard normal truncated to [lo, hi]."""
    def pdf(t):
        return 0.0 if math.isinf(t) else math.exp(-t * t / 2) / math.sqrt(2 * math.pi)

    def cdf(t):
        return 0.5 * (1 + math.erf(t / math.sqrt(2)))
    z = cdf(hi) - cdf(lo)
    mean = (pdf(lo) - pdf(hi)) / z
    tail = (0.0 if math.isinf(lo) else lo * pdf(lo)) - (0.0 if math.isinf(hi) else hi * pdf(hi))
    return mean, 1 + tail / z - mean * mean


@pytest.mark.parametrize("lo,hi", [(-1, 1), (-0.1, 0.1), (1, 3), (3, 10), (-10, -3), (5, 5.1),
                                   (-math.inf, 0.5), (2, math.inf), (-3, 3)])
def test_parameterized_truncated_normal_moments(lo, hi):
    n, mean, std = 20000, 1.0, 2.0
    x = tf.random.stateless_parameterized_truncated_normal(
        [n], [3, 4], means=mean, stddevs=std, minvals=mean + std * lo, maxvals=mean + std * hi)
    assert x.dtype == tf.float32 and x.shape == (n,)
    z = (x.numpy().astype(float) - mean) / std
    assert z.min() >= lo - 1e-6 and z.max() <= hi + 1e-6
    want_mean, want_var = _truncated_moments(lo, hi)
    assert abs(z.mean() - want_mean) < 5 * math.sqrt(want_var / n)
    assert abs(z.var() - want_var) < 0.06 * want_var


def test_parameterized_truncated_normal_broadcasts_and_checks():
    x = tf.random.stateless_parameterized_truncated_normal(
        [4000, 3], [1, 2], means=[0., 1., 2.], stddevs=1., minvals=-1., maxvals=[1., 2., 3.])
    v = x.numpy()
    assert (v >= -1).all() and (v <= [1, 2, 3]).all()
    a = tf.random.stateless_parameterized_truncated_normal([5], [7, 8])
    b = tf.random.stateless_parameterized_truncated_normal([5], [7, 8])
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    doubles = tf.random.stateless_parameterized_truncated_normal(
        [2], [7, 8], means=tf.constant(0.0, tf.float64))
    assert doubles.dtype == tf.float64
    with pytest.raises(ValueError, match="minvals must be less than maxvals, got 2.0 and 1.0"):
        tf.random.stateless_parameterized_truncated_normal([2], [1, 2], minvals=2., maxvals=1.)
    with pytest.raises(ValueError, match="stddevs must be > 0, got -1.0"):
        tf.random.stateless_parameterized_truncated_normal([2], [1, 2], stddevs=-1.)


def test_samplers_in_function_follow_seed():
    draw = tf.function(lambda seed: tf.random.stateless_binomial([4], seed, counts=100.,
                                                                 probs=0.5))
    first, second = draw(tf.constant([1, 2])), draw(tf.constant([5, 6]))
    np.testing.assert_array_equal(first.numpy(), tf.random.stateless_binomial(
        [4], [1, 2], counts=100., probs=0.5).numpy())
    np.testing.assert_array_equal(second.numpy(), tf.random.stateless_binomial(
        [4], [5, 6], counts=100., probs=0.5).numpy())
