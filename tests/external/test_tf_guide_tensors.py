"""The examples of the tensorflow.org guide "Introduction to Tensors"
(https://www.tensorflow.org/guide/tensor), run with ``import minitf as tf``. Values are the ones
the guide prints, float64 numpy, or TensorFlow 2.21's output for the same inputs (marked).

Left out: ragged, string and sparse tensors (minitf has dense numeric tensors only; see
docs/compat.md), ``tf.register_tensor_conversion_function`` and the diagrams. Added where the
guide only mentions them: ``...``/``tf.newaxis`` indexing and item assignment on an (immutable)
tensor.
"""
import numpy as np
import pytest

import minitf as tf


def _rank_3_tensor():
    return tf.constant([
        [[0, 1, 2, 3, 4],
         [5, 6, 7, 8, 9]],
        [[10, 11, 12, 13, 14],
         [15, 16, 17, 18, 19]],
        [[20, 21, 22, 23, 24],
         [25, 26, 27, 28, 29]]])


def _rank_2_tensor():
    return tf.constant([[1, 2],
                        [3, 4],
                        [5, 6]], dtype=tf.float16)


def test_basics_ranks_0_to_3():
    rank_0_tensor = tf.constant(4)
    assert rank_0_tensor.shape == () and rank_0_tensor.dtype == tf.int32
    assert rank_0_tensor.numpy() == 4
    rank_1_tensor = tf.constant([2.0, 3.0, 4.0])
    assert rank_1_tensor.shape == (3,) and rank_1_tensor.dtype == tf.float32
    np.testing.assert_array_equal(rank_1_tensor.numpy(), [2.0, 3.0, 4.0])
    rank_2_tensor = _rank_2_tensor()
    assert rank_2_tensor.shape == (3, 2) and rank_2_tensor.dtype == tf.float16
    rank_3_tensor = _rank_3_tensor()
    assert rank_3_tensor.shape == (3, 2, 5) and rank_3_tensor.dtype == tf.int32
    np.testing.assert_array_equal(rank_3_tensor.numpy(), np.arange(30).reshape(3, 2, 5))


def test_to_numpy_with_np_array_and_numpy_method():
    rank_2_tensor = _rank_2_tensor()
    expected = np.array([[1., 2.], [3., 4.], [5., 6.]], dtype=np.float16)
    a = np.array(rank_2_tensor)
    b = rank_2_tensor.numpy()
    for arr in (a, b):
        assert isinstance(arr, np.ndarray) and arr.dtype == np.float16
        np.testing.assert_array_equal(arr, expected)


def test_basic_math_functions_and_operators():
    a = tf.constant([[1, 2],
                     [3, 4]])
    b = tf.constant([[1, 1],
                     [1, 1]])  # Could have also said `tf.ones([2,2], dtype=tf.int32)`
    added, multiplied, matmul = [[2, 3], [4, 5]], [[1, 2], [3, 4]], [[3, 3], [7, 7]]
    for got, want in ((tf.add(a, b), added), (tf.multiply(a, b), multiplied),
                      (tf.matmul(a, b), matmul),
                      (a + b, added), (a * b, multiplied), (a @ b, matmul)):
        assert got.dtype == tf.int32 and got.shape == (2, 2)
        np.testing.assert_array_equal(got.numpy(), want)
    np.testing.assert_array_equal(tf.ones([2, 2], dtype=tf.int32).numpy(), b.numpy())


def test_reduce_max_argmax_softmax():
    c = tf.constant([[4.0, 5.0], [10.0, 1.0]])
    largest = tf.reduce_max(c)
    assert largest.dtype == tf.float32 and largest.shape == () and largest.numpy() == 10.0
    idx = tf.math.argmax(c)
    assert idx.dtype == tf.int64  # TF's default output_type
    np.testing.assert_array_equal(idx.numpy(), [1, 0])
    soft = tf.nn.softmax(c)
    # the guide's printed values
    np.testing.assert_allclose(soft.numpy(), [[2.6894143e-01, 7.3105860e-01],
                                              [9.9987662e-01, 1.2339458e-04]], rtol=1e-6)


