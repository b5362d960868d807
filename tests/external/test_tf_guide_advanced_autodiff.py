"""The examples of the tensorflow.org guide "Advanced automatic differentiation"
(https://www.tensorflow.org/guide/advanced_autodiff), run with ``import minitf as tf``. Values are
the ones the guide prints, or closed forms / float64 central differences.

Left out: saving custom gradients in a SavedModel (``tf.saved_model`` and
``tf.saved_model.SaveOptions(experimental_custom_gradients=...)``) and the plots.
"""
import numpy as np

import minitf as tf


def test_stop_recording():
    x = tf.Variable(2.0)
    y = tf.Variable(3.0)
    with tf.GradientTape() as t:
        x_sq = x * x
        with t.stop_recording():
            y_sq = y * y
        z = x_sq + y_sq
    grad = t.gradient(z, {"x": x, "y": y})
    assert grad["x"].numpy() == 4.0
    assert grad["y"] is None


def test_reset_recording():
    x = tf.Variable(2.0)
    y = tf.Variable(3.0)
    reset = True
    with tf.GradientTape() as t:
        y_sq = y * y
        if reset:
            t.reset()  # throw out everything recorded so far
        z = x * x + y_sq
    grad = t.gradient(z, {"x": x, "y": y})
    assert grad["x"].numpy() == 4.0
    assert grad["y"] is None


def test_stop_gradient():
    x = tf.Variable(2.0)
    y = tf.Variable(3.0)
    with tf.GradientTape() as t:
        y_sq = y ** 2
        z = x ** 2 + tf.stop_gradient(y_sq)
    grad = t.gradient(z, {"x": x, "y": y})
    assert grad["x"].numpy() == 4.0
    assert grad["y"] is None


def test_custom_gradient_clips_the_gradient():
    @tf.custom_gradient
    def clip_gradients(y):
        def backward(dy):
            return tf.clip_by_norm(dy, 0.5)
        return y, backward

    v = tf.Variable(2.0)
    with tf.GradientTape() as t:
        output = clip_gradients(v * v)
    assert t.gradient(output, v).numpy() == 2.0  # "backward" clips 4 to 0.5, times dv^2/dv=4


def test_multiple_tapes():
    x0 = tf.constant(0.0)
    x1 = tf.constant(0.0)
    with tf.GradientTape() as tape0, tf.GradientTape() as tape1:
        tape0.watch(x0)
        tape1.watch(x1)
        y0 = tf.math.sin(x0)
        y1 = tf.nn.sigmoid(x1)
        y = y0 + y1
        ys = tf.reduce_sum(y)
    assert tape0.gradient(ys, x0).numpy() == 1.0   # cos(0)
    assert tape1.gradient(ys, x1).numpy() == 0.25  # sigmoid(0) * (1 - sigmoid(0))


def test_higher_order_gradients():
    x = tf.Variable(1.0)
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            y = x * x * x
        dy_dx = t1.gradient(y, x)
    d2y_dx2 = t2.gradient(dy_dx, x)
    assert dy_dx.numpy() == 3.0
    assert d2y_dx2.numpy() == 6.0


