"""space_to_batch_nd / batch_to_space / required_space_to_batch_paddings / reverse_sequence.

Expected values were computed with TensorFlow 2.21 and pasted here as literals.
"""
import numpy as np
import pytest

import minitf as tf
from minitf.testing import check_op


def test_space_to_batch_nd_values():
    x = np.arange(1, 1 + 2 * 4 * 6 * 3).reshape(2, 4, 6, 3).astype(np.float32)
    y = tf.space_to_batch_nd(x, [2, 3], [[1, 1], [0, 3]])
    assert tuple(y.shape) == (12, 3, 3, 3)
    first = y.numpy()[:, :, :, 0]
    assert first[0].tolist() == [[0, 0, 0], [19, 28, 0], [55, 64, 0]]
    assert first[1].tolist() == [[0, 0, 0], [91, 100, 0], [127, 136, 0]]
    assert first[6].tolist() == [[1, 10, 0], [37, 46, 0], [0, 0, 0]]
    assert first[11].tolist() == [[79, 88, 0], [115, 124, 0], [0, 0, 0]]


def test_space_to_batch_tf2_name_and_docs_example():
    # tf.space_to_batch docs: x = [[[[1], [2]], [[3], [4]]]], block 2x2 -> [[[[1]]], ...]
    x = np.arange(1, 9).reshape(1, 4, 2, 1).astype(np.float32)
    y = tf.space_to_batch(x, [2, 2], [[0, 0], [0, 0]])
    assert y.numpy().tolist() == [[[[1.0]], [[5.0]]], [[[2.0]], [[6.0]]],
                                  [[[3.0]], [[7.0]]], [[[4.0]], [[8.0]]]]


def test_space_to_batch_one_block_dim_keeps_remaining_dims():
    x = np.arange(12).reshape(2, 3, 2).astype(np.float32)
    y = tf.space_to_batch_nd(x, [2], [[1, 0]])
    assert y.numpy().tolist() == [[[0, 0], [2, 3]], [[0, 0], [8, 9]],
                                  [[0, 1], [4, 5]], [[6, 7], [10, 11]]]


def test_batch_to_space_values_and_round_trip():
    b = np.arange(1, 1 + 8 * 2 * 2).reshape(8, 2, 2, 1).astype(np.float32)
    y = tf.batch_to_space(b, [2, 2], [[0, 1], [1, 0]])
    assert y.numpy()[..., 0].tolist() == [
        [[9, 2, 10], [25, 18, 26], [11, 4, 12]], [[13, 6, 14], [29, 22, 30], [15, 8, 16]]]
    x = np.random.default_rng(0).normal(size=(3, 5, 4, 2))
    pads = [[1, 0], [2, 2]]
    back = tf.batch_to_space(tf.space_to_batch_nd(x, [2, 4], pads), [2, 4], pads)
    np.testing.assert_array_equal(back.numpy(), x)


def test_required_space_to_batch_paddings():
    paddings, crops = tf.required_space_to_batch_paddings([5, 7], [2, 3], [[1, 0], [2, 2]])
    assert paddings.numpy().tolist() == [[1, 0], [2, 3]]
    assert crops.numpy().tolist() == [[0, 0], [0, 1]]
    paddings, crops = tf.required_space_to_batch_paddings([4, 6], [2, 3])
    assert paddings.dtype == tf.int32
    assert paddings.numpy().tolist() == [[0, 0], [0, 0]]
    assert crops.numpy().tolist() == [[0, 0], [0, 0]]


def test_reverse_sequence_values():
    x = np.arange(1, 41).reshape(4, 5, 2)
    y = tf.reverse_sequence(x, [1, 3, 5, 0], seq_axis=1, batch_axis=0)
    assert y.numpy()[..., 0].tolist() == [[1, 3, 5, 7, 9], [15, 13, 11, 17, 19],
                                          [29, 27, 25, 23, 21], [31, 33, 35, 37, 39]]
    y = tf.reverse_sequence(x, tf.constant([2, 4], tf.int64), seq_axis=0, batch_axis=2)
    assert y.numpy()[..., 1].tolist() == [[32, 34, 36, 38, 40], [22, 24, 26, 28, 30],
                                          [12, 14, 16, 18, 20], [2, 4, 6, 8, 10]]


