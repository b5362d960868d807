"""``tf.sparse.to_dense`` of string values (TensorFlow 2.21's results for the same calls)."""
import pytest

import minitf as tf


def test_string_values_with_default_padding():
    st = tf.SparseTensor([[0, 1], [1, 0]], ["a", "b"], [2, 2])
    dense = tf.sparse.to_dense(st)
    assert dense.dtype == tf.string
    assert dense.numpy().tolist() == [[b'', b'a'], [b'b', b'']]
    assert tf.sparse.to_dense(st, default_value="z").numpy().tolist() == \
        [[b'z', b'a'], [b'b', b'z']]


def test_string_concat_to_dense():
    left = tf.ragged.constant([["John"], ["a", "big"]]).to_sparse()
    right = tf.ragged.constant([["fell"], ["dog"]]).to_sparse()
    joined = tf.sparse.concat(sp_inputs=[left, right], axis=1)
    assert tf.sparse.to_dense(joined, '').numpy().tolist() == \
        [[b'John', b'', b'fell'], [b'a', b'big', b'dog']]


def test_string_default_must_be_a_scalar():
    st = tf.SparseTensor([[0]], ["a"], [2])
    with pytest.raises(ValueError, match=r"sparse.to_dense: default_value must be a scalar, "
                                         r"got shape \(2,\)"):
        tf.sparse.to_dense(st, default_value=["x", "y"])
