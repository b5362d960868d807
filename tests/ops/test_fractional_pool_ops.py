"""Tests of tf.nn.fractional_max_pool / fractional_avg_pool. Expected values were computed with
TensorFlow 2.21 (the pooling op where its sequences are deterministic, and the raw gradient ops
FractionalMaxPoolGrad / FractionalAvgPoolGrad for given sequences)."""
import numpy
import pytest

import minitf as tf
from minitf.ops import fractional_pool_ops as _m


X6 = numpy.array([[[[0.0, 0.0], [1.5, 3.0], [-3.0, -2.5], [2.0, 3.0]], [[-1.5, -1.0], [2.5, -0.5],
                 [-1.5, 2.0], [-1.5, -0.5]], [[1.0, 0.5], [-2.5, -3.0], [2.5, 1.5], [2.0, 0.0]],
                 [[2.0, -1.0], [-0.5, 2.0], [-2.5, -1.5], [-2.5, -0.5]], [[3.0, -2.5], [-1.0,
                 -0.5], [2.5, -2.0], [0.0, -1.5]], [[-3.0, 1.5], [-3.0, -1.5], [0.0, 0.0], [-2.5,
                 3.0]]]])

# (pool, overlapping, output, gradient of sum(output * arange(1, size + 1))): the ratios
# (3, 2) divide the 6x4 input, so the sequences are [0, 3, 6] and [0, 2, 4] in TF too.
DIVISIBLE_CASES = [
    ("fractional_max_pool", False,
     [[[[2.5, 3.0], [2.5, 3.0]], [[3.0, 2.0], [2.5, 3.0]]]],
     [[[[0.0, 0.0], [0.0, 2.0], [0.0, 0.0], [0.0, 4.0]], [[0.0, 0.0], [1.0, 0.0], [0.0, 0.0],
      [0.0, 0.0]], [[0.0, 0.0], [0.0, 0.0], [3.0, 0.0], [0.0, 0.0]], [[0.0, 0.0], [0.0, 6.0],
      [0.0, 0.0], [0.0, 0.0]], [[5.0, 0.0], [0.0, 0.0], [7.0, 0.0], [0.0, 0.0]], [[0.0, 0.0],
      [0.0, 0.0], [0.0, 0.0], [0.0, 8.0]]]]),
    ("fractional_max_pool", True,
     [[[[2.5, 3.0], [2.5, 3.0]], [[3.0, 2.0], [2.5, 3.0]]]],
     [[[[0.0, 0.0], [0.0, 2.0], [0.0, 0.0], [0.0, 4.0]], [[0.0, 0.0], [1.0, 0.0], [0.0, 0.0],
      [0.0, 0.0]], [[0.0, 0.0], [0.0, 0.0], [3.0, 0.0], [0.0, 0.0]], [[0.0, 0.0], [0.0, 6.0],
      [0.0, 0.0], [0.0, 0.0]], [[5.0, 0.0], [0.0, 0.0], [7.0, 0.0], [0.0, 0.0]], [[0.0, 0.0],
      [0.0, 0.0], [0.0, 0.0], [0.0, 8.0]]]]),
    ("fractional_avg_pool", False,
     [[[[0.166666666666, -0.166666666666], [0.083333333333, 0.583333333333]], [[-0.416666666666,
      -0.333333333333], [-0.833333333333, -0.416666666666]]]],
     [[[[0.166666666666, 0.333333333333], [0.166666666666, 0.333333333333], [0.5, 0.666666666666],
      [0.5, 0.666666666666]], [[0.166666666666, 0.333333333333], [0.166666666666,
      0.333333333333], [0.5, 0.666666666666], [0.5, 0.666666666666]], [[0.166666666666,
      0.333333333333], [0.166666666666, 0.333333333333], [0.5, 0.666666666666], [0.5,
      0.666666666666]], [[0.833333333333, 1.0], [0.833333333333, 1.0], [1.166666666666,
      1.333333333333], [1.166666666666, 1.333333333333]], [[0.833333333333, 1.0],
      [0.833333333333, 1.0], [1.166666666666, 1.333333333333], [1.166666666666,
      1.333333333333]], [[0.833333333333, 1.0], [0.833333333333, 1.0], [1.166666666666,
      1.333333333333], [1.166666666666, 1.333333333333]]]]),
    ("fractional_avg_pool", True,
     [[[[-0.166666666666, -0.041666666666], [-0.5625, 0.1875]], [[-0.277777777777,
      -0.611111111111], [-0.833333333333, -0.416666666666]]]],
     [[[[0.083333333333, 0.166666666666], [0.083333333333, 0.166666666666], [0.458333333333,
      0.666666666666], [0.375, 0.5]], [[0.083333333333, 0.166666666666], [0.083333333333,
      0.166666666666], [0.458333333333, 0.666666666666], [0.375, 0.5]], [[0.083333333333,
      0.166666666666], [0.083333333333, 0.166666666666], [0.458333333333, 0.666666666666],
      [0.375, 0.5]], [[0.638888888888, 0.833333333333], [0.638888888888, 0.833333333333],
      [2.180555555555, 2.666666666666], [1.541666666666, 1.833333333333]], [[0.555555555555,
      0.666666666666], [0.555555555555, 0.666666666666], [1.722222222222, 2.0],
      [1.166666666666, 1.333333333333]], [[0.555555555555, 0.666666666666], [0.555555555555,
      0.666666666666], [1.722222222222, 2.0], [1.166666666666, 1.333333333333]]]]),
]
X5 = numpy.array([[[[1.5], [3.0], [-2.5], [1.5], [-1.5]], [[0.5], [3.0], [-1.5], [1.5], [-2.0]],
                 [[-1.0], [3.0], [-0.5], [0.0], [-1.5]], [[-2.5], [-0.5], [1.0], [-0.5], [2.0]],
                 [[-1.0], [0.5], [2.0], [2.5], [-0.5]]]])
