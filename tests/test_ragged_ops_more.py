"""TF ops on RaggedTensors (``minitf.ragged_ops_more``): element-wise ops and operators with
ragged broadcasting, reductions, concat, tile, reverse, map_fn, embedding_lookup, and gradients
through them. Expected values are TensorFlow 2.21's for the same calls (run separately)."""
import numpy as np
import pytest

import minitf as tf
from minitf import ragged_ops_more as _ragged_ops_more


def _floats():
    return tf.ragged.constant([[1.5, -2.0], [], [3.0, 4.0, -0.5]])


def _ints():
    return tf.ragged.constant([[3, 1, 4], [], [5, 9]])


def _bools():
    return tf.ragged.constant([[True, False], [], [True]])


def _r3():
    return tf.ragged.constant([[[1, 2], [3]], [[4, 5, 6]], []])


def _d3():
    return tf.ragged.constant([[[1, 2], [3, 4]], [[5, 6]]], ragged_rank=1)


def _check(rt, dtype, values):
    assert isinstance(rt, tf.RaggedTensor)
    assert rt.dtype == dtype
    assert rt.to_list() == values


def test_operators():
    x, i, b = _floats(), _ints(), _bools()
    _check(-x, tf.float32, [[-1.5, 2.0], [], [-3.0, -4.0, 0.5]])
    _check(abs(x), tf.float32, [[1.5, 2.0], [], [3.0, 4.0, 0.5]])
    _check(x < 2.0, tf.bool, [[True, True], [], [False, False, True]])
    _check(3 - i, tf.int32, [[0, 2, -1], [], [-2, -6]])
    _check(i ** 2, tf.int32, [[9, 1, 16], [], [25, 81]])
    _check(i / 2, tf.float64, [[1.5, 0.5, 2.0], [], [2.5, 4.5]])
    _check(i // 2, tf.int32, [[1, 0, 2], [], [2, 4]])
    _check(i % 2, tf.int32, [[1, 1, 0], [], [1, 1]])
    _check(b & tf.ragged.constant([[True, True], [], [False]]), tf.bool,
           [[True, False], [], [False]])
    _check(~b, tf.bool, [[False, True], [], [False]])
    # a dense Tensor on the left reaches the ragged op through the registry's hook
    _check(tf.constant([[10], [20], [30]]) + i, tf.int32, [[13, 11, 14], [], [35, 39]])


def test_elementwise_functions():
    x, i = _floats(), _ints()
    _check(tf.cast(i, tf.float32), tf.float32, [[3.0, 1.0, 4.0], [], [5.0, 9.0]])
    _check(tf.math.sqrt(x * x), tf.float32, [[1.5, 2.0], [], [3.0, 4.0, 0.5]])
    _check(tf.maximum(x, 0.0), tf.float32, [[1.5, 0.0], [], [3.0, 4.0, 0.0]])
    _check(tf.equal(i, 1), tf.bool, [[False, True, False], [], [False, False]])
    _check(tf.zeros_like(i), tf.int32, [[0, 0, 0], [], [0, 0]])
    _check(tf.nn.relu(x), tf.float32, [[1.5, 0.0], [], [3.0, 4.0, 0.0]])
    _check(tf.nn.leaky_relu(x), tf.float32,
           [[1.5, -0.4000000059604645], [], [3.0, 4.0, -0.10000000149011612]])
    _check(tf.add_n([i, i, i]), tf.int32, [[9, 3, 12], [], [15, 27]])
    words = tf.ragged.constant([["ab", "c"], ["def"]])
    _check(tf.strings.length(words), tf.int32, [[2, 1], [3]])
    _check(tf.strings.upper(words), tf.string, [[b'AB', b'C'], [b'DEF']])
    _check(tf.strings.join([tf.ragged.constant([["a", "b"], ["c"]]), "x"], separator="-"),
           tf.string, [[b'a-x', b'b-x'], [b'c-x']])


def test_broadcasting_dense_operands():
    _check(_ints() + tf.constant([[100], [200], [300]]), tf.int32,
           [[103, 101, 104], [], [305, 309]])
    _check(_d3() * tf.constant([1, 10]), tf.int32, [[[1, 20], [3, 40]], [[5, 60]]])
    # a dense dimension may meet a ragged one whose rows all have its length
    _check(tf.ragged.constant([[1, 2], [3, 4]]) + tf.constant([[10, 20], [30, 40]]), tf.int32,
           [[11, 22], [33, 44]])


def test_broadcasting_errors():
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"add: a dense operand of shape \[2, 1\] has 2 rows where the "
                             r"RaggedTensor has 3"):
        tf.add(_ints(), tf.constant([[1], [2]]))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"multiply: RaggedTensor operands must have the same row "
                             r"partitions"):
        tf.multiply(_ints(), tf.ragged.constant([[1], [2, 3], [4, 5]]))
    with pytest.raises(ValueError, match="rank 3 does not broadcast to a RaggedTensor of "
                                         "rank 2"):
        tf.add(_ints(), tf.zeros([1, 1, 1], tf.int32))
    with pytest.raises(TypeError, match=r"substr: argument `pos` may not be a RaggedTensor"):
        tf.strings.substr(tf.ragged.constant([["ab"]]), tf.ragged.constant([[0]]), 1)


