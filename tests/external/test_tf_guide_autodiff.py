"""The examples of the tensorflow.org guide "Introduction to gradients and automatic
differentiation" (https://www.tensorflow.org/guide/autodiff), run with ``import minitf as tf``.
Values are the ones the guide prints, or closed forms / float64 numpy.

Left out: the ``tf.image.adjust_contrast`` example (minitf has no ``tf.image``; the guide shows it
raising LookupError for an op without a gradient) and the plots.
"""
import numpy as np

import minitf as tf


def test_computing_gradients_scalar():
    x = tf.Variable(3.0)
    with tf.GradientTape() as tape:
        y = x ** 2
    dy_dx = tape.gradient(y, x)
    assert dy_dx.numpy() == 6.0


def test_gradients_of_any_tensor_and_dict_sources():
    w = tf.Variable(tf.random.normal((3, 2)), name="w")
    b = tf.Variable(tf.zeros(2, dtype=tf.float32), name="b")
    x = [[1., 2., 3.]]
    with tf.GradientTape(persistent=True) as tape:
        y = x @ w + b
        loss = tf.reduce_mean(y ** 2)
    dl_dw, dl_db = tape.gradient(loss, [w, b])
    assert w.shape == dl_dw.shape == (3, 2)
    y_np = np.array(x) @ w.numpy() + b.numpy()
    np.testing.assert_allclose(dl_db.numpy(), y_np[0], rtol=1e-5)  # d mean(y^2)/db = 2y/2
    np.testing.assert_allclose(dl_dw.numpy(), np.array(x).T @ y_np, rtol=1e-5)
    grad = tape.gradient(loss, {"w": w, "b": b})
    np.testing.assert_allclose(grad["b"].numpy(), dl_db.numpy())


def test_gradients_with_respect_to_a_model():
    layer = tf.keras.layers.Dense(2, activation="relu")
    x = tf.constant([[1., 2., 3.]])
    with tf.GradientTape() as tape:
        y = layer(x)
        loss = tf.reduce_mean(y ** 2)
    grad = tape.gradient(loss, layer.trainable_variables)
    assert [tuple(g.shape) for g in grad] == [(3, 2), (2,)]
    for var, g in zip(layer.trainable_variables, grad):
        assert var.shape == g.shape
    y_np = np.maximum(x.numpy() @ layer.kernel.numpy() + layer.bias.numpy(), 0)
    np.testing.assert_allclose(grad[1].numpy(), y_np[0], rtol=1e-5)


def test_controlling_what_the_tape_watches():
    x0 = tf.Variable(3.0, name="x0")
    x1 = tf.Variable(3.0, name="x1", trainable=False)
    x2 = tf.Variable(2.0, name="x2") + 1.0  # a Tensor, not a Variable
    x3 = tf.constant(3.0, name="x3")
    with tf.GradientTape() as tape:
        y = (x0 ** 2) + (x1 ** 2) + (x2 ** 2)
    grad = tape.gradient(y, [x0, x1, x2, x3])
    assert grad[0].numpy() == 6.0
    assert grad[1] is None and grad[2] is None and grad[3] is None
    assert [var.name for var in tape.watched_variables()] == ["x0:0"]


def test_watch_a_tensor():
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x ** 2
    assert tape.gradient(y, x).numpy() == 6.0


def test_watch_accessed_variables_false():
    x0 = tf.Variable(0.0)
    x1 = tf.Variable(10.0)
    with tf.GradientTape(watch_accessed_variables=False) as tape:
        tape.watch(x1)
        y0 = tf.math.sin(x0)
        y1 = tf.nn.softplus(x1)
        y = y0 + y1
        ys = tf.reduce_sum(y)
    grad = tape.gradient(ys, {"x0": x0, "x1": x1})
    assert grad["x0"] is None
    np.testing.assert_allclose(grad["x1"].numpy(), 1 / (1 + np.exp(-10.0)), rtol=1e-6)


def test_intermediate_results():
    x = tf.constant(3.0)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = x * x
        z = y * y
    assert tape.gradient(z, y).numpy() == 18.0


def test_persistent_tape():
    x = tf.constant([1, 3.0])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = x * x
        z = y * y
    np.testing.assert_array_equal(tape.gradient(z, x).numpy(), [4.0, 108.0])
    np.testing.assert_array_equal(tape.gradient(y, x).numpy(), [2.0, 6.0])
    del tape


def test_gradient_of_non_scalar_targets():
    x = tf.Variable(2.0)
    with tf.GradientTape(persistent=True) as tape:
        y0 = x ** 2
        y1 = 1 / x
    assert tape.gradient(y0, x).numpy() == 4.0
    assert tape.gradient(y1, x).numpy() == -0.25

    x = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        y0 = x ** 2
        y1 = 1 / x
    assert tape.gradient({"y0": y0, "y1": y1}, x).numpy() == 3.75

    x = tf.Variable(2.)
    with tf.GradientTape() as tape:
        y = x * [3., 4.]
    assert tape.gradient(y, x).numpy() == 7.0


def test_elementwise_gradient_of_sigmoid():
    x = tf.linspace(-10.0, 10.0, 200 + 1)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = tf.nn.sigmoid(x)
    dy_dx = tape.gradient(y, x)
    s = 1 / (1 + np.exp(-x.numpy().astype(np.float64)))
    np.testing.assert_allclose(dy_dx.numpy(), s * (1 - s), rtol=1e-5, atol=1e-7)


def test_control_flow():
    x = tf.constant(1.0)
    v0 = tf.Variable(2.0)
    v1 = tf.Variable(2.0)
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(x)
        if x > 0.0:
            result = v0
        else:
            result = v1 ** 2
    dv0, dv1 = tape.gradient(result, [v0, v1])
    assert dv0.numpy() == 1.0
    assert dv1 is None
    assert tape.gradient(result, x) is None


def test_none_for_unconnected_variables():
    x = tf.Variable(2.)
    y = tf.Variable(3.)
    with tf.GradientTape() as tape:
        z = y * y
    assert tape.gradient(z, x) is None


def test_replacing_a_variable_with_a_tensor():
    x = tf.Variable(2.0)
    grads = []
    for _ in range(2):
        with tf.GradientTape() as tape:
            y = x + 1
        grads.append(tape.gradient(y, x))
        x = x + 1  # a Tensor from now on: the next tape does not watch it
    assert grads[0].numpy() == 1.0
    assert grads[1] is None


def test_gradients_through_a_numpy_calculation_are_none():
    x = tf.Variable([[1.0, 2.0], [3.0, 4.0]], dtype=tf.float32)
    with tf.GradientTape() as tape:
        x2 = x ** 2
        y = np.mean(x2, axis=0)
        y = tf.reduce_mean(y, axis=0)
    assert tape.gradient(y, x) is None


def test_gradients_through_an_integer_are_none():
    x = tf.constant(10)
    with tf.GradientTape() as g:
        g.watch(x)
        y = x * x
    assert g.gradient(y, x) is None


def test_gradients_through_a_stateful_object_are_none():
    x0 = tf.Variable(3.0)
    x1 = tf.Variable(0.0)
    with tf.GradientTape() as tape:
        x1.assign_add(x0)
        y = x1 ** 2
    assert tape.gradient(y, x0) is None


def test_zeros_instead_of_none():
    x = tf.Variable([2., 2.])
    y = tf.Variable(3.)
    with tf.GradientTape() as tape:
        z = y ** 2
    grad = tape.gradient(z, x, unconnected_gradients=tf.UnconnectedGradients.ZERO)
    np.testing.assert_array_equal(grad.numpy(), [0., 0.])
