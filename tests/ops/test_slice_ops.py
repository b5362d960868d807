"""slice, strided_slice, reverse, roll, cumprod, searchsorted and sequence_mask: values against
numpy and TF's documented examples, gradients (cumprod's also with zeros), traced functions and
errors."""
import numpy as np
import pytest

import minitf as tf
from minitf.testing import check_grads

rng = np.random.default_rng(11)

# The 3x2x3 tensor of TF's slice/strided_slice documentation.
T = np.array([[[1, 1, 1], [2, 2, 2]], [[3, 3, 3], [4, 4, 4]], [[5, 5, 5], [6, 6, 6]]])


# --- slice -----------------------------------------------------------------------------------

def test_slice_tf_doc_examples():
    np.testing.assert_array_equal(tf.slice(T, [1, 0, 0], [1, 1, 3]).numpy(), [[[3, 3, 3]]])
    np.testing.assert_array_equal(tf.slice(T, [1, 0, 0], [1, 2, 3]).numpy(),
                                  [[[3, 3, 3], [4, 4, 4]]])
    np.testing.assert_array_equal(tf.slice(T, [1, 0, 0], [2, 1, 3]).numpy(),
                                  [[[3, 3, 3]], [[5, 5, 5]]])


@pytest.mark.parametrize("dtype", ["float32", "int64"])
def test_slice_with_minus_one_and_tensor_arguments(dtype):
    x = rng.integers(-9, 9, (4, 5, 3)).astype(dtype)
    out = tf.slice(x, tf.constant([1, 2, 0]), tf.constant([-1, 2, -1]))
    np.testing.assert_array_equal(out.numpy(), x[1:, 2:4, :])
    assert out.dtype.name == dtype


def test_slice_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"size\[1\] in \[0, 1\].*got 2"):
        tf.slice(T, [0, 1, 0], [1, 2, 3])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"begin\[0\] in \[0, 3\].*got -1"):
        tf.slice(T, [-1, 0, 0], [1, 1, 1])
    with pytest.raises(tf.errors.InvalidArgumentError, match="one entry per dimension"):
        tf.slice(T, [0, 0], [1, 1])


# --- strided_slice ---------------------------------------------------------------------------

def test_strided_slice_tf_doc_examples():
    np.testing.assert_array_equal(tf.strided_slice(T, [1, 0, 0], [2, 1, 3], [1, 1, 1]).numpy(),
                                  [[[3, 3, 3]]])
    np.testing.assert_array_equal(tf.strided_slice(T, [1, 0, 0], [2, 2, 3], [1, 1, 1]).numpy(),
                                  [[[3, 3, 3], [4, 4, 4]]])
    np.testing.assert_array_equal(
        tf.strided_slice(T, [1, -1, 0], [2, -3, 3], [1, -1, 1]).numpy(),
        [[[4, 4, 4], [3, 3, 3]]])


@pytest.mark.parametrize("args,expected", [
    # (begin, end, strides, begin_mask, end_mask, ellipsis_mask, new_axis_mask, shrink_axis_mask)
    (([0, 1], [0, 3], [1, 1], 1, 1, 0, 0, 0), lambda x: x[:, 1:3]),
    (([2, 0], [0, 0], [-1, 2], 0, 3, 0, 0, 0), lambda x: x[2::-1, ::2]),
    (([0, 1], [0, 2], [1, 1], 0, 0, 1, 0, 0), lambda x: x[..., 1:2]),
    (([0, 0, 1], [0, 0, 2], [1, 1, 1], 0, 0, 0, 2, 4), lambda x: x[0:0, None, 1]),
    (([1, 0], [2, 0], [1, 1], 0, 2, 0, 0, 1), lambda x: x[1, :]),
    (([0, -1], [0, 0], [1, 1], 0, 0, 1, 0, 2), lambda x: x[..., -1]),
    (([0, 0, 5], [0, 0, -9], [1, 1, -2], 0, 0, 1, 2, 0), lambda x: x[..., None, 5:-9:-2]),
])
def test_strided_slice_masks_match_python_indexing(args, expected):
    x = rng.uniform(-1, 1, (4, 3, 6))
    out = tf.strided_slice(x, *args)
    np.testing.assert_array_equal(out.numpy(), expected(x))


def test_strided_slice_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"strides\[0\] must be non-zero"):
        tf.strided_slice(T, [0], [2], [0])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="slice index 3 of dimension 0 out of bounds"):
        tf.strided_slice(T, [3], [4], shrink_axis_mask=1)
    with pytest.raises(tf.errors.InvalidArgumentError, match="same length"):
        tf.strided_slice(T, [0, 0], [1], [1])


