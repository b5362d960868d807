"""Small TF functions (``minitf/ops/misc_ops.py``) against independent numpy computations and
the examples of their tensorflow.org API pages."""
import numpy as np
import pytest

import minitf as tf

RNG = np.random.default_rng(9)


def test_confusion_matrix_counts_and_weights():
    # tf.math.confusion_matrix API page: labels [1, 2, 4], predictions [2, 2, 4]
    m = tf.math.confusion_matrix([1, 2, 4], [2, 2, 4])
    want = np.zeros((5, 5), np.int32)
    want[1, 2] = want[2, 2] = want[4, 4] = 1
    np.testing.assert_array_equal(m.numpy(), want)
    assert m.dtype == tf.int32
    labels, preds = RNG.integers(0, 3, 20), RNG.integers(0, 3, 20)
    w = RNG.uniform(size=20)
    got = tf.math.confusion_matrix(labels, preds, num_classes=4, weights=w, dtype=tf.float64)
    want = np.zeros((4, 4))
    np.add.at(want, (labels, preds), w)
    np.testing.assert_allclose(got.numpy(), want)


def test_histogram_fixed_width_matches_the_api_example():
    # tf.histogram_fixed_width API page: value_range [0, 5], 5 bins -> [2, 1, 1, 0, 2]
    values = [-1.0, 0.0, 1.5, 2.0, 5.0, 15]
    np.testing.assert_array_equal(tf.histogram_fixed_width(values, [0.0, 5.0], nbins=5).numpy(),
                                  [2, 1, 1, 0, 2])


def test_unravel_index_and_broadcast_shapes():
    flat = np.array([1, 5, 7])
    np.testing.assert_array_equal(tf.unravel_index(flat, [3, 3]).numpy(),
                                  np.stack(np.unravel_index(flat, (3, 3))))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"in \[0, 9\)"):
        tf.unravel_index([9], [3, 3])
    np.testing.assert_array_equal(tf.broadcast_dynamic_shape([2, 1, 3], [4, 1]).numpy(),
                                  [2, 4, 3])
    assert tf.broadcast_static_shape(tf.TensorShape([None, 1]), tf.TensorShape([5])) == \
        [None, 5]
    with pytest.raises(ValueError, match="incompatible"):
        tf.broadcast_static_shape(tf.TensorShape([2]), tf.TensorShape([3]))


def test_multiply_no_nan_and_its_gradient():
    x = tf.constant([np.inf, np.nan, 2.0])
    y = tf.constant([0.0, 0.0, 3.0])
    np.testing.assert_array_equal(tf.math.multiply_no_nan(x, y).numpy(), [0.0, 0.0, 6.0])
    a = tf.constant([1.5, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(a)
        out = tf.reduce_sum(tf.math.multiply_no_nan(a, tf.constant([0.0, 4.0])))
    np.testing.assert_array_equal(tape.gradient(out, a).numpy(), [0.0, 4.0])
    assert [t.numpy().tolist() for t in tf.identity_n([tf.ones(2), tf.zeros(1)])] == \
        [[1.0, 1.0], [0.0]]


@pytest.mark.parametrize("p_shape, i_shape, axis, batch_dims", [
    ((2, 5), (2, 3), 1, 1), ((2, 3, 4), (2, 2), 2, 1), ((2, 3, 4, 2), (2, 3, 5), 2, 2),
    ((2, 3, 4), (2, 1, 2), 1, 1)])
def test_gather_with_batch_dims_matches_a_per_batch_loop(p_shape, i_shape, axis, batch_dims):
    params = RNG.normal(size=p_shape)
    indices = RNG.integers(0, p_shape[axis], size=i_shape)
    got = tf.gather(params, indices, axis=axis, batch_dims=batch_dims).numpy()
    lead = p_shape[:batch_dims]
    want = np.stack([np.take(params[b], indices[b], axis=axis - batch_dims)
                     for b in np.ndindex(*lead)]).reshape(
        lead + p_shape[batch_dims:axis] + i_shape[batch_dims:] + p_shape[axis + 1:])
    np.testing.assert_array_equal(got, want)
    p = tf.constant(params)
    with tf.GradientTape() as tape:
        tape.watch(p)
        s = tf.reduce_sum(tf.gather(p, indices, axis=axis, batch_dims=batch_dims) ** 2)
    grad = np.zeros_like(params)
    for b in np.ndindex(*lead):
        sub = np.moveaxis(grad[b], axis - batch_dims, 0)
        vals = np.moveaxis(params[b], axis - batch_dims, 0)
        np.add.at(sub, indices[b], 2 * vals[indices[b]])
    np.testing.assert_allclose(tape.gradient(s, p).numpy(), grad)


def test_stateless_split_and_fold_in_are_deterministic():
    seeds = tf.random.experimental.stateless_split([1, 2], num=3)
    # TF 2.21: the seed's dtype (int32 for a Python list), fold_in: data's dtype
    assert seeds.shape == [3, 2] and seeds.dtype == tf.int32
    assert tf.random.experimental.stateless_split(
        tf.constant([1, 2], tf.int64), num=2).dtype == tf.int64
    assert tf.random.experimental.stateless_fold_in(
        tf.constant([1, 2], tf.int64), 3).dtype == tf.int32
    assert tf.random.experimental.stateless_fold_in(
        [1, 2], tf.constant(3, tf.int64)).dtype == tf.int64
    np.testing.assert_array_equal(seeds.numpy(),
                                  tf.random.experimental.stateless_split([1, 2], num=3).numpy())
    assert len({tuple(r) for r in seeds.numpy().tolist()}) == 3
    a = tf.random.experimental.stateless_fold_in([1, 2], 7).numpy()
    b = tf.random.experimental.stateless_fold_in([1, 2], 8).numpy()
    assert a.tolist() != b.tolist()
    np.testing.assert_array_equal(a, tf.random.experimental.stateless_fold_in([1, 2], 7).numpy())