def test_gradients_are_the_adjoint_ops():
    x = tf.constant(np.random.default_rng(1).normal(size=(2, 4, 6, 1)))
    w = np.random.default_rng(2).normal(size=(12, 3, 3, 1))
    with tf.GradientTape() as tape:
        tape.watch(x)
        loss = tf.reduce_sum(tf.space_to_batch_nd(x, [2, 3], [[1, 1], [0, 3]]) * w)
    expected = tf.batch_to_space(w, [2, 3], [[1, 1], [0, 3]])
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(), expected.numpy())
    s = tf.constant(np.arange(10.0).reshape(2, 5))
    with tf.GradientTape() as tape:
        tape.watch(s)
        loss = tf.reduce_sum(tf.reverse_sequence(s, [3, 1], seq_axis=1) * np.arange(5.0))
    assert tape.gradient(loss, s).numpy().tolist() == [[2, 1, 0, 3, 4], [0, 1, 2, 3, 4]]


@pytest.mark.parametrize("op", ["space_to_batch_nd", "batch_to_space_nd", "reverse_sequence"])
def test_gradcheck(op):
    from minitf.ops.registry import OPS
    for inputs, attrs in OPS[op].samples():
        check_op(OPS[op], inputs, attrs)


def test_errors():
    x = np.zeros((1, 5, 4, 1), np.float32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="padded size 5 .* block size 2"):
        tf.space_to_batch_nd(x, [2, 2], [[0, 0], [0, 0]])
    with pytest.raises(tf.errors.InvalidArgumentError, match="block_shape .* >= 1, got \\[0"):
        tf.space_to_batch_nd(x, [0, 2], [[0, 0], [0, 0]])
    with pytest.raises(tf.errors.InvalidArgumentError, match="paddings must be a list of 2"):
        tf.space_to_batch_nd(x, [1, 2], [[0, 0]])
    with pytest.raises(tf.errors.InvalidArgumentError, match="batch size 3 .* not divisible"):
        tf.batch_to_space(np.zeros((3, 2, 2, 1)), [2, 2], [[0, 0], [0, 0]])
    with pytest.raises(tf.errors.InvalidArgumentError, match="crops \\[3, 2\\] exceed"):
        tf.batch_to_space(np.zeros((4, 2, 2, 1)), [2, 2], [[3, 2], [0, 0]])
    with pytest.raises(tf.errors.InvalidArgumentError, match="seq_lengths must be in \\[0, 5\\]"):
        tf.reverse_sequence(np.zeros((2, 5)), [6, 1], seq_axis=1)
    with pytest.raises(tf.errors.InvalidArgumentError, match="seq_lengths has 3 entries"):
        tf.reverse_sequence(np.zeros((2, 5)), [1, 1, 1], seq_axis=1)
    with pytest.raises(tf.errors.InvalidArgumentError, match="must be different axes"):
        tf.reverse_sequence(np.zeros((2, 5)), [1, 1], seq_axis=0, batch_axis=0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="input_shape \\[4\\] and "
                       "block_shape \\[2, 2\\]"):
        tf.required_space_to_batch_paddings([4], [2, 2])


def test_inside_function_replays_on_new_values():
    @tf.function
    def round_trip(x, lengths):
        moved = tf.space_to_batch_nd(x, [2], [[1, 1]])
        return tf.reverse_sequence(tf.batch_to_space(moved, [2], [[1, 1]]), lengths, seq_axis=1)

    x = tf.constant(np.arange(8.0).reshape(2, 4))
    assert round_trip(x, tf.constant([2, 3])).numpy().tolist() == [[1, 0, 2, 3], [6, 5, 4, 7]]
    assert round_trip(x * 2, tf.constant([4, 1])).numpy().tolist() == [[6, 4, 2, 0],
                                                                      [8, 10, 12, 14]]
