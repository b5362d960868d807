"""Port of tensorflow.org's "TensorFlow 2 quickstart for experts"
(https://www.tensorflow.org/tutorials/quickstart/advanced), on a slice of Fashion-MNIST (the
MNIST files are not shipped with the repository).

As in the tutorial: pixels / 255 with a channel axis (``x[..., tf.newaxis]``), a subclassed
``Model`` (Conv2D(32, 3, relu), Flatten, Dense(128, relu), Dense(10)), Adam, a
``@tf.function`` train step and test step updating ``Mean`` and
``SparseCategoricalAccuracy`` metrics that are reset every epoch.
"""
import numpy as np

import minitf as tf
from minitf.keras import Model
from minitf.keras.layers import Conv2D, Dense, Flatten


class MyModel(Model):
    def __init__(self):
        super().__init__()
        self.conv1 = Conv2D(8, 3, activation="relu")
        self.flatten = Flatten()
        self.d1 = Dense(32, activation="relu")
        self.d2 = Dense(10)

    def call(self, x):
        x = self.conv1(x)
        x = self.flatten(x)
        x = self.d1(x)
        return self.d2(x)


def test_quickstart_for_experts(fashion_mnist_small):
    (x_train, y_train), (x_test, y_test) = fashion_mnist_small
    x_train, x_test = x_train[:600] / 255.0, x_test[:200] / 255.0
    y_train, y_test = y_train[:600], y_test[:200]
    x_train = x_train[..., tf.newaxis].astype("float32")
    x_test = x_test[..., tf.newaxis].astype("float32")

    tf.random.set_seed(0)
    model = MyModel()
    loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    optimizer = tf.keras.optimizers.Adam()
    train_loss = tf.keras.metrics.Mean(name="train_loss")
    train_accuracy = tf.keras.metrics.SparseCategoricalAccuracy(name="train_accuracy")
    test_loss = tf.keras.metrics.Mean(name="test_loss")
    test_accuracy = tf.keras.metrics.SparseCategoricalAccuracy(name="test_accuracy")

    @tf.function
    def train_step(images, labels):
        with tf.GradientTape() as tape:
            predictions = model(images, training=True)
            loss = loss_object(labels, predictions)
        gradients = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        train_loss(loss)
        train_accuracy(labels, predictions)

    @tf.function
    def test_step(images, labels):
        predictions = model(images, training=False)
        t_loss = loss_object(labels, predictions)
        test_loss(t_loss)
        test_accuracy(labels, predictions)

    model(x_train[:1])  # build, so the first eager loss can be compared with the traced one
    eager_loss = float(loss_object(y_train[:50], model(x_train[:50])))

    history = []
    for epoch in range(3):
        train_loss.reset_state()
        train_accuracy.reset_state()
        test_loss.reset_state()
        test_accuracy.reset_state()
        for start in range(0, 600, 50):
            train_step(tf.constant(x_train[start:start + 50]),
                       tf.constant(y_train[start:start + 50]))
            if epoch == 0 and start == 0:
                # the first traced step computed the same loss as eager code
                np.testing.assert_allclose(float(train_loss.result()), eager_loss, rtol=1e-5)
        for start in range(0, 200, 50):
            test_step(tf.constant(x_test[start:start + 50]), tf.constant(y_test[start:start + 50]))
        history.append((float(train_loss.result()), float(train_accuracy.result()),
                        float(test_loss.result()), float(test_accuracy.result())))
    assert history[-1][0] < history[0][0]
    assert history[-1][3] > 0.6

    # The test metrics equal a direct evaluation of the final model.
    logits = model(x_test).numpy()
    np.testing.assert_allclose(history[-1][3], np.mean(logits.argmax(1) == y_test), atol=1e-6)
