"""Cases of TensorFlow's ``tensorflow/python/eager/backprop_test.py``, JacobianTest and
BatchJacobianTest, with pfor on and off. The other cases and what was left out are in
``test_tf_backprop_test.py``.
"""
import numpy as np
import pytest

import minitf as tf


# --- JacobianTest --------------------------------------------------------------------------------

@pytest.mark.parametrize("use_pfor", [True, False])
@pytest.mark.parametrize("in_function", [False, True])
def test_jacobian(use_pfor, in_function):
    def compute():
        with tf.GradientTape(persistent=not use_pfor) as g:
            x = tf.constant([1., 2.])
            y = tf.constant([3., 4.])
            g.watch(x)
            g.watch(y)
            z = x * x * y
        jacobian = g.jacobian(z, [x, y], experimental_use_pfor=use_pfor)
        return jacobian, [tf.linalg.diag(2 * x * y), tf.linalg.diag(x * x)]

    (jx, jy), answer = (tf.function(compute) if in_function else compute)()
    np.testing.assert_array_equal(jx.numpy(), answer[0].numpy())
    np.testing.assert_array_equal(jy.numpy(), answer[1].numpy())
    np.testing.assert_array_equal(jx.numpy(), np.diag([6., 16.]))
    np.testing.assert_array_equal(jy.numpy(), np.diag([1., 4.]))


def test_jacobian_needs_a_persistent_tape_twice():
    with tf.GradientTape() as g:
        x = tf.constant([1.0, 2.0])
        g.watch(x)
        y = x * x
    g.jacobian(y, x, experimental_use_pfor=False)
    with pytest.raises(RuntimeError, match="persistent"):
        g.jacobian(y, x, experimental_use_pfor=False)


def test_jacobian_parallel_iterations():
    with tf.GradientTape(persistent=True) as g:
        x = tf.constant([[1., 2], [3, 4]])
        g.watch(x)
        y = tf.matmul(x, x)
    np.testing.assert_allclose(g.jacobian(y, x, parallel_iterations=2).numpy(),
                               g.jacobian(y, x, parallel_iterations=3).numpy())


def test_nested_jacobian():
    x = tf.ones((10, 2))
    with tf.GradientTape(persistent=False) as g:
        g.watch(x)
        with tf.GradientTape(persistent=False) as gg:
            gg.watch(x)
            y = tf.reduce_sum(tf.square(x))
        dy_x = gg.jacobian(y, x)
    dy_xx = g.batch_jacobian(dy_x, x)
    np.testing.assert_allclose(dy_xx.numpy(), [[[2., 0], [0, 2.]]] * 10)


def test_jacobian_of_gather():
    with tf.GradientTape(persistent=True) as g:
        inp = tf.random.uniform([3, 2])
        g.watch(inp)
        output = tf.nn.embedding_lookup(inp, [0, 2])
    expected = np.zeros((2, 2, 3, 2), np.float32)
    for r, src in enumerate([0, 2]):
        for c in range(2):
            expected[r, c, src, c] = 1.0
    np.testing.assert_array_equal(g.jacobian(output, inp, experimental_use_pfor=True).numpy(),
                                  expected)
    np.testing.assert_array_equal(g.jacobian(output, inp, experimental_use_pfor=False).numpy(),
                                  expected)


@pytest.mark.parametrize("use_pfor", [True, False])
def test_jacobian_repeatedly_on_a_persistent_tape(use_pfor):
    with tf.GradientTape(persistent=True) as g:
        x = tf.constant([[1., 2.], [3., 4.]])
        g.watch(x)
        y = tf.sin(x) * x
    expected = np.zeros((2, 2, 2, 2))
    xv = x.numpy().astype(np.float64)
    for i in np.ndindex(2, 2):
        expected[i + i] = np.cos(xv[i]) * xv[i] + np.sin(xv[i])
    for _ in range(3):
        np.testing.assert_allclose(g.jacobian(y, x, experimental_use_pfor=use_pfor).numpy(),
                                   expected, rtol=1e-6)
        np.testing.assert_allclose(
            g.batch_jacobian(y, x, experimental_use_pfor=use_pfor).numpy(),
            np.stack([expected[0, :, 0, :], expected[1, :, 1, :]]), rtol=1e-6)


@pytest.mark.parametrize("use_pfor", [True, False])
@pytest.mark.parametrize("shape", [(0, 3), (2, 0)])
def test_zero_size_gradients_and_jacobians(shape, use_pfor):
    x = tf.zeros(shape)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        flat = tf.reshape(x, [-1]) * 2.0
        y = x ** 2
    assert flat.shape == (0,)
    g = tape.gradient(flat, x)
    assert g.shape == shape
    assert tape.jacobian(flat, x, experimental_use_pfor=use_pfor).shape == (0,) + shape
    assert tape.jacobian(y, x, experimental_use_pfor=use_pfor).shape == shape + shape
    assert tape.batch_jacobian(y, x, experimental_use_pfor=use_pfor).shape == (
        shape[0], shape[1], shape[1])