ROWS, COLS = [0, 2, 3, 5], [0, 1, 3, 5]
# (overlapping, max output, FractionalMaxPoolGrad and FractionalAvgPoolGrad of
# arange(1, 10)) for the sequences ROWS, COLS.
SEQUENCE_CASES = [
    (False,
     [[[[1.5], [3.0], [1.5]], [[-1.0], [3.0], [0.0]], [[-1.0], [2.0], [2.5]]]],
     [[[[1.0], [2.0], [0.0], [3.0], [0.0]], [[0.0], [0.0], [0.0], [0.0], [0.0]], [[4.0], [5.0],
      [0.0], [6.0], [0.0]], [[0.0], [0.0], [0.0], [0.0], [0.0]], [[7.0], [0.0], [8.0], [9.0],
      [0.0]]]],
     [[[[0.5], [0.5], [0.5], [0.75], [0.75]], [[0.5], [0.5], [0.5], [0.75], [0.75]], [[4.0],
      [2.5], [2.5], [3.0], [3.0]], [[3.5], [2.0], [2.0], [2.25], [2.25]], [[3.5], [2.0],
      [2.0], [2.25], [2.25]]]]),
    (True,
     [[[[3.0], [3.0], [1.5]], [[3.0], [3.0], [2.0]], [[0.5], [2.5], [2.5]]]],
     [[[[0.0], [3.0], [0.0], [3.0], [0.0]], [[0.0], [0.0], [0.0], [0.0], [0.0]], [[0.0], [9.0],
      [0.0], [0.0], [0.0]], [[0.0], [0.0], [0.0], [0.0], [6.0]], [[0.0], [7.0], [0.0],
      [17.0], [0.0]]]],
     [[[[0.166666666666], [0.388888888888], [0.222222222222], [0.722222222222], [0.5]],
      [[0.166666666666], [0.388888888888], [0.222222222222], [0.722222222222], [0.5]],
      [[1.166666666666], [2.222222222222], [1.055555555555], [3.055555555555], [2.0]],
      [[2.75], [4.916666666666], [2.166666666666], [5.916666666666], [3.75]], [[1.75],
      [3.083333333333], [1.333333333333], [3.583333333333], [2.25]]]]),
]


def _weighted_sum(y):
    return tf.reduce_sum(y * tf.reshape(tf.range(1, tf.size(y) + 1, dtype=tf.float64), y.shape))


@pytest.mark.parametrize("case", DIVISIBLE_CASES, ids=lambda c: f"{c[0]}-{c[1]}")
def test_divisible_ratios_match_tensorflow(case):
    name, overlapping, expected, grad = case
    x = tf.constant(X6)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y, rows, cols = getattr(tf.nn, name)(x, [1.0, 3.0, 2.0, 1.0], overlapping=overlapping)
        loss = _weighted_sum(y)
    assert rows.numpy().tolist() == [0, 3, 6] and cols.numpy().tolist() == [0, 2, 4]
    assert rows.dtype == tf.int64
    numpy.testing.assert_allclose(y.numpy(), expected, rtol=1e-9)
    numpy.testing.assert_allclose(tape.gradient(loss, x).numpy(), grad, rtol=1e-9)


