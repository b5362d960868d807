"""Port of keras.io's guide "The Sequential model" (https://keras.io/guides/sequential_model/),
model building, then fitting.

Behaviours and numbers from the guide: a Sequential model equals the composition of its
layers, ``add``/``pop``, lazy weight creation, an ``Input`` that is not listed in ``layers``,
the output shapes of the "add layers and watch the summary" workflow ((None, 123, 123, 32),
(None, 121, 121, 32), (None, 40, 40, 32), then (None, 4, 4, 32)), feature extraction with
``layer.output`` and freezing all layers but the last. Then the fit parts: transfer learning
by freezing layers (all but the last; a frozen base model under a new head), fitting on random
data of the guide's shapes: frozen weights must not move, and the trained layer must take the
step numpy computes.
"""
import numpy as np

import minitf as tf
from minitf import keras
from minitf.keras import layers


def test_sequential_equals_composition_of_layers():
    model = keras.Sequential([
        layers.Dense(2, activation="relu", name="layer1"),
        layers.Dense(3, activation="relu", name="layer2"),
        layers.Dense(4, name="layer3"),
    ])
    x = np.ones((3, 3), np.float32)
    y = model(x)
    layer1, layer2, layer3 = (model.get_layer(n) for n in ("layer1", "layer2", "layer3"))
    np.testing.assert_allclose(y.numpy(), layer3(layer2(layer1(x))).numpy(), rtol=1e-6)
    assert [layer.name for layer in model.layers] == ["layer1", "layer2", "layer3"]


def test_add_pop_and_name():
    model = keras.Sequential(name="my_sequential")
    model.add(layers.Dense(2, activation="relu"))
    model.add(layers.Dense(3, activation="relu"))
    model.add(layers.Dense(4))
    model.pop()
    assert len(model.layers) == 2
    assert model.name == "my_sequential"


def test_weights_are_created_on_first_call():
    layer = layers.Dense(3)
    assert layer.weights == []
    layer(np.ones((1, 4), np.float32))
    assert [tuple(w.shape) for w in layer.weights] == [(4, 3), (3,)]

    model = keras.Sequential([layers.Dense(2, activation="relu"), layers.Dense(3)])
    assert model.weights == []
    model(np.ones((1, 4), np.float32))
    assert len(model.weights) == 4


def test_input_object_is_not_a_layer():
    model = keras.Sequential()
    model.add(keras.Input(shape=(4,)))
    model.add(layers.Dense(2, activation="relu"))
    assert len(model.layers) == 1
    assert model.count_params() == 10
    legacy = keras.Sequential([layers.Dense(2, activation="relu", input_shape=(4,))])
    assert len(legacy.weights) == 2 and legacy.count_params() == 10


def test_add_layers_and_watch_output_shapes():
    model = keras.Sequential()
    model.add(keras.Input(shape=(250, 250, 3)))
    model.add(layers.Conv2D(32, 5, strides=2, activation="relu"))
    model.add(layers.Conv2D(32, 3, activation="relu"))
    model.add(layers.MaxPooling2D(3))
    assert [tuple(layer.output_shape) for layer in model.layers] == [
        (None, 123, 123, 32), (None, 121, 121, 32), (None, 40, 40, 32)]
    model.add(layers.Conv2D(32, 3, activation="relu"))
    model.add(layers.Conv2D(32, 3, activation="relu"))
    model.add(layers.MaxPooling2D(3))
    model.add(layers.Conv2D(32, 3, activation="relu"))
    model.add(layers.Conv2D(32, 3, activation="relu"))
    model.add(layers.MaxPooling2D(2))
    assert tuple(model.output_shape) == (None, 4, 4, 32)
    model.add(layers.GlobalMaxPooling2D())
    model.add(layers.Dense(10))
    assert tuple(model.output_shape) == (None, 10)
    # 2432 + 5 * 9248 + 330 parameters
    assert model.count_params() == 2432 + 5 * 9248 + 330
    lines = []
    model.summary(print_fn=lines.append)
    assert any("(None, 40, 40, 32)" in line for line in lines)


def test_feature_extraction_with_a_sequential_model():
    initial_model = keras.Sequential([
        keras.Input(shape=(40, 40, 3)),
        layers.Conv2D(8, 5, strides=2, activation="relu"),
        layers.Conv2D(8, 3, activation="relu", name="my_intermediate_layer"),
        layers.Conv2D(8, 3, activation="relu"),
    ])
    feature_extractor = keras.Model(
        inputs=initial_model.inputs,
        outputs=initial_model.get_layer(name="my_intermediate_layer").output)
    x = np.random.default_rng(0).uniform(size=(1, 40, 40, 3)).astype("float32")
    features = feature_extractor(x)
    expected = initial_model.layers[1](initial_model.layers[0](x))
    np.testing.assert_allclose(features.numpy(), expected.numpy(), rtol=1e-6)


def test_transfer_learning_freezes_all_but_last_layer():
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
    assert len(model.non_trainable_weights) == 6
    x = np.ones((2, 784), np.float32)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(model(x))
    grads = tape.gradient(loss, model.trainable_weights)
    assert [tuple(g.shape) for g in grads] == [(32, 10), (10,)]


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
