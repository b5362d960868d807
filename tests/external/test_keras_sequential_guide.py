"""Port of keras.io's guide "The Sequential model" (https://keras.io/guides/sequential_model/),
model-building parts.

Behaviours and numbers from the guide: a Sequential model equals the composition of its
layers, ``add``/``pop``, lazy weight creation, an ``Input`` that is not listed in ``layers``,
the output shapes of the "add layers and watch the summary" workflow ((None, 123, 123, 32),
(None, 121, 121, 32), (None, 40, 40, 32), then (None, 4, 4, 32)), feature extraction with
``layer.output`` and freezing all layers but the last.
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
