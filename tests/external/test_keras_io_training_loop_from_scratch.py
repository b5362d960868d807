"""Port of the keras.io guide "Writing a training loop from scratch in TensorFlow"
(https://keras.io/guides/writing_a_custom_training_loop_in_tensorflow/, keras-team/keras-io
guides/keras_core/writing_a_custom_training_loop_in_tensorflow.py): the guide's functional
MNIST model, its tf.data pipelines (shuffle(1024).batch(32)), the eager and tf.function
training steps with SparseCategoricalAccuracy, and the add_loss activity regularizer; on a
slice of Fashion-MNIST (shipped with the repository) scaled to [0, 1]. Checked against numpy
(accuracy, regularized loss) and against model.fit on the same Dataset.

From the guide: the functional 784-64-64-10 model (Adam here, for a short run), a
``SparseCategoricalCrossentropy(from_logits=True)`` loss, ``SparseCategoricalAccuracy``
metrics reset at the end of each epoch, ``@tf.function`` train and test steps; then the same
model with an ``ActivityRegularizationLayer`` whose ``add_loss`` term enters the traced step
through ``model.losses``.
"""
import numpy as np
import pytest

import minitf as tf
from minitf import keras

datasets = pytest.importorskip("datasets")
batch_size = 32


def get_model():
    inputs = keras.Input(shape=(784,), name="digits")
    x1 = keras.layers.Dense(64, activation="relu")(inputs)
    x2 = keras.layers.Dense(64, activation="relu")(x1)
    outputs = keras.layers.Dense(10, name="predictions")(x2)
    return keras.Model(inputs=inputs, outputs=outputs)


@pytest.fixture(scope="module")
def data():
    (x_train, y_train), _ = datasets.load("fashion_mnist")
    x_train = np.reshape(x_train[:1536], (-1, 784)).astype("float32") / 255.0
    y_train = y_train[:1536].astype("int64")
    # Reserve the last 512 samples for validation, as the guide reserves 10,000.
    return (x_train[:-512], y_train[:-512]), (x_train[-512:], y_train[-512:])


def datasets_for(data, seed):
    (x_train, y_train), (x_val, y_val) = data
    train_dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train))
    train_dataset = train_dataset.shuffle(buffer_size=1024, seed=seed).batch(batch_size)
    val_dataset = tf.data.Dataset.from_tensor_slices((x_val, y_val)).batch(batch_size)
    return train_dataset, val_dataset


