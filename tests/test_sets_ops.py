"""tf.sets: intersection, union, difference and size on dense tensors and SparseTensors.

Expected values were computed with TensorFlow 2.21 and pasted as literals.
"""
import numpy as np
import pytest

import minitf as tf


def _parts(sp):
    return (sp.indices.numpy().tolist(), sp.values.numpy().tolist(),
            sp.dense_shape.numpy().tolist())


A = [[1, 2, 3, 2], [4, 5, 6, 9]]
B = [[2, 3, 7, 7], [4, 4, 4, 4]]


def test_dense_dense():
    a, b = tf.constant(A), tf.constant(B)
    out = tf.sets.intersection(a, b)
    assert isinstance(out, tf.SparseTensor) and out.dtype == tf.int32
    assert _parts(out) == ([[0, 0], [0, 1], [1, 0]], [2, 3, 4], [2, 2])
    assert _parts(tf.sets.union(a, b)) == (
        [[0, 0], [0, 1], [0, 2], [0, 3], [1, 0], [1, 1], [1, 2], [1, 3]],
        [1, 2, 3, 7, 4, 5, 6, 9], [2, 4])
    assert _parts(tf.sets.difference(a, b)) == ([[0, 0], [1, 0], [1, 1], [1, 2]],
                                                [1, 5, 6, 9], [2, 3])
    assert _parts(tf.sets.difference(a, b, aminusb=False)) == ([[0, 0]], [7], [2, 1])
    assert tf.sets.set_union is tf.sets.union


def test_rank_3_dense():
    a = tf.constant([[[1, 2], [3, 3]], [[5, 6], [7, 8]]])
    b = tf.constant([[[2, 9], [3, 1]], [[0, 0], [8, 7]]])
    assert _parts(tf.sets.union(a, b)) == (
        [[0, 0, 0], [0, 0, 1], [0, 0, 2], [0, 1, 0], [0, 1, 1], [1, 0, 0], [1, 0, 1],
         [1, 0, 2], [1, 1, 0], [1, 1, 1]], [1, 2, 9, 1, 3, 0, 5, 6, 7, 8], [2, 2, 3])


def test_sparse_sparse_and_size():
    a = tf.SparseTensor([[0, 0], [0, 1], [1, 0]], [1, 3, 2], [3, 3])
    b = tf.SparseTensor([[0, 0], [2, 0], [2, 1]], [1, 7, 8], [3, 2])
    assert _parts(tf.sets.intersection(a, b)) == ([[0, 0]], [1], [3, 1])
    assert _parts(tf.sets.union(a, b)) == ([[0, 0], [0, 1], [1, 0], [2, 0], [2, 1]],
                                           [1, 3, 2, 7, 8], [3, 2])
    assert _parts(tf.sets.difference(a, b)) == ([[0, 0], [1, 0]], [3, 2], [3, 1])
    sizes = tf.sets.size(tf.SparseTensor([[0, 0], [0, 1], [1, 0], [1, 1]], [3, 1, 2, 2], [3, 3]))
    assert sizes.dtype == tf.int32 and sizes.numpy().tolist() == [2, 1, 0]
    assert tf.sets.size(tf.sparse.from_dense(tf.constant(A))).numpy().tolist() == [3, 4]


def test_dense_with_sparse():
    a = tf.constant([[1, 2, 3], [4, 5, 6]], tf.int64)
    b = tf.SparseTensor([[0, 0], [1, 0], [1, 1]], tf.constant([3, 6, 1], tf.int64), [2, 2])
    assert _parts(tf.sets.difference(a, b)) == ([[0, 0], [0, 1], [1, 0], [1, 1]],
                                                [1, 2, 4, 5], [2, 2])
    assert _parts(tf.sets.difference(b, a)) == ([[1, 0]], [1], [2, 1])
    assert _parts(tf.sets.union(a, b)) == ([[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2],
                                            [1, 3]], [1, 2, 3, 1, 4, 5, 6], [2, 4])
    out = tf.sets.intersection(b, a)
    assert out.dtype == tf.int64 and _parts(out) == ([[0, 0], [1, 0]], [3, 6], [2, 1])


def test_strings_and_empty_result():
    s, t = tf.constant([["a", "b"], ["c", "a"]]), tf.constant([["b", "z"], ["a", "c"]])
    assert _parts(tf.sets.union(s, t)) == ([[0, 0], [0, 1], [0, 2], [1, 0], [1, 1]],
                                           [b"a", b"b", b"z", b"a", b"c"], [2, 3])
    assert _parts(tf.sets.intersection(s, t)) == ([[0, 0], [1, 0], [1, 1]], [b"b", b"a", b"c"],
                                                  [2, 2])
    empty = tf.sets.intersection(tf.constant([[1, 2]]), tf.constant([[3, 4]]))
    assert _parts(empty) == ([], [], [1, 0])
    assert tuple(empty.indices.shape) == (0, 2)


def test_errors():
    with pytest.raises(TypeError, match="set_union: a has invalid dtype float32; expected one "
                       "of int8"):
        tf.sets.union(tf.constant([[1.0]]), tf.constant([[2.0]]))
    with pytest.raises(tf.errors.InvalidArgumentError, match="a must have rank >= 2, got "
                       "shape \\[\\]"):
        tf.sets.union(tf.constant(1), tf.constant(2))
    with pytest.raises(tf.errors.InvalidArgumentError, match="same shape except in the last "
                       "dimension, got \\[2\\] and \\[3\\]"):
        tf.sets.intersection(tf.constant(A), tf.constant([[1, 2], [3, 4], [5, 6]]))
    with pytest.raises(TypeError, match="same dtype, got int32 and int64"):
        tf.sets.union(tf.constant(A), tf.constant(np.array(B, np.int64)))
    with pytest.raises(TypeError, match="set_size: expected a SparseTensor, got Tensor"):
        tf.sets.size(tf.constant(A))
