"""Port of tensorflow.org's guide "Mixed precision"
(https://www.tensorflow.org/guide/mixed_precision), with a small model and synthetic data.

From the guide: under the ``mixed_float16`` policy layers compute in float16 and keep float32
variables; the output layer is followed by ``Activation('softmax', dtype='float32')`` so the
model outputs float32; the custom training loop wraps the optimizer in
``LossScaleOptimizer`` (initial loss scale 2 ** 15), scales the loss, unscales the gradients
and applies them; integer (uint8) pixels are accepted by the first Dense layer.
"""
import numpy as np
import pytest

import minitf as tf
from minitf import keras
from minitf.keras import layers, mixed_precision


@pytest.fixture
def mixed_policy():
    mixed_precision.set_global_policy("mixed_float16")
    yield
    mixed_precision.set_global_policy("float32")


def build_model(num_units=64):
    inputs = keras.Input(shape=(784,), name="digits")
    dense1 = layers.Dense(num_units, activation="relu", name="dense_1")
    x = dense1(inputs)
    dense2 = layers.Dense(num_units, activation="relu", name="dense_2")
    x = dense2(x)
    x = layers.Dense(10, name="dense_logits")(x)
    outputs = layers.Activation("softmax", dtype="float32", name="predictions")(x)
    return keras.Model(inputs=inputs, outputs=outputs), dense1, x


def test_layers_compute_in_float16_with_float32_variables(mixed_policy):
    policy = mixed_precision.global_policy()
    assert policy.compute_dtype == "float16" and policy.variable_dtype == "float32"
    model, dense1, logits = build_model()
    assert dense1.dtype_policy.name == "mixed_float16"
    assert logits.dtype == tf.float16
    assert model.output.dtype == tf.float32
    assert dense1.kernel.dtype == tf.float32
    pixels = np.random.default_rng(0).integers(0, 256, (4, 784)).astype("uint8")
    out = model(pixels)
    assert out.dtype == tf.float32
    np.testing.assert_allclose(out.numpy().sum(axis=1), 1.0, rtol=1e-3)


def test_custom_training_loop_with_loss_scaling(mixed_policy):
    tf.random.set_seed(0)
    rng = np.random.default_rng(1)
    x_train = rng.uniform(0, 1, (256, 784)).astype("float32")
    w = rng.normal(size=(784, 10))
    y_train = (x_train @ w).argmax(axis=1)
    model, _, _ = build_model()
    optimizer = keras.optimizers.RMSprop(learning_rate=1e-3)
    optimizer = mixed_precision.LossScaleOptimizer(optimizer)
    assert float(optimizer.loss_scale) == 2.0 ** 15
    loss_object = keras.losses.SparseCategoricalCrossentropy()

    def train_step(x, y):
        with tf.GradientTape() as tape:
            predictions = model(x)
            loss = loss_object(y, predictions)
            scaled_loss = optimizer.get_scaled_loss(loss)
        scaled_gradients = tape.gradient(scaled_loss, model.trainable_variables)
        gradients = optimizer.get_unscaled_gradients(scaled_gradients)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        return loss, scaled_loss, scaled_gradients, gradients

    loss, scaled_loss, scaled, unscaled = train_step(x_train[:64], y_train[:64])
    assert loss.dtype == tf.float32
    np.testing.assert_allclose(float(scaled_loss), float(loss) * 2.0 ** 15, rtol=1e-6)
    for s, g in zip(scaled, unscaled):
        assert g.dtype == tf.float32  # gradients of float32 variables
        np.testing.assert_allclose(g.numpy(), s.numpy() / 2.0 ** 15, rtol=1e-6)

    losses = []
    for epoch in range(6):
        for start in range(0, 256, 64):
            loss, *_ = train_step(x_train[start:start + 64], y_train[start:start + 64])
        losses.append(float(loss))
    assert losses[-1] < losses[0]
    assert all(v.dtype == tf.float32 for v in model.trainable_variables)
