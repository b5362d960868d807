"""Port of tensorflow.org's tutorial "Custom training: walkthrough"
(https://www.tensorflow.org/tutorials/customization/custom_training_walkthrough) on synthetic
iris-like data (three Gaussian clusters of four features) instead of the downloaded CSV.

From the tutorial: ``Sequential([Dense(10, relu, input_shape=(4,)), Dense(10, relu),
Dense(3)])`` (193 parameters), ``SparseCategoricalCrossentropy(from_logits=True)``, a ``grad``
helper returning the loss and the gradients, ``SGD(0.01)``, a loop that tracks
``metrics.Mean`` and ``SparseCategoricalAccuracy`` per epoch and resets them, then predictions
with ``tf.math.argmax(tf.nn.softmax(logits))``.
"""
import numpy as np

import minitf as tf


def iris_like(rng, n):
    centers = np.array([[5.0, 3.4, 1.5, 0.2], [5.9, 2.8, 4.3, 1.3], [6.6, 3.0, 5.6, 2.0]])
    labels = rng.integers(0, 3, n)
    features = centers[labels] + rng.normal(0, 0.3, (n, 4))
    return features.astype("float32"), labels.astype("int64")


def test_custom_training_walkthrough():
    rng = np.random.default_rng(0)
    features, labels = iris_like(rng, 120)
    tf.random.set_seed(0)
    model = tf.keras.Sequential([
        tf.keras.layers.Dense(10, activation=tf.nn.relu, input_shape=(4,)),
        tf.keras.layers.Dense(10, activation=tf.nn.relu),
        tf.keras.layers.Dense(3),
    ])
    assert model.count_params() == 193
    loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def loss(model, x, y, training):
        y_ = model(x, training=training)
        return loss_object(y_true=y, y_pred=y_)

    # The loss against a float64 numpy forward pass.
    h = features.astype(np.float64)
    for layer in model.layers:
        h = h @ layer.kernel.numpy() + layer.bias.numpy()
        if layer is not model.layers[-1]:
            h = np.maximum(h, 0)
    logp = h - h.max(1, keepdims=True)
    logp = logp - np.log(np.exp(logp).sum(1, keepdims=True))
    np.testing.assert_allclose(float(loss(model, features, labels, training=False)),
                               -logp[np.arange(120), labels].mean(), rtol=1e-5)

    def grad(model, inputs, targets):
        with tf.GradientTape() as tape:
            loss_value = loss(model, inputs, targets, training=True)
        return loss_value, tape.gradient(loss_value, model.trainable_variables)

    optimizer = tf.keras.optimizers.SGD(learning_rate=0.01)
    loss_value, grads = grad(model, features, labels)
    first = float(loss_value)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    assert int(optimizer.iterations) == 1
    assert float(loss(model, features, labels, training=True)) < first

    train_loss_results, train_accuracy_results = [], []
    epoch_loss_avg = tf.keras.metrics.Mean()
    epoch_accuracy = tf.keras.metrics.SparseCategoricalAccuracy()
    for _ in range(200):
        epoch_loss_avg.reset_state()
        epoch_accuracy.reset_state()
        for start in range(0, 120, 32):
            x, y = features[start:start + 32], labels[start:start + 32]
            loss_value, grads = grad(model, x, y)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            epoch_loss_avg.update_state(loss_value)
            epoch_accuracy.update_state(y, model(x, training=True))
        train_loss_results.append(float(epoch_loss_avg.result()))
        train_accuracy_results.append(float(epoch_accuracy.result()))
    assert train_loss_results[-1] < 0.5 * train_loss_results[0]
    assert train_accuracy_results[-1] > 0.9

    test_x, test_y = iris_like(np.random.default_rng(1), 30)
    test_accuracy = tf.keras.metrics.Accuracy()
    logits = model(test_x, training=False)
    prediction = tf.math.argmax(logits, axis=1, output_type=tf.int64)
    test_accuracy(prediction, test_y)
    assert float(test_accuracy.result()) > 0.85

    predict_dataset = tf.convert_to_tensor([[5.1, 3.3, 1.7, 0.5], [5.9, 3.0, 4.2, 1.5],
                                            [6.9, 3.1, 5.4, 2.1]])
    predictions = model(predict_dataset, training=False)
    class_idx = [int(tf.math.argmax(tf.nn.softmax(logits_row))) for logits_row in predictions]
    assert class_idx == [0, 1, 2]