def test_reductions():
    x, i, b = _floats(), _ints(), _bools()
    assert tf.reduce_max(i, axis=1).numpy().tolist() == [4, -2147483648, 9]
    assert tf.reduce_min(x, axis=1).numpy().tolist() == [-2.0, 3.4028234663852886e+38, -0.5]
    assert tf.reduce_sum(i, axis=0).numpy().tolist() == [8, 10, 4]
    assert tf.reduce_max(i, axis=0).numpy().tolist() == [5, 9, 4]
    np.testing.assert_allclose(tf.reduce_mean(x, axis=0).numpy(), [2.25, 1.0, -0.5])
    np.testing.assert_allclose(tf.reduce_mean(x).numpy(), 1.2)
    assert int(tf.reduce_sum(i)) == 22 and int(tf.reduce_sum(i, axis=[0, 1])) == 22
    assert tf.reduce_prod(i, axis=1).numpy().tolist() == [12, 1, 45]
    assert tf.reduce_any(b, axis=1).numpy().tolist() == [True, False, True]
    assert tf.reduce_all(b, axis=1).numpy().tolist() == [False, True, True]
    np.testing.assert_allclose(tf.reduce_mean(x, axis=1).numpy(), [-0.25, np.nan, 2.1666667],
                               rtol=1e-6)
    _check(tf.reduce_sum(_r3(), axis=2), tf.int32, [[3, 3], [15], []])
    _check(tf.reduce_sum(_r3(), axis=-1), tf.int32, [[3, 3], [15], []])
    _check(tf.reduce_sum(_d3(), axis=2), tf.int32, [[3, 7], [11]])
    assert tf.reduce_sum(_d3(), axis=1).numpy().tolist() == [[4, 6], [5, 6]]


def test_reduction_errors():
    with pytest.raises(ValueError, match="reduce_sum: keepdims=True is not supported"):
        tf.reduce_sum(_ints(), axis=1, keepdims=True)
    with pytest.raises(ValueError, match="reduce_sum: axis 2 is out of range for a "
                                         "RaggedTensor of rank 2"):
        tf.reduce_sum(_ints(), axis=2)
    with pytest.raises(ValueError, match="reducing axis 1 of a RaggedTensor with ragged_rank "
                                         "2 is not supported"):
        tf.reduce_sum(_r3(), axis=1)


