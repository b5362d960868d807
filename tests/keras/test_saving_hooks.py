"""Keras 3's saving hooks: ``keras.Variable``, ``save_own_variables``/``load_own_variables``
(in ``.weights.h5`` and ``.keras`` files), ``save_assets``/``load_assets``,
``get_build_config``/``build_from_config``, ``get_compile_config``/``compile_from_config``, and
the ``serialize_keras_object`` layouts of functions and unregistered classes.

The expected h5 keys and zip names are what Keras 3.15 writes for the same layers (generated
with the Keras venv: ``KERAS_BACKEND=numpy python``, the classes below with ``import keras``).
"""
import json
import logging
import os
import zipfile

import h5py
import numpy as np
import pytest

from minitf import keras


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    saved = dict(keras.saving.get_custom_objects())
    yield
    keras.saving.get_custom_objects().clear()
    keras.saving.get_custom_objects().update(saved)


def _datasets(path):
    found = {}
    with h5py.File(path, "r") as f:
        f.visititems(lambda n, o: found.__setitem__(n, o.shape)
                     if isinstance(o, h5py.Dataset) else None)
    return found


class WithVariable(keras.layers.Dense):
    def __init__(self, units, **kwargs):
        super().__init__(units, **kwargs)
        self.my_variable = keras.Variable(np.arange(units, dtype="float64") + 0.5,
                                          name="my_variable")

    def save_own_variables(self, store):
        super().save_own_variables(store)
        store["variables"] = self.my_variable.numpy()

    def load_own_variables(self, store):
        self.my_variable.assign(store["variables"])
        self.kernel.assign(store["0"])
        self.bias.assign(store["1"])

    def call(self, inputs):
        return super().call(inputs) + self.my_variable


class WithAssets(keras.layers.Dense):
    def __init__(self, vocab=None, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.vocab = vocab

    def get_config(self):
        return {**super().get_config(), "vocab": None}

    def save_assets(self, dir_path):
        with open(os.path.join(dir_path, "v.txt"), "w") as f:
            f.write(self.vocab)

    def load_assets(self, dir_path):
        with open(os.path.join(dir_path, "v.txt")) as f:
            self.vocab = f.read()


class Counter(keras.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.count = keras.Variable(0.0, trainable=False, name="count")

    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1], 2), initializer="ones", name="w")

    def call(self, x):
        return keras.ops.matmul(x, self.w)

    def save_own_variables(self, store):
        store["w"] = self.w.numpy()
        store["doubled_count"] = np.array(self.count.numpy() * 2)

    def load_own_variables(self, store):
        self.w.assign(store["w"])
        self.count.assign(store["doubled_count"][()] + 1)


# Keras 3.15: Sequential([Input((10,)), WithVariable(1), WithAssets(units=2), Counter()])
KERAS_KEYS = {"layers/with_variable/vars/0": (10, 1), "layers/with_variable/vars/1": (1,),
              "layers/with_variable/vars/variables": (1,),
              "layers/with_assets/vars/0": (1, 2), "layers/with_assets/vars/1": (2,),
              "layers/counter/vars/w": (2, 2), "layers/counter/vars/doubled_count": ()}
KERAS_ZIP_NAMES = ["metadata.json", "config.json", "model.weights.h5",
                   "assets/layers/with_assets/v.txt"]
CUSTOM = {"WithVariable": WithVariable, "WithAssets": WithAssets, "Counter": Counter}


def _model():
    rng = np.random.default_rng(0)
    model = keras.Sequential([keras.Input((10,)), WithVariable(1), WithAssets("hi", units=2),
                              Counter(name="counter")])
    model.set_weights([rng.normal(size=w.shape).astype("float32") for w in model.weights])
    model.layers[0].my_variable.assign([0.5])
    model.layers[2].count.assign(5.0)
    return model


def test_keras_variable():
    v = keras.Variable(np.zeros(3), name="v")
    assert v.dtype == "float32" and v.shape == (3,) and v.name == "v" and v.trainable
    assert keras.Variable(1).dtype == "int32" and keras.Variable(True).dtype == "bool"
    assert keras.Variable(np.zeros(2, "float16")).dtype == "float16"
    ones = keras.Variable("ones", shape=(2, 3), dtype="float64", trainable=False)
    np.testing.assert_array_equal(ones.numpy(), np.ones((2, 3)))
    assert ones.dtype == "float64" and not ones.trainable
    init = keras.Variable(keras.initializers.Constant(2.0), shape=(2,))
    np.testing.assert_array_equal(init.numpy(), [2.0, 2.0])
    with pytest.raises(ValueError, match="shape"):
        keras.Variable("zeros")
    with pytest.raises(ValueError, match="/"):
        keras.Variable(0.0, name="a/b")
    assert repr(keras.Variable(0.0, name="c")) == (
        "<Variable path=c, shape=(), dtype=float32, value=0.0>")
    # tracked as a layer attribute
    layer = WithVariable(2)
    layer.build((None, 3))
    assert len(layer.trainable_weights) == 3
    assert any(v is layer.my_variable for v in layer.trainable_weights)
    assert len(Counter().non_trainable_weights) == 1


