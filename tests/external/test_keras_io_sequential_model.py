"""Port of the fit parts of the keras.io guide "The Sequential model"
(https://keras.io/guides/sequential_model/, keras-team/keras-io guides/sequential_model.py):
building with add()/pop(), then transfer learning by freezing layers (all but the last; a
frozen base model under a new head) and fitting, with random data of the guide's shapes.
The frozen weights must not move, and the trained layer must take the step numpy computes."""
import numpy as np
import pytest

import minitf as tf
from minitf import keras
from minitf.keras import layers


def _data(n=64, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, 784)).astype("float32"), rng.integers(0, 10, n)


def test_add_pop_and_fit():
    model = keras.Sequential()
    model.add(keras.Input(shape=(784,)))
    model.add(layers.Dense(2, activation="relu"))
    model.add(layers.Dense(3, activation="relu"))
    model.add(layers.Dense(4))
    assert len(model.layers) == 3
    model.pop()
    assert len(model.layers) == 2 and len(model.weights) == 4
    model.add(layers.Dense(10))
    model.compile(optimizer="adam",
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    x, y = _data()
    h = model.fit(x, y, batch_size=16, epochs=2, verbose=0)
    assert list(h.history) == ["loss", "accuracy"] and len(h.history["loss"]) == 2


def _softmax_ce_step(w, b, h, y, lr):
    """One SGD step of the last Dense layer on softmax cross-entropy (float64)."""
    logits = h @ w + b
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    g = (p - np.eye(w.shape[1])[y]) / len(y)
    return w - lr * h.T @ g, b - lr * g.sum(0)


def test_freeze_all_layers_except_the_last_one():
    tf.random.set_seed(0)
    model = keras.Sequential([
        keras.Input(shape=(784,)),
        layers.Dense(32, activation="relu"),
        layers.Dense(32, activation="relu"),
        layers.Dense(32, activation="relu"),
        layers.Dense(10),
    ])
    for layer in model.layers[:-1]:
        layer.trainable = False
    assert len(model.trainable_weights) == 2
    model.compile(optimizer=keras.optimizers.SGD(0.1),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    before = [w.astype(np.float64) for w in model.get_weights()]
    x, y = _data()
    model.fit(x, y, batch_size=64, epochs=1, verbose=0)
    after = model.get_weights()
    for a, b in zip(after[:6], before[:6]):  # frozen: bit for bit
        np.testing.assert_array_equal(a, b)
    h = x.astype(np.float64)
    for i in range(0, 6, 2):
        h = np.maximum(h @ before[i] + before[i + 1], 0)
    w1, b1 = _softmax_ce_step(before[6], before[7], h, y, 0.1)
    np.testing.assert_allclose(after[6], w1, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(after[7], b1, rtol=1e-4, atol=1e-6)


def test_frozen_base_model_under_a_new_head():
    tf.random.set_seed(1)
    base_model = keras.Sequential([keras.Input((784,)), layers.Dense(16, activation="relu"),
                                   layers.Dense(8, activation="relu")], name="base")
    base_model.trainable = False
    model = keras.Sequential([base_model, layers.Dense(10)])
    model.compile(optimizer=keras.optimizers.SGD(0.05),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    x, y = _data(32, seed=2)
    model(x[:1])
    base_before = base_model.get_weights()
    head_before = [w.astype(np.float64) for w in model.layers[-1].get_weights()]
    model.fit(x, y, batch_size=32, epochs=1, verbose=0)
    assert len(model.trainable_weights) == 2
    for a, b in zip(base_model.get_weights(), base_before):
        np.testing.assert_array_equal(a, b)
    feats = base_model.predict(x, verbose=0).astype(np.float64)
    w1, b1 = _softmax_ce_step(*head_before, feats, y, 0.05)
    np.testing.assert_allclose(model.layers[-1].get_weights()[0], w1, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(model.layers[-1].get_weights()[1], b1, rtol=1e-4, atol=1e-6)