def test_reverse_tile_concat_stack():
    i, r3, d3 = _ints(), _r3(), _d3()
    _check(tf.reverse(i, [0]), tf.int32, [[5, 9], [], [3, 1, 4]])
    _check(tf.reverse(i, [1]), tf.int32, [[4, 1, 3], [], [9, 5]])
    _check(tf.reverse(r3, [-1]), tf.int32, [[[2, 1], [3]], [[6, 5, 4]], []])
    _check(tf.reverse(r3, [1]), tf.int32, [[[3], [1, 2]], [[4, 5, 6]], []])
    _check(tf.reverse(d3, [2]), tf.int32, [[[2, 1], [4, 3]], [[6, 5]]])
    _check(tf.tile(i, [2, 1]), tf.int32, [[3, 1, 4], [], [5, 9], [3, 1, 4], [], [5, 9]])
    _check(tf.tile(d3, [1, 2, 2]), tf.int32,
           [[[1, 2, 1, 2], [3, 4, 3, 4], [1, 2, 1, 2], [3, 4, 3, 4]],
            [[5, 6, 5, 6], [5, 6, 5, 6]]])
    _check(tf.concat([i, i], 0), tf.int32, [[3, 1, 4], [], [5, 9], [3, 1, 4], [], [5, 9]])
    _check(tf.concat([i, tf.ragged.constant([[7], [8, 8], []])], 1), tf.int32,
           [[3, 1, 4, 7], [8, 8], [5, 9]])
    _check(tf.concat([d3, d3 * 10], 2), tf.int32,
           [[[1, 2, 10, 20], [3, 4, 30, 40]], [[5, 6, 50, 60]]])
    _check(tf.concat([r3, r3], 2), tf.int32, [[[1, 2, 1, 2], [3, 3]], [[4, 5, 6, 4, 5, 6]], []])
    _check(tf.stack([i, i], 0), tf.int32, [[[3, 1, 4], [], [5, 9]], [[3, 1, 4], [], [5, 9]]])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"concat: to concatenate along axis 1 the inputs need the same "
                             r"number of rows, got \[3, 1\]"):
        tf.concat([i, tf.ragged.constant([[1]])], 1)
    with pytest.raises(ValueError, match=r"tile: multiples must hold 2 non-negative entries"):
        tf.tile(i, [1, 2, 3])


def test_map_fn_and_embedding_lookup():
    i = _ints()
    assert tf.map_fn(tf.reduce_sum, i, fn_output_signature=tf.int32).numpy().tolist() == \
        [8, 0, 14]
    _check(tf.map_fn(lambda row: row * 2, i), tf.int32, [[6, 2, 8], [], [10, 18]])
    table = tf.reshape(tf.range(20, dtype=tf.float32), [10, 2])
    _check(tf.nn.embedding_lookup(table, i), tf.float32,
           [[[6.0, 7.0], [2.0, 3.0], [8.0, 9.0]], [], [[10.0, 11.0], [18.0, 19.0]]])


def test_gradients_reach_flat_values():
    v = tf.Variable([1.0, 2.0, 3.0, 4.0, 5.0])
    with tf.GradientTape() as tape:
        rt = tf.RaggedTensor.from_row_lengths(v, [2, 0, 3])
        y = (tf.reduce_sum(tf.reduce_mean(rt * rt, axis=1)[::2])
             + tf.reduce_sum(tf.reduce_max(tf.concat([rt, tf.reverse(rt, [1])], 1),
                                           axis=1)[::2]))
    np.testing.assert_allclose(tape.gradient(y, v).numpy(),
                               [1.0, 3.0, 2.0, 2.6666667, 4.3333335], rtol=1e-6)
    weights = tf.ragged.constant([[1., 2., 3., 4.], [], [1., 1., 1., 1., 1., 1.],
                                  [1., 1., 1., 1.], [], [0., 0., 0., 0., 0., 2.]])
    with tf.GradientTape() as tape:
        rt = tf.RaggedTensor.from_row_lengths(v, [2, 0, 3])
        y = tf.reduce_sum(tf.tile(rt, [2, 2]) * weights)
    np.testing.assert_allclose(tf.convert_to_tensor(tape.gradient(y, v)).numpy(),
                               [6.0, 8.0, 2.0, 2.0, 4.0])