@pytest.mark.parametrize("case", SEQUENCE_CASES, ids=lambda c: f"overlapping={c[0]}")
def test_given_sequences_match_tensorflow_gradients(case):
    overlapping, expected_max, grad_max, grad_avg = case
    x = tf.constant(X5)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y_max = _m.pool_with_sequences(x, ROWS, COLS, overlapping, "max")
        y_avg = _m.pool_with_sequences(x, ROWS, COLS, overlapping, "avg")
        loss_max, loss_avg = _weighted_sum(y_max), _weighted_sum(y_avg)
    numpy.testing.assert_allclose(y_max.numpy(), expected_max)
    numpy.testing.assert_allclose(tape.gradient(loss_max, x).numpy(), grad_max)
    numpy.testing.assert_allclose(tape.gradient(loss_avg, x).numpy(), grad_avg, rtol=1e-9)


def _reference_pool(x, rows, cols, overlapping, reduce):
    """Loops over the regions, written from TF's description of the op."""
    h, w = x.shape[1:3]
    out = numpy.zeros((x.shape[0], len(rows) - 1, len(cols) - 1, x.shape[3]))
    for i in range(len(rows) - 1):
        r_end = min(rows[i + 1] if overlapping else rows[i + 1] - 1, h - 1)
        for j in range(len(cols) - 1):
            c_end = min(cols[j + 1] if overlapping else cols[j + 1] - 1, w - 1)
            out[:, i, j] = reduce(x[:, rows[i]:r_end + 1, cols[j]:c_end + 1], axis=(1, 2))
    return out


def _check_sequence(seq, n, ratio):
    m = int(numpy.floor(n / ratio))
    k = n // m
    steps = numpy.diff(seq)
    assert len(seq) == m + 1 and seq[0] == 0 and seq[-1] == n
    assert set(steps.tolist()) <= {k, k + 1}


@pytest.mark.parametrize("pseudo_random", [False, True])
@pytest.mark.parametrize("overlapping", [False, True])
@pytest.mark.parametrize("name, reduce", [("fractional_max_pool", numpy.max),
                                          ("fractional_avg_pool", numpy.mean)])
def test_random_sequences_follow_tf_rules_and_pooling_uses_them(pseudo_random, overlapping,
                                                                name, reduce):
    x = numpy.random.default_rng(5).normal(size=(2, 11, 9, 3))
    for seed in (1, 2, 3):
        for ratio in (1.44, 1.73, 2.6):
            y, rows, cols = getattr(tf.nn, name)(x, [1.0, ratio, ratio, 1.0], pseudo_random,
                                                 overlapping, seed=seed)
            rows, cols = rows.numpy(), cols.numpy()
            _check_sequence(rows, 11, ratio)
            _check_sequence(cols, 9, ratio)
            numpy.testing.assert_allclose(
                y.numpy(), _reference_pool(x, rows, cols, overlapping, reduce), rtol=1e-12)


def test_seed_makes_sequences_repeatable():
    x = numpy.zeros((1, 20, 20, 1))
    first = tf.nn.fractional_max_pool(x, 1.5, seed=7)
    again = tf.nn.fractional_max_pool(x, 1.5, seed=7)
    assert first.row_pooling_sequence.numpy().tolist() == \
        again.row_pooling_sequence.numpy().tolist()
    assert first.col_pooling_sequence.numpy().tolist() == \
        again.col_pooling_sequence.numpy().tolist()
    assert first.output.shape == (1, 13, 13, 1)


def test_scalar_and_pair_ratios():
    x = numpy.zeros((1, 8, 6, 2))
    assert tf.nn.fractional_avg_pool(x, 2.0)[0].shape == (1, 4, 3, 2)
    assert tf.nn.fractional_avg_pool(x, [2.0, 1.5])[0].shape == (1, 4, 4, 2)


def test_bad_arguments():
    x = numpy.zeros((1, 4, 4, 1))
    with pytest.raises(ValueError, match=r"fractional_max_pool: pooling_ratio .*: every ratio "
                                         r"must be >= 1.0"):
        tf.nn.fractional_max_pool(x, [1.0, 0.5, 2.0, 1.0])
    with pytest.raises(ValueError, match=r"fractional_avg_pool: pooling_ratio \[2.0, 2.0, 2.0, "
                                         r"1.0\]: only rows and columns"):
        tf.nn.fractional_avg_pool(x, [2.0, 2.0, 2.0, 1.0])
    with pytest.raises(ValueError, match=r"fractional_max_pool: value must be 4-D .* got shape "
                                         r"\(4, 4\)"):
        tf.nn.fractional_max_pool(numpy.zeros((4, 4)), 2.0)
    with pytest.raises(ValueError, match=r"leaves no output for an input of 4x4"):
        tf.nn.fractional_max_pool(x, 5.0)
    with pytest.raises(ValueError, match=r"pooling_ratio must be a float or a list of 1, 2 or "
                                         r"4 floats, got \[1.0, 2.0, 2.0\]"):
        tf.nn.fractional_max_pool(x, [1.0, 2.0, 2.0])