def test_input_gradient_regularization():
    x = tf.random.normal([7, 5])
    layer = tf.keras.layers.Dense(10, activation=tf.nn.relu)
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            t1.watch(x)
            y = layer(x)
            out = tf.reduce_sum(layer(x) ** 2)
        g1 = t1.gradient(out, x)
        g1_mag = tf.norm(g1)
    dg1_mag = t2.gradient(g1_mag, layer.trainable_variables)
    assert [tuple(var.shape) for var in dg1_mag] == [(5, 10), (10,)]
    assert y.shape == (7, 10)

    # float64 closed form: with mask m = (x W + b > 0), g1 = 2 (m * h) W^T, h = x W + b.
    xv = x.numpy().astype(np.float64)
    w, b = layer.kernel.numpy().astype(np.float64), layer.bias.numpy().astype(np.float64)

    def g1_norm(w, b):
        h = xv @ w + b
        return np.linalg.norm(2 * (np.maximum(h, 0)) @ w.T)

    eps = 1e-6
    num_w = np.zeros_like(w)
    for idx in np.ndindex(*w.shape):
        d = np.zeros_like(w)
        d[idx] = eps
        num_w[idx] = (g1_norm(w + d, b) - g1_norm(w - d, b)) / (2 * eps)
    num_b = np.array([(g1_norm(w, b + eps * e) - g1_norm(w, b - eps * e)) / (2 * eps)
                      for e in np.eye(10)])
    np.testing.assert_allclose(dg1_mag[0].numpy(), num_w, rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(dg1_mag[1].numpy(), num_b, rtol=1e-3, atol=1e-3)


def test_jacobian_scalar_source():
    x = tf.linspace(-10.0, 10.0, 200 + 1)
    delta = tf.Variable(0.0)
    with tf.GradientTape() as tape:
        y = tf.nn.sigmoid(x + delta)
    dy_dx = tape.jacobian(y, delta)
    assert y.shape == (201,) and dy_dx.shape == (201,)
    s = 1 / (1 + np.exp(-x.numpy().astype(np.float64)))
    np.testing.assert_allclose(dy_dx.numpy(), s * (1 - s), rtol=1e-5, atol=1e-7)


def test_jacobian_tensor_source():
    x = tf.random.normal([7, 5])
    layer = tf.keras.layers.Dense(10, activation=tf.nn.relu)
    with tf.GradientTape(persistent=True) as tape:
        y = layer(x)
    assert y.shape == (7, 10)
    assert layer.kernel.shape == (5, 10)
    j = tape.jacobian(y, layer.kernel)
    assert j.shape == (7, 10, 5, 10)
    g = tape.gradient(y, layer.kernel)
    j_sum = tf.reduce_sum(j, axis=[0, 1])
    delta = tf.reduce_max(abs(g - j_sum)).numpy()
    assert delta < 1e-6


def test_hessian_and_newton_step():
    x = tf.random.normal([7, 5])
    layer1 = tf.keras.layers.Dense(8, activation=tf.nn.relu)
    layer2 = tf.keras.layers.Dense(6, activation=tf.nn.relu)
    with tf.GradientTape() as t2:
        with tf.GradientTape() as t1:
            x = layer1(x)
            x = layer2(x)
            loss = tf.reduce_mean(x ** 2)
        g = t1.gradient(loss, layer1.kernel)
    h = t2.jacobian(g, layer1.kernel)
    assert layer1.kernel.shape == (5, 8)
    assert h.shape == (5, 8, 5, 8)
    n_params = tf.reduce_prod(layer1.kernel.shape)
    assert n_params.dtype == tf.int32 and int(n_params) == 40
    g_vec = tf.reshape(g, [n_params, 1])
    h_mat = tf.reshape(h, [n_params, n_params])
    np.testing.assert_allclose(h_mat.numpy(), h_mat.numpy().T, rtol=1e-4, atol=1e-6)
    eps = 1e-3
    eye_eps = tf.eye(h_mat.shape[0]) * eps
    update = tf.linalg.solve(h_mat + eye_eps, g_vec)
    np.testing.assert_allclose((h_mat + eye_eps).numpy() @ update.numpy(), g_vec.numpy(),
                               rtol=1e-3, atol=1e-4)
    before = layer1.kernel.numpy()
    _ = layer1.kernel.assign_sub(tf.reshape(update, layer1.kernel.shape))
    np.testing.assert_allclose(layer1.kernel.numpy(), before - update.numpy().reshape(5, 8))


def _elu_net(x, with_batchnorm):
    layer1 = tf.keras.layers.Dense(8, activation=tf.nn.elu)
    bn = tf.keras.layers.BatchNormalization()
    layer2 = tf.keras.layers.Dense(6, activation=tf.nn.elu)
    with tf.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(x)
        y = layer1(x)
        if with_batchnorm:
            y = bn(y, training=True)
        y = layer2(y)
    return tape, y


def test_batch_jacobian():
    x = tf.random.normal([7, 5])
    tape, y = _elu_net(x, with_batchnorm=False)
    assert y.shape == (7, 6)
    j = tape.jacobian(y, x)
    assert j.shape == (7, 6, 7, 5)
    j_sum = tf.reduce_sum(j, axis=2)
    assert j_sum.shape == (7, 6, 5)
    j_select = tf.einsum("bxby->bxy", j)
    assert j_select.shape == (7, 6, 5)
    jb = tape.batch_jacobian(y, x)
    assert jb.shape == (7, 6, 5)
    assert tf.reduce_max(abs(jb - j_sum)).numpy() < 1e-6
    np.testing.assert_allclose(j_select.numpy(), jb.numpy(), rtol=1e-6, atol=1e-7)
    # The examples are independent: the off-diagonal blocks are zero.
    off = j.numpy().copy()
    for i in range(7):
        off[i, :, i, :] = 0
    assert not off.any()


def test_batch_jacobian_with_batchnorm_mixes_examples():
    x = tf.random.normal([7, 5])
    tape, y = _elu_net(x, with_batchnorm=True)
    j = tape.jacobian(y, x)
    assert j.shape == (7, 6, 7, 5)
    off = j.numpy().copy()
    for i in range(7):
        off[i, :, i, :] = 0
    assert np.abs(off).max() > 1e-4  # these slices are not diagonal
    jb = tape.batch_jacobian(y, x)
    assert jb.shape == (7, 6, 5)
    # batch_jacobian assumes independence: entry [b, i] is the gradient of output i summed
    # over all examples, with respect to example b (TF's definition).
    np.testing.assert_allclose(jb.numpy(), np.transpose(j.numpy().sum(axis=0), (1, 0, 2)),
                               rtol=1e-4, atol=1e-5)
