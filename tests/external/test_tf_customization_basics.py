"""The examples of the tensorflow.org tutorial "Customization basics: tensors and operations"
(https://www.tensorflow.org/tutorials/customization/basics), run with ``import minitf as tf``.
Values are the ones the tutorial prints or float64 numpy.

Left out: ``tf.data.TextLineDataset`` (string tensors are out of scope, see docs/compat.md),
``Tensor.device`` and the matmul timings of the device-placement section (the ``tf.device``
block is kept and its result checked).
"""
import numpy as np
import pytest

import minitf as tf


def test_tensor_operations():
    for got, want in ((tf.math.add(1, 2), 3),
                      (tf.math.add([1, 2], [3, 4]), [4, 6]),
                      (tf.math.square(5), 25),
                      (tf.math.reduce_sum([1, 2, 3]), 6),
                      # Operator overloading is also supported
                      (tf.math.square(2) + tf.math.square(3), 13)):
        assert got.dtype == tf.int32
        np.testing.assert_array_equal(got.numpy(), want)


def test_shape_and_dtype_of_a_matmul():
    x = tf.linalg.matmul([[1]], [[2, 3]])
    np.testing.assert_array_equal(x.numpy(), [[2, 3]])
    assert x.shape == (1, 2)
    assert x.dtype == tf.int32


def test_numpy_compatibility():
    ndarray = np.ones([3, 3])
    # TensorFlow operations convert numpy arrays to Tensors automatically
    tensor = tf.math.multiply(ndarray, 42)
    assert isinstance(tensor, tf.Tensor)
    assert tensor.dtype == tf.float64
    np.testing.assert_array_equal(tensor.numpy(), np.full((3, 3), 42.0))
    # And NumPy operations convert Tensors to NumPy arrays automatically
    added = np.add(tensor, 1)
    assert isinstance(added, np.ndarray) and added.dtype == np.float64
    np.testing.assert_array_equal(added, np.full((3, 3), 43.0))
    # The .numpy() method explicitly converts a Tensor to a numpy array
    assert isinstance(tensor.numpy(), np.ndarray)
    np.testing.assert_array_equal(np.multiply(tensor, 2), np.full((3, 3), 84.0))


def test_gpu_acceleration_query():
    x = tf.random.uniform([3, 3])
    assert x.shape == (3, 3) and x.dtype == tf.float32
    assert ((x.numpy() >= 0) & (x.numpy() < 1)).all()
    gpus = tf.config.list_physical_devices("GPU")
    assert isinstance(gpus, list)
    assert tf.config.list_physical_devices("CPU")


def time_matmul(x):
    for _ in range(10):
        y = tf.linalg.matmul(x, x)
    return y


def test_explicit_device_placement():
    with tf.device("CPU:0"):
        x = tf.random.uniform([100, 100])
        y = time_matmul(x)
    xv = x.numpy().astype(np.float64)
    np.testing.assert_allclose(y.numpy(), xv @ xv, rtol=1e-5)


def test_dataset_from_tensor_slices_map_shuffle_batch():
    tf.random.set_seed(1)
    ds_tensors = tf.data.Dataset.from_tensor_slices([1, 2, 3, 4, 5, 6])
    ds_tensors = ds_tensors.map(tf.math.square).shuffle(2).batch(2)
    batches = [x for x in ds_tensors]
    assert len(batches) == 3
    for b in batches:
        assert isinstance(b, tf.Tensor)
        assert b.dtype == tf.int32 and b.shape == (2,)
    values = np.concatenate([b.numpy() for b in batches])
    assert sorted(values.tolist()) == [1, 4, 9, 16, 25, 36]
    # With a shuffle buffer of 2, element k enters the buffer after k - 1 elements have
    # been emitted, so it cannot come out earlier than position k - 1.
    positions = {int(v): i for i, v in enumerate(values)}
    for k, v in enumerate([1, 4, 9, 16, 25, 36]):
        assert positions[v] >= k - 1
    # Iterating again reshuffles but keeps the elements.
    orders = [np.concatenate([b.numpy() for b in ds_tensors]).tolist() for _ in range(8)]
    for order in orders:
        assert sorted(order) == [1, 4, 9, 16, 25, 36]
    # it does shuffle (each epoch keeps the input order with probability 1/32)
    assert any(order != [1, 4, 9, 16, 25, 36] for order in orders)


def test_dataset_element_spec_and_iteration_order_without_shuffle():
    ds = tf.data.Dataset.from_tensor_slices([1, 2, 3, 4, 5, 6]).map(tf.math.square).batch(2)
    spec = ds.element_spec
    assert spec.dtype == tf.int32 and spec.shape.as_list() == [None]
    np.testing.assert_array_equal(np.stack([b.numpy() for b in ds]),
                                  [[1, 4], [9, 16], [25, 36]])
