"""Port of the keras.io guide "Save, serialize, and export models"
(https://keras.io/guides/serialization_and_saving/, keras-team/keras-io
guides/serialization_and_saving.py), with only the imports changed and small random data:
whole-model ``.keras`` saving that keeps the compile configuration and optimizer state, custom
layers and functions registered, passed as ``custom_objects`` or in a
``custom_object_scope``, ``get_config``/``from_config`` of layers and models,
``to_json``/``model_from_json``, ``serialize_keras_object`` of a regularizer, weights moved
between layers and models in memory and through ``.weights.h5`` files, and the appendix's
custom objects whose configs hold other Keras objects. Predictions are compared against the
original model and against a float64 numpy forward pass.
"""
import numpy as np
import pytest

import minitf as tf  # noqa: F401
from minitf import keras
from minitf.keras import ops


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    saved = dict(keras.saving.get_custom_objects())
    yield
    keras.saving.get_custom_objects().clear()
    keras.saving.get_custom_objects().update(saved)


def get_model():
    inputs = keras.Input(shape=(32,))
    outputs = keras.layers.Dense(1)(inputs)
    model = keras.Model(inputs, outputs)
    model.compile(optimizer=keras.optimizers.Adam(), loss="mean_squared_error")
    return model


def test_whole_model_round_trip_resumes_training_identically():
    rng = np.random.default_rng(0)
    test_input, test_target = rng.random((128, 32)), rng.random((128, 1))
    model = get_model()
    model.fit(test_input, test_target, verbose=0)
    model.save("my_model.keras")
    reconstructed_model = keras.models.load_model("my_model.keras")
    np.testing.assert_allclose(model.predict(test_input, verbose=0),
                               reconstructed_model.predict(test_input, verbose=0))
    # compiled on load, with the Adam state: four steps of 32 so far
    assert reconstructed_model.compiled
    assert isinstance(reconstructed_model.optimizer, keras.optimizers.Adam)
    assert int(reconstructed_model.optimizer.iterations) == 4
    for a, b in zip(model.optimizer.variables, reconstructed_model.optimizer.variables):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    h1 = model.fit(test_input, test_target, shuffle=False, verbose=0).history
    h2 = reconstructed_model.fit(test_input, test_target, shuffle=False, verbose=0).history
    assert h1["loss"] == h2["loss"]
    for a, b in zip(model.get_weights(), reconstructed_model.get_weights()):
        np.testing.assert_array_equal(a, b)
    # keras.models.save_model is the same as model.save; compile=False leaves it uncompiled
    keras.models.save_model(model, "again.keras")
    assert not keras.models.load_model("again.keras", compile=False).compiled


def _register_custom_objects():
    keras.saving.get_custom_objects().clear()

    @keras.saving.register_keras_serializable(package="MyLayers")
    class CustomLayer(keras.layers.Layer):
        def __init__(self, factor):
            super().__init__()
            self.factor = factor

        def call(self, x):
            return x * self.factor

        def get_config(self):
            return {"factor": self.factor}

    @keras.saving.register_keras_serializable(package="my_package", name="custom_fn")
    def custom_fn(x):
        return x ** 2

    return CustomLayer, custom_fn


def _custom_model(CustomLayer, custom_fn):
    inputs = keras.Input(shape=(4,))
    mid = CustomLayer(0.5)(inputs)
    outputs = keras.layers.Dense(1, activation=custom_fn)(mid)
    model = keras.Model(inputs, outputs)
    model.compile(optimizer="rmsprop", loss="mean_squared_error")
    return model


def test_registered_custom_layer_and_function():
    CustomLayer, custom_fn = _register_custom_objects()
    rng = np.random.default_rng(1)
    test_input = rng.random((4, 4))
    model = _custom_model(CustomLayer, custom_fn)
    model.fit(rng.random((4, 4)), rng.random((4, 1)), verbose=0)
    model.save("custom_model.keras")
    expected = model.predict(test_input, verbose=0)
    kernel, bias = (w.astype(np.float64) for w in model.layers[-1].get_weights())
    np.testing.assert_allclose(expected, (0.5 * test_input @ kernel + bias) ** 2, rtol=1e-5)

    reconstructed = keras.models.load_model("custom_model.keras")
    np.testing.assert_allclose(expected, reconstructed.predict(test_input, verbose=0))
    assert isinstance(reconstructed.layers[1], CustomLayer)
    assert reconstructed.layers[-1].activation is custom_fn

    # the same file without the registry: custom_objects, then a custom_object_scope
    keras.saving.get_custom_objects().clear()
    with pytest.raises(ValueError, match="CustomLayer"):
        keras.models.load_model("custom_model.keras")
    custom_objects = {"CustomLayer": CustomLayer, "custom_fn": custom_fn}
    loaded = keras.models.load_model("custom_model.keras", custom_objects=custom_objects)
    np.testing.assert_allclose(expected, loaded.predict(test_input, verbose=0))
    with keras.saving.custom_object_scope(custom_objects):
        scoped = keras.models.load_model("custom_model.keras")
    np.testing.assert_allclose(expected, scoped.predict(test_input, verbose=0))


