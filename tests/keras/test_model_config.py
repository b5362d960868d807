"""Functional and Sequential ``get_config``/``from_config`` (Keras 3's layout) and
``keras.layers.serialize``/``deserialize``."""
import json

import numpy as np
import pytest

from minitf import keras
from minitf.keras import layers


def _same_outputs(a, b, inputs):
    out_a, out_b = a(inputs), b(inputs)
    if isinstance(out_a, dict):
        for key in out_a:
            np.testing.assert_allclose(out_a[key].numpy(), out_b[key].numpy(), rtol=1e-6)
    else:
        np.testing.assert_allclose(out_a.numpy(), out_b.numpy(), rtol=1e-6)


def test_functional_round_trip_shared_nested_dict_outputs():
    a = keras.Input((4,), name="a")
    b = keras.Input((4,), name="b")
    shared = layers.Dense(3, name="shared")
    x = layers.concatenate([shared(a), shared(b)])
    inner_input = keras.Input((6,))
    inner = keras.Model(inner_input, layers.Dense(2)(inner_input), name="inner")
    model = keras.Model([a, b], {"o": inner(x), "p": layers.Dense(1, name="p")(x)}, name="m")
    config = json.loads(json.dumps(model.get_config()))  # plain JSON
    shared_entry = next(e for e in config["layers"] if e["name"] == "shared")
    assert len(shared_entry["inbound_nodes"]) == 2
    assert shared_entry["inbound_nodes"][1]["args"][0]["config"]["keras_history"] == ["b", 0, 0]
    assert config["input_layers"] == [["a", 0, 0], ["b", 0, 0]]
    assert config["output_layers"] == {"o": ["inner", 0, 0], "p": ["p", 0, 0]}
    clone = keras.Model.from_config(config)
    assert [layer.name for layer in clone.layers] == [layer.name for layer in model.layers]
    clone.set_weights(model.get_weights())
    rng = np.random.default_rng(0)
    _same_outputs(model, clone, [rng.normal(size=(2, 4)).astype("float32"),
                                 rng.normal(size=(2, 4)).astype("float32")])


def test_sequential_round_trip():
    model = keras.Sequential([keras.Input((3,)), layers.Dense(2, kernel_regularizer="l2"),
                              layers.Dropout(0.1), layers.Dense(1)], name="seq")
    config = json.loads(json.dumps(model.get_config()))
    assert [e["class_name"] for e in config["layers"]] == ["InputLayer", "Dense", "Dropout",
                                                            "Dense"]
    clone = keras.Sequential.from_config(config)
    assert clone.name == "seq" and clone.count_params() == model.count_params()
    assert clone.layers[0].kernel_regularizer.l2 == pytest.approx(0.01)
    clone.set_weights(model.get_weights())
    _same_outputs(model, clone, np.ones((2, 3), np.float32))


def test_layer_serialize_deserialize():
    dense = layers.Dense(4, activation="relu", name="d")
    entry = layers.serialize(dense)
    assert entry["class_name"] == "Dense" and entry["module"] == "keras.layers"
    clone = layers.deserialize(entry)
    assert isinstance(clone, layers.Dense) and clone.units == 4 and clone.name == "d"
    with pytest.raises(ValueError, match="unknown class"):
        layers.deserialize({"class_name": "NoSuchLayer", "config": {}})


def test_models_with_lambda_refuse_to_serialize():
    inputs = keras.Input((2,))
    model = keras.Model(inputs, layers.Lambda(lambda t: t + 1)(inputs))
    with pytest.raises(ValueError, match="never serializes"):
        model.get_config()


def test_clone_model_has_new_weights_and_the_same_architecture():
    a = keras.Input((3,))
    model = keras.Model(a, layers.Dense(4, activation="relu")(layers.Dense(5)(a)))
    clone = keras.models.clone_model(model)
    assert clone.count_params() == model.count_params()
    assert not np.array_equal(clone.layers[1].kernel.numpy(), model.layers[1].kernel.numpy())
    clone.set_weights(model.get_weights())
    _same_outputs(model, clone, np.ones((2, 3), np.float32))
    seq = keras.Sequential([keras.Input((3,)), layers.Dense(2), layers.Dense(1)])
    replaced = keras.models.clone_model(
        seq, clone_function=lambda layer: layers.Dense(layer.units, activation="tanh"))
    assert [layer.activation.__name__ for layer in replaced.layers] == ["tanh", "tanh"]
    assert replaced.count_params() == seq.count_params()