@pytest.mark.parametrize("use_pfor", [True, False])
@pytest.mark.parametrize("use_function", [True, False])
def test_jacobian_degenerate_shape(use_function, use_pfor):
    def f(x):
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = x ** 2
        return tape.jacobian(y, x, experimental_use_pfor=use_pfor)

    if use_function:
        f = tf.function(f)
    np.testing.assert_array_equal(tf.shape(f(tf.zeros([0]))).numpy(), [0, 0])


# --- BatchJacobianTest ---------------------------------------------------------------------------

@pytest.mark.parametrize("use_pfor", [True, False])
@pytest.mark.parametrize("in_function", [False, True])
def test_batch_jacobian(use_pfor, in_function):
    def compute():
        with tf.GradientTape(persistent=not use_pfor) as g:
            x = tf.constant([[1., 2.], [3., 4.]])
            y = tf.constant([[3., 4.], [5., 6.]])
            g.watch(x)
            z = x * x * y
        return g.batch_jacobian(z, x, experimental_use_pfor=use_pfor)

    result = (tf.function(compute) if in_function else compute)()
    np.testing.assert_array_equal(result.numpy(),
                                  np.stack([np.diag([6., 16.]), np.diag([30., 48.])]))


def test_batch_jacobian_needs_a_persistent_tape_twice():
    with tf.GradientTape() as g:
        x = tf.constant([[1.0, 2.0]])
        g.watch(x)
        y = x * x
    g.batch_jacobian(y, x, experimental_use_pfor=False)
    with pytest.raises(RuntimeError, match="persistent"):
        g.batch_jacobian(y, x, experimental_use_pfor=False)


def test_batch_jacobian_bad_shape():
    x = tf.random.uniform([2, 3])
    with tf.GradientTape() as g:
        y = tf.concat([x, x], axis=0)
    with pytest.raises(ValueError, match="Need first dimension"):
        g.batch_jacobian(y, x)


def test_batch_jacobian_bad_input_rank():
    x = tf.random.uniform([2])
    with tf.GradientTape() as g:
        y = tf.random.uniform([2, 2])
    with pytest.raises(ValueError, match="must have rank at least 2"):
        g.batch_jacobian(y, x)


def test_batch_jacobian_bad_output_rank():
    x = tf.random.uniform([2, 2])
    with tf.GradientTape() as g:
        y = tf.random.uniform([2])
    with pytest.raises(ValueError, match="must have rank at least 2"):
        g.batch_jacobian(y, x)


def test_batch_jacobian_parallel_iterations():
    with tf.GradientTape(persistent=True) as g:
        x = tf.constant([[1., 2], [3, 4]])
        g.watch(x)
        w = tf.constant([[1., 2, 3, 4], [5, 6, 7, 8]])
        y = tf.matmul(x, w)
    a = g.batch_jacobian(y, x, parallel_iterations=2).numpy()
    np.testing.assert_allclose(a, g.batch_jacobian(y, x, parallel_iterations=3).numpy())
    np.testing.assert_allclose(a, np.stack([w.numpy().T] * 2))


@pytest.mark.parametrize("use_pfor", [True, False])
@pytest.mark.parametrize("use_function", [True, False])
def test_batch_jacobian_degenerate_shape(use_function, use_pfor):
    def f(x):
        with tf.GradientTape(persistent=True) as tape:
            tape.watch(x)
            y = x ** 2
        return tape.batch_jacobian(y, x, experimental_use_pfor=use_pfor)

    if use_function:
        f = tf.function(f)
    np.testing.assert_array_equal(tf.shape(f(tf.zeros([1, 0]))).numpy(), [1, 0, 0])


def test_batch_jacobian_of_repeat_then_slice_by_a_tensor_bound():
    x = tf.ones([2, 4, 2])
    length = tf.constant([2, 3, 4, 4], dtype=tf.int64)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.repeat(x, [2], axis=1)
        y = y[:, :tf.reduce_max(length), :]
    jb = tape.batch_jacobian(y, x).numpy()
    assert jb.shape == (2, 4, 2, 4, 2)
    expected = np.zeros((4, 2, 4, 2))
    for out_row in range(4):  # output row r of the repeat is input row r // 2
        for c in range(2):
            expected[out_row, c, out_row // 2, c] = 1.0
    np.testing.assert_array_equal(jb, np.stack([expected, expected]))