def test_gradients_reach_params_and_dense_operands():
    table = tf.Variable([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    w = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as tape:
        e = tf.nn.embedding_lookup(table, tf.ragged.constant([[0, 2], [1], [2, 2, 0]]))
        y = tf.reduce_sum(tf.reduce_sum(e * w, axis=1) * tf.constant([[1.0], [10.0], [100.0]]))
    g_table, g_w = tape.gradient(y, [table, w])
    np.testing.assert_allclose(tf.convert_to_tensor(g_table).numpy(),
                               [[101.0, 202.0], [10.0, 20.0], [201.0, 402.0]])
    np.testing.assert_allclose(g_w.numpy(), [1136.0, 1448.0])
    y0 = tf.Variable([[1.0], [2.0], [3.0]])
    with tf.GradientTape() as tape:
        z = tf.reduce_sum((tf.ragged.constant([[1.0, 2.0], [], [3.0, 4.0, 5.0]]) * y0) ** 2)
    np.testing.assert_allclose(tape.gradient(z, y0).numpy(), [[10.0], [0.0], [300.0]])


def test_install_keeps_dense_calls_and_identities():
    length = tf.strings.length
    _ragged_ops_more.install(tf)   # idempotent
    assert tf.strings.length is length and length.__wrapped__.__name__ == "length"
    assert tf.compat.v1.nn.elu is tf.nn.elu and tf.nn.elu.__name__ == "elu"
    # registered ops take RaggedTensors through the registry's hook: they stay unwrapped
    assert tf.add is tf.math.add and not hasattr(tf.add, "__wrapped__")
    assert tf.strings.length(tf.constant(["abc", ""])).numpy().tolist() == [3, 0]
    assert tf.reverse(tf.constant([1, 2, 3]), [0]).numpy().tolist() == [3, 2, 1]
    assert tf.concat([[1], [2, 3]], 0).numpy().tolist() == [1, 2, 3]
    assert tf.reduce_sum(tf.constant([[1, 2], [3, 4]]), 1).numpy().tolist() == [3, 7]


def test_unsupported_ops_name_themselves():
    with pytest.raises(TypeError, match=r"reshape: RaggedTensor arguments are not supported"):
        tf.reshape(_ints(), [-1])


def test_ragged_constant_with_mixed_types():
    with pytest.raises(ValueError, match="ragged.constant: can't convert Python sequence with "
                                         "mixed types"):
        tf.ragged.constant([["one", "two"], [3, 4]])


def test_gradients_through_to_tensor_and_ragged_stack():
    v = tf.Variable([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    w = tf.constant([[1., 2., 3.], [4., 5., 6.], [7., 8., 9.], [10., 11., 12.]])
    with tf.GradientTape() as tape:
        rt = tf.RaggedTensor.from_row_lengths(v, [2, 0, 3, 1])
        dense = rt.to_tensor(default_value=-1.0, shape=[4, 3])
        y = tf.reduce_sum(dense * w)
    assert dense.numpy().tolist() == [[1.0, 2.0, -1.0], [-1.0, -1.0, -1.0], [3.0, 4.0, 5.0],
                                      [6.0, -1.0, -1.0]]
    np.testing.assert_allclose(tf.convert_to_tensor(tape.gradient(y, v)).numpy(),
                               [1.0, 2.0, 7.0, 8.0, 9.0, 10.0])
    with tf.GradientTape() as tape:
        rt = tf.RaggedTensor.from_nested_row_lengths(tf.reshape(v, [3, 2]),
                                                     [[2, 0, 1], [1, 0, 2]])
        dense = rt.to_tensor(shape=[2, 2, 1, 2])
        y = tf.reduce_sum(dense * tf.reshape(tf.range(8, dtype=tf.float32), [2, 2, 1, 2]))
    assert dense.numpy().tolist() == [[[[1.0, 2.0]], [[0.0, 0.0]]], [[[0.0, 0.0]], [[0.0, 0.0]]]]
    np.testing.assert_allclose(tf.convert_to_tensor(tape.gradient(y, v)).numpy(),
                               [0.0, 1.0, 0.0, 0.0, 0.0, 0.0])
    with tf.GradientTape() as tape:
        rt = tf.RaggedTensor.from_row_lengths(v, [2, 4])
        y = tf.reduce_sum(tf.ragged.stack([rt, rt * 2.0]).flat_values)
    np.testing.assert_allclose(tf.convert_to_tensor(tape.gradient(y, v)).numpy(), [3.0] * 6)