def test_slicing_gradients():
    x = rng.uniform(-1, 1, (4, 3, 5))
    check_grads(lambda v: tf.slice(v, [1, 0, 2], [2, -1, 3]) ** 2, [x])
    check_grads(lambda v: tf.strided_slice(v, [3, 0, 4], [0, 3, 0], [-2, 1, -3],
                                           new_axis_mask=0, shrink_axis_mask=2), [x])
    check_grads(lambda v: tf.reverse(v, [0, -1]) * v, [x])
    w = tf.Variable(x)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.slice(w, [1, 1, 1], [1, 1, 2]))
    expected = np.zeros_like(x)
    expected[1, 1, 1:3] = 1
    np.testing.assert_array_equal(tape.gradient(loss, w).numpy(), expected)


# --- reverse and roll ------------------------------------------------------------------------

@pytest.mark.parametrize("axis", [[0], [1], [-1], [0, 2], [], 1])
def test_reverse_matches_numpy(axis):
    x = rng.integers(0, 9, (2, 3, 4)).astype("int32")
    axes = [axis] if isinstance(axis, int) else axis
    np.testing.assert_array_equal(tf.reverse(x, axis).numpy(), np.flip(x, axes) if axes else x)


def test_reverse_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match="more than once"):
        tf.reverse(T, [0, -3])
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"axis\[0\] = 3 is out of"):
        tf.reverse(T, [3])


def test_roll_tf_doc_examples():
    np.testing.assert_array_equal(tf.roll([0, 1, 2, 3, 4], shift=2, axis=0).numpy(),
                                  [3, 4, 0, 1, 2])
    t = [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]
    np.testing.assert_array_equal(tf.roll(t, shift=[1, -2], axis=[0, 1]).numpy(),
                                  [[7, 8, 9, 5, 6], [2, 3, 4, 0, 1]])
    np.testing.assert_array_equal(tf.roll(t, shift=[2, -3], axis=[1, 1]).numpy(),
                                  [[1, 2, 3, 4, 0], [6, 7, 8, 9, 5]])


def test_roll_gradient_and_errors():
    x = tf.Variable(np.arange(6.0).reshape(2, 3))
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.roll(x, 1, 1) * tf.constant([[1.0, 2, 3], [4, 5, 6]],
                                                             dtype=tf.float64))
    # out[i, j] = x[i, j - 1]: x[i, j] is weighted by w[i, j + 1].
    np.testing.assert_array_equal(tape.gradient(loss, x).numpy(), [[2, 3, 1], [5, 6, 4]])
    with pytest.raises(tf.errors.InvalidArgumentError, match="same number of entries"):
        tf.roll(T, [1, 2], [0])


# --- cumprod ---------------------------------------------------------------------------------

def _np_cumprod(x, axis, exclusive, reverse):
    if reverse:
        x = np.flip(x, axis)
    out = np.cumprod(x, axis=axis)
    if exclusive:
        out = np.concatenate([np.ones_like(np.take(out, [0], axis=axis)),
                              np.take(out, np.arange(x.shape[axis] - 1), axis=axis)], axis=axis)
    return np.flip(out, axis) if reverse else out


def test_cumprod_tf_doc_examples():
    a, b, c = 2.0, 3.0, 5.0
    x = [a, b, c]
    np.testing.assert_allclose(tf.math.cumprod(x).numpy(), [a, a * b, a * b * c])
    np.testing.assert_allclose(tf.math.cumprod(x, exclusive=True).numpy(), [1, a, a * b])
    np.testing.assert_allclose(tf.math.cumprod(x, reverse=True).numpy(), [a * b * c, b * c, c])
    np.testing.assert_allclose(tf.math.cumprod(x, exclusive=True, reverse=True).numpy(),
                               [b * c, c, 1])


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("exclusive,reverse", [(False, False), (True, False), (False, True),
                                               (True, True)])
def test_cumprod_matches_numpy(dtype, axis, exclusive, reverse):
    x = rng.integers(-3, 4, (3, 4, 2)).astype(dtype)
    out = tf.math.cumprod(x, axis=axis, exclusive=exclusive, reverse=reverse)
    assert out.dtype.name == dtype
    np.testing.assert_array_equal(out.numpy(), _np_cumprod(x, axis, exclusive, reverse))


def test_cumprod_gradient_with_a_zero_in_closed_form():
    # sum(cumprod([a, b, c])) = a + ab + abc: the gradient is (1 + b + bc, a + ac, ab).
    x = tf.Variable([2.0, 0.0, 3.0])
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.math.cumprod(x))
    np.testing.assert_array_equal(tape.gradient(loss, x).numpy(), [1.0, 8.0, 0.0])


def _with_zeros(pattern):
    x = rng.uniform(0.5, 1.5, (3, 5)) * rng.choice([-1, 1], (3, 5))
    for i, j in pattern:
        x[i, j] = 0.0
    return x


