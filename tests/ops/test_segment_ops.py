"""Segment reductions, bincount and in_top_k: values against numpy and TF's documented
examples, TF's fill values for empty segments, gradients (closed form and numeric), traced
functions and errors. The registered ops' gradients are also checked by test_gradcheck.py."""
import numpy as np
import pytest

import minitf as tf
from minitf.testing import check_grads

rng = np.random.default_rng(3)
C = np.array([[1, 2, 3, 4], [4, 3, 2, 1], [5, 6, 7, 8]])   # TF's documentation examples


def _np_segments(kind, data, ids, num, fill):
    """numpy reference: reduce the rows of ``data`` per id (negative ids dropped)."""
    rows = data.reshape((-1,) + data.shape[ids.ndim:])
    flat = ids.reshape(-1)
    out = np.full((num,) + rows.shape[1:], fill, dtype=data.dtype)
    for s in range(num):
        members = rows[flat == s]
        if len(members):
            out[s] = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min,
                      "mean": np.mean}[kind](members, axis=0)
    return out


def _lowest(dtype):
    return np.finfo(dtype).min if np.dtype(dtype).kind == "f" else np.iinfo(dtype).min


def _highest(dtype):
    return np.finfo(dtype).max if np.dtype(dtype).kind == "f" else np.iinfo(dtype).max


# --- values ----------------------------------------------------------------------------------

def test_tf_doc_examples():
    np.testing.assert_array_equal(tf.math.segment_sum(C, [0, 0, 1]).numpy(),
                                  [[5, 5, 5, 5], [5, 6, 7, 8]])
    np.testing.assert_array_equal(tf.math.segment_max(C, [0, 0, 1]).numpy(),
                                  [[4, 3, 3, 4], [5, 6, 7, 8]])
    np.testing.assert_array_equal(tf.math.segment_prod(C, [0, 0, 1]).numpy(),
                                  [[4, 6, 6, 4], [5, 6, 7, 8]])
    c = C[[0, 2, 1]]        # the unsorted ops' documentation lists the rows in this order
    np.testing.assert_array_equal(tf.math.unsorted_segment_sum(c, [0, 1, 0], 2).numpy(),
                                  [[5, 5, 5, 5], [5, 6, 7, 8]])
    np.testing.assert_array_equal(tf.math.unsorted_segment_max(c, [0, 1, 0], 2).numpy(),
                                  [[4, 3, 3, 4], [5, 6, 7, 8]])
    np.testing.assert_array_equal(tf.math.unsorted_segment_min(c, [0, 1, 0], 2).numpy(),
                                  [[1, 2, 2, 1], [5, 6, 7, 8]])
    mean = tf.math.segment_mean(tf.constant(C, dtype=tf.float32), [0, 0, 1])
    np.testing.assert_array_equal(mean.numpy(), [[2.5, 2.5, 2.5, 2.5], [5, 6, 7, 8]])