def test_weights_h5_layout_matches_keras_and_hooks_load():
    model = _model()
    model.save_weights("m.weights.h5")
    assert _datasets("m.weights.h5") == KERAS_KEYS
    with h5py.File("m.weights.h5", "r") as f:
        assert f["layers/counter/vars/doubled_count"][()] == 10.0
        np.testing.assert_array_equal(f["layers/with_variable/vars/variables"][()], [0.5])
    fresh = keras.Sequential([keras.Input((10,)), WithVariable(1), WithAssets("x", units=2),
                              Counter(name="counter")])
    fresh.load_weights("m.weights.h5")
    assert float(fresh.layers[2].count.numpy()) == 11.0  # 5 * 2 + 1, done by the hooks
    for a, b in zip(fresh.layers[0].weights + fresh.layers[1].weights,
                    model.layers[0].weights + model.layers[1].weights):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    np.testing.assert_array_equal(fresh.layers[2].w.numpy(), model.layers[2].w.numpy())


def test_keras_archive_hooks_assets_and_layout():
    model = _model()
    x = np.random.default_rng(1).random((4, 10)).astype("float32")
    model.save("m.keras")
    with zipfile.ZipFile("m.keras") as zf:
        assert zf.namelist() == KERAS_ZIP_NAMES
        assert zf.read("assets/layers/with_assets/v.txt") == b"hi"
        zf.extract("model.weights.h5", "x")
    assert _datasets(os.path.join("x", "model.weights.h5")) == KERAS_KEYS
    loaded = keras.models.load_model("m.keras", custom_objects=CUSTOM)
    assert loaded.layers[1].vocab == "hi"  # restored by load_assets, not the config
    assert float(loaded.layers[2].count.numpy()) == 11.0
    np.testing.assert_array_equal(loaded.layers[0].my_variable.numpy(), [0.5])
    np.testing.assert_array_equal(loaded(x).numpy(), model(x).numpy())


def test_default_hooks_and_dense_super_call():
    dense = keras.layers.Dense(3)
    dense.build((None, 2))
    store = {}
    dense.save_own_variables(store)
    assert list(store) == ["0", "1"] and store["0"] is dense.kernel
    other = keras.layers.Dense(3)
    other.build((None, 2))
    other.load_own_variables({k: v.numpy() for k, v in store.items()})
    np.testing.assert_array_equal(other.kernel.numpy(), dense.kernel.numpy())
    with pytest.raises(ValueError, match="expected 2 variables"):
        other.load_own_variables({"0": dense.kernel.numpy()})
    with pytest.raises(ValueError, match="shape"):
        other.load_own_variables({"0": np.zeros((5, 3)), "1": np.zeros(3)})
    # from an override, Dense's default stores kernel and bias only (Keras' Dense does)
    layer = WithVariable(2)
    layer.build((None, 3))
    store = {}
    layer.save_own_variables(store)
    assert list(store) == ["0", "1", "variables"]


def test_extra_variable_without_hooks_round_trips():
    # no hooks: minitf stores every own variable, "0".."2" (Keras 3.15 writes only "0", "1"
    # here, from Dense.save_own_variables, and then refuses to load its own file)
    class Plus(keras.layers.Dense):
        def __init__(self, units, **kwargs):
            super().__init__(units, **kwargs)
            self.shift = keras.Variable(np.zeros(units), name="shift")

    model = keras.Sequential([keras.Input((3,)), Plus(2, name="plus")])
    model.layers[0].shift.assign([1.0, -1.0])
    model.save_weights("p.weights.h5")
    assert _datasets("p.weights.h5") == {"layers/plus/vars/0": (3, 2),
                                         "layers/plus/vars/1": (2,),
                                         "layers/plus/vars/2": (2,)}
    fresh = keras.Sequential([keras.Input((3,)), Plus(2, name="plus")])
    fresh.load_weights("p.weights.h5")
    np.testing.assert_array_equal(fresh.layers[0].shift.numpy(), [1.0, -1.0])


def test_failing_load_hook_raises_or_is_skipped(caplog):
    def load_own_variables(self, store):
        raise KeyError("nope")

    # the same class name (the layer's group is named after it)
    Broken = type("Counter", (Counter,), {"load_own_variables": load_own_variables})

    model = keras.Sequential([keras.Input((3,)), Counter(name="counter")])
    model.save_weights("c.weights.h5")
    fresh = keras.Sequential([keras.Input((3,)), Broken(name="counter")])
    with pytest.raises(ValueError, match="load_own_variables"):
        fresh.load_weights("c.weights.h5")
    with caplog.at_level(logging.WARNING, logger="minitf"):
        fresh.load_weights("c.weights.h5", skip_mismatch=True)
    assert "load_own_variables failed" in caplog.text


