"""tf.ragged.boolean_mask, cross, cross_hashed, stack and stack_dynamic_partitions.
Expected values were produced by TensorFlow 2.21 and are pasted here as literals."""
import pytest

import minitf as tf


def _list(x):
    return x.to_list() if isinstance(x, tf.RaggedTensor) else x.numpy().tolist()


def test_cross_keeps_input_order():
    rt = tf.ragged.constant([["a", "b"], ["c"]])
    d = tf.constant([["x"], ["y"]])
    ri = tf.ragged.constant([[1, 2], [3]], dtype=tf.int64)
    assert _list(tf.ragged.cross([rt, d])) == [[b"a_X_x", b"b_X_x"], [b"c_X_y"]]
    assert _list(tf.ragged.cross([d, rt])) == [[b"x_X_a", b"x_X_b"], [b"y_X_c"]]
    assert _list(tf.ragged.cross([ri, rt])) == [[b"1_X_a", b"1_X_b", b"2_X_a", b"2_X_b"],
                                                [b"3_X_c"]]
    sparse = tf.SparseTensor([[0, 0], [1, 0], [1, 1]], [b"a", b"b", b"c"], [2, 2])
    assert _list(tf.ragged.cross([sparse, d])) == [[b"a_X_x"], [b"b_X_y", b"c_X_y"]]


def test_cross_hashed_matches_tf():
    rt = tf.ragged.constant([["a", "b"], ["c"]])
    d = tf.constant([["x"], ["y"]])
    ri = tf.ragged.constant([[1, 2], [3]], dtype=tf.int64)
    out = tf.ragged.cross_hashed([rt, d])
    assert out.dtype == tf.int64
    assert _list(out) == [[1484974617627318892, 3552177129620670004], [6571367263544129360]]
    assert _list(tf.ragged.cross_hashed([ri, d], num_buckets=10)) == [[9, 9], [5]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="num_buckets must be >= 0, got -2"):
        tf.ragged.cross_hashed([ri], num_buckets=-2)


def test_cross_in_function_follows_values():
    cross = tf.function(lambda a, b: tf.ragged.cross([a, b]).flat_values)
    with pytest.warns(tf.EagerFallbackWarning, match="ragged.cross"):
        assert _list(cross(tf.constant([["a"]]), tf.constant([["b"]]))) == [b"a_X_b"]
    assert _list(cross(tf.constant([["c"]]), tf.constant([["d"]]))) == [b"c_X_d"]


def test_boolean_mask_matches_tf():
    data = tf.constant([[1, 2, 3], [4, 5, 6]])
    assert _list(tf.ragged.boolean_mask(
        data, tf.constant([[True, False, True], [False, False, True]]))) == [[1, 3], [6]]
    rows = tf.ragged.boolean_mask(data, tf.constant([False, True]))
    assert isinstance(rows, tf.Tensor) and _list(rows) == [[4, 5, 6]]
    r = tf.ragged.constant([[1, 2, 3], [4], [5, 6]])
    mask = tf.ragged.constant([[True, False, True], [False], [True, True]])
    assert _list(tf.ragged.boolean_mask(r, mask)) == [[1, 3], [], [5, 6]]
    assert _list(tf.ragged.boolean_mask(r, tf.constant([True, False, True]))) == \
        [[1, 2, 3], [5, 6]]
    r3 = tf.ragged.constant([[[1, 2], [3]], [[4]]])
    assert _list(tf.ragged.boolean_mask(r3, tf.ragged.constant([[True, False], [True]]))) == \
        [[[1, 2]], [[4]]]
    strings = tf.ragged.boolean_mask(tf.constant([["a", "b"], ["c", "d"]]),
                                     tf.constant([[False, True], [True, True]]))
    assert _list(strings) == [[b"b"], [b"c", b"d"]]


def test_boolean_mask_errors():
    with pytest.raises(TypeError, match="mask must be bool, got int32"):
        tf.ragged.boolean_mask(tf.constant([1, 2]), tf.constant([1, 0]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="mask has 3 entries where data "
                                                             "has 2 rows"):
        tf.ragged.boolean_mask(tf.constant([1, 2]), tf.constant([True, False, True]))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"row lengths of mask \[1, 1\] "
                                                             r"differ from data's \[2, 1\]"):
        tf.ragged.boolean_mask(tf.ragged.constant([[1, 2], [3]]),
                               tf.ragged.constant([[True], [False]]))


def test_stack_matches_tf():
    a, b = tf.ragged.constant([[1, 2], [3]]), tf.ragged.constant([[4, 5, 6]])
    assert _list(tf.ragged.stack([a, b])) == [[[1, 2], [3]], [[4, 5, 6]]]
    c = tf.ragged.constant([[4, 5, 6], [7]])
    assert _list(tf.ragged.stack([a, c], axis=1)) == [[[1, 2], [4, 5, 6]], [[3], [7]]]
    dense = tf.ragged.stack([tf.constant([1, 2]), tf.constant([3, 4])])
    assert isinstance(dense, tf.RaggedTensor) and tuple(dense.shape) == (2, None)
    assert _list(dense) == [[1, 2], [3, 4]]
    assert _list(tf.ragged.stack([tf.constant([[1, 2]]), tf.ragged.constant([[3]])], axis=1)) \
        == [[[1, 2], [3]]]
    d = tf.ragged.constant([[4, 5], [7]])
    assert _list(tf.ragged.stack([a, d], axis=2)) == [[[1, 4], [2, 5]], [[3, 7]]]
    deep = tf.ragged.stack([tf.ragged.constant([[[1], [2, 3]]]), tf.ragged.constant([[[4], [5]]])],
                           axis=2)
    assert _list(deep) == [[[[1], [4]], [[2, 3], [5]]]]


def test_stack_errors():
    with pytest.raises(ValueError, match=r"same rank, got ranks \[1, 2\]"):
        tf.ragged.stack([tf.constant([1]), tf.constant([[1]])])
    with pytest.raises(ValueError, match="axis 3 is out of range for values of rank 2"):
        tf.ragged.stack([tf.ragged.constant([[1]])], axis=3)
    with pytest.raises(TypeError, match=r"same dtype, got \['int32', 'float32'\]"):
        tf.ragged.stack([tf.constant([1]), tf.constant([1.0])])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"same number of rows, got \[2, 1\]"):
        tf.ragged.stack([tf.ragged.constant([[1], [2]]), tf.ragged.constant([[3]])], axis=1)


def test_stack_dynamic_partitions_matches_tf():
    out = tf.ragged.stack_dynamic_partitions(tf.constant(["a", "b", "c", "d", "e"]),
                                             tf.constant([3, 0, 2, 2, 3]), 5)
    assert _list(out) == [[b"b"], [], [b"c", b"d"], [b"a", b"e"], []]
    out = tf.ragged.stack_dynamic_partitions(tf.constant([[1, 2], [3, 4], [5, 6]]),
                                             tf.constant([1, 0, 1]), 2)
    assert _list(out) == [[[3, 4]], [[1, 2], [5, 6]]]
    out = tf.ragged.stack_dynamic_partitions(tf.ragged.constant([[1], [2, 3], []]),
                                             tf.constant([1, 0, 1]), 3)
    assert _list(out) == [[[2, 3]], [[1], []], []]
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"partitions must be in \[0, 3\) "
                                                             r"\(num_partitions\), got 5"):
        tf.ragged.stack_dynamic_partitions(tf.constant([1, 2]), tf.constant([0, 5]), 3)