@pytest.mark.parametrize("kind", ["sum", "prod", "max", "min"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
@pytest.mark.parametrize("data_shape,ids", [
    ((7,), np.array([3, 0, -1, 3, 5, 0, 3])),
    ((6, 2), np.array([1, 1, 4, 0, -2, 4])),
    ((2, 3, 2), np.array([[2, 0, 2], [0, -1, 5]])),
])
def test_unsorted_segments_match_numpy(kind, dtype, data_shape, ids):
    num = 6
    data = rng.integers(-5, 6, data_shape).astype(dtype)
    out = getattr(tf.math, f"unsorted_segment_{kind}")(data, tf.constant(ids), num)
    fill = {"sum": 0, "prod": 1, "max": _lowest(dtype), "min": _highest(dtype)}[kind]
    assert out.dtype.name == dtype
    np.testing.assert_array_equal(out.numpy(), _np_segments(kind, data, ids, num, fill))


@pytest.mark.parametrize("kind", ["sum", "prod", "max", "min", "mean"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_sorted_segments_match_numpy_with_empty_segments(kind, dtype):
    ids = np.array([0, 0, 2, 2, 2, 5])
    data = rng.integers(-5, 6, (6, 3)).astype(dtype)
    if kind == "mean" and dtype == "int32":      # means take float data here
        with pytest.raises(TypeError, match="data must be a float tensor"):
            tf.math.segment_mean(data, ids)
        return
    out = getattr(tf.math, f"segment_{kind}")(data, ids)
    # Empty sorted segments: 1 for a product, 0 otherwise (max and min too).
    expected = _np_segments(kind, data, ids, 6, 1 if kind == "prod" else 0)
    assert out.shape == (6, 3) and out.dtype.name == dtype
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6)


def test_unsorted_mean_and_sqrt_n():
    data = rng.uniform(-1, 1, (5, 2)).astype("float32")
    ids = np.array([[1], [1], [3], [1], [-1]]).reshape(5)
    counts = np.array([0, 3, 0, 1])
    sums = _np_segments("sum", data, ids, 4, 0)
    np.testing.assert_allclose(tf.math.unsorted_segment_mean(data, ids, 4).numpy(),
                               sums / np.maximum(counts, 1)[:, None], rtol=1e-6)
    np.testing.assert_allclose(tf.math.unsorted_segment_sqrt_n(data, ids, 4).numpy(),
                               sums / np.sqrt(np.maximum(counts, 1))[:, None], rtol=1e-6)


# --- gradients -------------------------------------------------------------------------------

def _grad(fn, data, weights):
    x = tf.Variable(data)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(fn(x) * weights)
    return tape.gradient(loss, x).numpy()


def test_sum_and_mean_gradients_gather_back():
    ids = np.array([2, 0, -1, 2])
    w = np.array([10.0, 20.0, 30.0])
    np.testing.assert_array_equal(
        _grad(lambda x: tf.math.unsorted_segment_sum(x, ids, 3), np.ones(4), w), [30, 10, 0, 30])
    np.testing.assert_array_equal(
        _grad(lambda x: tf.math.unsorted_segment_mean(x, ids, 3), np.ones(4), w),
        [15, 10, 0, 15])


def test_max_gradient_splits_ties_and_prod_gradient_handles_zeros():
    data = np.array([3.0, 1.0, 3.0, 2.0])
    np.testing.assert_array_equal(
        _grad(lambda x: tf.math.segment_max(x, [0, 0, 0, 1]), data, np.array([4.0, 1.0])),
        [2, 0, 2, 1])
    # Products: one zero in a segment gets the product of the others; with two, all get 0.
    data = np.array([2.0, 0.0, 5.0, 0.0, 0.0, 7.0])
    np.testing.assert_array_equal(
        _grad(lambda x: tf.math.unsorted_segment_prod(x, [0, 0, 0, 1, 1, 1], 2), data,
              np.ones(2)), [0, 10, 0, 0, 0, 0])


@pytest.mark.parametrize("name,fn,args,order", [
    ("unsorted mean", lambda x: tf.math.unsorted_segment_mean(x, np.array([0, 2, 0, -1]), 3),
     [rng.uniform(-1, 1, (4, 2))], 2),
    ("unsorted sqrt_n", lambda x: tf.math.unsorted_segment_sqrt_n(x, np.array([[1, 1], [0, 1]]),
                                                                   2),
     [rng.uniform(-1, 1, (2, 2, 3))], 2),
    ("segment mean", lambda x: tf.math.segment_mean(x, np.array([0, 0, 1, 3])),
     [rng.uniform(-1, 1, (4, 2))], 2),
    ("prod with zeros", lambda x: tf.math.unsorted_segment_prod(x, np.array([1, 0, 1, 1, 0]), 2),
     [np.array([[0.0, 2.0], [1.5, 0.0], [0.7, 0.0], [-1.2, 0.0], [0.0, 0.8]])], 1),
    ("segment_prod with zeros", lambda x: tf.math.segment_prod(x, np.array([0, 0, 0, 2])),
     [np.array([1.5, 0.0, -0.7, 0.0])], 1),
    ("bincount weights", lambda w: tf.math.bincount(np.array([[0, 3, 3], [1, 0, 7]]), w,
                                                    maxlength=5, axis=-1),
     [rng.uniform(-1, 1, (2, 3))], 2),
])
def test_composite_gradients(name, fn, args, order):
    check_grads(fn, args, order=order, name=name)


# --- bincount and in_top_k -------------------------------------------------------------------

def test_bincount_matches_numpy():
    arr = rng.integers(0, 7, (3, 5)).astype("int32")
    np.testing.assert_array_equal(tf.math.bincount(arr).numpy(), np.bincount(arr.reshape(-1)))
    out = tf.math.bincount(arr, minlength=10, dtype=tf.int64)
    assert out.dtype == tf.int64
    np.testing.assert_array_equal(out.numpy(), np.bincount(arr.reshape(-1), minlength=10))
    np.testing.assert_array_equal(tf.math.bincount(arr, maxlength=3).numpy(),
                                  np.bincount(arr.reshape(-1))[:3])
    weights = rng.uniform(0, 1, (3, 5)).astype("float32")
    weighted = tf.math.bincount(arr, weights=weights)
    assert weighted.dtype == tf.float32
    np.testing.assert_allclose(weighted.numpy(),
                               np.bincount(arr.reshape(-1), weights.reshape(-1)), rtol=1e-6)
    per_row = tf.math.bincount(arr, axis=-1, minlength=8).numpy()
    np.testing.assert_array_equal(per_row, [np.bincount(r, minlength=8) for r in arr])
    binary = tf.math.bincount(arr, axis=-1, minlength=8, binary_output=True).numpy()
    np.testing.assert_array_equal(binary, (per_row > 0).astype("int32"))
    assert tf.math.bincount(tf.zeros([0], dtype=tf.int32)).shape == (0,)


def test_bincount_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match="arr must be non-negative"):
        tf.math.bincount([1, -2])
    with pytest.raises(ValueError, match="mutually exclusive"):
        tf.math.bincount([1, 2], weights=[1.0, 2.0], binary_output=True)
    with pytest.raises(TypeError, match="arr must be integers"):
        tf.math.bincount([1.0])


def test_in_top_k():
    predictions = np.array([[0.1, 0.3, 0.3, 0.2], [0.9, 0.05, 0.02, 0.03],
                            [0.4, np.nan, 0.1, 0.5], [0.2, 0.2, 0.6, 0.0]], dtype="float32")
    # Row 0: classes 1 and 2 tie at the top, so both are in the top 1 (TF's tie rule).
    np.testing.assert_array_equal(
        tf.math.in_top_k([2, 0, 0, 1], predictions, 1).numpy(), [True, True, False, False])
    np.testing.assert_array_equal(
        tf.nn.in_top_k(tf.constant([0, 1, 3, 5]), predictions, tf.constant(2)).numpy(),
        [False, True, False, False])             # a target out of range is not in the top k
    with pytest.raises(tf.errors.InvalidArgumentError, match="must match the length"):
        tf.math.in_top_k([0, 1], predictions, 1)


# --- traced functions ------------------------------------------------------------------------

def test_segment_ops_in_a_function_replay_on_new_values():
    @tf.function
    def f(data, ids, sorted_ids, arr):
        return (tf.math.unsorted_segment_max(data, ids, 4), tf.math.segment_sum(data, sorted_ids),
                tf.math.bincount(arr))

    for sorted_ids, arr in (([0, 0, 1, 1, 2], [0, 2, 2]), ([0, 1, 3, 3, 5], [4, 1, 1])):
        data = rng.uniform(-1, 1, (5, 2))
        ids = rng.integers(-1, 4, 5)
        m, s, b = f(tf.constant(data), tf.constant(ids), tf.constant(sorted_ids),
                    tf.constant(arr))
        np.testing.assert_array_equal(m.numpy(), _np_segments("max", data, ids, 4,
                                                              _lowest("float64")))
        # The number of sorted segments (and of bins) follows this call's ids.
        np.testing.assert_allclose(s.numpy(), _np_segments("sum", data, np.array(sorted_ids),
                                                           sorted_ids[-1] + 1, 0))
        np.testing.assert_array_equal(b.numpy(), np.bincount(arr))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"segment_ids\[1\] = 4 is out of"):
        f(tf.constant(data), tf.constant([0, 4, 1, 1, 1]), tf.constant([0, 0, 0, 0, 0]),
          tf.constant([1]))


# --- errors ----------------------------------------------------------------------------------

def test_segment_errors():
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"unsorted_segment_sum.*segment_ids\[2\] = 3 is out of range"):
        tf.math.unsorted_segment_sum([1.0, 2.0, 3.0], [0, 1, 3], 3)
    with pytest.raises(tf.errors.InvalidArgumentError, match="does not start with"):
        tf.math.unsorted_segment_sum(tf.zeros([3, 2]), [0, 1], 2)
    with pytest.raises(tf.errors.InvalidArgumentError, match="not increasing"):
        tf.math.segment_sum([1.0, 2.0, 3.0], [0, 2, 1])
    with pytest.raises(tf.errors.InvalidArgumentError, match="must be >= 0"):
        tf.math.segment_max([1.0, 2.0], [-1, 0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="as long as the first dimension"):
        tf.math.segment_sum([1.0, 2.0, 3.0], [0, 0])
    with pytest.raises(TypeError, match="segment_ids must be int32 or int64"):
        tf.math.unsorted_segment_sum([1.0], [0.0], 1)
    with pytest.raises(TypeError, match="data must be a float tensor"):
        tf.math.unsorted_segment_mean([1, 2], [0, 0], 1)