def test_configs_json_and_cloning():
    layer = keras.layers.Dense(3, activation="relu")
    layer_config = layer.get_config()
    assert layer_config["units"] == 3 and layer_config["activation"] == "relu"
    new_layer = keras.layers.Dense.from_config(layer_config)
    assert new_layer.units == 3 and new_layer.activation is keras.activations.relu

    model = keras.Sequential([keras.Input((32,)), keras.layers.Dense(1)])
    new_model = keras.Sequential.from_config(model.get_config())
    assert [type(la).__name__ for la in new_model.layers] == ["Dense"]

    inputs = keras.Input((32,))
    outputs = keras.layers.Dense(1)(inputs)
    model = keras.Model(inputs, outputs)
    new_model = keras.Model.from_config(model.get_config())
    x = np.random.default_rng(2).random((5, 32)).astype("float32")
    new_model.set_weights(model.get_weights())
    np.testing.assert_allclose(new_model(x).numpy(), model(x).numpy(), rtol=1e-6)

    model = keras.Sequential([keras.Input((32,)), keras.layers.Dense(1)])
    json_config = model.to_json()
    new_model = keras.models.model_from_json(json_config)
    assert tuple(new_model.output.shape) == (None, 1) and len(new_model.weights) == 2
    clone = keras.models.clone_model(model)
    assert clone is not model and [w.shape for w in clone.get_weights()] == [(32, 1), (1,)]


def test_serialize_keras_object_of_a_regularizer():
    my_reg = keras.regularizers.L1(0.005)
    config = keras.saving.serialize_keras_object(my_reg)
    assert config == {"module": "keras.regularizers", "class_name": "L1",
                      "config": {"l1": 0.005}, "registered_name": None}
    new_reg = keras.saving.deserialize_keras_object(config)
    w = np.array([[1.0, -2.0], [0.5, 0.0]], "float32")
    assert float(new_reg(tf.constant(w))) == pytest.approx(0.005 * 3.5)


def test_weights_in_memory_and_on_disk():
    def create_layer():
        layer = keras.layers.Dense(64, activation="relu", name="dense_2")
        layer.build((None, 784))
        return layer

    layer_1, layer_2 = create_layer(), create_layer()
    layer_2.set_weights(layer_1.get_weights())
    np.testing.assert_array_equal(layer_2.kernel.numpy(), layer_1.kernel.numpy())

    def create_functional_model(dropout=False):
        inputs = keras.Input(shape=(784,), name="digits")
        x = keras.layers.Dense(64, activation="relu", name="dense_1")(inputs)
        x = keras.layers.Dense(64, activation="relu", name="dense_2")(x)
        if dropout:
            x = keras.layers.Dropout(0.5)(x)
        outputs = keras.layers.Dense(10, name="predictions")(x)
        return keras.Model(inputs=inputs, outputs=outputs, name="3_layer_mlp")

    class SubclassedModel(keras.Model):
        def __init__(self, output_dim, name=None):
            super().__init__(name=name)
            self.output_dim = output_dim
            self.dense_1 = keras.layers.Dense(64, activation="relu", name="dense_1")
            self.dense_2 = keras.layers.Dense(64, activation="relu", name="dense_2")
            self.dense_3 = keras.layers.Dense(output_dim, name="predictions")

        def call(self, inputs):
            return self.dense_3(self.dense_2(self.dense_1(inputs)))

        def get_config(self):
            return {"output_dim": self.output_dim, "name": self.name}

    functional_model = create_functional_model()
    subclassed_model = SubclassedModel(10)
    subclassed_model(np.ones((1, 784)))
    subclassed_model.set_weights(functional_model.get_weights())
    assert len(functional_model.weights) == len(subclassed_model.weights)
    for a, b in zip(functional_model.weights, subclassed_model.weights):
        np.testing.assert_allclose(a.numpy(), b.numpy())
    # stateless layers do not change the order or number of weights
    with_dropout = create_functional_model(dropout=True)
    with_dropout.set_weights(functional_model.get_weights())
    x = np.random.default_rng(3).random((2, 784)).astype("float32")
    np.testing.assert_allclose(with_dropout(x).numpy(), functional_model(x).numpy(), rtol=1e-6)

    functional_model.save_weights("pretrained.weights.h5")
    pretrained_model = create_functional_model()
    pretrained_model.load_weights("pretrained.weights.h5")
    np.testing.assert_allclose(pretrained_model(x).numpy(), functional_model(x).numpy())
    extracted_layers = pretrained_model.layers[:-1]
    extracted_layers.append(keras.layers.Dense(5, name="dense_3"))
    model = keras.Sequential(extracted_layers)
    lines = []
    model.summary(print_fn=lines.append)
    assert any("dense_3" in line and "325" in line for line in lines)  # 64 * 5 + 5