def test_end_to_end_loop_with_metrics(data):
    tf.random.set_seed(0)
    model = get_model()
    optimizer = keras.optimizers.Adam(learning_rate=1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    train_acc_metric = keras.metrics.SparseCategoricalAccuracy()
    val_acc_metric = keras.metrics.SparseCategoricalAccuracy()
    train_dataset, val_dataset = datasets_for(data, seed=1)
    val_accs, first_losses = [], []
    for epoch in range(2):
        correct = seen = 0
        for step, (x_batch_train, y_batch_train) in enumerate(train_dataset):
            with tf.GradientTape() as tape:
                logits = model(x_batch_train, training=True)
                loss_value = loss_fn(y_batch_train, logits)
            grads = tape.gradient(loss_value, model.trainable_weights)
            optimizer.apply(grads, model.trainable_weights)
            train_acc_metric.update_state(y_batch_train, logits)
            correct += int(np.sum(np.argmax(logits.numpy(), 1) == y_batch_train.numpy()))
            seen += len(y_batch_train.numpy())
            if step == 0:
                first_losses.append(float(loss_value))
        assert seen == 1024 and step == 31  # 1024 samples in batches of 32
        assert float(train_acc_metric.result()) == pytest.approx(correct / seen, abs=1e-6)
        train_acc_metric.reset_state()
        assert float(train_acc_metric.result()) == 0.0
        for x_batch_val, y_batch_val in val_dataset:
            val_logits = model(x_batch_val, training=False)
            val_acc_metric.update_state(y_batch_val, val_logits)
        val_accs.append(float(val_acc_metric.result()))
        val_acc_metric.reset_state()
    assert first_losses[1] < first_losses[0]
    assert val_accs[-1] > 0.6  # ten classes: chance is 0.1


def _hand_loop(model, train_dataset, epochs, traced):
    optimizer = keras.optimizers.Adam(learning_rate=1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def train_step(x, y):
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss_value = loss_fn(y, logits)
        grads = tape.gradient(loss_value, model.trainable_weights)
        optimizer.apply(grads, model.trainable_weights)
        return loss_value

    step_fn = tf.function(train_step) if traced else train_step
    for _ in range(epochs):
        for x_batch_train, y_batch_train in train_dataset:
            step_fn(x_batch_train, y_batch_train)


def test_tf_function_step_and_fit_match_the_eager_loop(data):
    tf.random.set_seed(2)
    initial = get_model().get_weights()
    results = []
    for mode in ("eager", "traced", "fit"):
        model = get_model()
        model.set_weights(initial)
        train_dataset, _ = datasets_for(data, seed=7)  # the same orders, epoch by epoch
        if mode == "fit":
            model.compile(keras.optimizers.Adam(learning_rate=1e-3),
                          keras.losses.SparseCategoricalCrossentropy(from_logits=True))
            model.fit(train_dataset, epochs=2, verbose=0)
        else:
            _hand_loop(model, train_dataset, 2, traced=mode == "traced")
        results.append(model.get_weights())
    for other in results[1:]:
        for a, b in zip(results[0], other):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


class ActivityRegularizationLayer(keras.layers.Layer):
    def call(self, inputs):
        self.add_loss(1e-2 * tf.reduce_sum(inputs))
        return inputs


def test_losses_tracked_by_the_model(data):
    (x_train, y_train), _ = data
    tf.random.set_seed(3)
    inputs = keras.Input(shape=(784,), name="digits")
    x = keras.layers.Dense(64, activation="relu")(inputs)
    x = ActivityRegularizationLayer()(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    outputs = keras.layers.Dense(10, name="predictions")(x)
    model = keras.Model(inputs=inputs, outputs=outputs)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    xb, yb = x_train[:batch_size], y_train[:batch_size]

    @tf.function
    def loss_step(x, y):
        logits = model(x, training=True)
        loss_value = loss_fn(y, logits)
        loss_value += sum(model.losses)
        return loss_value

    value = float(loss_step(tf.constant(xb), tf.constant(yb)))
    assert len(model.losses) == 1
    w1, b1, w2, b2, w3, b3 = (v.astype(np.float64) for v in model.get_weights())
    h1 = np.maximum(xb @ w1 + b1, 0)
    logits = np.maximum(h1 @ w2 + b2, 0) @ w3 + b3
    logp = logits - np.log(np.exp(logits - logits.max(1, keepdims=True)).sum(1, keepdims=True)) \
        - logits.max(1, keepdims=True)
    expected = -np.mean(logp[np.arange(batch_size), yb]) + 1e-2 * h1.sum()
    assert value == pytest.approx(expected, rel=1e-5)
    # fit adds the same term to its loss
    model.compile(keras.optimizers.SGD(0.0), loss_fn)
    h = model.fit(xb, yb, batch_size=batch_size, epochs=1, verbose=0)
    assert h.history["loss"][0] == pytest.approx(expected, rel=1e-5)


def get_model_with_regularizer(regularize):
    inputs = keras.Input(shape=(784,), name="digits")
    x1 = keras.layers.Dense(64, activation="relu")(inputs)
    if regularize:
        x1 = ActivityRegularizationLayer()(x1)
    x2 = keras.layers.Dense(64, activation="relu")(x1)
    outputs = keras.layers.Dense(10, name="predictions")(x2)
    return keras.Model(inputs=inputs, outputs=outputs)


def _data(fashion_mnist_small):
    (x_train, y_train), (x_val, y_val) = fashion_mnist_small
    x_train = np.reshape(x_train[:1000], (-1, 784)).astype("float32") / 255
    x_val = np.reshape(x_val[:200], (-1, 784)).astype("float32") / 255
    return x_train, y_train[:1000], x_val, y_val[:200]


def test_training_loop(fashion_mnist_small):
    x_train, y_train, x_val, y_val = _data(fashion_mnist_small)
    tf.random.set_seed(0)
    model = get_model_with_regularizer(regularize=False)
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
    model = get_model_with_regularizer(regularize=True)
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
