"""Port of tensorflow.org's guide "Basic training loops"
(https://www.tensorflow.org/guide/basic_training_loops).

From the guide: noisy samples of ``y = 3x + 2`` (1000 points), a ``tf.Module`` model
``w * x + b`` starting at w = 5, b = 0, an MSE loss, a hand-written step
(``assign_sub(learning_rate * grad)``, learning rate 0.1) that brings w and b close to 3 and 2
in 10 epochs; then the same model as a ``keras.Model`` holding the Variables as attributes,
trained with ``compile``/``fit`` on 1-D inputs (batch size 1000).
"""
import numpy as np

import minitf as tf

TRUE_W, TRUE_B, NUM_EXAMPLES = 3.0, 2.0, 1000


def data():
    tf.random.set_seed(0)
    x = tf.random.normal(shape=[NUM_EXAMPLES])
    noise = tf.random.normal(shape=[NUM_EXAMPLES])
    return x, x * TRUE_W + TRUE_B + noise


class MyModel(tf.Module):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.w = tf.Variable(5.0)
        self.b = tf.Variable(0.0)

    def __call__(self, x):
        return self.w * x + self.b


def loss(target_y, predicted_y):
    return tf.reduce_mean(tf.square(target_y - predicted_y))


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