def test_build_config_serialized_and_used_before_weights():
    dense = keras.layers.Dense(3, name="d")
    dense.build((None, 5))
    entry = keras.saving.serialize_keras_object(dense)
    assert entry["build_config"] == {"input_shape": (None, 5)}
    called = keras.layers.Dense(2)
    called(np.zeros((4, 7), "float32"))
    assert called.get_build_config() == {"input_shape": (None, 7)}
    assert keras.layers.Dense(2).get_build_config() is None
    assert "build_config" not in keras.saving.serialize_keras_object(keras.layers.Dense(2))
    new = keras.saving.deserialize_keras_object(json.loads(json.dumps(entry)))
    assert new.built and new.kernel.shape == (5, 3)

    class TwoArgBuild(keras.layers.Layer):
        def build(self, input_shape, init):
            self.init = init
            self.w = self.add_weight(shape=(input_shape[-1], 2), initializer=init)

        def call(self, x):
            return keras.ops.matmul(x, self.w)

        def get_build_config(self):
            return {"input_shape": self.shape, "init": self.init}

        def build_from_config(self, config):
            self.shape = tuple(config["input_shape"])
            self.build(config["input_shape"], config["init"])

    layer = TwoArgBuild(name="two")
    layer.shape = (4,)
    layer.build((4,), "ones")
    layer.w.assign(np.arange(8.0).reshape(4, 2))
    model = keras.Sequential([layer])
    x = np.ones((2, 4), "float32")
    y = model(x).numpy()
    model.save("b.keras")
    with zipfile.ZipFile("b.keras") as zf:
        config = json.loads(zf.read("config.json"))
    assert config["config"]["layers"][1]["build_config"] == {"input_shape": [4], "init": "ones"}
    loaded = keras.models.load_model("b.keras", custom_objects={"TwoArgBuild": TwoArgBuild})
    assert loaded.layers[0].init == "ones"
    np.testing.assert_array_equal(loaded(x).numpy(), y)


def test_compile_config_with_objects_is_serialized():
    @keras.saving.register_keras_serializable(package="hooks")
    def half_mse(y_true, y_pred):
        return keras.ops.mean(keras.ops.square(y_pred - y_true), axis=-1) / 2.0

    class Custom(keras.Model):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.dense = keras.layers.Dense(1)

        def call(self, x):
            return self.dense(x)

        def compile(self, optimizer, loss_fn):
            super().compile(optimizer=optimizer, loss=loss_fn)
            self.loss_fn = loss_fn

        def get_compile_config(self):
            return {"optimizer": self.optimizer, "loss_fn": self.loss_fn}

        def compile_from_config(self, config):
            self.received = config
            self.compile(keras.saving.deserialize_keras_object(config["optimizer"]),
                         keras.saving.deserialize_keras_object(config["loss_fn"]))

    model = Custom()
    model.compile(keras.optimizers.SGD(0.5), half_mse)
    model(np.zeros((1, 3), "float32"))
    model.save("c.keras")
    with zipfile.ZipFile("c.keras") as zf:
        compile_config = json.loads(zf.read("config.json"))["compile_config"]
    assert compile_config["loss_fn"] == {"module": "builtins", "class_name": "function",
                                         "config": "hooks>half_mse",
                                         "registered_name": "function"}
    assert compile_config["optimizer"]["class_name"] == "SGD"
    loaded = keras.models.load_model("c.keras", custom_objects={"Custom": Custom})
    assert loaded.received == compile_config and loaded.loss_fn is half_mse
    assert isinstance(loaded.optimizer, keras.optimizers.SGD)
    assert float(loaded.optimizer.learning_rate) == pytest.approx(0.5)


def test_function_and_unregistered_class_layouts():
    @keras.saving.register_keras_serializable(package="pkg")
    def f(x):
        return x

    def g(x):
        return x

    s = keras.saving.serialize_keras_object
    assert s(f) == {"module": "builtins", "class_name": "function", "config": "pkg>f",
                    "registered_name": "function"}
    assert s(g) == {"module": "builtins", "class_name": "function", "config": "g",
                    "registered_name": "function"}
    assert s(keras.activations.relu) == {"module": "builtins", "class_name": "function",
                                         "config": "relu", "registered_name": "function"}
    assert keras.saving.deserialize_keras_object(s(keras.activations.relu)) is \
        keras.activations.relu
    assert keras.saving.deserialize_keras_object(s(f)) is f
    assert keras.saving.deserialize_keras_object(s(g), custom_objects={"g": g}) is g
    assert s((1, (2, None))) == (1, (2, None)) and s([1, (2,)]) == [1, (2,)]
    # an unregistered custom layer: registered_name is its class name; builtins keep None
    assert s(Counter())["registered_name"] == "Counter"
    assert s(keras.layers.Dense(1))["registered_name"] is None


def test_unsafe_asset_path_is_refused():
    model = keras.Sequential([keras.Input((10,)), WithAssets("hi", units=2)])
    model.save("a.keras")
    with zipfile.ZipFile("a.keras") as zf:
        entries = {n: zf.read(n) for n in zf.namelist()}
    entries["assets/layers/with_assets/../../../evil.txt"] = b"x"
    with zipfile.ZipFile("bad.keras", "w") as zf:
        for name, data in entries.items():
            zf.writestr(name, data)
    with pytest.raises(ValueError, match="unsafe asset path"):
        keras.models.load_model("bad.keras", custom_objects=CUSTOM)
    assert not os.path.exists("evil.txt")