def test_ops_convert_python_lists_and_numpy_arrays():
    t = tf.convert_to_tensor([1, 2, 3])
    assert t.dtype == tf.int32
    np.testing.assert_array_equal(t.numpy(), [1, 2, 3])
    m = tf.reduce_max([1, 2, 3])
    assert m.dtype == tf.int32 and m.numpy() == 3
    # a numpy int64 array keeps its dtype
    m = tf.reduce_max(np.array([1, 2, 3]))
    assert m.dtype == tf.int64 and m.numpy() == 3
    f = tf.convert_to_tensor([1.0, 2.0])
    assert f.dtype == tf.float32
    f64 = tf.convert_to_tensor(np.array([1.0, 2.0]))
    assert f64.dtype == tf.float64
    nested = tf.convert_to_tensor([[1, 2], [3, 4]])
    assert nested.shape == (2, 2) and nested.dtype == tf.int32
    mixed = tf.convert_to_tensor([1, 2.5])  # ints and floats: float32
    assert mixed.dtype == tf.float32
    np.testing.assert_array_equal(mixed.numpy(), [1.0, 2.5])
    as_f16 = tf.convert_to_tensor([1, 2], dtype=tf.float16)
    assert as_f16.dtype == tf.float16
    b = tf.convert_to_tensor([True, False])
    assert b.dtype == tf.bool


def test_shapes_of_a_rank_4_tensor():
    rank_4_tensor = tf.zeros([3, 2, 4, 5])
    assert rank_4_tensor.dtype == tf.float32
    assert rank_4_tensor.ndim == 4
    assert rank_4_tensor.shape == (3, 2, 4, 5)
    assert rank_4_tensor.shape[0] == 3
    assert rank_4_tensor.shape[-1] == 5
    assert rank_4_tensor.shape.as_list() == [3, 2, 4, 5]
    assert len(rank_4_tensor.shape) == 4
    assert tf.size(rank_4_tensor).numpy() == 120
    assert tf.size(rank_4_tensor).dtype == tf.int32

    rank = tf.rank(rank_4_tensor)
    assert isinstance(rank, tf.Tensor)
    assert rank.dtype == tf.int32 and rank.shape == () and rank.numpy() == 4
    shape = tf.shape(rank_4_tensor)
    assert isinstance(shape, tf.Tensor)
    assert shape.dtype == tf.int32 and shape.shape == (4,)
    np.testing.assert_array_equal(shape.numpy(), [3, 2, 4, 5])


def test_single_axis_indexing():
    rank_1_tensor = tf.constant([0, 1, 1, 2, 3, 5, 8, 13, 21, 34])
    fib = np.array([0, 1, 1, 2, 3, 5, 8, 13, 21, 34])
    assert rank_1_tensor[0].numpy() == 0
    assert rank_1_tensor[1].numpy() == 1
    assert rank_1_tensor[-1].numpy() == 34
    assert rank_1_tensor[0].shape == ()  # a scalar index removes the axis
    for key in (slice(None), slice(None, 4), slice(4, None), slice(2, -3),
                slice(None, None, 2), slice(None, None, -1)):
        got = rank_1_tensor[key]
        assert got.dtype == tf.int32
        np.testing.assert_array_equal(got.numpy(), fib[key])
    np.testing.assert_array_equal(rank_1_tensor[:].numpy(), fib)
    np.testing.assert_array_equal(rank_1_tensor[:4].numpy(), [0, 1, 1, 2])
    np.testing.assert_array_equal(rank_1_tensor[4:].numpy(), [3, 5, 8, 13, 21, 34])
    np.testing.assert_array_equal(rank_1_tensor[2:-3].numpy(), [1, 2, 3, 5, 8])
    np.testing.assert_array_equal(rank_1_tensor[::2].numpy(), [0, 1, 3, 8, 21])
    np.testing.assert_array_equal(rank_1_tensor[::-1].numpy(),
                                  [34, 21, 13, 8, 5, 3, 2, 1, 1, 0])


