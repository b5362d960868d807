"""Port of keras.io's guide "Writing a training loop from scratch in TensorFlow"
(https://keras.io/guides/writing_a_training_loop_from_scratch/), on a Fashion-MNIST slice fed
through ``tf.data`` as the guide does (``from_tensor_slices``, ``shuffle``, ``batch``).

From the guide: the functional 784-64-64-10 model (Adam here, for a short run), a
``SparseCategoricalCrossentropy(from_logits=True)`` loss, ``SparseCategoricalAccuracy``
metrics reset at the end of each epoch, ``@tf.function`` train and test steps; then the same
model with an ``ActivityRegularizationLayer`` whose ``add_loss`` term enters the traced step
through ``model.losses``.
"""
import numpy as np

import minitf as tf
from minitf import keras
from minitf.keras import layers


class ActivityRegularizationLayer(layers.Layer):
    def call(self, inputs):
        self.add_loss(1e-2 * tf.reduce_sum(inputs))
        return inputs


def get_model(regularize):
    inputs = keras.Input(shape=(784,), name="digits")
    x1 = layers.Dense(64, activation="relu")(inputs)
    if regularize:
        x1 = ActivityRegularizationLayer()(x1)
    x2 = layers.Dense(64, activation="relu")(x1)
    outputs = layers.Dense(10, name="predictions")(x2)
    return keras.Model(inputs=inputs, outputs=outputs)


def _data(fashion_mnist_small):
    (x_train, y_train), (x_val, y_val) = fashion_mnist_small
    x_train = np.reshape(x_train[:1000], (-1, 784)).astype("float32") / 255
    x_val = np.reshape(x_val[:200], (-1, 784)).astype("float32") / 255
    return x_train, y_train[:1000], x_val, y_val[:200]


def test_training_loop(fashion_mnist_small):
    x_train, y_train, x_val, y_val = _data(fashion_mnist_small)
    tf.random.set_seed(0)
    model = get_model(regularize=False)
    optimizer = keras.optimizers.Adam(learning_rate=1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    train_acc_metric = keras.metrics.SparseCategoricalAccuracy()
    val_acc_metric = keras.metrics.SparseCategoricalAccuracy()

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss_value = loss_fn(y, logits)
        grads = tape.gradient(loss_value, model.trainable_weights)
        optimizer.apply_gradients(zip(grads, model.trainable_weights))
        train_acc_metric.update_state(y, logits)
        return loss_value

    @tf.function
    def test_step(x, y):
        val_logits = model(x, training=False)
        val_acc_metric.update_state(y, val_logits)

    train_dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train))
    train_dataset = train_dataset.shuffle(buffer_size=1024).batch(100)
    val_dataset = tf.data.Dataset.from_tensor_slices((x_val, y_val)).batch(100)

    accuracies = []
    for epoch in range(3):
        steps = 0
        for step, (x_batch_train, y_batch_train) in enumerate(train_dataset):
            train_step(x_batch_train, y_batch_train)
            steps += 1
        assert steps == 10
        train_acc = float(train_acc_metric.result())
        train_acc_metric.reset_state()
        for x_batch_val, y_batch_val in val_dataset:
            test_step(x_batch_val, y_batch_val)
        accuracies.append((train_acc, float(val_acc_metric.result())))
        val_acc_metric.reset_state()
    assert accuracies[-1][0] > accuracies[0][0]
    assert accuracies[-1][1] > 0.6
    expected = np.mean(model(x_val).numpy().argmax(1) == y_val)
    np.testing.assert_allclose(accuracies[-1][1], expected, atol=1e-6)


def test_add_loss_in_a_traced_step(fashion_mnist_small):
    x_train, y_train, _, _ = _data(fashion_mnist_small)
    tf.random.set_seed(1)
    model = get_model(regularize=True)
    optimizer = keras.optimizers.SGD(learning_rate=1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    # The regularization term of one call equals 1e-2 * sum(first hidden activations).
    model(x_train[:8])
    first = model.layers[1]
    hidden = np.maximum(x_train[:8] @ first.kernel.numpy() + first.bias.numpy(), 0)
    assert len(model.losses) == 1
    np.testing.assert_allclose(float(model.losses[0]), 1e-2 * hidden.sum(), rtol=1e-4)

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss_value = loss_fn(y, logits)
            loss_value += sum(model.losses)
        grads = tape.gradient(loss_value, model.trainable_weights)
        optimizer.apply_gradients(zip(grads, model.trainable_weights))
        return loss_value

    train_dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(100)
    for x, y in train_dataset.take(3):
        expected = float(loss_fn(y, model(x))) + float(sum(model.losses))  # eager, same weights
        traced = float(train_step(tf.constant(x), tf.constant(y)))
        np.testing.assert_allclose(traced, expected, rtol=1e-5)
        assert len(model.losses) == 1
