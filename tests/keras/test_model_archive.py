"""``model.save("m.keras")`` / ``keras.models.load_model``: Keras 3's zip layout, Sequential,
Functional and registered subclassed models, custom objects, and no code execution on load.

The archive layout (``config.json``, ``metadata.json``, ``model.weights.h5``) and the config
entries (``module``, ``class_name``, ``config``, ``registered_name``, ``build_config``,
Functional ``inbound_nodes`` with ``__keras_tensor__`` references) follow Keras 3's
``keras/src/saving/saving_lib.py`` and ``serialization_lib.py``.
"""
import json
import zipfile

import numpy as np
import pytest

from minitf import keras
from minitf.keras import layers

X = np.random.default_rng(0).standard_normal((3, 6)).astype("float32")


def _same_outputs(a, b, x=X):
    np.testing.assert_array_equal(a(x, training=False).numpy(), b(x, training=False).numpy())


def _trained_bn(model, x=X):
    model(x, training=True)  # moves the BatchNorm statistics away from their initial values
    return model


def test_sequential_round_trip_and_archive_layout(tmp_path):
    model = _trained_bn(keras.Sequential([
        keras.Input((6,)), layers.Dense(5, activation="relu", kernel_initializer="he_normal"),
        layers.BatchNormalization(momentum=0.5), layers.Dropout(0.3), layers.Dense(2)]))
    path = tmp_path / "m.keras"
    model.save(path)
    with zipfile.ZipFile(path) as zf:
        assert sorted(zf.namelist()) == ["config.json", "metadata.json", "model.weights.h5"]
        config = json.loads(zf.read("config.json"))
        assert json.loads(zf.read("metadata.json"))["producer"] == "minitf"
    assert config["class_name"] == "Sequential" and config["module"] == "keras"
    entries = config["config"]["layers"]
    assert [e["class_name"] for e in entries] == ["InputLayer", "Dense", "BatchNormalization",
                                                  "Dropout", "Dense"]
    assert entries[0]["config"]["batch_shape"] == [None, 6]
    assert entries[1]["config"]["activation"] == "relu"
    assert entries[2]["config"]["momentum"] == 0.5
    loaded = keras.models.load_model(path)
    assert isinstance(loaded, keras.Sequential)
    assert [type(a) for a in loaded.layers] == [type(b) for b in model.layers]
    assert loaded.layers[1].momentum == 0.5 and loaded.layers[2].rate == 0.3
    _same_outputs(model, loaded)


def test_sequential_built_by_a_call(tmp_path):
    model = keras.Sequential([layers.Dense(4), layers.Dense(2)])
    model(X)
    model.save(tmp_path / "m.keras")
    _same_outputs(model, keras.models.load_model(tmp_path / "m.keras"))


def test_functional_round_trip_with_a_shared_layer(tmp_path):
    inputs = keras.Input((6,))
    shared = layers.Dense(6, activation="tanh")
    x = shared(shared(inputs))  # one layer, two calls
    x = layers.LayerNormalization()(x)
    model = keras.Model(inputs, layers.Dense(3)(x))
    path = tmp_path / "f.keras"
    model.save(path)
    loaded = keras.models.load_model(path)
    assert len(loaded.layers) == len(model.layers) == 4
    _same_outputs(model, loaded)


def test_cnn_round_trip(tmp_path):
    model = _trained_bn(keras.Sequential([
        keras.Input((8, 8, 1)), layers.Conv2D(3, 3, padding="same", activation="relu"),
        layers.BatchNormalization(), layers.MaxPooling2D(), layers.Flatten(), layers.Dense(2)]),
        np.ones((2, 8, 8, 1), "float32"))
    model.save(tmp_path / "c.keras")
    loaded = keras.models.load_model(tmp_path / "c.keras")
    x = np.random.default_rng(1).standard_normal((2, 8, 8, 1)).astype("float32")
    _same_outputs(model, loaded, x)


@keras.saving.register_keras_serializable(package="Tests")
class Tower(keras.Model):
    def __init__(self, width=4, classes=2, **kwargs):
        super().__init__(**kwargs)
        self.width, self.classes = width, classes
        self.hidden = layers.Dense(width, activation="relu")
        self.out = layers.Dense(classes)

    def call(self, x, training=None):
        return self.out(self.hidden(x))

    def get_config(self):
        return {**super().get_config(), "width": self.width, "classes": self.classes}


class Unregistered(keras.Model):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.dense = layers.Dense(2)

    def call(self, x):
        return self.dense(x)