def test_appendix_configs_holding_keras_objects():
    @keras.saving.register_keras_serializable(package="MyLayers", name="KernelMult")
    class MyDense(keras.layers.Layer):
        def __init__(self, units, *, kernel_regularizer=None, kernel_initializer=None,
                     nested_model=None, **kwargs):
            super().__init__(**kwargs)
            self.hidden_units = units
            self.kernel_regularizer = kernel_regularizer
            self.kernel_initializer = kernel_initializer
            self.nested_model = nested_model

        def get_config(self):
            config = super().get_config()
            config.update({"units": self.hidden_units,
                           "kernel_regularizer": self.kernel_regularizer,
                           "kernel_initializer": self.kernel_initializer,
                           "nested_model": self.nested_model})
            return config

        def build(self, input_shape):
            self.kernel = self.add_weight(name="kernel", shape=(input_shape[-1],
                                                                self.hidden_units),
                                          regularizer=self.kernel_regularizer,
                                          initializer=self.kernel_initializer)

        def call(self, inputs):
            return ops.matmul(inputs, self.kernel)

    layer = MyDense(units=16, kernel_regularizer="l1", kernel_initializer="ones")
    layer3 = MyDense(units=64, nested_model=layer)
    config = keras.layers.serialize(layer3)
    assert config["registered_name"] == "MyLayers>KernelMult"
    assert config["config"]["nested_model"]["config"]["units"] == 16
    new_layer = keras.layers.deserialize(config)
    assert isinstance(new_layer, MyDense) and new_layer.hidden_units == 64

    @keras.saving.register_keras_serializable(package="ComplexModels")
    class CustomModel(keras.layers.Layer):
        def __init__(self, first_layer, second_layer=None, **kwargs):
            super().__init__(**kwargs)
            self.first_layer = first_layer
            if second_layer is not None:
                self.second_layer = second_layer
            else:
                self.second_layer = keras.layers.Dense(8)

        def get_config(self):
            config = super().get_config()
            config.update({"first_layer": self.first_layer, "second_layer": self.second_layer})
            return config

        @classmethod
        def from_config(cls, config):
            config["first_layer"] = keras.layers.deserialize(config["first_layer"])
            config["second_layer"] = keras.layers.deserialize(config["second_layer"])
            return cls(**config)

        def call(self, inputs):
            return self.first_layer(self.second_layer(inputs))

    inputs = keras.Input((32,))
    outputs = CustomModel(first_layer=layer)(inputs)
    model = keras.Model(inputs, outputs)
    new_model = keras.Model.from_config(model.get_config())
    inner = new_model.layers[1]
    assert isinstance(inner, CustomModel) and isinstance(inner.first_layer, MyDense)
    # the rebuilt first layer: kernel of ones with an L1 penalty, as configured
    x = np.random.default_rng(4).random((3, 32)).astype("float32")
    new_model.layers[1].second_layer.set_weights(model.layers[1].second_layer.get_weights())
    hidden = x @ model.layers[1].second_layer.kernel.numpy() + \
        model.layers[1].second_layer.bias.numpy()
    np.testing.assert_allclose(new_model(x).numpy(), hidden @ np.ones((8, 16)), rtol=1e-5)
    assert float(sum(new_model.losses)) == pytest.approx(0.01 * 8 * 16)

    layer = MyDense(units=16, kernel_regularizer=keras.regularizers.L1L2(l1=1e-5, l2=1e-4),
                    kernel_initializer="ones")
    config = keras.layers.serialize(layer)
    assert config["config"]["kernel_regularizer"] == {
        "module": "keras.regularizers", "class_name": "L1L2",
        "config": {"l1": 1e-5, "l2": 1e-4}, "registered_name": None}
    rebuilt = keras.layers.deserialize(config)
    rebuilt.build((None, 2))
    assert float(sum(rebuilt.losses)) == pytest.approx(32 * (1e-5 + 1e-4), rel=1e-5)
