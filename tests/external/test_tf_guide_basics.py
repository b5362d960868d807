"""The examples of the tensorflow.org guide "TensorFlow basics" (https://www.tensorflow.org/guide/basics),
run with ``import minitf as tf``. Values are the ones the guide prints, or float64 numpy.

The guide's ``tf.Module`` subclasses (without ``super().__init__()``, as written there), its
``tf.data.Dataset.shuffle().batch()`` pipeline, the Keras ``Lambda`` layer and
``tf.config.list_physical_devices`` are used as the guide uses them; ``tf.saved_model``,
``Tensor.device`` and the plots are left out.
"""
import numpy as np
import pytest

import minitf as tf


def test_tensors():
    x = tf.constant([[1., 2., 3.], [4., 5., 6.]])
    assert x.shape == (2, 3)
    assert x.dtype == tf.float32
    xv = x.numpy().astype(np.float64)
    np.testing.assert_array_equal((x + x).numpy(), 2 * xv)
    np.testing.assert_array_equal((5 * x).numpy(), 5 * xv)
    np.testing.assert_array_equal((x @ tf.transpose(x)).numpy(), [[14., 32.], [32., 77.]])
    assert tf.concat([x, x, x], axis=0).shape == (6, 3)
    soft = tf.nn.softmax(x, axis=-1).numpy()
    np.testing.assert_allclose(soft[0], [0.09003057, 0.24472848, 0.66524094], rtol=1e-6)
    assert tf.reduce_sum(x).numpy() == 21.0


def test_python_ints_are_int32():
    t = tf.convert_to_tensor([1, 2, 3])
    assert t.dtype == tf.int32
    s = tf.reduce_sum([1, 2, 3])
    assert s.dtype == tf.int32 and s.numpy() == 6
    assert tf.reduce_prod([1, 2, 3]).dtype == tf.int32


def test_variables():
    var = tf.Variable([0.0, 0.0, 0.0])
    var.assign([1, 2, 3])
    np.testing.assert_array_equal(var.numpy(), [1., 2., 3.])
    var.assign_add([1, 1, 1])
    np.testing.assert_array_equal(var.numpy(), [2., 3., 4.])


def f(x):
    return x ** 2 + 2 * x - 5


def test_automatic_differentiation():
    x = tf.Variable(1.0)
    assert f(x).numpy() == -2.0
    with tf.GradientTape() as tape:
        y = f(x)
    g_x = tape.gradient(y, x)  # g(x) = dy/dx = 2x + 2
    assert g_x.numpy() == 4.0


def test_graphs_and_retracing(capsys):
    @tf.function
    def my_func(x):
        print("Tracing.")
        return tf.reduce_sum(x)

    x = tf.constant([1, 2, 3])
    assert my_func(x).numpy() == 6
    assert capsys.readouterr().out == "Tracing.\n"
    x = tf.constant([10, 9, 8])
    assert my_func(x).numpy() == 27
    assert capsys.readouterr().out == ""  # same signature: no retrace
    x = tf.constant([10.0, 9.1, 8.2], dtype=tf.float32)
    np.testing.assert_allclose(my_func(x).numpy(), 27.3, rtol=1e-6)
    assert capsys.readouterr().out == "Tracing.\n"  # new dtype: traced again


class MyModule(tf.Module):
    def __init__(self, value):
        self.weight = tf.Variable(value)

    @tf.function
    def multiply(self, x):
        return x * self.weight


def test_module_method_function():
    mod = MyModule(3)
    np.testing.assert_array_equal(mod.multiply(tf.constant([1, 2, 3])).numpy(), [3, 6, 9])
    assert [int(v.numpy()) for v in mod.variables] == [3]


def test_devices():
    gpus = tf.config.list_physical_devices("GPU")
    assert bool(gpus) == (tf.get_backend() == "cupy")
    assert tf.config.list_physical_devices("CPU")


class QuadModel(tf.Module):
    """The guide's model; ``__call__`` is a ``tf.function`` (``EagerQuadModel`` below is not)."""

    def __init__(self):
        rand_init = tf.random.uniform(shape=[3], minval=0., maxval=5., seed=22)
        self.w_q = tf.Variable(rand_init[0])
        self.w_l = tf.Variable(rand_init[1])
        self.b = tf.Variable(rand_init[2])

    @tf.function
    def __call__(self, x):
        return self.w_q * (x ** 2) + self.w_l * x + self.b


class EagerQuadModel(QuadModel):
    def __call__(self, x):
        return self.w_q * (x ** 2) + self.w_l * x + self.b


def mse_loss(y_pred, y):
    return tf.reduce_mean(tf.square(y_pred - y))


def _data():
    tf.random.set_seed(7)
    x = tf.linspace(-2, 2, 201)
    x = tf.cast(x, tf.float32)
    y = f(x) + tf.random.normal(shape=[201])
    return x, y


@pytest.mark.parametrize("model_class", [
    QuadModel, EagerQuadModel], ids=["function", "eager"])
def test_training_loop_recovers_the_quadratic(model_class):
    x, y = _data()
    quad_model = model_class()
    initial = float(mse_loss(quad_model(x), y))
    # the module collects its Variables, ordered by attribute name as TF orders them
    assert [id(v) for v in quad_model.variables] == [
        id(quad_model.b), id(quad_model.w_l), id(quad_model.w_q)]
    learning_rate = 0.01
    batch_size = 32
    dataset = tf.data.Dataset.from_tensor_slices((x, y))
    dataset = dataset.shuffle(buffer_size=x.shape[0]).batch(batch_size)
    for _ in range(100):
        for x_batch, y_batch in dataset:
            with tf.GradientTape() as tape:
                batch_loss = mse_loss(quad_model(x_batch), y_batch)
            grads = tape.gradient(batch_loss, quad_model.variables)
            for g, v in zip(grads, quad_model.variables):
                v.assign_sub(learning_rate * g)
    final = float(mse_loss(quad_model(x), y))
    # The best quadratic fit in float64: the loss ends near it (the noise variance, about 1).
    xv, yv = x.numpy().astype(np.float64), y.numpy().astype(np.float64)
    design = np.stack([xv ** 2, xv, np.ones_like(xv)], axis=1)
    coef, *_ = np.linalg.lstsq(design, yv, rcond=None)
    best = np.mean((design @ coef - yv) ** 2)
    assert final < initial
    assert final < best * 1.1
    np.testing.assert_allclose([float(quad_model.w_q), float(quad_model.w_l), float(quad_model.b)],
                               coef, atol=0.3)


def test_keras_fit_recovers_the_quadratic():
    x, y = _data()
    new_model = tf.keras.Sequential([
        tf.keras.layers.Lambda(lambda x: tf.stack([x, x ** 2], axis=1)),
        tf.keras.layers.Dense(units=1, kernel_initializer=tf.random.normal)])
    new_model.compile(loss=tf.keras.losses.MSE,
                      optimizer=tf.keras.optimizers.SGD(learning_rate=0.01))
    history = new_model.fit(x, y, epochs=100, batch_size=32, verbose=0)
    losses = history.history["loss"]
    assert losses[-1] < losses[0]
    xv, yv = x.numpy().astype(np.float64), y.numpy().astype(np.float64)
    design = np.stack([xv, xv ** 2, np.ones_like(xv)], axis=1)
    coef, *_ = np.linalg.lstsq(design, yv, rcond=None)
    best = np.mean((design @ coef - yv) ** 2)
    assert losses[-1] < best * 1.2
