"""Port of TensorFlow's guide "Introduction to tensor slicing"
(https://www.tensorflow.org/guide/tensor_slicing).

Every cell runs as written; the expected values are TF 2.21's output for the same cells.
The last test adds ``tf.strided_slice``, which the guide names in its text.
"""
import numpy as np

import minitf as tf


def check(tensor, expected, dtype):
    assert tensor.dtype == dtype
    np.testing.assert_array_equal(tensor.numpy(), np.asarray(expected))
    assert tuple(tensor.shape) == np.asarray(expected).shape


t1 = tf.constant([0, 1, 2, 3, 4, 5, 6, 7])
t2 = tf.constant([[0, 1, 2, 3, 4],
                  [5, 6, 7, 8, 9],
                  [10, 11, 12, 13, 14],
                  [15, 16, 17, 18, 19]])


def test_extract_tensor_slices():
    check(tf.slice(t1, begin=[1], size=[3]), [1, 2, 3], tf.int32)
    check(t1[1:4], [1, 2, 3], tf.int32)
    check(t1[-3:], [5, 6, 7], tf.int32)
    check(t2[:-1, 1:3], [[1, 2], [6, 7], [11, 12]], tf.int32)
    t3 = tf.constant([[[1, 3, 5, 7],
                       [9, 11, 13, 15]],
                      [[17, 19, 21, 23],
                       [25, 27, 29, 31]]
                      ])
    check(tf.slice(t3, begin=[1, 1, 0], size=[1, 1, 2]), [[[25, 27]]], tf.int32)


def test_gather():
    check(tf.gather(t1, indices=[0, 3, 6]), [0, 3, 6], tf.int32)
    # This is similar to doing
    check(t1[::3], [0, 3, 6], tf.int32)
    alphabet = tf.constant(list('abcdefghijklmnopqrstuvwxyz'))
    gathered = tf.gather(alphabet, indices=[2, 0, 19, 18])
    assert gathered.dtype == tf.string
    assert gathered.numpy().tolist() == [b'c', b'a', b't', b's']


def test_gather_nd():
    t4 = tf.constant([[0, 5],
                      [1, 6],
                      [2, 7],
                      [3, 8],
                      [4, 9]])
    check(tf.gather_nd(t4, indices=[[2], [3], [0]]), [[2, 7], [3, 8], [0, 5]], tf.int32)
    t5 = np.reshape(np.arange(18), [2, 3, 3])
    check(tf.gather_nd(t5, indices=[[0, 0, 0], [1, 2, 1]]), [0, 16], tf.int64)
    # Return a list of two matrices
    check(tf.gather_nd(t5, indices=[[[0, 0], [0, 2]], [[1, 0], [1, 2]]]),
          [[[0, 1, 2], [6, 7, 8]], [[9, 10, 11], [15, 16, 17]]], tf.int64)
    # Return one matrix
    check(tf.gather_nd(t5, indices=[[0, 0], [0, 2], [1, 0], [1, 2]]),
          [[0, 1, 2], [6, 7, 8], [9, 10, 11], [15, 16, 17]], tf.int64)


def test_insert_data_into_tensors():
    t6 = tf.constant([10])
    indices = tf.constant([[1], [3], [5], [7], [9]])
    data = tf.constant([2, 4, 6, 8, 10])
    check(tf.scatter_nd(indices=indices, updates=data, shape=t6),
          [0, 2, 0, 4, 0, 6, 0, 8, 0, 10], tf.int32)

    # Gather values from one tensor by specifying indices
    new_indices = tf.constant([[0, 2], [2, 1], [3, 3]])
    t7 = tf.gather_nd(t2, indices=new_indices)
    check(t7, [2, 11, 18], tf.int32)
    # Add these values into a new tensor
    t8 = tf.scatter_nd(indices=new_indices, updates=t7, shape=tf.constant([4, 5]))
    expected = [[0, 0, 2, 0, 0],
                [0, 0, 0, 0, 0],
                [0, 11, 0, 0, 0],
                [0, 0, 0, 18, 0]]
    check(t8, expected, tf.int32)

    t9 = tf.SparseTensor(indices=[[0, 2], [2, 1], [3, 3]],
                         values=[2, 11, 18],
                         dense_shape=[4, 5])
    check(t9.indices, [[0, 2], [2, 1], [3, 3]], tf.int64)
    check(t9.values, [2, 11, 18], tf.int32)
    check(t9.dense_shape, [4, 5], tf.int64)
    # Convert the sparse tensor into a dense tensor
    t10 = tf.sparse.to_dense(t9)
    check(t10, expected, tf.int32)


def test_tensor_scatter_nd_ops():
    t11 = tf.constant([[2, 7, 0],
                       [9, 0, 1],
                       [0, 3, 8]])
    # Convert the tensor into a magic square by inserting numbers at appropriate indices
    t12 = tf.tensor_scatter_nd_add(t11,
                                   indices=[[0, 2], [1, 1], [2, 0]],
                                   updates=[6, 5, 4])
    check(t12, [[2, 7, 6], [9, 5, 1], [4, 3, 8]], tf.int32)
    # Convert the tensor into an identity matrix
    t13 = tf.tensor_scatter_nd_sub(t11,
                                   indices=[[0, 0], [0, 1], [1, 0], [1, 1], [1, 2], [2, 1],
                                            [2, 2]],
                                   updates=[1, 7, 9, -1, 1, 3, 7])
    check(t13, [[1, 0, 0], [0, 1, 0], [0, 0, 1]], tf.int32)

    t14 = tf.constant([[-2, -7, 0],
                       [-9, 0, 1],
                       [0, -3, -8]])
    t15 = tf.tensor_scatter_nd_min(t14,
                                   indices=[[0, 2], [1, 1], [2, 0]],
                                   updates=[-6, -5, -4])
    check(t15, [[-2, -7, -6], [-9, -5, 1], [-4, -3, -8]], tf.int32)
    t16 = tf.tensor_scatter_nd_max(t14,
                                   indices=[[0, 2], [1, 1], [2, 0]],
                                   updates=[6, 5, 4])
    check(t16, [[-2, -7, 6], [-9, 5, 1], [4, -3, -8]], tf.int32)


def test_strided_slice():
    check(tf.strided_slice(t2, [0, 1], [4, 5], [2, 2]), [[1, 3], [11, 13]], tf.int32)
