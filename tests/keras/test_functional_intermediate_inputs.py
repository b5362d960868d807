"""A functional model whose inputs are intermediate tensors of a graph (Keras 3 accepts them:
``keras.Model(inputs=encoded_features, outputs=...)`` in keras.io's FeatureSpace example). The
model runs the layers between those tensors and its outputs; the reference is the same layers
applied one after the other."""
import numpy as np
import pytest

import minitf as tf
from minitf import keras
from minitf.keras import layers


def test_a_model_from_an_intermediate_tensor_runs_only_the_layers_after_it():
    x = keras.Input(shape=(3,))
    first, second, third = layers.Dense(4), layers.Dense(2, activation="relu"), layers.Dense(1)
    hidden = first(x)
    out = third(second(hidden))
    tail = keras.Model(hidden, out)
    assert [layer.name for layer in tail.layers] == [second.name, third.name]
    h = np.random.default_rng(0).normal(size=(5, 4)).astype(np.float32)
    np.testing.assert_allclose(tail(h).numpy(), third(second(h)).numpy(), rtol=1e-6)
    # The whole graph still runs from its own input.
    whole = keras.Model(x, out)
    xs = np.ones((2, 3), np.float32)
    np.testing.assert_allclose(whole(xs).numpy(), third(second(first(xs))).numpy(), rtol=1e-6)


def test_two_intermediate_inputs_and_training():
    a, b = keras.Input(shape=(2,)), keras.Input(shape=(2,))
    ea, eb = layers.Dense(3)(a), layers.Dense(3)(b)
    merged = layers.Concatenate()([ea, eb])
    head = layers.Dense(1)
    model = keras.Model([ea, eb], head(merged))
    rng = np.random.default_rng(1)
    u, v = rng.normal(size=(64, 3)).astype(np.float32), rng.normal(size=(64, 3)).astype(np.float32)
    y = (u.sum(1, keepdims=True) - v.sum(1, keepdims=True)).astype(np.float32)
    model.compile(optimizer=keras.optimizers.Adam(0.05), loss="mse")
    history = model.fit([u, v], y, epochs=30, batch_size=16, verbose=0)
    assert history.history["loss"][-1] < 0.1 * history.history["loss"][0]
    np.testing.assert_allclose(model.predict([u, v], verbose=0),
                               head(np.concatenate([u, v], 1)).numpy(), rtol=1e-5, atol=1e-6)


def test_an_output_that_needs_a_tensor_before_the_inputs_is_disconnected():
    x = keras.Input(shape=(3,))
    hidden = layers.Dense(4)(x)
    skip = layers.Concatenate()([hidden, x])      # also needs x, which is not an input
    with pytest.raises(ValueError, match="Graph disconnected"):
        keras.Model(hidden, layers.Dense(1)(skip))
