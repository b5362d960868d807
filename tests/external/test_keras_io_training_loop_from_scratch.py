"""Port of the keras.io guide "Writing a training loop from scratch in TensorFlow"
(https://keras.io/guides/writing_a_custom_training_loop_in_tensorflow/, keras-team/keras-io
guides/keras_core/writing_a_custom_training_loop_in_tensorflow.py): the guide's functional
MNIST model, its tf.data pipelines (shuffle(1024).batch(32)), the eager and tf.function
training steps with SparseCategoricalAccuracy, and the add_loss activity regularizer; on a
slice of Fashion-MNIST (shipped with the repository) scaled to [0, 1]. Checked against numpy
(accuracy, regularized loss) and against model.fit on the same Dataset."""
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
