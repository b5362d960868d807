"""tf.sparse.bincount, cross, cross_hashed, mask, reset_shape, sampled_addmm and split.
Expected values were produced by TensorFlow 2.21 and are pasted here as literals."""
import numpy as np
import pytest

import minitf as tf


def _parts(sp):
    return sp.indices.numpy().tolist(), sp.values.numpy().tolist(), sp.dense_shape.numpy().tolist()


def _cross_inputs():
    a = tf.SparseTensor([[0, 0], [1, 0], [1, 1]], [b"a", b"b", b"c"], [2, 2])
    b = tf.constant([["d"], ["e"]])
    c = tf.SparseTensor([[0, 0], [1, 0]], tf.constant([3, 4], tf.int64), [2, 1])
    return [a, b, c]


def test_cross_puts_sparse_inputs_first():
    assert _parts(tf.sparse.cross(_cross_inputs())) == (
        [[0, 0], [1, 0], [1, 1]], [b"a_X_3_X_d", b"b_X_4_X_e", b"c_X_4_X_e"], [2, 2])
    a, b, _ = _cross_inputs()
    assert _parts(tf.sparse.cross([a, b], separator="--"))[1] == [b"a--d", b"b--e", b"c--e"]
    e = tf.SparseTensor([[1, 0]], [b"z"], [3, 1])
    f = tf.constant([["p", "q"], ["r", "s"], ["t", "u"]])
    assert _parts(tf.sparse.cross([e, f])) == ([[1, 0], [1, 1]], [b"z_X_r", b"z_X_s"], [3, 2])


def test_cross_hashed_matches_tf():
    out = tf.sparse.cross_hashed(_cross_inputs())
    assert out.dtype == tf.int64
    assert _parts(out) == ([[0, 0], [1, 0], [1, 1]],
                           [1091707526958790436, 4231948014669141395, 3018013499396062534],
                           [2, 2])
    assert _parts(tf.sparse.cross_hashed(_cross_inputs(), num_buckets=100, hash_key=7))[1] == \
        [36, 56, 28]
    with pytest.raises(tf.errors.InvalidArgumentError, match="num_buckets must be >= 0, got -1"):
        tf.sparse.cross_hashed(_cross_inputs(), num_buckets=-1)


def test_cross_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"inputs\[0\] must have rank 2"):
        tf.sparse.cross([tf.constant(["a", "b"])])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"different batch sizes \[2, 3\]"):
        tf.sparse.cross([tf.constant([["a"], ["b"]]), tf.constant([["a"], ["b"], ["c"]])])
    with pytest.raises(TypeError, match=r"inputs\[0\] must hold strings or integers"):
        tf.sparse.cross([tf.constant([[1.5]])])


def test_bincount_matches_tf():
    v = tf.constant([[1, 1, 3], [2, 0, 3]])
    out = tf.sparse.bincount(v)
    assert out.dtype == tf.int32
    assert _parts(out) == ([[0], [1], [2], [3]], [1, 2, 1, 2], [4])
    assert _parts(tf.sparse.bincount(v, axis=-1)) == (
        [[0, 1], [0, 3], [1, 0], [1, 2], [1, 3]], [2, 1, 1, 1, 1], [2, 4])
    weighted = tf.sparse.bincount(v, weights=tf.constant([[0.5, 1., 2.], [3., 4., 5.]]), axis=-1)
    assert weighted.dtype == tf.float32
    assert _parts(weighted)[1] == [1.5, 2.0, 4.0, 3.0, 5.0]
    assert _parts(tf.sparse.bincount(v, axis=-1, binary_output=True))[1] == [1, 1, 1, 1, 1]
    assert _parts(tf.sparse.bincount(v, minlength=6))[2] == [6]
    assert _parts(tf.sparse.bincount(v, maxlength=2)) == ([[0], [1]], [1, 2], [2])
    assert tf.sparse.bincount(tf.constant([1, 2], tf.int64)).dtype == tf.int64
    assert _parts(tf.sparse.bincount(tf.constant([3, 1, 3]))) == ([[1], [3]], [1, 2], [4])


def test_bincount_sparse_and_ragged_values():
    sv = tf.SparseTensor([[0, 1], [0, 3], [2, 0]], tf.constant([7, 7, 2], tf.int64), [3, 5])
    assert _parts(tf.sparse.bincount(sv, axis=-1)) == ([[0, 7], [2, 2]], [2, 1], [3, 8])
    assert _parts(tf.sparse.bincount(sv)) == ([[2], [7]], [1, 2], [8])
    rv = tf.ragged.constant([[1, 1], [], [4]])
    assert _parts(tf.sparse.bincount(rv, axis=-1)) == ([[0, 1], [2, 4]], [2, 1], [3, 5])


def test_bincount_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match="must all be non-negative, got -1"):
        tf.sparse.bincount(tf.constant([-1, 2]))
    with pytest.raises(ValueError, match="axis must be 0 or -1, got 1"):
        tf.sparse.bincount(tf.constant([[1]]), axis=1)
    with pytest.raises(ValueError, match="weights and binary_output=True"):
        tf.sparse.bincount(tf.constant([1]), weights=[1.0], binary_output=True)
    with pytest.raises(TypeError, match="values must be integers, got float32"):
        tf.sparse.bincount(tf.constant([1.0]))


