"""The tensorflow.org guide "Basic training loops"
(https://www.tensorflow.org/guide/basic_training_loops): fit y = 3x + 2 plus noise with a linear
model of two Variables (w = 5, b = 0 at the start), gradient descent at learning rate 0.1 for
10 epochs on 201 points in [-2, 2]. The guide's model subclasses tf.Module, as here. The training step runs eagerly and under ``minitf.function``; both follow a
float64 numpy gradient descent on the same data.
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