@pytest.mark.parametrize("pattern", [[(0, 2)], [(1, 0), (1, 3)], [(2, 4), (0, 0), (0, 1)]])
@pytest.mark.parametrize("exclusive,reverse", [(False, False), (True, False), (False, True),
                                               (True, True)])
def test_cumprod_gradients_are_exact_with_zeros(pattern, exclusive, reverse):
    # Finite differences are exact for this polynomial: the first-order check (reverse mode,
    # forward mode, jacobians) holds at zeros too.
    check_grads(lambda v: tf.math.cumprod(v, axis=1, exclusive=exclusive, reverse=reverse),
                [_with_zeros(pattern)], order=1)


# --- searchsorted ----------------------------------------------------------------------------

def test_searchsorted_tf_doc_example():
    seq = [[0, 3, 9, 9, 10], [1, 2, 3, 4, 5]]
    values = [[2, 4, 9], [0, 2, 6]]
    np.testing.assert_array_equal(tf.searchsorted(seq, values).numpy(), [[1, 2, 2], [0, 1, 5]])
    right = tf.searchsorted(seq, values, side="right", out_type=tf.int64)
    assert right.dtype == tf.int64
    np.testing.assert_array_equal(right.numpy(), [[1, 2, 4], [0, 2, 5]])


@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("shape", [(7,), (3, 6), (2, 2, 5)])
def test_searchsorted_matches_numpy(side, shape):
    seq = np.sort(rng.integers(0, 6, shape), axis=-1).astype("float32")
    values = rng.integers(-1, 8, shape[:-1] + (4,)).astype("float32")
    out = tf.searchsorted(seq, values, side=side).numpy()
    rows = [np.searchsorted(s, v, side=side) for s, v in zip(seq.reshape(-1, shape[-1]),
                                                               values.reshape(-1, 4))]
    np.testing.assert_array_equal(out, np.array(rows).reshape(values.shape))


def test_searchsorted_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match="leading dimensions"):
        tf.searchsorted([[1, 2], [3, 4]], [[1, 2, 3]])
    with pytest.raises(ValueError, match="side must be"):
        tf.searchsorted([1, 2], [1], side="middle")


# --- sequence_mask ---------------------------------------------------------------------------

def test_sequence_mask_tf_doc_examples():
    np.testing.assert_array_equal(tf.sequence_mask([1, 3, 2], 5).numpy(),
                                  [[1, 0, 0, 0, 0], [1, 1, 1, 0, 0], [1, 1, 0, 0, 0]])
    out = tf.sequence_mask([[1, 3], [2, 0]])
    assert out.dtype == tf.bool and out.shape == (2, 2, 3)
    np.testing.assert_array_equal(out.numpy(), [[[1, 0, 0], [1, 1, 1]], [[1, 1, 0], [0, 0, 0]]])
    floats = tf.sequence_mask(tf.constant([2, 0]), maxlen=tf.constant(3), dtype=tf.float32)
    assert floats.dtype == tf.float32
    np.testing.assert_array_equal(floats.numpy(), [[1, 1, 0], [0, 0, 0]])


def test_sequence_mask_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match="maxlen must be non-negative"):
        tf.sequence_mask([1, 2], -1)
    with pytest.raises(TypeError, match="lengths must be integers"):
        tf.sequence_mask([1.5, 2.0])


# --- traced functions ------------------------------------------------------------------------

def test_ops_in_a_function_replay_on_new_values():
    @tf.function
    def f(x, lengths, seq, values):
        return (tf.math.cumprod(x, axis=1, exclusive=True), tf.roll(x, 2, 1),
                tf.strided_slice(x, [0, 3], [2, 0], [1, -2]), tf.sequence_mask(lengths),
                tf.searchsorted(seq, values))

    for lengths in ([1, 3], [4, 2]):
        x = rng.uniform(-1, 1, (2, 5))
        seq = np.sort(rng.uniform(0, 1, (2, 4)), axis=-1)
        values = rng.uniform(0, 1, (2, 3))
        c, r, s, m, i = f(tf.constant(x), tf.constant(lengths), tf.constant(seq),
                          tf.constant(values))
        np.testing.assert_allclose(c.numpy(), _np_cumprod(x, 1, True, False))
        np.testing.assert_array_equal(r.numpy(), np.roll(x, 2, 1))
        np.testing.assert_array_equal(s.numpy(), x[0:2, 3:0:-2])
        # maxlen=None: the mask is as wide as the longest length of this call.
        np.testing.assert_array_equal(m.numpy(),
                                      np.arange(max(lengths)) < np.array(lengths)[:, None])
        np.testing.assert_array_equal(i.numpy(),
                                      [np.searchsorted(a, b) for a, b in zip(seq, values)])