def test_multi_axis_indexing():
    rank_2_tensor = _rank_2_tensor()
    assert rank_2_tensor[1, 1].numpy() == 4.0
    assert rank_2_tensor[1, 1].dtype == tf.float16
    np.testing.assert_array_equal(rank_2_tensor[1, :].numpy(), [3., 4.])   # second row
    np.testing.assert_array_equal(rank_2_tensor[:, 1].numpy(), [2., 4., 6.])  # second column
    np.testing.assert_array_equal(rank_2_tensor[-1, :].numpy(), [5., 6.])  # last row
    np.testing.assert_array_equal(rank_2_tensor[0, -1].numpy(), 2.)  # first item in last column
    np.testing.assert_array_equal(rank_2_tensor[1:, :].numpy(), [[3., 4.], [5., 6.]])

    rank_3_tensor = _rank_3_tensor()
    got = rank_3_tensor[:, :, 4]
    assert got.shape == (3, 2)
    np.testing.assert_array_equal(got.numpy(), [[4, 9], [14, 19], [24, 29]])


def test_ellipsis_newaxis_and_strides_on_several_axes():
    rank_3_tensor = _rank_3_tensor()
    ref = np.arange(30).reshape(3, 2, 5)
    for key in ((Ellipsis, 4), (Ellipsis, slice(None, None, -1)),
                (0, Ellipsis), (slice(None), tf.newaxis, 1),
                (tf.newaxis, Ellipsis), (Ellipsis, tf.newaxis),
                (slice(None, None, 2), slice(None), slice(1, None, 2)),
                (slice(None, None, -1), -1, slice(None, 2)),
                (1, slice(None), tf.newaxis, slice(None, None, -2))):
        got = rank_3_tensor[key]
        assert got.shape == ref[key].shape, key
        np.testing.assert_array_equal(got.numpy(), ref[key])
    assert tf.newaxis is None


def test_tensors_are_immutable():
    t = tf.constant([1, 2, 3])
    with pytest.raises(TypeError):
        t[0] = 5
    np.testing.assert_array_equal(t.numpy(), [1, 2, 3])


def test_reshape():
    x = tf.constant([[1], [2], [3]])
    assert x.shape.as_list() == [3, 1]
    reshaped = tf.reshape(x, [1, 3])
    assert x.shape == (3, 1) and reshaped.shape == (1, 3)
    np.testing.assert_array_equal(reshaped.numpy(), [[1, 2, 3]])

    rank_3_tensor = _rank_3_tensor()
    flat = tf.reshape(rank_3_tensor, [-1])  # memory order is kept
    np.testing.assert_array_equal(flat.numpy(), np.arange(30))
    merged = tf.reshape(rank_3_tensor, [3 * 2, 5])
    np.testing.assert_array_equal(merged.numpy(), np.arange(30).reshape(6, 5))
    inferred = tf.reshape(rank_3_tensor, [3, -1])
    assert inferred.shape == (3, 10)
    np.testing.assert_array_equal(inferred.numpy(), np.arange(30).reshape(3, 10))


def test_reshape_does_not_transpose():
    rank_3_tensor = _rank_3_tensor()
    # "Bad examples": reshape cannot reorder axes; it keeps memory order.
    swapped = tf.reshape(rank_3_tensor, [2, 3, 5])
    np.testing.assert_array_equal(swapped.numpy(), np.arange(30).reshape(2, 3, 5))
    transposed = tf.transpose(rank_3_tensor, [1, 0, 2])
    assert transposed.shape == swapped.shape
    np.testing.assert_array_equal(transposed.numpy(),
                                  np.arange(30).reshape(3, 2, 5).transpose(1, 0, 2))
    assert not np.array_equal(transposed.numpy(), swapped.numpy())
    five_six = tf.reshape(rank_3_tensor, [5, 6])
    np.testing.assert_array_equal(five_six.numpy(), np.arange(30).reshape(5, 6))
    # 30 elements cannot fill rows of 7
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.reshape(rank_3_tensor, [7, -1])