def test_registered_subclassed_model(tmp_path):
    assert keras.saving.get_custom_objects()["Tests>Tower"] is Tower
    model = Tower(width=7, classes=3)
    model(X)
    model.save(tmp_path / "t.keras")
    with zipfile.ZipFile(tmp_path / "t.keras") as zf:
        config = json.loads(zf.read("config.json"))
    assert config["registered_name"] == "Tests>Tower"
    assert config["build_config"] == {"input_shape": [None, 6]}
    loaded = keras.models.load_model(tmp_path / "t.keras")
    assert type(loaded) is Tower and loaded.width == 7 and loaded.classes == 3
    _same_outputs(model, loaded)


def test_custom_objects_and_unknown_classes(tmp_path):
    model = Unregistered()
    model(X)
    model.save(tmp_path / "u.keras")
    with pytest.raises(ValueError, match=r"unknown class 'Unregistered'.*custom_objects"):
        keras.models.load_model(tmp_path / "u.keras")
    loaded = keras.models.load_model(tmp_path / "u.keras",
                                     custom_objects={"Unregistered": Unregistered})
    _same_outputs(model, loaded)
    with keras.saving.custom_object_scope({"Unregistered": Unregistered}):
        _same_outputs(model, keras.models.load_model(tmp_path / "u.keras"))


def _archive_with(path, config):
    weights = (path.parent / "src.keras")
    keras.Sequential([keras.Input((2,)), layers.Dense(1)]).save(weights)
    with zipfile.ZipFile(weights) as src, zipfile.ZipFile(path, "w") as zf:
        zf.writestr("config.json", json.dumps(config))
        zf.writestr("metadata.json", "{}")
        zf.writestr("model.weights.h5", src.read("model.weights.h5"))


@pytest.mark.parametrize("entry", [
    {"module": "keras.layers", "class_name": "Lambda",
     "config": {"function": {"class_name": "__lambda__", "config": {"code": "4wEAAA=="}}}},
    {"module": "keras.layers", "class_name": "Dense",
     "config": {"units": 1, "activation": {"class_name": "__lambda__",
                                           "config": {"code": "4wEAAA=="}}}},
])
def test_code_in_a_config_is_refused(tmp_path, entry):
    path = tmp_path / "evil.keras"
    _archive_with(path, {"module": "keras", "class_name": "Sequential",
                         "config": {"name": "s", "layers": [
                             {"module": "keras.layers", "class_name": "InputLayer",
                              "config": {"batch_shape": [None, 2]}}, entry]}})
    for safe_mode in (True, False):
        with pytest.raises(ValueError, match="never executes code"):
            keras.models.load_model(path, safe_mode=safe_mode)


def test_bad_files_give_clear_errors(tmp_path):
    model = keras.Sequential([keras.Input((6,)), layers.Dense(2)])
    with pytest.raises(ValueError, match=r"must end in '\.keras' \(or '\.h5'"):
        model.save(tmp_path / "m.json")
    junk = tmp_path / "junk.keras"
    junk.write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="not a .keras archive"):
        keras.models.load_model(junk)
    with pytest.raises(FileNotFoundError):
        keras.models.load_model(tmp_path / "absent.keras")
    model.save(tmp_path / "m.keras")
    other = keras.Sequential([keras.Input((6,)), layers.Dense(3)])
    with pytest.raises(ValueError, match=r"model \(6, 3\), file \(6, 2\)"):
        other.load_weights(tmp_path / "m.keras")
    same = keras.Sequential([keras.Input((6,)), layers.Dense(2)])
    same.load_weights(tmp_path / "m.keras")  # load_weights reads a .keras archive's weights
    _same_outputs(model, same)


def test_get_config_from_config_rebuild_the_architecture():
    seq = keras.Sequential([keras.Input((6,)), layers.Dense(4, activation="relu"),
                            layers.Dense(2)])
    config = seq.get_config()
    assert [e["class_name"] for e in config["layers"]] == ["InputLayer", "Dense", "Dense"]
    clone = keras.Sequential.from_config(config)
    assert [a.units for a in clone.layers] == [4, 2] and clone.built
    clone.set_weights(seq.get_weights())
    _same_outputs(seq, clone)
    inputs = keras.Input((6,))
    fun = keras.Model(inputs, layers.Dense(3)(layers.Dense(5)(inputs)))
    config = fun.get_config()
    assert config["input_layers"] == [fun.layers[0].name, 0, 0]
    copy = type(fun).from_config(config)
    copy.set_weights(fun.get_weights())
    _same_outputs(fun, copy)