def test_bincount_in_function_follows_values():
    count = tf.function(lambda x: tf.sparse.to_dense(tf.sparse.bincount(x, minlength=4)))
    with pytest.warns(tf.EagerFallbackWarning, match="sparse.bincount"):
        assert count(tf.constant([0, 1, 1])).numpy().tolist() == [1, 2, 0, 0]
    assert count(tf.constant([3, 3, 2])).numpy().tolist() == [0, 0, 1, 2]


def _five():
    return tf.SparseTensor([[0, 0], [0, 3], [1, 1], [1, 4], [2, 2]], [1., 2., 3., 4., 5.], [3, 5])


def test_split_matches_tf():
    pieces = tf.sparse.split(sp_input=_five(), num_split=2, axis=1)
    assert [_parts(p) for p in pieces] == [([[0, 0], [1, 1], [2, 2]], [1.0, 3.0, 5.0], [3, 3]),
                                           ([[0, 0], [1, 1]], [2.0, 4.0], [3, 2])]
    pieces = tf.sparse.split(sp_input=_five(), num_split=2, axis=0)
    assert [_parts(p) for p in pieces] == [
        ([[0, 0], [0, 3], [1, 1], [1, 4]], [1.0, 2.0, 3.0, 4.0], [2, 5]), ([[0, 2]], [5.0], [1, 5])]
    pieces = tf.sparse.split(sp_input=_five(), num_split=3, axis=-1)
    assert [_parts(p) for p in pieces] == [([[0, 0], [1, 1]], [1.0, 3.0], [3, 2]),
                                           ([[0, 1], [2, 0]], [2.0, 5.0], [3, 2]),
                                           ([[1, 0]], [4.0], [3, 1])]
    with pytest.raises(ValueError, match="num_split must be >= 1, got 0"):
        tf.sparse.split(sp_input=_five(), num_split=0, axis=0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="axis 2 is out of range"):
        tf.sparse.split(sp_input=_five(), num_split=2, axis=2)


def test_split_passes_gradients_to_values():
    values = tf.Variable([1., 2., 3., 4., 5.])
    with tf.GradientTape() as tape:
        sp = tf.SparseTensor(_five().indices, values * 1.0, [3, 5])
        first = tf.sparse.split(sp_input=sp, num_split=2, axis=1)[0]
        loss = tf.reduce_sum(first.values * first.values)
    np.testing.assert_allclose(tape.gradient(loss, values).numpy(), [2., 0., 6., 0., 10.])


def test_reset_shape():
    assert _parts(tf.sparse.reset_shape(_five()))[2] == [3, 5]
    assert _parts(tf.sparse.reset_shape(_five(), [4, 6]))[2] == [4, 6]
    tight = tf.SparseTensor([[0, 1], [2, 0]], [1, 2], [10, 10])
    assert _parts(tf.sparse.reset_shape(tight))[2] == [3, 2]
    with pytest.raises(ValueError, match=r"new_shape \[2, 6\] must have rank 2 and no dimension "
                                         r"smaller than sp_input's dense shape \[3, 5\]"):
        tf.sparse.reset_shape(_five(), [2, 6])


def test_mask_indexed_slices():
    slices = tf.IndexedSlices(tf.constant([[1., 2.], [3., 4.], [5., 6.]]), tf.constant([12, 26, 37]),
                              tf.constant([40, 2]))
    out = tf.sparse.mask(slices, [12, 45])
    assert out.values.numpy().tolist() == [[3.0, 4.0], [5.0, 6.0]]
    assert out.indices.numpy().tolist() == [26, 37]
    assert out.dense_shape.numpy().tolist() == [40, 2]
    with pytest.raises(TypeError, match="a must be a tf.IndexedSlices, got Tensor"):
        tf.sparse.mask(tf.constant([1.0]), [0])


def test_sampled_addmm_matches_tf():
    idx, values, shape = tf.sparse.sampled_addmm(
        [[0, 0], [1, 1]], [1., 2.], [2, 2], tf.constant([[1., 2.], [3., 4.]]),
        tf.constant([[5., 6.], [7., 8.]]), beta=0.5, alpha=2.)
    assert idx.numpy().tolist() == [[0, 0], [1, 1]] and shape.numpy().tolist() == [2, 2]
    assert values.numpy().tolist() == [38.5, 101.0]
    batch = tf.reshape(tf.range(8.), [2, 2, 2])
    _, values, _ = tf.sparse.sampled_addmm(
        tf.constant([[[0, 1], [1, 0]], [[0, 0], [1, 1]]], tf.int64), tf.constant([[1., 2.], [3., 4.]]),
        [2, 2], batch, batch)
    assert values.numpy().tolist() == [[4.0, 8.0], [49.0, 83.0]]
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"dense_shape \[3, 3\] does not match"):
        tf.sparse.sampled_addmm([[0, 0]], [1.], [3, 3], tf.ones((2, 2)), tf.ones((2, 2)))