def test_dtypes_and_cast():
    the_f64_tensor = tf.constant([2.2, 3.3, 4.4], dtype=tf.float64)
    the_f16_tensor = tf.cast(the_f64_tensor, dtype=tf.float16)
    assert the_f16_tensor.dtype == tf.float16
    np.testing.assert_array_equal(the_f16_tensor.numpy(),
                                  np.array([2.2, 3.3, 4.4], np.float16))
    # Now, cast to an uint8 and lose the decimal precision
    the_u8_tensor = tf.cast(the_f16_tensor, dtype=tf.uint8)
    assert the_u8_tensor.dtype == tf.uint8
    assert the_u8_tensor.numpy().dtype == np.uint8
    np.testing.assert_array_equal(the_u8_tensor.numpy(), [2, 3, 4])
    assert tf.float16.name == "float16" and tf.uint8.name == "uint8"


def test_broadcasting():
    x = tf.constant([1, 2, 3])
    y = tf.constant(2)
    z = tf.constant([2, 2, 2])
    # All of these are the same computation.
    for got in (tf.multiply(x, 2), x * y, x * z):
        assert got.dtype == tf.int32
        np.testing.assert_array_equal(got.numpy(), [2, 4, 6])

    # These are the same computations
    x = tf.reshape(x, [3, 1])
    y = tf.range(1, 5)
    assert x.shape == (3, 1) and y.shape == (4,) and y.dtype == tf.int32
    expected = [[1, 2, 3, 4], [2, 4, 6, 8], [3, 6, 9, 12]]
    np.testing.assert_array_equal(tf.multiply(x, y).numpy(), expected)
    np.testing.assert_array_equal((x * tf.reshape(y, [1, 4])).numpy(), expected)

    x_stretch = tf.constant([[1, 1, 1, 1],
                             [2, 2, 2, 2],
                             [3, 3, 3, 3]])
    y_stretch = tf.constant([[1, 2, 3, 4],
                             [1, 2, 3, 4],
                             [1, 2, 3, 4]])
    np.testing.assert_array_equal((x_stretch * y_stretch).numpy(), expected)

    b = tf.broadcast_to(tf.constant([1, 2, 3]), [3, 3])
    assert b.shape == (3, 3) and b.dtype == tf.int32
    np.testing.assert_array_equal(b.numpy(), [[1, 2, 3], [1, 2, 3], [1, 2, 3]])


def test_incompatible_broadcast_raises():
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.constant([1, 2, 3]) + tf.constant([1, 2])
    with pytest.raises((tf.errors.InvalidArgumentError, ValueError)):
        tf.broadcast_to(tf.constant([1, 2, 3]), [3, 2])


def test_mixed_dtype_ops_raise():
    # TF does not promote: an int32 and a float32 tensor cannot be added.
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.add(tf.constant([1, 2]), tf.constant([1.0, 2.0]))


def test_printed_forms(capsys):
    print(tf.constant(4))
    print(tf.constant([2.0, 3.0, 4.0]))
    print(_rank_2_tensor())
    print(tf.math.argmax(tf.constant([[4.0, 5.0], [10.0, 1.0]])))
    rank_4_tensor = tf.zeros([3, 2, 4, 5])
    print("Type of every element:", rank_4_tensor.dtype)
    print("Number of axes:", rank_4_tensor.ndim)
    print("Shape of tensor:", rank_4_tensor.shape)
    assert capsys.readouterr().out.splitlines() == [
        "tf.Tensor(4, shape=(), dtype=int32)",
        "tf.Tensor([2. 3. 4.], shape=(3,), dtype=float32)",
        "tf.Tensor(",
        "[[1. 2.]",
        " [3. 4.]",
        " [5. 6.]], shape=(3, 2), dtype=float16)",
        "tf.Tensor([1 0], shape=(2,), dtype=int64)",
        "Type of every element: <dtype: 'float32'>",
        "Number of axes: 4",
        "Shape of tensor: (3, 2, 4, 5)",
    ]
    assert repr(tf.constant([2.0, 3.0, 4.0])) == (
        "<tf.Tensor: shape=(3,), dtype=float32, numpy=array([2., 3., 4.], dtype=float32)>")
