"""Port of tensorflow.org's guide "Basic training loops"
(https://www.tensorflow.org/guide/basic_training_loops): fit y = 3x + 2 plus noise with a linear
``tf.Module`` model of two Variables (w = 5, b = 0 at the start), gradient descent at learning
rate 0.1 for 10 epochs. The training step runs eagerly and under ``minitf.function``; both
follow a float64 numpy gradient descent on the same data (201 points in [-2, 2]). Then, on the
guide's 1000 random points, the hand-written step's gradients against the closed form, and the
same model as a ``keras.Model`` holding the Variables as attributes, trained with
``compile``/``fit`` (batch size 1000).
"""
import numpy as np
import pytest

import minitf as tf

TRUE_W, TRUE_B, NUM_EXAMPLES = 3.0, 2.0, 201


class MyModel(tf.Module):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.w = tf.Variable(5.0)
        self.b = tf.Variable(0.0)

    def __call__(self, x):
        return self.w * x + self.b


def loss(target_y, predicted_y):
    return tf.reduce_mean(tf.square(target_y - predicted_y))


def train(model, x, y, learning_rate):
    with tf.GradientTape() as t:
        current_loss = loss(y, model(x))
    dw, db = t.gradient(current_loss, [model.w, model.b])
    model.w.assign_sub(learning_rate * dw)
    model.b.assign_sub(learning_rate * db)


def _data():
    x = tf.cast(tf.linspace(-2, 2, NUM_EXAMPLES), tf.float32)
    noise = np.random.default_rng(0).standard_normal(NUM_EXAMPLES).astype(np.float32)
    y = x * TRUE_W + TRUE_B + noise
    return x, y


def _numpy_descent(x, y, epochs=10, lr=0.1):
    x, y = np.asarray(x, np.float64), np.asarray(y, np.float64)
    w, b, history = 5.0, 0.0, []
    for _ in range(epochs):
        err = w * x + b - y
        w, b = w - lr * 2 * np.mean(err * x), b - lr * 2 * np.mean(err)
        history.append((w, b, np.mean((w * x + b - y) ** 2)))
    return history


def test_untrained_model_and_initial_loss():
    model = MyModel()
    assert float(model(3.0).numpy()) == 15.0
    # the module collects its Variables, as the guide prints them
    assert sorted(float(v.numpy()) for v in model.variables) == [0.0, 5.0]
    assert len(model.trainable_variables) == 2
    x, y = _data()
    xn, yn = x.numpy().astype(np.float64), y.numpy().astype(np.float64)
    assert float(loss(y, model(x))) == pytest.approx(np.mean((5 * xn - yn) ** 2), rel=1e-5)


@pytest.mark.parametrize("traced", [False, True])
def test_training_loop_follows_gradient_descent(traced):
    x, y = _data()
    model = MyModel()
    step = tf.function(train) if traced else train
    reference = _numpy_descent(x.numpy(), y.numpy())
    for w, b, ref_loss in reference:
        step(model, x, y, learning_rate=0.1)
        assert float(model.w.numpy()) == pytest.approx(w, rel=1e-5, abs=1e-6)
        assert float(model.b.numpy()) == pytest.approx(b, rel=1e-5, abs=1e-6)
        assert float(loss(y, model(x))) == pytest.approx(ref_loss, rel=1e-5)
    if traced:
        assert step.experimental_get_tracing_count() == 1
    # The guide's point: w and b approach the true 3 and 2 (noise keeps them off by a little).
    assert abs(float(model.w.numpy()) - TRUE_W) < 0.25
    assert abs(float(model.b.numpy()) - TRUE_B) < 0.3


def test_traced_and_eager_training_agree_exactly():
    x, y = _data()
    eager_model, traced_model = MyModel(), MyModel()
    step = tf.function(train)
    for _ in range(10):
        train(eager_model, x, y, 0.1)
        step(traced_model, x, y, 0.1)
    assert eager_model.w.numpy() == traced_model.w.numpy()
    assert eager_model.b.numpy() == traced_model.b.numpy()


NUM_RANDOM_EXAMPLES = 1000


def data():
    tf.random.set_seed(0)
    x = tf.random.normal(shape=[NUM_RANDOM_EXAMPLES])
    noise = tf.random.normal(shape=[NUM_RANDOM_EXAMPLES])
    return x, x * TRUE_W + TRUE_B + noise


def test_module_training_loop():
    x, y = data()
    model = MyModel()
    assert len(model.variables) == 2
    np.testing.assert_allclose(float(loss(y, model(x))),
                               np.mean((y.numpy() - (5.0 * x.numpy())) ** 2), rtol=1e-5)

    def train(model, x, y, learning_rate):
        with tf.GradientTape() as t:
            current_loss = loss(y, model(x))
        dw, db = t.gradient(current_loss, [model.w, model.b])
        xs, ys = x.numpy().astype(np.float64), y.numpy().astype(np.float64)
        residual = 2 * ((float(model.w) * xs + float(model.b)) - ys) / len(xs)
        np.testing.assert_allclose([float(dw), float(db)],
                                   [np.sum(residual * xs), np.sum(residual)], rtol=1e-4)
        model.w.assign_sub(learning_rate * dw)
        model.b.assign_sub(learning_rate * db)

    for _ in range(10):
        train(model, x, y, learning_rate=0.1)
    assert abs(float(model.w) - TRUE_W) < 0.5 and abs(float(model.b) - TRUE_B) < 0.5


class MyModelKeras(tf.keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.w = tf.Variable(5.0)
        self.b = tf.Variable(0.0)

    def call(self, x):
        return self.w * x + self.b


def test_keras_model_with_variable_attributes_and_fit():
    x, y = data()
    keras_model = MyModelKeras()
    assert len(keras_model.trainable_variables) == 2
    keras_model.compile(run_eagerly=False, optimizer=tf.keras.optimizers.SGD(learning_rate=0.1),
                        loss=tf.keras.losses.MeanSquaredError())
    history = keras_model.fit(x.numpy(), y.numpy(), epochs=10, batch_size=1000, verbose=0)
    losses = history.history["loss"]
    assert len(losses) == 10 and losses[-1] < losses[0]
    assert abs(float(keras_model.w) - TRUE_W) < 0.5 and abs(float(keras_model.b) - TRUE_B) < 0.5
